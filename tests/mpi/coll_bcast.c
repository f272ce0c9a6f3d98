/*
 * coll_bcast: MPI_Bcast.
 *
 * Roots 0, size-1 and size/2; sizes 0, 1, 13, 4097 and 65536 bytes, and
 * 1 MiB when size <= 16; datatypes MPI_BYTE, MPI_INT, MPI_DOUBLE.  The data
 * depends on the root, every non-root buffer is pre-filled with garbage plus
 * a guard element that must stay untouched, and the root's buffer must not
 * change.  Also: back-to-back broadcasts from different roots with no
 * other synchronisation, and a broadcast on MPI_COMM_SELF.
 */
#include "mtest.h"

static void fill(MPI_Datatype t, void *buf, int count, int seed)
{
    int i;
    if (t == MPI_INT)
        for (i = 0; i < count; i++)
            ((int *)buf)[i] = seed * 65599 + i * 3 - 1000;
    else if (t == MPI_DOUBLE)
        for (i = 0; i < count; i++)
            ((double *)buf)[i] = seed + i * 0.125;
    else
        for (i = 0; i < count; i++)
            ((unsigned char *)buf)[i] = mtest_byte((unsigned)seed, (size_t)i);
}

int main(int argc, char **argv)
{
    static const int bytes[] = {0, 1, 13, 4097, 65536, 1 << 20};
    const MPI_Datatype types[3] = {MPI_BYTE, MPI_INT, MPI_DOUBLE};
    const int tsz[3] = {1, (int)sizeof(int), (int)sizeof(double)};
    int rank, size, roots[3], r, t, s;

    mtest_init(&argc, &argv, "coll_bcast");
    rank = mtest_rank_;
    size = mtest_size_;
    roots[0] = 0;
    roots[1] = size - 1;
    roots[2] = size / 2;

    for (r = 0; r < 3; r++) {
        int root = roots[r];
        if (r > 0 && (root == roots[0] || (r == 2 && root == roots[1])))
            continue; /* duplicate root for small sizes */
        for (t = 0; t < 3; t++) {
            for (s = 0; s < 6; s++) {
                int count = (bytes[s] + tsz[t] - 1) / tsz[t];
                size_t n = (size_t)count * (size_t)tsz[t];
                unsigned char *buf, *exp;
                int seed = root * 7 + t * 100 + s;
                long bad = -1;

                if (bytes[s] > 65536 && (size > 16 || t != 0))
                    continue; /* 1 MiB only once per root and for small size */
                buf = malloc(n + (size_t)tsz[t]);
                exp = malloc(n + (size_t)tsz[t]);
                fill(types[t], exp, count, seed);
                if (rank == root)
                    memcpy(buf, exp, n);
                else
                    memset(buf, 0x5A, n);
                memset(buf + n, 0xC3, (size_t)tsz[t]);

                MPI_Bcast(buf, count, types[t], root, MPI_COMM_WORLD);

                for (size_t i = 0; i < n; i++)
                    if (buf[i] != exp[i]) {
                        bad = (long)i;
                        break;
                    }
                CHECK(bad < 0, "root %d type %d count %d: byte %ld differs", root, t, count, bad);
                for (int i = 0; i < tsz[t]; i++)
                    if (buf[n + (size_t)i] != 0xC3) {
                        CHECK(0, "root %d type %d count %d: wrote past the end", root, t, count);
                        break;
                    }
                free(buf);
                free(exp);
            }
        }
    }

    /* back-to-back broadcasts from every root in turn (capped for large
     * sizes), one int each, no synchronisation in between */
    {
        int nroots = size < 32 ? size : 32, *vals = malloc(sizeof(int) * 32);
        for (r = 0; r < nroots; r++) {
            int root = (r * 7) % size;
            vals[r] = rank == root ? 1000 + root : -1;
            MPI_Bcast(&vals[r], 1, MPI_INT, root, MPI_COMM_WORLD);
        }
        for (r = 0; r < nroots; r++)
            CHECK(vals[r] == 1000 + (r * 7) % size, "back-to-back bcast %d: got %d", r, vals[r]);
        free(vals);
    }

    /* MPI_COMM_SELF */
    {
        double d[4] = {1.5, 2.5, -3.0, 4.25};
        MPI_Bcast(d, 4, MPI_DOUBLE, 0, MPI_COMM_SELF);
        CHECK(d[0] == 1.5 && d[1] == 2.5 && d[2] == -3.0 && d[3] == 4.25,
              "bcast on MPI_COMM_SELF changed the buffer");
    }

    return mtest_finalize();
}
