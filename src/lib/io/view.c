/* File views (MPI 3.1 13.3) and data representations (13.5).
 *
 * A view is a displacement, an etype and a filetype tiled from the
 * displacement on; the data a process sees is the filetype's data blocks,
 * tile after tile.  The library works in view bytes: the byte position v
 * of the data stream the view shows (an etype position times an etype's
 * size in the file), which bdl_view_file_offset maps to the file through
 * the filetype's runs (core/dtype.c's descriptor). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

void bdl_view_default(bdl_file_t *f)
{
    f->disp = 0;
    f->etype_h = f->ftype_h = MPI_BYTE;
    f->etype = f->ftype = bdl_dt_lookup(MPI_BYTE);
    f->rep = BDL_REP_NATIVE;
    f->urep = -1;
    f->esize = 1;
    f->fcontig = 1;
    f->fstart = 0;
    f->pos = 0;
}

void bdl_view_release(bdl_file_t *f)
{
    bdl_dt_alias_free(f->etype_h);
    bdl_dt_alias_free(f->ftype_h);
    f->etype_h = f->ftype_h = MPI_DATATYPE_NULL;
}

/* ---------------------------------------------------------------- data representations */

/* Representations the program registered (MPI_Register_datarep). */
typedef struct urep {
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_c, *write_c; /* MPI_Register_datarep_c's */
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
} urep_t;
static urep_t *g_reps;
static int g_nreps;

/* "native", "internal" (BDMPI's internal representation is native) and
 * "external32" are predefined. */
static int rep_of(const char *name, int *urep)
{
    *urep = -1;
    if (!strcmp(name, "native") || !strcmp(name, "internal"))
        return BDL_REP_NATIVE;
    if (!strcmp(name, "external32"))
        return BDL_REP_EXTERNAL32;
    for (int i = 0; i < g_nreps; i++)
        if (!strcmp(name, g_reps[i].name)) {
            *urep = i;
            return BDL_REP_USER;
        }
    return -1;
}

/* Both registrations: the functions of the int form (read_fn, write_fn)
 * or of the large-count one (read_c, write_c). */
static int register_rep(const char *call, const char *datarep,
                        MPI_Datarep_conversion_function *read_fn,
                        MPI_Datarep_conversion_function *write_fn,
                        MPI_Datarep_conversion_function_c *read_c,
                        MPI_Datarep_conversion_function_c *write_c,
                        MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    BDL_CHECK_INIT(call);
    int u;
    if (!datarep || !*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_ARG, call,
                              "datarep must be a name of 1 to %d characters",
                              MPI_MAX_DATAREP_STRING - 1);
    if (!extent_fn)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_ARG, call, "dtype_file_extent_fn is NULL");
    if ((!read_fn && !read_c) != (!write_fn && !write_c))
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_ARG, call,
                              "read and write conversion functions must both be given or "
                              "both be MPI_CONVERSION_FN_NULL");
    if (rep_of(datarep, &u) >= 0)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, call,
                              "data representation \"%s\" is already defined", datarep);
    urep_t *n = realloc(g_reps, (size_t)(g_nreps + 1) * sizeof *n);
    if (!n)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_NO_MEM, call, "out of memory");
    g_reps = n;
    urep_t *r = &g_reps[g_nreps++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", datarep);
    r->read_fn = read_fn;
    r->write_fn = write_fn;
    r->read_c = read_c;
    r->write_c = write_c;
    r->extent_fn = extent_fn;
    r->extra = extra_state;
    return MPI_SUCCESS;
}

int MPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_fn,
                         MPI_Datarep_conversion_function *write_fn,
                         MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    BDL_MT_GUARD;
    return register_rep("MPI_Register_datarep", datarep, read_fn, write_fn, NULL, NULL, extent_fn,
                        extra_state);
}

int MPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_fn,
                           MPI_Datarep_conversion_function_c *write_fn,
                           MPI_Datarep_extent_function *extent_fn, void *extra_state)
{
    BDL_MT_GUARD;
    return register_rep("MPI_Register_datarep_c", datarep, NULL, NULL, read_fn, write_fn, extent_fn,
                        extra_state);
}

/* Bytes of one element of t in representation rep (user: u); 0 when a
 * user extent function fails. */
