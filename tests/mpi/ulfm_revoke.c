/* MPIX_Comm_revoke without failures: one rank revokes a communicator while
 * the others wait in a receive on it that no message will match; their
 * receives (a blocking one on some ranks, a nonblocking one on others)
 * fail with MPIX_ERR_REVOKED, without any of them calling anything
 * collective.  Afterwards every member sees it revoked: communication on
 * it (a barrier, sends and receives even with MPI_PROC_NULL, a duplicate)
 * fails with MPIX_ERR_REVOKED, while MPIX_Comm_agree and MPIX_Comm_shrink
 * still work, and the shrunk communicator communicates normally.  Then one
 * rank revokes a communicator on which the others are calling collectives
 * (a barrier, and an all-reduce large enough to go through BDMPI's master):
 * theirs fail with MPIX_ERR_REVOKED too.  Last, an intercommunicator that
 * every member revokes shrinks to one that works. */
#include "mtest.h"

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
#define HAVE_IS_REVOKED 0
#else
#define HAVE_IS_REVOKED 1
#endif

static int err_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "ulfm_revoke");
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
    /* MPICH 4.0's ch4 device declares the ULFM calls but asserts in them. */
    if (mtest_rank_ == 0)
        printf("SKIP %s: MPICH before 4.2 does not implement ULFM in ch4\n", mtest_name_);
    MPI_Finalize();
    return 77;
