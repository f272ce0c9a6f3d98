/* Info objects and the conversion of handles to and from Fortran.
 *
 * Info objects are local lists of (key, value) strings; handles index a
 * table.  MPI_INFO_ENV (1) is predefined and empty.  No hint changes
 * anything in BDMPI, so infos are only stored and returned. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "objects.h"

typedef struct info_ent {
    char *key, *val;
} info_ent_t;

typedef struct info {
    int used;
    int n;
    info_ent_t *ents;
} info_t;

static info_t *g_infos;
static int g_ninfos;

static info_t g_info_env = {1, 0, NULL};

static info_t *info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV)
        return &g_info_env;
    if (h < 2 || h >= g_ninfos || !g_infos[h].used)
        return NULL;
    return &g_infos[h];
}

static int bad_info(const char *call, MPI_Info h)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_INFO, call, "invalid info object %d", h);
}

int bdl_info_valid(MPI_Info info) { return info == MPI_INFO_NULL || info_get(info); }

int bdl_info_check(const char *call, MPI_Info info)
{
    return info == MPI_INFO_NULL || info_get(info) ? MPI_SUCCESS : bad_info(call, info);
}

static int no_mem(const char *call)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
}

static int info_alloc(void)
{
    for (int i = 2; i < g_ninfos; i++)
        if (!g_infos[i].used) {
            g_infos[i] = (info_t){1, 0, NULL};
            return i;
        }
    int n = g_ninfos ? g_ninfos * 2 : 16;
    info_t *t = realloc(g_infos, (size_t)n * sizeof *t);
    if (!t)
        return -1;
    memset(t + g_ninfos, 0, (size_t)(n - g_ninfos) * sizeof *t);
    int h = g_ninfos < 2 ? 2 : g_ninfos;
    g_infos = t;
    g_ninfos = n;
    g_infos[h].used = 1;
    return h;
}

static int find_key(const info_t *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->ents[i].key, key))
            return i;
    return -1;
}

static int check_key(const char *call, const char *key)
{
    if (!key)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "key is NULL");
    size_t len = strlen(key);
    if (len == 0 || len > MPI_MAX_INFO_KEY)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, call,
                         "invalid info key of %zu characters (1..MPI_MAX_INFO_KEY)", len);
    return MPI_SUCCESS;
}

int MPI_Info_create(MPI_Info *info)
{
    BDL_MT_GUARD;
    BDL_CHECK_NOT_ENDED("MPI_Info_create");
    if (!info)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    int h = info_alloc();
    if (h < 0)
        return no_mem("MPI_Info_create");
    *info = h;
    return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_set";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info_get(info);
    if (!in || info == MPI_INFO_ENV)
        return bad_info(call, info);
    int rc = check_key(call, key);
    if (rc)
        return rc;
    if (!value)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "value is NULL");
    size_t vlen = strlen(value);
    if (vlen == 0 || vlen > MPI_MAX_INFO_VAL)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, call,
                         "invalid info value of %zu characters (1..MPI_MAX_INFO_VAL)", vlen);
    char *v = strdup(value);
    if (!v)
        return no_mem(call);
    int i = find_key(in, key);
    if (i >= 0) {
        free(in->ents[i].val);
        in->ents[i].val = v;
        return MPI_SUCCESS;
    }
    char *k = strdup(key);
    info_ent_t *t = realloc(in->ents, (size_t)(in->n + 1) * sizeof *t);
    if (!k || !t) {
        free(k);
        free(v);
        if (t)
            in->ents = t;
        return no_mem(call);
    }
    in->ents = t;
    in->ents[in->n++] = (info_ent_t){k, v};
    return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_get";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info_get(info);
    if (!in)
        return bad_info(call, info);
    int rc = check_key(call, key);
    if (rc)
        return rc;
    if (valuelen < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid valuelen %d", valuelen);
    int i = find_key(in, key);
    *flag = i >= 0;
    if (i >= 0) {
        /* value has room for valuelen characters and the terminator */
        size_t n = strlen(in->ents[i].val);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, in->ents[i].val, n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_get_valuelen";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info_get(info);
    if (!in)
        return bad_info(call, info);
    int rc = check_key(call, key);
    if (rc)
        return rc;
    int i = find_key(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->ents[i].val);
    return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    BDL_MT_GUARD;
    BDL_CHECK_NOT_ENDED("MPI_Info_get_nkeys");
    info_t *in = info_get(info);
    if (!in)
        return bad_info("MPI_Info_get_nkeys", info);
    *nkeys = in->n;
    return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_get_nthkey";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info_get(info);
    if (!in)
        return bad_info(call, info);
    if (n < 0 || n >= in->n)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "key number %d of an info with %d keys",
                         n, in->n);
    strcpy(key, in->ents[n].key);
    return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_delete";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info_get(info);
    if (!in || info == MPI_INFO_ENV)
        return bad_info(call, info);
    int rc = check_key(call, key);
    if (rc)
        return rc;
    int i = find_key(in, key);
    if (i < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, call, "no key \"%s\" in info %d", key,
                         info);
    free(in->ents[i].key);
    free(in->ents[i].val);
    memmove(&in->ents[i], &in->ents[i + 1], (size_t)(in->n - i - 1) * sizeof *in->ents);
    in->n--;
    return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_dup";
    BDL_CHECK_NOT_ENDED(call);
    if (!info_get(info))
        return bad_info(call, info);
    int h = info_alloc();
    if (h < 0)
        return no_mem(call);
    info_t *in = info_get(info); /* the table may have moved */
    for (int i = 0; i < in->n; i++) {
        int rc = MPI_Info_set(h, in->ents[i].key, in->ents[i].val);
        if (rc) {
            MPI_Info_free(&h);
            return rc;
        }
        in = info_get(info);
    }
    *newinfo = h;
    return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info *info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_free";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info ? info_get(*info) : NULL;
    if (!in || *info == MPI_INFO_ENV)
        return bad_info(call, info ? *info : MPI_INFO_NULL);
    for (int i = 0; i < in->n; i++) {
        free(in->ents[i].key);
        free(in->ents[i].val);
    }
    free(in->ents);
    memset(in, 0, sizeof *in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI_Info_get_string */

/* MPI 4.0: *buflen is the room in value (with the terminator) on input,
 * the length the whole value needs (with the terminator) on output. */
int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_get_string";
    BDL_CHECK_NOT_ENDED(call);
    info_t *in = info_get(info);
    if (!in)
        return bad_info(call, info);
    int rc = check_key(call, key);
    if (rc)
        return rc;
    if (!buflen || *buflen < 0 || !flag)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid buflen or flag");
    int i = find_key(in, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    size_t n = strlen(in->ents[i].val);
    if (*buflen > 0 && value) {
        size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, in->ents[i].val, k);
        value[k] = 0;
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- handle conversion */

/* Handles are small integers in C and Fortran alike (MPI 3.1 17.2.4). */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm) { return (MPI_Fint)comm; }
MPI_Comm MPI_Comm_f2c(MPI_Fint comm) { return (MPI_Comm)comm; }
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype) { return (MPI_Fint)datatype; }
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype) { return (MPI_Datatype)datatype; }
MPI_Fint MPI_Group_c2f(MPI_Group group) { return (MPI_Fint)group; }
MPI_Group MPI_Group_f2c(MPI_Fint group) { return (MPI_Group)group; }
MPI_Fint MPI_Request_c2f(MPI_Request request) { return (MPI_Fint)request; }
MPI_Request MPI_Request_f2c(MPI_Fint request) { return (MPI_Request)request; }
MPI_Fint MPI_Op_c2f(MPI_Op op) { return (MPI_Fint)op; }
MPI_Op MPI_Op_f2c(MPI_Fint op) { return (MPI_Op)op; }
MPI_Fint MPI_Info_c2f(MPI_Info info) { return (MPI_Fint)info; }
MPI_Info MPI_Info_f2c(MPI_Fint info) { return (MPI_Info)info; }
MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler) { return (MPI_Fint)errhandler; }
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler) { return (MPI_Errhandler)errhandler; }

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint) &&
                   offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint) &&
                   offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint) &&
                   offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint),
               "MPI_F_STATUS_SIZE and MPI_F_* must describe MPI_Status");

