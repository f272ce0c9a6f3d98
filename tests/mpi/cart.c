/*
 * cart: Cartesian topologies (MPI 3.1 sections 7.5.1-7.5.6).
 *
 *  1. MPI_Dims_create: for every nnodes 1..64 and ndims 1..4 (also with
 *     some dimensions fixed) the product is nnodes, given dimensions are
 *     kept and the computed ones are non-increasing; known balanced
 *     answers (6 -> 3x2, 12 -> 4x3, 16 -> 4x2x2, 36 -> 6x6, 7 -> 7x1x1,
 *     24 -> 4x3x2); among splits whose largest and smallest dimensions
 *     differ least, the one with the largest smallest dimension, then the
 *     largest next one (5040 -> 21x16x15, not 20x18x14; 725760 in 6-D ->
 *     12x12x10x9x8x7); a fixed dimension that does not divide nnodes is
 *     an error (checked in group_errors).
 *  2. A 2-D grid from Dims_create(size, 2), periodic in dimension 0 only:
 *     MPI_Topo_test, Cartdim_get, Cart_get, Cart_coords (row-major),
 *     Cart_rank (with periodic wrap-around), Cart_shift (MPI_PROC_NULL at
 *     the non-periodic edges), and a halo exchange with Sendrecv in both
 *     directions of both dimensions.
 *  3. A 3-D torus: for every direction and displacement 1..2 the shifted
 *     neighbours are consistent with Cart_coords.
 *  4. Fewer grid points than ranks: the extra ranks get MPI_COMM_NULL.
 *  5. MPI_Cart_sub: rows and columns of the 2-D grid (sizes, ranks,
 *     topology of the result, an Allreduce over each); dropping every
 *     dimension gives rank 0 a one-rank zero-dimensional communicator and
 *     the others MPI_COMM_NULL.
 *  6. MPI_Comm_dup keeps the topology; MPI_COMM_WORLD has none
 *     (MPI_UNDEFINED); MPI_Cart_map.
 */
#include "mtest.h"

static int rank, size;

