/*
 * spawn: MPI_Comm_spawn (MPI 4.1 section 11.8.2).
 *
 * The program spawns itself: with no parent it is the parent job, which
 * spawns NCHILD copies (argument "child") from rank 0 of MPI_COMM_WORLD and
 * checks, on every parent rank:
 *  1. the error codes are all MPI_SUCCESS and the intercommunicator's
 *     remote group has NCHILD ranks; MPI_Comm_get_parent is MPI_COMM_NULL;
 *     MPI_UNIVERSE_SIZE, where set, is at least the world's size;
 *  2. point-to-point both ways: child r sends 100 + r to parent r % p, each
 *     parent answers every child it heard from;
 *  3. collectives on the intercommunicator: Bcast from parent 0 to the
 *     children, Allreduce (each group gets the other's sum);
 *  4. MPI_Intercomm_merge (parents low): an intracommunicator of p + NCHILD
 *     ranks, parents first, Allreduce over it;
 *  5. the children report their own failures to the parents (Reduce over
 *     the intercommunicator), so the parent's verdict covers them;
 *  6. MPI_Comm_disconnect on both sides.
 * The children check their world (size NCHILD), argv, the parent group's
 * size, and MPI_APPNUM (0).
 */
#include "mtest.h"

#define NCHILD 2

static int child_main(MPI_Comm parent, int argc, char **argv)
{
    int rank, size, psize, flag = 0, *appnum = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_INT(size, NCHILD, "children's world size");
    CHECK(argc >= 2 && !strcmp(argv[1], "child"), "child's argv[1] is not \"child\"");
    int inter = 0;
    MPI_Comm_test_inter(parent, &inter);
    CHECK(inter, "the parent communicator is not an intercommunicator");
    MPI_Comm_remote_size(parent, &psize);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && *appnum == 0, "MPI_APPNUM: flag %d value %d", flag, flag ? *appnum : -1);

    int v = 100 + rank, back = -1;
    MPI_Send(&v, 1, MPI_INT, rank % psize, 1, parent);
    MPI_Recv(&back, 1, MPI_INT, rank % psize, 2, parent, MPI_STATUS_IGNORE);
    CHECK_INT(back, 1000 * (rank % psize) + rank, "parent's answer");

    int b = -1;
    MPI_Bcast(&b, 1, MPI_INT, 0, parent);
    CHECK_INT(b, 4242, "Bcast from the parents' rank 0");
    int mine = rank + 1, theirs = 0;
    MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, parent);
    CHECK_INT(theirs, psize * (psize + 1) / 2, "Allreduce: the parents' sum");

    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    int mr, ms, total = 0;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK_INT(ms, psize + NCHILD, "merged size");
    CHECK_INT(mr, psize + rank, "child's merged rank (parents first)");
    MPI_Allreduce(&mr, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(total, ms * (ms - 1) / 2, "Allreduce over the merged communicator");
    MPI_Comm_free(&merged);

    int errs = mtest_errors();
    MPI_Reduce(&errs, NULL, 1, MPI_INT, MPI_SUM, 0, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Init(&argc, &argv);
    mtest_begin("spawn");
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child_main(parent, argc, argv);
    CHECK(argc < 2 || strcmp(argv[1], "child"), "a child without a parent");
    int rank = mtest_rank_, size = mtest_size_;

    int *usize = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (flag)
        CHECK(*usize >= size, "MPI_UNIVERSE_SIZE %d < world size %d", *usize, size);

    MPI_Comm ic;
    int errcodes[NCHILD];
    char *args[] = {"child", NULL};
    for (int i = 0; i < NCHILD; i++)
        errcodes[i] = -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_spawn(argv[0], args, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, errcodes);
    mtest_dynproc_unavailable(rc);
    CHECK_INT(rc, MPI_SUCCESS, "MPI_Comm_spawn");
    for (int i = 0; i < NCHILD; i++)
        CHECK_INT(errcodes[i], MPI_SUCCESS, "errcode");
    int rs = -1, inter = 0;
    MPI_Comm_test_inter(ic, &inter);
    CHECK(inter, "MPI_Comm_spawn did not return an intercommunicator");
    MPI_Comm_remote_size(ic, &rs);
    CHECK_INT(rs, NCHILD, "remote size of the spawn's intercommunicator");

    for (int c = 0; c < NCHILD; c++) {
        if (c % size != rank)
            continue;
        int v = -1, ans = 1000 * rank + c;
        MPI_Recv(&v, 1, MPI_INT, c, 1, ic, MPI_STATUS_IGNORE);
        CHECK_INT(v, 100 + c, "child's message");
        MPI_Send(&ans, 1, MPI_INT, c, 2, ic);
    }

    int b = 4242;
    MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    int mine = rank + 1, theirs = 0;
    MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, ic);
    CHECK_INT(theirs, NCHILD * (NCHILD + 1) / 2, "Allreduce: the children's sum");

    MPI_Comm merged;
    MPI_Intercomm_merge(ic, 0, &merged);
    int mr, ms, total = 0;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK_INT(ms, size + NCHILD, "merged size");
    CHECK_INT(mr, rank, "parent's merged rank (parents first)");
    MPI_Allreduce(&mr, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK_INT(total, ms * (ms - 1) / 2, "Allreduce over the merged communicator");
    MPI_Comm_free(&merged);

    int cerrs = 0;
    MPI_Reduce(NULL, &cerrs, 1, MPI_INT, MPI_SUM, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    if (rank == 0)
        CHECK(cerrs == 0, "the children reported %d failures", cerrs);
    MPI_Comm_disconnect(&ic);
    return mtest_finalize();
}
