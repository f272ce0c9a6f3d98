/*
 * intercomm: intercommunicators (MPI 3.1 sections 6.6 and 5.2.2).
 *
 * With p >= 2 ranks, the even and the odd world ranks form two groups
 * (local communicators from MPI_Comm_split, ordered by descending world
 * rank for the odds so group order differs from world order) joined by
 * MPI_Intercomm_create over MPI_COMM_WORLD.  Then:
 *  1. queries: test_inter, size/rank (local group), remote_size,
 *     Comm_group/Comm_remote_group translated to world ranks;
 *  2. point-to-point: every rank sends to several remote ranks; receives by
 *     source and by MPI_ANY_SOURCE see the sender's rank in its own group;
 *     Sendrecv; Iprobe; a message on a duplicate never matches the original;
 *  3. collectives on the intercommunicator: Barrier, Bcast (MPI_ROOT /
 *     MPI_PROC_NULL / remote root), Reduce, Allreduce (each group gets the
 *     other's reduction), Gather(v), Scatter(v), Allgather(v), Alltoall(v),
 *     Reduce_scatter_block and Reduce_scatter;
 *  4. MPI_Intercomm_merge with high = group parity and with equal high;
 *     MPI_Comm_split and MPI_Comm_create of the intercommunicator;
 *     MPI_Comm_compare of a dup;
 *  5. an intercommunicator whose leaders are not rank 0, created twice
 *     concurrently with different tags;
 *  6. bad input (remote rank or root out of range, a bad leader, an
 *     intercommunicator as local_comm) returns the MPI error class.
 */
#include "mtest.h"

static int rank, size;

/* World rank of rank r of the even (parity 0) or odd group. */
static int member(int parity, int r)
{
    int n = parity ? size / 2 : (size + 1) / 2;
    return parity ? 2 * (n - 1 - r) + 1 : 2 * r;
}

static int group_size(int parity) { return parity ? size / 2 : (size + 1) / 2; }

static void queries(MPI_Comm ic, int me, int nl, int nr)
{
    int flag = 0, s = -1, r = -1, rs = -1, i;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "test_inter gave %d on an intercommunicator", flag);
    MPI_Comm_size(ic, &s);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rs);
    CHECK(s == group_size(me), "size %d, expected %d", s, group_size(me));
    CHECK(rs == group_size(!me), "remote size %d, expected %d", rs, group_size(!me));
    CHECK(member(me, r) == rank, "rank %d is not world rank %d's place", r, rank);
    MPI_Group wg, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(ic, &lg);
    MPI_Comm_remote_group(ic, &rg);
    int *in = malloc(sizeof(int) * (size_t)(size + 1)),
        *out = malloc(sizeof(int) * (size_t)(size + 1));
    for (i = 0; i < nr; i++)
        in[i] = i;
    MPI_Group_translate_ranks(rg, nr, in, wg, out);
    for (i = 0; i < nr; i++)
        CHECK(out[i] == member(!me, i), "remote rank %d is world %d, expected %d", i, out[i],
              member(!me, i));
    for (i = 0; i < nl; i++)
        in[i] = i;
    MPI_Group_translate_ranks(lg, nl, in, wg, out);
    for (i = 0; i < nl; i++)
        CHECK(out[i] == member(me, i), "local rank %d is world %d, expected %d", i, out[i],
              member(me, i));
    free(in);
    free(out);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
}

