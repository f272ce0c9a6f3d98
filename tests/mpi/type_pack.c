/*
 * type_pack: MPI_Pack, MPI_Unpack, MPI_Pack_size and MPI_PACKED messages.
 *
 *  - several items of different types packed one after the other into a
 *    buffer sized with MPI_Pack_size, unpacked in the same order;
 *  - packing in pieces and unpacking in other pieces of the same signature;
 *  - a packed buffer sent as MPI_PACKED, probed (MPI_Get_count in
 *    MPI_PACKED gives the packed size) and unpacked by the receiver;
 *  - a message sent with a derived type received as MPI_PACKED and
 *    unpacked with the type, and the reverse;
 *  - MPI_Bcast of MPI_PACKED data; a large pack of a strided type.
 */
#include "mtest.h"

static int rank, size, right, left;

typedef struct {
    char name[6];
    double w[3];
    int n;
} rec_t;

static MPI_Datatype rec_type(void)
{
    static rec_t r;
    MPI_Aint base, d[3];
    MPI_Get_address(&r, &base);
    MPI_Get_address(r.name, &d[0]);
    MPI_Get_address(r.w, &d[1]);
    MPI_Get_address(&r.n, &d[2]);
    for (int i = 0; i < 3; i++)
        d[i] -= base;
    int bl[3] = {6, 3, 1};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
    MPI_Type_create_struct(3, bl, d, ty, &t);
    MPI_Type_commit(&t);
    return t;
}

static void fill_rec(rec_t *r, int who, int i)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "r%d", (who * 7 + i) % 1000);
    for (int k = 0; k < 3; k++)
        r->w[k] = who + i * 0.5 + k;
    r->n = who * 100 + i;
}

static int same_rec(const rec_t *a, const rec_t *b)
{
    return memcmp(a->name, b->name, 6) == 0 && a->w[0] == b->w[0] && a->w[1] == b->w[1] &&
           a->w[2] == b->w[2] && a->n == b->n;
}

