/*
 * bigcount_type.c - the MPI 4.0 large-count type constructors with counts,
 * block lengths, strides and displacements past INT_MAX, kept cheap:
 * - sizes and extents of types of billions of elements (nothing is sent);
 * - data through displacements and strides past INT_MAX, into and out of a
 *   sparse anonymous mapping of which only the pages used are touched;
 * - the envelope and contents of a type made by a _c constructor: its
 *   MPI_Count arguments are large counts (MPI 4.0 5.1.13).
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#include "mtest.h"

#define FAR ((MPI_Count)INT_MAX + 4096 * 5 + 3)
#define SPAN ((size_t)FAR + (size_t)16 * 1024 * 1024)

static unsigned char *g_far;

static void check_envelope(MPI_Datatype t, int comb, MPI_Count ni, MPI_Count nc, MPI_Count nd,
                           const char *what)
{
    MPI_Count gi = -1, ga = -1, gc = -1, gd = -1;
    int gcomb = -1;
    CHECK_MPI(MPI_Type_get_envelope_c(t, &gi, &ga, &gc, &gd, &gcomb));
    CHECK(gcomb == comb && gi == ni && ga == 0 && gc == nc && gd == nd,
          "%s: envelope_c combiner %d, %lld ints, %lld addresses, %lld large counts, %lld types",
          what, gcomb, (long long)gi, (long long)ga, (long long)gc, (long long)gd);
}

/* count elements of t at the start of g_far + off go to this rank and come
 * back as n contiguous bytes: the pattern must match want[]. */
