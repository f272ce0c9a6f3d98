/* dedup_table.c - ranks that hold identical data (issue 17).
 *
 * usage: dedup_table TABLE_MIB OWN_MIB [ksm|kill]
 *
 * Every rank allocates a table of TABLE_MIB MiB whose content is the same on
 * every rank, and OWN_MIB MiB of data of its own; both are managed memory.
 *
 * Storage (default mode), run under a budget smaller than the ranks' data
 * so that blocked ranks are unloaded:
 *   1. three rounds of checking everything, a barrier after each (the
 *      ranks unload each other);
 *   2. checkpoint: the bytes the ranks have written to storage so far, from
 *      /proc/self/io (write_bytes) summed over the ranks, printed by rank 0
 *      as "CHECKPOINT write_bytes N" (the script compares it with
 *      -mem-dedup on and off);
 *   3. every rank changes its own copy of the table: the words of every
 *      fourth 64K block, offset by its rank, get rank + 1 added (so each
 *      rank's table differs from the others' in a quarter of its blocks and
 *      still equals some of them elsewhere);
 *   4. three more rounds of checking everything, word by word, and a global
 *      sum compared with the one computed from the formula.
 * KSM (mode "ksm"), run with everything fitting in memory: after the data
 * is written, rank 0 waits until the kernel has merged the tables (summing
 * ksm_merging_pages of /proc/PID/ksm_stat over the ranks), up to 120 s, and
 * prints the ranks' Pss_Anon sum before and after ("KSM pss_before B
 * pss_after A merged M"); then steps 3 and 4 run as above.  It prints
 * "SKIP ksm" where the ranks' memory is not mergeable (PR_GET_MEMORY_MERGE
 * says 0: no KSM, or -mem-share off).
 * Mode "kill": the last rank kills itself (SIGKILL) right after the
 * checkpoint, while the others hold references on the node's store: the
 * job must end and leave nothing behind (dedup.sh checks).
 * Ends with "PASS dedup_table" when every check held. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#ifndef PR_GET_MEMORY_MERGE
#define PR_GET_MEMORY_MERGE 68
#endif

#define BLOCK_WORDS 8192 /* 64 KiB */

static int rank, nranks;

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static uint64_t table_word(size_t j, int changed)
{
    uint64_t v = mix(j);
    if (changed && (j / BLOCK_WORDS) % 4 == (size_t)rank % 4)
        v += (uint64_t)rank + 1;
    return v;
}

static uint64_t own_word(size_t j) { return mix(j ^ ((uint64_t)(rank + 1) << 40)); }

static long check(const uint64_t *t, size_t nt, const uint64_t *d, size_t nd, int changed,
                  uint64_t *sum)
{
    long bad = 0;
    uint64_t s = 0;
    for (size_t j = 0; j < nt; j++) {
        bad += t[j] != table_word(j, changed);
        s += t[j];
    }
    for (size_t j = 0; j < nd; j++) {
        bad += d[j] != own_word(j);
        s += d[j];
    }
    *sum = s;
    return bad;
}

static unsigned long long proc_num(int pid, const char *file, const char *key)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strstr(buf, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static int fail(const char *what, long n)
{
    printf("FAIL rank %d: %s (%ld)\n", rank, what, n);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 3)
        return fail("usage: dedup_table TABLE_MIB OWN_MIB [ksm|kill]", 0);
    int ksm = argc > 3 && !strcmp(argv[3], "ksm");
    size_t nt = (size_t)atol(argv[1]) << 17, nd = (size_t)atol(argv[2]) << 17; /* words */
    uint64_t *t = malloc(nt * 8), *d = malloc(nd * 8);
    if (!t || !d)
        return fail("malloc", 0);
    for (size_t j = 0; j < nt; j++)
        t[j] = table_word(j, 0);
    for (size_t j = 0; j < nd; j++)
        d[j] = own_word(j);
    uint64_t sum;
    if (ksm) {
        int on = prctl(PR_GET_MEMORY_MERGE, 0, 0, 0, 0) == 1, all;
        MPI_Allreduce(&on, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (rank == 0)
                printf("SKIP ksm: the ranks' memory is not mergeable (PR_GET_MEMORY_MERGE)\n");
            MPI_Finalize();
            return 0;
        }
        int pid = getpid(), *pids = malloc(sizeof(int) * (size_t)nranks);
        MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            unsigned long long before = 0, after = 0, merged = 0;
            for (int r = 0; r < nranks; r++)
                before += proc_num(pids[r], "smaps_rollup", "Pss_Anon:");
            /* every rank's copy of the table maps the merged pages (the
             * count is per process): nine tenths of n tables */
            unsigned long long want = (unsigned long long)nranks * nt * 8 / 4096 * 9 / 10;
            for (int s = 0; s < 1200 && merged < want; s++) {
                struct timespec ts = {0, 100000000};
                nanosleep(&ts, NULL);
                merged = 0;
                for (int r = 0; r < nranks; r++)
                    merged += proc_num(pids[r], "ksm_stat", "ksm_merging_pages ");
            }
            for (int r = 0; r < nranks; r++)
                after += proc_num(pids[r], "smaps_rollup", "Pss_Anon:");
            printf("KSM pss_before %llu pss_after %llu merged %llu (kB, kB, pages)\n", before,
                   after, merged);
        }
        free(pids);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        for (int round = 0; round < 3; round++) {
            long bad = check(t, nt, d, nd, 0, &sum);
            if (bad)
                return fail("data differs before the change", bad);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        unsigned long long w = proc_num(getpid(), "io", "write_bytes: "), tot = 0;
        MPI_Reduce(&w, &tot, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("CHECKPOINT write_bytes %llu\n", tot);
        fflush(stdout);
        if (argc > 3 && !strcmp(argv[3], "kill") && rank == nranks - 1)
            kill(getpid(), SIGKILL);
    }
    /* every rank changes its own copy */
    for (size_t j = 0; j < nt; j++)
        if ((j / BLOCK_WORDS) % 4 == (size_t)rank % 4)
            t[j] += (uint64_t)rank + 1;
    for (int round = 0; round < 3; round++) {
        MPI_Barrier(MPI_COMM_WORLD);
        long bad = check(t, nt, d, nd, 1, &sum);
        if (bad)
            return fail("data differs after the change", bad);
    }
    uint64_t expect = 0, total = 0, expect_total = 0;
    for (size_t j = 0; j < nt; j++)
        expect += table_word(j, 1);
    for (size_t j = 0; j < nd; j++)
        expect += own_word(j);
    MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&expect, &expect_total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (total != expect_total)
        return fail("global sum differs", 0);
    free(t);
    free(d);
    if (rank == 0)
        printf("PASS dedup_table\n");
    MPI_Finalize();
    return 0;
}
