/*
 * abi_consts: sanity of the definitions in mpi.h.
 *
 *  - MPI_VERSION / MPI_SUBVERSION are preprocessor macros, MPI_VERSION >= 3;
 *  - MPI_MAX_PROCESSOR_NAME, MPI_MAX_ERROR_STRING,
 *    MPI_MAX_LIBRARY_VERSION_STRING and MPI_MAX_OBJECT_NAME are integer
 *    constant expressions usable as (file-scope, static) array sizes;
 *    MPI_Comm_get_name(MPI_COMM_WORLD) is "MPI_COMM_WORLD" (MPI-3.1 6.8);
 *  - MPI_SUCCESS == 0; the status object has MPI_SOURCE, MPI_TAG and
 *    MPI_ERROR fields;
 *  - MPI_ANY_SOURCE, MPI_PROC_NULL and MPI_ROOT (rank-valued) are distinct
 *    and are not valid ranks; MPI_ANY_TAG is not a valid tag.  (MPI_ANY_TAG
 *    lives in the tag namespace and may equal a rank-valued constant: in
 *    MPICH MPI_ANY_TAG == MPI_PROC_NULL == -1, so that is not checked.)
 *    MPI_UNDEFINED is not a valid rank; MPI_IDENT/CONGRUENT/SIMILAR/UNEQUAL
 *    are distinct;
 *  - the predefined handles are distinct from their null handles;
 *  - MPI_TAG_UB attribute >= 32767 and the tag MPI_TAG_UB itself works;
 *  - send/receive with MPI_PROC_NULL (Send, Recv, Isend, Irecv, Sendrecv)
 *    complete at once; a receive from MPI_PROC_NULL gives source
 *    MPI_PROC_NULL, tag MPI_ANY_TAG, count 0 and leaves the buffer alone;
 *  - MPI_Type_size of every basic datatype equals sizeof the C type; for
 *    the pair types (MPI_FLOAT_INT, ...) the size is the sum of the member
 *    sizes and the extent (MPI_Type_get_extent) is sizeof the C struct;
 *  - MPI_Aint can hold a pointer.
 */
#include "mtest.h"

#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

#if !defined(MPI_VERSION) || !defined(MPI_SUBVERSION)
#error "MPI_VERSION and MPI_SUBVERSION must be preprocessor macros"
#endif
#if MPI_VERSION < 3
#error "MPI_VERSION must be at least 3"
#endif

/* must be integer constant expressions */
static char g_proc[MPI_MAX_PROCESSOR_NAME];
static char g_err[MPI_MAX_ERROR_STRING];
static char g_lib[MPI_MAX_LIBRARY_VERSION_STRING];
static char g_obj[MPI_MAX_OBJECT_NAME];
_Static_assert(MPI_MAX_PROCESSOR_NAME > 0, "MPI_MAX_PROCESSOR_NAME");
_Static_assert(MPI_MAX_ERROR_STRING > 0, "MPI_MAX_ERROR_STRING");
_Static_assert(MPI_SUCCESS == 0, "MPI_SUCCESS must be 0");
_Static_assert(sizeof(MPI_Aint) >= sizeof(void *), "MPI_Aint too small");

static void type_size(MPI_Datatype t, const char *name, size_t want)
{
    int sz = -1;
    MPI_Type_size(t, &sz);
    CHECK(sz == (int)want, "MPI_Type_size(%s) = %d, sizeof = %zu", name, sz, want);
}

static void pair_type(MPI_Datatype t, const char *name, size_t want_size, size_t want_extent)
{
    MPI_Aint lb = -1, ext = -1;
    type_size(t, name, want_size);
    MPI_Type_get_extent(t, &lb, &ext);
    CHECK(lb == 0 && ext == (MPI_Aint)want_extent,
          "MPI_Type_get_extent(%s) = lb %ld extent %ld, struct size %zu", name, (long)lb, (long)ext,
          want_extent);
}

