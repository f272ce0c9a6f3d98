/*
 * p2p_ring: ring exchange with MPI_Sendrecv, MPI_Isend/MPI_Irecv (both
 * directions at once) and MPI_Sendrecv_replace.
 *
 * Message sizes 0, 1, 4095, 4096, 4097 bytes, 64 KiB and 1 MiB (1 MiB only
 * when size <= 16), for MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_BYTE and
 * MPI_LONG_LONG (with more than 64 ranks, only MPI_BYTE at every size and
 * the other types at 1 and 4097 bytes).  The element count is
 * ceil(bytes / sizeof(type)).  Data is
 * patterned by sender, type and size, and compared byte-exactly; one guard
 * element after each receive buffer must stay untouched.  Status source,
 * tag and MPI_Get_count are checked.  Works for any size, including 1
 * (sending to oneself).
 */
#include "mtest.h"

enum { T_INT, T_DOUBLE, T_CHAR, T_BYTE, T_LONG_LONG, NTYPES };

static MPI_Datatype mpitype(int t)
{
    switch (t) {
    case T_INT: return MPI_INT;
    case T_DOUBLE: return MPI_DOUBLE;
    case T_CHAR: return MPI_CHAR;
    case T_BYTE: return MPI_BYTE;
    default: return MPI_LONG_LONG;
    }
}

static size_t typesize(int t)
{
    switch (t) {
    case T_INT: return sizeof(int);
    case T_DOUBLE: return sizeof(double);
    case T_CHAR: return sizeof(char);
    case T_BYTE: return 1;
    default: return sizeof(long long);
    }
}

static const char *typename_(int t)
{
    static const char *n[] = {"MPI_INT", "MPI_DOUBLE", "MPI_CHAR", "MPI_BYTE", "MPI_LONG_LONG"};
    return n[t];
}

/* Fill count elements of type t with a pattern determined by seed. */
static void fill(int t, void *buf, size_t count, unsigned seed)
{
    size_t i;
    switch (t) {
    case T_INT:
        for (i = 0; i < count; i++)
            ((int *)buf)[i] = (int)(seed * 1000003u + (unsigned)i * 7u) - 12345;
        break;
    case T_DOUBLE:
        for (i = 0; i < count; i++)
            ((double *)buf)[i] = (double)seed * 0.5 + (double)i * 0.25 - 3.0;
        break;
    case T_CHAR:
        for (i = 0; i < count; i++)
            ((char *)buf)[i] = (char)(' ' + (seed * 13u + i * 7u) % 95u);
        break;
    case T_BYTE:
        for (i = 0; i < count; i++)
            ((unsigned char *)buf)[i] = mtest_byte(seed, i);
        break;
    default:
        for (i = 0; i < count; i++)
            ((long long *)buf)[i] = ((long long)seed << 40) - (long long)i * 1000000007LL;
        break;
    }
}

/* Returns the index of the first differing byte or -1. */
static long first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    size_t i;
    for (i = 0; i < n; i++)
        if (x[i] != y[i])
            return (long)i;
    return -1;
}

#define GUARD 0xA5

