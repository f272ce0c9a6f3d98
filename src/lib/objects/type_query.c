/* The datatype calls besides the constructors: duplicate, commit, free,
 * the queries, MPI_Get_count and MPI_Get_elements, MPI_Pack and MPI_Unpack.
 * The descriptors they read are the datatype engine's (core/dtype.c). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bd_dtype.h"
#include "core.h"
#include "dt.h"
#include "objects.h"

static inline char *addr(const void *buf, int64_t off)
{
    return (char *)((intptr_t)buf + (intptr_t)off);
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_dup";
    bdl_dt_t *o = NULL;
    int rc;
    if ((rc = bdl_type_arg(call, "old", oldtype, &o)))
        return rc;
    BDL_CHECK_OUT(call, newtype);
    bdl_dt_builder_t b;
    if (bdl_dt_build_init(&b, MPI_COMBINER_DUP) < 0 || bdl_dt_build_add(&b, o, 0, 1) < 0 ||
        bdl_dt_build_sig(&b, o, 1) < 0 || bdl_dt_build_contents(&b, 0, NULL, 0, NULL, 1, &o) < 0)
        return bdl_type_nomem(&b, call);
    b.t->committed = o->committed;
    if ((rc = bdl_dt_build_publish(&b, call, newtype)))
        return rc;
    /* Attributes go through their copy callbacks (typeattr.c). */
    if ((rc = bdl_type_attr_copy_all(oldtype, *newtype, call))) {
        bdl_type_attr_drop(*newtype);
        bdl_dt_handle_free(*newtype);
        *newtype = MPI_DATATYPE_NULL;
        return rc;
    }
    return MPI_SUCCESS;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if (!datatype)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Type_commit", "NULL datatype pointer");
    if ((rc = bdl_type_arg("MPI_Type_commit", "", *datatype, &t)))
        return rc;
    t->committed = 1;
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Type_free";
    bdl_dt_t *t = NULL;
    int rc;
    if (!datatype)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL datatype pointer");
    if ((rc = bdl_type_arg(call, "", *datatype, &t)))
        return rc;
    if (t->predefined || t->combiner == MPI_COMBINER_F90_REAL ||
        t->combiner == MPI_COMBINER_F90_COMPLEX || t->combiner == MPI_COMBINER_F90_INTEGER)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_TYPE, call,
                         "datatype %d (%s) is predefined (MPI_Type_create_f90_*: MPI 3.1 17.1.9) "
                         "and cannot be freed",
                         *datatype, t->name);
    /* Attributes go through their delete callbacks first (typeattr.c). */
    if ((rc = bdl_type_attr_delete_all(*datatype, call)))
        return rc;
    bdl_dt_handle_free(*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- queries */

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_size", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_size", size);
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_size_x", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_size_x", size);
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_get_extent", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_extent", lb && extent);
    *lb = t->lb;
    *extent = t->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    BDL_MT_GUARD;
    MPI_Aint l, e;
    int rc = MPI_Type_get_extent(datatype, &l, &e);
    if (rc)
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_extent_x", lb && extent);
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_get_true_extent", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_true_extent", true_lb && true_extent);
    *true_lb = t->true_lb;
    *true_extent = t->true_extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    BDL_MT_GUARD;
    MPI_Aint l, e;
    int rc = MPI_Type_get_true_extent(datatype, &l, &e);
    if (rc)
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_true_extent_x", true_lb && true_extent);
    *true_lb = l;
    *true_extent = e;
    return MPI_SUCCESS;
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    BDL_MT_GUARD;
    MPI_Aint lb;
    return MPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    BDL_MT_GUARD;
    MPI_Aint ext;
    return MPI_Type_get_extent(datatype, displacement, &ext);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    BDL_MT_GUARD;
    MPI_Aint lb, ext;
    int rc = MPI_Type_get_extent(datatype, &lb, &ext);
    if (rc == MPI_SUCCESS)
        *displacement = lb + ext;
    return rc;
}

/* A type made by a large-count constructor (_c) keeps its MPI_Count
 * arguments as large counts (MPI 4.0 5.1.13), which the int forms cannot
 * return: they refuse it and name the _c form. */
static int large_only(const char *call, MPI_Datatype datatype, const bdl_dt_t *t)
{
    if (!t->nc)
        return MPI_SUCCESS;
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_TYPE, call,
                     "datatype %d was made by a large-count constructor: its arguments are "
                     "large counts (use %s_c)",
                     datatype, call);
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                          int *num_datatypes, int *combiner)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_get_envelope", "", datatype, &t)) ||
        (rc = large_only("MPI_Type_get_envelope", datatype, t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_envelope",
                  num_integers && num_addresses && num_datatypes && combiner);
    *num_integers = t->ni;
    *num_addresses = t->na;
    *num_datatypes = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                            MPI_Count *num_addresses, MPI_Count *num_large_counts,
                            MPI_Count *num_datatypes, int *combiner)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_get_envelope_c", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_envelope_c",
                  num_integers && num_addresses && num_large_counts && num_datatypes && combiner);
    *num_integers = t->ni;
    *num_addresses = t->na;
    *num_large_counts = t->nc;
    *num_datatypes = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}