static uint64_t rep_size(int rep, int u, const bdl_dt_t *t)
{
    if (rep == BDL_REP_NATIVE)
        return t->size;
    if (rep == BDL_REP_EXTERNAL32)
        return bdl_dt_ext_size(t);
    if (t->basic > 0) {
        MPI_Aint e = 0;
        if (g_reps[u].extent_fn(t->basic, &e, g_reps[u].extra) != MPI_SUCCESS || e < 0)
            return 0;
        return t->nelem * (uint64_t)e;
    }
    uint64_t s = 0;
    for (uint32_t i = 0; i < t->nsig; i++)
        s += t->sig[i].reps * rep_size(rep, u, t->sig[i].t);
    return s;
}

uint64_t bdl_view_rep_size(const bdl_file_t *f, const bdl_dt_t *t)
{
    return rep_size(f->rep, f->urep, t);
}

/* ---------------------------------------------------------------- views */

/* MPI 3.1 13.3: the displacements of a filetype's type map are
 * non-negative and monotonically non-decreasing; 13.1.1: a file opened for
 * writing may have no overlapping regions in its etype or filetype.  ROMIO
 * applies the first to the etype too, with MPI_ERR_IO (MPICH's test
 * io/tst_fileview); so does this.  Checked on the blocks of the runs
 * (type-map order), O(runs): none may start before the origin or before
 * the start of the block before it, nor, when writable, before its end.
 * NULL when it holds. */
