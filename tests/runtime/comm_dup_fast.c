/* Communicator dups that need no collective (issue 12, session 15): the
 * members take contexts reserved by an earlier dup through the master, in
 * the same order.  Checks, with argv[1] iterations (default 600):
 *  - each dup of WORLD is a new, working communicator: an allreduce and a
 *    ring on it give the right answers, and its messages do not match
 *    another communicator's (same source and tag, received crosswise);
 *  - dups kept alive (more than one reservation's worth) all differ, and
 *    free in any order; dups of dups; MPI_Comm_idup and MPI_Comm_split
 *    between dups keep every member's count alike (else the contexts
 *    would differ and the collectives below hang or mismatch);
 *  - the error handler and attributes go with a dup.
 * Prints "PASS comm_dup_fast N" from rank 0.  With argv[2] "bare": only N
 * dups of WORLD, each freed at once, and nothing else (for counting the
 * requests they cost: comm_dup_fast.sh). */
#include <string.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int g_fail;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "rank %d: FAIL ", rank);                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            g_fail = 1;                                                                            \
        }                                                                                          \
    } while (0)

static int ring(MPI_Comm c, int rank, int size, int tag)
{
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, tag, &got, 1, MPI_INT,
                 (rank + size - 1) % size, tag, c, MPI_STATUS_IGNORE);
    return got;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 600;
    if (argc > 2 && !strcmp(argv[2], "bare")) {
        for (int i = 0; i < n; i++) {
            MPI_Comm a;
            MPI_Comm_dup(MPI_COMM_WORLD, &a);
            MPI_Comm_free(&a);
        }
        if (rank == 0)
            printf("PASS comm_dup_fast %d bare\n", n);
        MPI_Finalize();
        return 0;
    }
    int key;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    static int attr = 42;
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &attr);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < n && !g_fail; i++) {
        MPI_Comm a, b;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        if (i % 7 == 3) { /* a nonblocking dup between blocking ones */
            MPI_Request q;
            MPI_Comm_idup(MPI_COMM_WORLD, &b, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else if (i % 11 == 5) {
            MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &b);
        } else {
            MPI_Comm_dup(a, &b); /* a dup of a dup */
        }
        int sum = 0, me = rank + i;
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, b);
        CHECK(sum == size * (size - 1) / 2 + size * i, "iteration %d: allreduce gave %d", i, sum);
        CHECK(ring(a, rank, size, i) == (rank + size - 1) % size, "iteration %d: ring on a", i);
        /* The same source and tag on a and b, received b first. */
        int x = 1000 + rank, y = 2000 + rank, gx = -1, gy = -1;
        MPI_Request rq[2];
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Irecv(&gy, 1, MPI_INT, left, 5, b, &rq[0]);
        MPI_Irecv(&gx, 1, MPI_INT, left, 5, a, &rq[1]);
        MPI_Send(&x, 1, MPI_INT, right, 5, a);
        MPI_Send(&y, 1, MPI_INT, right, 5, b);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK(gx == 1000 + left && gy == 2000 + left, "iteration %d: crossed messages %d %d", i, gx,
              gy);
        if (i % 50 == 0) {
            int *v = NULL, flag = 0;
            MPI_Comm_get_attr(a, key, &v, &flag);
            CHECK(flag && v && *v == 42, "iteration %d: the attribute did not go with the dup", i);
            MPI_Errhandler eh;
            MPI_Comm_get_errhandler(a, &eh);
            CHECK(eh == MPI_ERRORS_RETURN, "iteration %d: the error handler did not", i);
            MPI_Errhandler_free(&eh);
        }
        if (i % 2)
            MPI_Comm_free(&a), MPI_Comm_free(&b);
        else
            MPI_Comm_free(&b), MPI_Comm_free(&a);
    }
    /* More dups alive at once than one reservation holds, freed out of order. */
    enum { KEEP = 300 };
    MPI_Comm *k = malloc(KEEP * sizeof *k);
    for (int i = 0; i < KEEP; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &k[i]);
    for (int i = 0; i < KEEP && !g_fail; i += 37) {
        int r = MPI_UNEQUAL;
        MPI_Comm_compare(k[i], MPI_COMM_WORLD, &r);
        CHECK(r == MPI_CONGRUENT, "kept dup %d: not congruent to WORLD (%d)", i, r);
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, k[i]);
        CHECK(sum == size * (size - 1) / 2, "kept dup %d: allreduce gave %d", i, sum);
        CHECK(ring(k[KEEP - 1 - i], rank, size, i) == (rank + size - 1) % size, "kept ring %d", i);
    }
    for (int i = 0; i < KEEP; i += 2)
        MPI_Comm_free(&k[i]);
    for (int i = KEEP - 1; i > 0; i -= 2)
        MPI_Comm_free(&k[i]);
    free(k);
    MPI_Comm_free_keyval(&key);
    int bad = g_fail;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !bad)
        printf("PASS comm_dup_fast %d\n", n);
    MPI_Finalize();
    return bad;
}
