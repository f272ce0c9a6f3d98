/*
 * bigcount_inter.c - the MPI 4.0 large-count v and w collectives whose
 * count or displacement ARRAYS hold entries past INT_MAX, on an
 * intercommunicator (even and odd ranks of MPI_COMM_WORLD), kept cheap as
 * bigcount_arr.c is:
 * - displacements past INT_MAX point into a sparse anonymous mapping of a
 *   few GiB of address space of which only the pages used are touched;
 * - counts past INT_MAX are of a type of size 0.
 * One group's entries are large where the other's all fit, so a call made
 * with per-peer types meets the plain call of the other group.  Blocking
 * and nonblocking Alltoallv/w, Gatherv, Scatterv, Allgatherv and
 * Reduce_scatter; persistent Gatherv, Alltoallv and Reduce_scatter.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#include "mtest.h"

#define N 24                                          /* bytes per block */
#define FAR ((MPI_Aint)INT_MAX + 4096 * 5 + 3)        /* past INT_MAX, odd */
#define SPAN ((size_t)FAR + (size_t)64 * 1024 * 1024) /* room after FAR */

/* Block contents from world rank `from` for world rank `to`, tagged. */
static unsigned char val(int from, int to, int tag, int i)
{
    return (unsigned char)(from * 31 + to * 7 + tag * 13 + i);
}

static int block_ok(const unsigned char *b, int from, int to, int tag)
{
    for (int i = 0; i < N; i++)
        if (b[i] != val(from, to, tag, i))
            return 0;
    return 1;
}

static void fill(unsigned char *b, int from, int to, int tag)
{
    for (int i = 0; i < N; i++)
        b[i] = val(from, to, tag, i);
}