static void p2p(MPI_Comm ic, int me, int lr, int nl, int nr)
{
    int i, k, got, n = 0;
    MPI_Status st;
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(nr + 1));
    int *vals = malloc(sizeof(int) * (size_t)(nr + 1));
    /* Each rank sends to every remote rank: value 1000 * parity + local rank. */
    for (i = 0; i < nr; i++) {
        vals[i] = 1000 * me + lr;
        MPI_Isend(&vals[i], 1, MPI_INT, i, 5, ic, &rq[i]);
    }
    /* Receive from every remote rank: the even ones by source first, then
     * the rest by MPI_ANY_SOURCE. */
    int *seen = calloc((size_t)(nr + 1), sizeof(int));
    for (k = 0; k < nr; k++) {
        int src = 2 * k < nr ? 2 * k : MPI_ANY_SOURCE;
        MPI_Recv(&got, 1, MPI_INT, src, 5, ic, &st);
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr, "source %d out of the remote group",
              st.MPI_SOURCE);
        if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr) {
            CHECK(got == 1000 * !me + st.MPI_SOURCE, "got %d from remote %d", got, st.MPI_SOURCE);
            seen[st.MPI_SOURCE]++;
        }
        if (src != MPI_ANY_SOURCE)
            CHECK(st.MPI_SOURCE == src, "asked for %d, got %d", src, st.MPI_SOURCE);
        n++;
    }
    for (i = 0; i < nr; i++)
        CHECK(seen[i] == 1, "remote rank %d seen %d times", i, seen[i]);
    MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
    /* Sendrecv with the remote rank of the same index (if any). */
    if (lr < nr) {
        int mine = rank, theirs = -1;
        MPI_Sendrecv(&mine, 1, MPI_INT, lr, 6, &theirs, 1, MPI_INT, lr, 6, ic, &st);
        CHECK(theirs == member(!me, lr), "sendrecv got %d, expected %d", theirs, member(!me, lr));
    }
    if (lr >= nr && lr < nl) { /* the larger group's extra ranks talk to remote 0 */
        int mine = rank;
        MPI_Send(&mine, 1, MPI_INT, 0, 7, ic);
    }
    if (lr == 0 && nl < nr) {
        for (i = nl; i < nr; i++) {
            int flag = 0, x = -1;
            while (!flag)
                MPI_Iprobe(i, 7, ic, &flag, &st);
            CHECK(st.MPI_SOURCE == i, "iprobe source %d, expected %d", st.MPI_SOURCE, i);
            MPI_Recv(&x, 1, MPI_INT, i, 7, ic, MPI_STATUS_IGNORE);
            CHECK(x == member(!me, i), "extra got %d, expected %d", x, member(!me, i));
        }
    }
    free(rq);
    free(vals);
    free(seen);
}

