/* Persistent requests (Send_init, Ssend_init, Recv_init, Start, Startall,
 * reuse over several rounds, inactive requests in Wait/Test/Waitall), MPI_Cancel
 * of an unmatched receive with MPI_Test_cancelled, MPI_Request_free of a send
 * and of a still-posted receive (which must still get its message), Rsend;
 * persistent requests whose derived datatypes were freed after the init. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_persistent");
    int rank = mtest_rank_, size = mtest_size_;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A ring of persistent requests reused for several rounds. */
    int out[4], in[4];
    MPI_Request rq[3];
    MPI_Recv_init(in, 4, MPI_INT, left, 7, MPI_COMM_WORLD, &rq[0]);
    MPI_Send_init(out, 4, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]);
    MPI_Ssend_init(out, 4, MPI_INT, right, 8, MPI_COMM_WORLD, &rq[2]);
    MPI_Status st;
    int flag = 0;
    /* Inactive: Wait and Test return at once with an empty status. */
    MPI_Wait(&rq[0], &st);
    CHECK(rq[0] != MPI_REQUEST_NULL, "Wait on an inactive persistent request freed it");
    MPI_Test(&rq[1], &flag, &st);
    CHECK(flag, "Test on an inactive persistent request: flag 0");
    for (int round = 0; round < 5; round++) {
        for (int k = 0; k < 4; k++)
            out[k] = rank * 100 + round * 10 + k;
        MPI_Startall(2, rq);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        for (int k = 0; k < 4; k++)
            CHECK(in[k] == left * 100 + round * 10 + k, "round %d: in[%d] = %d", round, k, in[k]);
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
              "a completed persistent request became MPI_REQUEST_NULL");
    }
    /* Synchronous persistent send, matched by an ordinary receive. */
    MPI_Start(&rq[2]);
    MPI_Recv(in, 4, MPI_INT, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
    CHECK(in[0] == left * 100 + 40, "ssend_init delivered %d", in[0]);
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&rq[k]);
    CHECK(rq[0] == MPI_REQUEST_NULL, "Request_free did not reset the handle");
    MPI_Barrier(MPI_COMM_WORLD);

    /* Cancel a receive nobody sends to. */
    MPI_Request r;
    int x = -1;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "a cancelled unmatched receive is not reported cancelled");
    CHECK(x == -1, "a cancelled receive wrote its buffer");

    /* Free a send request; free a posted receive, which must still get its
     * message (and must not steal the next one). */
    int y = -1, z = -1, v1 = rank + 1, v2 = rank + 2;
    MPI_Irecv(&y, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    MPI_Request s;
    MPI_Isend(&v1, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &s);
    MPI_Request_free(&s);
    MPI_Isend(&v2, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &s);
    MPI_Recv(&z, 1, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(z == left + 2, "the receive after a freed one got %d, expected %d", z, left + 2);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Ready mode: the receive is posted first. */
    MPI_Irecv(&z, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &r);
    MPI_Rsend(&v1, 1, MPI_INT, rank, 12, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(z == rank + 1, "rsend to self got %d", z);

    /* Derived datatypes freed right after MPI_Send_init / MPI_Recv_init: the
     * requests keep using them; other types created meanwhile may reuse the
     * freed handles. */
    {
        MPI_Datatype vt, rt, other[4];
        int vs[8], vr[8];
        MPI_Request pr[2];
        MPI_Type_vector(2, 1, 2, MPI_INT, &vt);
        MPI_Type_commit(&vt);
        MPI_Type_contiguous(2, MPI_INT, &rt);
        MPI_Type_commit(&rt);
        MPI_Send_init(vs, 2, vt, right, 13, MPI_COMM_WORLD, &pr[0]);
        MPI_Recv_init(vr, 2, rt, left, 13, MPI_COMM_WORLD, &pr[1]);
        MPI_Type_free(&vt);
        MPI_Type_free(&rt);
        for (int k = 0; k < 4; k++)
            MPI_Type_contiguous(k + 3, MPI_CHAR, &other[k]);
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < 8; k++) {
                vs[k] = rank * 1000 + round * 100 + k;
                vr[k] = -1;
            }
            MPI_Startall(2, pr);
            MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
            /* The vector's extent is 3 ints: vs elements 0, 2 and 3, 5 travel. */
            static const int idx[4] = {0, 2, 3, 5};
            for (int k = 0; k < 4; k++) {
                int want = left * 1000 + round * 100 + idx[k];
                CHECK(vr[k] == want, "round %d: freed-type persistent element %d is %d, want %d",
                      round, k, vr[k], want);
            }
        }
        MPI_Request_free(&pr[0]);
        MPI_Request_free(&pr[1]);
        for (int k = 0; k < 4; k++)
            MPI_Type_free(&other[k]);
    }
    return mtest_finalize();
}