static void check_recv(const char *how, int t, size_t bytesz, size_t count,
                       const unsigned char *got, unsigned seed, const MPI_Status *st, int src,
                       int tag)
{
    size_t sz = typesize(t), n = count * sz, i;
    unsigned char *exp = malloc(n + 1);
    long d;
    int c = -1;

    fill(t, exp, count, seed);
    d = first_diff(got, exp, n);
    CHECK(d < 0,
          "%s %s %zu bytes: data differs at byte %ld (got 0x%02x want "
          "0x%02x)",
          how, typename_(t), bytesz, d, d >= 0 ? got[d] : 0, d >= 0 ? exp[d] : 0);
    for (i = 0; i < sz; i++)
        if (got[n + i] != GUARD) {
            CHECK(0, "%s %s %zu bytes: receive wrote past the message", how, typename_(t), bytesz);
            break;
        }
    if (st) {
        CHECK(st->MPI_SOURCE == src, "%s %s %zu bytes: status source %d want %d", how, typename_(t),
              bytesz, st->MPI_SOURCE, src);
        CHECK(st->MPI_TAG == tag, "%s %s %zu bytes: status tag %d want %d", how, typename_(t),
              bytesz, st->MPI_TAG, tag);
        MPI_Get_count(st, mpitype(t), &c);
        CHECK(c == (int)count, "%s %s %zu bytes: MPI_Get_count %d want %zu", how, typename_(t),
              bytesz, c, count);
    }
    free(exp);
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 1, 4095, 4096, 4097, 65536, 1 << 20};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int rank, size, right, left, t, s;

    mtest_init(&argc, &argv, "p2p_ring");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    for (t = 0; t < NTYPES; t++) {
        for (s = 0; s < nsizes; s++) {
            size_t bytes = sizes[s], sz = typesize(t);
            size_t count = (bytes + sz - 1) / sz, n = count * sz;
            int tag = 100 + t * 16 + s;
            unsigned seed_me = (unsigned)(rank * 977 + t * 31 + s);
            unsigned seed_l = (unsigned)(left * 977 + t * 31 + s);
            unsigned seed_r = (unsigned)(right * 977 + t * 31 + s);
            unsigned char *sbuf, *rbuf, *rbuf2;
            MPI_Status st, sts[4];
            MPI_Request req[4];

            if (bytes > 65536 && size > 16)
                continue;
            /* beyond 64 ranks every size is still tested with MPI_BYTE, but
             * the other types only at 1 and 4097 bytes, to stay cheap */
            if (size > 64 && t != T_BYTE && bytes != 1 && bytes != 4097)
                continue;
            sbuf = malloc(n + sz);
            rbuf = malloc(n + sz);
            rbuf2 = malloc(n + sz);
            fill(t, sbuf, count, seed_me);

            /* 1. MPI_Sendrecv to the right, from the left. */
            memset(rbuf, GUARD, n + sz);
            MPI_Sendrecv(sbuf, (int)count, mpitype(t), right, tag, rbuf, (int)count, mpitype(t),
                         left, tag, MPI_COMM_WORLD, &st);
            check_recv("Sendrecv", t, bytes, count, rbuf, seed_l, &st, left, tag);

            /* 2. Isend/Irecv in both directions, receives posted first. */
            memset(rbuf, GUARD, n + sz);
            memset(rbuf2, GUARD, n + sz);
            MPI_Irecv(rbuf, (int)count, mpitype(t), left, tag, MPI_COMM_WORLD, &req[0]);
            MPI_Irecv(rbuf2, (int)count, mpitype(t), right, tag + 1000, MPI_COMM_WORLD, &req[1]);
            MPI_Isend(sbuf, (int)count, mpitype(t), right, tag, MPI_COMM_WORLD, &req[2]);
            MPI_Isend(sbuf, (int)count, mpitype(t), left, tag + 1000, MPI_COMM_WORLD, &req[3]);
            MPI_Waitall(4, req, sts);
            check_recv("Irecv(left)", t, bytes, count, rbuf, seed_l, &sts[0], left, tag);
            check_recv("Irecv(right)", t, bytes, count, rbuf2, seed_r, &sts[1], right, tag + 1000);
            for (int k = 0; k < 4; k++)
                CHECK(req[k] == MPI_REQUEST_NULL, "request %d not MPI_REQUEST_NULL after Waitall",
                      k);

            /* 3. Isend first, then a blocking Recv, then Wait. */
            memset(rbuf, GUARD, n + sz);
            MPI_Isend(sbuf, (int)count, mpitype(t), right, tag + 2000, MPI_COMM_WORLD, &req[0]);
            MPI_Recv(rbuf, (int)count, mpitype(t), left, tag + 2000, MPI_COMM_WORLD, &st);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            check_recv("Isend+Recv", t, bytes, count, rbuf, seed_l, &st, left, tag + 2000);

            /* 4. Sendrecv_replace (int and byte only, to keep it short). */
            if (t == T_INT || t == T_BYTE) {
                memcpy(rbuf, sbuf, n);
                memset(rbuf + n, GUARD, sz);
                MPI_Sendrecv_replace(rbuf, (int)count, mpitype(t), right, tag + 3000, left,
                                     tag + 3000, MPI_COMM_WORLD, &st);
                check_recv("Sendrecv_replace", t, bytes, count, rbuf, seed_l, &st, left,
                           tag + 3000);
            }

            /* The send buffer must not have been modified. */
            memset(rbuf, 0, n + sz);
            fill(t, rbuf, count, seed_me);
            CHECK(first_diff(rbuf, sbuf, n) < 0, "%s %zu bytes: send buffer was modified",
                  typename_(t), bytes);

            free(sbuf);
            free(rbuf);
            free(rbuf2);
        }
    }

    return mtest_finalize();
}
