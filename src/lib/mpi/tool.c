/* The MPI tool information interface (MPI 4.0 chapter 15, include/mpi_t.h):
 * the minimum the standard allows.  BDMPI has no control variables (its
 * settings are fixed when bdmpiexec starts the job, docs/options.md), no
 * performance variables (its counters are the master's --stats), no
 * categories, event sources or event types, so every query with an index,
 * name or handle answers that none exists.
 *
 * The interface may be used before MPI_Init and after MPI_Finalize, from
 * any thread, and is initialized as many times as it is finalized; its
 * functions return their error codes (the standard gives them no error
 * handler).  It keeps no state but that count and the table of
 * performance-variable sessions, under a lock of its own (never the rank's
 * MPI lock: it may be used by a thread while another waits in MPI). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "core.h"

static pthread_mutex_t g_tlock = PTHREAD_MUTEX_INITIALIZER;
static int g_tinit; /* MPI_T_init_thread calls not yet finalized */

/* Performance-variable sessions: handle = index + 1. */
enum { MAX_SESSIONS = 64 };
static char g_sess_used[MAX_SESSIONS];

static int initialized(void)
{
    pthread_mutex_lock(&g_tlock);
    int n = g_tinit;
    pthread_mutex_unlock(&g_tlock);
    return n > 0;
}

#define T_CHECK_INIT                                                                               \
    do {                                                                                           \
        if (!initialized())                                                                        \
            return MPI_T_ERR_NOT_INITIALIZED;                                                      \
    } while (0)

int MPI_T_init_thread(int required, int *provided)
{
    if (!provided || required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&g_tlock);
    g_tinit++;
    pthread_mutex_unlock(&g_tlock);
    /* nothing here shares state but under g_tlock: every level is safe */
    *provided = required;
    return MPI_SUCCESS;
}

int MPI_T_finalize(void)
{
    pthread_mutex_lock(&g_tlock);
    int rc = MPI_SUCCESS;
    if (g_tinit == 0)
        rc = MPI_T_ERR_NOT_INITIALIZED;
    else if (--g_tinit == 0)
        memset(g_sess_used, 0, sizeof g_sess_used); /* sessions end with the interface */
    pthread_mutex_unlock(&g_tlock);
    return rc;
}

/* ---------------------------------------------------------------- enumerations */

/* No variable has an enumeration type, so no enumeration handle is valid. */
int MPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

/* ---------------------------------------------------------------- counts and lookups */

static int zero(int *num)
{
    T_CHECK_INIT;
    if (!num)
        return MPI_ERR_ARG;
    *num = 0;
    return MPI_SUCCESS;
}

/* A name no variable, category or event has (NULL is an argument error). */
static int no_name(const char *name, const int *index)
{
    T_CHECK_INIT;
    if (!name || !index)
        return MPI_ERR_ARG;
    return MPI_T_ERR_INVALID_NAME;
}

static int no_index(void)
{
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_INDEX;
}

int MPI_T_cvar_get_num(int *num_cvar) { return zero(num_cvar); }
int MPI_T_pvar_get_num(int *num_pvar) { return zero(num_pvar); }
int MPI_T_category_get_num(int *num_cat) { return zero(num_cat); }
int MPI_T_source_get_num(int *num_sources) { return zero(num_sources); }
int MPI_T_event_get_num(int *num_events) { return zero(num_events); }

int MPI_T_cvar_get_index(const char *name, int *cvar_index) { return no_name(name, cvar_index); }
int MPI_T_category_get_index(const char *name, int *cat_index) { return no_name(name, cat_index); }
int MPI_T_event_get_index(const char *name, int *event_index) { return no_name(name, event_index); }
int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    (void)var_class;
    return no_name(name, pvar_index);
}

/* No categories: the changes counter never moves. */
int MPI_T_category_changed(int *update_number) { return zero(update_number); }

/* ---------------------------------------------------------------- queries by index */

int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *scope)
{
    (void)cvar_index, (void)name, (void)name_len, (void)verbosity, (void)datatype;
    (void)enumtype, (void)desc, (void)desc_len, (void)bind, (void)scope;
    return no_index();
}

int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *readonly, int *continuous, int *atomic)
{
    (void)pvar_index, (void)name, (void)name_len, (void)verbosity, (void)var_class;
    (void)datatype, (void)enumtype, (void)desc, (void)desc_len, (void)bind, (void)readonly;
    (void)continuous, (void)atomic;
    return no_index();
}

int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                            int *num_cvars, int *num_pvars, int *num_categories)
{
    (void)cat_index, (void)name, (void)name_len, (void)desc, (void)desc_len;
    (void)num_cvars, (void)num_pvars, (void)num_categories;
    return no_index();
}

