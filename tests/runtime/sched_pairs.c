/* Scheduling of ranks that exchange with one partner (docs/design.md,
 * "Scheduling": pairs).  Run with more ranks than run slots.
 *
 *   sched_pairs pairs [ITERS]   ranks 2k and 2k+1 exchange ITERS messages
 *                               with MPI_Sendrecv (an odd last rank waits
 *                               in a barrier); every payload is checked
 *   sched_pairs ring [ITERS]    every rank sends to rank+1 and receives
 *                               from rank-1 with MPI_Sendrecv, checked
 *   sched_pairs poll            fairness: the pairs exchange and poll
 *                               (MPI_Test) for a stop message that only the
 *                               last rank sends, and it sends it only once
 *                               it has run after a message that rank 0
 *                               sends it while the pairs are busy.  The
 *                               pairs never end on their own: a scheduler
 *                               that keeps giving the run slots to the
 *                               pairs (for instance to a rank a running
 *                               partner spins for, even one that has just
 *                               yielded its slot) makes the job hang
 *                               until the test's timeout.
 *   sched_pairs iprobe          rank 0 sends to every other rank, which
 *                               waits for it in MPI_Recv, and waits for
 *                               their answers only by polling (MPI_Iprobe,
 *                               then MPI_Test on an MPI_Irecv), never by
 *                               blocking: with -nr 1 the poll must hand
 *                               the slot to the rank it has just sent to,
 *                               although the send did not tell the master
 *                               (match.c wake_receiver), or the job hangs.
 * Prints "PASS sched_pairs MODE" on rank 0; exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_X 7
#define TAG_GO 8
#define TAG_STOP 9
#define BIG 1000000000L /* iterations after which a loop that should have ended has failed */

static int g_rank, g_size;

static int check(long got, long want, const char *what, long it)
{
    if (got == want)
        return 0;
    fprintf(stderr, "rank %d: %s at iteration %ld: got %ld, expected %ld\n", g_rank, what, it, got,
            want);
    return 1;
}

static int pairs(long iters)
{
    int peer = g_rank ^ 1, bad = 0;
    if (peer >= g_size)
        return 0;
    for (long i = 0; i < iters && !bad; i++) {
        long out[2] = {g_rank, i}, in[2] = {-1, -1};
        MPI_Sendrecv(out, 2, MPI_LONG, peer, TAG_X, in, 2, MPI_LONG, peer, TAG_X, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bad = check(in[0], peer, "sender", i) || check(in[1], i, "iteration", i);
    }
    return bad;
}

static int ring(long iters)
{
    int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size, bad = 0;
    for (long i = 0; i < iters && !bad; i++) {
        long out[2] = {g_rank, i}, in[2] = {-1, -1};
        MPI_Sendrecv(out, 2, MPI_LONG, next, TAG_X, in, 2, MPI_LONG, prev, TAG_X, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bad = check(in[0], prev, "sender", i) || check(in[1], i, "iteration", i);
    }
    return bad;
}

static int poll_mode(void)
{
    int last = g_size - 1, bad = 0;
    if (g_size < 3 || g_size % 2 == 0) {
        if (g_rank == 0)
            fprintf(stderr, "sched_pairs poll: needs an odd number of ranks, at least 3\n");
        return 1;
    }
    if (g_rank == last) {
        /* Runnable again only once rank 0 is deep in its exchanges. */
        long go;
        MPI_Recv(&go, 1, MPI_LONG, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int r = 0; r < last; r++)
            MPI_Send(&go, 1, MPI_LONG, r, TAG_STOP, MPI_COMM_WORLD);
        return 0;
    }
    int peer = g_rank ^ 1;
    long stop_at = -1;
    MPI_Request rq;
    MPI_Irecv(&stop_at, 1, MPI_LONG, last, TAG_STOP, MPI_COMM_WORLD, &rq);
    long i;
    int stopped = 0;
    for (i = 0; i < BIG && !bad; i++) {
        if (g_rank == 0 && i == 100) {
            long go = i;
            MPI_Send(&go, 1, MPI_LONG, last, TAG_GO, MPI_COMM_WORLD);
        }
        int flag = stopped;
        if (!stopped)
            MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        stopped = flag;
        /* Both partners leave at the same iteration: each tells the other
         * whether it has seen the stop. */
        long out[3] = {g_rank, i, stopped}, in[3] = {-1, -1, -1};
        MPI_Sendrecv(out, 3, MPI_LONG, peer, TAG_X, in, 3, MPI_LONG, peer, TAG_X, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bad = check(in[0], peer, "sender", i) || check(in[1], i, "iteration", i);
        if (stopped && in[2])
            break;
    }
    if (!bad && i >= BIG) {
        fprintf(stderr, "rank %d: no stop message after %ld exchanges\n", g_rank, i);
        bad = 1;
    }
    if (!stopped)
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (!bad && stop_at != 100)
        bad = check(stop_at, 100, "stop message", i);
    return bad;
}

static int iprobe_mode(long rounds)
{
    int bad = 0;
    for (long i = 0; i < rounds && !bad; i++) {
        if (g_rank != 0) {
            long v;
            MPI_Recv(&v, 1, MPI_LONG, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v = v * 1000 + g_rank;
            MPI_Send(&v, 1, MPI_LONG, 0, TAG_X, MPI_COMM_WORLD);
            continue;
        }
        for (int r = 1; r < g_size && !bad; r++) {
            MPI_Send(&i, 1, MPI_LONG, r, TAG_GO, MPI_COMM_WORLD);
            long v = -1, polls = 0;
            if (r % 2) {
                int flag = 0;
                while (!flag && polls++ < BIG)
                    MPI_Iprobe(r, TAG_X, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                MPI_Recv(&v, 1, MPI_LONG, r, TAG_X, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Request rq;
                int flag = 0;
                MPI_Irecv(&v, 1, MPI_LONG, r, TAG_X, MPI_COMM_WORLD, &rq);
                while (!flag && polls++ < BIG)
                    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
                if (!flag)
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
            }
            bad = check(v, i * 1000 + r, "answer", i);
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char *mode = argc > 1 ? argv[1] : "pairs";
    long iters = argc > 2 ? atol(argv[2]) : 20000;
    int bad;
    if (!strcmp(mode, "pairs"))
        bad = pairs(iters);
    else if (!strcmp(mode, "ring"))
        bad = ring(iters);
    else if (!strcmp(mode, "poll"))
        bad = poll_mode();
    else if (!strcmp(mode, "iprobe"))
        bad = iprobe_mode(argc > 2 ? iters : 200);
    else {
        if (g_rank == 0)
            fprintf(stderr, "usage: sched_pairs pairs|ring|poll|iprobe [ITERS]\n");
        bad = 1;
    }
    int tot = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("%s sched_pairs %s\n", tot ? "FAIL" : "PASS", mode);
    MPI_Finalize();
    return tot ? 1 : 0;
}