#endif
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int buf = 0;
    if (rank == 0) {
        /* Let the others reach their receives first, most of the time. */
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPIX_Comm_revoke(comm));
    } else {
        MPI_Request req;
        int rc;
        if (rank % 2) {
            MPI_Barrier(MPI_COMM_WORLD);
            rc = MPI_Recv(&buf, 1, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Irecv(&buf, 1, MPI_INT, 0, 7, comm, &req);
            CHECK_INT(rc, MPI_SUCCESS, "MPI_Irecv before the revoke");
            MPI_Barrier(MPI_COMM_WORLD);
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        CHECK_INT(err_class(rc), MPIX_ERR_REVOKED, "the pending receive's error class");
    }
#if HAVE_IS_REVOKED
    int flag = 0;
    CHECK_MPI(MPIX_Comm_is_revoked(comm, &flag));
    CHECK_INT(flag, 1, "MPIX_Comm_is_revoked");
#endif
    CHECK_INT(err_class(MPI_Barrier(comm)), MPIX_ERR_REVOKED, "MPI_Barrier on it");
    CHECK_INT(err_class(MPI_Send(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, comm)), MPIX_ERR_REVOKED,
              "MPI_Send to MPI_PROC_NULL on it");
    CHECK_INT(err_class(MPI_Recv(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, comm, MPI_STATUS_IGNORE)),
              MPIX_ERR_REVOKED, "MPI_Recv from MPI_PROC_NULL on it");
    CHECK_INT(err_class(MPI_Send(&buf, 1, MPI_INT, (rank + 1) % size, 0, comm)), MPIX_ERR_REVOKED,
              "MPI_Send on it");
    /* Revoking again is allowed. */
    CHECK_MPI(MPIX_Comm_revoke(comm));

    int agreed = rank == 0 ? 3 : 1;
    CHECK_MPI(MPIX_Comm_agree(comm, &agreed));
    CHECK_INT(agreed, size > 1 ? 1 : 3, "agree on the revoked communicator");
    MPI_Comm shrunk;
    CHECK_MPI(MPIX_Comm_shrink(comm, &shrunk));
    int sum = 0, one = 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK_INT(sum, size, "allreduce on the shrunk communicator");
    /* Messages on the new communicator flow again. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, shrunk,
                           MPI_STATUS_IGNORE));
    CHECK_INT(got, left, "ring on the shrunk communicator");
#if HAVE_IS_REVOKED
    flag = 1;
    CHECK_MPI(MPIX_Comm_is_revoked(shrunk, &flag));
    CHECK_INT(flag, 0, "MPIX_Comm_is_revoked(shrunk)");
#endif
    MPI_Comm_free(&shrunk);
    MPI_Comm_free(&comm);

    enum { BIG = 16384 };
    int *in = calloc(BIG, sizeof(int)), *out = calloc(BIG, sizeof(int));
    /* Several rounds with a different revoker each: the barrier's
     * messages pass through ranks whose calls already failed, and those
     * must not complete the call of a rank that never heard of the revoke
     * (a regression: they did, in about one run in four at -ns 8 -nr 4). */
    for (int round = 0; round < 8 && size > 1; round++) {
        MPI_Comm c2;
        MPI_Comm_dup(MPI_COMM_WORLD, &c2);
        MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
        int rc;
        if (rank == (size - 1 + round / 2) % size)
            CHECK_MPI(MPIX_Comm_revoke(c2));
        if (round % 2 == 0)
            rc = MPI_Barrier(c2);
        else
            rc = MPI_Allreduce(in, out, BIG, MPI_INT, MPI_SUM, c2);
        CHECK_INT(err_class(rc), MPIX_ERR_REVOKED,
                  round % 2 == 0 ? "a barrier on a communicator another rank revokes"
                                 : "an all-reduce on a communicator another rank revokes");
        MPI_Comm_free(&c2);
    }
    free(in);
    free(out);

    /* An intercommunicator of the even and the odd ranks, revoked by every
     * member (so none waits for a notice): collectives on it fail, and
     * MPIX_Comm_shrink and MPIX_Comm_ishrink give intercommunicators of the
     * same groups that work, in order, with its error handler.  (The
     * shrink was a split of the revoked intercommunicator, which failed
     * with MPIX_ERR_REVOKED.) */
    if (size > 1) {
        int color = rank % 2;
        MPI_Comm local, ic;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
        CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 9, &ic));
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        int lsize, rsize;
        MPI_Comm_size(ic, &lsize);
        MPI_Comm_remote_size(ic, &rsize);
        CHECK_MPI(MPIX_Comm_revoke(ic));
        CHECK_INT(err_class(MPI_Barrier(ic)), MPIX_ERR_REVOKED,
                  "MPI_Barrier on a revoked intercomm");
        for (int nb = 0; nb < 2; nb++) {
            MPI_Comm s = MPI_COMM_NULL;
            if (nb) {
                MPI_Request rq;
                CHECK_MPI(MPIX_Comm_ishrink(ic, &s, &rq));
                CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                CHECK_MPI(MPIX_Comm_shrink(ic, &s));
            }
            int inter = 0, ls = -1, rs = -1, r = -1;
            MPI_Comm_test_inter(s, &inter);
            MPI_Comm_size(s, &ls);
            MPI_Comm_remote_size(s, &rs);
            MPI_Comm_rank(s, &r);
            CHECK(inter && ls == lsize && rs == rsize && r == rank / 2,
                  "shrunk intercomm (nb=%d): inter %d, sizes %d/%d, rank %d", nb, inter, ls, rs, r);
            /* The sum of the remote group's world ranks. */
            int sum = -1, want = 0;
            for (int j = 0; j < rsize; j++)
                want += 2 * j + 1 - color;
            CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, s));
            CHECK_INT(sum, want, "allreduce on the shrunk intercomm");
            MPI_Errhandler eh;
            MPI_Comm_get_errhandler(s, &eh);
            CHECK(eh == MPI_ERRORS_RETURN, "the shrunk intercomm's error handler");
            MPI_Errhandler_free(&eh);
#if HAVE_IS_REVOKED
            int fl = 1;
            CHECK_MPI(MPIX_Comm_is_revoked(s, &fl));
            CHECK_INT(fl, 0, "MPIX_Comm_is_revoked(shrunk intercomm)");
#endif
            MPI_Comm_free(&s);
        }
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }
    return mtest_finalize();
}
