/*
 * coll_allreduce: MPI_Allreduce.
 *
 *  - MPI_INT SUM at counts 0, 1, 7, 1000, with separate buffers and with
 *    MPI_IN_PLACE (sendbuf = MPI_IN_PLACE on every process, the input is
 *    taken from recvbuf and replaced by the result);
 *  - MPI_LONG_LONG MAX/MIN with values using all 64 bits, MPI_INT BAND/BOR,
 *    MPI_INT LAND/LOR (compared by truth value);
 *  - MPI_DOUBLE SUM of non-integer values, compared with a relative
 *    tolerance of 1e-12 (reduction order is unspecified);
 *  - MPI_DOUBLE_INT MINLOC and MPI_2INT MAXLOC with ties (lowest index wins);
 *  - 1 MiB of ints (SUM, in place) when size <= 16;
 *  - MPI_COMM_SELF: the result is the input.
 * Every process must get the full result.
 */
#include "mtest.h"

#include <math.h>

static int rank, size;

static void int_sum(int count, int inplace)
{
    int *s = malloc(sizeof(int) * (size_t)(count + 1));
    int *r = malloc(sizeof(int) * (size_t)(count + 1));
    int i, bad = -1;

    for (i = 0; i < count; i++)
        s[i] = rank * 3 + i * (rank % 2 ? -1 : 1);
    r[count] = -12345;
    if (inplace) {
        memcpy(r, s, sizeof(int) * (size_t)count);
        MPI_Allreduce(MPI_IN_PLACE, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    } else {
        for (i = 0; i < count; i++)
            r[i] = -1;
        MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    for (i = 0; i < count && bad < 0; i++) {
        /* sum over k of 3k + i * (k odd ? -1 : 1), in closed form */
        long long odd = size / 2, even = size - odd;
        long long e = 3LL * size * (size - 1) / 2 + (long long)i * (even - odd);
        if (r[i] != e)
            bad = i;
    }
    CHECK(bad < 0, "int SUM count %d%s: element %d wrong (%d)", count, inplace ? " IN_PLACE" : "",
          bad, bad >= 0 ? r[bad] : 0);
    CHECK(r[count] == -12345, "int SUM count %d: wrote past the end", count);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    int i;

    mtest_init(&argc, &argv, "coll_allreduce");
    rank = mtest_rank_;
    size = mtest_size_;

    {
        static const int counts[] = {0, 1, 7, 1000};
        for (i = 0; i < 4; i++) {
            int_sum(counts[i], 0);
            int_sum(counts[i], 1);
        }
    }

    /* long long MAX and MIN, in one go using two buffers */
    {
        long long v[4], r[4], emax[2], emin[2];
        for (i = 0; i < 2; i++) {
            v[i] = ((long long)((rank * 7 + i) % 13) - 6) * (1LL << 58) + rank;
            v[2 + i] = v[i];
        }
        for (i = 0; i < 2; i++) {
            emax[i] = emin[i] = ((long long)((0 * 7 + i) % 13) - 6) * (1LL << 58);
            for (int k = 1; k < size; k++) {
                long long x = ((long long)((k * 7 + i) % 13) - 6) * (1LL << 58) + k;
                if (x > emax[i])
                    emax[i] = x;
                if (x < emin[i])
                    emin[i] = x;
            }
        }
        MPI_Allreduce(v, r, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(v + 2, r + 2, 2, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        for (i = 0; i < 2; i++) {
            CHECK(r[i] == emax[i], "long long MAX [%d] = %lld want %lld", i, r[i], emax[i]);
            CHECK(r[2 + i] == emin[i], "long long MIN [%d] = %lld want %lld", i, r[2 + i], emin[i]);
        }
    }

    /* bitwise and logical on int */
    {
        int v = ~(1 << (rank % 31)), r = 0, e = ~0;
        for (int k = 0; k < size; k++)
            e &= ~(1 << (k % 31));
        MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD);
        CHECK(r == e, "BAND = %#x want %#x", (unsigned)r, (unsigned)e);
        v = 1 << (rank % 31);
        e = 0;
        for (int k = 0; k < size; k++)
            e |= 1 << (k % 31);
        MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
        CHECK(r == e, "BOR = %#x want %#x", (unsigned)r, (unsigned)e);

        {
            /* [0]: all true -> LAND true; [1]: only the last rank false */
            int l[2] = {rank + 1, rank == size - 1 ? 0 : 7}, lr[2] = {-1, -1};
            MPI_Allreduce(l, lr, 2, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            CHECK(lr[0] != 0 && lr[1] == 0, "LAND gave %d %d", lr[0], lr[1]);
            /* [0]: only rank 0 true; [1]: all false */
            l[0] = rank == 0 ? 5 : 0;
            l[1] = 0;
            MPI_Allreduce(l, lr, 2, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
            CHECK(lr[0] != 0 && lr[1] == 0, "LOR gave %d %d", lr[0], lr[1]);
        }
    }

    /* double SUM with rounding: tolerance */
    {
        enum { ND = 16 };
        double v[ND], r[ND];
        for (i = 0; i < ND; i++)
            v[i] = 1.0 / (rank + 1.0) + i * 1e-3 + (rank % 3) * 1e7;
        MPI_Allreduce(v, r, ND, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; i < ND; i++) {
            double e = 0.0;
            for (int k = 0; k < size; k++)
                e += 1.0 / (k + 1.0) + i * 1e-3 + (k % 3) * 1e7;
            CHECK(fabs(r[i] - e) <= 1e-12 * fabs(e),
                  "double SUM [%d] = %.17g want %.17g (rel err %g)", i, r[i], e,
                  fabs(r[i] - e) / fabs(e));
        }
    }

    /* MINLOC / MAXLOC with ties */
    {
        struct {
            double v;
            int i;
        } d[3], dr[3];
        struct {
            int v;
            int i;
        } t[3], tr[3];
        for (i = 0; i < 3; i++) {
            d[i].v = (double)((rank + i) % 3); /* value 0 at several ranks */
            d[i].i = size - rank;              /* lowest index: highest rank */
            t[i].v = (rank * (i + 1)) % 4;     /* value 3 at several ranks */
            t[i].i = rank + 10 * i;
        }
        MPI_Allreduce(d, dr, 3, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
        MPI_Allreduce(t, tr, 3, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
        for (i = 0; i < 3; i++) {
            double ev = 1e300;
            int ei = 0, tv = -1, ti = 0;
            for (int k = 0; k < size; k++) {
                double x = (double)((k + i) % 3);
                int y = (k * (i + 1)) % 4;
                if (x < ev || (x == ev && size - k < ei)) {
                    ev = x;
                    ei = size - k;
                }
                if (y > tv || (y == tv && k + 10 * i < ti)) {
                    tv = y;
                    ti = k + 10 * i;
                }
            }
            CHECK(dr[i].v == ev && dr[i].i == ei, "DOUBLE_INT MINLOC [%d] = (%g,%d) want (%g,%d)",
                  i, dr[i].v, dr[i].i, ev, ei);
            CHECK(tr[i].v == tv && tr[i].i == ti, "2INT MAXLOC [%d] = (%d,%d) want (%d,%d)", i,
                  tr[i].v, tr[i].i, tv, ti);
        }
    }

    /* 1 MiB in place */
    if (size <= 16) {
        const int n = (1 << 20) / (int)sizeof(int);
        int *b = malloc(sizeof(int) * (size_t)n), bad = -1;
        for (i = 0; i < n; i++)
            b[i] = (i % 1000) * (rank + 1);
        MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; i < n; i++)
            if (b[i] != (i % 1000) * (size * (size + 1) / 2)) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "1 MiB in-place SUM wrong at %d", bad);
        free(b);
    }

    /* MPI_COMM_SELF */
    {
        int v[3] = {rank, 5, -9}, r[3] = {0, 0, 0};
        MPI_Allreduce(v, r, 3, MPI_INT, MPI_SUM, MPI_COMM_SELF);
        CHECK(r[0] == rank && r[1] == 5 && r[2] == -9, "COMM_SELF SUM gave %d %d %d", r[0], r[1],
              r[2]);
        MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_PROD, MPI_COMM_SELF);
        CHECK(v[0] == rank && v[1] == 5 && v[2] == -9, "COMM_SELF IN_PLACE PROD gave %d %d %d",
              v[0], v[1], v[2]);
    }

    return mtest_finalize();
}
