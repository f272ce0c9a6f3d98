/* Rank 1 (or the rank given as argv[2]) dies in the way argv[1] names, while
 * the other ranks wait for it in MPI: the job must end at once, name the
 * rank and the cause, and leave nothing behind.  "spawn-segv": a rank the
 * job spawned dies. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    int rank, size;
    if (!strcmp(how, "exit-before-init")) {
        /* Every rank leaves with status 3 before MPI_Init. */
        return 3;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!strcmp(how, "spawn-segv")) {
        /* The parents spawn one copy of this program, which dies while
         * they wait for it. */
        MPI_Comm parent, ic;
        MPI_Comm_get_parent(&parent);
        if (parent != MPI_COMM_NULL)
            raise(SIGSEGV);
        char *args[] = {"spawn-segv", NULL};
        MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic,
                       MPI_ERRCODES_IGNORE);
        char c;
        MPI_Recv(&c, 1, MPI_CHAR, 0, 99, ic, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    }
    if (victim >= size)
        victim = size - 1;
    /* Make a large message exist so a spill file is there to clean up. */
    static char big[1 << 20];
    MPI_Send(big, sizeof big, MPI_CHAR, (rank + 1) % size, 7, MPI_COMM_WORLD);
    if (rank == victim) {
        if (!strcmp(how, "segv"))
            raise(SIGSEGV);
        else if (!strcmp(how, "kill9"))
            raise(SIGKILL);
        else if (!strcmp(how, "exit0"))
            exit(0);
        else if (!strcmp(how, "exit5"))
            exit(5);
        else if (!strcmp(how, "double-free")) {
            /* a managed allocation (above -mem-threshold) freed twice;
             * volatile keeps the compiler from dropping the pair */
            char *volatile p = malloc(4 << 20);
            p[0] = 1;
            free(p);
            free(p);
        } else if (!strcmp(how, "abort"))
            MPI_Abort(MPI_COMM_WORLD, 42);
        else if (!strcmp(how, "hang")) {
            for (;;)
                pause();
        }
    }
    /* Everyone else waits for a message that will never come. */
    char c;
    MPI_Recv(&c, 1, MPI_CHAR, victim, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