static void dims_case(int nnodes, int ndims, const int *given, const int *want)
{
    int dims[8], i;
    for (i = 0; i < ndims; i++)
        dims[i] = given ? given[i] : 0;
    MPI_Dims_create(nnodes, ndims, dims);
    for (i = 0; i < ndims; i++)
        CHECK(dims[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims,
              i, dims[i], want[i]);
}

static void dims_checks(void)
{
    int n, nd, i, fix;
    for (n = 1; n <= 64; n++)
        for (nd = 1; nd <= 4; nd++)
            for (fix = 0; fix < 2; fix++) {
                int dims[4] = {0, 0, 0, 0}, prod = 1, prev = 1 << 30;
                if (fix) {
                    /* fix the last dimension to the smallest divisor > 1 */
                    int d = 2;
                    while (d <= n && n % d)
                        d++;
                    if (d > n || nd == 1)
                        continue;
                    dims[nd - 1] = d;
                }
                MPI_Dims_create(n, nd, dims);
                for (i = 0; i < nd; i++) {
                    prod *= dims[i];
                    if (!(fix && i == nd - 1)) {
                        CHECK(dims[i] >= 1 && dims[i] <= prev,
                              "Dims_create(%d, %d): dims[%d] = %d not non-increasing", n, nd, i,
                              dims[i]);
                        prev = dims[i];
                    }
                }
                CHECK(prod == n, "Dims_create(%d, %d): product %d", n, nd, prod);
            }
    {
        int w2[2] = {3, 2}, w3[2] = {4, 3}, w4[3] = {4, 2, 2}, w5[2] = {6, 6}, w6[3] = {7, 1, 1};
        int w7[3] = {4, 3, 2}, g8[3] = {0, 3, 0}, w8[3] = {2, 3, 2}, w9[3] = {1, 1, 1};
        dims_case(6, 2, NULL, w2);
        dims_case(12, 2, NULL, w3);
        dims_case(16, 3, NULL, w4);
        dims_case(36, 2, NULL, w5);
        dims_case(7, 3, NULL, w6);
        dims_case(24, 3, NULL, w7);
        dims_case(12, 3, g8, w8);
        dims_case(1, 3, NULL, w9);
        int x1[3] = {21, 16, 15}, x2[3] = {27, 20, 20}, x3[5] = {29, 14, 9, 8, 7};
        int x4[6] = {12, 12, 10, 9, 8, 7}, x5[3] = {27, 24, 17}, x6[2] = {9973, 1};
        dims_case(5040, 3, NULL, x1);
        dims_case(10800, 3, NULL, x2);
        dims_case(204624, 5, NULL, x3);
        dims_case(725760, 6, NULL, x4);
        dims_case(11016, 3, NULL, x5);
        dims_case(9973, 2, NULL, x6);
    }
}

/* coordinates of rank r in row-major order */
static void coords_of(int r, int nd, const int *dims, int *c)
{
    int i;
    for (i = nd - 1; i >= 0; i--) {
        c[i] = r % dims[i];
        r /= dims[i];
    }
}

static int rank_of(int nd, const int *dims, const int *c)
{
    int i, r = 0;
    for (i = 0; i < nd; i++)
        r = r * dims[i] + c[i];
    return r;
}

static void grid2d(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, d2[2], p2[2], c2[2], my[2], i, st, nd, r;
    MPI_Comm cart;
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    CHECK(cart != MPI_COMM_NULL, "Cart_create gave MPI_COMM_NULL");
    if (cart == MPI_COMM_NULL)
        return;
    MPI_Comm_rank(cart, &r);
    CHECK_INT(r, rank, "rank in the grid (reorder = 0)");
    MPI_Topo_test(cart, &st);
    CHECK_INT(st, MPI_CART, "Topo_test of a Cartesian communicator");
    MPI_Cartdim_get(cart, &nd);
    CHECK_INT(nd, 2, "Cartdim_get");
    MPI_Cart_get(cart, 2, d2, p2, c2);
    coords_of(rank, 2, dims, my);
    CHECK(d2[0] == dims[0] && d2[1] == dims[1] && (p2[0] != 0) == 1 && p2[1] == 0,
          "Cart_get dims %dx%d periods %d,%d", d2[0], d2[1], p2[0], p2[1]);
    CHECK(c2[0] == my[0] && c2[1] == my[1], "Cart_get coords (%d,%d), expected (%d,%d)", c2[0],
          c2[1], my[0], my[1]);
    for (i = 0; i < size; i++) {
        int c[2], want[2], back = -1;
        MPI_Cart_coords(cart, i, 2, c);
        coords_of(i, 2, dims, want);
        CHECK(c[0] == want[0] && c[1] == want[1], "Cart_coords(%d) = (%d,%d)", i, c[0], c[1]);
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == i, "Cart_rank(Cart_coords(%d)) = %d", i, back);
        c[0] += dims[0] * (i % 2 ? 1 : -2); /* periodic dimension wraps */
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == i, "Cart_rank with wrapped coordinate: %d, expected %d", back, i);
    }
    /* shifts and a halo exchange */
    {
        int dir, disp;
        for (dir = 0; dir < 2; dir++)
            for (disp = -1; disp <= 1; disp += 2) {
                int src = -5, dst = -5, c[2], want_src, want_dst, in = -7, out = rank * 3 + dir;
                MPI_Status status;
                MPI_Cart_shift(cart, dir, disp, &src, &dst);
                c[0] = my[0];
                c[1] = my[1];
                c[dir] = my[dir] + disp;
                if (dir == 0)
                    c[0] = (c[0] + dims[0]) % dims[0];
                want_dst =
                    (c[dir] < 0 || c[dir] >= dims[dir]) ? MPI_PROC_NULL : rank_of(2, dims, c);
                c[dir] = my[dir] - disp;
                if (dir == 0)
                    c[0] = (c[0] + dims[0]) % dims[0];
                want_src =
                    (c[dir] < 0 || c[dir] >= dims[dir]) ? MPI_PROC_NULL : rank_of(2, dims, c);
                CHECK(src == want_src && dst == want_dst,
                      "Cart_shift(dir %d, disp %d) = (%d, %d), expected (%d, %d)", dir, disp, src,
                      dst, want_src, want_dst);
                MPI_Sendrecv(&out, 1, MPI_INT, dst, 10 + dir, &in, 1, MPI_INT, src, 10 + dir, cart,
                             &status);
                if (want_src == MPI_PROC_NULL)
                    CHECK(in == -7 && status.MPI_SOURCE == MPI_PROC_NULL,
                          "halo from MPI_PROC_NULL changed the buffer or source (%d)",
                          status.MPI_SOURCE);
                else
                    CHECK(in == want_src * 3 + dir, "halo dir %d disp %d got %d, expected %d", dir,
                          disp, in, want_src * 3 + dir);
            }
    }
    /* ---- 5. Cart_sub: columns (keep dim 0) and rows (keep dim 1) ---- */
    {
        int keep[2], k;
        for (k = 0; k < 2; k++) {
            MPI_Comm sub;
            int ss, sr, snd, sd[1], sp[1], sc[1], sum = 0, want = 0, j;
            keep[0] = k == 0;
            keep[1] = k == 1;
            MPI_Cart_sub(cart, keep, &sub);
            MPI_Comm_size(sub, &ss);
            MPI_Comm_rank(sub, &sr);
            CHECK(ss == dims[k] && sr == my[k], "Cart_sub keep %d: size %d rank %d", k, ss, sr);
            MPI_Cartdim_get(sub, &snd);
            CHECK_INT(snd, 1, "Cart_sub dimensions");
            MPI_Cart_get(sub, 1, sd, sp, sc);
            CHECK(sd[0] == dims[k] && (sp[0] != 0) == (k == 0) && sc[0] == my[k],
                  "Cart_sub keep %d: Cart_get %d %d %d", k, sd[0], sp[0], sc[0]);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub);
            for (j = 0; j < dims[k]; j++) {
                int c[2];
                c[0] = my[0];
                c[1] = my[1];
                c[k] = j;
                want += rank_of(2, dims, c);
            }
            CHECK(sum == want, "Cart_sub keep %d: Allreduce %d, expected %d", k, sum, want);
            MPI_Comm_free(&sub);
        }
        {
            MPI_Comm sub;
            int ss;
            keep[0] = keep[1] = 0;
            MPI_Cart_sub(cart, keep, &sub);
            /* MPI 3.1 7.5.7: a zero-dimensional topology, which has one
             * process (7.5.1): rank 0 gets it, the others MPI_COMM_NULL. */
            CHECK((sub != MPI_COMM_NULL) == (rank == 0),
                  "Cart_sub dropping every dimension: rank %d got %s", rank,
                  sub == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
            if (sub != MPI_COMM_NULL) {
                int nd = -1, res;
                MPI_Comm_size(sub, &ss);
                CHECK_INT(ss, 1, "Cart_sub dropping every dimension: size");
                MPI_Cartdim_get(sub, &nd);
                CHECK_INT(nd, 0, "Cart_sub dropping every dimension: Cartdim_get");
                MPI_Comm_compare(sub, MPI_COMM_SELF, &res);
                CHECK_INT(res, MPI_CONGRUENT, "Cart_sub dropping every dimension vs SELF");
                MPI_Comm_free(&sub);
            }
        }
    }
    /* ---- 6. dup keeps the topology ---- */
    {
        MPI_Comm d;
        int dd[2], dp[2], dc[2];
        MPI_Comm_dup(cart, &d);
        MPI_Topo_test(d, &st);
        CHECK_INT(st, MPI_CART, "Topo_test of a dup of a Cartesian communicator");
        MPI_Cart_get(d, 2, dd, dp, dc);
        CHECK(dd[0] == dims[0] && dd[1] == dims[1] && dc[0] == my[0] && dc[1] == my[1],
              "dup's Cart_get differs");
        MPI_Comm_free(&d);
    }
    MPI_Comm_free(&cart);
}

