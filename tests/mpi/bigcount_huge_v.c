/* Large counts past INT_MAX with real data, in the calls whose ARRAYS hold
 * them: an MPI_Gatherv_c whose block from rank 1 is 2 GiB + 4 KiB of
 * MPI_BYTE (a receive count past INT_MAX at the root, a send count past
 * INT_MAX at rank 1), bytes checked at sampled places; then, at the root,
 * MPI_Reduce_local_c of as many bytes with an int user function (called in
 * pieces of at most INT_MAX elements that must cover the whole buffer);
 * then the block again from rank 0 to rank 1 by an MPI_Scatterv_c on an
 * intercommunicator.
 *
 * It needs about 2.2 GB at rank 1 and 4.4 GB at rank 0, so it runs only
 * with BDMPI_TEST_HUGE=1 (the slow label sets it); otherwise it exits 77. */
#include <limits.h>

#include "mtest.h"

#define N ((MPI_Count)INT_MAX + 4096)

static unsigned char pat(MPI_Count i, int seed) { return (unsigned char)((i * 131 + seed) >> 3); }

static long long g_elems;
static int g_calls, g_over;

/* inout += in, byte-wise; counts what it was given. */
static void add(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    g_calls++;
    g_elems += *len;
    if (*len > INT_MAX || *len < 0)
        g_over++;
    unsigned char *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (unsigned char)(b[i] + a[i]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_huge_v");
    const char *e = getenv("BDMPI_TEST_HUGE");
    if (!e || strcmp(e, "1") != 0 || mtest_size_ < 2) {
        if (mtest_rank_ == 0)
            printf("SKIP %s: set BDMPI_TEST_HUGE=1 and run 2 ranks or more (about 4.4 GB)\n",
                   mtest_name_);
        MPI_Finalize();
        return 77;
    }
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Count *cnt = calloc((size_t)size, sizeof *cnt);
    MPI_Aint *dsp = calloc((size_t)size, sizeof *dsp);
    cnt[0] = 16;
    cnt[1] = N;
    dsp[1] = 16;
    unsigned char *b = NULL, small[16];
    if (rank <= 1) {
        b = calloc((size_t)N + 16, 1);
        if (!b)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 16; i++)
        small[i] = (unsigned char)(200 + i);
    if (rank == 1) /* its block: the pattern every 4093 bytes */
        for (MPI_Count i = 0; i < N; i += 4093)
            b[i] = pat(i, 1);
    const void *sb = rank == 1 ? (const void *)b : small;
    CHECK_MPI(MPI_Gatherv_c(sb, cnt[rank], MPI_BYTE, b, cnt, dsp, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        int ok = memcmp(b, small, 16) == 0;
        for (MPI_Count i = 0; ok && i < N; i += 4093)
            ok = b[16 + i] == pat(i, 1) && b[16 + i + 1] == 0;
        CHECK(ok, "the 2 GiB block of MPI_Gatherv_c arrived wrong");
    }
    if (rank == 1) {
        free(b);
        b = NULL;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !mtest_is_mpich()) { /* MPICH 4.0.2 asserts count <= INT_MAX here */
        unsigned char *in = calloc((size_t)N, 1);
        if (!in)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (MPI_Count i = 0; i < N; i += 4093)
            in[i] = 3;
        MPI_Op op;
        CHECK_MPI(MPI_Op_create(add, 1, &op));
        CHECK_MPI(MPI_Reduce_local_c(in, b + 16, N, MPI_BYTE, op));
        CHECK(g_elems == N && g_calls >= 2 && !g_over,
              "user function: %d calls of %lld elements in all", g_calls, g_elems);
        int ok = 1;
        for (MPI_Count i = 0; ok && i < N; i += 4093)
            ok = b[16 + i] == (unsigned char)(pat(i, 1) + 3) && b[16 + i + 1] == 0;
        CHECK(ok, "MPI_Reduce_local_c of 2 GiB: wrong sums");
        MPI_Op_free(&op);
        free(in);
    }
    /* On an intercommunicator of the even and the odd ranks: rank 0
     * scatters its 2 GiB + 4 KiB block to rank 1 (remote rank 0), an
     * MPI_Scatterv_c whose send count and receive count pass INT_MAX. */
    MPI_Comm local, ic;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 9, &ic));
    int rsize;
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Count *ic_cnt = calloc((size_t)rsize, sizeof *ic_cnt);
    MPI_Aint *ic_dsp = calloc((size_t)rsize, sizeof *ic_dsp);
    ic_cnt[0] = N;
    ic_dsp[0] = 16;
    if (rank == 0)
        for (MPI_Count i = 0; i < N; i += 4093)
            b[16 + i] = pat(i, 2);
    if (rank == 1 && !(b = calloc((size_t)N, 1)))
        MPI_Abort(MPI_COMM_WORLD, 1);
    int root = rank % 2 ? 0 : rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
    CHECK_MPI(MPI_Scatterv_c(b, ic_cnt, ic_dsp, MPI_BYTE, rank == 1 ? b : small, rank == 1 ? N : 0,
                             MPI_BYTE, root, ic));
    if (rank == 1) {
        int ok = 1;
        for (MPI_Count i = 0; ok && i < N; i += 4093)
            ok = b[i] == pat(i, 2);
        CHECK(ok, "the 2 GiB block of MPI_Scatterv_c on an intercommunicator arrived wrong");
    }
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    free(ic_cnt);
    free(ic_dsp);
    free(b);
    free(cnt);
    free(dsp);
    return mtest_finalize();
}
