/*
 * coll_nonblocking: the MPI-3 nonblocking collectives.
 *
 * One "batch" starts every nonblocking collective on a communicator, all
 * outstanding at once (MPI_Ibarrier, Ibcast, Ireduce, Iallreduce, Iscan,
 * Iexscan, Ireduce_scatter, Ireduce_scatter_block, Igather, Igatherv,
 * Iscatter, Iscatterv, Iallgather, Iallgatherv, Ialltoall, Ialltoallv,
 * Ialltoallw), with a blocking MPI_Allreduce and a point-to-point ring
 * exchange (Irecv/Isend requests in the same set) in the middle, and then
 * completes the whole set in one way:
 *   Waitall, Testall loop, Waitany loop, Testany loop, Waitsome loop,
 *   Testsome loop, Wait on each in reverse order, Test on each in turn
 *   (after MPI_Request_get_status reports it complete).
 * Every result is checked, and every completed request must be
 * MPI_REQUEST_NULL.  Batches run on MPI_COMM_WORLD and on the two halves
 * of a split (an Ibarrier on a half stays pending across a batch on the
 * world).
 *
 * Also: derived datatypes (a strided vector for Ibcast and as the receive
 * type of Ialltoall; a type freed right after the call that uses it),
 * MPI_IN_PLACE (Iallreduce, Iscan, Igather and Iscatter at the root,
 * Iallgather, Ialltoall, Ireduce_scatter_block), a non-commutative
 * user-defined operation (2x2 matrix product mod 10007) in Ireduce,
 * Iallreduce, Iscan, Iexscan and Ireduce_scatter_block, and large buffers
 * (Ibcast and Ialltoall of 64 KiB per piece, several outstanding), and
 * collectives still pending when their communicator is freed.
 */
#include "mtest.h"

#define NB 5      /* elements per rank in the small cases */
#define MAXREQ 40 /* requests in one batch */

static int wrank, wsize;

enum { WAITALL, TESTALL, WAITANY, TESTANY, WAITSOME, TESTSOME, WAITREV, TESTEACH, NMODES };
static const char *mode_name[NMODES] = {"Waitall",  "Testall",  "Waitany",        "Testany",
                                        "Waitsome", "Testsome", "Wait (reverse)", "Test each"};

/* Complete all n requests in the given way. */
static void complete(MPI_Request *req, int n, int mode)
{
    int i, flag, idx, out, done = 0;
    int *ind = malloc(sizeof(int) * (size_t)n);
    MPI_Status st;

    switch (mode) {
    case WAITALL: CHECK_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE)); break;
    case TESTALL:
        flag = 0;
        while (!flag)
            CHECK_MPI(MPI_Testall(n, req, &flag, MPI_STATUSES_IGNORE));
        break;
    case WAITANY:
        for (;;) {
            CHECK_MPI(MPI_Waitany(n, req, &idx, &st));
            if (idx == MPI_UNDEFINED)
                break;
            CHECK(req[idx] == MPI_REQUEST_NULL, "Waitany left request %d", idx);
            done++;
        }
        CHECK_INT(done, n, "requests completed by Waitany");
        break;
    case TESTANY:
        for (;;) {
            CHECK_MPI(MPI_Testany(n, req, &idx, &flag, &st));
            if (flag && idx == MPI_UNDEFINED)
                break;
            if (flag)
                done++;
        }
        CHECK_INT(done, n, "requests completed by Testany");
        break;
    case WAITSOME:
    case TESTSOME:
        for (;;) {
            if (mode == WAITSOME)
                CHECK_MPI(MPI_Waitsome(n, req, &out, ind, MPI_STATUSES_IGNORE));
            else
                CHECK_MPI(MPI_Testsome(n, req, &out, ind, MPI_STATUSES_IGNORE));
            if (out == MPI_UNDEFINED)
                break;
            for (i = 0; i < out; i++)
                CHECK(req[ind[i]] == MPI_REQUEST_NULL, "%s left request %d", mode_name[mode],
                      ind[i]);
            done += out;
        }
        CHECK_INT(done, n, "requests completed by Waitsome/Testsome");
        break;
    case WAITREV:
        for (i = n - 1; i >= 0; i--)
            CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        break;
    case TESTEACH:
        for (i = 0; i < n; i++) {
            flag = 0;
            while (!flag)
                CHECK_MPI(MPI_Request_get_status(req[i], &flag, MPI_STATUS_IGNORE));
            CHECK(req[i] != MPI_REQUEST_NULL, "Request_get_status freed request %d", i);
            flag = 0;
            CHECK_MPI(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
            CHECK(flag, "Test after Request_get_status said done: flag 0 (request %d)", i);
        }
        break;
    }
    for (i = 0; i < n; i++)
        CHECK(req[i] == MPI_REQUEST_NULL, "%s: request %d not MPI_REQUEST_NULL", mode_name[mode],
              i);
    free(ind);
}

