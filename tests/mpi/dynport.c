/*
 * dynport: MPI_Open_port, MPI_Comm_accept and MPI_Comm_connect between
 * two groups of one job (MPI 4.1 section 11.4), MPI_Comm_disconnect.
 *
 * The even and the odd world ranks form two groups.  Rank 0 (the even
 * group's rank 0) opens a port and sends its name to world rank 1; the
 * even group accepts on it (root 0), the odd group connects (root 0).
 * Both sides check the intercommunicator's sizes, exchange point-to-point
 * messages (local rank r sends to remote rank r % remote size), run an
 * Allreduce across it and MPI_Intercomm_merge; then a second connection
 * through the same port (the odd group accepting this time is not allowed:
 * the port is the even root's) gives a second, distinct intercommunicator.
 * Closing a port that is not open fails.  With one rank
 * only the port calls and the error are checked.
 */
#include "mtest.h"

static void exercise(MPI_Comm ic, int me, int nl, int nr, int even)
{
    int s = -1, rs = -1, inter = 0;
    MPI_Comm_test_inter(ic, &inter);
    CHECK(inter, "not an intercommunicator");
    MPI_Comm_size(ic, &s);
    MPI_Comm_remote_size(ic, &rs);
    CHECK_INT(s, nl, "local size");
    CHECK_INT(rs, nr, "remote size");
    /* Every remote rank r' with r' % nl == me sends to me. */
    int v = 1000 * even + me;
    MPI_Request req;
    MPI_Isend(&v, 1, MPI_INT, me % nr, 7, ic, &req);
    for (int r = 0; r < nr; r++) {
        if (r % nl != me)
            continue;
        int x = -1;
        MPI_Recv(&x, 1, MPI_INT, r, 7, ic, MPI_STATUS_IGNORE);
        CHECK_INT(x, 1000 * !even + r, "message from the remote group");
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK_INT(sum, nr, "Allreduce: the remote group's sum");
    MPI_Comm m;
    MPI_Intercomm_merge(ic, !even, &m);
    int mr = -1, ms = -1;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    CHECK_INT(ms, nl + nr, "merged size");
    CHECK_INT(mr, even ? me : nr + me, "merged rank (even group first)");
    MPI_Comm_free(&m);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "dynport");
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";
    int rc = MPI_SUCCESS;
    if (rank == 0)
        rc = MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mtest_dynproc_unavailable(rc);
    CHECK_INT(rc, MPI_SUCCESS, "MPI_Open_port");
    /* The class is not specified; the call must fail. */
    CHECK(MPI_Close_port("no-such-port") != MPI_SUCCESS,
          "closing a port that is not open succeeded");
    if (size < 2) {
        CHECK(port[0] != 0, "empty port name");
        CHECK_MPI(MPI_Close_port(port));
        return mtest_finalize();
    }
    int even = rank % 2 == 0;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, !even, rank, &half);
    int me, nl, nr = even ? size / 2 : (size + 1) / 2;
    MPI_Comm_rank(half, &me);
    MPI_Comm_size(half, &nl);
    if (rank == 0) {
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int round = 0; round < 2; round++) {
        MPI_Comm ic = MPI_COMM_NULL;
        if (even)
            CHECK_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic));
        else
            CHECK_MPI(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic));
        if (ic == MPI_COMM_NULL)
            break;
        exercise(ic, me, nl, nr, even);
        CHECK_MPI(MPI_Comm_disconnect(&ic));
        CHECK(ic == MPI_COMM_NULL, "MPI_Comm_disconnect did not set MPI_COMM_NULL");
    }
    if (rank == 0)
        CHECK_MPI(MPI_Close_port(port));
    MPI_Comm_free(&half);
    return mtest_finalize();
}
