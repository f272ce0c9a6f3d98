/* A receive completed in an MPI_Waitall that must still wait for another
 * is not filled, written to storage and read back before the program can
 * use it (issue 13, session 15: SGD's U).
 *
 * 4 ranks, -nr 1, -mem 32M.  Rank 1 sends U (argv[1] MiB, default 8) to
 * rank 0 and then a token: U waits in a spill file (rank 0 sleeps, so the
 * message cannot be read from rank 1's memory).  Rank 0 posts Irecv(U)
 * (its message is here already), Irecv(V) (from rank 2), sends rank 2 a
 * token and waits for both, with W (7 MiB) filled.  Rank 2 then fills a
 * 20 MiB ballast, which makes the master unload rank 0 while it waits for
 * V (W is written then), and sends V (6 MiB).  U, V and W are checked
 * word by word.
 *
 * A runtime that fills U's buffer at the match writes it when rank 0 is
 * unloaded and reads it back after the Waitall (8 MiB each way).  One that
 * leaves the message in its file until the Waitall returns moves none of
 * it.  Rank 0 prints "PASS waitall_defer: U is N bytes"; waitall_defer.sh
 * checks with -mem-alloc-stats that rank 0's allocation of N bytes was
 * not written, and that W was (rank 0 was unloaded). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NRANKS 4
#define TAG_U 1
#define TAG_V 2
#define TAG_GO 9

static uint64_t val(int which, uint64_t k)
{
    return ((uint64_t)which << 60) ^ (k * 0x9E3779B97F4A7C15ull);
}

static volatile uint64_t g_sink;

static uint64_t *xmalloc(uint64_t n, int rank)
{
    uint64_t *p = malloc(n);
    if (!p) {
        fprintf(stderr, "rank %d: cannot allocate %llu bytes\n", rank, (unsigned long long)n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static int check(const uint64_t *b, uint64_t n, int which, const char *name)
{
    int bad = 0;
    for (uint64_t k = 0; k < n / 8; k++)
        if (b[k] != val(which, k) && bad++ < 3)
            fprintf(stderr, "rank 0: word %llu of %s is %#llx, not %#llx\n", (unsigned long long)k,
                    name, (unsigned long long)b[k], (unsigned long long)val(which, k));
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, size, token = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != NRANKS) {
        if (me == 0)
            fprintf(stderr, "waitall_defer: needs %d ranks\n", NRANKS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const uint64_t un = (argc > 1 ? strtoull(argv[1], NULL, 10) : 8) << 20, vn = 6ull << 20;
    int bad = 0;
    if (me == 0) {
        MPI_Recv(&token, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* W (7 MiB) is dirty while rank 0 waits: its unload writes W */
        const uint64_t wn = 7ull << 20;
        uint64_t *u = xmalloc(un, me), *v = xmalloc(vn, me), *w = xmalloc(wn, me);
        for (uint64_t k = 0; k < wn / 8; k++)
            w[k] = val(3, k);
        MPI_Request rq[2];
        MPI_Status st[2];
        MPI_Irecv(u, (int)(un / 8), MPI_UINT64_T, 1, TAG_U, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(v, (int)(vn / 8), MPI_UINT64_T, 2, TAG_V, MPI_COMM_WORLD, &rq[1]);
        MPI_Send(&token, 1, MPI_INT, 2, TAG_GO, MPI_COMM_WORLD);
        MPI_Waitall(2, rq, st);
        int cu = -1, cv = -1;
        MPI_Get_count(&st[0], MPI_UINT64_T, &cu);
        MPI_Get_count(&st[1], MPI_UINT64_T, &cv);
        if (st[0].MPI_SOURCE != 1 || st[0].MPI_TAG != TAG_U || (uint64_t)cu != un / 8 ||
            st[1].MPI_SOURCE != 2 || st[1].MPI_TAG != TAG_V || (uint64_t)cv != vn / 8) {
            fprintf(stderr, "rank 0: statuses (%d, %d, %d) (%d, %d, %d)\n", st[0].MPI_SOURCE,
                    st[0].MPI_TAG, cu, st[1].MPI_SOURCE, st[1].MPI_TAG, cv);
            bad++;
        }
        bad += check(u, un, 1, "U") + check(v, vn, 2, "V") + check(w, wn, 3, "W");
        free(u);
        free(v);
        free(w);
    } else if (me == 1) {
        uint64_t *u = xmalloc(un, me);
        for (uint64_t k = 0; k < un / 8; k++)
            u[k] = val(1, k);
        MPI_Request r;
        MPI_Isend(u, (int)(un / 8), MPI_UINT64_T, 0, TAG_U, MPI_COMM_WORLD, &r);
        MPI_Send(&token, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        free(u);
    } else if (me == 2) {
        MPI_Recv(&token, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* rank 0 waits in its Waitall now: make the master unload it */
        uint64_t bytes = 20ull << 20, sum = 0;
        uint64_t *volatile b = xmalloc(bytes, me);
        for (uint64_t i = 0; i < bytes / 8; i++)
            b[i] = i;
        for (uint64_t i = 0; i < bytes / 8; i += 512)
            sum += b[i];
        g_sink += sum;
        uint64_t *v = xmalloc(vn, me);
        for (uint64_t k = 0; k < vn / 8; k++)
            v[k] = val(2, k);
        free(b);
        MPI_Send(v, (int)(vn / 8), MPI_UINT64_T, 0, TAG_V, MPI_COMM_WORLD);
        free(v);
    }
    int allbad = 0;
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s waitall_defer: U is %llu bytes, W %llu\n", allbad ? "FAIL" : "PASS",
               (unsigned long long)un, 7ull << 20);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
