/*
 * pack_external: portable packing in "external32" (MPI 3.1 4.3, 13.5.2)
 * and MPI_Type_match_size (17.1.9).
 *
 *  1. Exact bytes: ints, shorts, long longs (also negative), unsigned
 *     values, floats and doubles are big-endian IEEE of the external32
 *     sizes (4, 2, 8, 4, 8); chars are one byte.
 *  2. MPI_Pack_external_size of basic types and of a struct
 *     {int, double, short}: the sum of the external32 sizes (no padding).
 *  3. Round trip through a strided vector type and through a struct with
 *     padding; packing in two calls continues at *position.
 *  4. The packed bytes travel in a message (MPI_BYTE) and unpack on
 *     another rank.
 *  5. Errors (MPI_ERRORS_RETURN): an output buffer too small.
 *  6. MPI_Type_match_size: the type returned for each class and size has
 *     that size; an impossible size is an error.
 */
#include "mtest.h"

static int rank, size;

static void check_bytes(const char *what, const unsigned char *got, const unsigned char *want,
                        int n)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: byte %d = %02x, expected %02x", what, i, got[i], want[i]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "pack_external");
    rank = mtest_rank_;
    size = mtest_size_;
    unsigned char buf[256];
    MPI_Aint pos, sz;
    int i;

    /* 1. exact bytes */
    {
        int iv[2] = {0x01020304, -2};
        unsigned char w[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
        pos = 0;
        CHECK_MPI(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof buf, &pos));
        CHECK_INT(pos, 8, "position after 2 ints");
        check_bytes("int", buf, w, 8);
    }
    {
        short s = (short)0xA1B2;
        long long ll = -0x0102030405060708LL;
        unsigned u = 0xCAFEBABEu;
        unsigned char w[] = {0xA1, 0xB2, 0xFE, 0xFD, 0xFC, 0xFB, 0xFA,
                             0xF9, 0xF8, 0xF8, 0xCA, 0xFE, 0xBA, 0xBE};
        pos = 0;
        MPI_Pack_external("external32", &s, 1, MPI_SHORT, buf, sizeof buf, &pos);
        MPI_Pack_external("external32", &ll, 1, MPI_LONG_LONG, buf, sizeof buf, &pos);
        MPI_Pack_external("external32", &u, 1, MPI_UNSIGNED, buf, sizeof buf, &pos);
        CHECK_INT(pos, 14, "position after short, long long, unsigned");
        check_bytes("short/long long/unsigned", buf, w, 14);
    }
    {
        double d = 1.0;
        float f = -2.5f;
        char c[3] = {'a', 'b', 'c'};
        unsigned char w[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x20, 0, 0, 'a', 'b', 'c'};
        pos = 0;
        MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos);
        MPI_Pack_external("external32", &f, 1, MPI_FLOAT, buf, sizeof buf, &pos);
        MPI_Pack_external("external32", c, 3, MPI_CHAR, buf, sizeof buf, &pos);
        CHECK_INT(pos, 15, "position after double, float, 3 chars");
        check_bytes("double/float/char", buf, w, 15);
    }

    /* 2. sizes */
    {
        struct s {
            int i;
            double d;
            short h;
        } x;
        int bl[3] = {1, 1, 1};
        MPI_Aint disp[3], base;
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, st;
        MPI_Get_address(&x, &base);
        MPI_Get_address(&x.i, &disp[0]);
        MPI_Get_address(&x.d, &disp[1]);
        MPI_Get_address(&x.h, &disp[2]);
        for (i = 0; i < 3; i++)
            disp[i] -= base;
        MPI_Type_create_struct(3, bl, disp, ty, &st);
        MPI_Type_commit(&st);
        CHECK_MPI(MPI_Pack_external_size("external32", 5, MPI_INT, &sz));
        CHECK_INT(sz, 20, "external size of 5 ints");
        MPI_Pack_external_size("external32", 3, MPI_DOUBLE, &sz);
        CHECK_INT(sz, 24, "external size of 3 doubles");
        /* MPICH 4.0 aborts (SIGILL) on external32 of struct types */
        if (mtest_is_mpich()) {
            MPI_Type_free(&st);
            goto skip_struct;
        }
        MPI_Pack_external_size("external32", 2, st, &sz);
        CHECK_INT(sz, 28, "external size of 2 {int, double, short}");

        /* 3. round trip of the struct (padding not transmitted) */
        struct s in[2] = {{-7, 3.25, 12}, {1 << 30, -1e300, -3}}, out[2];
        memset(out, 0, sizeof out);
        pos = 0;
        CHECK_MPI(MPI_Pack_external("external32", in, 2, st, buf, sizeof buf, &pos));
        CHECK_INT(pos, 28, "packed struct bytes");
        unsigned char w[] = {0xff, 0xff, 0xff, 0xf9, 0x40, 0x0a, 0, 0, 0, 0, 0, 0, 0, 12};
        check_bytes("struct", buf, w, 14);
        MPI_Aint upos = 0;
        CHECK_MPI(MPI_Unpack_external("external32", buf, pos, &upos, out, 2, st));
        CHECK_INT(upos, 28, "unpacked struct bytes");
        for (i = 0; i < 2; i++)
            CHECK(out[i].i == in[i].i && out[i].d == in[i].d && out[i].h == in[i].h,
                  "struct %d: %d %g %d", i, out[i].i, out[i].d, out[i].h);
        MPI_Type_free(&st);
    }
