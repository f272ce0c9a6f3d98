/*
 * comm_idup: nonblocking communicator duplication (MPI 3.1 6.4.2
 * MPI_Comm_idup; MPI 4.0 MPI_Comm_idup_with_info) and MPI_Comm_dup_with_info.
 *
 *  1. MPI_Comm_idup of MPI_COMM_WORLD: congruent, same rank, usable; its
 *     messages never match the parent's.
 *  2. Progress without the program: even ranks start the idup and then send
 *     their odd partner a message that the partner receives before starting
 *     its own (an idup that blocked in the call would deadlock).
 *  3. Several idups of one communicator outstanding at once, with an
 *     Iallreduce between them, completed by one Waitall (and by Test
 *     polling): every result is a distinct communicator.
 *  4. idup of a split communicator, of MPI_COMM_SELF, of a Cartesian
 *     communicator (the topology is kept), of a communicator made by
 *     MPI_Comm_create_group (collective over its members only), and of a
 *     parent freed before the idup completes.
 *  5. Attributes go through their copy callbacks (copied values on the
 *     new communicator, a keyval without copy is not copied).
 *  6. Intercommunicators: the groups of even and odd ranks; the even group
 *     starts the idup before sending, the odd one after receiving.
 *  7. MPI_Comm_idup_with_info and MPI_Comm_dup_with_info.
 */
#include "mtest.h"

static int rank, size;

static int copy_plus_one(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    (void)extra;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* comm and its duplicate d are congruent, d works and is isolated from comm. */
static void check_dup(MPI_Comm comm, MPI_Comm d, const char *what)
{
    int cmp = -1, r1 = -1, r2 = -2, s1 = -1, s2 = -2;
    MPI_Comm_compare(comm, d, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "%s: compare gave %d", what, cmp);
    MPI_Comm_rank(comm, &r1);
    MPI_Comm_rank(d, &r2);
    MPI_Comm_size(comm, &s1);
    MPI_Comm_size(d, &s2);
    CHECK(r1 == r2 && s1 == s2, "%s: rank %d/%d size %d/%d", what, r1, r2, s1, s2);
    int sum = -1;
    MPI_Allreduce(&r1, &sum, 1, MPI_INT, MPI_SUM, d);
    CHECK(sum == s1 * (s1 - 1) / 2, "%s: allreduce gave %d", what, sum);
    /* A message on the parent and one on the duplicate, received in the
     * opposite order: each lands on its own communicator. */
    int next = (r1 + 1) % s1, prev = (r1 + s1 - 1) % s1, a = 1, b = 2, ga = -1, gb = -1;
    MPI_Request rq[2];
    MPI_Isend(&a, 1, MPI_INT, next, 9, comm, &rq[0]);
    MPI_Isend(&b, 1, MPI_INT, next, 9, d, &rq[1]);
    MPI_Recv(&gb, 1, MPI_INT, prev, 9, d, MPI_STATUS_IGNORE);
    MPI_Recv(&ga, 1, MPI_INT, prev, 9, comm, MPI_STATUS_IGNORE);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK(ga == 1 && gb == 2, "%s: got %d on the parent and %d on the duplicate", what, ga, gb);
}

static void overlap_p2p(void)
{
    MPI_Comm d;
    MPI_Request rq;
    int partner = rank % 2 ? rank - 1 : rank + 1, tok = 0;
    if (partner >= size)
        partner = MPI_PROC_NULL;
    if (rank % 2)
        MPI_Recv(&tok, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    if (rank % 2 == 0) {
        tok = 7;
        MPI_Send(&tok, 1, MPI_INT, partner, 1, MPI_COMM_WORLD);
    }
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    if (rank % 2)
        CHECK(tok == 7, "token %d", tok);
    check_dup(MPI_COMM_WORLD, d, "idup overlapping point-to-point");
    MPI_Comm_free(&d);
}

static void several(void)
{
    enum { N = 4 };
    MPI_Comm d[N];
    MPI_Request rq[N + 1];
    int x = rank, sum = -1;
    for (int round = 0; round < 2; round++) {
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &rq[0]));
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d[1], &rq[1]));
        CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[2]));
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d[2], &rq[3]));
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d[3], &rq[4]));
        if (round == 0) {
            CHECK_MPI(MPI_Waitall(N + 1, rq, MPI_STATUSES_IGNORE));
        } else {
            for (int i = N; i >= 0; i--) {
                int flag = 0;
                while (!flag)
                    CHECK_MPI(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
            }
        }
        CHECK(sum == size * (size - 1) / 2, "iallreduce among idups: %d", sum);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < i; j++)
                CHECK(d[i] != d[j], "idups %d and %d gave the same handle", i, j);
            check_dup(MPI_COMM_WORLD, d[i], "one of several idups");
        }
        /* Each duplicate has its own context: a message sent on d[i] is
         * received on d[i] although the receives are posted in reverse. */
        int v[N], g[N];
        MPI_Request sr[2 * N];
        for (int i = 0; i < N; i++) {
            v[i] = 100 + i;
            g[i] = -1;
            MPI_Irecv(&g[i], 1, MPI_INT, (rank + size - 1) % size, 0, d[N - 1 - i], &sr[i]);
        }
        for (int i = 0; i < N; i++)
            MPI_Isend(&v[i], 1, MPI_INT, (rank + 1) % size, 0, d[i], &sr[N + i]);
        MPI_Waitall(2 * N, sr, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            CHECK(g[i] == 100 + N - 1 - i, "message on idup %d went to %d", N - 1 - i, g[i]);
        for (int i = 0; i < N; i++)
            MPI_Comm_free(&d[i]);
    }
}