int main(int argc, char **argv)
{
    int rank, size, i;
    MPI_Status st;

    mtest_init(&argc, &argv, "abi_consts");
    rank = mtest_rank_;
    size = mtest_size_;

    /* the static arrays are usable */
    {
        int len = 0;
        MPI_Get_processor_name(g_proc, &len);
        MPI_Error_string(MPI_ERR_TAG, g_err, &len);
        MPI_Get_library_version(g_lib, &len);
        MPI_Comm_get_name(MPI_COMM_WORLD, g_obj, &len);
        CHECK(len == (int)strlen("MPI_COMM_WORLD") && strcmp(g_obj, "MPI_COMM_WORLD") == 0,
              "MPI_Comm_get_name(MPI_COMM_WORLD) = \"%s\" (len %d)", g_obj, len);
    }

    /* status fields exist and are assignable */
    st.MPI_SOURCE = 1;
    st.MPI_TAG = 2;
    st.MPI_ERROR = MPI_SUCCESS;
    CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 2, "MPI_Status fields");

    /* special values */
    {
        int *ub = NULL, flag = 0, v[4] = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_PROC_NULL, MPI_ROOT};
        CHECK(MPI_ANY_SOURCE != MPI_PROC_NULL && MPI_ANY_SOURCE != MPI_ROOT &&
                  MPI_PROC_NULL != MPI_ROOT,
              "MPI_ANY_SOURCE/MPI_PROC_NULL/MPI_ROOT not distinct");
        for (i = 0; i < 4; i++)
            CHECK(v[i] < 0 || v[i] >= size, "special value %d (index %d) is a valid rank", v[i], i);
        CHECK(MPI_UNDEFINED < 0 || MPI_UNDEFINED >= size, "MPI_UNDEFINED (%d) is a valid rank",
              MPI_UNDEFINED);
        CHECK(MPI_IDENT != MPI_CONGRUENT && MPI_IDENT != MPI_SIMILAR && MPI_IDENT != MPI_UNEQUAL &&
                  MPI_CONGRUENT != MPI_SIMILAR && MPI_CONGRUENT != MPI_UNEQUAL &&
                  MPI_SIMILAR != MPI_UNEQUAL,
              "comparison results not distinct");
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB attribute");
        if (flag && ub) {
            CHECK(MPI_ANY_TAG < 0 || MPI_ANY_TAG > *ub, "MPI_ANY_TAG (%d) is a valid tag",
                  MPI_ANY_TAG);
            /* the largest tag works */
            int out = 5, in = -1;
            MPI_Sendrecv(&out, 1, MPI_INT, rank, *ub, &in, 1, MPI_INT, rank, *ub, MPI_COMM_WORLD,
                         &st);
            CHECK(in == 5 && st.MPI_TAG == *ub,
                  "tag MPI_TAG_UB (%d): got %d "
                  "tag %d",
                  *ub, in, st.MPI_TAG);
        }
        CHECK(MPI_COMM_WORLD != MPI_COMM_NULL && MPI_COMM_SELF != MPI_COMM_NULL &&
                  MPI_COMM_WORLD != MPI_COMM_SELF,
              "communicator handles");
        CHECK(MPI_INT != MPI_DATATYPE_NULL && MPI_SUM != MPI_OP_NULL &&
                  MPI_ERRORS_RETURN != MPI_ERRHANDLER_NULL &&
                  MPI_ERRORS_ARE_FATAL != MPI_ERRORS_RETURN,
              "predefined handles equal null handles");
    }

    /* MPI_PROC_NULL */
    {
        int buf[3] = {7, 8, 9}, cnt = -1, flag = 0;
        MPI_Request r[2];
        MPI_Status sts[2];
        CHECK_MPI(MPI_Send(buf, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        st.MPI_SOURCE = 1234;
        CHECK_MPI(MPI_Recv(buf, 3, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0,
              "Recv(MPI_PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
        CHECK(buf[0] == 7 && buf[1] == 8 && buf[2] == 9, "Recv(MPI_PROC_NULL) modified the buffer");
        MPI_Irecv(buf, 3, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf, 3, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[1]);
        MPI_Testall(2, r, &flag, sts);
        CHECK(flag, "Isend/Irecv with MPI_PROC_NULL not complete at once");
        if (!flag)
            MPI_Waitall(2, r, sts);
        MPI_Get_count(&sts[0], MPI_INT, &cnt);
        if (mtest_is_mpich() && sts[0].MPI_SOURCE == 0 && sts[0].MPI_TAG == 0 && cnt == 0) {
            /* MPICH < 4.2 bug pmodels/mpich#6805 (fixed by PR #6819): the
             * status of MPI_Irecv from MPI_PROC_NULL has source 0, tag 0.
             * Excused for MPICH only. */
            if (rank == 0)
                fprintf(stderr, "note: MPICH Irecv(MPI_PROC_NULL) status "
                                "bug (pmodels/mpich#6805) detected; check "
                                "skipped\n");
        } else {
            CHECK(sts[0].MPI_SOURCE == MPI_PROC_NULL && sts[0].MPI_TAG == MPI_ANY_TAG && cnt == 0,
                  "Irecv(MPI_PROC_NULL): source %d tag %d count %d", sts[0].MPI_SOURCE,
                  sts[0].MPI_TAG, cnt);
        }
        /* Sendrecv with PROC_NULL on one or both sides */
        CHECK_MPI(MPI_Sendrecv(buf, 3, MPI_INT, MPI_PROC_NULL, 3, buf + 1, 2, MPI_INT,
                               MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && buf[1] == 8, "Sendrecv(MPI_PROC_NULL): source %d",
              st.MPI_SOURCE);
        {
            /* a non-periodic chain: the ends use MPI_PROC_NULL */
            int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
            int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
            int in = -1;
            MPI_Sendrecv(&rank, 1, MPI_INT, up, 4, &in, 1, MPI_INT, down, 4, MPI_COMM_WORLD, &st);
            if (down == MPI_PROC_NULL)
                CHECK(in == -1 && st.MPI_SOURCE == MPI_PROC_NULL, "chain end: in %d source %d", in,
                      st.MPI_SOURCE);
            else
                CHECK(in == down && st.MPI_SOURCE == down, "chain: in %d source %d", in,
                      st.MPI_SOURCE);
        }
    }

    /* basic datatype sizes */
    type_size(MPI_CHAR, "MPI_CHAR", sizeof(char));
    type_size(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", sizeof(signed char));
    type_size(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", sizeof(unsigned char));
    type_size(MPI_BYTE, "MPI_BYTE", 1);
    type_size(MPI_PACKED, "MPI_PACKED", 1);
    type_size(MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t));
    type_size(MPI_SHORT, "MPI_SHORT", sizeof(short));
    type_size(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short));
    type_size(MPI_INT, "MPI_INT", sizeof(int));
    type_size(MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned));
    type_size(MPI_LONG, "MPI_LONG", sizeof(long));
    type_size(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long));
    type_size(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long));
    type_size(MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long));
    type_size(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long));
    type_size(MPI_FLOAT, "MPI_FLOAT", sizeof(float));
    type_size(MPI_DOUBLE, "MPI_DOUBLE", sizeof(double));
    type_size(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double));
    type_size(MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool));
    type_size(MPI_INT8_T, "MPI_INT8_T", sizeof(int8_t));
    type_size(MPI_INT16_T, "MPI_INT16_T", sizeof(int16_t));
    type_size(MPI_INT32_T, "MPI_INT32_T", sizeof(int32_t));
    type_size(MPI_INT64_T, "MPI_INT64_T", sizeof(int64_t));
    type_size(MPI_UINT8_T, "MPI_UINT8_T", sizeof(uint8_t));
    type_size(MPI_UINT16_T, "MPI_UINT16_T", sizeof(uint16_t));
    type_size(MPI_UINT32_T, "MPI_UINT32_T", sizeof(uint32_t));
    type_size(MPI_UINT64_T, "MPI_UINT64_T", sizeof(uint64_t));
    type_size(MPI_C_COMPLEX, "MPI_C_COMPLEX", sizeof(float complex));
    type_size(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(float complex));
    type_size(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double complex));
    type_size(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double complex));
    type_size(MPI_AINT, "MPI_AINT", sizeof(MPI_Aint));
    type_size(MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset));
    type_size(MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count));
    {
        struct fi {
            float v;
            int i;
        };
        struct di {
            double v;
            int i;
        };
        struct li {
            long v;
            int i;
        };
        struct ii {
            int v;
            int i;
        };
        struct si {
            short v;
            int i;
        };
        struct ldi {
            long double v;
            int i;
        };
        pair_type(MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float) + sizeof(int), sizeof(struct fi));
        pair_type(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int),
                  sizeof(struct di));
        pair_type(MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + sizeof(int), sizeof(struct li));
        pair_type(MPI_2INT, "MPI_2INT", 2 * sizeof(int), sizeof(struct ii));
        pair_type(MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short) + sizeof(int), sizeof(struct si));
        pair_type(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + sizeof(int),
                  sizeof(struct ldi));
    }
    {
        MPI_Aint lb = -1, ext = -1;
        MPI_Type_get_extent(MPI_DOUBLE, &lb, &ext);
        CHECK(lb == 0 && ext == (MPI_Aint)sizeof(double), "extent of MPI_DOUBLE: lb %ld extent %ld",
              (long)lb, (long)ext);
    }

    return mtest_finalize();
}
