/* A rank blocked in a collective through the master still matches its
 * posted receives (MPI's progress rule): rank 0 is late and sends with
 * MPI_Ssend to the last rank, which posted MPI_Irecv before a collective
 * that rank 0 joins only once the Ssend is matched.  Before: with the
 * sender on another node (MPICH's pt2pt/rqstatus at -nn 2), or with a
 * collective too large for the ranks' own path, the receiver slept in the
 * master, its message unmatched, until the deadlock check ended the job.
 * Argument: barrier (default), bcast (256 KiB, the master's path unless
 * every rank runs), split (MPI_Comm_split), or a nonblocking MPI_Ibarrier
 * completed by MPI_Waitany (waitany), MPI_Waitsome (waitsome), a loop of
 * MPI_Testany (testany) or MPI_Waitall of two (waitall): the master's
 * WAITANY/TESTANY did not match either (session 18).  Also allgather,
 * gather (to the last rank), scatter (from rank 0) and alltoall, 32 KiB a
 * block: with BDMPI_COLL_STAGE=1K these, and bcast, are pipelined through
 * the master's bounded staging, whose wait (COLL_TAKE) did not match
 * either (session 19); and iallgather2, two MPI_Iallgather completed by
 * one MPI_Waitall, which polls them both. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Element i of the block rank s sends to rank d in iteration it. */
static int val(int s, int d, int i, int it) { return s * 1000003 + d * 7919 + i + it; }

