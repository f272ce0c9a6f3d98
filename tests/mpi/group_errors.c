/*
 * group_errors: errors of the group, attribute and topology calls with
 * MPI_ERRORS_RETURN (on MPI_COMM_WORLD and MPI_COMM_SELF; calls without a
 * communicator raise their errors there).  Each erroneous call must return
 * an error of the class below, and communication must go on normally
 * afterwards (a ring exchange and an Allreduce after each group of checks):
 *
 *   Group_incl / Group_excl / Group_translate_ranks with a rank outside
 *     the group (size, -1)                                   MPI_ERR_RANK
 *   MPI_GROUP_NULL to Group_size, Group_rank, Group_union, Group_free,
 *     Comm_create, Comm_create_group                         MPI_ERR_GROUP
 *   Group_range_incl with stride 0                           MPI_ERR_ARG
 *   MPI_KEYVAL_INVALID to Comm_set_attr, Comm_get_attr,
 *     Comm_delete_attr, Comm_free_keyval; setting or freeing the
 *     predefined MPI_TAG_UB                                  MPI_ERR_KEYVAL
 *   Dims_create with a fixed dimension not dividing nnodes, or a
 *     negative dimension                                     MPI_ERR_DIMS
 *   Cart_create with more grid points than ranks             MPI_ERR_ARG
 *   Cart_coords / Cart_shift / Cartdim_get / Cart_sub on a communicator
 *     without a topology                                     MPI_ERR_TOPOLOGY
 *   Cart_rank outside a non-periodic dimension, Cart_shift in a
 *     direction the grid does not have                       MPI_ERR_ARG
 *   Cart_coords of a rank outside the communicator           MPI_ERR_RANK
 *   Comm_split_type with an unknown split type               MPI_ERR_ARG
 *
 * All erroneous collective calls are made identically by every process and
 * are detected locally from the arguments.
 */
#include "mtest.h"

static int rank, size, right, left;

static const char *class_name(int c)
{
    if (c == MPI_SUCCESS)
        return "MPI_SUCCESS";
    if (c == MPI_ERR_RANK)
        return "MPI_ERR_RANK";
    if (c == MPI_ERR_GROUP)
        return "MPI_ERR_GROUP";
    if (c == MPI_ERR_ARG)
        return "MPI_ERR_ARG";
    if (c == MPI_ERR_KEYVAL)
        return "MPI_ERR_KEYVAL";
    if (c == MPI_ERR_DIMS)
        return "MPI_ERR_DIMS";
    if (c == MPI_ERR_TOPOLOGY)
        return "MPI_ERR_TOPOLOGY";
    if (c == MPI_ERR_COMM)
        return "MPI_ERR_COMM";
    if (c == MPI_ERR_OTHER)
        return "MPI_ERR_OTHER";
    return "(other class)";
}

static void expect_class(int rc, int cls, const char *what)
{
    int ec = -12345, len = -1;
    char str[MPI_MAX_ERROR_STRING];
    CHECK(rc != MPI_SUCCESS, "%s: returned MPI_SUCCESS, expected %s", what, class_name(cls));
    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_class(rc, &ec);
    CHECK(ec == cls, "%s: error class %d (%s), expected %d (%s)", what, ec, class_name(ec), cls,
          class_name(cls));
    str[0] = 0;
    MPI_Error_string(rc, str, &len);
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "%s: MPI_Error_string gave length %d", what, len);
}

static void still_works(const char *after)
{
    int out = rank * 3 + 1, in = -1, sum = 0, rc;
    rc = MPI_Sendrecv(&out, 1, MPI_INT, right, 77, &in, 1, MPI_INT, left, 77, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && in == left * 3 + 1, "after %s: ring exchange rc %d value %d", after,
          rc, in);
    rc = MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && sum == 3 * size * (size - 1) / 2 + size,
          "after %s: allreduce rc %d sum %d", after, rc, sum);
}

