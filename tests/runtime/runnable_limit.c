/* At most -nr ranks run at once: each rank, between MPI calls, bumps a
 * counter shared through a file in the job's working area and checks it
 * never exceeds BDMPI_NR.  Also checks BDMPI_Enter_critical honours -nc. */
#include <mpi.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void spin_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0, tot;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *nr_s = getenv("BDMPI_NR"), *nc_s = getenv("BDMPI_NC");
    int nr = nr_s ? atoi(nr_s) : 1, nc = nc_s ? atoi(nc_s) : 1;
    char path[256];
    int key = 0;
    /* The limits are per node: one counter per node. */
    int lrank;
    MPI_Comm_rank(BDMPI_COMM_NODE, &lrank);
    if (lrank == 0)
        key = (int)getpid();
    MPI_Bcast(&key, 1, MPI_INT, 0, BDMPI_COMM_NODE);
    snprintf(path, sizeof path, "/tmp/bdmpi-runnable-%d", key);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, 4096) < 0)
        return 1;
    _Atomic int *cnt = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int max_seen = 0, max_crit = 0;
    for (int it = 0; it < 5; it++) {
        int v = atomic_fetch_add(&cnt[0], 1) + 1;
        if (v > max_seen)
            max_seen = v;
        spin_ms(2);
        atomic_fetch_sub(&cnt[0], 1);
        BDMPI_Enter_critical();
        v = atomic_fetch_add(&cnt[1], 1) + 1;
        if (v > max_crit)
            max_crit = v;
        spin_ms(1);
        atomic_fetch_sub(&cnt[1], 1);
        BDMPI_Exit_critical();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (max_seen > nr) {
        fprintf(stderr, "rank %d saw %d ranks running with -nr %d\n", rank, max_seen, nr);
        bad = 1;
    }
    if (max_crit > nc) {
        fprintf(stderr, "rank %d saw %d ranks in a critical section with -nc %d\n", rank, max_crit,
                nc);
        bad = 1;
    }
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (lrank == 0)
        unlink(path);
    if (rank == 0) {
        printf("%s runnable_limit (nr=%d nc=%d)\n", tot ? "FAIL" : "PASS", nr, nc);
    }
    MPI_Finalize();
    return tot ? 1 : 0;
}
