/*
 * sock_wait: a rank that waits outside MPI, in a system call, for a rank
 * that must run to end the wait (the pattern of mpi4py's testJoin).
 *
 * World ranks pair up (0 with 1, 2 with 3, ...; an odd last rank only
 * takes part in the barriers).  The even rank listens on 127.0.0.1 and
 * sends the port to its partner; after a barrier it sends the partner a
 * message and calls accept(), which blocks until the partner connects, and
 * then read(), which blocks until the partner writes.  The odd rank
 * connects only after that message, and writes after a short pause.  Where the MPI library lets only some ranks
 * run at a time and takes a rank's turn away only at MPI calls, the even
 * rank keeps its turn while it sleeps in accept, and its partner, waiting
 * for a turn, never connects: a hang (the harness timeout catches it).
 * Then both join their socket with MPI_Comm_join and swap a message, as
 * mpi4py does (skipped where this MPI cannot open a port).
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
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 0) < 0 ||
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
    mtest_init(&argc, &argv, "sock_wait");
    int me = mtest_rank_, np = mtest_size_;
    int partner = me ^ 1, even = !(me & 1);
    int paired = partner < np;

    int fd = -1, ls = -1, port = 0;
    if (paired && even) {
        ls = listen_socket(&port);
        CHECK(ls >= 0, "cannot listen on 127.0.0.1");
        MPI_Send(&port, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
    } else if (paired) {
        MPI_Recv(&port, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* The partner connects only after this message, sent just before the
     * accept, so the even rank is in accept (or about to be) whichever of
     * the two ran first. */
    if (paired && even) {
        MPI_Send(NULL, 0, MPI_INT, partner, 2, MPI_COMM_WORLD);
    } else if (paired) {
        MPI_Recv(NULL, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (paired && even && ls >= 0) {
        fd = accept(ls, NULL, NULL); /* sleeps until the partner connects */
        close(ls);
        CHECK(fd >= 0, "accept failed");
        int v = 0;
        ssize_t n = fd >= 0 ? read(fd, &v, sizeof v) : -1; /* until it writes */
        CHECK(n == (ssize_t)sizeof v && v == 1000 + partner, "read %zd bytes, value %d", n, v);
    } else if (paired) {
        fd = port > 0 ? connect_to(port) : -1;
        CHECK(fd >= 0, "cannot connect to port %d", port);
        mtest_spin(0.01);
        int v = 1000 + me;
        if (fd >= 0)
            CHECK(write(fd, &v, sizeof v) == (ssize_t)sizeof v, "write failed");
    }

    /* Joining opens ports: skip that part where this MPI cannot (mtest.h). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char pname[MPI_MAX_PORT_NAME];
    int rc = MPI_SUCCESS;
    if (me == 0 && (rc = MPI_Open_port(MPI_INFO_NULL, pname)) == MPI_SUCCESS)
        MPI_Close_port(pname);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && paired && fd >= 0) {
        MPI_Comm ic = MPI_COMM_NULL;
        CHECK_MPI(MPI_Comm_join(fd, &ic));
        CHECK(ic != MPI_COMM_NULL, "MPI_Comm_join gave MPI_COMM_NULL");
        if (ic != MPI_COMM_NULL) {
            int out = me, in = -1;
            CHECK_MPI(
                MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE));
            CHECK_INT(in, partner, "message from the joined partner");
            CHECK_MPI(MPI_Comm_disconnect(&ic));
        }
    }
    if (fd >= 0)
        close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    return mtest_finalize_note(rc == MPI_SUCCESS ? NULL : "(join skipped: no ports)");
}
