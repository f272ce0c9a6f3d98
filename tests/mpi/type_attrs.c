/*
 * type_attrs: datatype attributes, names and hindexed_block (MPI 3.1
 * 6.7.4, 6.8, 4.1.2).
 *
 *  1. A keyval with copy and delete callbacks: set/get on a derived type;
 *     MPI_Type_dup runs the copy callback (the duplicate gets its value);
 *     setting again runs delete on the old value; MPI_Type_delete_attr and
 *     MPI_Type_free run delete exactly once per attribute; extra_state is
 *     passed through.
 *  2. MPI_TYPE_NULL_COPY_FN (not copied) and MPI_TYPE_DUP_FN (copied as is).
 *  3. Attributes on a predefined type (MPI_INT).
 *  4. A keyval freed while attached: the attribute stays until its type is
 *     freed, and its delete callback still runs.
 *  5. Type names: the predefined name of MPI_INT, set and get on a derived
 *     type.
 *  6. MPI_Type_create_hindexed_block: size, extent and a round trip.
 *  7. Errors (MPI_ERRORS_RETURN): get_attr with MPI_KEYVAL_INVALID,
 *     set_attr on MPI_DATATYPE_NULL.
 *  8. A delete callback that frees its own keyval, and the program freeing
 *     it again (copies of the handle) while another type still holds an
 *     attribute: every free succeeds, the last attribute's delete runs.
 */
#include "mtest.h"

static int ncopy, ndelete, extra_seen;
static int last_deleted;

static int copy_fn(MPI_Datatype old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)key;
    if (extra == &extra_seen)
        extra_seen++;
    ncopy++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)extra;
    ndelete++;
    last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}

static int self_frees;

