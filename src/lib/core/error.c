/* Error reporting (bottom room): the error handlers that take a
 * communicator's errors, the error codes and classes the program added, and
 * aborting the job.  The MPI calls that manage them are in mpi/env.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "core.h"

const char *bdl_err_class_name(int c)
{
    static const char *const names[] = {"MPI_SUCCESS",
                                        "MPI_ERR_BUFFER",
                                        "MPI_ERR_COUNT",
                                        "MPI_ERR_TYPE",
                                        "MPI_ERR_TAG",
                                        "MPI_ERR_COMM",
                                        "MPI_ERR_RANK",
                                        "MPI_ERR_REQUEST",
                                        "MPI_ERR_ROOT",
                                        "MPI_ERR_GROUP",
                                        "MPI_ERR_OP",
                                        "MPI_ERR_TOPOLOGY",
                                        "MPI_ERR_DIMS",
                                        "MPI_ERR_ARG",
                                        "MPI_ERR_UNKNOWN",
                                        "MPI_ERR_TRUNCATE",
                                        "MPI_ERR_OTHER",
                                        "MPI_ERR_INTERN",
                                        "MPI_ERR_IN_STATUS",
                                        "MPI_ERR_PENDING",
                                        "MPI_ERR_KEYVAL",
                                        "MPI_ERR_NO_MEM",
                                        "MPI_ERR_INFO",
                                        "MPI_ERR_UNSUPPORTED_OPERATION",
                                        "MPI_ERR_WIN",
                                        "MPI_ERR_BASE",
                                        "MPI_ERR_SIZE",
                                        "MPI_ERR_DISP",
                                        "MPI_ERR_LOCKTYPE",
                                        "MPI_ERR_ASSERT",
                                        "MPI_ERR_RMA_CONFLICT",
                                        "MPI_ERR_RMA_SYNC",
                                        "MPI_ERR_RMA_RANGE",
                                        "MPI_ERR_RMA_ATTACH",
                                        "MPI_ERR_RMA_SHARED",
                                        "MPI_ERR_RMA_FLAVOR",
                                        "MPI_ERR_FILE",
                                        "MPI_ERR_NOT_SAME",
                                        "MPI_ERR_AMODE",
                                        "MPI_ERR_UNSUPPORTED_DATAREP",
                                        "MPI_ERR_NO_SUCH_FILE",
                                        "MPI_ERR_FILE_EXISTS",
                                        "MPI_ERR_BAD_FILE",
                                        "MPI_ERR_ACCESS",
                                        "MPI_ERR_NO_SPACE",
                                        "MPI_ERR_QUOTA",
                                        "MPI_ERR_READ_ONLY",
                                        "MPI_ERR_FILE_IN_USE",
                                        "MPI_ERR_DUP_DATAREP",
                                        "MPI_ERR_CONVERSION",
                                        "MPI_ERR_IO"};
    switch (c) {
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY";
    case MPI_ERR_SESSION: return "MPI_ERR_SESSION"; /* MPI 4.0 */
    case MPI_ERR_PROC_ABORTED: return "MPI_ERR_PROC_ABORTED";
    case MPI_ERR_VALUE_TOO_LARGE: return "MPI_ERR_VALUE_TOO_LARGE";
    case MPIX_ERR_PROC_FAILED: return "MPIX_ERR_PROC_FAILED"; /* ULFM */
    case MPIX_ERR_PROC_FAILED_PENDING: return "MPIX_ERR_PROC_FAILED_PENDING";
    case MPIX_ERR_REVOKED: return "MPIX_ERR_REVOKED";
    case MPI_ERR_SPAWN: return "MPI_ERR_SPAWN"; /* dynamic processes */
    case MPI_ERR_PORT: return "MPI_ERR_PORT";
    case MPI_ERR_NAME: return "MPI_ERR_NAME";
    case MPI_ERR_SERVICE: return "MPI_ERR_SERVICE";
    case MPI_T_ERR_MEMORY: return "MPI_T_ERR_MEMORY"; /* the tool interface (mpi_t.h) */
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T_ERR_NOT_INITIALIZED";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T_ERR_CANNOT_INIT";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T_ERR_INVALID_INDEX";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T_ERR_INVALID_ITEM";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T_ERR_INVALID_HANDLE";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T_ERR_OUT_OF_HANDLES";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T_ERR_OUT_OF_SESSIONS";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T_ERR_INVALID_SESSION";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "MPI_T_ERR_CVAR_SET_NOT_NOW";
    case MPI_T_ERR_CVAR_SET_NEVER: return "MPI_T_ERR_CVAR_SET_NEVER";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "MPI_T_ERR_PVAR_NO_STARTSTOP";
    case MPI_T_ERR_PVAR_NO_WRITE: return "MPI_T_ERR_PVAR_NO_WRITE";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "MPI_T_ERR_PVAR_NO_ATOMIC";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T_ERR_INVALID_NAME";
    case MPI_T_ERR_INVALID: return "MPI_T_ERR_INVALID";
    case MPI_T_ERR_NOT_SUPPORTED: return "MPI_T_ERR_NOT_SUPPORTED";
    default: break;
    }
    return c >= 0 && c < (int)(sizeof names / sizeof *names) ? names[c] : "MPI_ERR_UNKNOWN";
}

