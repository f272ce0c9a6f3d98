/* Windows (MPI 3.1 11.2, 11.3 attributes, 8.3 error handlers): creation,
 * freeing, names, groups, info, attributes and error handlers.  The RMA
 * calls themselves are in rma.c.
 *
 * A window holds a private communicator made from the one it was created
 * on (a split with one colour): its collectives (creation, fences, freeing)
 * never meet the program's, and its context names the window in requests
 * from other ranks.  Every rank learns every other rank's window size and
 * displacement unit at creation, so an origin checks target ranges itself. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bd_log.h"
#include "win.h"

static bdl_win_t *g_wins; /* handle h is g_wins[h - 1] */
static int g_nwins;

bdl_win_t *bdl_win_get(MPI_Win win)
{
    if (win <= 0 || win > g_nwins || !g_wins[win - 1].used)
        return NULL;
    return &g_wins[win - 1];
}

bdl_win_t *bdl_win_by_id(int id)
{
    for (int i = 0; i < g_nwins; i++)
        if (g_wins[i].used && g_wins[i].id == id)
            return &g_wins[i];
    return NULL;
}

MPI_Win bdl_win_handle(const bdl_win_t *w) { return (MPI_Win)(w - g_wins) + 1; }

/* ---------------------------------------------------------------- error handlers */

/* Window error handlers (MPI_Win_create_errhandler) are handles
 * WIN_EH_BASE + i, apart from communicator handlers. */
#define WIN_EH_BASE (1 << 24)
static MPI_Win_errhandler_function **g_weh;
static int g_nweh;

static MPI_Win_errhandler_function *win_eh_fn(MPI_Errhandler eh)
{
    int i = eh - WIN_EH_BASE;
    return i >= 0 && i < g_nweh ? g_weh[i] : NULL;
}

int bdl_win_error(MPI_Win win, int code, const char *call, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bdl_win_t *w = bdl_win_get(win);
    if (!w)
        return bdl_error(MPI_COMM_WORLD, code, call, "%s", msg);
    if (w->errh == MPI_ERRORS_RETURN)
        return code;
    MPI_Win_errhandler_function *fn = win_eh_fn(w->errh);
    if (fn) {
        fn(&win, &code);
        return code;
    }
    char cls[MPI_MAX_ERROR_STRING] = "";
    int len, c = code;
    MPI_Error_class(code, &c);
    MPI_Error_string(c, cls, &len);
    char *colon = strchr(cls, ':');
    if (colon)
        *colon = 0;
    bdl_fatal(code, "%s: %s [%s]", call, msg, cls);
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_create_errhandler";
    BDL_CHECK_INIT(call);
    if (!fn || !errhandler)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "%s is NULL",
                         fn ? "errhandler" : "win_errhandler_fn");
    MPI_Win_errhandler_function **n = realloc(g_weh, (size_t)(g_nweh + 1) * sizeof *n);
    if (!n)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    g_weh = n;
    g_weh[g_nweh] = fn;
    *errhandler = WIN_EH_BASE + g_nweh++;
    return MPI_SUCCESS;
}

#define WIN_OR_ERR(call, win, w)                                                                   \
    BDL_CHECK_INIT(call);                                                                          \
    bdl_win_t *w = bdl_win_get(win);                                                               \
    if (!w)                                                                                        \
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_WIN, call, "invalid window %d", win);

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    BDL_MT_GUARD;
    WIN_OR_ERR("MPI_Win_set_errhandler", win, w);
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_RETURN &&
        errhandler != MPI_ERRORS_ABORT && !win_eh_fn(errhandler))
        return bdl_win_error(win, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                             "%d is not an error handler for windows (made by "
                             "MPI_Win_create_errhandler)",
                             errhandler);
    w->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    WIN_OR_ERR("MPI_Win_get_errhandler", win, w);
    if (!errhandler)
        return bdl_win_error(win, MPI_ERR_ARG, "MPI_Win_get_errhandler", "errhandler is NULL");
    *errhandler = w->errh;
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    BDL_MT_GUARD;
    WIN_OR_ERR("MPI_Win_call_errhandler", win, w);
    (void)w;
    bdl_win_error(win, errorcode, "MPI_Win_call_errhandler", "error %d raised by the program",
                  errorcode);
    return MPI_SUCCESS;
}

MPI_Fint MPI_Win_c2f(MPI_Win win) { return (MPI_Fint)win; }
MPI_Win MPI_Win_f2c(MPI_Fint win) { return (MPI_Win)win; }

/* ---------------------------------------------------------------- creation */

