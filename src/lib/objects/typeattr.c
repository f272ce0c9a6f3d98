/* Datatype attributes (MPI 3.1 6.7.4): keyvals with copy and delete
 * callbacks, attributes attached to datatype handles.
 *
 * Type keyvals are numbered from TYPE_KEYVAL_BASE, apart from the
 * communicator keyvals, so a keyval of the wrong kind is reported.  A keyval
 * is reference counted by the attributes using it: MPI_Type_free_keyval
 * only marks it, and it disappears when its last attribute is deleted.
 * Attributes live in one list keyed by (handle, keyval); type_query.c calls
 * bdl_type_attr_copy_all from MPI_Type_dup and bdl_type_attr_delete_all from
 * MPI_Type_free. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

#define TYPE_KEYVAL_BASE 0x4000

typedef struct {
    int used;
    int freed;
    int refs; /* 1 until freed, plus one per attribute */
    MPI_Type_copy_attr_function *copy;
    MPI_Type_delete_attr_function *del;
    void *extra;
} tkv_t;

typedef struct {
    MPI_Datatype type;
    int keyval;
    void *val;
} tattr_t;

static tkv_t *g_tkvs;
static int g_ntkvs;
static tattr_t *g_tattrs;
static int g_ntattrs, g_captattrs;

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    BDL_MT_GUARD;
    (void)oldtype, (void)type_keyval, (void)extra_state, (void)attribute_val_in,
        (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                    void *attribute_val_in, void *attribute_val_out, int *flag)
{
    BDL_MT_GUARD;
    (void)oldtype, (void)type_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                            void *extra_state)
{
    BDL_MT_GUARD;
    (void)datatype, (void)type_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

/* A keyval the program may name. */
static tkv_t *kv_get(int keyval)
{
    int i = keyval - TYPE_KEYVAL_BASE;
    if (i < 0 || i >= g_ntkvs || !g_tkvs[i].used || g_tkvs[i].freed)
        return NULL;
    return &g_tkvs[i];
}

/* A keyval still referenced by an attribute. */
static tkv_t *kv_any(int keyval)
{
    int i = keyval - TYPE_KEYVAL_BASE;
    return i >= 0 && i < g_ntkvs && g_tkvs[i].used ? &g_tkvs[i] : NULL;
}

static void kv_unref(tkv_t *kv)
{
    if (kv && --kv->refs == 0)
        memset(kv, 0, sizeof *kv);
}

static int callback_code(int rc) { return rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER; }

static int bad_keyval(const char *call, int keyval)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call,
                     "invalid datatype keyval %d (not created by MPI_Type_create_keyval, or "
                     "freed)",
                     keyval);
}

static int bad_type(const char *call, MPI_Datatype dt)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_TYPE, call,
                     "datatype %d is not a valid datatype (null or freed)", dt);
}

int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                           void *extra_state)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_create_keyval";
    BDL_CHECK_INIT(call);
    if (!type_keyval)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "type_keyval is NULL");
    int h = -1;
    for (int i = 0; i < g_ntkvs; i++)
        if (!g_tkvs[i].used) {
            h = i;
            break;
        }
    if (h < 0) {
        int n = g_ntkvs ? g_ntkvs * 2 : 16;
        tkv_t *t = realloc(g_tkvs, (size_t)n * sizeof *t);
        if (!t)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
        memset(t + g_ntkvs, 0, (size_t)(n - g_ntkvs) * sizeof *t);
        h = g_ntkvs;
        g_tkvs = t;
        g_ntkvs = n;
    }
    g_tkvs[h] = (tkv_t){1,
                        0,
                        1,
                        type_copy_attr_fn ? type_copy_attr_fn : MPI_TYPE_NULL_COPY_FN,
                        type_delete_attr_fn ? type_delete_attr_fn : MPI_TYPE_NULL_DELETE_FN,
                        extra_state};
    *type_keyval = TYPE_KEYVAL_BASE + h;
    return MPI_SUCCESS;
}

int MPI_Type_free_keyval(int *type_keyval)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_free_keyval";
    BDL_CHECK_INIT(call);
    if (!type_keyval)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "type_keyval is NULL");
    tkv_t *kv = kv_any(*type_keyval);
    if (!kv)
        return bad_keyval(call, *type_keyval);
    /* Freeing again while attributes still hold the keyval is tolerated, as
     * for communicator keyvals (a delete callback may free its own keyval). */
    if (!kv->freed) {
        kv->freed = 1;
        kv_unref(kv);
    }
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int find(MPI_Datatype dt, int keyval)
{
    for (int i = 0; i < g_ntattrs; i++)
        if (g_tattrs[i].type == dt && g_tattrs[i].keyval == keyval)
            return i;
    return -1;
}

static int add(MPI_Datatype dt, int keyval, void *val)
{
    if (g_ntattrs == g_captattrs) {
        int n = g_captattrs ? g_captattrs * 2 : 16;
        tattr_t *t = realloc(g_tattrs, (size_t)n * sizeof *t);
        if (!t)
            return -1;
        g_tattrs = t;
        g_captattrs = n;
    }
    g_tattrs[g_ntattrs++] = (tattr_t){dt, keyval, val};
    kv_any(keyval)->refs++;
    return 0;
}

