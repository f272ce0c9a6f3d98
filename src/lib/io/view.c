/* File views (MPI 3.1 13.3) and data representations (13.5).
 *
 * A view is a displacement, an etype and a filetype tiled from the
 * displacement on; the data a process sees is the filetype's data blocks,
 * tile after tile.  The library works in view bytes: the byte position v
 * of the data stream the view shows (an etype position times an etype's
 * size in the file), which bdl_view_file_offset maps to the file through
 * the filetype's runs (core/dtype.c's descriptor). */
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
