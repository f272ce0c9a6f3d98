/* Groups and communicator attributes (MPI 3.1 chapter 6).
 *
 * A group is a local object: the world ranks of its members in group rank
 * order.  Handles index a table; MPI_GROUP_EMPTY (1) is predefined and every
 * operation whose result is empty returns it.
 *
 * Attributes: a keyval holds the copy and delete callbacks and is reference
 * counted by the attributes that use it, so freeing a keyval that is still
 * attached only forbids new uses.  Each communicator keeps its attributes as
 * a small array in set order (bdl_comm_t.attrs). */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "objects.h"
#include "request.h"

typedef struct group {
    int used;
    int n;
    int *world; /* group rank -> world rank */
} group_t;

static group_t *g_groups;
static int g_ngroups;
static const int g_empty_members[1];

int bdl_group_new(int n, const int *world)
{
    if (n == 0)
        return MPI_GROUP_EMPTY;
    int h = 0;
    for (int i = 2; i < g_ngroups; i++)
        if (!g_groups[i].used) {
            h = i;
            break;
        }
    if (!h) {
        int nn = g_ngroups ? g_ngroups * 2 : 16;
        group_t *t = realloc(g_groups, (size_t)nn * sizeof *t);
        if (!t)
            return -1;
        memset(t + g_ngroups, 0, (size_t)(nn - g_ngroups) * sizeof *t);
        h = g_ngroups < 2 ? 2 : g_ngroups;
        g_groups = t;
        g_ngroups = nn;
    }
    int *w = malloc((size_t)n * sizeof(int));
    if (!w)
        return -1;
    memcpy(w, world, (size_t)n * sizeof(int));
    g_groups[h] = (group_t){1, n, w};
    return h;
}

const int *bdl_group_members(MPI_Group g, int *n)
{
    if (g == MPI_GROUP_EMPTY) {
        *n = 0;
        return g_empty_members;
    }
    if (g < 2 || g >= g_ngroups || !g_groups[g].used)
        return NULL;
    *n = g_groups[g].n;
    return g_groups[g].world;
}

/* ---------------------------------------------------------------- helpers */

#define GET_GROUP(g, mem, n, call)                                                                 \
    BDL_CHECK_INIT(call);                                                                          \
    int n;                                                                                         \
    const int *mem = bdl_group_members(g, &n);                                                     \
    if (!mem)                                                                                      \
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call, "invalid group %d", g)

/* One more than the largest world rank in both lists (spawned ranks'
 * world ranks are above the job's world size). */
static int world_limit(const int *a, int na, const int *b, int nb)
{
    int lim = 1;
    for (int i = 0; i < na; i++)
        lim = a[i] >= lim ? a[i] + 1 : lim;
    for (int i = 0; i < nb; i++)
        lim = b[i] >= lim ? b[i] + 1 : lim;
    return lim;
}

/* world rank -> group rank map (-1: not a member) for world ranks below
 * lim; caller frees. */
static int *rank_map(const int *mem, int n, int lim)
{
    int *map = malloc((size_t)lim * sizeof(int));
    if (!map)
        return NULL;
    for (int i = 0; i < lim; i++)
        map[i] = -1;
    for (int i = 0; i < n; i++)
        if (mem[i] >= 0 && mem[i] < lim)
            map[mem[i]] = i;
    return map;
}

static int no_mem(const char *call)
{
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
}

/* Store a new group of the given world ranks in *out. */
static int make_group(int n, const int *world, MPI_Group *out, const char *call)
{
    int h = bdl_group_new(n, world);
    if (h < 0)
        return no_mem(call);
    *out = h;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_group");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_group", "invalid communicator %d", comm);
    if (!group)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
    return make_group(c->size, c->world, group, "MPI_Comm_group");
}