static void remove_at(int i)
{
    int keyval = g_tattrs[i].keyval;
    memmove(&g_tattrs[i], &g_tattrs[i + 1], (size_t)(g_ntattrs - i - 1) * sizeof *g_tattrs);
    g_ntattrs--;
    kv_unref(kv_any(keyval));
}

static int run_delete(const char *call, MPI_Datatype dt, int keyval, void *val)
{
    tkv_t *kv = kv_any(keyval);
    int rc = kv->del(dt, keyval, val, kv->extra);
    if (rc != MPI_SUCCESS)
        return bdl_error(MPI_COMM_WORLD, callback_code(rc), call,
                         "the delete callback of datatype keyval %d returned %d", keyval, rc);
    return MPI_SUCCESS;
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_set_attr";
    BDL_CHECK_INIT(call);
    if (!bdl_dt_lookup(datatype))
        return bad_type(call, datatype);
    if (!kv_get(type_keyval))
        return bad_keyval(call, type_keyval);
    int i = find(datatype, type_keyval);
    if (i >= 0) {
        int rc = run_delete(call, datatype, type_keyval, g_tattrs[i].val);
        if (rc)
            return rc;
        i = find(datatype, type_keyval); /* the callback may have changed the list */
        if (i >= 0) {
            g_tattrs[i].val = attribute_val;
            return MPI_SUCCESS;
        }
    }
    if (add(datatype, type_keyval, attribute_val) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    return MPI_SUCCESS;
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_get_attr";
    BDL_CHECK_INIT(call);
    if (!bdl_dt_lookup(datatype))
        return bad_type(call, datatype);
    if (!kv_get(type_keyval))
        return bad_keyval(call, type_keyval);
    if (!attribute_val || !flag)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL attribute_val or flag");
    int i = find(datatype, type_keyval);
    *flag = i >= 0;
    if (i >= 0)
        *(void **)attribute_val = g_tattrs[i].val;
    return MPI_SUCCESS;
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_delete_attr";
    BDL_CHECK_INIT(call);
    if (!bdl_dt_lookup(datatype))
        return bad_type(call, datatype);
    if (!kv_get(type_keyval))
        return bad_keyval(call, type_keyval);
    int i = find(datatype, type_keyval);
    if (i < 0)
        return MPI_SUCCESS; /* nothing attached: nothing to delete */
    int rc = run_delete(call, datatype, type_keyval, g_tattrs[i].val);
    if (rc)
        return rc;
    i = find(datatype, type_keyval);
    if (i >= 0)
        remove_at(i);
    return MPI_SUCCESS;
}

/* MPI_Type_dup: each attribute of oldtype goes through its copy callback. */
int bdl_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype, const char *call)
{
    int n = 0;
    for (int i = 0; i < g_ntattrs; i++)
        n += g_tattrs[i].type == oldtype;
    if (!n)
        return MPI_SUCCESS;
    tattr_t *snap = malloc((size_t)n * sizeof *snap);
    if (!snap)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0, k = 0; i < g_ntattrs; i++)
        if (g_tattrs[i].type == oldtype)
            snap[k++] = g_tattrs[i];
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && !rc; i++) {
        tkv_t *kv = kv_any(snap[i].keyval);
        if (!kv)
            continue;
        void *out = NULL;
        int flag = 0;
        int cb = kv->copy(oldtype, snap[i].keyval, kv->extra, snap[i].val, &out, &flag);
        if (cb != MPI_SUCCESS) {
            rc = bdl_error(MPI_COMM_WORLD, callback_code(cb), call,
                           "the copy callback of datatype keyval %d returned %d", snap[i].keyval,
                           cb);
        } else if (flag) {
            int j = find(newtype, snap[i].keyval);
            if (j >= 0)
                g_tattrs[j].val = out;
            else if (add(newtype, snap[i].keyval, out) < 0)
                rc = bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
        }
    }
    free(snap);
    return rc;
}

/* MPI_Type_free: delete callbacks, last set first; a failing one keeps its
 * attribute and fails the call. */
int bdl_type_attr_delete_all(MPI_Datatype dt, const char *call)
{
    for (int i = g_ntattrs - 1; i >= 0; i--) {
        if (i >= g_ntattrs || g_tattrs[i].type != dt)
            continue;
        tattr_t a = g_tattrs[i];
        int rc = run_delete(call, dt, a.keyval, a.val);
        if (rc)
            return rc;
        int j = find(dt, a.keyval);
        if (j >= 0)
            remove_at(j);
        i = g_ntattrs; /* callbacks may have changed the list: rescan */
    }
    return MPI_SUCCESS;
}

/* Attributes left on a handle that goes away without MPI_Type_free
 * (MPI_Type_dup failing half-way): dropped without callbacks. */
void bdl_type_attr_drop(MPI_Datatype dt)
{
    for (int i = g_ntattrs - 1; i >= 0; i--)
        if (g_tattrs[i].type == dt)
            remove_at(i);
}
