/* MPI_Type_create_f90_integer/real/complex (MPI 3.1 17.1.9): the MPI type
 * of the Fortran kind SELECTED_INT_KIND(r) / SELECTED_REAL_KIND(p, r)
 * picks (gfortran's kinds: sizes checked), whose envelope names the F90
 * combiner with p and r as contents; it works in communication and
 * reductions like the sized type it stands for (an Allreduce MPI_SUM of
 * doubles through the (15, MPI_UNDEFINED) real, a self Sendrecv of
 * complex pairs).  A precision no kind has is an error, and so is freeing
 * one (MPI_ERRORS_RETURN). */
#include "mtest.h"

static void check_f90(MPI_Datatype t, int size, int combiner, int ni, int p, int r,
                      const char *what)
{
    int sz = -1, n_i = -1, n_a = -1, n_d = -1, comb = -1;
    MPI_Type_size(t, &sz);
    CHECK(sz == size, "%s: size %d, expected %d", what, sz, size);
    MPI_Type_get_envelope(t, &n_i, &n_a, &n_d, &comb);
    CHECK(comb == combiner && n_i == ni && n_a == 0 && n_d == 0,
          "%s: envelope combiner %d ni %d na %d nd %d, expected %d %d 0 0", what, comb, n_i, n_a,
          n_d, combiner, ni);
    if (comb == combiner && n_i == ni && ni <= 2) {
        int ints[2] = {-7, -7};
        MPI_Type_get_contents(t, ni, 0, 0, ints, NULL, NULL);
        if (ni == 1)
            CHECK(ints[0] == r, "%s: contents r %d, expected %d", what, ints[0], r);
        else
            CHECK(ints[0] == p && ints[1] == r, "%s: contents (%d, %d), expected (%d, %d)", what,
                  ints[0], ints[1], p, r);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_f90");
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Datatype t;
    struct {
        int r, size;
    } ik[] = {{2, 1}, {4, 2}, {9, 4}, {18, 8}};
    for (int i = 0; i < 4; i++) {
        CHECK_MPI(MPI_Type_create_f90_integer(ik[i].r, &t));
        check_f90(t, ik[i].size, MPI_COMBINER_F90_INTEGER, 1, 0, ik[i].r, "f90 integer");
    }
    struct {
        int p, r, size;
    } rk[] = {{6, MPI_UNDEFINED, 4}, {MPI_UNDEFINED, 37, 4},  {15, MPI_UNDEFINED, 8},
              {7, MPI_UNDEFINED, 8}, {MPI_UNDEFINED, 300, 8}, {15, 307, 8}};
    for (int i = 0; i < 6; i++) {
        CHECK_MPI(MPI_Type_create_f90_real(rk[i].p, rk[i].r, &t));
        check_f90(t, rk[i].size, MPI_COMBINER_F90_REAL, 2, rk[i].p, rk[i].r, "f90 real");
        CHECK_MPI(MPI_Type_create_f90_complex(rk[i].p, rk[i].r, &t));
        check_f90(t, 2 * rk[i].size, MPI_COMBINER_F90_COMPLEX, 2, rk[i].p, rk[i].r, "f90 complex");
    }

    /* a reduction through the real type of double precision */
    MPI_Datatype dbl;
    CHECK_MPI(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &dbl));
    double in[3] = {rank + 0.5, 2.0 * rank, -1.0}, out[3] = {0, 0, 0};
    CHECK_MPI(MPI_Allreduce(in, out, 3, dbl, MPI_SUM, MPI_COMM_WORLD));
    double s = 0;
    for (int i = 0; i < size; i++)
        s += i;
    CHECK(out[0] == s + 0.5 * size && out[1] == 2 * s && out[2] == -size,
          "Allreduce over the f90 real: %g %g %g", out[0], out[1], out[2]);

    /* point-to-point through the complex type of single precision */
    MPI_Datatype cpx;
    CHECK_MPI(MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &cpx));
    float send[4] = {1.5f, -2.0f, (float)rank, 4.25f}, recv[4] = {0};
    CHECK_MPI(MPI_Sendrecv(send, 2, cpx, rank, 3, recv, 2, cpx, rank, 3, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK(memcmp(send, recv, sizeof send) == 0, "Sendrecv of two f90 complex values");

    /* no kind has 1000 digits */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    t = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_create_f90_real(1000, MPI_UNDEFINED, &t) != MPI_SUCCESS,
          "MPI_Type_create_f90_real(1000) succeeded");
    /* it is predefined: freeing it is erroneous (MPICH 4.0.2 frees it and
     * then crashes in MPI_Finalize, so only elsewhere) */
    if (!mtest_is_mpich()) {
        MPI_Datatype d = dbl;
        CHECK(MPI_Type_free(&d) != MPI_SUCCESS, "MPI_Type_free of an f90 type succeeded");
    }
    return mtest_finalize();
}
