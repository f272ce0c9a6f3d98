/*
 * rma_poll: ranks that spin on one-sided operations and on polls must make
 * progress with fewer run slots than ranks (the pattern of mpi4py's
 * mpi4py.util.sync: Mutex, Condition, Counter).
 *
 *  1. A queue lock (MCS): under MPI_Win_lock_all each rank swaps itself
 *     into the tail at rank 0 with MPI_Fetch_and_op(MPI_REPLACE), links
 *     itself behind its predecessor with MPI_Accumulate and spins on its
 *     own window with MPI_Win_sync until the predecessor hands the lock
 *     over; release is MPI_Compare_and_swap on the tail, or a wait for the
 *     successor's link and a hand-over.  Inside, a non-atomic Get + Put of
 *     a counter at the last rank: a lost update means two holders at once.
 *  2. A spin lock: MPI_Compare_and_swap on a word at rank 0 until it
 *     succeeds, a Get + Put counter inside, MPI_Accumulate(REPLACE) to
 *     release.
 *  3. A counter polled with MPI_Fetch_and_op(MPI_NO_OP) on the rank
 *     itself until every other rank has added to it.
 *  4. Rank 0 polls MPI_Iprobe for one message from every other rank; each
 *     sends only after an exclusive lock + MPI_Fetch_and_op(MPI_SUM) on
 *     rank 0's window, which rank 0 must serve while it only polls.
 * The loops have no iteration limit: a runtime where a spinning rank keeps
 * its run slot from a rank it waits for, or where a polling target never
 * serves one-sided requests, hangs (the harness timeout catches it).
 */
#include "mtest.h"

enum { FLAG, NEXT, TAIL, COUNT1, SPIN, COUNT2, POLLED, PROBED, NWORDS };

static MPI_Win win;
static volatile int *mem;
static int rank, size;

/* Spin until mem[i] != v (it is written by other ranks' operations).  As
 * mpi4py does: MPI_Win_sync makes the window's updates visible, the flush
 * on the rank itself is a call that makes progress (MPICH's MPI_Win_sync
 * alone does not serve other ranks' accumulates). */
static int spin_while(int i, int v)
{
    MPI_Win_sync(win);
    while (mem[i] == v) {
        MPI_Win_flush(rank, win);
        MPI_Win_sync(win);
    }
    return mem[i];
}

static void put_self(int i, int v)
{
    MPI_Accumulate(&v, 1, MPI_INT, rank, i, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Win_flush(rank, win);
}

static void mcs_acquire(void)
{
    int me = rank, prev = MPI_PROC_NULL;
    put_self(NEXT, MPI_PROC_NULL);
    MPI_Fetch_and_op(&me, &prev, MPI_INT, 0, TAIL, MPI_REPLACE, win);
    MPI_Win_flush(0, win);
    if (prev != MPI_PROC_NULL) {
        MPI_Accumulate(&me, 1, MPI_INT, prev, NEXT, 1, MPI_INT, MPI_REPLACE, win);
        MPI_Win_flush(prev, win);
        spin_while(FLAG, 0);
    }
    put_self(FLAG, 0);
}

static void mcs_release(void)
{
    int me = rank, null = MPI_PROC_NULL, prev = -2;
    MPI_Compare_and_swap(&null, &me, &prev, MPI_INT, 0, TAIL, win);
    MPI_Win_flush(0, win);
    if (prev != me) {
        int next = spin_while(NEXT, MPI_PROC_NULL), one = 1;
        MPI_Accumulate(&one, 1, MPI_INT, next, FLAG, 1, MPI_INT, MPI_REPLACE, win);
        MPI_Win_flush(next, win);
    }
}

/* Read-modify-write of a counter at the last rank, with a pause between. */
static void bump(int word)
{
    int v = -1, last = size - 1;
    MPI_Get(&v, 1, MPI_INT, last, word, 1, MPI_INT, win);
    MPI_Win_flush(last, win);
    mtest_spin(0.0001);
    v++;
    MPI_Put(&v, 1, MPI_INT, last, word, 1, MPI_INT, win);
    MPI_Win_flush(last, win);
}

/* The value of word at target, read atomically. */
static int fetch(int target, int word)
{
    int dummy = 0, v = -1;
    MPI_Fetch_and_op(&dummy, &v, MPI_INT, target, word, MPI_NO_OP, win);
    MPI_Win_flush(target, win);
    return v;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_poll");
    rank = mtest_rank_;
    size = mtest_size_;
    const int reps = size > 4 ? 8 : 24;
    int *base = NULL;
    /* (MPI_Alloc_mem + MPI_Win_create: see rma_lock.c on MPICH 4.0.) */
    CHECK_MPI(MPI_Alloc_mem(NWORDS * sizeof(int), MPI_INFO_NULL, &base));
    for (int i = 0; i < NWORDS; i++)
        base[i] = 0;
    base[NEXT] = base[TAIL] = MPI_PROC_NULL;
    mem = base;
    CHECK_MPI(MPI_Win_create(base, NWORDS * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1. queue lock */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < reps; k++) {
        mcs_acquire();
        bump(COUNT1);
        mcs_release();
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_INT(fetch(size - 1, COUNT1), size * reps, "counter under the queue lock");
    CHECK_INT(fetch(0, TAIL), MPI_PROC_NULL, "queue lock's tail after the last release");
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. compare-and-swap spin lock */
    CHECK_MPI(MPI_Win_lock_all(0, win));
    for (int k = 0; k < reps; k++) {
        int me = rank + 1, zero = 0, got = -1;
        do {
            MPI_Compare_and_swap(&me, &zero, &got, MPI_INT, 0, SPIN, win);
            MPI_Win_flush(0, win);
        } while (got != 0);
        bump(COUNT2);
        MPI_Accumulate(&zero, 1, MPI_INT, 0, SPIN, 1, MPI_INT, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
    }
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_INT(fetch(size - 1, COUNT2), size * reps, "counter under the spin lock");

    /* 3. everyone adds 1 to every other rank's word and polls its own */
    for (int t = 0; t < size; t++) {
        int one = 1, old;
        if (t == rank)
            continue;
        MPI_Fetch_and_op(&one, &old, MPI_INT, t, POLLED, MPI_SUM, win);
        MPI_Win_flush(t, win);
    }
    int v;
    while ((v = fetch(rank, POLLED)) < size - 1)
        ;
    CHECK_INT(v, size - 1, "polled counter");
    CHECK_MPI(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4. rank 0 only polls MPI_Iprobe while the others lock its window */
    if (rank == 0) {
        for (int got = 0; got < size - 1;) {
            int flag = 0;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &st);
            if (!flag)
                continue;
            MPI_Recv(NULL, 0, MPI_INT, st.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            got++;
        }
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK_INT(mem[PROBED], size - 1, "additions served while polling MPI_Iprobe");
        CHECK_MPI(MPI_Win_unlock(0, win));
    } else {
        int one = 1, old;
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_Fetch_and_op(&one, &old, MPI_INT, 0, PROBED, MPI_SUM, win);
        CHECK_MPI(MPI_Win_unlock(0, win));
        CHECK(old >= 0 && old < size - 1, "old value %d of the probed counter", old);
        MPI_Send(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Win_free(&win));
    MPI_Free_mem(base);
    return mtest_finalize();
}
