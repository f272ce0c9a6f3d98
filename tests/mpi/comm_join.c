/*
 * comm_join: MPI_Comm_join (MPI 4.1 section 11.8) between two processes
 * of the job, over a TCP connection on the loopback interface.
 *
 * World ranks pair up (0 with 1, 2 with 3, ...; an odd last rank only
 * takes part in the barriers).  The even rank of a pair listens on an
 * ephemeral port of 127.0.0.1 and sends the port number to its partner,
 * which connects and says so; the even rank accepts only then, so no
 * rank waits in a socket call for a partner that may not be running.
 * Both call MPI_Comm_join on their socket: each gets an intercommunicator
 * of one rank on each side, over which they swap a message and run a
 * broadcast rooted at the even rank.  The pairs join at the same time, and
 * twice, on two connections.  (Skipped where this MPI cannot open a port.)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "mtest.h"

static int listen_socket(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 4) < 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) < 0)
        return -1;
    *port = ntohs(a.sin_port);
    return s;
}

static int connect_to(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0)
        return -1;
    return s;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "comm_join");
    int me = mtest_rank_, np = mtest_size_;
    int partner = me ^ 1, even = !(me & 1);
    int paired = partner < np;

    /* Joining opens ports: skip where this MPI cannot (mtest.h). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME];
    int rc = MPI_SUCCESS;
    if (me == 0 && (rc = MPI_Open_port(MPI_INFO_NULL, port)) == MPI_SUCCESS)
        MPI_Close_port(port);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mtest_dynproc_unavailable(rc);

    for (int round = 0; round < 2; round++) {
        int fd = -1;
        if (paired && even) {
            int port = 0, ls = listen_socket(&port), ok = 0;
            CHECK(ls >= 0, "cannot listen on 127.0.0.1");
            MPI_Send(&port, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
            MPI_Recv(&ok, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(ok, "partner %d could not connect", partner);
            if (ls >= 0 && ok)
                fd = accept(ls, NULL, NULL);
            if (ls >= 0)
                close(ls);
        } else if (paired) {
            int port = 0;
            MPI_Recv(&port, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fd = port > 0 ? connect_to(port) : -1;
            int ok = fd >= 0;
            MPI_Send(&ok, 1, MPI_INT, partner, 2, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (paired && fd >= 0) {
            MPI_Comm ic = MPI_COMM_NULL;
            CHECK_MPI(MPI_Comm_join(fd, &ic));
            close(fd);
            CHECK(ic != MPI_COMM_NULL, "round %d: MPI_Comm_join gave MPI_COMM_NULL", round);
            if (ic != MPI_COMM_NULL) {
                int inter = 0, s = -1, rs = -1, r = -1;
                MPI_Comm_test_inter(ic, &inter);
                MPI_Comm_size(ic, &s);
                MPI_Comm_remote_size(ic, &rs);
                MPI_Comm_rank(ic, &r);
                CHECK(inter && s == 1 && rs == 1 && r == 0,
                      "round %d: inter %d size %d remote size %d rank %d", round, inter, s, rs, r);
                int out = 100 * round + me, in = -1;
                CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, ic,
                                       MPI_STATUS_IGNORE));
                CHECK_INT(in, 100 * round + partner, "message from the joined partner");
                int b = even ? 7000 + me : -1;
                CHECK_MPI(MPI_Bcast(&b, 1, MPI_INT, even ? MPI_ROOT : 0, ic));
                if (!even)
                    CHECK_INT(b, 7000 + partner, "broadcast from the even partner");
                CHECK_MPI(MPI_Comm_disconnect(&ic));
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return mtest_finalize();
}