int MPI_Group_size(MPI_Group group, int *size)
{
    BDL_MT_GUARD;
    GET_GROUP(group, mem, n, "MPI_Group_size");
    (void)mem;
    if (!size)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = n;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
    BDL_MT_GUARD;
    GET_GROUP(group, mem, n, "MPI_Group_rank");
    if (!rank)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    *rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (mem[i] == bdl_g.world_rank) {
            *rank = i;
            break;
        }
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[])
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_translate_ranks";
    GET_GROUP(group1, m1, n1, call);
    int n2;
    const int *m2 = bdl_group_members(group2, &n2);
    if (!m2)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call, "invalid group %d", group2);
    if (n < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid number of ranks %d", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL rank array with n = %d", n);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= n1))
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call,
                             "ranks1[%d] = %d is not a rank of group %d (size %d)", i, ranks1[i],
                             group1, n1);
    int *map = rank_map(m2, n2, world_limit(m1, n1, m2, n2));
    if (!map)
        return no_mem(call);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = map[m1[ranks1[i]]];
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    free(map);
    return MPI_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_compare";
    GET_GROUP(group1, m1, n1, call);
    int n2;
    const int *m2 = bdl_group_members(group2, &n2);
    if (!m2)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call, "invalid group %d", group2);
    if (!result)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "result is NULL");
    if (n1 != n2) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (!memcmp(m1, m2, (size_t)n1 * sizeof(int))) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int *x = malloc((size_t)n1 * sizeof(int)), *y = malloc((size_t)n1 * sizeof(int));
    if (!x || !y) {
        free(x);
        free(y);
        return no_mem(call);
    }
    memcpy(x, m1, (size_t)n1 * sizeof(int));
    memcpy(y, m2, (size_t)n1 * sizeof(int));
    qsort(x, (size_t)n1, sizeof(int), cmp_int);
    qsort(y, (size_t)n1, sizeof(int), cmp_int);
    *result = memcmp(x, y, (size_t)n1 * sizeof(int)) ? MPI_UNEQUAL : MPI_SIMILAR;
    free(x);
    free(y);
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Group_free");
    if (!group)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    if (*group == MPI_GROUP_EMPTY) { /* results of group operations may be it */
        *group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    int n;
    if (!bdl_group_members(*group, &n))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, "MPI_Group_free", "invalid group %d",
                         *group);
    free(g_groups[*group].world);
    memset(&g_groups[*group], 0, sizeof g_groups[*group]);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- constructors */

/* Check a list of n distinct ranks of a group of size gsize; `what` names
 * the argument in messages. */
static int check_ranks(const int *ranks, int n, int gsize, MPI_Group g, const char *call,
                       const char *what)
{
    if (n < 0 || n > gsize)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "invalid number of ranks %d (group %d has %d)", n, g, gsize);
    if (n > 0 && !ranks)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL %s with n = %d", what, n);
    char *seen = calloc((size_t)(gsize ? gsize : 1), 1);
    if (!seen)
        return no_mem(call);
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= gsize) {
            free(seen);
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call,
                             "%s[%d] = %d is not a rank of group %d (size %d)", what, i, r, g,
                             gsize);
        }
        if (seen[r]) {
            free(seen);
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call, "%s[%d] = %d appears twice", what,
                             i, r);
        }
        seen[r] = 1;
    }
    free(seen);
    return MPI_SUCCESS;
}

static int incl(MPI_Group group, const int *mem, int n, const int *ranks, MPI_Group *newgroup,
                const char *call)
{
    (void)group;
    int *w = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!w)
        return no_mem(call);
    for (int i = 0; i < n; i++)
        w[i] = mem[ranks[i]];
    int rc = make_group(n, w, newgroup, call);
    free(w);
    return rc;
}

