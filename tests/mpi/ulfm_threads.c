/* ULFM after a collective that only some ranks began, with and without a
 * second MPI thread in every rank (MPI_THREAD_MULTIPLE).
 *
 * In each round one rank revokes a duplicate of MPI_COMM_WORLD while the
 * others are in a collective on it, which fails there with
 * MPIX_ERR_REVOKED.  The revoker never began that collective, so the ranks
 * disagree on how many collectives the communicator has had; ULFM's
 * recovery calls must work all the same: every rank then agrees
 * (MPIX_Comm_agree) and shrinks (MPIX_Comm_shrink, or MPIX_Comm_ishrink
 * and a wait), and the shrunk communicator must work (its size, an
 * all-reduce, a ring).  Some rounds make the difference certain (the
 * others start an MPI_Ibarrier before the revoker revokes and wait for it
 * afterwards, with MPI_Wait or an MPI_Test loop), others leave it to
 * timing (blocking barrier or all-reduce, small or large enough to go
 * through BDMPI's master).
 *
 * The rounds run twice: first with one thread per rank, then while a
 * second thread of every rank has called MPI and is still alive (BDMPI
 * then addresses communicator creation by its collective; the shrink's
 * split hung there, with rank 0 and 1 at one collective number and rank 2
 * at the next).  At the end the helper threads pass a ring message on a
 * communicator of their own. */
#include <pthread.h>

#include "mtest.h"

enum { ROUNDS = 6, BIG = 16384 };

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_go, g_started;
static MPI_Comm g_wcomm;
static int g_helper_errs;

static int err_class(int rc)
{
    int cls = rc;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* The second thread: calls MPI, then stays alive (without holding
 * anything) until the main thread is done with its rounds, then passes a
 * ring message on its own communicator. */
static void *helper(void *arg)
{
    (void)arg;
    int rank = -1, size = 0;
    MPI_Comm_rank(g_wcomm, &rank);
    MPI_Comm_size(g_wcomm, &size);
    pthread_mutex_lock(&g_mu);
    g_started = 1;
    pthread_cond_broadcast(&g_cv);
    while (!g_go)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    if (MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, g_wcomm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        got != left)
        g_helper_errs++;
    return NULL;
}

static void one_round(int round, int phase, int *in, int *out)
{
    int rank = mtest_rank_, size = mtest_size_;
    int revoker = (round + phase) % size, kind = round % 3;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int rc;
    if (kind == 0) {
        /* Certain: the others' Ibarrier is begun before the revoke. */
        MPI_Request req = MPI_REQUEST_NULL;
        if (rank != revoker)
            CHECK_MPI(MPI_Ibarrier(c, &req));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == revoker) {
            CHECK_MPI(MPIX_Comm_revoke(c));
        } else {
            if (round < 3) {
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else { /* polling must learn of the revoke too */
                int done = 0;
                do
                    rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
                while (!done && rc == MPI_SUCCESS);
            }
            CHECK_INT(err_class(rc), MPIX_ERR_REVOKED, "an Ibarrier on a revoked communicator");
        }
    } else {
        if (rank == revoker) {
            CHECK_MPI(MPIX_Comm_revoke(c));
        } else {
            rc = kind == 1 ? MPI_Barrier(c) : MPI_Allreduce(in, out, BIG, MPI_INT, MPI_SUM, c);
            CHECK_INT(err_class(rc), MPIX_ERR_REVOKED,
                      kind == 1 ? "a barrier on a communicator another rank revokes"
                                : "an all-reduce on a communicator another rank revokes");
        }
    }
    int flag = rank == revoker ? 5 : 7;
    CHECK_MPI(MPIX_Comm_agree(c, &flag));
    CHECK_INT(flag, 5, "MPIX_Comm_agree after the revoke");
    MPI_Comm s = MPI_COMM_NULL;
    if (round % 2 == 0) {
        CHECK_MPI(MPIX_Comm_shrink(c, &s));
    } else {
        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_MPI(MPIX_Comm_ishrink(c, &s, &req));
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    int srank = -1, ssize = -1;
    MPI_Comm_rank(s, &srank);
    MPI_Comm_size(s, &ssize);
    CHECK_INT(ssize, size, "the shrunk communicator's size");
    CHECK_INT(srank, rank, "my rank in the shrunk communicator");
    int one = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s));
    CHECK_INT(sum, size, "an all-reduce on the shrunk communicator");
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    CHECK_MPI(
        MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, s, MPI_STATUS_IGNORE));
    CHECK_INT(got, left, "a ring on the shrunk communicator");
    /* A second agreement and shrink in a row keep matching. */
    flag = 1;
    CHECK_MPI(MPIX_Comm_agree(c, &flag));
    CHECK_INT(flag, 1, "a second MPIX_Comm_agree");
    MPI_Comm s2 = MPI_COMM_NULL;
    CHECK_MPI(MPIX_Comm_shrink(c, &s2));
    CHECK_MPI(MPI_Barrier(s2));
    MPI_Comm_free(&s2);
    MPI_Comm_free(&s);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mtest_begin("ulfm_threads");
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
    /* MPICH 4.0's ch4 device declares the ULFM calls but asserts in them. */
    if (mtest_rank_ == 0)
        printf("SKIP %s: MPICH before 4.2 does not implement ULFM in ch4\n", mtest_name_);
    MPI_Finalize();
    return 77;
#endif
    if (mtest_size_ < 2)
        return mtest_finalize_note("(skipped: needs 2 ranks)");
    if (provided < MPI_THREAD_MULTIPLE) {
        if (mtest_rank_ == 0)
            printf("SKIP %s: MPI_THREAD_MULTIPLE not provided\n", mtest_name_);
        MPI_Finalize();
        return 77;
    }
    int *in = calloc(BIG, sizeof(int)), *out = calloc(BIG, sizeof(int));
    for (int round = 0; round < ROUNDS; round++)
        one_round(round, 0, in, out);

    MPI_Comm_dup(MPI_COMM_WORLD, &g_wcomm);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, helper, NULL), 0, "pthread_create");
    pthread_mutex_lock(&g_mu);
    while (!g_started)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
    for (int round = 0; round < ROUNDS; round++)
        one_round(round, 1, in, out);
    pthread_mutex_lock(&g_mu);
    g_go = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    pthread_join(th, NULL);
    CHECK_INT(g_helper_errs, 0, "the helper thread's ring");
    MPI_Comm_free(&g_wcomm);
    free(in);
    free(out);
    return mtest_finalize();
}