int MPI_T_category_get_num_events(int cat_index, int *num_events)
{
    (void)cat_index, (void)num_events;
    return no_index();
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    (void)cat_index, (void)len, (void)indices;
    return no_index();
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    (void)cat_index, (void)len, (void)indices;
    return no_index();
}

int MPI_T_category_get_events(int cat_index, int len, int indices[])
{
    (void)cat_index, (void)len, (void)indices;
    return no_index();
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    (void)cat_index, (void)len, (void)indices;
    return no_index();
}

int MPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                          MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                          MPI_Count *max_ticks, MPI_Info *info)
{
    (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len;
    (void)ordering, (void)ticks_per_second, (void)max_ticks, (void)info;
    return no_index();
}

int MPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    (void)source_index, (void)timestamp;
    return no_index();
}

int MPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                         int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                         int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    return no_index();
}

/* ---------------------------------------------------------------- control variables */

int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)cvar_index, (void)obj_handle, (void)handle, (void)count;
    return no_index();
}

/* No handle was ever allocated, so none is valid. */
int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    (void)handle;
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    (void)handle, (void)buf;
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)handle, (void)buf;
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

/* ---------------------------------------------------------------- performance variables */

static int sess_index(MPI_T_pvar_session s)
{
    intptr_t i = (intptr_t)s - 1;
    return i >= 0 && i < MAX_SESSIONS && g_sess_used[i] ? (int)i : -1;
}

/* MPI_SUCCESS if s is a session of this process (checked under the lock). */
static int sess_check(MPI_T_pvar_session s)
{
    T_CHECK_INIT;
    pthread_mutex_lock(&g_tlock);
    int i = sess_index(s);
    pthread_mutex_unlock(&g_tlock);
    return i < 0 ? MPI_T_ERR_INVALID_SESSION : MPI_SUCCESS;
}

int MPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    T_CHECK_INIT;
    if (!session)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&g_tlock);
    int rc = MPI_T_ERR_OUT_OF_SESSIONS;
    for (int i = 0; i < MAX_SESSIONS; i++)
        if (!g_sess_used[i]) {
            g_sess_used[i] = 1;
            *session = (MPI_T_pvar_session)(intptr_t)(i + 1);
            rc = MPI_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_tlock);
    return rc;
}

int MPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    T_CHECK_INIT;
    if (!session)
        return MPI_ERR_ARG;
    pthread_mutex_lock(&g_tlock);
    int i = sess_index(*session);
    if (i >= 0)
        g_sess_used[i] = 0;
    pthread_mutex_unlock(&g_tlock);
    if (i < 0)
        return MPI_T_ERR_INVALID_SESSION;
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                            MPI_T_pvar_handle *handle, int *count)
{
    (void)pvar_index, (void)obj_handle, (void)handle, (void)count;
    int rc = sess_check(session);
    return rc ? rc : MPI_T_ERR_INVALID_INDEX;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    (void)handle;
    int rc = sess_check(session);
    return rc ? rc : MPI_T_ERR_INVALID_HANDLE;
}

/* MPI_T_PVAR_ALL_HANDLES names every handle of the session: none, so
 * starting, stopping or resetting them all does nothing and succeeds. */
static int all_or_invalid(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    int rc = sess_check(session);
    if (rc)
        return rc;
    return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return all_or_invalid(session, handle);
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return all_or_invalid(session, handle);
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return all_or_invalid(session, handle);
}

/* Reading and writing name one handle (MPI_T_PVAR_ALL_HANDLES is not one). */
static int one_handle(MPI_T_pvar_session session)
{
    int rc = sess_check(session);
    return rc ? rc : MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    (void)handle, (void)buf;
    return one_handle(session);
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    (void)handle, (void)buf;
    return one_handle(session);
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    (void)handle, (void)buf;
    return one_handle(session);
}

/* ---------------------------------------------------------------- events */

int MPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                             MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    return no_index();
}

/* No event type, so no registration and no instance ever exists. */
static int no_handle(void)
{
    T_CHECK_INIT;
    return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    return no_handle();
}

int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    return no_handle();
}

int MPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                  MPI_T_event_cb_function *event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data;
    (void)event_cb_function;
    return no_handle();
}

int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    return no_handle();
}

int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    return no_handle();
}

int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                            MPI_T_event_free_cb_function *free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    return no_handle();
}

int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                    MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    return no_handle();
}

int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    return no_handle();
}

int MPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    return no_handle();
}

int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    return no_handle();
}

int MPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    return no_handle();
}
