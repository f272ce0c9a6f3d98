/*
 * p2p_zero_null: point-to-point calls with MPI_DATATYPE_NULL and count 0.
 *
 * A message of no data may name MPI_DATATYPE_NULL as its datatype (MPICH
 * accepts it, and mpi4py sends empty messages that way).  Each rank sends
 * such messages around a ring and to itself with every kind of send
 * (standard, synchronous, ready, buffered, nonblocking, persistent, large
 * count) and receives them with every kind of receive (blocking,
 * nonblocking, persistent, matched probe, Sendrecv, Sendrecv_replace);
 * the status says source, tag and 0 bytes.  A 4-byte message received
 * with MPI_DATATYPE_NULL and count 0 is truncated (MPI_ERR_TRUNCATE), and
 * a nonzero count with MPI_DATATYPE_NULL is still an error (MPI_ERR_TYPE).
 */
#include "mtest.h"

#define NUL MPI_DATATYPE_NULL

static void check_status(const MPI_Status *st, int src, int tag, const char *what)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && n == 0,
          "%s: source %d tag %d count %d, expected %d %d 0", what, st->MPI_SOURCE, st->MPI_TAG, n,
          src, tag);
}

/* The sends of one round, to dest, tags base..base+7. */
static void sends(int dest, int base, MPI_Comm comm, MPI_Request *r)
{
    CHECK_MPI(MPI_Isend(NULL, 0, NUL, dest, base + 0, comm, &r[0]));
    CHECK_MPI(MPI_Issend(NULL, 0, NUL, dest, base + 1, comm, &r[1]));
    CHECK_MPI(MPI_Send_init(NULL, 0, NUL, dest, base + 2, comm, &r[2]));
    CHECK_MPI(MPI_Start(&r[2]));
    CHECK_MPI(MPI_Bsend(NULL, 0, NUL, dest, base + 3, comm));
    CHECK_MPI(MPI_Isend_c(NULL, 0, NUL, dest, base + 4, comm, &r[3]));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_zero_null");
    MPI_Comm comm = MPI_COMM_WORLD;
    int me = mtest_rank_, np = mtest_size_;
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Status st;
    MPI_Request sr[4], rr[5];
    char what[64];
    static char bbuf[8 * MPI_BSEND_OVERHEAD + 64];
    void *old;
    int oldsize;
    CHECK_MPI(MPI_Buffer_attach(bbuf, (int)sizeof bbuf));

    for (int round = 0; round < 2; round++) {
        /* Round 0 around the ring, round 1 to oneself. */
        int dest = round ? me : right, src = round ? me : left, base = 10 * round;
        /* Receives: the first two posted before the sends, the others after. */
        CHECK_MPI(MPI_Irecv(NULL, 0, NUL, src, base + 0, comm, &rr[0]));
        CHECK_MPI(MPI_Recv_init(NULL, 0, NUL, src, base + 1, comm, &rr[1]));
        CHECK_MPI(MPI_Start(&rr[1]));
        sends(dest, base, comm, sr);
        CHECK_MPI(MPI_Recv(NULL, 0, NUL, src, base + 2, comm, &st));
        check_status(&st, src, base + 2, "Recv");
        MPI_Message msg;
        CHECK_MPI(MPI_Mprobe(src, base + 3, comm, &msg, &st));
        CHECK_MPI(MPI_Mrecv(NULL, 0, NUL, &msg, &st));
        check_status(&st, src, base + 3, "Mrecv");
        CHECK_MPI(MPI_Recv_c(NULL, 0, NUL, src, base + 4, comm, &st));
        check_status(&st, src, base + 4, "Recv_c");
        for (int i = 0; i < 2; i++) {
            CHECK_MPI(MPI_Wait(&rr[i], &st));
            snprintf(what, sizeof what, "round %d receive %d", round, i);
            check_status(&st, src, base + i, what);
        }
        CHECK_MPI(MPI_Waitall(4, sr, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Request_free(&rr[1]));
        CHECK_MPI(MPI_Request_free(&sr[2]));
    }

    /* Sendrecv and Sendrecv_replace around the ring; the ready send to a
     * receive posted before a barrier. */
    CHECK_MPI(MPI_Sendrecv(NULL, 0, NUL, right, 30, NULL, 0, NUL, left, 30, comm, &st));
    check_status(&st, left, 30, "Sendrecv");
    CHECK_MPI(MPI_Sendrecv_replace(NULL, 0, NUL, right, 31, left, 31, comm, &st));
    check_status(&st, left, 31, "Sendrecv_replace");
    CHECK_MPI(MPI_Irecv(NULL, 0, NUL, left, 32, comm, &rr[0]));
    CHECK_MPI(MPI_Barrier(comm));
    CHECK_MPI(MPI_Rsend(NULL, 0, NUL, right, 32, comm));
    CHECK_MPI(MPI_Wait(&rr[0], &st));
    check_status(&st, left, 32, "Rsend");
    /* A blocking synchronous send, to a receive already posted. */
    CHECK_MPI(MPI_Irecv(NULL, 0, NUL, 0, 33, MPI_COMM_SELF, &rr[0]));
    CHECK_MPI(MPI_Ssend(NULL, 0, NUL, 0, 33, MPI_COMM_SELF));
    CHECK_MPI(MPI_Wait(&rr[0], &st));
    check_status(&st, 0, 33, "Ssend on MPI_COMM_SELF");

    /* To and from MPI_PROC_NULL. */
    CHECK_MPI(MPI_Send(NULL, 0, NUL, MPI_PROC_NULL, 0, comm));
    CHECK_MPI(MPI_Recv(NULL, 0, NUL, MPI_PROC_NULL, 0, comm, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Recv from MPI_PROC_NULL: source %d", st.MPI_SOURCE);

    /* Errors: data received with MPI_DATATYPE_NULL and count 0 is
     * truncated; MPI_DATATYPE_NULL with a nonzero count is no datatype. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int data = 7, cls = -1;
    CHECK_MPI(MPI_Isend(&data, 1, MPI_INT, right, 40, comm, &sr[0]));
    int rc = MPI_Recv(NULL, 0, NUL, left, 40, comm, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "4 bytes into count 0 of MPI_DATATYPE_NULL: class %d", cls);
    CHECK_MPI(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
    rc = MPI_Send(&data, 1, NUL, right, 41, comm);
    cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_Send of count 1 of MPI_DATATYPE_NULL: class %d", cls);
    rc = MPI_Irecv(&data, 1, NUL, left, 41, comm, &rr[0]);
    cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_Irecv of count 1 of MPI_DATATYPE_NULL: class %d", cls);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    CHECK_MPI(MPI_Buffer_detach(&old, &oldsize));
    return mtest_finalize();
}