static int excl(const int *mem, int gsize, int n, const int *ranks, MPI_Group *newgroup,
                const char *call)
{
    char *drop = calloc((size_t)(gsize ? gsize : 1), 1);
    int *w = malloc((size_t)(gsize ? gsize : 1) * sizeof(int));
    if (!drop || !w) {
        free(drop);
        free(w);
        return no_mem(call);
    }
    for (int i = 0; i < n; i++)
        drop[ranks[i]] = 1;
    int k = 0;
    for (int i = 0; i < gsize; i++)
        if (!drop[i])
            w[k++] = mem[i];
    int rc = make_group(k, w, newgroup, call);
    free(drop);
    free(w);
    return rc;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_incl";
    GET_GROUP(group, mem, gsize, call);
    if (!newgroup)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newgroup is NULL");
    int rc = check_ranks(ranks, n, gsize, group, call, "ranks");
    return rc ? rc : incl(group, mem, n, ranks, newgroup, call);
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_excl";
    GET_GROUP(group, mem, gsize, call);
    if (!newgroup)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newgroup is NULL");
    int rc = check_ranks(ranks, n, gsize, group, call, "ranks");
    return rc ? rc : excl(mem, gsize, n, ranks, newgroup, call);
}

/* Expand range triplets (first, last, stride) into a rank list (*out,
 * *nout; caller frees), checking every rank is valid and none repeats. */
static int expand_ranges(int n, int ranges[][3], int gsize, MPI_Group g, const char *call,
                         int **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    if (n < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid number of ranges %d", n);
    if (n > 0 && !ranges)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL ranges with n = %d", n);
    long long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "ranges[%d] has stride 0", i);
        if (first < 0 || first >= gsize || last < 0 || last >= gsize)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call,
                             "ranges[%d] = (%d, %d, %d) leaves group %d (size %d)", i, first, last,
                             stride, g, gsize);
        long long cnt = ((long long)last - first) / stride + 1;
        if (cnt > 0)
            total += cnt;
        if (total > gsize)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call,
                             "ranges name more than the %d ranks of group %d (a rank repeats)",
                             gsize, g);
    }
    int *list = malloc((size_t)(total ? total : 1) * sizeof(int));
    if (!list)
        return no_mem(call);
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long long cnt = ((long long)last - first) / stride + 1;
        for (long long j = 0; j < cnt; j++)
            list[k++] = (int)(first + j * stride);
    }
    int rc = check_ranks(list, k, gsize, g, call, "expanded ranges");
    if (rc) {
        free(list);
        return rc;
    }
    *out = list;
    *nout = k;
    return MPI_SUCCESS;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_range_incl";
    GET_GROUP(group, mem, gsize, call);
    if (!newgroup)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newgroup is NULL");
    int *list, k;
    int rc = expand_ranges(n, ranges, gsize, group, call, &list, &k);
    if (rc)
        return rc;
    rc = incl(group, mem, k, list, newgroup, call);
    free(list);
    return rc;
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_range_excl";
    GET_GROUP(group, mem, gsize, call);
    if (!newgroup)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newgroup is NULL");
    int *list, k;
    int rc = expand_ranges(n, ranges, gsize, group, call, &list, &k);
    if (rc)
        return rc;
    rc = excl(mem, gsize, k, list, newgroup, call);
    free(list);
    return rc;
}

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

/* Union: group1, then the members of group2 not in group1 in group2's
 * order.  Intersection and difference keep group1's order. */
static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op, const char *call)
{
    GET_GROUP(group1, m1, n1, call);
    int n2;
    const int *m2 = bdl_group_members(group2, &n2);
    if (!m2)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call, "invalid group %d", group2);
    if (!newgroup)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newgroup is NULL");
    int lim = world_limit(m1, n1, m2, n2);
    int *in2 = rank_map(m2, n2, lim), *in1 = rank_map(m1, n1, lim);
    int *w = malloc((size_t)(n1 + n2 + 1) * sizeof(int));
    if (!in1 || !in2 || !w) {
        free(in1);
        free(in2);
        free(w);
        return no_mem(call);
    }
    int k = 0;
    for (int i = 0; i < n1; i++) {
        int both = in2[m1[i]] >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == both)
            w[k++] = m1[i];
    }
    if (op == SET_UNION)
        for (int i = 0; i < n2; i++)
            if (in1[m2[i]] < 0)
                w[k++] = m2[i];
    int rc = make_group(k, w, newgroup, call);
    free(in1);
    free(in2);
    free(w);
    return rc;
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    return set_op(group1, group2, newgroup, SET_UNION, "MPI_Group_union");
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    return set_op(group1, group2, newgroup, SET_INTERSECTION, "MPI_Group_intersection");
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    return set_op(group1, group2, newgroup, SET_DIFFERENCE, "MPI_Group_difference");
}