static int win_slot(void)
{
    for (int i = 0; i < g_nwins; i++)
        if (!g_wins[i].used)
            return i;
    int n = g_nwins ? 2 * g_nwins : 8;
    bdl_win_t *t = realloc(g_wins, (size_t)n * sizeof *t);
    if (!t)
        return -1;
    memset(t + g_nwins, 0, (size_t)(n - g_nwins) * sizeof *t);
    g_wins = t;
    int i = g_nwins;
    g_nwins = n;
    return i;
}

static void win_clear(bdl_win_t *w)
{
    bdl_win_shared_release(w);
    free(w->world);
    free(w->sizes);
    free(w->units);
    free(w->regions);
    free(w->alloc);
    if (w->info != MPI_INFO_NULL)
        MPI_Info_free(&w->info);
    memset(w, 0, sizeof *w);
}

int bdl_win_make(const char *call, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                 MPI_Comm comm, int flavor, void *alloc, MPI_Win *win)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (c->inter)
        return bdl_error(comm, MPI_ERR_COMM, call,
                         "windows cannot be created on an intercommunicator");
    if (!win)
        return bdl_error(comm, MPI_ERR_ARG, call, "win is NULL");
    if (size < 0)
        return bdl_error(comm, MPI_ERR_SIZE, call, "invalid size %lld (must be >= 0)",
                         (long long)size);
    if (disp_unit <= 0)
        return bdl_error(comm, MPI_ERR_DISP, call, "invalid disp_unit %d (must be > 0)", disp_unit);
    MPI_Info mine = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL && MPI_Info_dup(info, &mine) != MPI_SUCCESS)
        return bdl_error(comm, MPI_ERR_INFO, call, "invalid info %d", info);
    bdl_rma_enable();
    MPI_Comm priv;
    int rc = bdl_comm_split(comm, 0, c->rank, &priv, call);
    if (rc)
        return rc;
    bdl_comm_t *pc = bdl_comm_get(priv);
    pc->errh = MPI_ERRORS_RETURN;
    int i = win_slot();
    if (i < 0)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    bdl_win_t *w = &g_wins[i];
    w->comm = priv;
    w->id = pc->ctx;
    w->dctx = pc->ctx | BD_CTX_RMA_DATA;
    w->rank = pc->rank;
    w->size = pc->size;
    w->world = malloc((size_t)pc->size * sizeof(int));
    w->sizes = calloc((size_t)pc->size, sizeof(MPI_Aint));
    w->units = calloc((size_t)pc->size, sizeof(int));
    w->fence_sent = calloc((size_t)pc->size, sizeof(int));
    w->lock = calloc((size_t)pc->size, sizeof(int));
    w->nocheck = calloc((size_t)pc->size, sizeof(int));
    w->dirty = calloc((size_t)pc->size, sizeof(int));
    w->start = calloc((size_t)pc->size, sizeof(int));
    int64_t *mine2 = malloc(2 * sizeof(int64_t)), *all = malloc((size_t)pc->size * 16);
    if (!w->world || !w->sizes || !w->units || !w->fence_sent || !w->lock || !w->nocheck ||
        !w->dirty || !w->start || !mine2 || !all) {
        bdl_fatal(MPI_ERR_NO_MEM, "%s: out of memory for a window of %d ranks", call, pc->size);
    }
    memcpy(w->world, pc->world, (size_t)pc->size * sizeof(int));
    w->base = base;
    w->wsize = size;
    w->disp_unit = disp_unit;
    w->flavor = flavor;
    w->model = MPI_WIN_SEPARATE;
    w->alloc = alloc;
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->info = mine;
    w->excl = -1;
    /* Live before the exchange: once any rank has the exchange's result,
     * requests for this window may reach us. */
    w->used = 1;
    mine2[0] = size;
    mine2[1] = disp_unit;
    rc = MPI_Allgather(mine2, 16, MPI_BYTE, all, 16, MPI_BYTE, priv);
    if (rc)
        bdl_fatal(rc, "%s: exchanging window sizes failed", call);
    for (int r = 0; r < pc->size; r++) {
        w->sizes[r] = (MPI_Aint)all[2 * r];
        w->units[r] = (int)all[2 * r + 1];
    }
    free(mine2);
    free(all);
    *win = i + 1;
    return MPI_SUCCESS;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win *win)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Win_create");
    return bdl_win_make("MPI_Win_create", base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE,
                        NULL, win);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                     MPI_Win *win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_allocate";
    BDL_CHECK_INIT(call);
    if (!baseptr)
        return bdl_error(comm, MPI_ERR_ARG, call, "baseptr is NULL");
    if (size < 0)
        return bdl_error(comm, MPI_ERR_SIZE, call, "invalid size %lld (must be >= 0)",
                         (long long)size);
    void *mem = malloc(size > 0 ? (size_t)size : 1);
    if (!mem)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "cannot allocate %lld bytes", (long long)size);
    int rc =
        bdl_win_make(call, mem, size, disp_unit, info, comm, MPI_WIN_FLAVOR_ALLOCATE, mem, win);
    if (rc) {
        free(mem);
        return rc;
    }
    *(void **)baseptr = mem;
    return MPI_SUCCESS;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Win_create_dynamic");
    return bdl_win_make("MPI_Win_create_dynamic", MPI_BOTTOM, 0, 1, info, comm,
                        MPI_WIN_FLAVOR_DYNAMIC, NULL, win);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_attach";
    WIN_OR_ERR(call, win, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return bdl_win_error(win, MPI_ERR_RMA_FLAVOR, call,
                             "memory can only be attached to a window made by "
                             "MPI_Win_create_dynamic");
    if (size < 0)
        return bdl_win_error(win, MPI_ERR_SIZE, call, "invalid size %lld", (long long)size);
    if (size > 0 && !base)
        return bdl_win_error(win, MPI_ERR_RMA_ATTACH, call, "base is NULL");
    char *b = base;
    for (int i = 0; i < w->nregions; i++) {
        bdl_win_region_t *g = &w->regions[i];
        if (size > 0 && b < g->base + g->size && g->base < b + size)
            return bdl_win_error(win, MPI_ERR_RMA_ATTACH, call,
                                 "[%p, +%lld) overlaps memory already attached at [%p, +%lld)",
                                 base, (long long)size, (void *)g->base, (long long)g->size);
    }
    if (w->nregions == w->capregions) {
        int n = w->capregions ? 2 * w->capregions : 4;
        bdl_win_region_t *t = realloc(w->regions, (size_t)n * sizeof *t);
        if (!t)
            return bdl_win_error(win, MPI_ERR_NO_MEM, call, "out of memory");
        w->regions = t;
        w->capregions = n;
    }
    w->regions[w->nregions++] = (bdl_win_region_t){b, size};
    return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_detach";
    WIN_OR_ERR(call, win, w);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return bdl_win_error(win, MPI_ERR_RMA_FLAVOR, call,
                             "memory can only be detached from a window made by "
                             "MPI_Win_create_dynamic");
    for (int i = 0; i < w->nregions; i++)
        if (w->regions[i].base == base) {
            w->regions[i] = w->regions[--w->nregions];
            return MPI_SUCCESS;
        }
    return bdl_win_error(win, MPI_ERR_RMA_ATTACH, call, "no memory is attached at %p", base);
}

