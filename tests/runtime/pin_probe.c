/*
 * pin_probe: the CPUs a rank and its master may run on (-pin).
 *   pin_probe N   every rank checks that it may run on exactly N CPUs, the
 *                 same set as its master's (N 1: bound to one CPU);
 *                 exit 0 pass, 1 fail, 77 (skip) when N is 0: the test
 *                 runs where only one CPU is allowed, so -pin changes nothing.
 *   pin_probe N S also the scheduler slices (-master-slice): the master's is
 *                 S microseconds and the rank's the kernel's default (S 0:
 *                 the master's is the rank's); 77 where the kernel does
 *                 not show slices (/proc/PID/sched) or predates custom
 *                 slices (Linux 6.12).
 */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* se.slice of /proc/PID/sched in ns, or -1. */
static long long slice_of(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/sched", (int)pid);
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "se.slice", 8) == 0) {
            char *c = strchr(line, ':');
            if (c)
                v = atoll(c + 1);
        }
    fclose(f);
    return v;
}

static int kernel_has_custom_slice(void)
{
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
        return 0;
    return major > 6 || (major == 6 && minor >= 12);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, want = argc > 1 ? atoi(argv[1]) : -1, bad = 0, total;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (want <= 0) {
        MPI_Finalize();
        return 77;
    }
    cpu_set_t mine, master;
    if (sched_getaffinity(0, sizeof mine, &mine) < 0 ||
        sched_getaffinity(getppid(), sizeof master, &master) < 0) {
        perror("pin_probe: sched_getaffinity");
        bad = 1;
    } else if (CPU_COUNT(&mine) != want || !CPU_EQUAL(&mine, &master)) {
        fprintf(stderr, "pin_probe: rank %d may run on %d CPUs (%s its master's), expected %d\n",
                rank, CPU_COUNT(&mine), CPU_EQUAL(&mine, &master) ? "as" : "unlike", want);
        bad = 1;
    }
    int skip = 0;
    if (argc > 2) {
        long long s = atoll(argv[2]) * 1000, m = slice_of(getppid()), r = slice_of(getpid());
        if (m < 0 || r < 0 || !kernel_has_custom_slice())
            skip = 1;
        else if (s ? m != s || r == s : m != r) {
            fprintf(stderr,
                    "pin_probe: rank %d: master's slice %lld ns, mine %lld ns, expected %s\n", rank,
                    m, r, s ? "the master's -master-slice and mine the default" : "the same");
            bad = 1;
        }
    }
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!total && skip) {
        if (rank == 0)
            printf(
                "SKIP pin_probe: no scheduler slices to see here (/proc/PID/sched, Linux 6.12)\n");
        MPI_Finalize();
        return 77;
    }
    if (rank == 0)
        printf("%s pin_probe %d%s%s\n", total ? "FAIL" : "PASS", want, argc > 2 ? " slice " : "",
               argc > 2 ? argv[2] : "");
    MPI_Finalize();
    return total ? 1 : 0;
}
