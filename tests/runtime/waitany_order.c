/* MPI_Waitany and MPI_Testany report the earliest completed request
 * (src/lib/core/request.c first_done), so a program that keeps several
 * receives from MPI_ANY_SOURCE posted sees each sender's messages in the
 * order they were sent (HPCC's RandomAccess relies on it: it stops at the
 * last sender's "done" message and cancels the rest).
 *
 * Every rank but 0 sends rank 0 N numbered messages, then a "done"
 * message; rank 0 keeps R receives posted (reposting each in its slot),
 * takes them with MPI_Waitany (MODE wait) or an MPI_Testany loop (MODE
 * test), and checks that each sender's numbers come in order and its "done"
 * after them, and that nothing is left when the last "done" has come.
 * With -nr 1 the senders run before rank 0 looks, so many receives are
 * complete at once: reporting the first of the array instead gave a
 * reposted slot's later message before an earlier one.
 * Prints "PASS waitany_order MODE"; exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 200
#define R 8
#define TAG_NUM 1
#define TAG_DONE 2

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int test = argc > 1 && !strcmp(argv[1], "test");
    if (rank != 0) {
        for (int i = 0; i < N; i++)
            MPI_Send(&i, 1, MPI_INT, 0, TAG_NUM, MPI_COMM_WORLD);
        MPI_Send(&bad, 0, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
    } else {
        int *next = calloc((size_t)size, sizeof(int)), buf[R], left = size - 1;
        MPI_Request req[R];
        for (int j = 0; j < R; j++)
            MPI_Irecv(&buf[j], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req[j]);
        while (left > 0) {
            int j, flag = 0;
            MPI_Status st;
            if (test)
                while (!flag)
                    MPI_Testany(R, req, &j, &flag, &st);
            else
                MPI_Waitany(R, req, &j, &st);
            int src = st.MPI_SOURCE;
            if (st.MPI_TAG == TAG_DONE) {
                if (next[src] != N && !bad++)
                    printf("rank 0: done from %d after %d of its %d messages\n", src, next[src], N);
                left--;
            } else if (buf[j] != next[src]++ && !bad++) {
                printf("rank 0: message %d from %d came when %d was expected\n", buf[j], src,
                       next[src] - 1);
            }
            MPI_Irecv(&buf[j], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req[j]);
        }
        for (int j = 0; j < R; j++) {
            MPI_Status st;
            int cancelled = 0;
            MPI_Cancel(&req[j]);
            MPI_Wait(&req[j], &st);
            MPI_Test_cancelled(&st, &cancelled);
            if (!cancelled && !bad++)
                printf("rank 0: a message from %d was left after the last done\n", st.MPI_SOURCE);
        }
        free(next);
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("PASS waitany_order %s\n", test ? "test" : "wait");
    MPI_Finalize();
    return any != 0;
}
