/* net_posted N [MAX]: world rank 0 sends N small messages (of 1 to MAX
 * bytes, default 1000, at most 4096: -msg-threshold's default; checked in
 * order) to the last rank with MPI_Send, Isend and Ssend mixed,
 * then receives one answer.  Run at -nn 2 with --stats by net_posted.sh,
 * which counts rank 0's requests to its master: a small send to another
 * node is posted to the master's queue without one (issue 12, session 17),
 * where it was a request each. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 1000, bad = 0;
    int max = argc > 2 ? atoi(argv[2]) : 1000;
    if (max < 1 || max > 4096)
        max = 1000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int last = size - 1;
    unsigned char buf[4096];
    if (rank == 0 && last > 0) {
        for (int i = 0; i < n; i++) {
            int len = 1 + (i * 37) % max;
            memset(buf, i & 0xff, (size_t)len);
            if (i % 10 == 3) {
                MPI_Request r;
                MPI_Isend(buf, len, MPI_BYTE, last, 5, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else if (i % 100 == 7) {
                MPI_Ssend(buf, len, MPI_BYTE, last, 5, MPI_COMM_WORLD);
            } else {
                MPI_Send(buf, len, MPI_BYTE, last, 5, MPI_COMM_WORLD);
            }
        }
        MPI_Recv(&bad, 1, MPI_INT, last, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == last && last > 0) {
        for (int i = 0; i < n; i++) {
            int len = 1 + (i * 37) % max, got;
            MPI_Status st;
            MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            int ok = got == len;
            for (int k = 0; ok && k < len; k++)
                ok = buf[k] == (unsigned char)(i & 0xff);
            if (!ok && bad++ < 5)
                fprintf(stderr, "message %d: %d bytes, expected %d of %d\n", i, got, len, i & 0xff);
        }
        MPI_Send(&bad, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(bad ? "FAIL net_posted: %d wrong\n" : "PASS net_posted %d\n", bad ? bad : n);
    MPI_Finalize();
    return bad != 0;
}