static void through(MPI_Datatype t, MPI_Count off, const unsigned char *want, int n,
                    const char *what)
{
    unsigned char got[64];
    memset(got, 0, sizeof got);
    CHECK_MPI(MPI_Sendrecv(g_far + off, 1, t, 0, 7, got, n, MPI_BYTE, 0, 7, MPI_COMM_SELF,
                           MPI_STATUS_IGNORE));
    CHECK(memcmp(got, want, (size_t)n) == 0, "%s: sent bytes differ", what);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_type");
    int mpich = mtest_is_mpich();
    void *p = mmap(NULL, SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        printf("bigcount_type: SKIP (no %zu bytes of address space)\n", SPAN);
        MPI_Finalize();
        return 77;
    }
    g_far = p;
    const MPI_Count B = 3 * (MPI_Count)INT_MAX + 1; /* billions of elements */
    MPI_Count sz, lb, ext;

    /* Sizes and extents. */
    {
        MPI_Datatype t;
        CHECK_MPI(MPI_Type_contiguous_c(B, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_size_c(t, &sz));
        CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
        CHECK(sz == B && lb == 0 && ext == B, "contiguous_c: size %lld extent %lld", (long long)sz,
              (long long)ext);
        /* A contiguous type with a large count (MPI 4.0 5.1.13), not the
         * struct an MPI 3.1 program would build. */
        check_envelope(t, MPI_COMBINER_CONTIGUOUS, 0, 1, 1, "contiguous_c");
        MPI_Type_free(&t);
        CHECK_MPI(MPI_Type_contiguous_c(5, MPI_BYTE, &t));
        check_envelope(t, MPI_COMBINER_CONTIGUOUS, 0, 1, 1, "contiguous_c of 5");
        MPI_Type_free(&t);

        CHECK_MPI(MPI_Type_vector_c(B, 1, 2, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_size_c(t, &sz));
        CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
        CHECK(sz == B && ext == 2 * B - 1, "vector_c count %lld: size %lld extent %lld",
              (long long)B, (long long)sz, (long long)ext);
        check_envelope(t, MPI_COMBINER_VECTOR, 0, 3, 1, "vector_c");
        MPI_Count c[3] = {0, 0, 0};
        int ints[1];
        MPI_Aint addrs[1];
        MPI_Datatype types[1] = {MPI_DATATYPE_NULL};
        CHECK_MPI(MPI_Type_get_contents_c(t, 0, 0, 3, 1, ints, addrs, c, types));
        CHECK(c[0] == B && c[1] == 1 && c[2] == 2 && types[0] == MPI_BYTE,
              "vector_c contents: %lld %lld %lld", (long long)c[0], (long long)c[1],
              (long long)c[2]);
        if (!mpich) { /* BDMPI: the int forms refuse large counts, naming _c */
            int ni, na, nd, comb, cls = -1;
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            MPI_Error_class(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb), &cls);
            CHECK(cls == MPI_ERR_TYPE, "int envelope of a vector_c: class %d", cls);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        }
        MPI_Type_free(&t);

        MPI_Datatype h;
        CHECK_MPI(MPI_Type_create_hvector_c(2, B, FAR, MPI_BYTE, &h));
        CHECK_MPI(MPI_Type_size_c(h, &sz));
        CHECK_MPI(MPI_Type_get_extent_c(h, &lb, &ext));
        CHECK(sz == 2 * B && ext == FAR + B, "hvector_c blocks of %lld: size %lld extent %lld",
              (long long)B, (long long)sz, (long long)ext);
        check_envelope(h, MPI_COMBINER_HVECTOR, 0, 3, 1, "hvector_c");
        MPI_Type_free(&h);

        MPI_Datatype empty, st, tys[2];
        CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
        MPI_Count bl[2] = {B, 2}, d[2] = {0, FAR};
        tys[0] = empty;
        tys[1] = MPI_INT;
        CHECK_MPI(MPI_Type_create_struct_c(2, bl, d, tys, &st));
        CHECK_MPI(MPI_Type_size_c(st, &sz));
        CHECK_MPI(MPI_Type_get_true_extent_c(st, &lb, &ext));
        /* (MPICH 4.0.2 counts the empty block in the true bounds.) */
        CHECK(sz == 2 * (MPI_Count)sizeof(int) &&
                  ((lb == FAR && ext == 2 * (MPI_Count)sizeof(int)) || mpich),
              "struct_c: size %lld true lb %lld true extent %lld", (long long)sz, (long long)lb,
              (long long)ext);
        check_envelope(st, MPI_COMBINER_STRUCT, 0, 5, 2, "struct_c");
        MPI_Count sc[5];
        MPI_Datatype stys[2];
        CHECK_MPI(MPI_Type_get_contents_c(st, 0, 0, 5, 2, ints, addrs, sc, stys));
        CHECK(sc[0] == 2 && sc[1] == B && sc[2] == 2 && sc[3] == 0 && sc[4] == FAR &&
                  stys[1] == MPI_INT,
              "struct_c contents: %lld %lld %lld %lld %lld", (long long)sc[0], (long long)sc[1],
              (long long)sc[2], (long long)sc[3], (long long)sc[4]);
        MPI_Type_free(&stys[0]); /* a derived type comes back as a new handle */
        MPI_Type_free(&st);
        MPI_Type_free(&empty);
    }

    /* Data through displacements and strides past INT_MAX. */
    {
        unsigned char want[16];
        for (int i = 0; i < 16; i++)
            want[i] = (unsigned char)(i * 13 + 1);
        /* indexed_c: 4 bytes at 0, 4 at FAR (in extents of MPI_BYTE). */
        memcpy(g_far, want, 4);
        memcpy(g_far + FAR, want + 4, 4);
        MPI_Datatype t;
        MPI_Count bl[2] = {4, 4}, d[2] = {0, FAR};
        CHECK_MPI(MPI_Type_indexed_c(2, bl, d, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        through(t, 0, want, 8, "indexed_c");
        check_envelope(t, MPI_COMBINER_INDEXED, 0, 5, 1, "indexed_c");
        MPI_Type_free(&t);

        /* vector_c: 2 blocks of 3 shorts, FAR/2 shorts apart. */
        MPI_Count half = FAR / 2;
        memcpy(g_far, want, 6);
        memcpy(g_far + 2 * half, want + 6, 6);
        CHECK_MPI(MPI_Type_vector_c(2, 3, half, MPI_SHORT, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        through(t, 0, want, 12, "vector_c stride past INT_MAX");
        MPI_Type_free(&t);

        /* indexed_block_c and hindexed_block_c, the later block first. */
        memcpy(g_far + FAR, want, 5);
        memcpy(g_far + 7, want + 5, 5);
        MPI_Count d2[2] = {FAR, 7};
        CHECK_MPI(MPI_Type_create_indexed_block_c(2, 5, d2, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        through(t, 0, want, 10, "indexed_block_c");
        check_envelope(t, MPI_COMBINER_INDEXED_BLOCK, 0, 4, 1, "indexed_block_c");
        MPI_Type_free(&t);
        CHECK_MPI(MPI_Type_create_hindexed_block_c(2, 5, d2, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        through(t, 0, want, 10, "hindexed_block_c");
        MPI_Type_free(&t);
        MPI_Count bl3[2] = {5, 5};
        CHECK_MPI(MPI_Type_create_hindexed_c(2, bl3, d2, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        through(t, 0, want, 10, "hindexed_c");
        check_envelope(t, MPI_COMBINER_HINDEXED, 0, 5, 1, "hindexed_c");
        MPI_Type_free(&t);

        /* Received into a type whose second block is past INT_MAX. */
        memset(g_far + FAR, 0, 8);
        CHECK_MPI(MPI_Type_indexed_c(2, bl, d, MPI_BYTE, &t));
        CHECK_MPI(MPI_Type_commit(&t));
        CHECK_MPI(MPI_Sendrecv(want, 8, MPI_BYTE, 0, 8, g_far, 1, t, 0, 8, MPI_COMM_SELF,
                               MPI_STATUS_IGNORE));
        CHECK(memcmp(g_far, want, 4) == 0 && memcmp(g_far + FAR, want + 4, 4) == 0,
              "received into indexed_c");
        MPI_Type_free(&t);
    }

    /* Subarray, darray and resized: large-count contents. */
    {
        MPI_Datatype t;
        MPI_Count sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
        CHECK_MPI(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
        CHECK_MPI(MPI_Type_size_c(t, &sz));
        CHECK(sz == 6 * (MPI_Count)sizeof(int), "subarray_c size %lld", (long long)sz);
        check_envelope(t, MPI_COMBINER_SUBARRAY, 2, 6, 1, "subarray_c");
        MPI_Type_free(&t);
        MPI_Count gs[1] = {10};
        int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
        CHECK_MPI(MPI_Type_create_darray_c(2, 1, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
        CHECK_MPI(MPI_Type_size_c(t, &sz));
        CHECK(sz == 5 * (MPI_Count)sizeof(int), "darray_c size %lld", (long long)sz);
        check_envelope(t, MPI_COMBINER_DARRAY, 7, 1, 1, "darray_c");
        MPI_Type_free(&t);
        CHECK_MPI(MPI_Type_create_resized_c(MPI_INT, 0, FAR, &t));
        CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &ext));
        CHECK(ext == FAR, "resized_c extent %lld", (long long)ext);
        check_envelope(t, MPI_COMBINER_RESIZED, 0, 2, 1, "resized_c");
        MPI_Type_free(&t);
    }

    munmap(p, SPAN);
    return mtest_finalize();
}