static void collectives(MPI_Comm ic, int me, int lr, int nl, int nr)
{
    int i, x, root;
    MPI_Barrier(ic);
    /* Bcast from the even group's rank 0 to the odds, then back from the odds' last rank. */
    for (int from = 0; from < 2; from++) {
        int rootrank = from == 0 ? 0 : group_size(1) - 1;
        int buf[3] = {-1, -1, -1};
        if (me == from) {
            root = lr == rootrank ? MPI_ROOT : MPI_PROC_NULL;
            if (root == MPI_ROOT)
                buf[0] = 11, buf[1] = 22, buf[2] = 33 + from;
        } else
            root = rootrank;
        MPI_Bcast(buf, 3, MPI_INT, root, ic);
        if (me != from)
            CHECK(buf[0] == 11 && buf[1] == 22 && buf[2] == 33 + from, "bcast got %d %d %d", buf[0],
                  buf[1], buf[2]);
    }
    /* Allreduce: each group gets the sum and max of the other's world ranks. */
    int in[2] = {rank, rank}, out[2] = {-1, -1}, esum = 0, emax = -1;
    for (i = 0; i < nr; i++) {
        esum += member(!me, i);
        if (member(!me, i) > emax)
            emax = member(!me, i);
    }
    MPI_Allreduce(in, out, 1, MPI_INT, MPI_SUM, ic);
    CHECK(out[0] == esum, "allreduce sum %d, expected %d", out[0], esum);
    MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, ic);
    CHECK(out[0] == emax && out[1] == emax, "allreduce max %d %d, expected %d", out[0], out[1],
          emax);
    /* Reduce to the odd group's rank 0. */
    root = me == 1 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    x = -1;
    MPI_Reduce(&rank, &x, 1, MPI_INT, MPI_SUM, root, ic);
    if (root == MPI_ROOT)
        CHECK(x == esum, "reduce got %d, expected %d", x, esum);
    /* Gather at the even group's last rank; Gatherv reversed. */
    int *all = malloc(sizeof(int) * (size_t)(2 * size + 2));
    int *cnt = malloc(sizeof(int) * (size_t)(size + 1)),
        *dsp = malloc(sizeof(int) * (size_t)(size + 1));
    int groot = group_size(0) - 1;
    root = me == 0 ? (lr == groot ? MPI_ROOT : MPI_PROC_NULL) : groot;
    for (i = 0; i < 2 * size + 2; i++)
        all[i] = -1;
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, root, ic);
    if (root == MPI_ROOT)
        for (i = 0; i < nr; i++)
            CHECK(all[i] == member(1, i), "gather[%d] = %d, expected %d", i, all[i], member(1, i));
    for (i = 0; i < nr; i++) {
        cnt[i] = 1;
        dsp[i] = nr - 1 - i;
    }
    MPI_Gatherv(&rank, 1, MPI_INT, all, cnt, dsp, MPI_INT, root, ic);
    if (root == MPI_ROOT)
        for (i = 0; i < nr; i++)
            CHECK(all[nr - 1 - i] == member(1, i), "gatherv got %d", all[nr - 1 - i]);
    /* Scatter from the odd group's rank 0: remote rank i gets 100 + i. */
    root = me == 1 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (i = 0; i < nr; i++)
        all[i] = 100 + i;
    x = -1;
    MPI_Scatter(all, 1, MPI_INT, &x, 1, MPI_INT, root, ic);
    if (me == 0)
        CHECK(x == 100 + lr, "scatter got %d, expected %d", x, 100 + lr);
    for (i = 0; i < nr; i++) {
        cnt[i] = 1;
        dsp[i] = i;
        all[i] = 200 + i;
    }
    x = -1;
    MPI_Scatterv(all, cnt, dsp, MPI_INT, &x, 1, MPI_INT, root, ic);
    if (me == 0)
        CHECK(x == 200 + lr, "scatterv got %d, expected %d", x, 200 + lr);
    /* Allgather: the remote group's world ranks in remote order. */
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, ic);
    for (i = 0; i < nr; i++)
        CHECK(all[i] == member(!me, i), "allgather[%d] = %d, expected %d", i, all[i],
              member(!me, i));
    for (i = 0; i < nr; i++) {
        cnt[i] = 2;
        dsp[i] = 2 * (nr - 1 - i);
    }
    int two[2] = {rank, -rank};
    MPI_Allgatherv(two, 2, MPI_INT, all, cnt, dsp, MPI_INT, ic);
    for (i = 0; i < nr; i++)
        CHECK(all[dsp[i]] == member(!me, i) && all[dsp[i] + 1] == -member(!me, i),
              "allgatherv piece %d is %d %d", i, all[dsp[i]], all[dsp[i] + 1]);
    /* Alltoall: I send 10000 * rank + remote index; I get 10000 * their rank + my index. */
    int *sb = malloc(sizeof(int) * (size_t)(nr + 1));
    for (i = 0; i < nr; i++)
        sb[i] = 10000 * rank + i;
    MPI_Alltoall(sb, 1, MPI_INT, all, 1, MPI_INT, ic);
    for (i = 0; i < nr; i++)
        CHECK(all[i] == 10000 * member(!me, i) + lr, "alltoall[%d] = %d", i, all[i]);
    for (i = 0; i < nr; i++) {
        cnt[i] = 1;
        dsp[i] = nr - 1 - i;
    }
    MPI_Alltoallv(sb, cnt, dsp, MPI_INT, all, cnt, dsp, MPI_INT, ic);
    for (i = 0; i < nr; i++)
        CHECK(all[nr - 1 - i] == 10000 * member(!me, i) + (nl - 1 - lr), "alltoallv from %d = %d",
              i, all[nr - 1 - i]);
    free(sb);
    /* Reduce_scatter_block: both groups' vectors have nl * nr elements (the
     * local size times recvcount); each of my ranks gets nr of the other
     * group's sums. */
    int len = nl * nr;
    int *vec = malloc(sizeof(int) * (size_t)len), *res = malloc(sizeof(int) * (size_t)(len + 1));
    for (i = 0; i < len; i++)
        vec[i] = rank + i;
    MPI_Reduce_scatter_block(vec, res, nr, MPI_INT, MPI_SUM, ic);
    for (i = 0; i < nr; i++) {
        int e = esum + nr * (lr * nr + i);
        CHECK(res[i] == e, "reduce_scatter_block[%d] = %d, expected %d", i, res[i], e);
    }
    int *rc = malloc(sizeof(int) * (size_t)(nl + 1));
    for (i = 0; i < nl; i++)
        rc[i] = nr;
    MPI_Reduce_scatter(vec, res, rc, MPI_INT, MPI_SUM, ic);
    for (i = 0; i < nr; i++) {
        int e = esum + nr * (lr * nr + i);
        CHECK(res[i] == e, "reduce_scatter[%d] = %d, expected %d", i, res[i], e);
    }
    free(rc);
    free(vec);
    free(res);
    free(all);
    free(cnt);
    free(dsp);
}

