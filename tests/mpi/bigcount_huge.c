/* Large counts (MPI 4.0 "_c" calls) past INT_MAX: a 2 GiB + 4 KiB message
 * of MPI_BYTE from rank 0 to rank 1 (MPI_Send_c/MPI_Recv_c, then
 * MPI_Isend_c/MPI_Irecv_c),
 * MPI_Get_count_c exact, bytes checked at sampled places (the pattern
 * depends on the position, so a shifted or truncated copy shows); then an
 * MPI_Bcast_c of as many bytes from the last rank.
 *
 * It needs about 2.2 GB per rank, so it runs only with BDMPI_TEST_HUGE=1
 * (the slow label sets it); otherwise it exits 77 (skipped). */
#include <limits.h>

#include "mtest.h"

#define N ((MPI_Count)INT_MAX + 4096)

static unsigned char pat(MPI_Count i, int seed) { return (unsigned char)((i * 131 + seed) >> 3); }

/* Write the pattern every 4093 bytes and at both ends (the rest stays
 * zero, untouched pages cost nothing to send). */
static void fill(unsigned char *b, int seed)
{
    for (MPI_Count i = 0; i < N; i += 4093)
        b[i] = pat(i, seed);
    b[N - 1] = pat(N - 1, seed);
}

static int check(const unsigned char *b, int seed)
{
    for (MPI_Count i = 0; i < N; i += 4093)
        if (b[i] != pat(i, seed))
            return 0;
    return b[N - 1] == pat(N - 1, seed) && b[4094] == 0 && b[N - 2] == 0;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_huge");
    const char *e = getenv("BDMPI_TEST_HUGE");
    if (!e || strcmp(e, "1") != 0) {
        if (mtest_rank_ == 0)
            printf("SKIP %s: set BDMPI_TEST_HUGE=1 (needs about 2.2 GB per rank)\n", mtest_name_);
        MPI_Finalize();
        return 77;
    }
    int rank = mtest_rank_, size = mtest_size_;
    unsigned char *b = calloc((size_t)N, 1);
    CHECK(b != NULL, "calloc of %lld bytes", (long long)N);
    if (!b)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (size >= 2 && rank < 2) {
        MPI_Status st;
        MPI_Count got = -1;
        if (rank == 0) {
            fill(b, 1);
            CHECK_MPI(MPI_Send_c(b, N, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
        } else {
            CHECK_MPI(MPI_Recv_c(b, N, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
            MPI_Get_count_c(&st, MPI_BYTE, &got);
            CHECK(got == N, "MPI_Get_count_c: %lld, expected %lld", (long long)got, (long long)N);
            CHECK(check(b, 1), "the 2 GiB message arrived wrong");
        }
        /* nonblocking */
        MPI_Request r;
        if (rank == 0) {
            memset(b, 0, (size_t)N);
            fill(b, 2);
            CHECK_MPI(MPI_Isend_c(b, N, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &r));
            CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else {
            memset(b, 0, (size_t)N);
            CHECK_MPI(MPI_Irecv_c(b, N, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &r));
            CHECK_MPI(MPI_Wait(&r, &st));
            got = -1;
            MPI_Get_count_c(&st, MPI_BYTE, &got);
            CHECK(got == N, "MPI_Get_count_c after MPI_Wait: %lld, expected %lld", (long long)got,
                  (long long)N);
            CHECK(check(b, 2), "the nonblocking 2 GiB message arrived wrong");
        }
    }
    /* a broadcast of as many bytes */
    memset(b, 0, (size_t)N);
    if (rank == size - 1)
        fill(b, 3);
    CHECK_MPI(MPI_Bcast_c(b, N, MPI_BYTE, size - 1, MPI_COMM_WORLD));
    CHECK(check(b, 3), "the 2 GiB broadcast arrived wrong");
    free(b);
    return mtest_finalize();
}