int main(int argc, char **argv)
{
    MPI_Group world, g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    int rc, n, r[2], out[2], flag;
    void *v;

    mtest_init(&argc, &argv, "group_errors");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    /* ---- ranks outside a group ---- */
    r[0] = size;
    rc = MPI_Group_incl(world, 1, r, &g);
    expect_class(rc, MPI_ERR_RANK, "Group_incl with rank == size");
    r[0] = -1;
    rc = MPI_Group_incl(world, 1, r, &g);
    expect_class(rc, MPI_ERR_RANK, "Group_incl with rank -1");
    r[0] = size + 3;
    rc = MPI_Group_excl(world, 1, r, &g);
    expect_class(rc, MPI_ERR_RANK, "Group_excl with rank size + 3");
    r[0] = 0;
    r[1] = size;
    rc = MPI_Group_translate_ranks(world, 2, r, world, out);
    expect_class(rc, MPI_ERR_RANK, "Group_translate_ranks with rank == size");
    still_works("rank errors");

    /* ---- invalid groups ---- */
    rc = MPI_Group_size(MPI_GROUP_NULL, &n);
    expect_class(rc, MPI_ERR_GROUP, "Group_size(MPI_GROUP_NULL)");
    rc = MPI_Group_rank(MPI_GROUP_NULL, &n);
    expect_class(rc, MPI_ERR_GROUP, "Group_rank(MPI_GROUP_NULL)");
    rc = MPI_Group_union(MPI_GROUP_NULL, world, &g);
    expect_class(rc, MPI_ERR_GROUP, "Group_union(MPI_GROUP_NULL, world)");
    g = MPI_GROUP_NULL;
    rc = MPI_Group_free(&g);
    expect_class(rc, MPI_ERR_GROUP, "Group_free(MPI_GROUP_NULL)");
    rc = MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c);
    expect_class(rc, MPI_ERR_GROUP, "Comm_create with MPI_GROUP_NULL");
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c);
    expect_class(rc, MPI_ERR_GROUP, "Comm_create_group with MPI_GROUP_NULL");
    {
        int ranges[1][3];
        ranges[0][0] = 0;
        ranges[0][1] = size - 1;
        ranges[0][2] = 0;
        rc = MPI_Group_range_incl(world, 1, ranges, &g);
        expect_class(rc, MPI_ERR_ARG, "Group_range_incl with stride 0");
    }
    still_works("group errors");

    /* ---- keyvals ---- */
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL);
    expect_class(rc, MPI_ERR_KEYVAL, "Comm_set_attr(MPI_KEYVAL_INVALID)");
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag);
    expect_class(rc, MPI_ERR_KEYVAL, "Comm_get_attr(MPI_KEYVAL_INVALID)");
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID);
    expect_class(rc, MPI_ERR_KEYVAL, "Comm_delete_attr(MPI_KEYVAL_INVALID)");
    n = MPI_KEYVAL_INVALID;
    rc = MPI_Comm_free_keyval(&n);
    expect_class(rc, MPI_ERR_KEYVAL, "Comm_free_keyval(MPI_KEYVAL_INVALID)");
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL);
    expect_class(rc, MPI_ERR_KEYVAL, "Comm_set_attr(MPI_TAG_UB)");
    n = MPI_TAG_UB;
    rc = MPI_Comm_free_keyval(&n);
    expect_class(rc, MPI_ERR_KEYVAL, "Comm_free_keyval(MPI_TAG_UB)");
    {
        int *ub = NULL;
        flag = 0;
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        CHECK(rc == MPI_SUCCESS && flag && ub && *ub >= 32767, "MPI_TAG_UB damaged");
    }
    still_works("keyval errors");

    /* ---- dims and topologies ---- */
    {
        int dims[2], periods[2] = {0, 0}, coords[2], src, dst;
        dims[0] = 2;
        dims[1] = 0;
        rc = MPI_Dims_create(7, 2, dims);
        expect_class(rc, MPI_ERR_DIMS, "Dims_create(7, 2, {2, 0})");
        dims[0] = -1;
        dims[1] = 0;
        rc = MPI_Dims_create(6, 2, dims);
        expect_class(rc, MPI_ERR_DIMS, "Dims_create with a negative dimension");
        dims[0] = size + 1;
        rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
        expect_class(rc, MPI_ERR_ARG, "Cart_create with more points than ranks");
        rc = MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords);
        expect_class(rc, MPI_ERR_TOPOLOGY, "Cart_coords on MPI_COMM_WORLD");
        rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst);
        expect_class(rc, MPI_ERR_TOPOLOGY, "Cart_shift on MPI_COMM_WORLD");
        rc = MPI_Cartdim_get(MPI_COMM_WORLD, &n);
        expect_class(rc, MPI_ERR_TOPOLOGY, "Cartdim_get on MPI_COMM_WORLD");
        periods[0] = 1;
        rc = MPI_Cart_sub(MPI_COMM_WORLD, periods, &c);
        expect_class(rc, MPI_ERR_TOPOLOGY, "Cart_sub on MPI_COMM_WORLD");
        still_works("topology errors on WORLD");

        dims[0] = size;
        periods[0] = 0;
        rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
        CHECK(rc == MPI_SUCCESS && c != MPI_COMM_NULL, "Cart_create failed: %d", rc);
        if (c != MPI_COMM_NULL) {
            MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
            coords[0] = size;
            rc = MPI_Cart_rank(c, coords, &n);
            expect_class(rc, MPI_ERR_ARG, "Cart_rank outside a non-periodic dimension");
            coords[0] = -1;
            rc = MPI_Cart_rank(c, coords, &n);
            expect_class(rc, MPI_ERR_ARG, "Cart_rank at -1 in a non-periodic dimension");
            rc = MPI_Cart_shift(c, 1, 1, &src, &dst);
            expect_class(rc, MPI_ERR_ARG, "Cart_shift in direction 1 of a 1-D grid");
            rc = MPI_Cart_coords(c, size, 1, coords);
            expect_class(rc, MPI_ERR_RANK, "Cart_coords of rank size");
            coords[0] = 0;
            rc = MPI_Cart_rank(c, coords, &n);
            CHECK(rc == MPI_SUCCESS && n == 0, "Cart_rank after errors: rc %d rank %d", rc, n);
            MPI_Comm_free(&c);
        }
        still_works("topology errors");
    }

    rc = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c);
    expect_class(rc, MPI_ERR_ARG, "Comm_split_type with split type 12345");
    still_works("split_type error");

    MPI_Group_free(&world);
    return mtest_finalize();
}