static void merges(MPI_Comm ic, int me, int lr)
{
    MPI_Comm m;
    int mr = -1, ms = -1;
    /* Odds first (high = 1 for evens). */
    MPI_Intercomm_merge(ic, me == 0, &m);
    MPI_Comm_size(m, &ms);
    MPI_Comm_rank(m, &mr);
    CHECK(ms == size, "merged size %d", ms);
    int expect = me == 1 ? lr : group_size(1) + lr;
    CHECK(mr == expect, "merged rank %d, expected %d", mr, expect);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, m);
    CHECK(sum == size * (size - 1) / 2, "allreduce on merged gives %d", sum);
    int flag = 1;
    MPI_Comm_test_inter(m, &flag);
    CHECK(!flag, "merged communicator is an intercommunicator");
    MPI_Comm_free(&m);
    /* Equal high: the two groups are contiguous blocks, in some order. */
    MPI_Intercomm_merge(ic, 1, &m);
    MPI_Comm_rank(m, &mr);
    int *ranks = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, m);
    int first = ranks[0] % 2;
    for (int i = 0; i < size; i++) {
        int par = i < group_size(first) ? first : !first;
        int idx = i < group_size(first) ? i : i - group_size(first);
        CHECK(ranks[i] == member(par, idx), "merged(high equal) rank %d is world %d", i, ranks[i]);
    }
    free(ranks);
    MPI_Comm_free(&m);
}

