/*
 * attrs: communicator attributes (MPI 3.1 section 6.7).
 *
 *  1. A keyval whose copy callback makes a new value (a counted object)
 *     and whose delete callback releases it: MPI_Comm_dup calls copy once
 *     per attribute with the old communicator, the keyval, the extra state
 *     and the old value, and attaches what it returns; MPI_Comm_free calls
 *     delete once per attribute with the value of that communicator;
 *     MPI_Comm_set_attr on a key already set deletes the old value first;
 *     MPI_Comm_delete_attr deletes it (get then finds nothing).
 *  2. MPI_COMM_NULL_COPY_FN: not copied by dup.  MPI_COMM_DUP_FN: the same
 *     value is attached to the duplicate.  A copy callback returning
 *     flag = 0 for some values only.
 *  3. MPI_Comm_split does not copy attributes.
 *  4. A keyval freed while an attribute uses it: the keyval handle becomes
 *     MPI_KEYVAL_INVALID; dup still copies the attribute and free still
 *     deletes it.
 *  5. The deprecated MPI-1 calls (Keyval_create, Attr_put, Attr_get,
 *     Attr_delete, Keyval_free) and MPI_NULL_COPY_FN / MPI_DUP_FN.
 *  6. Predefined attributes: MPI_TAG_UB on MPI_COMM_WORLD is at least 32767.
 *  7. Attributes on MPI_COMM_WORLD and MPI_COMM_SELF themselves.
 *  8. After MPI_Comm_free_keyval the old key value still gets and deletes
 *     the attributes that use it (6.7.2); a copy callback that fails makes
 *     MPI_Comm_dup return its error and MPI_COMM_NULL.
 */
#include "mtest.h"

typedef struct obj {
    int magic;
    int value;
    int refs;
} obj_t;

static int ncopy, ndelete, extra_seen_bad, last_keyval_seen;
static MPI_Comm last_comm_seen;
static int extra_token = 4711;

static obj_t *obj_new(int v)
{
    obj_t *o = malloc(sizeof *o);
    o->magic = 0x5eed;
    o->value = v;
    o->refs = 1;
    return o;
}

/* copy: a new object with value + 1 (so the copy is recognisable) */
static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    obj_t *o = in;
    ncopy++;
    last_comm_seen = oldcomm;
    last_keyval_seen = keyval;
    if (extra != &extra_token)
        extra_seen_bad++;
    if (!o || o->magic != 0x5eed) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *(void **)out = obj_new(o->value + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    obj_t *o = val;
    ndelete++;
    last_comm_seen = comm;
    last_keyval_seen = keyval;
    if (extra != &extra_token)
        extra_seen_bad++;
    if (o && o->magic == 0x5eed) {
        o->magic = 0;
        free(o);
    }
    return MPI_SUCCESS;
}

/* copies only even values, keeping the same integer (cast to a pointer) */
static int even_copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    *flag = ((intptr_t)in % 2) == 0;
    if (*flag)
        *(void **)out = in;
    return MPI_SUCCESS;
}

static int count_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (*(int *)extra)++;
    return MPI_SUCCESS;
}

