/* ULFM without failures (MPIX_Comm_agree, iagree, shrink, the failure
 * queries): agreement is a bitwise AND over all ranks that completes on
 * every rank; a nonblocking agreement matches only agreements, so ranks
 * may start it before or after another collective (here a barrier) in
 * different orders; shrink gives a congruent communicator; the failed
 * groups are empty.  MPICH before 4.2 lacks MPIX_Comm_iagree,
 * MPIX_Comm_get_failed and MPIX_Comm_ack_failed: those parts are skipped
 * there. */
#include "mtest.h"

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
#define HAVE_NEW_ULFM 0
#else
#define HAVE_NEW_ULFM 1
#endif

static void check_agree(MPI_Comm comm, const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* Every rank clears its own bit: the AND has the low min(size, 30) bits clear. */
    for (int round = 0; round < 3; round++) {
        int flag = 0x7fffffff & ~(1 << (rank % 30)), expect = 0x7fffffff;
        for (int r = 0; r < size && r < 30; r++)
            expect &= ~(1 << r);
        if (round == 1)
            flag = expect | (1 << 30); /* all equal but bit 30 on rank 0 only */
        if (round == 1 && rank != 0)
            flag = expect;
        CHECK_MPI(MPIX_Comm_agree(comm, &flag));
        CHECK(flag == expect, "%s: round %d: agree gave %#x, expected %#x", what, round, flag,
              expect);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "ulfm_basic");
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

    check_agree(comm, "dup of MPI_COMM_WORLD");
    check_agree(MPI_COMM_SELF, "MPI_COMM_SELF");
    /* Agreements between ordinary collectives keep both in step. */
    int sum = 0, one = 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK_INT(sum, size, "allreduce after agreements");

#if HAVE_NEW_ULFM
    /* A nonblocking agreement that one rank starts before a barrier and the
     * others after it: agreements match only each other. */
    for (int root = 0; root < size && root < 4; root++) {
        int flag;
        MPI_Request req;
        CHECK_MPI(MPI_Barrier(comm));
        if (rank == root) {
            flag = 0xb; /* 1011 */
            CHECK_MPI(MPIX_Comm_iagree(comm, &flag, &req));
            CHECK_MPI(MPI_Barrier(comm));
        } else {
            flag = 0xd; /* 1101 */
            CHECK_MPI(MPI_Barrier(comm));
            CHECK_MPI(MPIX_Comm_iagree(comm, &flag, &req));
        }
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_INT(flag, size > 1 ? 0x9 : 0xb, "iagree started around a barrier");
    }
    /* A blocking agreement on some ranks matches a nonblocking one on others. */
    {
        int flag = 6 | (rank == 0 ? 1 : 0), expect = size > 1 ? 6 : 7;
        if (rank % 2) {
            MPI_Request req;
            CHECK_MPI(MPIX_Comm_iagree(comm, &flag, &req));
            CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            CHECK_MPI(MPIX_Comm_agree(comm, &flag));
        }
        CHECK_INT(flag, expect, "agree on even ranks, iagree on odd ones");
    }
#endif

    /* Shrink: no process failed, so the same group. */
    MPI_Comm shrunk;
    CHECK_MPI(MPIX_Comm_shrink(comm, &shrunk));
    int res = -1, srank = -1, ssize = -1;
    MPI_Comm_compare(comm, shrunk, &res);
    CHECK_INT(res, MPI_CONGRUENT, "MPI_Comm_compare(comm, shrunk)");
    MPI_Comm_rank(shrunk, &srank);
    MPI_Comm_size(shrunk, &ssize);
    CHECK_INT(srank, rank, "rank in the shrunk communicator");
    CHECK_INT(ssize, size, "size of the shrunk communicator");
    sum = 0;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK_INT(sum, size * (size - 1) / 2, "allreduce on the shrunk communicator");
    check_agree(shrunk, "shrunk communicator");
    MPI_Comm_free(&shrunk);

    /* Failure queries: nothing failed. */
    MPI_Group g;
    int gsize = -1;
    CHECK_MPI(MPIX_Comm_failure_ack(comm));
    CHECK_MPI(MPIX_Comm_failure_get_acked(comm, &g));
    MPI_Group_size(g, &gsize);
    CHECK_INT(gsize, 0, "size of the acknowledged failed group");
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);
#if HAVE_NEW_ULFM
    gsize = -1;
    CHECK_MPI(MPIX_Comm_get_failed(comm, &g));
    MPI_Group_size(g, &gsize);
    CHECK_INT(gsize, 0, "size of the failed group");
    if (g != MPI_GROUP_EMPTY)
        MPI_Group_free(&g);
    int acked = -1;
    CHECK_MPI(MPIX_Comm_ack_failed(comm, size, &acked));
    CHECK_INT(acked, 0, "MPIX_Comm_ack_failed(size)");
    acked = -1;
    CHECK_MPI(MPIX_Comm_ack_failed(comm, 0, &acked));
    CHECK_INT(acked, 0, "MPIX_Comm_ack_failed(0)");
#endif

    /* An intercommunicator between the two halves: everyone agrees on a
     * value all contribute, with a different bit cleared per group. */
    if (size >= 2) {
        int color = rank < size / 2;
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? size / 2 : 0, 5, &inter);
        int flag = 7;
        CHECK_MPI(MPIX_Comm_agree(inter, &flag));
        CHECK_INT(flag, 7, "agree on an intercommunicator");
        MPI_Comm ishr;
        CHECK_MPI(MPIX_Comm_shrink(inter, &ishr));
        int rsize = -1;
        MPI_Comm_remote_size(ishr, &rsize);
        CHECK_INT(rsize, color ? size - size / 2 : size / 2, "remote size of the shrunk intercomm");
        MPI_Comm_free(&ishr);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_free(&comm);
    return mtest_finalize();
}