static int delete_frees_key(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)val, (void)extra;
    self_frees++;
    return MPI_Type_free_keyval(&key);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_attrs");
    int key, flag;
    void *val;
    MPI_Datatype v, d;

    /* 1. */
    MPI_Type_vector(3, 1, 2, MPI_INT, &v);
    CHECK_MPI(MPI_Type_create_keyval(copy_fn, delete_fn, &key, &extra_seen));
    CHECK_MPI(MPI_Type_set_attr(v, key, (void *)(intptr_t)10));
    flag = 0;
    CHECK_MPI(MPI_Type_get_attr(v, key, &val, &flag));
    CHECK(flag && (intptr_t)val == 10, "get_attr: flag %d value %ld", flag, (long)(intptr_t)val);
    CHECK_MPI(MPI_Type_dup(v, &d));
    CHECK_INT(ncopy, 1, "copy callbacks after Type_dup");
    CHECK(extra_seen == 1, "extra_state not passed to the copy callback");
    flag = 0;
    MPI_Type_get_attr(d, key, &val, &flag);
    CHECK(flag && (intptr_t)val == 11, "duplicate's attribute: flag %d value %ld", flag,
          (long)(intptr_t)val);
    CHECK_MPI(MPI_Type_set_attr(v, key, (void *)(intptr_t)20));
    CHECK(ndelete == 1 && last_deleted == 10, "replacing: %d deletes, last %d", ndelete,
          last_deleted);
    CHECK_MPI(MPI_Type_delete_attr(v, key));
    CHECK(ndelete == 2 && last_deleted == 20, "delete_attr: %d deletes, last %d", ndelete,
          last_deleted);
    flag = 1;
    MPI_Type_get_attr(v, key, &val, &flag);
    CHECK(!flag, "attribute still there after delete_attr");
    CHECK_MPI(MPI_Type_free(&d));
    CHECK(ndelete == 3 && last_deleted == 11, "Type_free: %d deletes, last %d", ndelete,
          last_deleted);

    /* 2. */
    int knull, kdup;
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &knull, NULL);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL);
    MPI_Type_set_attr(v, knull, (void *)(intptr_t)5);
    MPI_Type_set_attr(v, kdup, (void *)(intptr_t)6);
    MPI_Type_dup(v, &d);
    flag = 1;
    MPI_Type_get_attr(d, knull, &val, &flag);
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN copied the attribute");
    flag = 0;
    MPI_Type_get_attr(d, kdup, &val, &flag);
    CHECK(flag && (intptr_t)val == 6, "MPI_TYPE_DUP_FN: flag %d value %ld", flag,
          (long)(intptr_t)val);
    MPI_Type_free(&d);
    MPI_Type_free_keyval(&knull);
    MPI_Type_free_keyval(&kdup);
    CHECK(knull == MPI_KEYVAL_INVALID, "freed keyval not set to MPI_KEYVAL_INVALID");

    /* 3. */
    CHECK_MPI(MPI_Type_set_attr(MPI_INT, key, (void *)(intptr_t)30));
    flag = 0;
    MPI_Type_get_attr(MPI_INT, key, &val, &flag);
    CHECK(flag && (intptr_t)val == 30, "attribute on MPI_INT: flag %d", flag);
    MPI_Type_delete_attr(MPI_INT, key);
    CHECK(last_deleted == 30, "delete on MPI_INT's attribute");

    /* 4. */
    int before = ndelete;
    MPI_Type_set_attr(v, key, (void *)(intptr_t)40);
    CHECK_MPI(MPI_Type_free_keyval(&key));
    CHECK_MPI(MPI_Type_free(&v));
    CHECK(ndelete == before + 1 && last_deleted == 40,
          "freed keyval: delete callback ran %d times, last %d", ndelete - before, last_deleted);

    /* 5. */
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        MPI_Type_get_name(MPI_INT, name, &len);
        CHECK(!strcmp(name, "MPI_INT") && len == 7, "name of MPI_INT: \"%s\" (%d)", name, len);
        MPI_Type_contiguous(2, MPI_DOUBLE, &d);
        MPI_Type_set_name(d, "pair of doubles");
        MPI_Type_get_name(d, name, &len);
        CHECK(!strcmp(name, "pair of doubles") && len == 15, "name \"%s\" (%d)", name, len);
        MPI_Type_free(&d);
    }

    /* 6. */
    {
        MPI_Aint disp[3] = {0, 5 * sizeof(int), 2 * sizeof(int)}, lb, ext;
        int sz, a[8], b[8], i, pos = 0;
        char pk[64];
        CHECK_MPI(MPI_Type_create_hindexed_block(3, 2, disp, MPI_INT, &d));
        MPI_Type_commit(&d);
        MPI_Type_size(d, &sz);
        MPI_Type_get_extent(d, &lb, &ext);
        CHECK_INT(sz, 6 * (int)sizeof(int), "hindexed_block size");
        CHECK(lb == 0 && ext == 7 * (MPI_Aint)sizeof(int), "hindexed_block lb %ld extent %ld",
              (long)lb, (long)ext);
        for (i = 0; i < 8; i++) {
            a[i] = i;
            b[i] = -1;
        }
        MPI_Pack(a, 1, d, pk, sizeof pk, &pos, MPI_COMM_WORLD);
        int want[6] = {0, 1, 5, 6, 2, 3};
        for (i = 0; i < 6; i++)
            CHECK(((int *)pk)[i] == want[i], "hindexed_block packed %d = %d", i, ((int *)pk)[i]);
        pos = 0;
        MPI_Unpack(pk, sizeof pk, &pos, b, 1, d, MPI_COMM_WORLD);
        for (i = 0; i < 7; i++)
            CHECK(b[i] == (i == 4 ? -1 : i), "hindexed_block unpacked %d = %d", i, b[i]);
        MPI_Type_free(&d);
    }

    /* 7. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int k2, rc;
        rc = MPI_Type_get_attr(MPI_INT, MPI_KEYVAL_INVALID, &val, &flag);
        CHECK(rc != MPI_SUCCESS, "get_attr with MPI_KEYVAL_INVALID succeeded");
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k2, NULL);
        rc = MPI_Type_set_attr(MPI_DATATYPE_NULL, k2, NULL);
        CHECK(rc != MPI_SUCCESS, "set_attr on MPI_DATATYPE_NULL succeeded");
        MPI_Type_free_keyval(&k2);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* 8. */
    {
        MPI_Datatype t1, t2;
        int k, kcopy;
        CHECK_MPI(MPI_Type_dup(MPI_INT, &t1));
        CHECK_MPI(MPI_Type_dup(MPI_INT, &t2));
        CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_frees_key, &k, NULL));
        kcopy = k;
        CHECK_MPI(MPI_Type_set_attr(t1, k, NULL));
        CHECK_MPI(MPI_Type_set_attr(t2, k, NULL));
        CHECK_MPI(MPI_Type_free(&t1)); /* the callback frees the keyval */
        CHECK_MPI(MPI_Type_free_keyval(&k));
        CHECK(k == MPI_KEYVAL_INVALID, "freed keyval handle not reset");
        CHECK_MPI(MPI_Type_free_keyval(&kcopy));
        CHECK_MPI(MPI_Type_free(&t2)); /* and again */
        CHECK_INT(self_frees, 2, "delete callbacks that free their keyval");
    }
    return mtest_finalize();
}