/* value of keyval on c, or NULL with *flag = 0 */
static int failing_copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                           int *flag)
{
    (void)oldcomm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static void *get(MPI_Comm c, int keyval, int *flag)
{
    void *v = NULL;
    *flag = -1;
    MPI_Comm_get_attr(c, keyval, &v, flag);
    return *flag ? v : NULL;
}

int main(int argc, char **argv)
{
    int key, nullkey, dupkey, evenkey, flag, rank;
    MPI_Comm a, b, c;
    obj_t *o;

    mtest_init(&argc, &argv, "attrs");
    rank = mtest_rank_;

    /* ---- 1. copy / delete callbacks through dup and free ---- */
    MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra_token);
    CHECK(key != MPI_KEYVAL_INVALID, "Comm_create_keyval gave MPI_KEYVAL_INVALID");
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    get(a, key, &flag);
    CHECK_INT(flag, 0, "attribute set before it was set");
    MPI_Comm_set_attr(a, key, obj_new(rank * 10));
    o = get(a, key, &flag);
    CHECK(flag == 1 && o && o->value == rank * 10, "get after set: flag %d", flag);

    ncopy = ndelete = 0;
    MPI_Comm_dup(a, &b);
    CHECK_INT(ncopy, 1, "copy callbacks run by Comm_dup");
    CHECK(last_comm_seen == a && last_keyval_seen == key,
          "copy callback got the wrong communicator or keyval");
    o = get(b, key, &flag);
    CHECK(flag == 1 && o && o->value == rank * 10 + 1, "dup's attribute: flag %d value %d", flag,
          o ? o->value : -1);
    o = get(a, key, &flag);
    CHECK(flag == 1 && o && o->value == rank * 10, "original's attribute changed by dup");

    /* dup of a dup: value + 2 */
    MPI_Comm_dup(b, &c);
    o = get(c, key, &flag);
    CHECK(flag == 1 && o && o->value == rank * 10 + 2, "dup of dup: value %d", o ? o->value : -1);

    ndelete = 0;
    MPI_Comm_free(&b);
    CHECK_INT(ndelete, 1, "delete callbacks run by Comm_free");
    CHECK(last_keyval_seen == key, "delete callback got keyval %d", last_keyval_seen);

    /* set on a key already set: the old value is deleted first */
    ndelete = 0;
    MPI_Comm_set_attr(c, key, obj_new(-5));
    CHECK_INT(ndelete, 1, "delete callbacks when replacing a value");
    o = get(c, key, &flag);
    CHECK(flag == 1 && o && o->value == -5, "replaced value");

    /* delete_attr */
    ndelete = 0;
    MPI_Comm_delete_attr(c, key);
    CHECK_INT(ndelete, 1, "delete callbacks run by Comm_delete_attr");
    CHECK(last_comm_seen == c, "delete callback got the wrong communicator");
    get(c, key, &flag);
    CHECK_INT(flag, 0, "attribute still there after Comm_delete_attr");
    ndelete = 0;
    MPI_Comm_free(&c);
    CHECK_INT(ndelete, 0, "delete callback for a deleted attribute");

    /* ---- 2. predefined copy functions; selective copying ---- */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nullkey, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dupkey, NULL);
    {
        int deletes = 0;
        MPI_Comm_create_keyval(even_copy_fn, count_delete_fn, &evenkey, &deletes);
        MPI_Comm_set_attr(a, nullkey, &extra_token);
        MPI_Comm_set_attr(a, dupkey, &extra_token);
        MPI_Comm_set_attr(a, evenkey, (void *)(intptr_t)(rank % 2 ? 3 : 4));
        ncopy = 0;
        MPI_Comm_dup(a, &b);
        get(b, nullkey, &flag);
        CHECK_INT(flag, 0, "MPI_COMM_NULL_COPY_FN attribute was copied");
        CHECK(get(b, dupkey, &flag) == &extra_token && flag == 1,
              "MPI_COMM_DUP_FN attribute not copied as is");
        CHECK(get(a, dupkey, &flag) == &extra_token && flag == 1,
              "MPI_COMM_DUP_FN: original lost its value");
        get(b, evenkey, &flag);
        CHECK(flag == (rank % 2 == 0), "selective copy: flag %d for rank %d", flag, rank);
        CHECK_INT(ncopy, 1, "copy callbacks of the first keyval on the second dup");
        MPI_Comm_free(&b);
        CHECK_INT(deletes, rank % 2 == 0, "delete callbacks of the selective keyval");
        MPI_Comm_delete_attr(a, evenkey);
        CHECK_INT(deletes, 1 + (rank % 2 == 0), "delete callbacks after Comm_delete_attr");
        MPI_Comm_free_keyval(&evenkey);
        CHECK(evenkey == MPI_KEYVAL_INVALID, "Comm_free_keyval did not set MPI_KEYVAL_INVALID");
    }

    /* ---- 3. split does not copy ---- */
    MPI_Comm_split(a, 0, rank, &b);
    get(b, key, &flag);
    CHECK_INT(flag, 0, "Comm_split copied an attribute");
    get(b, dupkey, &flag);
    CHECK_INT(flag, 0, "Comm_split copied an MPI_COMM_DUP_FN attribute");
    MPI_Comm_free(&b);

    /* ---- 4. keyval freed while in use ---- */
    {
        int k2 = key;
        MPI_Comm_free_keyval(&k2);
        CHECK(k2 == MPI_KEYVAL_INVALID, "Comm_free_keyval did not set MPI_KEYVAL_INVALID");
        ncopy = ndelete = 0;
        MPI_Comm_dup(a, &b); /* a still has key's attribute */
        CHECK_INT(ncopy, 1, "copy callback of a freed keyval still in use");
        MPI_Comm_free(&b);
        CHECK_INT(ndelete, 1, "delete callback of a freed keyval on the duplicate");
        ndelete = 0;
        MPI_Comm_free(&a);
        CHECK_INT(ndelete, 1, "delete callback of a freed keyval on the original");
    }
    MPI_Comm_free_keyval(&nullkey);
    MPI_Comm_free_keyval(&dupkey);

    /* ---- 5. deprecated interface ---- */
    {
        int k, deletes = 0;
        void *v = NULL;
        MPI_Keyval_create(MPI_DUP_FN, count_delete_fn, &k, &deletes);
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Attr_put(a, k, (void *)(intptr_t)(rank + 1));
        flag = 0;
        MPI_Attr_get(a, k, &v, &flag);
        CHECK(flag == 1 && (intptr_t)v == rank + 1, "Attr_get: flag %d value %ld", flag,
              (long)(intptr_t)v);
        MPI_Comm_dup(a, &b);
        flag = 0;
        MPI_Attr_get(b, k, &v, &flag);
        CHECK(flag == 1 && (intptr_t)v == rank + 1, "MPI_DUP_FN through dup: flag %d", flag);
        MPI_Attr_delete(b, k);
        CHECK_INT(deletes, 1, "Attr_delete ran the delete callback");
        MPI_Attr_get(b, k, &v, &flag);
        CHECK_INT(flag, 0, "Attr_get after Attr_delete");
        MPI_Comm_free(&b);
        MPI_Comm_free(&a);
        CHECK_INT(deletes, 2, "Comm_free ran the delete callback");
        MPI_Keyval_free(&k);
        CHECK(k == MPI_KEYVAL_INVALID, "Keyval_free did not set MPI_KEYVAL_INVALID");
        MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k, NULL);
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Attr_put(a, k, &deletes);
        MPI_Comm_dup(a, &b);
        MPI_Attr_get(b, k, &v, &flag);
        CHECK_INT(flag, 0, "MPI_NULL_COPY_FN attribute copied");
        MPI_Comm_free(&b);
        MPI_Comm_free(&a);
        MPI_Keyval_free(&k);
    }

    /* ---- 6. predefined attributes ---- */
    {
        int *ub = NULL;
        flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB: flag %d value %d", flag, ub ? *ub : -1);
    }

    /* ---- 7. attributes on the predefined communicators ---- */
    {
        int k, deletes = 0;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete_fn, &k, &deletes);
        MPI_Comm_set_attr(MPI_COMM_WORLD, k, (void *)(intptr_t)7);
        MPI_Comm_set_attr(MPI_COMM_SELF, k, (void *)(intptr_t)8);
        CHECK((intptr_t)get(MPI_COMM_WORLD, k, &flag) == 7 && flag, "attribute on WORLD");
        CHECK((intptr_t)get(MPI_COMM_SELF, k, &flag) == 8 && flag, "attribute on SELF");
        MPI_Comm_delete_attr(MPI_COMM_WORLD, k);
        MPI_Comm_delete_attr(MPI_COMM_SELF, k);
        CHECK_INT(deletes, 2, "deletes on WORLD and SELF");
        MPI_Comm_free_keyval(&k);
    }

    /* ---- 8. a freed keyval still names its attributes; a failing copy ---- */
    {
        int k, saved, deletes = 0;
        void *v = NULL;
        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete_fn, &k, &deletes);
        saved = k;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_set_attr(a, k, (void *)(intptr_t)5);
        MPI_Comm_free_keyval(&k);
        flag = 0;
        MPI_Comm_get_attr(a, saved, &v, &flag);
        CHECK(flag && (intptr_t)v == 5, "get through a freed keyval still in use: flag %d", flag);
        MPI_Comm_delete_attr(a, saved);
        CHECK_INT(deletes, 1, "delete through a freed keyval still in use");
        MPI_Comm_free(&a);

        MPI_Comm_create_keyval(failing_copy_fn, MPI_COMM_NULL_DELETE_FN, &k, NULL);
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
        MPI_Comm_set_attr(a, k, (void *)(intptr_t)1);
        b = MPI_COMM_WORLD;
        int rc = MPI_Comm_dup(a, &b);
        CHECK(rc != MPI_SUCCESS, "dup succeeded although a copy callback failed");
        CHECK(b == MPI_COMM_NULL, "a failed dup did not give MPI_COMM_NULL");
        MPI_Comm_delete_attr(a, k);
        MPI_Comm_free(&a);
        MPI_Comm_free_keyval(&k);
    }

    CHECK_INT(extra_seen_bad, 0, "callbacks given the wrong extra_state");
    return mtest_finalize();
}