static void others(void)
{
    MPI_Comm sp, d, self_d, cart, cd;
    MPI_Request rq;
    /* A split communicator */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &sp);
    CHECK_MPI(MPI_Comm_idup(sp, &d, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(sp, d, "idup of a split");
    MPI_Comm_free(&d);
    /* The parent freed before the idup completes */
    CHECK_MPI(MPI_Comm_idup(sp, &d, &rq));
    MPI_Comm_free(&sp);
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int s = -1, sum = -1, one = 1;
    MPI_Comm_size(d, &s);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d);
    CHECK(sum == s && s == (size - rank % 3 + 2) / 3, "idup of a freed parent: size %d sum %d", s,
          sum);
    MPI_Comm_free(&d);
    /* MPI_COMM_SELF */
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_SELF, &self_d, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(MPI_COMM_SELF, self_d, "idup of MPI_COMM_SELF");
    MPI_Comm_free(&self_d);
    /* A Cartesian communicator keeps its topology */
    int dims[1] = {size}, periods[1] = {1}, topo = -1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    CHECK_MPI(MPI_Comm_idup(cart, &cd, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_Topo_test(cd, &topo);
    CHECK(topo == MPI_CART, "idup of a Cartesian communicator: topology %d", topo);
    int src = -1, dst = -1;
    MPI_Cart_shift(cd, 0, 1, &src, &dst);
    CHECK(src == (rank + size - 1) % size && dst == (rank + 1) % size, "cart shift %d %d", src,
          dst);
    MPI_Comm_free(&cd);
    MPI_Comm_free(&cart);
    /* A communicator of the first half, made without the others */
    MPI_Group wg, hg;
    int range[1][3] = {{0, (size - 1) / 2, 1}};
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_range_incl(wg, 1, range, &hg);
    if (rank <= (size - 1) / 2) {
        MPI_Comm half;
        MPI_Comm_create_group(MPI_COMM_WORLD, hg, 3, &half);
        CHECK_MPI(MPI_Comm_idup(half, &d, &rq));
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        check_dup(half, d, "idup of a Comm_create_group communicator");
        MPI_Comm_free(&d);
        MPI_Comm_free(&half);
    }
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
}

static void attributes(void)
{
    int kc, kn, flag = 0;
    void *v = NULL;
    MPI_Comm d;
    MPI_Request rq;
    MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &kc, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kn, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kc, (void *)(intptr_t)41);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kn, (void *)(intptr_t)5);
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_Comm_get_attr(d, kc, &v, &flag);
    CHECK(flag && (intptr_t)v == 42, "copied attribute: flag %d value %ld", flag,
          (long)(intptr_t)v);
    flag = -1;
    MPI_Comm_get_attr(d, kn, &v, &flag);
    CHECK(flag == 0, "an attribute without copy callback was copied");
    MPI_Comm_free(&d);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kc);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kn);
    MPI_Comm_free_keyval(&kc);
    MPI_Comm_free_keyval(&kn);
}