static void torus3d(void)
{
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, my[3], dir, disp;
    MPI_Comm cart;
    MPI_Dims_create(size, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &cart);
    if (cart == MPI_COMM_NULL) {
        CHECK(0, "3-D Cart_create gave MPI_COMM_NULL");
        return;
    }
    {
        int r;
        MPI_Comm_rank(cart, &r);
        MPI_Cart_coords(cart, r, 3, my);
    }
    for (dir = 0; dir < 3; dir++)
        for (disp = 1; disp <= 2; disp++) {
            int src, dst, c[3], i;
            MPI_Cart_shift(cart, dir, disp, &src, &dst);
            MPI_Cart_coords(cart, dst, 3, c);
            for (i = 0; i < 3; i++) {
                int want = i == dir ? (my[i] + disp) % dims[i] : my[i];
                CHECK(c[i] == want, "torus dir %d disp %d: dest coord %d is %d, expected %d", dir,
                      disp, i, c[i], want);
            }
            MPI_Cart_coords(cart, src, 3, c);
            CHECK(c[dir] == ((my[dir] - disp) % dims[dir] + dims[dir]) % dims[dir],
                  "torus dir %d disp %d: source coordinate %d", dir, disp, c[dir]);
        }
    {
        /* one step in every direction, data must come back around */
        int v = rank, in = -1, src, dst, r;
        MPI_Comm_rank(cart, &r);
        MPI_Cart_shift(cart, 2, 1, &src, &dst);
        MPI_Sendrecv(&v, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE);
        CHECK(in == src, "torus exchange got %d from %d", in, src);
    }
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    int st;
    mtest_init(&argc, &argv, "cart");
    rank = mtest_rank_;
    size = mtest_size_;

    dims_checks();
    grid2d();
    torus3d();

    /* ---- 4. fewer grid points than ranks ---- */
    if (size >= 2) {
        int dims[1], periods[1] = {0}, r;
        MPI_Comm cart;
        dims[0] = size - 1;
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
        if (rank == size - 1) {
            CHECK(cart == MPI_COMM_NULL, "rank outside the grid got a communicator");
        } else {
            CHECK(cart != MPI_COMM_NULL, "rank inside the grid got MPI_COMM_NULL");
            if (cart != MPI_COMM_NULL) {
                int src, dst;
                MPI_Comm_rank(cart, &r);
                CHECK_INT(r, rank, "rank in a 1-D grid");
                MPI_Cart_shift(cart, 0, 1, &src, &dst);
                CHECK(src == (rank ? rank - 1 : MPI_PROC_NULL) &&
                          dst == (rank < size - 2 ? rank + 1 : MPI_PROC_NULL),
                      "1-D shift (%d, %d)", src, dst);
                MPI_Comm_free(&cart);
            }
        }
    }

    /* ---- 6. no topology on WORLD; Cart_map ---- */
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    CHECK_INT(st, MPI_UNDEFINED, "Topo_test(MPI_COMM_WORLD)");
    {
        int dims[2], periods[2] = {0, 0}, nr = -5;
        dims[0] = 1;
        dims[1] = size;
        MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr);
        CHECK(nr >= 0 && nr < size, "Cart_map over all ranks gave %d", nr);
        if (size >= 2) {
            dims[1] = size - 1;
            MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr);
            CHECK(nr == MPI_UNDEFINED || (nr >= 0 && nr < size - 1), "Cart_map gave %d", nr);
        }
    }
    return mtest_finalize();
}
