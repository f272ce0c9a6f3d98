/*
 * comm_from_group.c - a program of the Sessions Model only (no MPI_Init):
 * two sessions one after the other, each making communicators with
 * MPI_Comm_create_from_group from its "mpi://WORLD" group and from subsets
 * of it (even ranks, odd ranks, a reversed order), two creations with
 * different string tags over overlapping groups, and collectives on them.
 * Prints "PASS comm_from_group" from rank 0; every rank exits 1 on failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int errs;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            errs++;                                                                                \
            fprintf(stderr, "comm_from_group: line %d: ", __LINE__);                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static MPI_Session open_session(void)
{
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    CHECK(rc == MPI_SUCCESS, "MPI_Session_init rc %d", rc);
    return s;
}

static void close_session(MPI_Session *s)
{
    int rc = MPI_Session_finalize(s);
    CHECK(rc == MPI_SUCCESS && *s == MPI_SESSION_NULL, "MPI_Session_finalize rc %d", rc);
}

/* One round of work on session s; returns the world size, and the world
 * rank in *me. */
static int round_trip(MPI_Session s, int round, int *me)
{
    MPI_Group world, sub, rev;
    MPI_Comm wc, sc, rc2;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &world);
    MPI_Comm_create_from_group(world, "org.bdmpi.cfg.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &wc);
    int size, rank;
    MPI_Comm_size(wc, &size);
    MPI_Comm_rank(wc, &rank);
    *me = rank;

    /* Even or odd ranks: each rank is in one of the two groups. */
    int n = 0, *ranks = malloc(sizeof(int) * (size_t)size);
    for (int r = rank % 2; r < size; r += 2)
        ranks[n++] = r;
    MPI_Group_incl(world, n, ranks, &sub);
    MPI_Comm_create_from_group(sub, rank % 2 ? "org.bdmpi.cfg.odd" : "org.bdmpi.cfg.even",
                               MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc);
    /* The whole world again in reverse order, with another tag. */
    for (int r = 0; r < size; r++)
        ranks[r] = size - 1 - r;
    MPI_Group_incl(world, size, ranks, &rev);
    MPI_Comm_create_from_group(rev, "org.bdmpi.cfg.reversed", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                               &rc2);
    free(ranks);

    int ss, sr, sum = 0, want = 0;
    MPI_Comm_size(sc, &ss);
    MPI_Comm_rank(sc, &sr);
    CHECK(ss == n && sr == rank / 2, "round %d: sub communicator size %d rank %d", round, ss, sr);
    for (int r = rank % 2; r < size; r += 2)
        want += r * (round + 1);
    int mine = rank * (round + 1);
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, sc);
    CHECK(sum == want, "round %d: sum over the sub communicator %d want %d", round, sum, want);

    int rr, root_val = -1;
    MPI_Comm_rank(rc2, &rr);
    CHECK(rr == size - 1 - rank, "round %d: reversed rank %d", round, rr);
    if (rr == 0)
        root_val = rank * 7 + round;
    MPI_Bcast(&root_val, 1, MPI_INT, 0, rc2);
    CHECK(root_val == (size - 1) * 7 + round, "round %d: bcast over the reversed got %d", round,
          root_val);

    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, wc);
    errs = total;
    MPI_Comm_free(&rc2);
    MPI_Comm_free(&sc);
    MPI_Comm_free(&wc);
    MPI_Group_free(&rev);
    MPI_Group_free(&sub);
    MPI_Group_free(&world);
    return size;
}

int main(void)
{
    int me = 0;
    /* Two sessions open at once; the first ends before the second works. */
    MPI_Session a = open_session();
    round_trip(a, 0, &me);
    MPI_Session b = open_session();
    close_session(&a);
    round_trip(b, 1, &me);
    close_session(&b);
#if !defined(MPICH_VERSION)
    /* Again after every session has ended (MPI 4.0 11.3.1 allows it;
     * MPICH 4.0.2 crashes in it). */
    MPI_Session c = open_session();
    round_trip(c, 2, &me);
    close_session(&c);
#endif
    int flag = 1;
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized is true in a program of sessions only");
    if (me == 0)
        printf(errs ? "FAIL comm_from_group (%d errors)\n" : "PASS comm_from_group\n", errs);
    return errs ? 1 : 0;
}
