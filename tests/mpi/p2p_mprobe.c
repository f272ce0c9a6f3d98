/*
 * p2p_mprobe: matched probe and receive (MPI 3.1 3.8.2-3.8.3), cancelling
 * sends (3.8.4), MPI_Isendrecv(_replace) (MPI 4.0 3.10) and the
 * MPI_LASTUSEDCODE attribute (8.5).
 *
 *  1. MPI_Mprobe takes the message out of matching: a receive posted after
 *     it gets the next message, MPI_Mrecv the probed one; status fields
 *     and counts; a large message (through a spill file).
 *  2. MPI_Improbe polls until a message is there; MPI_Imrecv and MPI_Wait;
 *     MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC (not a negative handle) and a
 *     proc-null status; the
 *     single-completion calls leave the status's MPI_ERROR alone.
 *  3. MPI_Mrecv into a buffer too small is MPI_ERR_TRUNCATE (errors
 *     return); MPI_Mrecv of MPI_MESSAGE_NULL is an error.
 *  4. MPI_Cancel of an Isend, Issend, Ibsend, a started persistent send and
 *     a large (spilled) Isend to a rank of this node that has not received
 *     it succeeds (MPI_Test_cancelled) and the message is gone; once
 *     received, a send cannot be cancelled.  To any rank: when the cancel
 *     fails the message arrives, and only then.
 *  5. MPI_Isendrecv and MPI_Isendrecv_replace around a ring.
 *  6. MPI_LASTUSEDCODE follows MPI_Add_error_class and MPI_Add_error_code.
 */
#include "mtest.h"

static int rank, size;

