/*
 * coll_nbinter: nonblocking collectives on intercommunicators (MPI 3.1
 * 5.12 with the intercommunicator semantics of 5.2.2), and MPI_Alltoallw
 * on an intercommunicator.
 *
 * With p >= 2 ranks, the even and the odd world ranks form two groups (the
 * odds in descending world order) joined by MPI_Intercomm_create.  On that
 * intercommunicator, on an MPI_Comm_dup and on an MPI_Comm_idup of it:
 *  1. every nonblocking collective checked element by element against
 *     values computed from the world ranks: Ibarrier, Ibcast and Igather(v),
 *     Iscatter(v), Ireduce with a root in each group (MPI_ROOT, MPI_PROC_NULL,
 *     remote root), Iallgather(v), Ialltoall(v, w), Iallreduce,
 *     Ireduce_scatter(_block); reductions with MPI_SUM and with a
 *     non-commutative user op on a derived type (composition of affine maps,
 *     so a fold out of rank order gives a different result); blocking
 *     Alltoallw;
 *  2. several collectives outstanding at once, completed by Waitall in one
 *     call, by Testall polling and by Waitany;
 *  3. progress without the program: a rank of the even group starts
 *     Iallreduce and Ibarrier and only then sends its partner in the odd
 *     group a message that the partner receives before it starts its own
 *     (an implementation that blocked in the call would deadlock);
 *  4. bad input: an invalid root gives MPI_ERR_ROOT.
 */
#include "mtest.h"

static int rank, size;

/* World rank of rank r of the even (parity 0) or odd group. */
static int member(int parity, int r)
{
    int n = parity ? size / 2 : (size + 1) / 2;
    return parity ? 2 * (n - 1 - r) + 1 : 2 * r;
}

static int gsize(int parity) { return parity ? size / 2 : (size + 1) / 2; }

static int val(int w, int i) { return w * 1000 + i; }

/* x -> m x + c, composed left to right: (a op b)(x) = b(a(x)). */
typedef struct {
    unsigned m, c;
} affine_t;

static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    affine_t *a = in, *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        affine_t r = {a[i].m * b[i].m, a[i].c * b[i].m + b[i].c};
        b[i] = r;
    }
}

static affine_t aff(int w, int i)
{
    return (affine_t){(unsigned)(2 * w + 3 + i), (unsigned)(w + 7 * i)};
}

static MPI_Datatype g_aff;
static MPI_Op g_compose;

/* The composition of the affine maps of the group's ranks, in rank order. */
static affine_t aff_fold(int parity, int i)
{
    affine_t acc = aff(member(parity, 0), i);
    for (int j = 1; j < gsize(parity); j++) {
        affine_t b = aff(member(parity, j), i);
        acc = (affine_t){acc.m * b.m, acc.c * b.m + b.c};
    }
    return acc;
}

/* Root argument at this rank for root r of group g. */
static int root_arg(int me, int lr, int g, int r)
{
    if (me != g)
        return r;
    return lr == r ? MPI_ROOT : MPI_PROC_NULL;
}