/* Bad input returns the error class with MPI_ERRORS_RETURN. */
static void errors(MPI_Comm ic, MPI_Comm local, int nr)
{
    int cls, rc, x = 0;
    MPI_Comm bad = MPI_COMM_NULL;
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    rc = MPI_Send(&x, 1, MPI_INT, nr, 0, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "send to remote rank %d (remote size %d): class %d", nr, nr, cls);
    rc = MPI_Bcast(&x, 1, MPI_INT, nr, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "bcast with root %d: class %d", nr, cls);
    rc = MPI_Intercomm_create(local, -1, MPI_COMM_WORLD, 0, 1, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK || cls == MPI_ERR_ARG, "local_leader -1: class %d", cls);
    rc = MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "intercommunicator as local_comm: class %d", cls);
    MPI_Comm_set_errhandler(local, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "intercomm");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int flag = 1;
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK(!flag, "MPI_COMM_WORLD is an intercommunicator");
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "a parent without spawn");
    if (size < 2)
        return mtest_finalize();

    int me = rank % 2;
    int lr = me ? (group_size(1) - 1 - rank / 2) : rank / 2;
    MPI_Comm local, ic, dup, ic2;
    MPI_Comm_split(MPI_COMM_WORLD, me, me ? -rank : rank, &local);
    /* Leaders: local rank 0 (world 0 for evens, the highest odd for odds). */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me ? 0 : member(1, 0), 12, &ic);
    int nl = group_size(me), nr = group_size(!me);
    queries(ic, me, nl, nr);
    p2p(ic, me, lr, nl, nr);
    collectives(ic, me, lr, nl, nr);

    /* A duplicate: congruent, and its messages never match the original's. */
    MPI_Comm_dup(ic, &dup);
    int cmp = -1;
    MPI_Comm_compare(ic, dup, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare(ic, dup) = %d", cmp);
    MPI_Comm_compare(ic, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_UNEQUAL, "compare(ic, world) = %d", cmp);
    int a = 1, b = 2, ga = -1, gb = -1;
    if (lr < nr) {
        MPI_Send(&a, 1, MPI_INT, lr, 3, ic);
        MPI_Send(&b, 1, MPI_INT, lr, 3, dup);
        MPI_Recv(&gb, 1, MPI_INT, lr, 3, dup, MPI_STATUS_IGNORE);
        MPI_Recv(&ga, 1, MPI_INT, lr, 3, ic, MPI_STATUS_IGNORE);
        CHECK(ga == 1 && gb == 2, "dup isolation: got %d on ic and %d on dup", ga, gb);
    }
    collectives(dup, me, lr, nl, nr);
    merges(dup, me, lr);

    /* Split: color = local rank % 2; the new intercommunicator joins same
     * colors; a color empty on either side gives MPI_COMM_NULL. */
    MPI_Comm sp;
    int color = lr % 2;
    MPI_Comm_split(ic, color, lr, &sp);
    int lcnt = (nl + 1 - color) / 2, rcnt = (nr + 1 - color) / 2;
    if (lcnt && rcnt) {
        CHECK(sp != MPI_COMM_NULL, "split gave MPI_COMM_NULL for color %d", color);
        if (sp != MPI_COMM_NULL) {
            int s = -1, rs = -1, sum = -1, e = 0;
            MPI_Comm_size(sp, &s);
            MPI_Comm_remote_size(sp, &rs);
            CHECK(s == lcnt && rs == rcnt, "split sizes %d/%d, expected %d/%d", s, rs, lcnt, rcnt);
            for (int i = color; i < nr; i += 2)
                e += member(!me, i);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sp);
            CHECK(sum == e, "allreduce on split gave %d, expected %d", sum, e);
            MPI_Comm_free(&sp);
        }
    } else
        CHECK(sp == MPI_COMM_NULL, "split gave a communicator for a color missing remotely");

    /* Comm_create on the intercommunicator: each side drops its last rank
     * (when it has more than one); the rest are joined to the other side's rest. */
    MPI_Group lg, sub;
    MPI_Comm cr;
    MPI_Comm_group(ic, &lg);
    int drop = nl - 1;
    if (nl > 1)
        MPI_Group_excl(lg, 1, &drop, &sub);
    else
        MPI_Group_incl(lg, 1, &drop, &sub);
    MPI_Comm_create(ic, sub, &cr);
    int inside = nl == 1 || lr != nl - 1, rkeep = nr > 1 ? nr - 1 : 1;
    if (inside) {
        CHECK(cr != MPI_COMM_NULL, "comm_create on the intercommunicator gave MPI_COMM_NULL");
        if (cr != MPI_COMM_NULL) {
            int s = -1, rs = -1, sum = -1, e = 0, fl = 0;
            MPI_Comm_test_inter(cr, &fl);
            MPI_Comm_size(cr, &s);
            MPI_Comm_remote_size(cr, &rs);
            CHECK(fl && s == (nl > 1 ? nl - 1 : 1) && rs == rkeep,
                  "comm_create: inter %d, sizes %d/%d", fl, s, rs);
            for (int i = 0; i < rkeep; i++)
                e += member(!me, i);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, cr);
            CHECK(sum == e, "allreduce on comm_create result gave %d, expected %d", sum, e);
            MPI_Comm_free(&cr);
        }
    } else
        CHECK(cr == MPI_COMM_NULL, "comm_create gave a communicator to a rank not in the group");
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);

    /* Leaders other than local rank 0, two creations at once with different tags. */
    int ll = nl - 1;
    int rl = me ? member(0, group_size(0) - 1) : member(1, group_size(1) - 1);
    MPI_Comm ic3;
    MPI_Intercomm_create(local, ll, MPI_COMM_WORLD, rl, 21, &ic2);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me ? 0 : member(1, 0), 22, &ic3);
    int s2 = 0;
    MPI_Allreduce(&rank, &s2, 1, MPI_INT, MPI_SUM, ic2);
    int e2 = 0;
    for (int i = 0; i < nr; i++)
        e2 += member(!me, i);
    CHECK(s2 == e2, "allreduce on the second intercommunicator gave %d, expected %d", s2, e2);
    MPI_Barrier(ic3);
    errors(ic3, local, nr);
    MPI_Comm_free(&ic3);
    MPI_Comm_free(&ic2);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return mtest_finalize();
}