void bdl_abort(int code, const char *msg)
{
    if (!bdl_g.slot) {
        fprintf(stderr, "%s: %s\n", bd_log_prefix(), msg);
        exit(code ? code : 1);
    }
    bd_req_t *r = bdl_req_begin(BD_REQ_ABORT);
    r->arg[0] = code;
    snprintf(bdl_g.win, 1024, "%s", msg);
    /* The master kills every rank, this one included. */
    bdl_rpc();
    for (;;)
        pause();
}

_Noreturn void bdl_fatal(int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bd_log_error("%s", msg);
    bdl_abort(code ? code : 1, "");
    exit(1);
}

/* User error handlers (MPI_Comm_create_errhandler): handles BDL_ERRH_USER0, ...
 * A freed handler stays valid for the communicators using it (MPI 3.1
 * 8.3.4); its slot is reclaimed when the table is full and no communicator
 * names it any more. */
static MPI_Comm_errhandler_function **g_errh_fn;
static char *g_errh_freed;
static int g_nerrh;

/* Error codes and classes added by the program (MPI_Add_error_*). */
static int g_ncodes;
static int g_code_class[BDL_MAX_USER_CODES];
static char *g_code_string[BDL_MAX_USER_CODES];

MPI_Comm_errhandler_function *bdl_errh_user(MPI_Errhandler eh)
{
    int i = eh - BDL_ERRH_USER0;
    return i >= 0 && i < g_nerrh ? g_errh_fn[i] : NULL;
}

int bdl_errh_valid(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT ||
           bdl_errh_user(eh);
}

void bdl_errh_free(MPI_Errhandler eh)
{
    if (bdl_errh_user(eh))
        g_errh_freed[eh - BDL_ERRH_USER0] = 1;
}

/* Free the slots of freed handlers that no communicator uses; 1 if any. */
static int errh_reclaim(void)
{
    int got = 0;
    for (int i = 0; i < g_nerrh; i++) {
        if (!g_errh_fn[i] || !g_errh_freed[i])
            continue;
        int used = 0;
        for (int h = 0; h < bdl_g.ncomms && !used; h++)
            used = bdl_g.comms[h].used && bdl_g.comms[h].errh == BDL_ERRH_USER0 + i;
        if (!used) {
            g_errh_fn[i] = NULL;
            g_errh_freed[i] = 0;
            got = 1;
        }
    }
    return got;
}

