/*
 * info_misc: info objects, MPI_Alloc_mem, buffered sends and a few
 * communicator calls that take infos.
 *
 *  1. MPI_Info_create / set / get (also truncated to valuelen) /
 *     get_valuelen / get_nkeys / get_nthkey / delete / dup / free; setting
 *     a key again replaces its value; a duplicate is independent;
 *     Info_free sets MPI_INFO_NULL; deleting a missing key is
 *     MPI_ERR_INFO_NOKEY, an empty or too long key MPI_ERR_INFO_KEY.
 *  2. MPI_Comm_set_info / MPI_Comm_get_info (the result is a valid info
 *     the caller frees), MPI_Comm_dup_with_info (congruent),
 *     MPI_Comm_split_type with MPI_INFO_NULL.
 *  3. MPI_Alloc_mem / MPI_Free_mem (with and without an info), the memory
 *     is usable as a communication buffer.
 *  4. MPI_Buffer_attach, MPI_Bsend and MPI_Ibsend around a ring, messages
 *     arrive in order; MPI_Buffer_detach returns the attached buffer.
 *  5. MPI_Test_cancelled is false for a completed receive.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, right, left, flag, n, len, i, res;
    MPI_Info info, dup;
    char val[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];

    mtest_init(&argc, &argv, "info_misc");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    /* ---- 1. info objects ---- */
    MPI_Info_create(&info);
    MPI_Info_get_nkeys(info, &n);
    CHECK_INT(n, 0, "keys of a new info");
    MPI_Info_set(info, "alpha", "one");
    MPI_Info_set(info, "beta", "second value");
    MPI_Info_set(info, "alpha", "uno"); /* replaces */
    MPI_Info_get_nkeys(info, &n);
    CHECK_INT(n, 2, "keys after three sets of two keys");
    flag = 0;
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && !strcmp(val, "uno"), "Info_get(alpha): flag %d value '%s'", flag, val);
    flag = -1;
    MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, val, &flag);
    CHECK_INT(flag, 0, "Info_get of a missing key");
    len = -1;
    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK(flag && len == 12, "Info_get_valuelen(beta): flag %d len %d", flag, len);
    if (mtest_is_mpich()) {
        /* MPICH 4.0 returns an error ("Value is too long") where MPI 3.1
         * 9.2 says the value is truncated.  Excused for MPICH only. */
        if (rank == 0)
            fprintf(stderr, "info_misc: MPICH: truncated Info_get not checked\n");
    } else {
        memset(val, 'x', sizeof val);
        MPI_Info_get(info, "beta", 6, val, &flag);
        CHECK(flag && !strcmp(val, "second"), "Info_get truncated to 6: '%s'", val);
    }
    {
        int seen_a = 0, seen_b = 0;
        for (i = 0; i < 2; i++) {
            key[0] = 0;
            MPI_Info_get_nthkey(info, i, key);
            seen_a += !strcmp(key, "alpha");
            seen_b += !strcmp(key, "beta");
        }
        CHECK(seen_a == 1 && seen_b == 1, "Info_get_nthkey did not give alpha and beta");
    }
    MPI_Info_dup(info, &dup);
    MPI_Info_delete(info, "alpha");
    MPI_Info_get_nkeys(info, &n);
    CHECK_INT(n, 1, "keys after Info_delete");
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK_INT(flag, 0, "deleted key still there");
    MPI_Info_get(dup, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && !strcmp(val, "uno"), "duplicate lost a key deleted from the original");
    MPI_Info_get_nkeys(dup, &n);
    CHECK_INT(n, 2, "keys of the duplicate");
    MPI_Info_free(&dup);
    /* The info error classes (MPI 3.1 9.1): deleting a key that is not
     * there, an empty key, a key longer than MPI_MAX_INFO_KEY. */
    {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        char longkey[MPI_MAX_INFO_KEY + 2];
        memset(longkey, 'k', sizeof longkey - 1);
        longkey[sizeof longkey - 1] = 0;
        int c1 = mtest_class(MPI_Info_delete(info, "no-such-key"));
        int c2 = mtest_class(MPI_Info_set(info, "", "v"));
        int c3 = mtest_class(MPI_Info_set(info, longkey, "v"));
        CHECK(c1 == MPI_ERR_INFO_NOKEY, "Info_delete of a missing key: class %d", c1);
        CHECK(c2 == MPI_ERR_INFO_KEY, "Info_set of an empty key: class %d", c2);
        CHECK(c3 == MPI_ERR_INFO_KEY, "Info_set of a %d-character key: class %d",
              MPI_MAX_INFO_KEY + 1, c3);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    }
    CHECK(dup == MPI_INFO_NULL, "Info_free did not set MPI_INFO_NULL");

    /* ---- 2. communicators and infos ---- */
    {
        MPI_Comm c;
        MPI_Info used = MPI_INFO_NULL;
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
        MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
        CHECK_INT(res, MPI_CONGRUENT, "Comm_dup_with_info vs WORLD");
        MPI_Comm_set_info(c, info);
        MPI_Comm_get_info(c, &used);
        CHECK(used != MPI_INFO_NULL, "Comm_get_info gave MPI_INFO_NULL");
        if (used != MPI_INFO_NULL) {
            MPI_Info_get_nkeys(used, &n);
            CHECK(n >= 0, "Comm_get_info: %d keys", n);
            MPI_Info_free(&used);
        }
        {
            int s = 0, one = 1;
            MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, c);
            CHECK_INT(s, size, "Allreduce on Comm_dup_with_info");
        }
        MPI_Comm_free(&c);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c);
        CHECK(c != MPI_COMM_NULL, "split_type with MPI_INFO_NULL gave MPI_COMM_NULL");
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }
    MPI_Info_free(&info);

    /* ---- 3. Alloc_mem ---- */
    {
        int *a = NULL, *b = NULL, in = -1;
        MPI_Info hint;
        MPI_Alloc_mem(1000 * sizeof(int), MPI_INFO_NULL, &a);
        CHECK(a != NULL, "Alloc_mem gave NULL");
        MPI_Info_create(&hint);
        MPI_Info_set(hint, "alloc_shared_noncontig", "true");
        MPI_Alloc_mem(4 << 20, hint, &b);
        MPI_Info_free(&hint);
        CHECK(b != NULL, "Alloc_mem of 4 MiB gave NULL");
        if (a && b) {
            for (i = 0; i < 1000; i++)
                a[i] = rank + i;
            memset(b, 0, 4 << 20);
            b[(1 << 20) - 1] = rank;
            MPI_Sendrecv(a, 1000, MPI_INT, right, 1, b, 1000, MPI_INT, left, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            for (i = 0; i < 1000; i++)
                if (b[i] != left + i) {
                    CHECK(0, "Alloc_mem buffer: b[%d] = %d", i, b[i]);
                    break;
                }
            in = b[(1 << 20) - 1];
            CHECK_INT(in, rank, "end of the 4 MiB Alloc_mem buffer");
        }
        MPI_Free_mem(a);
        MPI_Free_mem(b);
    }

    /* ---- 4. buffered sends ---- */
    {
        enum { NMSG = 4, COUNT = 100 };
        int bufsize = NMSG * (COUNT * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
        char *buf = malloc((size_t)bufsize);
        int out[NMSG][COUNT], in[COUNT], *det = NULL, detsize = -1, j;
        MPI_Request r;
        MPI_Buffer_attach(buf, bufsize);
        for (i = 0; i < NMSG; i++) {
            for (j = 0; j < COUNT; j++)
                out[i][j] = rank * 1000 + i * 10 + j;
            if (i % 2) {
                MPI_Ibsend(out[i], COUNT, MPI_INT, right, 5, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else {
                MPI_Bsend(out[i], COUNT, MPI_INT, right, 5, MPI_COMM_WORLD);
            }
        }
        for (i = 0; i < NMSG; i++) {
            MPI_Status st;
            MPI_Recv(in, COUNT, MPI_INT, left, 5, MPI_COMM_WORLD, &st);
            for (j = 0; j < COUNT; j++)
                if (in[j] != left * 1000 + i * 10 + j) {
                    CHECK(0, "buffered message %d: in[%d] = %d", i, j, in[j]);
                    break;
                }
            /* ---- 5. not cancelled ---- */
            flag = -1;
            MPI_Test_cancelled(&st, &flag);
            CHECK_INT(flag, 0, "Test_cancelled of a received message");
        }
        MPI_Buffer_detach(&det, &detsize);
        CHECK((char *)det == buf && detsize == bufsize, "Buffer_detach gave %p/%d, attached %p/%d",
              (void *)det, detsize, (void *)buf, bufsize);
        free(buf);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mtest_finalize();
}