static void nothing(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void wait_or(MPI_Request *rq, int nb)
{
    if (nb)
        CHECK_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "bigcount_inter");
    int wrank = mtest_rank_, wsize = mtest_size_;
    if (wsize < 2) {
        if (wrank == 0)
            printf("SKIP %s: needs 2 ranks or more\n", mtest_name_);
        MPI_Finalize();
        return 77;
    }
    int color = wrank % 2;
    MPI_Comm local, ic;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local));
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 5, &ic));
    int rank, lsize, rsize;
    MPI_Comm_rank(ic, &rank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    /* World rank of remote rank j. */
#define RW(j) (2 * (j) + 1 - color)
    unsigned char *far = mmap(NULL, SPAN, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int m = wsize; /* room for any group's blocks */
    unsigned char *near = calloc((size_t)m, N), *tmp = calloc((size_t)m, N);
    MPI_Count *cnt = calloc((size_t)m, sizeof *cnt), *cnt2 = calloc((size_t)m, sizeof *cnt2);
    MPI_Aint *dsp = calloc((size_t)m, sizeof *dsp), *dsp2 = calloc((size_t)m, sizeof *dsp2);
    MPI_Datatype *ty = calloc((size_t)m, sizeof *ty);
    if (far == MAP_FAILED || !near || !tmp || !cnt || !cnt2 || !dsp || !dsp2 || !ty) {
        printf("%s: SKIP (no %zu bytes of address space)\n", mtest_name_, SPAN);
        MPI_Finalize();
        return 77;
    }
    int big = color == 0; /* the even group's entries are past INT_MAX */

    for (int nb = 0; nb < 2; nb++) {
        MPI_Request rq = MPI_REQUEST_NULL;
        int tag = 10 * nb;

        /* Alltoallv_c: the even group receives block j at FAR + j*N. */
        for (int j = 0; j < rsize; j++) {
            fill(near + j * N, wrank, RW(j), tag + 1);
            cnt[j] = N;
            dsp[j] = j * N;
            dsp2[j] = (big ? FAR : 0) + j * N;
        }
        unsigned char *rb = big ? far : tmp;
        memset(rb + dsp2[0], 0, (size_t)rsize * N);
        if (nb)
            CHECK_MPI(MPI_Ialltoallv_c(near, cnt, dsp, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE, ic, &rq));
        else
            CHECK_MPI(MPI_Alltoallv_c(near, cnt, dsp, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE, ic));
        wait_or(&rq, nb);
        for (int j = 0; j < rsize; j++)
            CHECK(block_ok(rb + dsp2[j], RW(j), wrank, tag + 1),
                  "alltoallv_c nb=%d: block from remote %d", nb, j);

        /* Alltoallw_c: the odd group sends from byte displacements past
         * INT_MAX. */
        for (int j = 0; j < rsize; j++) {
            dsp[j] = (big ? 0 : FAR) + j * N;
            fill((big ? near : far) + dsp[j], wrank, RW(j), tag + 2);
            dsp2[j] = j * N;
            ty[j] = MPI_BYTE;
        }
        memset(tmp, 0, (size_t)rsize * N);
        if (nb)
            CHECK_MPI(
                MPI_Ialltoallw_c(big ? near : far, cnt, dsp, ty, tmp, cnt, dsp2, ty, ic, &rq));
        else
            CHECK_MPI(MPI_Alltoallw_c(big ? near : far, cnt, dsp, ty, tmp, cnt, dsp2, ty, ic));
        wait_or(&rq, nb);
        for (int j = 0; j < rsize; j++)
            CHECK(block_ok(tmp + j * N, RW(j), wrank, tag + 2),
                  "alltoallw_c nb=%d: block from remote %d", nb, j);

        /* Gatherv_c: the even group's rank 0 gathers the odd group's
         * blocks past INT_MAX, reversed. */
        for (int j = 0; j < rsize; j++) {
            cnt[j] = N;
            dsp[j] = FAR + (MPI_Aint)(rsize - 1 - j) * N;
        }
        int root = big ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        fill(near, wrank, 0, tag + 3);
        if (nb)
            CHECK_MPI(MPI_Igatherv_c(near, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, root, ic, &rq));
        else
            CHECK_MPI(MPI_Gatherv_c(near, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, root, ic));
        wait_or(&rq, nb);
        for (int j = 0; root == MPI_ROOT && j < rsize; j++)
            CHECK(block_ok(far + dsp[j], RW(j), 0, tag + 3), "gatherv_c nb=%d: block from %d", nb,
                  j);

        /* Scatterv_c: the odd group's rank 0 scatters blocks past INT_MAX
         * (its array entries are the large ones now). */
        root = !big ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        for (int j = 0; root == MPI_ROOT && j < rsize; j++)
            fill(far + dsp[j], wrank, RW(j), tag + 4);
        memset(tmp, 0, N);
        if (nb)
            CHECK_MPI(MPI_Iscatterv_c(far, cnt, dsp, MPI_BYTE, tmp, N, MPI_BYTE, root, ic, &rq));
        else
            CHECK_MPI(MPI_Scatterv_c(far, cnt, dsp, MPI_BYTE, tmp, N, MPI_BYTE, root, ic));
        wait_or(&rq, nb);
        if (big)
            CHECK(block_ok(tmp, 1, wrank, tag + 4), "scatterv_c nb=%d", nb);

        /* Allgatherv_c: the even group's receive layout is past INT_MAX. */
        for (int j = 0; j < rsize; j++)
            dsp2[j] = (big ? FAR : 0) + (MPI_Aint)j * N;
        fill(near, wrank, 99, tag + 5);
        if (nb)
            CHECK_MPI(MPI_Iallgatherv_c(near, N, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE, ic, &rq));
        else
            CHECK_MPI(MPI_Allgatherv_c(near, N, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE, ic));
        wait_or(&rq, nb);
        for (int j = 0; j < rsize; j++)
            CHECK(block_ok(rb + dsp2[j], RW(j), 99, tag + 5), "allgatherv_c nb=%d: block from %d",
                  nb, j);

        /* Counts past INT_MAX of a type of size 0: accepted, nothing moves.
         * (MPICH 4.0.2 fails it: "Negative count" in MPIC_Sendrecv.) */
        if (mtest_is_mpich())
            continue;
        MPI_Datatype empty;
        CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
        CHECK_MPI(MPI_Type_commit(&empty));
        for (int j = 0; j < rsize; j++) {
            cnt2[j] = big ? (MPI_Count)INT_MAX + 1 + j : 3;
            dsp2[j] = 0;
        }
        if (nb)
            CHECK_MPI(MPI_Ialltoallv_c(near, cnt2, dsp2, empty, tmp, cnt2, dsp2, empty, ic, &rq));
        else
            CHECK_MPI(MPI_Alltoallv_c(near, cnt2, dsp2, empty, tmp, cnt2, dsp2, empty, ic));
        wait_or(&rq, nb);
        MPI_Type_free(&empty);
    }

    /* Reduce_scatter_c with counts of a type of size 0: the even group's
     * first count is past INT_MAX; the odd group's counts have the same sum
     * (MPI 3.1 5.2.2), in entries that fit when it has two ranks or more.
     * (MPICH 4.0.2 fails it: "Negative count" in MPIC_Recv.)  Then real
     * data, every count small (the 64-bit path both take). */
    int mpich = mtest_is_mpich();
    {
        MPI_Datatype empty;
        CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
        CHECK_MPI(MPI_Type_commit(&empty));
        int n0 = (wsize + 1) / 2, n1 = wsize / 2;
        MPI_Count total = (MPI_Count)INT_MAX + 9 + (n0 - 1);
        for (int j = 0; j < lsize; j++)
            if (big)
                cnt[j] = j == 0 ? (MPI_Count)INT_MAX + 9 : 1;
            else
                cnt[j] = total / n1 + (j < total % n1);
        MPI_Op op;
        CHECK_MPI(MPI_Op_create_c(nothing, 1, &op));
        int a = 1, b = 0;
        MPI_Request rq;
        if (!mpich) {
            CHECK_MPI(MPI_Reduce_scatter_c(&a, &b, cnt, empty, op, ic));
            CHECK_MPI(MPI_Ireduce_scatter_c(&a, &b, cnt, empty, op, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Reduce_scatter_init_c(&a, &b, cnt, empty, op, ic, MPI_INFO_NULL, &rq));
            for (int round = 0; round < 2; round++) {
                CHECK_MPI(MPI_Start(&rq));
                CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            }
            MPI_Request_free(&rq);
        }
        CHECK(a == 1 && b == 0, "reduce_scatter_c of nothing changed %d %d", a, b);
        MPI_Op_free(&op);
        MPI_Type_free(&empty);

        /* 2 * n0 elements: the even group 2 each, the odd group 2 * n0 / n1
         * each, its last rank the rest. */
        int tot = 2 * n0;
        for (int j = 0; j < lsize; j++)
            cnt[j] = big ? 2 : (j < lsize - 1 ? tot / n1 : tot - (lsize - 1) * (tot / n1));
        long long *in = calloc((size_t)tot, sizeof *in), out[64];
        for (int i = 0; i < tot; i++)
            in[i] = wrank * 1000 + i;
        for (int nb = 0; nb < 2; nb++) {
            memset(out, 0, sizeof out);
            if (nb) {
                CHECK_MPI(MPI_Ireduce_scatter_c(in, out, cnt, MPI_LONG_LONG, MPI_SUM, ic, &rq));
                CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                CHECK_MPI(MPI_Reduce_scatter_c(in, out, cnt, MPI_LONG_LONG, MPI_SUM, ic));
            }
            long long off = 0;
            for (int j = 0; j < rank; j++)
                off += cnt[j];
            for (MPI_Count i = 0; i < cnt[rank] && i < 64; i++) {
                long long want = 0; /* sum over the remote group */
                for (int j = 0; j < rsize; j++)
                    want += RW(j) * 1000 + off + i;
                CHECK(out[i] == want, "reduce_scatter_c nb=%d: [%lld] is %lld, expected %lld", nb,
                      (long long)i, out[i], want);
            }
        }
        free(in);
    }

    /* Persistent: Gatherv_init_c into the even group's rank 0 (displacements
     * past INT_MAX) and Alltoallv_init_c (the even group's receive
     * displacements), started twice; the arrays are overwritten after the
     * inits, which copied them. */
    {
        MPI_Aint rbase = big ? FAR + (MPI_Aint)m * N : 0;
        MPI_Aint *sd = calloc((size_t)m, sizeof *sd);
        for (int j = 0; j < rsize; j++) {
            cnt[j] = N;
            dsp[j] = FAR + (MPI_Aint)j * N;
            dsp2[j] = rbase + (MPI_Aint)j * N;
            sd[j] = j * N;
        }
        unsigned char *sa = calloc((size_t)m, N), *sg = calloc(1, N);
        unsigned char *rb = big ? far : calloc((size_t)m, N);
        int root = big ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        MPI_Request rq[2];
        CHECK_MPI(MPI_Gatherv_init_c(sg, N, MPI_BYTE, far, cnt, dsp, MPI_BYTE, root, ic,
                                     MPI_INFO_NULL, &rq[0]));
        CHECK_MPI(MPI_Alltoallv_init_c(sa, cnt, sd, MPI_BYTE, rb, cnt, dsp2, MPI_BYTE, ic,
                                       MPI_INFO_NULL, &rq[1]));
        for (int j = 0; j < m; j++)
            cnt[j] = -1, dsp[j] = dsp2[j] = sd[j] = -1;
        for (int round = 0; round < 2; round++) {
            fill(sg, wrank, 0, 50 + round);
            for (int j = 0; j < rsize; j++)
                fill(sa + j * N, wrank, RW(j), 60 + round);
            CHECK_MPI(MPI_Startall(2, rq));
            CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            for (int j = 0; root == MPI_ROOT && j < rsize; j++)
                CHECK(block_ok(far + FAR + (size_t)j * N, RW(j), 0, 50 + round),
                      "gatherv_init_c round %d: block from %d", round, j);
            for (int j = 0; j < rsize; j++)
                CHECK(block_ok(rb + rbase + (size_t)j * N, RW(j), wrank, 60 + round),
                      "alltoallv_init_c round %d: block from %d", round, j);
        }
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        if (!big)
            free(rb);
        free(sa);
        free(sg);
        free(sd);
    }

    /* The intercommunicator still works: each group gets the sum of the
     * other group's world ranks. */
    int v = wrank, got = -1, want = 0;
    CHECK_MPI(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, ic));
    for (int j = 0; j < rsize; j++)
        want += RW(j);
    CHECK(got == want, "after: allreduce gave %d, expected %d", got, want);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    munmap(far, SPAN);
    free(near);
    free(tmp);
    free(cnt);
    free(cnt2);
    free(dsp);
    free(dsp2);
    free(ty);
    return mtest_finalize();
}
