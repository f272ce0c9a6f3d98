/* MPI_Cancel of a send that is not matched yet succeeds, and the message is
 * never received: Isend, Issend, Ibsend and a started persistent send, of
 * 8 B, 100 kB (pulled from the sender's memory between nodes) and 3 MB, while
 * the receiver drains its mailbox (in MPI_Recv of another tag: the message
 * is in its unexpected queue) and while it sleeps in MPI_Barrier (the
 * message is still in its ring, or with its master).  Rank 0 sends to the
 * last rank: on another node at -nn 2, where the cancel was refused before
 * (MPICH's pt2pt/scancel, pscancel, cancelrecv). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int last = size - 1;
    const int sizes[3] = {8, 100000, 3000000};
    char *buf = malloc(3000000);
    int bsz = 3000000 + 4 * MPI_BSEND_OVERHEAD;
    char *bbuf = malloc((size_t)bsz);
    MPI_Buffer_attach(bbuf, bsz);
    for (int i = 0; i < 3000000; i++)
        buf[i] = (char)i;
    for (int phase = 0; phase < 2; phase++)
        for (int si = 0; si < 3; si++)
            for (int kind = 0; kind < 4; kind++) {
                int n = sizes[si], tag = 100 + phase * 100 + si * 10 + kind, flag = 0;
                if (rank == 0 && last != 0) {
                    MPI_Request r;
                    MPI_Status st;
                    if (kind == 0)
                        MPI_Isend(buf, n, MPI_CHAR, last, tag, MPI_COMM_WORLD, &r);
                    else if (kind == 1)
                        MPI_Issend(buf, n, MPI_CHAR, last, tag, MPI_COMM_WORLD, &r);
                    else if (kind == 2)
                        MPI_Ibsend(buf, n, MPI_CHAR, last, tag, MPI_COMM_WORLD, &r);
                    else {
                        MPI_Send_init(buf, n, MPI_CHAR, last, tag, MPI_COMM_WORLD, &r);
                        MPI_Start(&r);
                    }
                    MPI_Cancel(&r);
                    MPI_Wait(&r, &st);
                    MPI_Test_cancelled(&st, &flag);
                    if (kind == 3)
                        MPI_Request_free(&r);
                    if (!flag) {
                        fprintf(stderr, "phase %d: send %d of %d bytes was not cancelled\n", phase,
                                kind, n);
                        bad++;
                    }
                    if (phase == 1)
                        MPI_Barrier(MPI_COMM_WORLD);
                    MPI_Send(&flag, 1, MPI_INT, last, 1, MPI_COMM_WORLD);
                    MPI_Send(&flag, 1, MPI_INT, last, 2, MPI_COMM_WORLD);
                } else if (rank == last && last != 0) {
                    if (phase == 1)
                        MPI_Barrier(MPI_COMM_WORLD);
                    MPI_Recv(&flag, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Recv(&flag, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    int there = 0;
                    MPI_Status st;
                    MPI_Iprobe(0, tag, MPI_COMM_WORLD, &there, &st);
                    if (flag && there) {
                        fprintf(stderr, "phase %d: a cancelled send %d of %d bytes arrived\n",
                                phase, kind, n);
                        bad++;
                    }
                    if (!flag) /* not cancelled: take it */
                        MPI_Recv(buf, n, MPI_CHAR, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (phase == 1) {
                    MPI_Barrier(MPI_COMM_WORLD);
                }
            }
    MPI_Buffer_detach(&bbuf, &bsz);
    free(bbuf);
    free(buf);
    int tot = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s cancel_send on %d\n", tot ? "FAIL" : "PASS", size);
    MPI_Finalize();
    return tot ? 1 : 0;
}