/* ---------------------------------------------------------------- user op */

#define PM 10007
static void matmul(const int *a, const int *b, int *c) /* c = a b mod PM */
{
    int r0 = (int)(((long long)a[0] * b[0] + (long long)a[1] * b[2]) % PM);
    int r1 = (int)(((long long)a[0] * b[1] + (long long)a[1] * b[3]) % PM);
    int r2 = (int)(((long long)a[2] * b[0] + (long long)a[3] * b[2]) % PM);
    int r3 = (int)(((long long)a[2] * b[1] + (long long)a[3] * b[3]) % PM);
    c[0] = r0;
    c[1] = r1;
    c[2] = r2;
    c[3] = r3;
}

/* inout = in * inout, element by element (each element is a 2x2 matrix). */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++)
        matmul(a + 4 * i, b + 4 * i, b + 4 * i);
}

static void mat_of(int r, int i, int *m)
{
    m[0] = r + 1;
    m[1] = (r * 7 + i) % 5 + 1;
    m[2] = i + 2;
    m[3] = (r + 3 * i) % 4;
}

/* Product of the matrices of ranks lo..hi (in order) for element i. */
static void mat_prod(int lo, int hi, int i, int *m)
{
    int x[4];
    m[0] = 1, m[1] = 0, m[2] = 0, m[3] = 1;
    for (int r = lo; r <= hi; r++) {
        mat_of(r, i, x);
        matmul(m, x, m);
    }
}

