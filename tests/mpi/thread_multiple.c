/*
 * thread_multiple: MPI_THREAD_MULTIPLE with two threads per rank calling MPI
 * at once.
 *
 * 1. Ring: a receiver thread blocks in MPI_Recv from the left neighbour
 *    before the sender thread of the same rank sends to the right one (the
 *    receiver says so first).  Every rank does this, so the messages exist
 *    only if a blocked MPI_Recv does not stop its rank's other thread from
 *    sending: a library that held one lock across the wait hangs here.
 *    Small, mid-size and 1 MiB messages, contents checked.
 * 2. Nonblocking: one thread waits in MPI_Wait on an MPI_Irecv while the
 *    other sends with MPI_Isend + MPI_Wait and then MPI_Waitall.
 * 3. Concurrent collectives on two duplicates of MPI_COMM_WORLD, one per
 *    thread (Allreduce, Bcast, Barrier, Allgather), results checked; the
 *    threads of different ranks enter their collectives in any order.
 * 4. A generalized request that one thread completes while another waits.
 * 5. MPI_Comm_dup and MPI_Comm_split by two threads at once (other parents).
 * Parts 1 and 2 need two ranks (MPICH 4.0.2 hangs on one: messages to
 * itself between threads).  Also: MPI_Is_thread_main false in threads.
 * Threads record failures in their own counters; main checks after join.
 */
#include <pthread.h>
#include <time.h>

#include "mtest.h"

enum { NMSG = 40, ROUNDS = 25, BIG = 1 << 20 };

static int g_rank, g_size;
static MPI_Comm g_ca, g_cb;
static volatile int g_recv_ready;

typedef struct {
    int errs;
    char what[200];
} result_t;

static void fail(result_t *r, const char *what)
{
    if (!r->errs++)
        snprintf(r->what, sizeof r->what, "%s", what);
}

static int msg_len(int i) { return i % 10 == 9 ? BIG : i % 3 == 0 ? 20000 : 1 + i; }

static unsigned char byte_of(int from, int i, int k)
{
    return (unsigned char)(from * 31 + i * 7 + k);
}

static void *ring_recv(void *arg)
{
    result_t *r = arg;
    int left = (g_rank + g_size - 1) % g_size, flag = 1;
    unsigned char *buf = malloc(BIG);
    MPI_Is_thread_main(&flag);
    if (flag)
        fail(r, "MPI_Is_thread_main true in a thread");
    g_recv_ready = 1;
    for (int i = 0; i < NMSG; i++) {
        MPI_Status st;
        int n = msg_len(i), got = -1;
        if (MPI_Recv(buf, BIG, MPI_BYTE, left, 100 + i, MPI_COMM_WORLD, &st) != MPI_SUCCESS) {
            fail(r, "MPI_Recv failed");
            continue;
        }
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != n || st.MPI_SOURCE != left)
            fail(r, "ring message of the wrong size or source");
        for (int k = 0; k < n && k < got; k += 97)
            if (buf[k] != byte_of(left, i, k)) {
                fail(r, "ring message contents");
                break;
            }
    }
    free(buf);
    return NULL;
}

static void *ring_send(void *arg)
{
    result_t *r = arg;
    int right = (g_rank + 1) % g_size;
    unsigned char *buf = malloc(BIG);
    while (!g_recv_ready) /* the receiver is in (or about to be in) MPI_Recv */
        nanosleep(&(struct timespec){0, 100000}, NULL);
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    for (int i = 0; i < NMSG; i++) {
        int n = msg_len(i);
        for (int k = 0; k < n; k++)
            buf[k] = byte_of(g_rank, i, k);
        if (MPI_Send(buf, n, MPI_BYTE, right, 100 + i, MPI_COMM_WORLD) != MPI_SUCCESS)
            fail(r, "MPI_Send failed");
    }
    free(buf);
    return NULL;
}

static void *nb_recv(void *arg)
{
    result_t *r = arg;
    int left = (g_rank + g_size - 1) % g_size, v[4] = {-1, -1, -1, -1};
    MPI_Request q;
    MPI_Irecv(v, 4, MPI_INT, left, 7, MPI_COMM_WORLD, &q);
    g_recv_ready = 1;
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int k = 0; k < 4; k++)
        if (v[k] != left * 10 + k)
            fail(r, "nonblocking message contents");
    MPI_Request qs[2];
    int w[2] = {-1, -1};
    MPI_Irecv(&w[0], 1, MPI_INT, left, 8, MPI_COMM_WORLD, &qs[0]);
    MPI_Irecv(&w[1], 1, MPI_INT, left, 9, MPI_COMM_WORLD, &qs[1]);
    MPI_Waitall(2, qs, MPI_STATUSES_IGNORE);
    if (w[0] != left + 1000 || w[1] != left + 2000)
        fail(r, "Waitall contents");
    return NULL;
}

static void *nb_send(void *arg)
{
    (void)arg;
    int right = (g_rank + 1) % g_size, v[4];
    while (!g_recv_ready)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    for (int k = 0; k < 4; k++)
        v[k] = g_rank * 10 + k;
    MPI_Request q;
    MPI_Isend(v, 4, MPI_INT, right, 7, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int a = g_rank + 1000, b = g_rank + 2000;
    MPI_Send(&b, 1, MPI_INT, right, 9, MPI_COMM_WORLD);
    MPI_Send(&a, 1, MPI_INT, right, 8, MPI_COMM_WORLD);
    return NULL;
}

static void collectives(result_t *r, MPI_Comm c, int salt)
{
    int *all = malloc((size_t)g_size * sizeof *all);
    for (int i = 0; i < ROUNDS; i++) {
        int in = g_rank * salt + i, out = -1;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, c);
        if (out != salt * g_size * (g_size - 1) / 2 + i * g_size)
            fail(r, "Allreduce result");
        int root = i % g_size, b = g_rank == root ? salt * 1000 + i : -1;
        MPI_Bcast(&b, 1, MPI_INT, root, c);
        if (b != salt * 1000 + i)
            fail(r, "Bcast result");
        if (i % 5 == 0)
            MPI_Barrier(c);
        int mine = g_rank + salt * i;
        MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, c);
        for (int k = 0; k < g_size; k++)
            if (all[k] != k + salt * i) {
                fail(r, "Allgather result");
                break;
            }
    }
    free(all);
}

