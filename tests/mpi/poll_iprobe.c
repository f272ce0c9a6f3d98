/*
 * poll_iprobe: programs that busy-poll must make progress.
 *
 * (a short busy loop) and only then sends:
 *  1. rank 0 loops on MPI_Iprobe(ANY_SOURCE, tag 1) and receives each
 *     probed message, until it has one from every other rank;
 *  2. rank 0 posts one MPI_Irecv(ANY_SOURCE, tag 2) at a time and loops on
 *     MPI_Test until it completes, size-1 times;
 *  3. rank 0 posts one MPI_Irecv per source and loops on MPI_Testany;
 *  4. the other way round: every rank except 0 loops on MPI_Iprobe for a
 *     message from rank 0, which works first and then sends to everybody;
 *  5. every rank loops on MPI_Iprobe for a message from its left
 *     neighbour, which sends only after it has seen its own message
 *     (so the messages travel around the ring one at a time).
 * The polling loops have no iteration limit: a runtime that never lets
 * the senders run will hang (and the test harness timeout catches it).
 * With one rank there is nothing to wait for and the test passes trivially.
 */
#include "mtest.h"

static double work(int rank, int size)
{
    /* at most ~2 ms per rank, less when there are many ranks */
    double t = 0.002 * (1 + rank % 3) / 3.0;
    if (size > 64)
        t /= 8;
    return mtest_spin(t);
}

int main(int argc, char **argv)
{
    int rank, size, i, flag;
    MPI_Status st;

    mtest_init(&argc, &argv, "poll_iprobe");
    rank = mtest_rank_;
    size = mtest_size_;

    /* ---- 1. Iprobe polling at rank 0 ---- */
    if (rank == 0) {
        char *seen = calloc((size_t)size, 1);
        int got = 0;
        while (got < size - 1) {
            int v = -1;
            MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st);
            if (!flag)
                continue;
            MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < size && !seen[st.MPI_SOURCE],
                  "Iprobe phase: bad or repeated source %d", st.MPI_SOURCE);
            if (st.MPI_SOURCE > 0 && st.MPI_SOURCE < size)
                seen[st.MPI_SOURCE] = 1;
            CHECK(v == st.MPI_SOURCE * 11, "Iprobe phase: from %d got %d", st.MPI_SOURCE, v);
            got++;
        }
        free(seen);
    } else {
        int v = rank * 11;
        work(rank, size);
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }

    /* ---- 2. Test polling at rank 0 ---- */
    if (rank == 0) {
        int sum = 0;
        for (i = 1; i < size; i++) {
            int v = -1;
            MPI_Request req;
            MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &req);
            flag = 0;
            while (!flag)
                MPI_Test(&req, &flag, &st);
            CHECK(v == st.MPI_SOURCE * 13, "Test phase: from %d got %d", st.MPI_SOURCE, v);
            sum += st.MPI_SOURCE;
        }
        CHECK_INT(sum, (long long)size * (size - 1) / 2, "Test phase: sum of sources");
    } else {
        int v = rank * 13;
        work(rank, size);
        MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }

    /* ---- 3. Testany polling at rank 0 ---- */
    if (rank == 0) {
        int n = size - 1, done = 0, idx, *v = malloc(sizeof(int) * (size_t)size);
        MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)size);
        for (i = 0; i < n; i++) {
            v[i] = -1;
            MPI_Irecv(&v[i], 1, MPI_INT, i + 1, 3, MPI_COMM_WORLD, &req[i]);
        }
        while (done < n) {
            flag = 0;
            MPI_Testany(n, req, &idx, &flag, &st);
            if (!flag)
                continue;
            CHECK(idx >= 0 && idx < n, "Testany index %d", idx);
            if (idx < 0 || idx >= n)
                break;
            CHECK(st.MPI_SOURCE == idx + 1 && v[idx] == (idx + 1) * 17,
                  "Testany phase: index %d source %d value %d", idx, st.MPI_SOURCE, v[idx]);
            done++;
        }
        free(v);
        free(req);
    } else {
        int v = rank * 17;
        work(rank, size);
        MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }

    if (rank == 0) {
        int *v = malloc(sizeof(int) * (size_t)size);
        MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)size);
        work(rank, size);
        for (i = 1; i < size; i++) {
            v[i] = i * 19;
            MPI_Isend(&v[i], 1, MPI_INT, i, 4, MPI_COMM_WORLD, &req[i - 1]);
        }
        MPI_Waitall(size - 1, req, MPI_STATUSES_IGNORE);
        free(v);
        free(req);
    } else {
        int v = -1;
        flag = 0;
        while (!flag)
            MPI_Iprobe(0, 4, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(&v, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_INT(v, rank * 19, "value polled from rank 0");
    }

    /* ---- 5. token passed around the ring, every hop polled ---- */
    if (size > 1) {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int token = -1;
        if (rank == 0) {
            token = 0;
            MPI_Send(&token, 1, MPI_INT, right, 5, MPI_COMM_WORLD);
        }
        flag = 0;
        while (!flag)
            MPI_Iprobe(left, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(&token, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank != 0) {
            CHECK_INT(token, rank - 1, "ring token");
            token = rank;
            MPI_Send(&token, 1, MPI_INT, right, 5, MPI_COMM_WORLD);
        } else {
            CHECK_INT(token, size - 1, "ring token back at rank 0");
        }
    }

    return mtest_finalize();
}
