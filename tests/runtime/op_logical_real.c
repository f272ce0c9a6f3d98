/* MPI_LAND, MPI_LOR and MPI_LXOR on floating types, which MPICH accepts (its
 * test coll/oplxor) though the standard lists only integers and logicals:
 * nonzero is true, the result is 1.0 or 0.0.  Through the master's fold
 * (-nr < size), the ranks' own (-nr = size), MPI_Reduce_local, and across
 * nodes.  Before: MPI_ERR_OP from every call. */
#include <mpi.h>
#include <stdio.h>

static int rank, size, bad;

static double get(MPI_Datatype t, const void *p, int i)
{
    if (t == MPI_FLOAT || t == MPI_REAL)
        return ((const float *)p)[i];
    if (t == MPI_LONG_DOUBLE)
        return (double)((const long double *)p)[i];
    return ((const double *)p)[i];
}

static void put(MPI_Datatype t, void *p, int i, double v)
{
    if (t == MPI_FLOAT || t == MPI_REAL)
        ((float *)p)[i] = (float)v;
    else if (t == MPI_LONG_DOUBLE)
        ((long double *)p)[i] = v;
    else
        ((double *)p)[i] = v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype types[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION};
    const char *tn[] = {"MPI_FLOAT", "MPI_DOUBLE", "MPI_LONG_DOUBLE", "MPI_REAL",
                        "MPI_DOUBLE_PRECISION"};
    MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    const char *on[] = {"MPI_LAND", "MPI_LOR", "MPI_LXOR"};
    for (int ti = 0; ti < 5; ti++) {
        for (int oi = 0; oi < 3; oi++) {
            /* element 0: all true (2.5); 1: all false; 2: true on rank 0 only;
             * 3: true on odd ranks (-0.5) */
            long double in[4], out[4], loc[4];
            put(types[ti], in, 0, 2.5);
            put(types[ti], in, 1, 0.0);
            put(types[ti], in, 2, rank == 0 ? 7.0 : 0.0);
            put(types[ti], in, 3, rank % 2 ? -0.5 : 0.0);
            int odd = size / 2, want[4];
            if (oi == 0) {
                want[0] = 1, want[1] = 0, want[2] = size == 1, want[3] = odd == size;
            } else if (oi == 1) {
                want[0] = 1, want[1] = 0, want[2] = 1, want[3] = odd > 0;
            } else {
                want[0] = size % 2, want[1] = 0, want[2] = 1, want[3] = odd % 2;
            }
            int rc = MPI_Allreduce(in, out, 4, types[ti], ops[oi], MPI_COMM_WORLD);
            if (rc != MPI_SUCCESS) {
                char msg[MPI_MAX_ERROR_STRING];
                int len;
                MPI_Error_string(rc, msg, &len);
                fprintf(stderr, "rank %d: Allreduce %s %s: %s\n", rank, on[oi], tn[ti], msg);
                bad++;
                continue;
            }
            for (int i = 0; i < 4; i++)
                if (get(types[ti], out, i) != want[i]) {
                    fprintf(stderr, "rank %d: Allreduce %s %s [%d] = %g, expected %d\n", rank,
                            on[oi], tn[ti], i, get(types[ti], out, i), want[i]);
                    bad++;
                }
            /* local: loc = in op loc with loc = (1, 1, 0, 0) */
            put(types[ti], loc, 0, 1.0);
            put(types[ti], loc, 1, 1.0);
            put(types[ti], loc, 2, 0.0);
            put(types[ti], loc, 3, 0.0);
            rc = MPI_Reduce_local(in, loc, 4, types[ti], ops[oi]);
            int a[4] = {1, 0, rank == 0, rank % 2}, b[4] = {1, 1, 0, 0};
            for (int i = 0; rc == MPI_SUCCESS && i < 4; i++) {
                int w = oi == 0 ? a[i] && b[i] : oi == 1 ? a[i] || b[i] : a[i] != b[i];
                if (get(types[ti], loc, i) != w) {
                    fprintf(stderr, "rank %d: Reduce_local %s %s [%d] = %g, expected %d\n", rank,
                            on[oi], tn[ti], i, get(types[ti], loc, i), w);
                    bad++;
                }
            }
            if (rc != MPI_SUCCESS) {
                fprintf(stderr, "rank %d: Reduce_local %s %s failed\n", rank, on[oi], tn[ti]);
                bad++;
            }
        }
    }
    int tot = 0;
    MPI_Allreduce(&bad, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s op_logical_real on %d\n", tot ? "FAIL" : "PASS", size);
    MPI_Finalize();
    return tot ? 1 : 0;
}