/* ---------------------------------------------------------------- attributes */

typedef struct win_keyval {
    int used, freed;
    int refs; /* attributes using it */
    MPI_Win_copy_attr_function *copy_fn;
    MPI_Win_delete_attr_function *delete_fn;
    void *extra;
} win_keyval_t;

typedef struct bdl_win_attr {
    int keyval;
    void *val;
} bdl_win_attr_t;

/* User keyvals are KV_BASE + i, apart from the predefined MPI_WIN_BASE ... */
#define KV_BASE 64
static win_keyval_t *g_kv;
static int g_nkv;

static win_keyval_t *kv_get(int k)
{
    int i = k - KV_BASE;
    return i >= 0 && i < g_nkv && g_kv[i].used ? &g_kv[i] : NULL;
}

static void kv_unref(int k)
{
    win_keyval_t *kv = kv_get(k);
    if (kv && --kv->refs == 0 && kv->freed)
        kv->used = 0;
}

int MPI_WIN_NULL_COPY_FN(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                         void *attribute_val_out, int *flag)
{
    BDL_MT_GUARD;
    (void)oldwin, (void)win_keyval, (void)extra_state, (void)attribute_val_in,
        (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_WIN_DUP_FN(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                   void *attribute_val_out, int *flag)
{
    BDL_MT_GUARD;
    (void)oldwin, (void)win_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_WIN_NULL_DELETE_FN(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state)
{
    BDL_MT_GUARD;
    (void)win, (void)win_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

int MPI_Win_create_keyval(MPI_Win_copy_attr_function *copy_fn,
                          MPI_Win_delete_attr_function *delete_fn, int *win_keyval,
                          void *extra_state)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_create_keyval";
    BDL_CHECK_INIT(call);
    if (!win_keyval)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "win_keyval is NULL");
    int i = 0;
    while (i < g_nkv && g_kv[i].used)
        i++;
    if (i == g_nkv) {
        int n = g_nkv ? 2 * g_nkv : 16;
        win_keyval_t *t = realloc(g_kv, (size_t)n * sizeof *t);
        if (!t)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
        memset(t + g_nkv, 0, (size_t)(n - g_nkv) * sizeof *t);
        g_kv = t;
        g_nkv = n;
    }
    g_kv[i] = (win_keyval_t){1, 0, 0, copy_fn, delete_fn, extra_state};
    *win_keyval = KV_BASE + i;
    return MPI_SUCCESS;
}

int MPI_Win_free_keyval(int *win_keyval)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_free_keyval";
    BDL_CHECK_INIT(call);
    if (!win_keyval)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "win_keyval is NULL");
    win_keyval_t *kv = kv_get(*win_keyval);
    if (!kv || kv->freed)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "invalid window keyval %d",
                         *win_keyval);
    kv->freed = 1;
    if (kv->refs == 0)
        kv->used = 0;
    *win_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int is_predef_key(int k) { return k >= MPI_WIN_BASE && k <= MPI_WIN_MODEL; }