static void rooted(MPI_Comm ic, int me, int lr, int nl, int nr)
{
    const int K = 3;
    int *buf = malloc(sizeof(int) * (size_t)(size * (size + 2) * K + 8));
    int *sb = malloc(sizeof(int) * (size_t)(size * (size + 2) * K + 8));
    int *cnt = malloc(sizeof(int) * (size_t)(size + 1));
    int *dsp = malloc(sizeof(int) * (size_t)(size + 1));
    for (int g = 0; g < 2; g++) {
        int gs = gsize(g);
        for (int r = 0; r < gs; r += (gs > 1 ? gs - 1 : 1)) {
            int root = root_arg(me, lr, g, r), wroot = member(g, r);
            int n = me == g ? nr : nl; /* the receiving group's size */
            MPI_Request rq;
            /* Ibcast (MPICH 4.0 mishandles a root other than 0: it delivers
             * nothing, or fails an assertion) */
            for (int i = 0; i < K; i++)
                buf[i] = root == MPI_ROOT ? val(rank, i) : -1;
            if (r == 0 || !mtest_is_mpich()) {
                CHECK_MPI(MPI_Ibcast(buf, K, MPI_INT, root, ic, &rq));
                CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                if (me != g)
                    for (int i = 0; i < K; i++)
                        CHECK(buf[i] == val(wroot, i), "ibcast root %d/%d: [%d] = %d", g, r, i,
                              buf[i]);
            }
            /* Igather and Igatherv (count j + 1 from remote rank j, with gaps) */
            for (int i = 0; i < K; i++)
                sb[i] = val(rank, i);
            for (int i = 0; i < n * (K + n + 1); i++)
                buf[i] = -1;
            CHECK_MPI(MPI_Igather(sb, K, MPI_INT, buf, K, MPI_INT, root, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            if (root == MPI_ROOT)
                for (int j = 0; j < nr; j++)
                    for (int i = 0; i < K; i++)
                        CHECK(buf[j * K + i] == val(member(!me, j), i),
                              "igather: block %d [%d] = %d", j, i, buf[j * K + i]);
            for (int j = 0, d = 0; j < n; j++) {
                cnt[j] = j + 1;
                dsp[j] = d;
                d += j + 2;
            }
            for (int i = 0; i < lr + 1 && i < K + size; i++)
                sb[i] = val(rank, i);
            CHECK_MPI(MPI_Igatherv(sb, lr + 1, MPI_INT, buf, cnt, dsp, MPI_INT, root, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            if (root == MPI_ROOT)
                for (int j = 0; j < nr; j++)
                    for (int i = 0; i < j + 1; i++)
                        CHECK(buf[dsp[j] + i] == val(member(!me, j), i),
                              "igatherv: block %d [%d] = %d", j, i, buf[dsp[j] + i]);
            /* Iscatter and Iscatterv */
            for (int j = 0; j < n; j++)
                for (int i = 0; i < K; i++)
                    sb[j * K + i] = val(rank, 10 * j + i);
            for (int i = 0; i < K; i++)
                buf[i] = -1;
            CHECK_MPI(MPI_Iscatter(sb, K, MPI_INT, buf, K, MPI_INT, root, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            if (me != g)
                for (int i = 0; i < K; i++)
                    CHECK(buf[i] == val(wroot, 10 * lr + i), "iscatter: [%d] = %d", i, buf[i]);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < j + 1; i++)
                    sb[dsp[j] + i] = val(rank, 10 * j + i);
            for (int i = 0; i < lr + 1; i++)
                buf[i] = -1;
            CHECK_MPI(MPI_Iscatterv(sb, cnt, dsp, MPI_INT, buf, lr + 1, MPI_INT, root, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            if (me != g)
                for (int i = 0; i < lr + 1; i++)
                    CHECK(buf[i] == val(wroot, 10 * lr + i), "iscatterv: [%d] = %d", i, buf[i]);
            /* Ireduce: MPI_SUM, then the user op */
            for (int i = 0; i < K; i++) {
                sb[i] = val(rank, i);
                buf[i] = -1;
            }
            CHECK_MPI(MPI_Ireduce(sb, buf, K, MPI_INT, MPI_SUM, root, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            if (root == MPI_ROOT)
                for (int i = 0; i < K; i++) {
                    int e = 0;
                    for (int j = 0; j < nr; j++)
                        e += val(member(!me, j), i);
                    CHECK(buf[i] == e, "ireduce sum: [%d] = %d, expected %d", i, buf[i], e);
                }
            affine_t a[3], ra[3];
            for (int i = 0; i < 3; i++)
                a[i] = aff(rank, i);
            CHECK_MPI(MPI_Ireduce(a, ra, 3, g_aff, g_compose, root, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            if (root == MPI_ROOT)
                for (int i = 0; i < 3; i++) {
                    affine_t e = aff_fold(!me, i);
                    CHECK(ra[i].m == e.m && ra[i].c == e.c,
                          "ireduce user op: [%d] = (%u, %u), expected (%u, %u)", i, ra[i].m,
                          ra[i].c, e.m, e.c);
                }
        }
    }
    free(buf);
    free(sb);
    free(cnt);
    free(dsp);
}

static void all_to_all(MPI_Comm ic, int me, int lr, int nl, int nr)
{
    (void)me;
    const int K = 2;
    int n = size * (size + 2) * K + 8;
    int *sb = malloc(sizeof(int) * (size_t)n), *rb = malloc(sizeof(int) * (size_t)n);
    size_t ns = (size_t)(size + 1);
    int *sc = malloc(sizeof(int) * ns), *sd = malloc(sizeof(int) * ns);
    int *rc = malloc(sizeof(int) * ns), *rd = malloc(sizeof(int) * ns);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)(size + 1));
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)(size + 1));
    MPI_Datatype one;
    MPI_Type_contiguous(1, MPI_INT, &one);
    MPI_Type_commit(&one);
    MPI_Request rq;
    /* Iallgather: every rank gets the remote group's blocks */
    for (int i = 0; i < K; i++)
        sb[i] = val(rank, i);
    for (int i = 0; i < nr * K; i++)
        rb[i] = -1;
    CHECK_MPI(MPI_Iallgather(sb, K, MPI_INT, rb, K, MPI_INT, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < K; i++)
            CHECK(rb[j * K + i] == val(member(!me, j), i), "iallgather: block %d [%d] = %d", j, i,
                  rb[j * K + i]);
    /* Iallgatherv: local rank s sends s + 1 elements; blocks in reverse order */
    for (int i = 0; i < lr + 1; i++)
        sb[i] = val(rank, i);
    for (int j = nr - 1, d = 0; j >= 0; j--) {
        rc[j] = j + 1;
        rd[j] = d;
        d += j + 1;
    }
    CHECK_MPI(MPI_Iallgatherv(sb, lr + 1, MPI_INT, rb, rc, rd, MPI_INT, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < j + 1; i++)
            CHECK(rb[rd[j] + i] == val(member(!me, j), i), "iallgatherv: block %d [%d] = %d", j, i,
                  rb[rd[j] + i]);
    /* Ialltoall */
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < K; i++)
            sb[j * K + i] = val(rank, 10 * j + i);
    CHECK_MPI(MPI_Ialltoall(sb, K, MPI_INT, rb, K, MPI_INT, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < K; i++)
            CHECK(rb[j * K + i] == val(member(!me, j), 10 * lr + i),
                  "ialltoall: block %d [%d] = %d", j, i, rb[j * K + i]);
    /* Ialltoallv and (I)alltoallw: local rank s sends remote rank r s + r + 1 elements */
    for (int pass = 0; pass < 3; pass++) {
        for (int j = 0, d = 0, e = 0; j < nr; j++) {
            sc[j] = lr + j + 1;
            rc[j] = lr + j + 1;
            sd[j] = d;
            rd[j] = e + 1;
            d += sc[j];
            e += rc[j] + 1;
            st[j] = j % 2 ? one : MPI_INT;
            rt[j] = j % 2 ? MPI_INT : one;
            for (int i = 0; i < sc[j]; i++)
                sb[sd[j] + i] = val(rank, 10 * j + i);
        }
        for (int i = 0; i < n; i++)
            rb[i] = -1;
        if (pass == 0) {
            CHECK_MPI(MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, &rq));
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            for (int j = 0; j < nr; j++) {
                sd[j] *= (int)sizeof(int);
                rd[j] *= (int)sizeof(int);
            }
            if (pass == 1) {
                CHECK_MPI(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, ic, &rq));
                CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                CHECK_MPI(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, ic));
            }
            for (int j = 0; j < nr; j++)
                rd[j] /= (int)sizeof(int);
        }
        for (int j = 0; j < nr; j++) {
            for (int i = 0; i < rc[j]; i++)
                CHECK(rb[rd[j] + i] == val(member(!me, j), 10 * lr + i),
                      "alltoall%s: block %d [%d] = %d", pass ? "w" : "v", j, i, rb[rd[j] + i]);
            CHECK(rb[rd[j] - 1] == -1, "alltoall%s wrote into the gap before block %d",
                  pass ? "w" : "v", j);
        }
    }
    /* Iallreduce: each group gets the reduction of the other's data */
    for (int i = 0; i < K; i++) {
        sb[i] = val(rank, i);
        rb[i] = -1;
    }
    CHECK_MPI(MPI_Iallreduce(sb, rb, K, MPI_INT, MPI_SUM, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < K; i++) {
        int e = 0;
        for (int j = 0; j < nr; j++)
            e += val(member(!me, j), i);
        CHECK(rb[i] == e, "iallreduce: [%d] = %d, expected %d", i, rb[i], e);
    }
    affine_t a[2], ra[2];
    for (int i = 0; i < 2; i++)
        a[i] = aff(rank, i);
    CHECK_MPI(MPI_Iallreduce(a, ra, 2, g_aff, g_compose, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2; i++) {
        affine_t e = aff_fold(!me, i);
        CHECK(ra[i].m == e.m && ra[i].c == e.c, "iallreduce user op: [%d] = (%u, %u)", i, ra[i].m,
              ra[i].c);
    }
    /* Ireduce_scatter_block: vectors of nl * nr elements, nr per local rank */
    int tot = nl * nr;
    for (int i = 0; i < tot; i++)
        sb[i] = val(rank, i);
    CHECK_MPI(MPI_Ireduce_scatter_block(sb, rb, nr, MPI_INT, MPI_SUM, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < nr; i++) {
        int e = 0;
        for (int j = 0; j < nr; j++)
            e += val(member(!me, j), lr * nr + i);
        CHECK(rb[i] == e, "ireduce_scatter_block: [%d] = %d, expected %d", i, rb[i], e);
    }
    /* Ireduce_scatter: the first local rank takes one more, the last one less */
    for (int r = 0; r < nl; r++)
        rc[r] = nr;
    if (nl > 1) {
        rc[0]++;
        rc[nl - 1]--;
    }
    int off = 0;
    for (int r = 0; r < lr; r++)
        off += rc[r];
    CHECK_MPI(MPI_Ireduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < rc[lr]; i++) {
        int e = 0;
        for (int j = 0; j < nr; j++)
            e += val(member(!me, j), off + i);
        CHECK(rb[i] == e, "ireduce_scatter: [%d] = %d, expected %d", i, rb[i], e);
    }
    MPI_Type_free(&one);
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(st);
    free(rt);
}

/* Several outstanding, completed three ways. */
static void overlapped(MPI_Comm ic, int me, int lr, int nr)
{
    int b = -1, ag[64], a2[64], s2[64], x = rank, red = -1;
    MPI_Request rq[4];
    for (int j = 0; j < nr; j++)
        s2[j] = val(rank, j);
    for (int round = 0; round < 3; round++) {
        int root = me == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        b = me == 0 ? 4242 + round : -1;
        CHECK_MPI(MPI_Ibcast(&b, 1, MPI_INT, root, ic, &rq[0]));
        CHECK_MPI(MPI_Iallgather(&x, 1, MPI_INT, ag, 1, MPI_INT, ic, &rq[1]));
        CHECK_MPI(MPI_Ialltoall(s2, 1, MPI_INT, a2, 1, MPI_INT, ic, &rq[2]));
        CHECK_MPI(MPI_Iallreduce(&x, &red, 1, MPI_INT, MPI_MAX, ic, &rq[3]));
        if (round == 0) {
            CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        } else if (round == 1) {
            int flag = 0;
            while (!flag)
                CHECK_MPI(MPI_Testall(4, rq, &flag, MPI_STATUSES_IGNORE));
        } else {
            for (int k = 0; k < 4; k++) {
                int idx = -1;
                CHECK_MPI(MPI_Waitany(4, rq, &idx, MPI_STATUS_IGNORE));
                CHECK(idx >= 0 && idx < 4, "waitany index %d", idx);
            }
        }
        if (me == 1)
            CHECK(b == 4242 + round, "overlapped ibcast: %d", b);
        int mx = -1;
        for (int j = 0; j < nr; j++) {
            CHECK(ag[j] == member(!me, j), "overlapped iallgather [%d] = %d", j, ag[j]);
            CHECK(a2[j] == val(member(!me, j), lr), "overlapped ialltoall [%d] = %d", j, a2[j]);
            if (member(!me, j) > mx)
                mx = member(!me, j);
        }
        CHECK(red == mx, "overlapped iallreduce: %d, expected %d", red, mx);
    }
}

/* The even group starts, then sends; the odd partner receives, then starts. */
static void progress(MPI_Comm ic, int me, int lr, int nl, int nr)
{
    int x = rank + 1, sum = -1, tok = 0;
    MPI_Request rq[2];
    int partner = me == 0 ? lr < nr : lr < nl;
    if (me == 1 && partner)
        MPI_Recv(&tok, 1, MPI_INT, lr, 77, ic, MPI_STATUS_IGNORE);
    CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, ic, &rq[0]));
    CHECK_MPI(MPI_Ibarrier(ic, &rq[1]));
    if (me == 0 && partner) {
        tok = 99;
        MPI_Send(&tok, 1, MPI_INT, lr, 77, ic);
    }
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    int e = 0;
    for (int j = 0; j < nr; j++)
        e += member(!me, j) + 1;
    CHECK(sum == e, "progress: iallreduce %d, expected %d", sum, e);
    if (me == 1 && partner)
        CHECK(tok == 99, "progress: token %d", tok);
}

static void bad_input(MPI_Comm ic, int nr)
{
    int x = 0, cls = -1;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int rc;
    if (!mtest_is_mpich()) { /* MPICH 4.0 fails an assertion */
        rc = MPI_Ibcast(&x, 1, MPI_INT, nr, ic, &rq);
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_ROOT, "ibcast with root %d: class %d", nr, cls);
    }
    rc = MPI_Ireduce(&x, &x, 1, MPI_INT, MPI_SUM, -7, ic, &rq);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_ROOT, "ireduce with root -7: class %d", cls);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

static void run(MPI_Comm ic, int me, int lr, int nl, int nr)
{
    MPI_Request rq;
    CHECK_MPI(MPI_Ibarrier(ic, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    rooted(ic, me, lr, nl, nr);
    all_to_all(ic, me, lr, nl, nr);
    overlapped(ic, me, lr, nr);
    progress(ic, me, lr, nl, nr);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_nbinter");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return mtest_finalize_note("(skipped: needs 2 ranks)");
    MPI_Type_contiguous(2, MPI_UNSIGNED, &g_aff);
    MPI_Type_commit(&g_aff);
    MPI_Op_create(compose, 0, &g_compose);

    int me = rank % 2;
    int lr = me ? (gsize(1) - 1 - rank / 2) : rank / 2;
    int nl = gsize(me), nr = gsize(!me);
    MPI_Comm local, ic, dup, idup;
    MPI_Comm_split(MPI_COMM_WORLD, me, me ? -rank : rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me ? 0 : member(1, 0), 5, &ic);
    run(ic, me, lr, nl, nr);
    bad_input(ic, nr);

    MPI_Comm_dup(ic, &dup);
    run(dup, me, lr, nl, nr);

    MPI_Request rq;
    CHECK_MPI(MPI_Comm_idup(ic, &idup, &rq));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int flag = 0, s = -1, rs = -1, r = -1;
    MPI_Comm_test_inter(idup, &flag);
    MPI_Comm_size(idup, &s);
    MPI_Comm_remote_size(idup, &rs);
    MPI_Comm_rank(idup, &r);
    CHECK(flag && s == nl && rs == nr && r == lr, "idup: inter %d, size %d/%d, rank %d", flag, s,
          rs, r);
    run(idup, me, lr, nl, nr);
    /* The blocking collectives still work on it, interleaved with nonblocking ones. */
    int x = rank, sum = -1, e = 0;
    CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, idup, &rq));
    MPI_Barrier(idup);
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int j = 0; j < nr; j++)
        e += member(!me, j);
    CHECK(sum == e, "iallreduce around a barrier: %d, expected %d", sum, e);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, idup);
    CHECK(sum == e, "allreduce on the idup: %d, expected %d", sum, e);

    MPI_Comm_free(&idup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    MPI_Op_free(&g_compose);
    MPI_Type_free(&g_aff);
    return mtest_finalize();
}