/* 5. Communicators made at once by two threads, each from its own parent
 *    (MPI_Comm_dup, MPI_Comm_split), in a different order on odd ranks. */
static void make_comms(result_t *r, MPI_Comm parent, int salt)
{
    for (int i = 0; i < 6; i++) {
        MPI_Comm d, s;
        if (MPI_Comm_dup(parent, &d) != MPI_SUCCESS) {
            fail(r, "MPI_Comm_dup");
            return;
        }
        MPI_Comm_split(d, g_rank % 2, -g_rank, &s);
        int ss = -1, sum = -1, one = salt;
        MPI_Comm_size(s, &ss);
        if (ss != (g_size + (g_rank % 2 ? 0 : 1)) / 2)
            fail(r, "MPI_Comm_split size");
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s);
        if (sum != salt * ss)
            fail(r, "Allreduce on the split communicator");
        MPI_Comm_free(&s);
        MPI_Comm_free(&d);
    }
}

static void *comms_a(void *arg)
{
    make_comms(arg, g_ca, 3);
    return NULL;
}

static void *comms_b(void *arg)
{
    if (g_rank % 2)
        nanosleep(&(struct timespec){0, 3000000}, NULL);
    make_comms(arg, g_cb, 5);
    return NULL;
}

static void *coll_a(void *arg)
{
    collectives(arg, g_ca, 3);
    return NULL;
}

static void *coll_b(void *arg)
{
    /* start late on some ranks, early on others: the threads' order differs */
    if (g_rank % 2)
        nanosleep(&(struct timespec){0, 3000000}, NULL);
    collectives(arg, g_cb, 5);
    return NULL;
}

/* 4. A generalized request completed by one thread while another waits
 *    for it in MPI_Wait (MPICH's threads/pt2pt/greq_wait: the waiter held
 *    the lock while it slept between polls). */
static MPI_Request g_greq;

static int gq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int gq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void *greq_wait(void *arg)
{
    result_t *r = arg;
    g_recv_ready = 1;
    if (MPI_Wait(&g_greq, MPI_STATUS_IGNORE) != MPI_SUCCESS || g_greq != MPI_REQUEST_NULL)
        fail(r, "MPI_Wait on the generalized request");
    return NULL;
}

static void *greq_complete(void *arg)
{
    result_t *r = arg;
    while (!g_recv_ready)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    nanosleep(&(struct timespec){0, 5000000}, NULL);
    if (MPI_Grequest_complete(g_greq) != MPI_SUCCESS)
        fail(r, "MPI_Grequest_complete");
    return NULL;
}

static void run_pair(const char *name, void *(*f1)(void *), void *(*f2)(void *))
{
    pthread_t t1, t2;
    result_t r1 = {0}, r2 = {0};
    g_recv_ready = 0;
    pthread_create(&t1, NULL, f1, &r1);
    pthread_create(&t2, NULL, f2, &r2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(r1.errs == 0, "%s, first thread: %d errors, first: %s", name, r1.errs, r1.what);
    CHECK(r2.errs == 0, "%s, second thread: %d errors, first: %s", name, r2.errs, r2.what);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int provided = -1, flag = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mtest_begin("thread_multiple");
    g_rank = mtest_rank_;
    g_size = mtest_size_;
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d, not MPI_THREAD_MULTIPLE", provided);
    int q = -1;
    MPI_Query_thread(&q);
    CHECK_INT(q, MPI_THREAD_MULTIPLE, "MPI_Query_thread");
    MPI_Is_thread_main(&flag);
    CHECK(flag == 1, "MPI_Is_thread_main false in main");
    if (provided == MPI_THREAD_MULTIPLE) {
        MPI_Comm_dup(MPI_COMM_WORLD, &g_ca);
        MPI_Comm_dup(MPI_COMM_WORLD, &g_cb);
        /* one rank: messages to itself between its threads, which
         * MPICH 4.0.2 did not get through in 60 s (parts 3-5 still run) */
        if (g_size > 1) {
            run_pair("ring", ring_recv, ring_send);
            run_pair("nonblocking", nb_recv, nb_send);
        }
        run_pair("collectives", coll_a, coll_b);
        run_pair("communicator creation", comms_a, comms_b);
        MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &g_greq);
        run_pair("generalized request", greq_wait, greq_complete);
        /* again with the waiter the only thread that has called MPI yet
         * (the threads above have ended): it must still give the lock up */
        MPI_Grequest_start(gq_query, gq_free, gq_cancel, NULL, &g_greq);
        pthread_t tc;
        result_t rc = {0}, rw = {0};
        g_recv_ready = 0;
        pthread_create(&tc, NULL, greq_complete, &rc);
        greq_wait(&rw);
        pthread_join(tc, NULL);
        CHECK(rc.errs + rw.errs == 0, "generalized request completed by a new thread: %s%s",
              rc.what, rw.what);
        /* and the single-threaded calls still work afterwards */
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, g_ca);
        CHECK_INT(sum, g_size, "Allreduce after the threads ended");
        MPI_Comm_free(&g_ca);
        MPI_Comm_free(&g_cb);
    }
    return mtest_finalize();
}
