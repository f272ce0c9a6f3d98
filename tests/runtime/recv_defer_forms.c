/* Every way a program learns that a nonblocking receive completed sees its
 * data (issue 13, session 15: a receive of a spill-file message into
 * managed memory is filled only when it is reported complete).
 *
 * 2 ranks, -nr 1, a budget.  Rank 1 sends NMSG messages of 4 MiB (spill
 * files: rank 0 sleeps in MPI_Recv meanwhile), then a token, then, after
 * a second token from rank 0, one more message.  Rank 0 receives them
 * through MPI_Wait, MPI_Test, MPI_Request_get_status, MPI_Waitany,
 * MPI_Testsome, MPI_Waitall, a persistent receive and a
 * freed request (whose completion it learns from the message after it),
 * checks every word and every status, and prints PASS or FAIL. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N (4u << 20)
#define NMSG 9
#define TAG_GO 99

static uint64_t val(int m, uint64_t k)
{
    return ((uint64_t)(m + 1) << 56) ^ (k * 0x9E3779B97F4A7C15ull);
}

static int g_bad;

static void check(const uint64_t *b, int m, const MPI_Status *st, const char *how)
{
    int bad = 0, cnt = -1;
    for (uint64_t k = 0; k < N / 8; k++)
        bad += b[k] != val(m, k);
    if (st) {
        MPI_Get_count(st, MPI_UINT64_T, &cnt);
        if (st->MPI_SOURCE != 1 || st->MPI_TAG != m || cnt != (int)(N / 8)) {
            fprintf(stderr, "rank 0: %s: status source %d tag %d count %d\n", how, st->MPI_SOURCE,
                    st->MPI_TAG, cnt);
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "rank 0: %s: message %d has %d wrong words\n", how, m, bad);
        g_bad++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, size, token = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    uint64_t *b[NMSG + 1];
    for (int m = 0; m <= NMSG; m++)
        if (!(b[m] = malloc(N)))
            MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Status st, sts[3];
    MPI_Request r[3];
    if (me == 1) {
        MPI_Request s[NMSG];
        for (int m = 0; m <= NMSG; m++)
            for (uint64_t k = 0; k < N / 8; k++)
                b[m][k] = val(m, k);
        for (int m = 0; m < NMSG; m++)
            MPI_Isend(b[m], N / 8, MPI_UINT64_T, 0, m, MPI_COMM_WORLD, &s[m]);
        MPI_Send(&token, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD);
        MPI_Waitall(NMSG, s, MPI_STATUSES_IGNORE);
        MPI_Recv(&token, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(b[NMSG], N / 8, MPI_UINT64_T, 0, NMSG, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int flag = 0, idx = -1, out = 0, ids[3];
        /* Wait */
        MPI_Irecv(b[0], N / 8, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Wait(&r[0], &st);
        check(b[0], 0, &st, "MPI_Wait");
        /* Test */
        MPI_Irecv(b[1], N / 8, MPI_UINT64_T, 1, 1, MPI_COMM_WORLD, &r[0]);
        while (MPI_Test(&r[0], &flag, &st), !flag)
            ;
        check(b[1], 1, &st, "MPI_Test");
        /* Request_get_status: the data is there once it says so, before the Wait */
        MPI_Irecv(b[2], N / 8, MPI_UINT64_T, 1, 2, MPI_COMM_WORLD, &r[0]);
        while (MPI_Request_get_status(r[0], &flag, &st), !flag)
            ;
        check(b[2], 2, &st, "MPI_Request_get_status");
        MPI_Wait(&r[0], &st);
        check(b[2], 2, &st, "MPI_Wait after MPI_Request_get_status");
        /* Waitany, then Testsome */
        MPI_Irecv(b[3], N / 8, MPI_UINT64_T, 1, 3, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(b[4], N / 8, MPI_UINT64_T, 1, 4, MPI_COMM_WORLD, &r[1]);
        MPI_Waitany(2, r, &idx, &st);
        check(b[3 + idx], 3 + idx, &st, "MPI_Waitany");
        do
            MPI_Testsome(2, r, &out, ids, sts);
        while (out == 0);
        if (out != 1 || ids[0] != 1 - idx) {
            fprintf(stderr, "rank 0: MPI_Testsome gave %d requests\n", out);
            g_bad++;
        } else
            check(b[4 - idx], 4 - idx, &sts[0], "MPI_Testsome");
        /* Waitall */
        MPI_Irecv(b[5], N / 8, MPI_UINT64_T, 1, 5, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(b[6], N / 8, MPI_UINT64_T, 1, 6, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, sts);
        check(b[5], 5, &sts[0], "MPI_Waitall");
        check(b[6], 6, &sts[1], "MPI_Waitall");
        /* a persistent receive, twice: the message, then the one sent back */
        MPI_Recv_init(b[7], N / 8, MPI_UINT64_T, 1, 7, MPI_COMM_WORLD, &r[2]);
        MPI_Start(&r[2]);
        MPI_Wait(&r[2], &st);
        check(b[7], 7, &st, "a persistent receive");
        MPI_Request_free(&r[2]);
        /* freed while pending: the data is there when the next message is */
        MPI_Irecv(b[8], N / 8, MPI_UINT64_T, 1, 8, MPI_COMM_WORLD, &r[0]);
        MPI_Request_free(&r[0]);
        MPI_Send(&token, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD);
        MPI_Recv(b[NMSG], N / 8, MPI_UINT64_T, 1, NMSG, MPI_COMM_WORLD, &st);
        check(b[NMSG], NMSG, &st, "MPI_Recv");
        check(b[8], 8, NULL, "a freed request");
    }
    int allbad = 0;
    MPI_Reduce(&g_bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s recv_defer_forms\n", allbad ? "FAIL" : "PASS");
    for (int m = 0; m <= NMSG; m++)
        free(b[m]);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