int main(int argc, char **argv)
{
    int rank, size, bad = 0, buf[2] = {0, 0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bcast = argc > 1 && !strcmp(argv[1], "bcast");
    int split = argc > 1 && !strcmp(argv[1], "split");
    const char *blk = NULL; /* a blocking collective of blocks */
    if (argc > 1 && (!strcmp(argv[1], "allgather") || !strcmp(argv[1], "gather") ||
                     !strcmp(argv[1], "scatter") || !strcmp(argv[1], "alltoall") ||
                     !strcmp(argv[1], "iallgather2")))
        blk = argv[1];
    enum { B = 8192 }; /* 32 KiB: over the ranks' own path on one node (BDL_LC_MAX) */
    int *sb = malloc((size_t)size * B * sizeof *sb),
        *rb = malloc((size_t)size * 2 * B * sizeof *rb);
    const char *nbc = NULL;
    if (argc > 1 && (!strcmp(argv[1], "waitany") || !strcmp(argv[1], "waitsome") ||
                     !strcmp(argv[1], "testany") || !strcmp(argv[1], "waitall")))
        nbc = argv[1];
    enum { N = 65536 };
    int *big = malloc(N * sizeof *big);
    for (int it = 0; it < 3; it++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank == 0) {
            usleep(50000); /* the receiver is in the collective by now */
            buf[0] = it;
            buf[1] = 17;
            MPI_Ssend(buf, 2, MPI_INT, size - 1, 10, MPI_COMM_WORLD);
        }
        if (rank == size - 1)
            MPI_Irecv(buf, 2, MPI_INT, 0, 10, MPI_COMM_WORLD, &req);
        if (bcast) {
            for (int i = 0; i < N; i++)
                big[i] = rank == 0 ? i + it : -1;
            MPI_Bcast(big, N, MPI_INT, 0, MPI_COMM_WORLD);
            for (int i = 0; i < N; i++)
                if (big[i] != i + it) {
                    fprintf(stderr, "rank %d: bcast [%d] = %d\n", rank, i, big[i]);
                    bad++;
                    break;
                }
        } else if (blk) {
            int all = !strcmp(blk, "allgather"), a2a = !strcmp(blk, "alltoall");
            int gat = !strcmp(blk, "gather"), sca = !strcmp(blk, "scatter");
            int two = !strcmp(blk, "iallgather2");
            for (int d = 0; d < size; d++)
                for (int i = 0; i < B; i++)
                    sb[d * B + i] = val(rank, a2a || sca ? d : 0, i, it);
            for (int i = 0; i < 2 * size * B; i++)
                rb[i] = -1;
            if (two) { /* two pending, completed together: MPI_Wait polls them both */
                MPI_Request r2[2];
                MPI_Iallgather(sb, B, MPI_INT, rb, B, MPI_INT, MPI_COMM_WORLD, &r2[0]);
                MPI_Iallgather(sb, B, MPI_INT, rb + size * B, B, MPI_INT, MPI_COMM_WORLD, &r2[1]);
                MPI_Waitall(2, r2, MPI_STATUSES_IGNORE);
                all = 1;
            } else if (all)
                MPI_Allgather(sb, B, MPI_INT, rb, B, MPI_INT, MPI_COMM_WORLD);
            else if (gat)
                MPI_Gather(sb, B, MPI_INT, rb, B, MPI_INT, size - 1, MPI_COMM_WORLD);
            else if (sca)
                MPI_Scatter(sb, B, MPI_INT, rb, B, MPI_INT, 0, MPI_COMM_WORLD);
            else
                MPI_Alltoall(sb, B, MPI_INT, rb, B, MPI_INT, MPI_COMM_WORLD);
            /* the blocks this rank received, and from whom */
            int nb = (all || a2a || (gat && rank == size - 1)) ? size : sca ? 1 : 0;
            for (int s = 0; s < (two ? 2 : 1) * nb && !bad; s++)
                for (int i = 0; i < B; i++) {
                    int from = sca ? 0 : s % size;
                    int want = val(from, a2a || sca ? rank : 0, i, it);
                    if (rb[s * B + i] != want) {
                        fprintf(stderr, "rank %d: %s block %d [%d] = %d, not %d\n", rank, blk, s, i,
                                rb[s * B + i], want);
                        bad++;
                        break;
                    }
                }
        } else if (split) {
            MPI_Comm c;
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
            MPI_Comm_free(&c);
        } else if (nbc) {
            MPI_Request nb[2];
            int idx = -1, flag = 0, outs[2];
            MPI_Ibarrier(MPI_COMM_WORLD, &nb[0]);
            if (!strcmp(nbc, "waitany")) {
                MPI_Waitany(1, nb, &idx, MPI_STATUS_IGNORE);
            } else if (!strcmp(nbc, "waitsome")) {
                MPI_Waitsome(1, nb, &idx, outs, MPI_STATUSES_IGNORE);
                idx = idx == 1 ? outs[0] : -1;
            } else if (!strcmp(nbc, "testany")) {
                double t0 = MPI_Wtime();
                while (!flag) {
                    MPI_Testany(1, nb, &idx, &flag, MPI_STATUS_IGNORE);
                    if (!flag && MPI_Wtime() - t0 > 20) { /* it would poll forever */
                        fprintf(stderr, "FAIL rank %d: MPI_Testany never completed\n", rank);
                        MPI_Abort(MPI_COMM_WORLD, 1);
                    }
                }
            } else {
                MPI_Ibarrier(MPI_COMM_WORLD, &nb[1]);
                MPI_Waitall(2, nb, MPI_STATUSES_IGNORE);
                idx = 0;
            }
            if (idx != 0) {
                fprintf(stderr, "rank %d: %s gave index %d\n", rank, nbc, idx);
                bad++;
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (rank == size - 1) {
            MPI_Status st;
            MPI_Wait(&req, &st);
            if (buf[0] != it || buf[1] != 17 || st.MPI_SOURCE != 0 || st.MPI_TAG != 10) {
                fprintf(stderr, "rank %d: got %d %d from %d tag %d\n", rank, buf[0], buf[1],
                        st.MPI_SOURCE, st.MPI_TAG);
                bad++;
            }
        }
    }
    free(big);
    free(sb);
    free(rb);
    int tot = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s coll_recv_progress on %d\n", tot ? "FAIL" : "PASS", size);
    MPI_Finalize();
    return tot ? 1 : 0;
}