static int mat_eq(const int *a, const int *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

/* ---------------------------------------------------------------- the batch */

/* Every nonblocking collective on comm at once, completed by mode. */
static void batch(MPI_Comm comm, int mode, int inplace)
{
    int rank, size, i, r, k, n = 0;
    MPI_Request req[MAXREQ];
    const char *how = mode_name[mode];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int broot = size - 1, groot = 1 % size, sroot = 0;

    /* ring exchange requests in the same set */
    int ring_in = -1, ring_out = rank * 7 + 11;
    CHECK_MPI(MPI_Irecv(&ring_in, 1, MPI_INT, (rank + size - 1) % size, 42, comm, &req[n++]));

    CHECK_MPI(MPI_Ibarrier(comm, &req[n++]));

    int bc[NB];
    for (i = 0; i < NB; i++)
        bc[i] = rank == broot ? 1000 + i : -1;
    CHECK_MPI(MPI_Ibcast(bc, NB, MPI_INT, broot, comm, &req[n++]));

    int red_in[NB], red_out[NB];
    for (i = 0; i < NB; i++) {
        red_in[i] = (rank + 1) * (i + 1);
        red_out[i] = -1;
    }
    CHECK_MPI(MPI_Ireduce(red_in, red_out, NB, MPI_INT, MPI_SUM, 0, comm, &req[n++]));

    int ar_in[NB], ar_out[NB];
    for (i = 0; i < NB; i++)
        ar_out[i] = ar_in[i] = rank * 3 + i;
    if (inplace)
        CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, ar_out, NB, MPI_INT, MPI_MAX, comm, &req[n++]));
    else
        CHECK_MPI(MPI_Iallreduce(ar_in, ar_out, NB, MPI_INT, MPI_MAX, comm, &req[n++]));

    int sc_in[NB], sc_out[NB], ex_out[NB];
    for (i = 0; i < NB; i++) {
        sc_out[i] = sc_in[i] = rank + i;
        ex_out[i] = -7;
    }
    if (inplace)
        CHECK_MPI(MPI_Iscan(MPI_IN_PLACE, sc_out, NB, MPI_INT, MPI_SUM, comm, &req[n++]));
    else
        CHECK_MPI(MPI_Iscan(sc_in, sc_out, NB, MPI_INT, MPI_SUM, comm, &req[n++]));
    CHECK_MPI(MPI_Iexscan(sc_in, ex_out, NB, MPI_INT, MPI_SUM, comm, &req[n++]));

    int *rsb_in = malloc(sizeof(int) * (size_t)(2 * size)), rsb_out[2];
    for (k = 0; k < 2 * size; k++)
        rsb_in[k] = rank * 100 + k;
    if (inplace)
        CHECK_MPI(
            MPI_Ireduce_scatter_block(MPI_IN_PLACE, rsb_in, 2, MPI_INT, MPI_SUM, comm, &req[n++]));
    else
        CHECK_MPI(MPI_Ireduce_scatter_block(rsb_in, rsb_out, 2, MPI_INT, MPI_SUM, comm, &req[n++]));

    int *rs_counts = malloc(sizeof(int) * (size_t)size), rs_total = 0;
    for (r = 0; r < size; r++)
        rs_total += rs_counts[r] = r % 3 + 1;
    int *rs_in = malloc(sizeof(int) * (size_t)rs_total), rs_out[3] = {-1, -1, -1};
    for (k = 0; k < rs_total; k++)
        rs_in[k] = rank + k * 2;
    CHECK_MPI(MPI_Ireduce_scatter(rs_in, rs_out, rs_counts, MPI_INT, MPI_SUM, comm, &req[n++]));

    int ga_in[3], *ga_out = malloc(sizeof(int) * (size_t)(3 * size));
    for (i = 0; i < 3; i++)
        ga_in[i] = rank * 10 + i;
    for (k = 0; k < 3 * size; k++)
        ga_out[k] = -1;
    if (inplace && rank == groot) {
        for (i = 0; i < 3; i++)
            ga_out[3 * rank + i] = ga_in[i];
        CHECK_MPI(
            MPI_Igather(MPI_IN_PLACE, 3, MPI_INT, ga_out, 3, MPI_INT, groot, comm, &req[n++]));
    } else {
        CHECK_MPI(MPI_Igather(ga_in, 3, MPI_INT, ga_out, 3, MPI_INT, groot, comm, &req[n++]));
    }

    /* Gatherv: rank r gives r % 4 + 1 ints; blocks placed with a gap of 2 */
    int *gv_counts = malloc(sizeof(int) * (size_t)size),
        *gv_displs = malloc(sizeof(int) * (size_t)size);
    int gv_len = 0;
    for (r = 0; r < size; r++) {
        gv_counts[r] = r % 4 + 1;
        gv_displs[r] = gv_len + 2;
        gv_len += gv_counts[r] + 2;
    }
    int gv_in[4], *gv_out = malloc(sizeof(int) * (size_t)gv_len);
    for (i = 0; i < 4; i++)
        gv_in[i] = rank * 1000 + i;
    for (k = 0; k < gv_len; k++)
        gv_out[k] = -9;
    CHECK_MPI(MPI_Igatherv(gv_in, rank % 4 + 1, MPI_INT, gv_out, gv_counts, gv_displs, MPI_INT, 0,
                           comm, &req[n++]));

    /* the blocking collective and the ring send, in the middle */
    MPI_Request sreq;
    CHECK_MPI(MPI_Isend(&ring_out, 1, MPI_INT, (rank + 1) % size, 42, comm, &sreq));
    req[n++] = sreq;
    int bsum = 0, bone = rank + 1;
    CHECK_MPI(MPI_Allreduce(&bone, &bsum, 1, MPI_INT, MPI_SUM, comm));
    CHECK_INT(bsum, size * (size + 1) / 2, "blocking Allreduce among nonblocking ones");

    int *scat_in = malloc(sizeof(int) * (size_t)(2 * size)), scat_out[2] = {-1, -1};
    for (k = 0; k < 2 * size; k++)
        scat_in[k] = 500 + k;
    if (inplace && rank == sroot)
        CHECK_MPI(
            MPI_Iscatter(scat_in, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, sroot, comm, &req[n++]));
    else
        CHECK_MPI(MPI_Iscatter(scat_in, 2, MPI_INT, scat_out, 2, MPI_INT, sroot, comm, &req[n++]));

    int *sv_counts = malloc(sizeof(int) * (size_t)size),
        *sv_displs = malloc(sizeof(int) * (size_t)size);
    int sv_len = 0;
    for (r = 0; r < size; r++) {
        sv_counts[r] = r % 2 + 1;
        sv_displs[r] = sv_len;
        sv_len += sv_counts[r] + 1;
    }
    int *sv_in = malloc(sizeof(int) * (size_t)sv_len), sv_out[2] = {-1, -1};
    for (k = 0; k < sv_len; k++)
        sv_in[k] = 700 + k;
    CHECK_MPI(MPI_Iscatterv(sv_in, sv_counts, sv_displs, MPI_INT, sv_out, rank % 2 + 1, MPI_INT,
                            size - 1, comm, &req[n++]));

    int ag_in[2] = {rank * 2, rank * 2 + 1}, *ag_out = malloc(sizeof(int) * (size_t)(2 * size));
    for (k = 0; k < 2 * size; k++)
        ag_out[k] = -1;
    if (inplace) {
        ag_out[2 * rank] = ag_in[0];
        ag_out[2 * rank + 1] = ag_in[1];
        CHECK_MPI(MPI_Iallgather(MPI_IN_PLACE, 2, MPI_INT, ag_out, 2, MPI_INT, comm, &req[n++]));
    } else {
        CHECK_MPI(MPI_Iallgather(ag_in, 2, MPI_INT, ag_out, 2, MPI_INT, comm, &req[n++]));
    }

    int *agv_counts = malloc(sizeof(int) * (size_t)size),
        *agv_displs = malloc(sizeof(int) * (size_t)size);
    int agv_len = 0;
    for (r = 0; r < size; r++) {
        agv_counts[r] = r % 3;
        agv_displs[r] = agv_len;
        agv_len += agv_counts[r];
    }
    int agv_in[2] = {rank * 5, rank * 5 + 1},
        *agv_out = malloc(sizeof(int) * (size_t)(agv_len + 1));
    CHECK_MPI(MPI_Iallgatherv(agv_in, rank % 3, MPI_INT, agv_out, agv_counts, agv_displs, MPI_INT,
                              comm, &req[n++]));

    int *a2a_in = malloc(sizeof(int) * (size_t)(2 * size)),
        *a2a_out = malloc(sizeof(int) * (size_t)(2 * size));
    for (r = 0; r < size; r++)
        for (k = 0; k < 2; k++) {
            a2a_in[2 * r + k] = rank * 1000 + r * 10 + k;
            a2a_out[2 * r + k] = inplace ? a2a_in[2 * r + k] : -1;
        }
    if (inplace)
        CHECK_MPI(MPI_Ialltoall(MPI_IN_PLACE, 2, MPI_INT, a2a_out, 2, MPI_INT, comm, &req[n++]));
    else
        CHECK_MPI(MPI_Ialltoall(a2a_in, 2, MPI_INT, a2a_out, 2, MPI_INT, comm, &req[n++]));

    /* Alltoallv: rank s sends (s + d) % 3 ints to d */
    int *avs_c = malloc(sizeof(int) * (size_t)size), *avs_d = malloc(sizeof(int) * (size_t)size);
    int *avr_c = malloc(sizeof(int) * (size_t)size), *avr_d = malloc(sizeof(int) * (size_t)size);
    int avs_len = 0, avr_len = 0;
    for (r = 0; r < size; r++) {
        avs_c[r] = (rank + r) % 3;
        avs_d[r] = avs_len;
        avs_len += avs_c[r];
        avr_c[r] = (r + rank) % 3;
        avr_d[r] = avr_len + 1;
        avr_len += avr_c[r] + 1;
    }
    int *av_in = malloc(sizeof(int) * (size_t)(avs_len + 1)),
        *av_out = malloc(sizeof(int) * (size_t)(avr_len + 1));
    for (r = 0; r < size; r++)
        for (k = 0; k < avs_c[r]; k++)
            av_in[avs_d[r] + k] = rank * 100 + r * 3 + k;
    for (k = 0; k < avr_len; k++)
        av_out[k] = -3;
    CHECK_MPI(MPI_Ialltoallv(av_in, avs_c, avs_d, MPI_INT, av_out, avr_c, avr_d, MPI_INT, comm,
                             &req[n++]));

    /* Alltoallw: to peer d one int if (s + d) is even, else two doubles;
     * 16-byte slots, byte displacements. */
    int *aw_c = malloc(sizeof(int) * (size_t)size), *aw_d = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *aw_t = malloc(sizeof(MPI_Datatype) * (size_t)size);
    char *aw_in = malloc((size_t)(16 * size)), *aw_out = malloc((size_t)(16 * size));
    for (r = 0; r < size; r++) {
        aw_d[r] = 16 * r;
        if ((rank + r) % 2 == 0) {
            int v = rank * 50 + r;
            aw_c[r] = 1;
            aw_t[r] = MPI_INT;
            memcpy(aw_in + 16 * r, &v, sizeof v);
        } else {
            double v[2] = {rank + r * 0.5, -(double)rank};
            aw_c[r] = 2;
            aw_t[r] = MPI_DOUBLE;
            memcpy(aw_in + 16 * r, v, sizeof v);
        }
    }
    memset(aw_out, 0, (size_t)(16 * size));
    CHECK_MPI(MPI_Ialltoallw(aw_in, aw_c, aw_d, aw_t, aw_out, aw_c, aw_d, aw_t, comm, &req[n++]));

    complete(req, n, mode);

    /* ---- check ---- */
    CHECK_INT(ring_in, ((rank + size - 1) % size) * 7 + 11, "ring exchange");
    for (i = 0; i < NB; i++) {
        CHECK(bc[i] == 1000 + i, "%s: Ibcast[%d] = %d", how, i, bc[i]);
        if (rank == 0)
            CHECK(red_out[i] == (i + 1) * size * (size + 1) / 2, "%s: Ireduce[%d] = %d", how, i,
                  red_out[i]);
        CHECK(ar_out[i] == (size - 1) * 3 + i, "%s: Iallreduce[%d] = %d", how, i, ar_out[i]);
        int e = 0;
        for (r = 0; r <= rank; r++)
            e += r + i;
        CHECK(sc_out[i] == e, "%s: Iscan[%d] = %d want %d", how, i, sc_out[i], e);
        if (rank > 0)
            CHECK(ex_out[i] == e - (rank + i), "%s: Iexscan[%d] = %d want %d", how, i, ex_out[i],
                  e - (rank + i));
    }
    for (k = 0; k < 2; k++) {
        int e = 0;
        for (r = 0; r < size; r++)
            e += r * 100 + rank * 2 + k;
        int got = inplace ? rsb_in[k] : rsb_out[k];
        CHECK(got == e, "%s: Ireduce_scatter_block[%d] = %d want %d", how, k, got, e);
    }
    {
        int off = 0;
        for (r = 0; r < rank; r++)
            off += rs_counts[r];
        for (k = 0; k < rs_counts[rank]; k++) {
            int e = 0;
            for (r = 0; r < size; r++)
                e += r + (off + k) * 2;
            CHECK(rs_out[k] == e, "%s: Ireduce_scatter[%d] = %d want %d", how, k, rs_out[k], e);
        }
    }
    if (rank == groot)
        for (r = 0; r < size; r++)
            for (i = 0; i < 3; i++)
                CHECK(ga_out[3 * r + i] == r * 10 + i, "%s: Igather from %d [%d] = %d", how, r, i,
                      ga_out[3 * r + i]);
    if (rank == 0)
        for (r = 0; r < size; r++) {
            CHECK(gv_out[gv_displs[r] - 1] == -9, "%s: Igatherv wrote into a gap", how);
            for (i = 0; i < gv_counts[r]; i++)
                CHECK(gv_out[gv_displs[r] + i] == r * 1000 + i, "%s: Igatherv from %d [%d] = %d",
                      how, r, i, gv_out[gv_displs[r] + i]);
        }
    for (k = 0; k < 2; k++) {
        int got = (inplace && rank == sroot) ? scat_in[2 * rank + k] : scat_out[k];
        CHECK(got == 500 + 2 * rank + k, "%s: Iscatter[%d] = %d", how, k, got);
    }
    for (k = 0; k < rank % 2 + 1; k++)
        CHECK(sv_out[k] == 700 + sv_displs[rank] + k, "%s: Iscatterv[%d] = %d", how, k, sv_out[k]);
    for (r = 0; r < size; r++)
        for (k = 0; k < 2; k++)
            CHECK(ag_out[2 * r + k] == r * 2 + k, "%s: Iallgather from %d [%d] = %d", how, r, k,
                  ag_out[2 * r + k]);
    for (r = 0; r < size; r++)
        for (k = 0; k < agv_counts[r]; k++)
            CHECK(agv_out[agv_displs[r] + k] == r * 5 + k, "%s: Iallgatherv from %d [%d] = %d", how,
                  r, k, agv_out[agv_displs[r] + k]);
    for (r = 0; r < size; r++)
        for (k = 0; k < 2; k++)
            CHECK(a2a_out[2 * r + k] == r * 1000 + rank * 10 + k, "%s: Ialltoall from %d [%d] = %d",
                  how, r, k, a2a_out[2 * r + k]);
    for (r = 0; r < size; r++) {
        CHECK(av_out[avr_d[r] - 1] == -3, "%s: Ialltoallv wrote into a gap", how);
        for (k = 0; k < avr_c[r]; k++)
            CHECK(av_out[avr_d[r] + k] == r * 100 + rank * 3 + k,
                  "%s: Ialltoallv from %d [%d] = %d", how, r, k, av_out[avr_d[r] + k]);
    }
    for (r = 0; r < size; r++) {
        if ((rank + r) % 2 == 0) {
            int v;
            memcpy(&v, aw_out + 16 * r, sizeof v);
            CHECK(v == r * 50 + rank, "%s: Ialltoallw int from %d = %d", how, r, v);
        } else {
            double v[2];
            memcpy(v, aw_out + 16 * r, sizeof v);
            CHECK(v[0] == r + rank * 0.5 && v[1] == -(double)r,
                  "%s: Ialltoallw doubles from %d = %g %g", how, r, v[0], v[1]);
        }
    }

    free(rsb_in);
    free(rs_counts);
    free(rs_in);
    free(ga_out);
    free(gv_counts);
    free(gv_displs);
    free(gv_out);
    free(scat_in);
    free(sv_counts);
    free(sv_displs);
    free(sv_in);
    free(ag_out);
    free(agv_counts);
    free(agv_displs);
    free(agv_out);
    free(a2a_in);
    free(a2a_out);
    free(avs_c);
    free(avs_d);
    free(avr_c);
    free(avr_d);
    free(av_in);
    free(av_out);
    free(aw_c);
    free(aw_d);
    free(aw_t);
    free(aw_in);
    free(aw_out);
}