static const char *layout_bad(const bdl_dt_t *t, int writable)
{
    int64_t start = 0, end = 0;
    for (uint32_t r = 0; r < t->nruns; r++) {
        const bdl_run_t *u = &t->runs[r];
        if (!u->len || !u->cnt)
            continue;
        int64_t last = u->off + (int64_t)(u->cnt - 1) * u->stride;
        if (u->off < 0 || last < 0)
            return "a negative displacement";
        if (u->off < start || (u->cnt > 1 && u->stride < 0))
            return "decreasing displacements";
        if (writable && (u->off < end || (u->cnt > 1 && u->stride < (int64_t)u->len)))
            return "overlapping blocks (the file is open for writing)";
        start = last;
        end = last + (int64_t)u->len;
    }
    return NULL;
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_set_view";
    BDL_CHECK_INIT(call);
    bdl_file_t *f = bdl_file_get(fh);
    if (!f)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);
    int err = 0, rep = -1, u = -1;
    int wr = (f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) != 0;
    char why[256] = "";
    bdl_dt_t *e = bdl_dt_lookup(etype), *t = bdl_dt_lookup(filetype);
    if (!datarep || (rep = rep_of(datarep, &u)) < 0) {
        err = MPI_ERR_UNSUPPORTED_DATAREP;
        snprintf(why, sizeof why, "unknown data representation \"%s\"",
                 datarep ? datarep : "(null)");
    } else if (!e || !t) {
        err = MPI_ERR_TYPE;
        snprintf(why, sizeof why, "%s %d %s", e ? "filetype" : "etype", e ? filetype : etype,
                 bdl_dt_bad_why(e ? filetype : etype));
    } else if (!e->committed || !t->committed) {
        err = MPI_ERR_TYPE;
        snprintf(why, sizeof why, "%s %d is not committed", e->committed ? "filetype" : "etype",
                 e->committed ? filetype : etype);
    } else if (!e->size || t->size % e->size) {
        err = MPI_ERR_ARG; /* MPICH's class for it */
        snprintf(why, sizeof why,
                 "the filetype (%llu bytes) is not made of whole etypes (%llu bytes)",
                 (unsigned long long)t->size, (unsigned long long)e->size);
    } else if (t->size && t->extent <= 0) {
        err = MPI_ERR_TYPE;
        snprintf(why, sizeof why, "the filetype has no positive extent");
    } else if (layout_bad(e, wr) || layout_bad(t, wr)) {
        err = MPI_ERR_IO;
        snprintf(why, sizeof why, "the %s's type map has %s (MPI 3.1 13.1.1, 13.3)",
                 layout_bad(e, wr) ? "etype" : "filetype", layout_bad(e, wr) ?: layout_bad(t, wr));
    } else if (disp == MPI_DISPLACEMENT_CURRENT ? !(f->amode & MPI_MODE_SEQUENTIAL) : disp < 0) {
        err = MPI_ERR_ARG;
        snprintf(why, sizeof why, "%s",
                 disp == MPI_DISPLACEMENT_CURRENT
                     ? "MPI_DISPLACEMENT_CURRENT needs a file opened with MPI_MODE_SEQUENTIAL"
                     : "disp is negative");
    } else if (!bdl_info_valid(info)) {
        err = MPI_ERR_INFO;
        snprintf(why, sizeof why, "invalid info %d", info);
    } else if (rep != BDL_REP_NATIVE &&
               (rep_size(rep, u, e) != e->size || rep_size(rep, u, t) != t->size)) {
        /* The file layout of the view is the filetype's native layout;
         * representations that change the size of its elements would
         * change that layout too. */
        err = MPI_ERR_UNSUPPORTED_DATAREP;
        snprintf(why, sizeof why,
                 "in \"%s\" the etype or filetype takes another size than in memory (BDMPI "
                 "supports such views only where every etype keeps its size)",
                 datarep);
    }
    /* MPI_DISPLACEMENT_CURRENT: where the shared pointer is, read by
     * everyone before the agreement, after which rank 0 resets it */
    if (!err && disp == MPI_DISPLACEMENT_CURRENT) {
        MPI_Offset sp = bdl_shared_fetch_add(f, 0);
        if (sp < 0) {
            err = bdl_io_errno_class(errno);
            snprintf(why, sizeof why, "shared file pointer: %s", strerror(errno));
        } else {
            disp = bdl_view_file_offset(f, (uint64_t)sp * f->esize);
        }
    }
    /* etype sizes and the representation must agree everywhere */
    long long same = err ? 0 : (long long)e->size * 64 + rep * 16 + u + 1;
    int all = bdl_io_agree(f->comm, err, same);
    if (all)
        return bdl_file_error(fh, err ? err : all, call, "%s",
                              err ? why
                                  : "the etype or data representation differs among the "
                                    "processes, or another process's arguments are wrong");
    MPI_Datatype eh = bdl_dt_alias(etype), th = bdl_dt_alias(filetype);
    if (eh == MPI_DATATYPE_NULL || th == MPI_DATATYPE_NULL) {
        bdl_dt_alias_free(eh);
        bdl_dt_alias_free(th);
        return bdl_file_error(fh, MPI_ERR_NO_MEM, call, "out of datatype handles");
    }
    bdl_view_release(f);
    f->disp = disp;
    f->etype_h = eh;
    f->ftype_h = th;
    f->etype = e;
    f->ftype = t;
    f->rep = rep;
    f->urep = u;
    f->esize = e->size;
    f->fcontig = t->contig && t->extent == (int64_t)t->size;
    f->fstart = t->nruns ? t->runs[0].off : 0;
    if (!t->size) /* a filetype with no data shows nothing; keep the walk away from it */
        f->fcontig = 1;
    f->pos = 0;
    if (f->rank == 0)
        bdl_shared_set(f, 0);
    if (info != MPI_INFO_NULL) {
        MPI_Info n;
        if (MPI_Info_dup(info, &n) == MPI_SUCCESS) {
            if (f->info != MPI_INFO_NULL)
                MPI_Info_free(&f->info);
            f->info = n;
        }
    }
    if (f->size > 1)
        MPI_Barrier(f->comm); /* the shared pointer is reset before anyone uses it */
    return MPI_SUCCESS;
}

int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                      char *datarep)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_view";
    BDL_CHECK_INIT(call);
    bdl_file_t *f = bdl_file_get(fh);
    if (!f)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);
    if (!disp || !etype || !filetype || !datarep)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "NULL output argument");
    /* derived types come back as new handles the program frees (13.3) */
    MPI_Datatype e = f->etype_h, t = f->ftype_h;
    if (!f->etype->predefined && MPI_Type_dup(f->etype_h, &e))
        return bdl_file_error(fh, MPI_ERR_NO_MEM, call, "out of datatype handles");
    if (!f->ftype->predefined && MPI_Type_dup(f->ftype_h, &t)) {
        if (e != f->etype_h)
            MPI_Type_free(&e);
        return bdl_file_error(fh, MPI_ERR_NO_MEM, call, "out of datatype handles");
    }
    *disp = f->disp;
    *etype = e;
    *filetype = t;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s",
             f->rep == BDL_REP_NATIVE       ? "native"
             : f->rep == BDL_REP_EXTERNAL32 ? "external32"
                                            : g_reps[f->urep].name);
    return MPI_SUCCESS;
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    BDL_MT_GUARD;
    const char *call = "MPI_File_get_type_extent";
    BDL_CHECK_INIT(call);
    bdl_file_t *f = bdl_file_get(fh);
    if (!f)
        return bdl_file_error(MPI_FILE_NULL, MPI_ERR_FILE, call, "invalid file handle %d", fh);
    bdl_dt_t *t = bdl_dt_lookup(datatype);
    if (!t)
        return bdl_file_error(fh, MPI_ERR_TYPE, call, "datatype %d %s", datatype,
                              bdl_dt_bad_why(datatype));
    if (!extent)
        return bdl_file_error(fh, MPI_ERR_ARG, call, "extent is NULL");
    /* A predefined type's extent is its size in the representation; a
     * derived one keeps its gaps: its extent grows or shrinks by what its
     * data does. */
    uint64_t rs = bdl_view_rep_size(f, t);
    *extent = t->predefined ? (MPI_Aint)rs : (MPI_Aint)(t->extent + (int64_t)rs - (int64_t)t->size);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- conversion */