/* ---------------------------------------------------------------- keyvals */

/* User keyvals are numbered from KEYVAL_BASE, above the predefined keys. */
#define KEYVAL_BASE 64

typedef struct keyval {
    int used;
    int freed; /* MPI_Comm_free_keyval was called; attributes may still use it */
    int refs;  /* 1 until freed, plus one per attached attribute */
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
} keyval_t;

struct bdl_attr {
    int keyval;
    void *val;
};

static keyval_t *g_kvs;
static int g_nkvs;

/* A keyval the program may name (created and not freed). */
static keyval_t *kv_get(int keyval)
{
    int i = keyval - KEYVAL_BASE;
    if (i < 0 || i >= g_nkvs || !g_kvs[i].used || g_kvs[i].freed)
        return NULL;
    return &g_kvs[i];
}

/* A keyval still referenced by an attribute. */
static keyval_t *kv_any(int keyval)
{
    int i = keyval - KEYVAL_BASE;
    return i >= 0 && i < g_nkvs && g_kvs[i].used ? &g_kvs[i] : NULL;
}

static void kv_unref(keyval_t *kv)
{
    if (--kv->refs == 0)
        memset(kv, 0, sizeof *kv);
}

static int is_predefined_key(int keyval)
{
    return (keyval >= MPI_TAG_UB && keyval <= MPI_APPNUM) || keyval == MPI_LASTUSEDCODE;
}

int MPI_COMM_NULL_COPY_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    BDL_MT_GUARD;
    (void)oldcomm, (void)comm_keyval, (void)extra_state, (void)attribute_val_in;
    (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag)
{
    BDL_MT_GUARD;
    (void)oldcomm, (void)comm_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state)
{
    BDL_MT_GUARD;
    (void)comm, (void)comm_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

static int create_keyval(MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
                         int *keyval, void *extra, const char *call)
{
    BDL_CHECK_INIT(call);
    if (!keyval)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "keyval is NULL");
    int h = -1;
    for (int i = 0; i < g_nkvs; i++)
        if (!g_kvs[i].used) {
            h = i;
            break;
        }
    if (h < 0) {
        int n = g_nkvs ? g_nkvs * 2 : 16;
        keyval_t *t = realloc(g_kvs, (size_t)n * sizeof *t);
        if (!t)
            return no_mem(call);
        memset(t + g_nkvs, 0, (size_t)(n - g_nkvs) * sizeof *t);
        h = g_nkvs;
        g_kvs = t;
        g_nkvs = n;
    }
    g_kvs[h] = (keyval_t){
        1, 0, 1, copy ? copy : MPI_COMM_NULL_COPY_FN, del ? del : MPI_COMM_NULL_DELETE_FN, extra};
    *keyval = KEYVAL_BASE + h;
    return MPI_SUCCESS;
}

static int free_keyval(int *keyval, const char *call)
{
    BDL_CHECK_INIT(call);
    if (!keyval)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "keyval is NULL");
    if (is_predefined_key(*keyval))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "cannot free predefined keyval %d",
                         *keyval);
    keyval_t *kv = kv_any(*keyval);
    if (!kv)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_KEYVAL, call, "invalid keyval %d", *keyval);
    /* Freeing again while attributes still hold the key is tolerated, as
     * MPICH does (a delete callback may free its own keyval). */
    if (!kv->freed) {
        kv->freed = 1;
        kv_unref(kv);
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                           MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                           void *extra_state)
{
    BDL_MT_GUARD;
    return create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state,
                         "MPI_Comm_create_keyval");
}