/* ---------------------------------------------------------------- derived types, user op */

static void typed(void)
{
    int i, r, k;
    MPI_Request req[8];
    int n = 0;

    /* Ibcast of 3 elements of a vector type (2 ints, stride 3): 6 ints used */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int vb[3 * 6];
    for (i = 0; i < 18; i++)
        vb[i] = wrank == 0 ? i : -1;
    MPI_Datatype vres;
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(6 * sizeof(int)), &vres);
    MPI_Type_commit(&vres);
    CHECK_MPI(MPI_Ibcast(vb, 3, vres, 0, MPI_COMM_WORLD, &req[n++]));
    /* freeing the types does not disturb the pending broadcast */
    MPI_Type_free(&vres);
    MPI_Type_free(&vec);

    /* Ialltoall: send 2 contiguous ints to each, receive into a strided type */
    MPI_Datatype str;
    MPI_Type_vector(2, 1, 2, MPI_INT, &str);
    MPI_Datatype strr;
    MPI_Type_create_resized(str, 0, (MPI_Aint)(4 * sizeof(int)), &strr);
    MPI_Type_commit(&strr);
    int *ts = malloc(sizeof(int) * (size_t)(2 * wsize)),
        *tr = malloc(sizeof(int) * (size_t)(4 * wsize));
    for (r = 0; r < wsize; r++) {
        ts[2 * r] = wrank * 10 + r;
        ts[2 * r + 1] = -(wrank * 10 + r);
    }
    for (k = 0; k < 4 * wsize; k++)
        tr[k] = 77;
    CHECK_MPI(MPI_Ialltoall(ts, 2, MPI_INT, tr, 1, strr, MPI_COMM_WORLD, &req[n++]));
    MPI_Type_free(&strr);
    MPI_Type_free(&str);

    /* non-commutative user op on 2x2 matrices, 3 per rank */
    MPI_Op op;
    MPI_Datatype mat;
    MPI_Op_create(mat_op, 0, &op);
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    int min[3 * 4], mred[3 * 4], mall[3 * 4], mscan[3 * 4], mex[3 * 4];
    for (i = 0; i < 3; i++)
        mat_of(wrank, i, min + 4 * i);
    memset(mex, 0, sizeof mex);
    int root = wsize / 2;
    CHECK_MPI(MPI_Ireduce(min, mred, 3, mat, op, root, MPI_COMM_WORLD, &req[n++]));
    memcpy(mall, min, sizeof min);
    CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, mall, 3, mat, op, MPI_COMM_WORLD, &req[n++]));
    CHECK_MPI(MPI_Iscan(min, mscan, 3, mat, op, MPI_COMM_WORLD, &req[n++]));
    CHECK_MPI(MPI_Iexscan(min, mex, 3, mat, op, MPI_COMM_WORLD, &req[n++]));
    /* reduce-scatter-block: rank r contributes, for block q, the matrix of (r, q) */
    int *mrs_in = malloc(sizeof(int) * (size_t)(4 * wsize)), mrs_out[4];
    for (k = 0; k < wsize; k++)
        mat_of(wrank, k, mrs_in + 4 * k);
    CHECK_MPI(MPI_Ireduce_scatter_block(mrs_in, mrs_out, 1, mat, op, MPI_COMM_WORLD, &req[n++]));

    CHECK_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));

    for (k = 0; k < 3; k++)
        for (i = 0; i < 6; i++) {
            int pos = 6 * k + i, e = (i == 0 || i == 3) ? pos : (wrank == 0 ? pos : -1);
            CHECK(vb[pos] == e, "Ibcast with a vector type: [%d] = %d want %d", pos, vb[pos], e);
        }
    for (r = 0; r < wsize; r++) {
        CHECK(tr[4 * r] == r * 10 + wrank && tr[4 * r + 2] == -(r * 10 + wrank) &&
                  tr[4 * r + 1] == 77 && tr[4 * r + 3] == 77,
              "Ialltoall into a strided type from %d: %d %d %d %d", r, tr[4 * r], tr[4 * r + 1],
              tr[4 * r + 2], tr[4 * r + 3]);
    }
    for (i = 0; i < 3; i++) {
        int e[4];
        mat_prod(0, wsize - 1, i, e);
        if (wrank == root)
            CHECK(mat_eq(mred + 4 * i, e), "Ireduce user op [%d]: %d %d %d %d", i, mred[4 * i],
                  mred[4 * i + 1], mred[4 * i + 2], mred[4 * i + 3]);
        CHECK(mat_eq(mall + 4 * i, e), "Iallreduce user op in place [%d]", i);
        mat_prod(0, wrank, i, e);
        CHECK(mat_eq(mscan + 4 * i, e), "Iscan user op [%d]", i);
        if (wrank > 0) {
            mat_prod(0, wrank - 1, i, e);
            CHECK(mat_eq(mex + 4 * i, e), "Iexscan user op [%d]", i);
        }
    }
    {
        int e[4];
        mat_prod(0, wsize - 1, wrank, e);
        CHECK(mat_eq(mrs_out, e), "Ireduce_scatter_block user op: %d %d %d %d", mrs_out[0],
              mrs_out[1], mrs_out[2], mrs_out[3]);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
    free(ts);
    free(tr);
    free(mrs_in);
}

