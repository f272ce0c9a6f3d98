/* MPIX_Comm_revoke interrupts calls already waiting on the communicator
 * that no message will complete, without failures anywhere:
 *  1. a blocking MPI_Probe and MPI_Mprobe on it, for a message never sent;
 *  2. communicator creation on it (MPI_Comm_split, MPI_Comm_create) that
 *     waits for the revoker, who never joins;
 *  3. a blocking collective on an intercommunicator (MPI_Barrier,
 *     MPI_Allreduce), revoked by the other group's leader instead of
 *     entering it.
 * In each part rank 0 (part 3: the second group's leader) revokes after the
 * others have had time to start waiting; whatever the order, every waiting
 * call must return MPIX_ERR_REVOKED rather than wait for ever.  Each part
 * works on a fresh duplicate, and the revoked ones are freed. */
#include <unistd.h>

#include "mtest.h"

static int err_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

static MPI_Comm fresh(MPI_Comm base)
{
    MPI_Comm c;
    MPI_Comm_dup(base, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* The revoker lets the others reach their call first, most of the time. */
static void revoke_late(MPI_Comm c)
{
    usleep(100 * 1000);
    CHECK_MPI(MPIX_Comm_revoke(c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "ulfm_revoke_wait");
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
    /* MPICH 4.0's ch4 device declares the ULFM calls but asserts in them. */
    if (mtest_rank_ == 0)
        printf("SKIP %s: MPICH before 4.2 does not implement ULFM in ch4\n", mtest_name_);
    MPI_Finalize();
    return 77;
#endif
    int rank = mtest_rank_, size = mtest_size_;
    if (size < 2)
        return mtest_finalize();

    /* 1. Probes. */
    for (int m = 0; m < 2; m++) {
        MPI_Comm c = fresh(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            revoke_late(c);
        } else {
            MPI_Status st;
            MPI_Message msg = MPI_MESSAGE_NULL;
            int rc = m == 0 ? MPI_Probe(MPI_ANY_SOURCE, 7, c, &st) : MPI_Mprobe(0, 7, c, &msg, &st);
            CHECK_INT(err_class(rc), MPIX_ERR_REVOKED,
                      m == 0 ? "a blocking MPI_Probe's error class"
                             : "a blocking MPI_Mprobe's error class");
        }
        MPI_Comm_free(&c);
    }

    /* 2. Communicator creation waiting for the revoker. */
    for (int m = 0; m < 2; m++) {
        MPI_Comm c = fresh(MPI_COMM_WORLD), out = MPI_COMM_NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            revoke_late(c);
        } else {
            int rc;
            if (m == 0) {
                rc = MPI_Comm_split(c, rank % 2, rank, &out);
            } else {
                MPI_Group g;
                MPI_Comm_group(c, &g);
                rc = MPI_Comm_create(c, g, &out);
                MPI_Group_free(&g);
            }
            CHECK_INT(err_class(rc), MPIX_ERR_REVOKED,
                      m == 0 ? "MPI_Comm_split's error class" : "MPI_Comm_create's error class");
            if (out != MPI_COMM_NULL)
                MPI_Comm_free(&out);
        }
        MPI_Comm_free(&c);
    }

    /* 3. Intercommunicator: group 0 is the even ranks, group 1 the odd;
     * group 1's leader (world rank 1) revokes instead of joining. */
    {
        MPI_Comm local, inter;
        int color = rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 99, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        for (int m = 0; m < 2; m++) {
            MPI_Comm c;
            MPI_Comm_dup(inter, &c);
            MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) {
                revoke_late(c);
            } else {
                int rc;
                if (m == 0) {
                    rc = MPI_Barrier(c);
                } else {
                    double in = rank, out = 0;
                    rc = MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, c);
                }
                CHECK_INT(err_class(rc), MPIX_ERR_REVOKED,
                          m == 0 ? "an intercommunicator MPI_Barrier's error class"
                                 : "an intercommunicator MPI_Allreduce's error class");
            }
            MPI_Comm_free(&c);
        }
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    return mtest_finalize();
}