static int contents(const char *call, MPI_Datatype datatype, MPI_Count max_integers,
                    MPI_Count max_addresses, MPI_Count max_large_counts, MPI_Count max_datatypes,
                    int array_of_integers[], MPI_Aint array_of_addresses[],
                    MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg(call, "", datatype, &t)))
        return rc;
    if (t->predefined)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "datatype %d (%s) is predefined: it has no contents", datatype, t->name);
    if (max_integers < t->ni || max_addresses < t->na || max_large_counts < t->nc ||
        max_datatypes < t->nd)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call,
                         "arrays too small: need %d integers, %d addresses, %d large counts, %d "
                         "datatypes",
                         t->ni, t->na, t->nc, t->nd);
    if (t->ni)
        memcpy(array_of_integers, t->ints, (size_t)t->ni * sizeof *t->ints);
    if (t->na)
        memcpy(array_of_addresses, t->aints, (size_t)t->na * sizeof *t->aints);
    if (t->nc)
        memcpy(array_of_large_counts, t->counts, (size_t)t->nc * sizeof *t->counts);
    /* Derived types come back as new handles the program frees (4.1.13). */
    for (int i = 0; i < t->nd; i++) {
        bdl_dt_t *c = t->types[i];
        if (c->predefined) {
            array_of_datatypes[i] = bdl_dt_predefined_handle(c);
        } else {
            int h = bdl_dt_handle_new(c);
            if (h < 0) {
                while (i-- > 0)
                    if (!t->types[i]->predefined)
                        bdl_dt_handle_free(array_of_datatypes[i]);
                return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of datatype handles");
            }
            array_of_datatypes[i] = h;
        }
    }
    return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[])
{
    BDL_MT_GUARD;
    bdl_dt_t *t = bdl_dt_lookup(datatype);
    int rc;
    if (t && (rc = large_only("MPI_Type_get_contents", datatype, t)))
        return rc;
    return contents("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0,
                    max_datatypes, array_of_integers, array_of_addresses, NULL, array_of_datatypes);
}

int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes,
                            int array_of_integers[], MPI_Aint array_of_addresses[],
                            MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    BDL_MT_GUARD;
    return contents("MPI_Type_get_contents_c", datatype, max_integers, max_addresses,
                    max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                    array_of_large_counts, array_of_datatypes);
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_get_name", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_get_name", type_name && resultlen);
    snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", t->name);
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    BDL_MT_GUARD;
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = bdl_type_arg("MPI_Type_set_name", "", datatype, &t)))
        return rc;
    BDL_CHECK_OUT("MPI_Type_set_name", type_name);
    snprintf(t->name, sizeof t->name, "%s", type_name);
    return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
    BDL_MT_GUARD;
    BDL_CHECK_OUT("MPI_Get_address", address);
    *address = (MPI_Aint)(intptr_t)location;
    return MPI_SUCCESS;
}

int MPI_Address(void *location, MPI_Aint *address)
{
    BDL_MT_GUARD;
    return MPI_Get_address(location, address);
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    BDL_MT_GUARD;
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---------------------------------------------------------------- elements */

/* Basic elements wholly inside the first `bytes` of the packed stream of t;
 * *partial is set when the prefix ends inside a basic element. */
static uint64_t elems_in(const bdl_dt_t *t, uint64_t bytes, int *partial)
{
    if (!t->psize)
        return 0;
    uint64_t n = bytes / t->psize * t->nbasic, rem = bytes % t->psize;
    if (!rem)
        return n;
    if (t->predefined) {
        /* A pair's value is a whole basic element by itself. */
        const bd_dtype_info_t *info = bd_dtype_info(t->basic);
        if (info && info->cls == BD_DT_PAIR && rem >= info->vsize) {
            n++;
            rem -= info->vsize;
        }
        if (rem)
            *partial = 1;
        return n;
    }
    for (uint32_t i = 0; i < t->nsig && rem; i++) {
        const bdl_sig_t *s = &t->sig[i];
        uint64_t sb = s->reps * s->t->psize;
        if (rem >= sb) {
            n += s->reps * s->t->nbasic;
            rem -= sb;
            continue;
        }
        return n + elems_in(s->t, rem, partial);
    }
    return n;
}

/* Packed bytes of the first e basic elements of a stream of t. */
static uint64_t bytes_of(const bdl_dt_t *t, uint64_t e)
{
    if (!t->nbasic)
        return 0;
    uint64_t b = e / t->nbasic * t->psize, rem = e % t->nbasic;
    if (t->predefined && rem) /* the value of a pair */
        return b + bd_dtype_info(t->basic)->vsize;
    for (uint32_t i = 0; i < t->nsig && rem; i++) {
        const bdl_sig_t *s = &t->sig[i];
        uint64_t se = s->reps * s->t->nbasic;
        if (rem >= se) {
            b += s->reps * s->t->psize;
            rem -= se;
            continue;
        }
        return b + bytes_of(s->t, rem);
    }
    return b;
}

static int status_arg(const char *call, const MPI_Status *status)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid status argument");
    return MPI_SUCCESS;
}