/* ---------------------------------------------------------------- large */

#define BIG (64 * 1024)

static void large(void)
{
    MPI_Request req[3];
    int k, r;
    unsigned char *b1 = malloc(BIG), *b2 = malloc(BIG);
    size_t per = wsize <= 8 ? BIG : 4096;
    unsigned char *as = malloc(per * (size_t)wsize), *ar = malloc(per * (size_t)wsize);

    for (size_t i = 0; i < BIG; i++) {
        b1[i] = wrank == 0 ? mtest_byte(1, i) : 0;
        b2[i] = wrank == wsize - 1 ? mtest_byte(2, i) : 0;
    }
    for (r = 0; r < wsize; r++)
        for (size_t i = 0; i < per; i++)
            as[(size_t)r * per + i] = mtest_byte((unsigned)(wrank * 131 + r), i);
    CHECK_MPI(MPI_Ibcast(b1, BIG, MPI_BYTE, 0, MPI_COMM_WORLD, &req[0]));
    CHECK_MPI(
        MPI_Ialltoall(as, (int)per, MPI_BYTE, ar, (int)per, MPI_BYTE, MPI_COMM_WORLD, &req[1]));
    CHECK_MPI(MPI_Ibcast(b2, BIG, MPI_BYTE, wsize - 1, MPI_COMM_WORLD, &req[2]));
    CHECK_MPI(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    int bad1 = 0, bad2 = 0, bad3 = 0;
    for (size_t i = 0; i < BIG; i++) {
        bad1 += b1[i] != mtest_byte(1, i);
        bad2 += b2[i] != mtest_byte(2, i);
    }
    for (r = 0; r < wsize; r++)
        for (size_t i = 0; i < per; i++)
            bad3 += ar[(size_t)r * per + i] != mtest_byte((unsigned)(r * 131 + wrank), i);
    CHECK(!bad1 && !bad2, "large Ibcast: %d and %d wrong bytes", bad1, bad2);
    CHECK(!bad3, "large Ialltoall: %d wrong bytes", bad3);
    for (k = 0; k < 3; k++)
        CHECK(req[k] == MPI_REQUEST_NULL, "large: request %d not null", k);
    free(b1);
    free(b2);
    free(as);
    free(ar);
}

/* Collectives still pending when their communicator is freed complete
 * normally (MPI 3.1 6.4.3). */
static void freed_comm(void)
{
    for (int k = 0; k < 3; k++) {
        MPI_Comm d;
        MPI_Request r[2];
        int x[4], one = 1, s = -1, i;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        for (i = 0; i < 4; i++)
            x[i] = wrank == 0 ? i + k : -1;
        CHECK_MPI(MPI_Ibcast(x, 4, MPI_INT, 0, d, &r[0]));
        CHECK_MPI(MPI_Iallreduce(&one, &s, 1, MPI_INT, MPI_SUM, d, &r[1]));
        MPI_Comm_free(&d);
        if (wrank % 2)
            MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        if (wrank % 2 == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        for (i = 0; i < 4; i++)
            CHECK(x[i] == i + k, "Ibcast on a freed communicator: [%d] = %d", i, x[i]);
        CHECK(s == wsize, "Iallreduce on a freed communicator: %d", s);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "coll_nonblocking");
    wrank = mtest_rank_;
    wsize = mtest_size_;

    for (int m = 0; m < NMODES; m++)
        batch(MPI_COMM_WORLD, m, m % 2);

    /* two halves, batches on them interleaved with one on the world */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half);
    MPI_Request hb;
    batch(half, WAITALL, 0);
    CHECK_MPI(MPI_Ibarrier(half, &hb));
    batch(MPI_COMM_WORLD, TESTANY, 1);
    CHECK_MPI(MPI_Wait(&hb, MPI_STATUS_IGNORE));
    batch(half, WAITSOME, 1);
    MPI_Comm_free(&half);

    typed();
    large();
    freed_comm();
    return mtest_finalize();
}