int bdl_errh_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh)
{
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < g_nerrh; i++)
            if (!g_errh_fn[i]) {
                g_errh_fn[i] = fn;
                g_errh_freed[i] = 0;
                *eh = BDL_ERRH_USER0 + i;
                return MPI_SUCCESS;
            }
        if (pass == 0 && errh_reclaim())
            continue;
        int n = g_nerrh ? 2 * g_nerrh : 16;
        MPI_Comm_errhandler_function **f = realloc(g_errh_fn, (size_t)n * sizeof *f);
        if (f)
            g_errh_fn = f;
        char *fr = f ? realloc(g_errh_freed, (size_t)n) : NULL;
        if (!fr)
            return MPI_ERR_NO_MEM;
        g_errh_freed = fr;
        memset(g_errh_fn + g_nerrh, 0, (size_t)(n - g_nerrh) * sizeof *f);
        memset(g_errh_freed + g_nerrh, 0, (size_t)(n - g_nerrh));
        g_nerrh = n;
    }
    return MPI_ERR_INTERN;
}

/* The largest error code or class in use: the MPI_LASTUSEDCODE attribute. */
int bdl_errcode_lastused(void) { return MPI_ERR_LASTCODE + g_ncodes; }

int bdl_errcode_valid(int code)
{
    return (code > 0 && code <= MPI_ERR_LASTCODE) ||
           (code > MPI_ERR_LASTCODE && code - (MPI_ERR_LASTCODE + 1) < g_ncodes);
}

int bdl_errcode_add(int errclass)
{
    if (g_ncodes == BDL_MAX_USER_CODES)
        return -1;
    int code = MPI_ERR_LASTCODE + 1 + g_ncodes;
    g_code_class[g_ncodes++] = errclass < 0 ? code : errclass;
    return code;
}

/* Index of an added code in the tables, or -1. */
static int added(int code)
{
    int u = code - (MPI_ERR_LASTCODE + 1);
    return u >= 0 && u < g_ncodes ? u : -1;
}

int bdl_errcode_class(int code)
{
    int u = added(code);
    return u < 0 ? -1 : g_code_class[u];
}

const char *bdl_errcode_string(int code)
{
    int u = added(code);
    return u < 0 || !g_code_string[u] ? "" : g_code_string[u];
}

void bdl_errcode_set_string(int code, const char *s)
{
    int u = added(code);
    if (u < 0)
        return;
    free(g_code_string[u]);
    g_code_string[u] = strdup(s);
}

static const char *const g_initial_names[] = {"mpi_errors_are_fatal", "mpi_errors_abort",
                                              "mpi_errors_return"};

int bdl_errh_initial_index(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(name, g_initial_names[i]))
            return i;
    return -1;
}

MPI_Errhandler bdl_errh_initial_handle(int index)
{
    return index == 1 ? MPI_ERRORS_ABORT : index == 2 ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;
}

const char *bdl_errh_initial_name(int index)
{
    return g_initial_names[index >= 0 && index < 3 ? index : 0];
}

MPI_Errhandler bdl_errh_effective(const bdl_comm_t *c)
{
    if (c && c->errh != BDL_ERRH_DEFAULT)
        return c->errh;
    const bdl_comm_t *w = bdl_comm_get(MPI_COMM_WORLD);
    return w && w->errh != BDL_ERRH_DEFAULT ? w->errh : MPI_ERRORS_ARE_FATAL;
}

int bdl_error(MPI_Comm comm, int code, const char *call, const char *fmt, ...)
{
    if (!bdl_g.initialized) { /* a call MPI 4.0 allows before initialization */
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        bd_log_error("%s: %s [%s]", call, msg, bdl_err_class_name(code));
        bdl_abort(code, "");
        return code;
    }
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c) {
        c = bdl_comm_get(MPI_COMM_WORLD);
        comm = MPI_COMM_WORLD;
    }
    MPI_Errhandler eh = bdl_errh_effective(c);
    if (eh == MPI_ERRORS_RETURN)
        return code;
    MPI_Comm_errhandler_function *fn = bdl_errh_user(eh);
    if (fn) {
        fn(&comm, &code);
        return code;
    }
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bd_log_error("%s: %s [%s]", call, msg, bdl_err_class_name(code));
    bdl_abort(code, "");
    return code;
}
