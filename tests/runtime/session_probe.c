/*
 * session_probe: the session a rank runs in (-rank-session).
 *   session_probe own     every rank leads a session of its own
 *   session_probe shared  every rank is in its master's session
 * Exit 0 pass, 1 fail.  With autogroup scheduling the kernel shares the
 * CPUs between sessions first, so ranks in one session got one share
 * between them where MPICH's processes get one each.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, bad = 0, total;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int own = argc > 1 && !strcmp(argv[1], "own");
    pid_t sid = getsid(0), msid = getsid(getppid());
    if (own ? sid != getpid() : sid != msid) {
        fprintf(stderr,
                "session_probe: rank %d (pid %d) in session %d, its master's %d: expected %s\n",
                rank, (int)getpid(), (int)sid, (int)msid, own ? "its own" : "its master's");
        bad = 1;
    }
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s session_probe %s\n", total ? "FAIL" : "PASS", own ? "own" : "shared");
    MPI_Finalize();
    return total ? 1 : 0;
}