static void inter(void)
{
    if (size < 2)
        return;
    int me = rank % 2, lr = rank / 2;
    int nl = me ? size / 2 : (size + 1) / 2, nr = me ? (size + 1) / 2 : size / 2;
    MPI_Comm local, ic, d;
    MPI_Request rq;
    MPI_Comm_split(MPI_COMM_WORLD, me, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, !me, 8, &ic);
    int tok = 0, partner = lr < (me ? nr : nl) && lr < (me ? nl : nr);
    if (me == 1 && partner)
        MPI_Recv(&tok, 1, MPI_INT, lr, 2, ic, MPI_STATUS_IGNORE);
    CHECK_MPI(MPI_Comm_idup(ic, &d, &rq));
    if (me == 0 && partner) {
        tok = 3;
        MPI_Send(&tok, 1, MPI_INT, lr, 2, ic);
    }
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int flag = 0, s = -1, rs = -1, r = -1, cmp = -1;
    MPI_Comm_test_inter(d, &flag);
    MPI_Comm_size(d, &s);
    MPI_Comm_remote_size(d, &rs);
    MPI_Comm_rank(d, &r);
    MPI_Comm_compare(ic, d, &cmp);
    CHECK(flag && s == nl && rs == nr && r == lr && cmp == MPI_CONGRUENT,
          "idup of an intercommunicator: inter %d size %d/%d rank %d compare %d", flag, s, rs, r,
          cmp);
    /* Point-to-point and a collective on the duplicate */
    int a = 10 + rank, got = -1, sum = -1, e = 0;
    if (lr < nr)
        MPI_Send(&a, 1, MPI_INT, lr, 4, d);
    if (lr < nr) {
        MPI_Recv(&got, 1, MPI_INT, lr, 4, d, MPI_STATUS_IGNORE);
        CHECK(got == 10 + (me ? 2 * lr : 2 * lr + 1), "message on the intercommunicator idup: %d",
              got);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, d);
    for (int w = !me; w < size; w += 2)
        e += w;
    CHECK(sum == e, "allreduce on the intercommunicator idup: %d, expected %d", sum, e);
    MPI_Comm_free(&d);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

static void with_info(void)
{
    MPI_Info info;
    MPI_Comm d1, d2;
    MPI_Request rq;
    MPI_Info_create(&info);
    MPI_Info_set(info, "bdmpi_test_hint", "true");
    CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d1));
    check_dup(MPI_COMM_WORLD, d1, "MPI_Comm_dup_with_info");
#if MPI_VERSION >= 4 || defined(BDMPI_VERSION_STRING) /* BDMPI has it, MPI 3.1 does not */
    CHECK_MPI(MPI_Comm_idup_with_info(d1, info, &d2, &rq));
    MPI_Info_free(&info);
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(d1, d2, "MPI_Comm_idup_with_info");
#else
    MPI_Info_free(&info);
    CHECK_MPI(MPI_Comm_idup(d1, &d2, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
#endif
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d1);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "comm_idup");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm d;
    MPI_Request rq;
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_dup(MPI_COMM_WORLD, d, "idup of MPI_COMM_WORLD");
    MPI_Comm_free(&d);
    overlap_p2p();
    several();
    others();
    attributes();
    inter();
    with_info();
    return mtest_finalize();
}