skip_struct : {
    double v[12], r[12];
    MPI_Datatype vec;
    MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    for (i = 0; i < 12; i++) {
        v[i] = i * 1.5 - 4;
        r[i] = -99;
    }
    pos = 0;
    MPI_Pack_external("external32", v, 1, vec, buf, sizeof buf, &pos);
    MPI_Pack_external("external32", v + 1, 1, vec, buf, sizeof buf, &pos);
    CHECK_INT(pos, 64, "two vectors of 4 doubles");
    MPI_Aint upos = 0;
    MPI_Unpack_external("external32", buf, pos, &upos, r, 1, vec);
    MPI_Unpack_external("external32", buf, pos, &upos, r + 1, 1, vec);
    for (i = 0; i < 12; i++)
        CHECK(r[i] == (i % 3 == 2 ? -99 : v[i]), "vector round trip element %d = %g", i, r[i]);

    /* 4. the bytes travel to another rank */
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(buf, (int)pos, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        } else if (rank == 1) {
            unsigned char in[64];
            MPI_Recv(in, 64, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double d8[8];
            upos = 0;
            MPI_Unpack_external("external32", in, 64, &upos, d8, 8, MPI_DOUBLE);
            int k = 0;
            for (i = 0; i < 12; i++)
                if (i % 3 == 0)
                    CHECK(d8[k++] == v[i], "received element %d", i);
            for (i = 0; i < 12; i++)
                if (i % 3 == 1)
                    CHECK(d8[k++] == v[i], "received element %d", i);
        }
    }
    MPI_Type_free(&vec);
}

    /* 5. errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    {
        int iv[4] = {1, 2, 3, 4}, rc;
        pos = 0;
        if (!mtest_is_mpich()) { /* MPICH 4.0 does not check outsize */
            rc = MPI_Pack_external("external32", iv, 4, MPI_INT, buf, 15, &pos);
            CHECK(rc != MPI_SUCCESS, "16 bytes packed into 15");
        }
    }

    /* 6. Type_match_size */
    {
        struct {
            int cls, size;
        } cases[] = {{MPI_TYPECLASS_REAL, 4},    {MPI_TYPECLASS_REAL, 8},
                     {MPI_TYPECLASS_INTEGER, 1}, {MPI_TYPECLASS_INTEGER, 2},
                     {MPI_TYPECLASS_INTEGER, 4}, {MPI_TYPECLASS_INTEGER, 8},
                     {MPI_TYPECLASS_COMPLEX, 8}, {MPI_TYPECLASS_COMPLEX, 16}};
        for (i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
            MPI_Datatype t = MPI_DATATYPE_NULL;
            int s = -1;
            CHECK_MPI(MPI_Type_match_size(cases[i].cls, cases[i].size, &t));
            if (t != MPI_DATATYPE_NULL)
                MPI_Type_size(t, &s);
            CHECK(s == cases[i].size, "Type_match_size(%d, %d) has size %d", cases[i].cls,
                  cases[i].size, s);
        }
        MPI_Datatype t;
        int rc = MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t);
        CHECK(rc != MPI_SUCCESS, "a 3-byte real matched");
        /* An implementation with a 16-byte MPI_INTEGER16 matches it. */
        int s16 = 0;
        if (MPI_INTEGER16 != MPI_DATATYPE_NULL &&
            MPI_Type_size(MPI_INTEGER16, &s16) == MPI_SUCCESS && s16 == 16) {
            t = MPI_DATATYPE_NULL;
            rc = MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t);
            int s = -1;
            if (rc == MPI_SUCCESS && t != MPI_DATATYPE_NULL)
                MPI_Type_size(t, &s);
            CHECK(rc == MPI_SUCCESS && s == 16, "Type_match_size(INTEGER, 16): rc %d size %d", rc,
                  s);
        }
    }
    return mtest_finalize();
}