static void matched(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a[3] = {rank, 1, 2}, b[3] = {rank, 3, 4}, x[3], y[3];
    MPI_Request rq[2];
    MPI_Status st;
    MPI_Message msg;
    int n;
    MPI_Isend(a, 3, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(b, 2, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[1]);
    CHECK_MPI(MPI_Mprobe(left, 5, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe gave no message");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 5, "Mprobe status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_INT(n, 3, "count of the probed message");
    /* the probed message is out of matching: this receive gets the next */
    CHECK_MPI(MPI_Recv(y, 3, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 2 && y[0] == left && y[1] == 3, "receive after Mprobe got %d ints (%d %d)", n, y[0],
          y[1]);
    CHECK_MPI(MPI_Mrecv(x, 3, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "message handle not MPI_MESSAGE_NULL after Mrecv");
    CHECK(x[0] == left && x[1] == 1 && x[2] == 2, "Mrecv data %d %d %d", x[0], x[1], x[2]);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 5, "Mrecv status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);

    /* a large message */
    int big = 1 << 18;
    int *s = malloc((size_t)big * sizeof(int)), *r = malloc((size_t)big * sizeof(int));
    for (int i = 0; i < big; i++)
        s[i] = rank * 7 + i;
    MPI_Request q;
    MPI_Isend(s, big, MPI_INT, right, 6, MPI_COMM_WORLD, &q);
    CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &msg, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK_INT(n, big, "count of the large probed message");
    CHECK_MPI(MPI_Mrecv(r, big, MPI_INT, &msg, MPI_STATUS_IGNORE));
    int bad = 0;
    for (int i = 0; i < big; i++)
        bad += r[i] != left * 7 + i;
    CHECK_INT(bad, 0, "wrong ints in the large Mrecv");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    free(s);
    free(r);
}

static void immediate(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double v = rank + 0.5, w = 0;
    MPI_Request q, rq;
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    int flag = 0, n;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Improbe(left, 7, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(!flag && msg == MPI_MESSAGE_NULL, "Improbe found a message not yet sent");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Isend(&v, 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &q);
    while (!flag)
        CHECK_MPI(MPI_Improbe(left, 7, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "Improbe status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_MPI(MPI_Imrecv(&w, 1, MPI_DOUBLE, &msg, &rq));
    CHECK(msg == MPI_MESSAGE_NULL, "message handle not MPI_MESSAGE_NULL after Imrecv");
    st.MPI_ERROR = MPI_ERR_DIMS;
    CHECK_MPI(MPI_Wait(&rq, &st));
    CHECK(w == left + 0.5, "Imrecv data %g", w);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "Imrecv status %d %d", st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS, "MPI_ERROR after MPI_Wait");
    MPI_Wait(&q, MPI_STATUS_IGNORE);

    /* MPI_PROC_NULL */
    st.MPI_ERROR = MPI_ERR_DIMS;
    CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 7, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gave message %d", (int)msg);
    /* An integer handle reads the same as an unsigned integer of its size
     * and widened to a pointer-sized one (mpi4py compares the two): it is
     * not negative. */
    if (sizeof(MPI_Message) == sizeof(uint32_t)) {
        uint32_t u;
        memcpy(&u, &msg, sizeof u);
        CHECK((uint64_t)u == (uint64_t)(uintptr_t)msg,
              "MPI_MESSAGE_NO_PROC %d is negative: %llu as unsigned, %llu widened", (int)msg,
              (unsigned long long)u, (unsigned long long)(uintptr_t)msg);
    }
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG &&
              st.MPI_ERROR == MPI_ERR_DIMS,
          "Mprobe(MPI_PROC_NULL) status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
    w = 3;
    CHECK_MPI(MPI_Mrecv(&w, 1, MPI_DOUBLE, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && w == 3 && st.MPI_SOURCE == MPI_PROC_NULL,
          "Mrecv of MPI_MESSAGE_NO_PROC");
    MPI_Get_count(&st, MPI_DOUBLE, &n);
    CHECK_INT(n, 0, "count of a proc-null Mrecv");
    flag = 0;
    CHECK_MPI(MPI_Improbe(MPI_PROC_NULL, 7, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL)");
    CHECK_MPI(MPI_Imrecv(&w, 1, MPI_DOUBLE, &msg, &rq));
    CHECK_MPI(MPI_Wait(&rq, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv of MPI_MESSAGE_NO_PROC: source %d",
          st.MPI_SOURCE);
}

static void errors(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a[4] = {1, 2, 3, 4}, b[2], cls = -1, rc;
    MPI_Request q;
    MPI_Message msg;
    MPI_Status st;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Isend(a, 4, MPI_INT, right, 8, MPI_COMM_WORLD, &q);
    CHECK_MPI(MPI_Mprobe(left, 8, MPI_COMM_WORLD, &msg, &st));
    rc = MPI_Mrecv(b, 2, MPI_INT, &msg, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "Mrecv into 2 of 4 ints: class %d", cls);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    msg = MPI_MESSAGE_NULL;
    rc = MPI_Mrecv(b, 2, MPI_INT, &msg, &st);
    CHECK(rc != MPI_SUCCESS, "Mrecv of MPI_MESSAGE_NULL succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Cancel a send to dst (on this node) before anyone receives it. */
static void cancel_one(const char *what, MPI_Request *q)
{
    MPI_Status st;
    int flag = 0;
    CHECK_MPI(MPI_Cancel(q));
    CHECK_MPI(MPI_Wait(q, &st));
    CHECK_MPI(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "%s not cancelled", what);
}

/* Is world rank r on this node (in my MPI_COMM_TYPE_SHARED communicator)? */
static int near(MPI_Group wg, MPI_Group ng, int r)
{
    int nr = MPI_UNDEFINED;
    MPI_Group_translate_ranks(wg, 1, &r, ng, &nr);
    return nr != MPI_UNDEFINED;
}

static void cancels(void)
{
    /* The partner: the next rank.  A send to a rank of this node must be
     * cancellable before that rank posts a receive for it; to another node
     * (BDMPI with -nn) it may fail, and then the message arrives.  MPICH
     * 4.0 does not cancel sends: the strict part is for BDMPI only. */
    int dst = (rank + 1) % size, src = (rank + size - 1) % size, flag, w = 0, got, theirs;
    MPI_Comm node;
    MPI_Group wg, ng;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    int mpich = mtest_is_mpich();
    int to_near = near(wg, ng, dst) && !mpich, from_near = near(wg, ng, src) && !mpich;
    int pair_near = size > 1 && rank < 2 && near(wg, ng, 1 - rank) && !mpich;
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    int v = 42, v2 = 43, big = 1 << 17;
    int *bigbuf = calloc((size_t)big, sizeof(int));
    MPI_Request q, pq = MPI_REQUEST_NULL;
    MPI_Status st;
    /* phase 1: every rank sends and cancels; nobody receives yet */
    if (to_near) {
        MPI_Isend(&v, 1, MPI_INT, dst, 20, MPI_COMM_WORLD, &q);
        cancel_one("MPI_Isend", &q);
        MPI_Issend(&v, 1, MPI_INT, dst, 21, MPI_COMM_WORLD, &q);
        cancel_one("MPI_Issend", &q);
        int bsz = 1024 + MPI_BSEND_OVERHEAD;
        void *buf = malloc((size_t)bsz), *out;
        MPI_Buffer_attach(buf, bsz);
        MPI_Ibsend(&v, 1, MPI_INT, dst, 22, MPI_COMM_WORLD, &q);
        cancel_one("MPI_Ibsend", &q);
        MPI_Buffer_detach(&out, &bsz);
        free(buf);
        MPI_Send_init(&v, 1, MPI_INT, dst, 23, MPI_COMM_WORLD, &pq);
        MPI_Start(&pq);
        cancel_one("started MPI_Send_init", &pq);
        MPI_Isend(bigbuf, big, MPI_INT, dst, 24, MPI_COMM_WORLD, &q);
        cancel_one("large MPI_Isend", &q);
        MPI_Isend(&v, 1, MPI_INT, dst, 25, MPI_COMM_WORLD, &q);
        cancel_one("MPI_Isend", &q);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int tag = 20; tag <= 25; tag++) {
        MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "the message of a cancelled send (tag %d) arrived", tag);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* phase 2: the persistent send started again is received, and so is a
     * later message with the envelope of a cancelled one */
    if (to_near) {
        MPI_Start(&pq);
        MPI_Send(&v2, 1, MPI_INT, dst, 25, MPI_COMM_WORLD);
    }
    if (from_near) {
        MPI_Recv(&w, 1, MPI_INT, src, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_INT(w, 42, "persistent send started again");
        MPI_Recv(&w, 1, MPI_INT, src, 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_INT(w, 43, "message after a cancelled one");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (to_near) {
        CHECK_MPI(MPI_Cancel(&pq));
        CHECK_MPI(MPI_Wait(&pq, &st));
        MPI_Test_cancelled(&st, &flag);
        CHECK(!flag, "a received persistent send was cancelled");
        MPI_Request_free(&pq);
    }
    free(bigbuf);

    /* A synchronous send the receiver has already seen (it took a later
     * message from the same sender) but not matched is still cancellable:
     * its MPI_Wait must return (MPI 3.1 3.8.4). */
    if (pair_near) {
        int one = 1, z = 0;
        if (rank == 0) {
            MPI_Issend(&v, 1, MPI_INT, 1, 28, MPI_COMM_WORLD, &q);
            MPI_Send(&one, 1, MPI_INT, 1, 29, MPI_COMM_WORLD);
            MPI_Recv(&z, 1, MPI_INT, 1, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            cancel_one("MPI_Issend seen by its receiver", &q);
            MPI_Send(&one, 1, MPI_INT, 1, 31, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&z, 1, MPI_INT, 0, 29, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&one, 1, MPI_INT, 0, 30, MPI_COMM_WORLD);
            MPI_Recv(&z, 1, MPI_INT, 0, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Iprobe(0, 28, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag, "the cancelled synchronous send still arrived");
        }
    }

    /* Either cancelled, or it arrives (and only then). */
    v = 100 + rank;
    MPI_Isend(&v, 1, MPI_INT, dst, 26, MPI_COMM_WORLD, &q);
    CHECK_MPI(MPI_Cancel(&q));
    CHECK_MPI(MPI_Wait(&q, &st));
    MPI_Test_cancelled(&st, &flag);
    MPI_Sendrecv(&flag, 1, MPI_INT, dst, 27, &theirs, 1, MPI_INT, src, 27, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (!theirs) {
        MPI_Recv(&got, 1, MPI_INT, src, 26, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_INT(got, 100 + src, "the send whose cancel failed");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Iprobe(src, 26, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a message of a cancelled send arrived");
    /* received before the cancel: the cancel fails */
    MPI_Isend(&v, 1, MPI_INT, dst, 28, MPI_COMM_WORLD, &q);
    MPI_Recv(&got, 1, MPI_INT, src, 28, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Cancel(&q));
    CHECK_MPI(MPI_Wait(&q, &st));
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "a received send was cancelled");
}

static void isendrecv(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int s[2] = {rank, -rank}, r[2] = {0, 0}, x[3] = {rank, rank + 1, rank + 2};
    MPI_Request q;
    MPI_Status st;
    CHECK_MPI(MPI_Isendrecv(s, 2, MPI_INT, right, 30, r, 2, MPI_INT, left, 30, MPI_COMM_WORLD, &q));
    CHECK_MPI(MPI_Wait(&q, &st));
    CHECK(r[0] == left && r[1] == -left, "Isendrecv got %d %d", r[0], r[1]);
    if (!mtest_is_mpich()) /* MPICH 4.0.2 reports the wrong tag */
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 30, "Isendrecv status %d %d", st.MPI_SOURCE,
              st.MPI_TAG);
    CHECK_MPI(MPI_Isendrecv_replace(x, 3, MPI_INT, right, 31, left, 31, MPI_COMM_WORLD, &q));
    CHECK_MPI(MPI_Wait(&q, &st));
    CHECK(x[0] == left && x[2] == left + 2, "Isendrecv_replace got %d %d", x[0], x[2]);
    if (!mtest_is_mpich()) { /* MPICH 4.0.2 crashes on it */
        CHECK_MPI(MPI_Isendrecv(s, 2, MPI_INT, MPI_PROC_NULL, 32, r, 2, MPI_INT, MPI_PROC_NULL, 32,
                                MPI_COMM_WORLD, &q));
        CHECK_MPI(MPI_Wait(&q, &st));
        CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL, "Isendrecv with MPI_PROC_NULL: source");
    }
}

static void lastused(void)
{
    int *v = NULL, flag = 0, cls, code;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && v && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE: flag %d value %d", flag,
          v ? *v : -1);
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= cls, "MPI_LASTUSEDCODE %d below the added class %d", *v, cls);
    CHECK_MPI(MPI_Add_error_code(cls, &code));
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    if (!mtest_is_mpich()) /* MPICH 4.0 only follows the classes */
        CHECK(flag && *v >= code, "MPI_LASTUSEDCODE %d below the added code %d", *v, code);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_mprobe");
    rank = mtest_rank_;
    size = mtest_size_;
    matched();
    immediate();
    errors();
    cancels();
    isendrecv();
    lastused();
    return mtest_finalize();
}