int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Status_c2f";
    if (!c_status || c_status == MPI_STATUS_IGNORE || !f_status)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "c_status or f_status is NULL or MPI_STATUS_IGNORE");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Status_f2c";
    if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "f_status or c_status is NULL or MPI_STATUS_IGNORE");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}

_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "an mpi_f08 status holds a C status");

/* The three conversions with the mpi_f08 status: every form is the same
 * MPI_F_STATUS_SIZE integers, so each is a copy; the checks are those of
 * MPI_Status_c2f (an IGNORE or NULL status is an error, MPI 4.0 19.3.5). */
static int status_copy(const void *from, void *to, const char *call)
{
    if (!from || !to)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "a status is NULL or an IGNORE constant");
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

int MPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    BDL_MT_GUARD;
    if (c_status == MPI_STATUS_IGNORE)
        c_status = NULL;
    return status_copy(c_status, f08_status, "MPI_Status_c2f08");
}

int MPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    BDL_MT_GUARD;
    if (c_status == MPI_STATUS_IGNORE)
        c_status = NULL;
    return status_copy(f08_status, c_status, "MPI_Status_f082c");
}

int MPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    BDL_MT_GUARD;
    return status_copy(f08_status, f_status, "MPI_Status_f082f");
}

int MPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    BDL_MT_GUARD;
    return status_copy(f_status, f08_status, "MPI_Status_f2f08");
}