/* Run the delete callback of attribute i of w and remove it. */
static int attr_remove(bdl_win_t *w, int i, const char *call)
{
    bdl_win_attr_t a = w->attrs[i];
    win_keyval_t *kv = kv_get(a.keyval);
    if (kv && kv->delete_fn) {
        int rc = kv->delete_fn(bdl_win_handle(w), a.keyval, a.val, kv->extra);
        if (rc != MPI_SUCCESS)
            return bdl_win_error(bdl_win_handle(w),
                                 rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER, call,
                                 "the delete callback of keyval %d returned %d", a.keyval, rc);
    }
    memmove(w->attrs + i, w->attrs + i + 1, (size_t)(w->nattrs - i - 1) * sizeof *w->attrs);
    w->nattrs--;
    kv_unref(a.keyval);
    return MPI_SUCCESS;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_set_attr";
    WIN_OR_ERR(call, win, w);
    win_keyval_t *kv = kv_get(win_keyval);
    if (!kv || kv->freed)
        return bdl_win_error(win, MPI_ERR_KEYVAL, call, "invalid window keyval %d%s", win_keyval,
                             is_predef_key(win_keyval) ? " (predefined attributes are read-only)"
                                                       : "");
    for (int i = 0; i < w->nattrs; i++)
        if (w->attrs[i].keyval == win_keyval) {
            if (kv->delete_fn) {
                int rc = kv->delete_fn(win, win_keyval, w->attrs[i].val, kv->extra);
                if (rc != MPI_SUCCESS)
                    return bdl_win_error(win, rc > 0 && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER,
                                         call, "the delete callback of keyval %d returned %d",
                                         win_keyval, rc);
            }
            w->attrs[i].val = attribute_val;
            return MPI_SUCCESS;
        }
    bdl_win_attr_t *t = realloc(w->attrs, (size_t)(w->nattrs + 1) * sizeof *t);
    if (!t)
        return bdl_win_error(win, MPI_ERR_NO_MEM, call, "out of memory");
    w->attrs = t;
    w->attrs[w->nattrs++] = (bdl_win_attr_t){win_keyval, attribute_val};
    kv->refs++;
    return MPI_SUCCESS;
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_get_attr";
    WIN_OR_ERR(call, win, w);
    if (!attribute_val || !flag)
        return bdl_win_error(win, MPI_ERR_ARG, call, "%s is NULL", flag ? "attribute_val" : "flag");
    *flag = 1;
    switch (win_keyval) {
    case MPI_WIN_BASE: *(void **)attribute_val = w->base; return MPI_SUCCESS;
    case MPI_WIN_SIZE: *(MPI_Aint **)attribute_val = &w->wsize; return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT: *(int **)attribute_val = &w->disp_unit; return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR: *(int **)attribute_val = &w->flavor; return MPI_SUCCESS;
    case MPI_WIN_MODEL: *(int **)attribute_val = &w->model; return MPI_SUCCESS;
    default: break;
    }
    *flag = 0;
    if (!kv_get(win_keyval))
        return bdl_win_error(win, MPI_ERR_KEYVAL, call, "invalid window keyval %d", win_keyval);
    for (int i = 0; i < w->nattrs; i++)
        if (w->attrs[i].keyval == win_keyval) {
            *(void **)attribute_val = w->attrs[i].val;
            *flag = 1;
        }
    return MPI_SUCCESS;
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_delete_attr";
    WIN_OR_ERR(call, win, w);
    if (!kv_get(win_keyval))
        return bdl_win_error(win, MPI_ERR_KEYVAL, call, "invalid window keyval %d", win_keyval);
    for (int i = 0; i < w->nattrs; i++)
        if (w->attrs[i].keyval == win_keyval)
            return attr_remove(w, i, call);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- free, names, info, group */

int MPI_Win_free(MPI_Win *win)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_free";
    BDL_CHECK_INIT(call);
    if (!win)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "win is NULL");
    bdl_win_t *w = bdl_win_get(*win);
    if (!w)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_WIN, call, "invalid window %d", *win);
    if (bdl_rma_win_busy(w))
        return bdl_win_error(*win, MPI_ERR_RMA_SYNC, call,
                             "the window still has an access or exposure epoch open (unlock, "
                             "complete, wait, or end the fence epoch with MPI_MODE_NOSUCCEED "
                             "before freeing it)");
    /* Everyone's operations on it are over once all are here: requests to
     * us (unlocks) are served while we wait. */
    int rc = MPI_Barrier(w->comm);
    if (rc)
        bdl_fatal(rc, "%s: synchronizing the ranks of the window failed", call);
    w = bdl_win_get(*win);
    while (w->nattrs > 0) {
        /* The last attribute first (MPI 3.1 6.7.3 leaves the order open). */
        rc = attr_remove(w, w->nattrs - 1, call);
        if (rc)
            return rc;
    }
    free(w->attrs);
    bdl_rma_win_release(w);
    MPI_Comm priv = w->comm;
    win_clear(w);
    MPI_Comm_free(&priv);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

int MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    BDL_MT_GUARD;
    WIN_OR_ERR("MPI_Win_set_name", win, w);
    if (!win_name)
        return bdl_win_error(win, MPI_ERR_ARG, "MPI_Win_set_name", "win_name is NULL");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    BDL_MT_GUARD;
    WIN_OR_ERR("MPI_Win_get_name", win, w);
    if (!win_name || !resultlen)
        return bdl_win_error(win, MPI_ERR_ARG, "MPI_Win_get_name", "%s is NULL",
                             win_name ? "resultlen" : "win_name");
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    BDL_MT_GUARD;
    WIN_OR_ERR("MPI_Win_get_group", win, w);
    if (!group)
        return bdl_win_error(win, MPI_ERR_ARG, "MPI_Win_get_group", "group is NULL");
    int g = bdl_group_new(w->size, w->world);
    if (g < 0)
        return bdl_win_error(win, MPI_ERR_NO_MEM, "MPI_Win_get_group", "out of memory");
    *group = g;
    return MPI_SUCCESS;
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_set_info";
    WIN_OR_ERR(call, win, w);
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int n;
    if (MPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
        return bdl_win_error(win, MPI_ERR_INFO, call, "invalid info %d", info);
    if (w->info == MPI_INFO_NULL && MPI_Info_create(&w->info) != MPI_SUCCESS)
        return bdl_win_error(win, MPI_ERR_NO_MEM, call, "out of memory");
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            MPI_Info_set(w->info, key, val);
    }
    return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Win_get_info";
    WIN_OR_ERR(call, win, w);
    if (!info_used)
        return bdl_win_error(win, MPI_ERR_ARG, call, "info_used is NULL");
    MPI_Info out;
    if (MPI_Info_create(&out) != MPI_SUCCESS)
        return bdl_win_error(win, MPI_ERR_NO_MEM, call, "out of memory");
    /* The hints every window honours (MPI 3.1 11.2.1), then those given. */
    MPI_Info_set(out, "no_locks", "false");
    MPI_Info_set(out, "accumulate_ordering", "rar,raw,war,waw");
    MPI_Info_set(out, "accumulate_ops", "same_op_no_op");
    MPI_Info_set(out, "same_size", "false");
    MPI_Info_set(out, "same_disp_unit", "false");
    if (w->info != MPI_INFO_NULL) {
        int n = 0;
        MPI_Info_get_nkeys(w->info, &n);
        for (int i = 0; i < n; i++) {
            char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
            int flag;
            MPI_Info_get_nthkey(w->info, i, key);
            MPI_Info_get(w->info, key, MPI_MAX_INFO_VAL, val, &flag);
            if (flag)
                MPI_Info_set(out, key, val);
        }
    }
    *info_used = out;
    return MPI_SUCCESS;
}