int MPI_Comm_free_keyval(int *comm_keyval)
{
    BDL_MT_GUARD;
    return free_keyval(comm_keyval, "MPI_Comm_free_keyval");
}

int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                      void *extra_state)
{
    BDL_MT_GUARD;
    return create_keyval(copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}

int MPI_Keyval_free(int *keyval)
{
    BDL_MT_GUARD;
    return free_keyval(keyval, "MPI_Keyval_free");
}

/* ---------------------------------------------------------------- attributes */

static int find_attr(bdl_comm_t *c, int keyval)
{
    BDL_MT_GUARD;
    for (int i = 0; i < c->nattrs; i++)
        if (c->attrs[i].keyval == keyval)
            return i;
    return -1;
}

static int add_attr(bdl_comm_t *c, int keyval, void *val)
{
    struct bdl_attr *t = realloc(c->attrs, (size_t)(c->nattrs + 1) * sizeof *t);
    if (!t)
        return -1;
    c->attrs = t;
    c->attrs[c->nattrs++] = (struct bdl_attr){keyval, val};
    kv_any(keyval)->refs++;
    return 0;
}

/* An error code returned by a callback, as an MPI error code. */
/* A callback's failure is returned as it gave it when it is an error code
 * (the program's own added codes included), else as MPI_ERR_OTHER. */
static int callback_code(int rc) { return bdl_errcode_valid(rc) ? rc : MPI_ERR_OTHER; }

/* Run the delete callback of an attribute already taken off comm. */
static int run_delete(MPI_Comm comm, int keyval, void *val, const char *call)
{
    keyval_t *kv = kv_any(keyval);
    int rc = kv->del(comm, keyval, val, kv->extra);
    if (rc != MPI_SUCCESS)
        return bdl_error(comm, callback_code(rc), call,
                         "the delete callback of keyval %d returned %d", keyval, rc);
    kv_unref(kv_any(keyval));
    return MPI_SUCCESS;
}

int bdl_attr_get(bdl_comm_t *c, int keyval, void **val, int *flag)
{
    if (!kv_any(keyval))
        return MPI_ERR_KEYVAL;
    int i = find_attr(c, keyval);
    *flag = i >= 0;
    if (i >= 0)
        *val = c->attrs[i].val;
    return MPI_SUCCESS;
}

static int set_attr(MPI_Comm comm, int keyval, void *val, const char *call)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (is_predefined_key(keyval))
        return bdl_error(comm, MPI_ERR_KEYVAL, call, "cannot set predefined attribute %d", keyval);
    if (!kv_get(keyval))
        return bdl_error(comm, MPI_ERR_KEYVAL, call, "invalid keyval %d", keyval);
    int i = find_attr(c, keyval);
    if (i >= 0) {
        /* The old value goes through the delete callback first. */
        void *old = c->attrs[i].val;
        keyval_t *kv = kv_any(keyval);
        int rc = kv->del(comm, keyval, old, kv->extra);
        if (rc != MPI_SUCCESS)
            return bdl_error(comm, callback_code(rc), call,
                             "the delete callback of keyval %d returned %d", keyval, rc);
        c = bdl_comm_get(comm);
        i = find_attr(c, keyval);
        if (i >= 0) {
            c->attrs[i].val = val;
            return MPI_SUCCESS;
        }
    }
    if (add_attr(c, keyval, val) < 0)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int keyval, const char *call)
{
    BDL_CHECK_INIT(call);
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (is_predefined_key(keyval))
        return bdl_error(comm, MPI_ERR_KEYVAL, call, "cannot delete predefined attribute %d",
                         keyval);
    /* A freed keyval stays usable while attributes hold it (MPI 3.1 6.7.2). */
    if (!kv_any(keyval))
        return bdl_error(comm, MPI_ERR_KEYVAL, call, "invalid keyval %d", keyval);
    int i = find_attr(c, keyval);
    if (i < 0)
        return MPI_SUCCESS;
    void *val = c->attrs[i].val;
    keyval_t *kv = kv_any(keyval);
    int rc = kv->del(comm, keyval, val, kv->extra);
    if (rc != MPI_SUCCESS)
        return bdl_error(comm, callback_code(rc), call,
                         "the delete callback of keyval %d returned %d", keyval, rc);
    c = bdl_comm_get(comm);
    i = find_attr(c, keyval);
    if (i >= 0) {
        memmove(&c->attrs[i], &c->attrs[i + 1], (size_t)(c->nattrs - i - 1) * sizeof *c->attrs);
        c->nattrs--;
        kv_unref(kv_any(keyval));
    }
    return MPI_SUCCESS;
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    BDL_MT_GUARD;
    return set_attr(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    BDL_MT_GUARD;
    return delete_attr(comm, comm_keyval, "MPI_Comm_delete_attr");
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    BDL_MT_GUARD;
    return set_attr(comm, keyval, attribute_val, "MPI_Attr_put");
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    BDL_MT_GUARD;
    return MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
    BDL_MT_GUARD;
    return delete_attr(comm, keyval, "MPI_Attr_delete");
}

/* MPI_Comm_dup: every attribute of oldcomm goes through its copy callback;
 * those it keeps are attached to newcomm. */
int bdl_attr_copy_all(MPI_Comm oldcomm, MPI_Comm newcomm, const char *call)
{
    bdl_comm_t *c = bdl_comm_get(oldcomm);
    int n = c->nattrs;
    if (!n)
        return MPI_SUCCESS;
    /* Callbacks may change oldcomm's attributes: work on a snapshot. */
    struct bdl_attr *snap = malloc((size_t)n * sizeof *snap);
    if (!snap)
        return bdl_error(oldcomm, MPI_ERR_NO_MEM, call, "out of memory");
    memcpy(snap, c->attrs, (size_t)n * sizeof *snap);
    for (int i = 0; i < n; i++) {
        keyval_t *kv = kv_any(snap[i].keyval);
        if (!kv)
            continue;
        void *out = NULL;
        int flag = 0;
        int rc = kv->copy(oldcomm, snap[i].keyval, kv->extra, snap[i].val, &out, &flag);
        if (rc != MPI_SUCCESS) {
            int k = snap[i].keyval;
            free(snap);
            return bdl_error(oldcomm, callback_code(rc), call,
                             "the copy callback of keyval %d returned %d", k, rc);
        }
        if (!flag)
            continue;
        bdl_comm_t *nc = bdl_comm_get(newcomm);
        int j = find_attr(nc, snap[i].keyval);
        if (j >= 0) {
            nc->attrs[j].val = out;
        } else if (add_attr(nc, snap[i].keyval, out) < 0) {
            free(snap);
            return bdl_error(oldcomm, MPI_ERR_NO_MEM, call, "out of memory");
        }
    }
    free(snap);
    return MPI_SUCCESS;
}

/* MPI_Comm_free: delete callbacks, last set first.  On a failing callback
 * the attribute stays and the error is returned. */
int bdl_attr_delete_all(MPI_Comm comm, const char *call)
{
    for (;;) {
        bdl_comm_t *c = bdl_comm_get(comm);
        if (!c || !c->nattrs)
            return MPI_SUCCESS;
        struct bdl_attr a = c->attrs[--c->nattrs];
        int rc = run_delete(comm, a.keyval, a.val, call);
        if (rc) {
            c = bdl_comm_get(comm);
            if (add_attr(c, a.keyval, a.val) == 0)
                kv_any(a.keyval)->refs--; /* it kept its reference */
            return rc;
        }
    }
}
