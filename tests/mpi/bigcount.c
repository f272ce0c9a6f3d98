/*
 * bigcount.c - the MPI 4.0 large-count ("_c") forms: point-to-point with
 * MPI_Get_count_c, the type queries, v-collectives with MPI_Count counts and
 * MPI_Aint displacements (blocking, nonblocking, persistent), type
 * constructors (MPI_Type_contiguous_c past INT_MAX) and packing,
 * MPI_Op_create_c, the type envelope and
 * contents, a shared window's allocation and query, a file's type extent, a
 * data representation registered with MPI_Register_datarep_c, and a
 * struct whose block length is past INT_MAX (test bigcount_type has more).
 */
#include <limits.h>

#include "mtest.h"

/* A large-count user operation: the maximum of long longs. */
static int big_calls;
static void big_max(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    big_calls++;
    for (MPI_Count i = 0; i < *len; i++)
        if (((long long *)in)[i] > ((long long *)inout)[i])
            ((long long *)inout)[i] = ((long long *)in)[i];
}

/* The "bigcount_neg" representation: ints stored negated. */
static int neg_calls;
static int neg_read(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                    MPI_Offset position, void *extra)
{
    (void)dt, (void)extra;
    neg_calls++;
    for (MPI_Count i = 0; i < count; i++)
        ((int *)userbuf)[position + i] = -((int *)filebuf)[i];
    return MPI_SUCCESS;
}
static int neg_write(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf,
                     MPI_Offset position, void *extra)
{
    (void)dt, (void)extra;
    neg_calls++;
    for (MPI_Count i = 0; i < count; i++)
        ((int *)filebuf)[i] = -((int *)userbuf)[position + i];
    return MPI_SUCCESS;
}
static int neg_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(dt, &lb, extent);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount");
    int rank = mtest_rank_, size = mtest_size_;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Point-to-point and the status. */
    {
        double out[7], in[7];
        for (int i = 0; i < 7; i++)
            out[i] = rank + i * 0.5, in[i] = -1;
        MPI_Request r;
        MPI_Status st;
        MPI_Irecv_c(in, (MPI_Count)7, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r);
        MPI_Send_c(out, (MPI_Count)7, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
        MPI_Wait(&r, &st);
        MPI_Count n = -1;
        MPI_Get_count_c(&st, MPI_DOUBLE, &n);
        CHECK(n == 7, "MPI_Get_count_c %lld", (long long)n);
        MPI_Get_elements_c(&st, MPI_DOUBLE, &n);
        CHECK(n == 7, "MPI_Get_elements_c %lld", (long long)n);
        for (int i = 0; i < 7; i++)
            CHECK(in[i] == left + i * 0.5, "recv [%d] %g", i, in[i]);
        MPI_Count sz, lb, ext;
        MPI_Type_size_c(MPI_DOUBLE, &sz);
        MPI_Type_get_extent_c(MPI_DOUBLE, &lb, &ext);
        CHECK(sz == (MPI_Count)sizeof(double) && lb == 0 && ext == sz, "double: %lld %lld %lld",
              (long long)sz, (long long)lb, (long long)ext);
    }

    /* Collectives. */
    {
        int *all = malloc(sizeof(int) * (size_t)size * 2), *a2a = malloc(sizeof(int) * size);
        int *sb = malloc(sizeof(int) * size);
        MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
        MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size);
        for (int i = 0; i < size; i++) {
            counts[i] = 1;
            displs[i] = 2 * i; /* every other slot */
            sb[i] = rank * 100 + i;
            all[2 * i] = all[2 * i + 1] = -1;
        }
        int mine = rank * 3, b = rank == 0 ? 77 : 0, sum = 0;
        MPI_Bcast_c(&b, (MPI_Count)1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(b == 77, "MPI_Bcast_c got %d", b);
        MPI_Allreduce_c(&mine, &sum, (MPI_Count)1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == 3 * size * (size - 1) / 2, "MPI_Allreduce_c got %d", sum);
        MPI_Allgatherv_c(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++)
            CHECK(all[2 * i] == 3 * i && all[2 * i + 1] == -1, "MPI_Allgatherv_c [%d] %d %d", i,
                  all[2 * i], all[2 * i + 1]);
        MPI_Aint *d1 = malloc(sizeof(MPI_Aint) * size);
        for (int i = 0; i < size; i++)
            d1[i] = i;
        MPI_Request r;
        MPI_Ialltoallv_c(sb, counts, d1, MPI_INT, a2a, counts, d1, MPI_INT, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        for (int i = 0; i < size; i++)
            CHECK(a2a[i] == i * 100 + rank, "MPI_Ialltoallv_c [%d] %d", i, a2a[i]);
        int pb = -1;
        MPI_Bcast_init_c(&pb, (MPI_Count)1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        for (int it = 0; it < 2; it++) {
            if (rank == size - 1)
                pb = 10 + it;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(pb == 10 + it, "MPI_Bcast_init_c round %d got %d", it, pb);
        }
        MPI_Request_free(&r);
        /* A persistent v form (the counts are the request's to keep). */
        MPI_Allgatherv_init_c(&mine, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &r);
        for (int it = 0; it < 2; it++) {
            mine = rank * 5 + it;
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            for (int i = 0; i < size; i++)
                CHECK(all[2 * i] == i * 5 + it, "MPI_Allgatherv_init_c round %d [%d] %d", it, i,
                      all[2 * i]);
        }
        MPI_Request_free(&r);
        free(all), free(a2a), free(sb), free(counts), free(displs), free(d1);
    }

    /* Type constructors and packing. */
    {
        MPI_Datatype vec, st;
        MPI_Type_vector_c(3, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Count sz, lb, ext;
        MPI_Type_size_c(vec, &sz);
        MPI_Type_get_extent_c(vec, &lb, &ext);
        CHECK(sz == 3 * (MPI_Count)sizeof(int), "vector size %lld", (long long)sz);
        CHECK(ext == 5 * (MPI_Count)sizeof(int), "vector extent %lld", (long long)ext);
        MPI_Count bl[2] = {1, 2}, disp[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_INT};
        MPI_Type_create_struct_c(2, bl, disp, types, &st);
        MPI_Type_commit(&st);
        MPI_Type_size_c(st, &sz);
        CHECK(sz == 3 * (MPI_Count)sizeof(int), "struct size %lld", (long long)sz);

        int src[5] = {1, 2, 3, 4, 5}, dst[5] = {0, 0, 0, 0, 0};
        char pack[64];
        MPI_Count need = 0, pos = 0;
        MPI_Pack_size_c(1, vec, MPI_COMM_WORLD, &need);
        CHECK(need >= 3 * (MPI_Count)sizeof(int) && need <= 64, "pack size %lld", (long long)need);
        MPI_Pack_c(src, 1, vec, pack, (MPI_Count)sizeof pack, &pos, MPI_COMM_WORLD);
        CHECK(pos == 3 * (MPI_Count)sizeof(int), "pack position %lld", (long long)pos);
        MPI_Count end = pos;
        pos = 0;
        MPI_Unpack_c(pack, end, &pos, dst, 3, MPI_INT, MPI_COMM_WORLD);
        CHECK(dst[0] == 1 && dst[1] == 3 && dst[2] == 5, "unpacked %d %d %d", dst[0], dst[1],
              dst[2]);
        MPI_Type_free(&vec);
        MPI_Type_free(&st);
    }

    /* MPI_Op_create_c: the function gets an MPI_Count length. */
    {
        long long in[5], out[5];
        for (int i = 0; i < 5; i++)
            in[i] = rank * 10 + i;
        MPI_Op op;
        CHECK_MPI(MPI_Op_create_c(big_max, 1, &op));
        CHECK_MPI(MPI_Allreduce_c(in, out, (MPI_Count)5, MPI_LONG_LONG, op, MPI_COMM_WORLD));
        for (int i = 0; i < 5; i++)
            CHECK(out[i] == (size - 1) * 10 + i, "MPI_Op_create_c max [%d] = %lld", i, out[i]);
        int commute = 0;
        MPI_Op_commutative(op, &commute);
        CHECK(commute, "MPI_Op_create_c op not commutative");
        big_calls = 0;
        MPI_Reduce_local_c(in, out, (MPI_Count)5, MPI_LONG_LONG, op);
        CHECK(out[4] == (size - 1) * 10 + 4 && big_calls == 1,
              "MPI_Reduce_local_c: %lld, %d calls of the function", out[4], big_calls);
        CHECK_MPI(MPI_Op_free(&op));
    }

    /* A contiguous type of more than INT_MAX bytes (nothing is sent). */
    {
        MPI_Count n = (MPI_Count)INT_MAX + INT_MAX / 1024, sz = -1, lb = -1, ext = -1;
        MPI_Datatype big;
        CHECK_MPI(MPI_Type_contiguous_c(n, MPI_BYTE, &big));
        CHECK_MPI(MPI_Type_size_c(big, &sz));
        CHECK_MPI(MPI_Type_get_extent_c(big, &lb, &ext));
        CHECK(sz == n && lb == 0 && ext == n, "contiguous_c of %lld bytes: size %lld extent %lld",
              (long long)n, (long long)sz, (long long)ext);
        MPI_Type_free(&big);
    }

    /* The envelope and contents of a vector, and a shared window's query. */
    {
        MPI_Datatype vec;
        MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
        MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
        int comb = -1;
        CHECK_MPI(MPI_Type_get_envelope_c(vec, &ni, &na, &nl, &nd, &comb));
        CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nl == 0 && nd == 1,
              "envelope_c of a vector: combiner %d, %lld %lld %lld %lld", comb, (long long)ni,
              (long long)na, (long long)nl, (long long)nd);
        int ints[3] = {0, 0, 0};
        MPI_Aint addrs[1];
        MPI_Count larges[1];
        MPI_Datatype types[1] = {MPI_DATATYPE_NULL};
        CHECK_MPI(MPI_Type_get_contents_c(vec, ni, na, nl, nd, ints, addrs, larges, types));
        CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT,
              "contents_c of a vector: %d %d %d", ints[0], ints[1], ints[2]);
        MPI_Type_free(&vec);

        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        int *base = NULL;
        MPI_Win win;
        CHECK_MPI(MPI_Win_allocate_shared_c((MPI_Aint)(4 * sizeof(int)), (MPI_Aint)sizeof(int),
                                            MPI_INFO_NULL, node, &base, &win));
        MPI_Aint qsize = -1, qunit = -1;
        int *qbase = NULL;
        CHECK_MPI(MPI_Win_shared_query_c(win, 0, &qsize, &qunit, &qbase));
        CHECK(qsize == (MPI_Aint)(4 * sizeof(int)) && qunit == (MPI_Aint)sizeof(int) && qbase,
              "Win_shared_query_c: size %ld unit %ld", (long)qsize, (long)qunit);
        MPI_Win_free(&win);
        MPI_Comm_free(&node);
    }

    /* MPI_File_get_type_extent_c in the native representation. */
    {
        char name[512];
        mtest_tmpname(name, sizeof name, "bigcount", MPI_COMM_WORLD);
        MPI_File fh;
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name,
                                MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh));
        MPI_Count ext = -1;
        CHECK_MPI(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &ext));
        CHECK(ext == (MPI_Count)sizeof(double), "File_get_type_extent_c: %lld", (long long)ext);
        /* A representation registered with MPI_Register_datarep_c: ints
         * stored negated.  Each rank writes 4 at its own place and reads
         * them back through the view, and raw through "native".  (MPICH's
         * ROMIO in Debian's build does not support user representations:
         * see io_view.) */
        if (!mtest_is_mpich()) {
            static int registered;
            if (!registered++)
                CHECK_MPI(
                    MPI_Register_datarep_c("bigcount_neg", neg_read, neg_write, neg_extent, NULL));
            CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "bigcount_neg", MPI_INFO_NULL));
            int w[4] = {rank + 1, rank + 2, rank + 3, rank + 4}, r[4] = {0, 0, 0, 0};
            CHECK_MPI(
                MPI_File_write_at_all_c(fh, 4 * rank, w, (MPI_Count)4, MPI_INT, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_File_sync(fh));
            MPI_Barrier(MPI_COMM_WORLD);
            CHECK_MPI(
                MPI_File_read_at_all_c(fh, 4 * rank, r, (MPI_Count)4, MPI_INT, MPI_STATUS_IGNORE));
            CHECK(r[0] == rank + 1 && r[3] == rank + 4 && neg_calls > 0,
                  "through bigcount_neg: %d %d, %d conversions", r[0], r[3], neg_calls);
            CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
            CHECK_MPI(MPI_File_read_at(fh, 4 * rank, r, 4, MPI_INT, MPI_STATUS_IGNORE));
            CHECK(r[0] == -(rank + 1) && r[3] == -(rank + 4), "stored: %d %d", r[0], r[3]);
        }
        CHECK_MPI(MPI_File_close(&fh));
    }

    /* A type constructor's array entry past INT_MAX builds the type. */
    {
        MPI_Count big[1] = {(MPI_Count)INT_MAX + 7}, sz = -1;
        MPI_Count d0[1] = {0};
        MPI_Datatype t = MPI_DATATYPE_NULL, ty[1] = {MPI_BYTE};
        CHECK_MPI(MPI_Type_create_struct_c(1, big, d0, ty, &t));
        CHECK_MPI(MPI_Type_size_c(t, &sz));
        CHECK(sz == big[0], "struct of 2^31+7 bytes: size %lld", (long long)sz);
        MPI_Type_free(&t);
        /* Messages still flow. */
        int v = rank, got = -1;
        MPI_Sendrecv(&v, 1, MPI_INT, right, 2, &got, 1, MPI_INT, left, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        CHECK(got == left, "after the large type: got %d", got);
    }

    return mtest_finalize();
}
