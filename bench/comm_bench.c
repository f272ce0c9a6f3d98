/* comm_bench: the cost of communicator creation, the loop of MPICH's
 * ctxalloc test made parameterized.  Every rank of MPI_COMM_WORLD runs
 *   dup      N x { MPI_Comm_dup(WORLD, &c); MPI_Comm_free(&c); }
 *   dupkeep  MPI_Comm_dup(WORLD) kept, 1000 at a time (MPICH allows 2048
 *            communicators), then freed; N in all
 *   split    N x { MPI_Comm_split(WORLD, rank % 2, rank, &c); MPI_Comm_free(&c); }
 * and rank 0 prints "RESULT test 0 microseconds-per-iteration us" (the
 * best of --reps repetitions; each repetition ends with a barrier, so the
 * slowest rank counts).  A communicator made this way is used once (a
 * barrier on it every 64th iteration) so that a lazy implementation
 * cannot skip the work.
 *   comm_bench [--n N] [--reps R] [--tests dup,dupkeep,split] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_n = 10000, g_reps = 3;

static int wanted(const char *list, const char *t)
{
    if (!list)
        return 1;
    size_t n = strlen(t);
    for (const char *p = list; (p = strstr(p, t)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
            return 1;
    return 0;
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "comm_bench: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double t_dup(void)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < g_n; i++) {
        MPI_Comm c;
        check(MPI_Comm_dup(MPI_COMM_WORLD, &c), "MPI_Comm_dup");
        if (i % 64 == 0)
            check(MPI_Barrier(c), "MPI_Barrier");
        check(MPI_Comm_free(&c), "MPI_Comm_free");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double t_dupkeep(void)
{
    enum { KEEP = 1000 };
    MPI_Comm *c = malloc(KEEP * sizeof *c);
    if (!c)
        MPI_Abort(MPI_COMM_WORLD, 2);
    double t0 = MPI_Wtime();
    for (int done = 0; done < g_n;) {
        int k = g_n - done < KEEP ? g_n - done : KEEP;
        for (int i = 0; i < k; i++) {
            check(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]), "MPI_Comm_dup");
            if (i % 64 == 0)
                check(MPI_Barrier(c[i]), "MPI_Barrier");
        }
        for (int i = 0; i < k; i++)
            check(MPI_Comm_free(&c[i]), "MPI_Comm_free");
        done += k;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    free(c);
    return t;
}

static double t_split(void)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double t0 = MPI_Wtime();
    for (int i = 0; i < g_n; i++) {
        MPI_Comm c;
        check(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c), "MPI_Comm_split");
        if (i % 64 == 0)
            check(MPI_Barrier(c), "MPI_Barrier");
        check(MPI_Comm_free(&c), "MPI_Comm_free");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *tests = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--n") && v)
            g_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && v)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tests") && v)
            tests = argv[++i];
        else {
            fprintf(stderr, "usage: comm_bench [--n N] [--reps R] [--tests dup,dupkeep,split]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (g_n < 1 || g_reps < 1)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static const struct {
        const char *name;
        double (*fn)(void);
    } all[] = {{"dup", t_dup}, {"dupkeep", t_dupkeep}, {"split", t_split}};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        if (!wanted(tests, all[k].name))
            continue;
        double best = 1e30;
        for (int r = 0; r < g_reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = all[k].fn();
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (t < best)
                best = t;
        }
        if (rank == 0)
            printf("RESULT %s 0 %.3f us\n", all[k].name, best / g_n * 1e6);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