static void test_roundtrip(void)
{
    MPI_Datatype rt = rec_type(), vec;
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    int s1, s2, s3, s4;
    CHECK_MPI(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1));
    CHECK_MPI(MPI_Pack_size(2, vec, MPI_COMM_WORLD, &s2));
    CHECK_MPI(MPI_Pack_size(3, rt, MPI_COMM_WORLD, &s3));
    CHECK_MPI(MPI_Pack_size(5, MPI_CHAR, MPI_COMM_WORLD, &s4));
    int tsz;
    MPI_Type_size(vec, &tsz);
    CHECK(s2 >= 2 * tsz, "Pack_size(2, vector) = %d < 2 * size %d", s2, tsz);
    MPI_Type_size(rt, &tsz);
    CHECK(s3 >= 3 * tsz, "Pack_size(3, struct) = %d < 3 * size %d", s3, tsz);
    int cap = s1 + s2 + s3 + s4;
    char *buf = malloc((size_t)cap);

    int i1 = rank * 3 + 1;
    double d[20];
    for (int i = 0; i < 20; i++)
        d[i] = rank + i * 0.125;
    rec_t r[3];
    for (int i = 0; i < 3; i++)
        fill_rec(&r[i], rank, i);
    char txt[5] = {'h', 'e', 'l', 'l', 'o'};
    int pos = 0;
    CHECK_MPI(MPI_Pack(&i1, 1, MPI_INT, buf, cap, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(d, 2, vec, buf, cap, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(r, 3, rt, buf, cap, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(txt, 5, MPI_CHAR, buf, cap, &pos, MPI_COMM_WORLD));
    CHECK(pos <= cap, "packed %d bytes into a buffer of Pack_size total %d", pos, cap);
    int packed = pos;

    /* Unpack locally. */
    int o1 = 0;
    double od[20];
    rec_t orr[3];
    char otxt[5];
    for (int i = 0; i < 20; i++)
        od[i] = -1.0;
    memset(orr, 0, sizeof orr);
    pos = 0;
    CHECK_MPI(MPI_Unpack(buf, packed, &pos, &o1, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, packed, &pos, od, 2, vec, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, packed, &pos, orr, 3, rt, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, packed, &pos, otxt, 5, MPI_CHAR, MPI_COMM_WORLD));
    CHECK_INT(pos, packed, "unpacked bytes");
    CHECK_INT(o1, i1, "unpacked int");
    for (int i = 0; i < 20; i++) {
        /* vector elements: doubles 0,3,6,9 then (extent 10) 10,13,16,19 */
        int in = i % 10 % 3 == 0;
        double want = in ? d[i] : -1.0;
        CHECK(od[i] == want, "unpacked vector od[%d] = %g, expected %g", i, od[i], want);
    }
    for (int i = 0; i < 3; i++)
        CHECK(same_rec(&orr[i], &r[i]), "unpacked struct %d", i);
    CHECK(memcmp(otxt, txt, 5) == 0, "unpacked chars");

    /* Send the packed buffer to the right as MPI_PACKED. */
    MPI_Status st;
    MPI_Request rq;
    CHECK_MPI(MPI_Isend(buf, packed, MPI_PACKED, right, 1, MPI_COMM_WORLD, &rq));
    CHECK_MPI(MPI_Probe(left, 1, MPI_COMM_WORLD, &st));
    int n;
    MPI_Get_count(&st, MPI_PACKED, &n);
    CHECK_INT(n, packed, "Get_count(MPI_PACKED) of a probed packed message");
    char *in = malloc((size_t)n);
    CHECK_MPI(MPI_Recv(in, n, MPI_PACKED, left, 1, MPI_COMM_WORLD, &st));
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    pos = 0;
    CHECK_MPI(MPI_Unpack(in, n, &pos, &o1, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(in, n, &pos, od, 2, vec, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(in, n, &pos, orr, 3, rt, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(in, n, &pos, otxt, 5, MPI_CHAR, MPI_COMM_WORLD));
    CHECK_INT(o1, left * 3 + 1, "received packed int");
    CHECK(od[3] == left + 3 * 0.125 && od[19] == left + 19 * 0.125, "received packed vector");
    for (int i = 0; i < 3; i++) {
        rec_t w;
        fill_rec(&w, left, i);
        CHECK(same_rec(&orr[i], &w), "received packed struct %d", i);
    }
    CHECK(memcmp(otxt, txt, 5) == 0, "received packed chars");
    free(in);
    free(buf);
    MPI_Type_free(&vec);
    MPI_Type_free(&rt);
}

/* Pack 3 + 2 elements, unpack 5 at once; pack 5, unpack 1 + 4. */
static void test_pieces(void)
{
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(v, &lb, &ext); /* 3 ints */
    int a[15], b[15], buf[10], pos = 0;
    for (int i = 0; i < 15; i++) {
        a[i] = rank * 100 + i;
        b[i] = -1;
    }
    CHECK_MPI(MPI_Pack(a, 3, v, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Pack(a + 9, 2, v, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK_INT(pos, 10 * (int)sizeof(int), "pieces packed");
    pos = 0;
    CHECK_MPI(MPI_Unpack(buf, sizeof buf, &pos, b, 5, v, MPI_COMM_WORLD));
    for (int i = 0; i < 15; i++)
        CHECK_INT(b[i], i % 3 == 1 ? -1 : rank * 100 + i, "pieces unpacked");
    int c[10];
    pos = 0;
    CHECK_MPI(MPI_Unpack(buf, sizeof buf, &pos, c, 2, MPI_INT, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Unpack(buf, sizeof buf, &pos, c + 2, 8, MPI_INT, MPI_COMM_WORLD));
    int want[10] = {0, 2, 3, 5, 6, 8, 9, 11, 12, 14};
    for (int i = 0; i < 10; i++)
        CHECK_INT(c[i], rank * 100 + want[i], "pieces unpacked as ints");
    MPI_Type_free(&v);
}

/* Derived type on one side, MPI_PACKED on the other. */
static void test_packed_matches(void)
{
    MPI_Datatype rt = rec_type();
    rec_t r[2], o[2], w;
    fill_rec(&r[0], rank, 0);
    fill_rec(&r[1], rank, 1);
    int psz;
    MPI_Pack_size(2, rt, MPI_COMM_WORLD, &psz);
    char *buf = malloc((size_t)psz);
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(r, 2, rt, right, 2, buf, psz, MPI_PACKED, left, 2, MPI_COMM_WORLD, &st));
    int n, pos = 0;
    MPI_Get_count(&st, MPI_PACKED, &n);
    memset(o, 0, sizeof o);
    CHECK_MPI(MPI_Unpack(buf, n, &pos, o, 2, rt, MPI_COMM_WORLD));
    for (int i = 0; i < 2; i++) {
        fill_rec(&w, left, i);
        CHECK(same_rec(&o[i], &w), "typed -> MPI_PACKED -> unpack, record %d", i);
    }
    /* And back: pack, send MPI_PACKED, receive typed. */
    pos = 0;
    CHECK_MPI(MPI_Pack(r, 2, rt, buf, psz, &pos, MPI_COMM_WORLD));
    memset(o, 0, sizeof o);
    CHECK_MPI(MPI_Sendrecv(buf, pos, MPI_PACKED, right, 3, o, 2, rt, left, 3, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 2; i++) {
        fill_rec(&w, left, i);
        CHECK(same_rec(&o[i], &w), "pack -> MPI_PACKED -> typed, record %d", i);
    }
    MPI_Get_count(&st, rt, &n);
    CHECK_INT(n, 2, "Get_count(struct) of a packed message");

    /* Broadcast a packed buffer. */
    int pos0 = 0, len = 0;
    if (rank == 0) {
        fill_rec(&r[0], 99, 5);
        MPI_Pack(r, 1, rt, buf, psz, &pos0, MPI_COMM_WORLD);
        len = pos0;
    }
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Bcast(buf, len, MPI_PACKED, 0, MPI_COMM_WORLD));
    pos = 0;
    memset(o, 0, sizeof o);
    CHECK_MPI(MPI_Unpack(buf, len, &pos, o, 1, rt, MPI_COMM_WORLD));
    fill_rec(&w, 99, 5);
    CHECK(same_rec(&o[0], &w), "broadcast packed record");
    free(buf);
    MPI_Type_free(&rt);
}

static void test_large_pack(void)
{
    enum { M = 30000 };
    int *a = malloc(3 * M * sizeof(int)), *b = malloc(3 * M * sizeof(int));
    MPI_Datatype v;
    MPI_Type_vector(M, 2, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    int psz;
    MPI_Pack_size(1, v, MPI_COMM_WORLD, &psz);
    char *buf = malloc((size_t)psz);
    for (int i = 0; i < 3 * M; i++) {
        a[i] = i ^ rank;
        b[i] = -1;
    }
    int pos = 0;
    CHECK_MPI(MPI_Pack(a, 1, v, buf, psz, &pos, MPI_COMM_WORLD));
    CHECK_INT(pos, 2 * M * (int)sizeof(int), "large pack size");
    pos = 0;
    CHECK_MPI(MPI_Unpack(buf, psz, &pos, b, 1, v, MPI_COMM_WORLD));
    int bad = 0;
    for (int i = 0; i < 3 * M - 1; i++) {
        int want = i % 3 == 2 ? -1 : (i ^ rank);
        if (b[i] != want && bad++ < 3)
            CHECK(0, "large unpack b[%d] = %d, expected %d", i, b[i], want);
    }
    free(a);
    free(b);
    free(buf);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "type_pack");
    rank = mtest_rank_;
    size = mtest_size_;
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_roundtrip();
    test_pieces();
    test_packed_matches();
    test_large_pack();
    return mtest_finalize();
}