/* count elements of t at buf (handle dt) to (write) or from view bytes
 * from v, converted to or from f's representation; element by element in
 * chunks that fit the bounce buffers.  Returns the memory bytes moved (a
 * read stops at the end of the file, at a whole element) and the file
 * bytes in *fmoved, or -errno. */
int64_t bdl_view_convert_rw(bdl_file_t *f, int write, uint64_t v, void *buf, uint64_t count,
                            const bdl_dt_t *t, MPI_Datatype dt, uint64_t *fmoved)
{
    uint64_t fel = bdl_view_rep_size(f, t), nel = t->size;
    *fmoved = 0;
    if (!fel || !nel)
        return 0;
    const urep_t *ur = f->rep == BDL_REP_USER ? &g_reps[f->urep] : NULL;
    if (ur && !ur->write_fn && !ur->write_c && fel != nel)
        return -EILSEQ; /* no conversion functions, yet the sizes differ */
    uint64_t per = fel > nel ? fel : nel;
    uint64_t k = BDL_IO_BOUNCE / per ? BDL_IO_BOUNCE / per : 1;
    if (k > count)
        k = count;
    char *nb = bdl_io_bounce(k * nel), *fb = bdl_io_bounce(k * fel);
    int64_t moved = 0;
    if (!nb || !fb)
        moved = -ENOMEM;
    for (uint64_t i = 0; moved >= 0 && i < count; i += k) {
        uint64_t m = count - i < k ? count - i : k;
        if (write) {
            if (ur && (ur->write_fn || ur->write_c)) {
                int rc = ur->write_c
                             ? ur->write_c(buf, dt, (MPI_Count)m, fb, (MPI_Offset)i, ur->extra)
                             : ur->write_fn(buf, dt, (int)m, fb, (MPI_Offset)i, ur->extra);
                if (rc != MPI_SUCCESS) {
                    moved = -EILSEQ;
                    break;
                }
            } else {
                bdl_dt_pack(t, buf, count, i * nel, ur ? fb : nb, m * nel);
                if (!ur)
                    bdl_dt_ext_convert(t, m, nb, fb, 1);
            }
        }
        int64_t r = bdl_io_view_rw(f, write, v + i * fel, fb, m * fel);
        if (r < 0) {
            moved = r;
            break;
        }
        uint64_t whole = (uint64_t)r / fel;
        if (!write && whole) {
            if (ur && (ur->read_fn || ur->read_c)) {
                int rc = ur->read_c
                             ? ur->read_c(buf, dt, (MPI_Count)whole, fb, (MPI_Offset)i, ur->extra)
                             : ur->read_fn(buf, dt, (int)whole, fb, (MPI_Offset)i, ur->extra);
                if (rc != MPI_SUCCESS) {
                    moved = -EILSEQ;
                    break;
                }
            } else if (ur) {
                bdl_dt_unpack(t, buf, count, i * nel, fb, whole * nel);
            } else {
                bdl_dt_ext_convert(t, whole, nb, fb, 0);
                bdl_dt_unpack(t, buf, count, i * nel, nb, whole * nel);
            }
        }
        moved += (int64_t)(whole * nel);
        *fmoved += whole * fel;
        if (whole < m)
            break;
    }
    bdl_io_unbounce(nb, k * nel);
    bdl_io_unbounce(fb, k * fel);
    return moved;
}
