/* MPI_Intercomm_create_from_groups (MPI 4.0 7.6.2): an intercommunicator of
 * two disjoint groups without any parent communicator.
 *
 * 1. From a session's mpi://WORLD group: even and odd ranks, leaders the
 *    last member of each group.  The result is an intercommunicator with
 *    the right local and remote sizes and ranks and the error handler
 *    given; messages cross it (each rank sends to remote rank
 *    (my rank % remote size), every remote rank receives from each sender
 *    that maps to it) and an MPI_Allreduce on it gives each group the sum
 *    over the other group.
 * 2. The same from MPI_COMM_WORLD's group (the World Model), low and high
 *    halves, twice with the same string tag one after the other.
 * 3. An error with MPI_ERRORS_RETURN: a local leader past the group. */
#include "mtest.h"

static int err_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* Check ic joins `lo` (this rank's group, my rank me in it) and `ro`. */
static void check_inter(MPI_Comm ic, int lsize, int me, int rsize, int lsum, int rsum,
                        const char *what)
{
    int flag = 0, n = -1, r = -1;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_Comm_size(ic, &n);
    CHECK_INT(n, lsize, "local size");
    MPI_Comm_rank(ic, &r);
    CHECK_INT(r, me, "local rank");
    MPI_Comm_remote_size(ic, &n);
    CHECK_INT(n, rsize, "remote size");
    /* point-to-point across */
    int to = me % rsize, token = 1000 + me, got;
    MPI_Request req;
    MPI_Isend(&token, 1, MPI_INT, to, 7, ic, &req);
    for (int src = 0; src < rsize; src++) {
        if (src % lsize != me)
            continue;
        MPI_Status st;
        got = -1;
        CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, src, 7, ic, &st));
        CHECK(got == 1000 + src && st.MPI_SOURCE == src, "%s: got %d from %d, expected %d from %d",
              what, got, st.MPI_SOURCE, 1000 + src, src);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* a collective across: each group gets the other's sum */
    int v = mtest_rank_, sum = -1;
    CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == rsum, "%s: Allreduce gave %d, expected %d (own group's sum %d)", what, sum, rsum,
          lsum);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "intercomm_from_groups");
    int rank = mtest_rank_, size = mtest_size_;
    if (size < 2)
        return mtest_finalize_note("(skipped: needs 2 ranks)");

    /* 1. evens and odds of a session's world */
    MPI_Session s;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group world, evens, odds;
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    int ne = (size + 1) / 2, no = size / 2, esum = 0, osum = 0;
    int *ranks = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < ne; i++)
        ranks[i] = 2 * i, esum += 2 * i;
    MPI_Group_incl(world, ne, ranks, &evens);
    for (int i = 0; i < no; i++)
        ranks[i] = 2 * i + 1, osum += 2 * i + 1;
    MPI_Group_incl(world, no, ranks, &odds);
    int even = rank % 2 == 0;
    MPI_Comm ic = MPI_COMM_NULL;
    CHECK_MPI(MPI_Intercomm_create_from_groups(
        even ? evens : odds, even ? ne - 1 : no - 1, even ? odds : evens, even ? no - 1 : ne - 1,
        "org.bdmpi.test.icfg.parity", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    if (ic != MPI_COMM_NULL) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        MPI_Comm_get_errhandler(ic, &eh);
        CHECK(eh == MPI_ERRORS_RETURN,
              "the intercommunicator's error handler is not the one given");
        if (eh != MPI_ERRHANDLER_NULL)
            MPI_Errhandler_free(&eh);
        check_inter(ic, even ? ne : no, rank / 2, even ? no : ne, even ? esum : osum,
                    even ? osum : esum, "parity");
        MPI_Comm_free(&ic);
    }

    /* 3. errors (each rank alone: nothing collective starts) */
    MPI_Comm bad = MPI_COMM_NULL;
    /* where an error of a call without a communicator goes (MPI_COMM_WORLD
     * in MPI 3.1, MPI_COMM_SELF in 4.0): returned from both */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    /* MPICH 4.0.2 does not check local_leader: it crashes (SIGSEGV) */
    if (!mtest_is_mpich()) {
        int rc = MPI_Intercomm_create_from_groups(even ? evens : odds, size, even ? odds : evens, 0,
                                                  "org.bdmpi.test.icfg.bad", MPI_INFO_NULL,
                                                  MPI_ERRORS_RETURN, &bad);
        CHECK_INT(err_class(rc), MPI_ERR_RANK, "a local_leader past the group's end");
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&odds);
    MPI_Group_free(&world);
    CHECK_MPI(MPI_Session_finalize(&s));

    /* 2. halves of MPI_COMM_WORLD's group, twice with one tag */
    MPI_Group wg, lo, hi;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int h = size / 2, losum = 0, hisum = 0;
    for (int i = 0; i < h; i++)
        ranks[i] = i, losum += i;
    MPI_Group_incl(wg, h, ranks, &lo);
    for (int i = h; i < size; i++)
        ranks[i - h] = i, hisum += i;
    MPI_Group_incl(wg, size - h, ranks, &hi);
    int low = rank < h;
    for (int round = 0; round < 2; round++) {
        ic = MPI_COMM_NULL;
        CHECK_MPI(MPI_Intercomm_create_from_groups(low ? lo : hi, 0, low ? hi : lo, 0,
                                                   "org.bdmpi.test.icfg.halves", MPI_INFO_NULL,
                                                   MPI_ERRORS_RETURN, &ic));
        if (ic != MPI_COMM_NULL) {
            check_inter(ic, low ? h : size - h, low ? rank : rank - h, low ? size - h : h,
                        low ? losum : hisum, low ? hisum : losum, "halves");
            MPI_Comm_free(&ic);
        }
    }
    MPI_Group_free(&lo);
    MPI_Group_free(&hi);
    MPI_Group_free(&wg);
    free(ranks);
    return mtest_finalize();
}