static int get_count(const char *call, const MPI_Status *status, MPI_Datatype datatype,
                     MPI_Count *count)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = status_arg(call, status)) || (rc = bdl_type_arg(call, "", datatype, &t)))
        return rc;
    long long n = status->bd_nbytes;
    if (!t->psize)
        *count = n ? MPI_UNDEFINED : 0;
    else
        *count = (uint64_t)n % t->psize ? MPI_UNDEFINED : (MPI_Count)((uint64_t)n / t->psize);
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    BDL_MT_GUARD;
    MPI_Count n;
    int rc = get_count("MPI_Get_count", status, datatype, &n);
    if (rc)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    BDL_MT_GUARD;
    return get_count("MPI_Get_count_c", status, datatype, count);
}

static int get_elements(const char *call, const MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count *count)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = status_arg(call, status)) || (rc = bdl_type_arg(call, "", datatype, &t)))
        return rc;
    int partial = 0;
    uint64_t n = elems_in(t, (uint64_t)status->bd_nbytes, &partial);
    if (!t->psize && status->bd_nbytes)
        partial = 1;
    *count = partial ? MPI_UNDEFINED : (MPI_Count)n;
    return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    BDL_MT_GUARD;
    MPI_Count n;
    int rc = get_elements("MPI_Get_elements", status, datatype, &n);
    if (rc)
        return rc;
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    BDL_MT_GUARD;
    return get_elements("MPI_Get_elements_x", status, datatype, count);
}

static int set_elements(const char *call, MPI_Status *status, MPI_Datatype datatype,
                        MPI_Count count)
{
    bdl_dt_t *t = NULL;
    int rc;
    if ((rc = status_arg(call, status)) || (rc = bdl_type_arg(call, "", datatype, &t)))
        return rc;
    if (count < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_COUNT, call, "invalid count %lld", count);
    status->bd_nbytes = (long long)bytes_of(t, (uint64_t)count);
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    BDL_MT_GUARD;
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}

int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    BDL_MT_GUARD;
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

/* ---------------------------------------------------------------- MPI_Pack */

static int pack_args(const char *call, int count, MPI_Datatype dt, int size, const int *position,
                     MPI_Comm comm, bdl_dt_t **t)
{
    int rc;
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, call, "invalid communicator %d", comm);
    if (count < 0)
        return bdl_error(comm, MPI_ERR_COUNT, call, "invalid count %d", count);
    if (size < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid buffer size %d", size);
    if (!position || *position < 0)
        return bdl_error(comm, MPI_ERR_ARG, call, "invalid position %d", position ? *position : 0);
    if ((rc = bdl_dt_check(comm, call, "", dt, t)))
        return rc;
    return MPI_SUCCESS;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
             int *position, MPI_Comm comm)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Pack");
    bdl_dt_t *t = NULL;
    int rc = pack_args("MPI_Pack", incount, datatype, outsize, position, comm, &t);
    if (rc)
        return rc;
    uint64_t n = (uint64_t)incount * t->psize;
    if ((uint64_t)*position + n > (uint64_t)outsize)
        return bdl_error(comm, MPI_ERR_TRUNCATE, "MPI_Pack",
                         "%llu packed bytes do not fit at position %d of a %d-byte buffer",
                         (unsigned long long)n, *position, outsize);
    bdl_dt_pack(t, inbuf, (uint64_t)incount, 0, addr(outbuf, *position), n);
    *position += (int)n;
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Unpack");
    bdl_dt_t *t = NULL;
    int rc = pack_args("MPI_Unpack", outcount, datatype, insize, position, comm, &t);
    if (rc)
        return rc;
    uint64_t n = (uint64_t)outcount * t->psize;
    if ((uint64_t)*position + n > (uint64_t)insize)
        return bdl_error(comm, MPI_ERR_TRUNCATE, "MPI_Unpack",
                         "%d elements need %llu packed bytes but only %lld remain after position "
                         "%d of the %d-byte buffer",
                         outcount, (unsigned long long)n, (long long)insize - *position, *position,
                         insize);
    bdl_dt_unpack(t, outbuf, (uint64_t)outcount, 0, addr(inbuf, *position), n);
    *position += (int)n;
    return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Pack_size");
    bdl_dt_t *t = NULL;
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Pack_size", "invalid communicator %d", comm);
    if (incount < 0)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Pack_size", "invalid count %d", incount);
    int rc = bdl_dt_arg(comm, "MPI_Pack_size", "", datatype, &t);
    if (rc)
        return rc;
    BDL_CHECK_OUT("MPI_Pack_size", size);
    uint64_t n = (uint64_t)incount * t->psize;
    if (n > INT_MAX)
        return bdl_error(comm, MPI_ERR_COUNT, "MPI_Pack_size",
                         "%d elements pack into %llu bytes, more than an int can count", incount,
                         (unsigned long long)n);
    *size = (int)n;
    return MPI_SUCCESS;
}
