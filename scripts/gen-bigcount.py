#!/usr/bin/env python3
"""Generates the MPI 4.0 large-count ("_c") entry points of libbdmpi from the
int-count prototypes in include/mpi.h:

    scripts/gen-bigcount.py --header              # declarations for mpi.h's MPI 4.0 block
    scripts/gen-bigcount.py --common              # src/lib/mpi/bigcount.c
    scripts/gen-bigcount.py --source p2p|coll|nbc|more  # src/lib/mpi/bigcount_GROUP.c
    scripts/gen-bigcount.py --hooks               # bdl_bcw_* declarations for mpi_int.h

then clang-format -i the files written.

Each MPI_X_c is a thin layer over MPI_X: its MPI_Count counts (and MPI_Aint
displacement arrays) are converted to the int the implementation takes.  A
count of elements of a datatype (the parameter after it) past INT_MAX
becomes one element of a larger type (bdl_bc_fit_dt); any other value that
does not fit is an MPI_ERR_COUNT error naming the call and the argument,
never a truncated count (MPI 4.0 5.2.3: "no silent truncation").  Outputs (sizes, counts, positions) are widened back.  The
queries whose int form could overflow use the _x forms, which are exact.
"""
import re
import sys
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The functions with a _c form in MPI 4.0 that this generator handles (the
# int form must exist in mpi.h).
GROUPS = {"p2p": """
Send Bsend Ssend Rsend Recv Isend Ibsend Issend Irsend Irecv
Send_init Bsend_init Ssend_init Rsend_init Recv_init
Sendrecv Sendrecv_replace Isendrecv Isendrecv_replace Mrecv Imrecv
Buffer_attach Buffer_detach
""", "coll": """
Bcast Reduce Allreduce Scan Exscan Reduce_scatter_block Reduce_local
Gather Scatter Allgather Alltoall
Gatherv Scatterv Allgatherv Alltoallv Alltoallw Reduce_scatter
""", "nbc": """
Ibcast Ireduce Iallreduce Iscan Iexscan Ireduce_scatter_block
Igather Iscatter Iallgather Ialltoall
Igatherv Iscatterv Iallgatherv Ialltoallv Ialltoallw Ireduce_scatter
Bcast_init Reduce_init Allreduce_init Scan_init Exscan_init Reduce_scatter_block_init
Gather_init Scatter_init Allgather_init Alltoall_init
Neighbor_allgather Neighbor_alltoall Ineighbor_allgather Ineighbor_alltoall
Neighbor_allgatherv Neighbor_alltoallv Neighbor_alltoallw
Ineighbor_allgatherv Ineighbor_alltoallv Ineighbor_alltoallw
Neighbor_allgather_init Neighbor_alltoall_init
""", "types": """
Type_vector Type_create_hvector Type_indexed Type_create_hindexed
Type_create_indexed_block Type_create_hindexed_block Type_create_struct
Type_create_subarray Type_create_darray Type_create_resized
""", "more": """
Pack Unpack Pack_size Pack_external Unpack_external Pack_external_size
Put Get Accumulate Get_accumulate Rput Rget Raccumulate Rget_accumulate
Win_create Win_allocate
File_read_at File_read_at_all File_write_at File_write_at_all
File_iread_at File_iread_at_all File_iwrite_at File_iwrite_at_all
File_read File_read_all File_write File_write_all
File_iread File_iread_all File_iwrite File_iwrite_all
File_read_shared File_write_shared File_iread_shared File_iwrite_shared
File_read_ordered File_write_ordered
File_read_at_all_begin File_write_at_all_begin File_read_all_begin File_write_all_begin
File_read_ordered_begin File_write_ordered_begin
"""}
FUNCS = [f for g in GROUPS.values() for f in g.split()]
# The type constructors' _c forms are written by hand (objects/type_create.c:
# 64-bit counts, and their contents are large counts): declarations only.
HEADER_ONLY = {"types"}

# The v and w collectives whose array entries may not fit an int: each _c
# form first asks bdl_bcw_X (mpi/bigcount_arr.c, same parameters), which
# runs the call with a type per peer when some entry is past INT_MAX and
# otherwise answers BDL_BC_THIN (the thin layer below then runs).
HOOKED = set("""
Gatherv Scatterv Allgatherv Alltoallv Alltoallw Reduce_scatter
Igatherv Iscatterv Iallgatherv Ialltoallv Ialltoallw Ireduce_scatter
Neighbor_allgatherv Neighbor_alltoallv Neighbor_alltoallw
Ineighbor_allgatherv Ineighbor_alltoallv Ineighbor_alltoallw
""".split())

# Scalar int counts that become MPI_Count.
COUNTS = {"count", "sendcount", "recvcount", "incount", "outsize", "origin_count",
          "target_count", "result_count", "blocklength", "stride", "size", "insize",
          "outcount"}
# int arrays of counts that become MPI_Count arrays, and their length.
V_ARRAYS = {"sendcounts", "recvcounts"}
D_ARRAYS = {"displs", "sdispls", "rdispls"}  # int -> MPI_Aint in v-collectives
TYPE_ARRAYS = {"array_of_blocklengths", "array_of_displacements", "array_of_sizes",
               "array_of_subsizes", "array_of_starts", "array_of_gsizes"}


def prototypes():
    text = open(os.path.join(ROOT, "include", "mpi.h")).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    out = {}
    for m in re.finditer(r"\bint\s+MPI_(\w+)\s*\(([^;{]*?)\)\s*;", text):
        out[m.group(1)] = [p.strip() for p in " ".join(m.group(2).split()).split(",")]
    return out


def split_param(p):
    """(type text, name, is_array) of one parameter."""
    arr = p.endswith("[]")
    if arr:
        p = p[:-2].strip()
    m = re.match(r"(.*?)(\w+)$", p)
    return m.group(1).strip(), m.group(2), arr


def array_len(fn, name, names):
    if "eighbor_" in fn and (name in V_ARRAYS or name in D_ARRAYS):
        # One entry per neighbour: receives from the in-neighbours, sends
        # to the out-neighbours.
        return "bdl_bc_degree(comm, %d)" % (name.startswith("send") or name == "sdispls")
    if name in V_ARRAYS or name in D_ARRAYS:
        if fn.endswith("Reduce_scatter") or fn == "Ireduce_scatter":
            return "bdl_bc_size(comm, 0)"
        return "bdl_bc_size(comm, 1)"
    if "ndims" in names:
        return "ndims"
    return "count"


def paired_dt(params, p):
    """The name of the MPI_Datatype parameter right after p, or None."""
    i = params.index(p)
    if i + 1 < len(params):
        ty, name, arr = split_param(params[i + 1])
        if ty == "MPI_Datatype" and not arr:
            return name
    return None


def convert(fn, params):
    """The _c parameters and the C code around the call of the int form."""
    names = [split_param(p)[1] for p in params]
    cparams, pre, args, post, frees = [], [], [], [], []
    comm = "comm" if "comm" in names else "MPI_COMM_WORLD"
    for p in params:
        ty, name, arr = split_param(p)
        if ty == "int" and not arr and name in ("outsize", "insize"):
            # A buffer's capacity: more than an int can say is as good as
            # INT_MAX to the int form (the data itself is checked there).
            cparams.append(f"MPI_Count {name}")
            args.append(f"({name} > INT_MAX ? INT_MAX : (int){name})")
        elif (ty == "int" and not arr and name in COUNTS and not fn.startswith("Type_") and
              paired_dt(params, p)):
            # A count of elements of the next parameter's datatype: past
            # INT_MAX it becomes one element of a larger type.
            dt = paired_dt(params, p)
            cparams.append(f"MPI_Count {name}")
            pre.append(f"MPI_Datatype w_{dt} = MPI_DATATYPE_NULL;")
            pre.append(f"int i_{name};")
            pre.append(f"if ((rc = bdl_bc_fit_dt(call, {comm}, \"{name}\", {name}, &i_{name}, &{dt}, &w_{dt})))")
            pre.append("    goto out;")
            args.append(f"i_{name}")
            frees.append(f"bdl_bc_dt_free(&w_{dt});")
        elif ty == "int" and not arr and name in COUNTS and fn != "Type_create_darray":
            cparams.append(f"MPI_Count {name}")
            pre.append(f"int i_{name};")
            pre.append(f"if ((rc = bdl_bc_fit(call, {comm}, \"{name}\", {name}, &i_{name})))")
            pre.append("    return rc;")
            args.append(f"i_{name}")
        elif ty == "int" and not arr and name == "disp_unit":
            cparams.append(f"MPI_Aint {name}")
            pre.append(f"int i_{name};")
            pre.append(f"if ((rc = bdl_bc_fit(call, {comm}, \"{name}\", {name}, &i_{name})))")
            pre.append("    return rc;")
            args.append(f"i_{name}")
        elif ty == "MPI_Aint" and not arr and name in ("stride", "lb", "extent", "outsize", "insize"):
            cparams.append(f"MPI_Count {name}")
            args.append(f"(MPI_Aint){name}")
        elif ty in ("int *", "MPI_Aint *") and name in ("size", "position", "count"):
            inout = name == "position"
            cparams.append(f"MPI_Count *{name}")
            base = "int" if ty == "int *" else "MPI_Aint"
            if inout:
                if base == "int":
                    pre.append(f"int i_{name};")
                    pre.append(f"if ((rc = bdl_bc_fit(call, {comm}, \"{name}\", *{name}, &i_{name})))")
                    pre.append("    return rc;")
                else:
                    pre.append(f"MPI_Aint i_{name} = (MPI_Aint)*{name};")
            else:
                pre.append(f"{base} i_{name} = 0;")
            args.append(f"&i_{name}")
            post.append(f"if (rc == MPI_SUCCESS)\n        *{name} = (MPI_Count)i_{name};")
        elif arr and ty in ("const int", "int") and (name in V_ARRAYS or name in TYPE_ARRAYS):
            n = array_len(fn, name, names)
            cparams.append(f"const MPI_Count {name}[]")
            pre.append(f"int *i_{name} = NULL;")
            pre.append(f"if ((rc = bdl_bc_ints(call, {comm}, \"{name}\", {name}, {n}, &i_{name})))")
            pre.append("    goto out;")
            args.append(f"i_{name}")
            frees.append(f"free(i_{name});")
        elif arr and ty in ("const int", "int") and name in D_ARRAYS:
            n = array_len(fn, name, names)
            cparams.append(f"const MPI_Aint {name}[]")
            pre.append(f"int *i_{name} = NULL;")
            pre.append(f"if ((rc = bdl_bc_aints(call, {comm}, \"{name}\", {name}, {n}, &i_{name})))")
            pre.append("    goto out;")
            args.append(f"i_{name}")
            frees.append(f"free(i_{name});")
        elif arr and ty == "const MPI_Aint" and name == "array_of_displacements":
            n = array_len(fn, name, names)
            cparams.append(f"const MPI_Count {name}[]")
            pre.append(f"MPI_Aint *i_{name} = NULL;")
            pre.append(f"if ((rc = bdl_bc_wide(call, {comm}, {name}, {n}, &i_{name})))")
            pre.append("    goto out;")
            args.append(f"i_{name}")
            frees.append(f"free(i_{name});")
        else:
            cparams.append(p)
            args.append(name)
    return cparams, pre, args, post, frees


PREAMBLE = r"""/* The MPI 4.0 large-count entry points ("_c"): the conversions they share
 * and the queries; the rest are GENERATED by scripts/gen-bigcount.py into
 * bigcount_p2p.c, bigcount_coll.c, bigcount_nbc.c and bigcount_more.c.
 *
 * Each MPI_X_c is a thin layer over MPI_X.  BDMPI's internals take int
 * counts where MPI 3.1 has them (their byte sizes are 64-bit).  A count of
 * elements of a datatype past INT_MAX becomes count 1 of a larger type
 * (bdl_bc_fit_dt: what travels is the same); any other count, array entry
 * or displacement that does not fit an int is an MPI_ERR_COUNT error with
 * a message naming the call and the argument, never a silently truncated
 * value; outputs are widened back.  The queries go to the exact _x forms
 * (and MPI_Get_count_c to objects/type_query.c). */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "dt.h"
#include "mpi_int.h"
#include "objects.h"

/* v fits an int: *out = v; otherwise the error, reported on comm. */
int bdl_bc_fit(const char *call, MPI_Comm comm, const char *what, MPI_Count v, int *out)
{
    if (v > INT_MAX || v < INT_MIN)
        return bdl_error(comm, MPI_ERR_COUNT, call,
                         "%s %lld does not fit the int BDMPI's implementation of this call takes",
                         what, (long long)v);
    *out = (int)v;
    return MPI_SUCCESS;
}

/* A count paired with a datatype (*dt): one that fits an int is *out;
 * a larger one becomes one element of a new committed type of v elements
 * of *dt (MPI_Type_contiguous_c, the same type signature), which replaces
 * *dt for the int form and is kept in *big for bdl_bc_dt_free (a pending
 * operation keeps what it needs of it: receives, collectives and one-sided
 * operations hold the descriptor, sends of it copy or read contiguous
 * memory).  Negative counts go to the int form, which reports them. */
int bdl_bc_fit_dt(const char *call, MPI_Comm comm, const char *what, MPI_Count v, int *out,
                  MPI_Datatype *dt, MPI_Datatype *big)
{
    if (v <= INT_MAX)
        return bdl_bc_fit(call, comm, what, v, out);
    if (!bdl_dt_lookup(*dt))
        return bdl_error(comm, MPI_ERR_TYPE, call, "invalid datatype %d for %s %lld", *dt, what,
                         (long long)v);
    int rc = MPI_Type_contiguous_c(v, *dt, big);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(big);
    if (rc)
        return bdl_error(comm, rc, call, "cannot make the type of %s %lld", what, (long long)v);
    bdl_dt_t *b = bdl_dt_lookup(*big), *u = bdl_dt_lookup(*dt);
    b->bc_reps = (uint64_t)v; /* a user operation sees *dt and v (core/op.c) */
    b->bc_user = *dt;
    b->bc_ext = u->extent;
    *dt = *big;
    *out = 1;
    return MPI_SUCCESS;
}

void bdl_bc_dt_free(MPI_Datatype *big)
{
    if (*big != MPI_DATATYPE_NULL)
        MPI_Type_free(big);
}

/* The number of entries of a counts or displacements array on comm: its
 * size (peers: the remote group's of an intercommunicator); 0 when comm is
 * not valid (the int form reports that). */
MPI_Count bdl_bc_size(MPI_Comm comm, int peers)
{
    int n = 0, inter = 0;
    const bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return 0;
    inter = c->inter;
    n = peers && inter ? c->rsize : c->size;
    return n;
}

/* The number of entries of a neighbourhood collective's counts array on
 * comm: its in-degree (out: its out-degree); 0 when comm has no topology
 * (the int form reports that). */
MPI_Count bdl_bc_degree(MPI_Comm comm, int out)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    bdl_nbrs_t nb;
    if (!c || !c->topo || bdl_topo_neighbors(c, &nb) < 0)
        return 0;
    MPI_Count n = out ? nb.outdeg : nb.indeg;
    bdl_nbrs_free(&nb);
    return n;
}

/* n MPI_Count (a) or MPI_Aint (b) values as ints in a new array (*out NULL
 * when the array is NULL: not significant at this rank). */
static int bdl_bc_conv(const char *call, MPI_Comm comm, const char *what, const MPI_Count *a,
                       const MPI_Aint *b, MPI_Count n, int **out)
{
    *out = NULL;
    if ((!a && !b) || n <= 0)
        return MPI_SUCCESS;
    int *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    for (MPI_Count i = 0; i < n; i++) {
        long long x = a ? (long long)a[i] : (long long)b[i];
        if (x > INT_MAX || x < INT_MIN) {
            free(v);
            return bdl_error(comm, MPI_ERR_COUNT, call,
                             "%s[%lld] = %lld does not fit the int BDMPI's implementation of this "
                             "call takes",
                             what, (long long)i, x);
        }
        v[i] = (int)x;
    }
    *out = v;
    return MPI_SUCCESS;
}

int bdl_bc_ints(const char *call, MPI_Comm comm, const char *what, const MPI_Count *a,
                       MPI_Count n, int **out)
{
    return bdl_bc_conv(call, comm, what, a, NULL, n, out);
}

int bdl_bc_aints(const char *call, MPI_Comm comm, const char *what, const MPI_Aint *a,
                        MPI_Count n, int **out)
{
    return bdl_bc_conv(call, comm, what, NULL, a, n, out);
}

/* MPI_Count displacements as MPI_Aint (the same width here). */
int bdl_bc_wide(const char *call, MPI_Comm comm, const MPI_Count *a, MPI_Count n,
                       MPI_Aint **out)
{
    *out = NULL;
    if (!a || n <= 0)
        return MPI_SUCCESS;
    MPI_Aint *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return bdl_error(comm, MPI_ERR_NO_MEM, call, "out of memory");
    for (MPI_Count i = 0; i < n; i++)
        v[i] = (MPI_Aint)a[i];
    *out = v;
    return MPI_SUCCESS;
}

int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return MPI_Type_size_x(datatype, size);
}

int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return MPI_Type_get_extent_x(datatype, lb, extent);
}

int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return MPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

int MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return MPI_Get_elements_x(status, datatype, count);
}

int MPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return MPI_Status_set_elements_x(status, datatype, count);
}
"""

GEN_HEAD = """/* MPI 4.0 large-count entry points ("_c"), {group} part.  GENERATED from
 * include/mpi.h by `scripts/gen-bigcount.py --source {group} >
 * src/lib/mpi/bigcount_{group}.c`: do not edit.  The conversions (bdl_bc_*)
 * are in bigcount.c, which says why. */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "mpi_int.h"
"""

HAND_DECLS = """int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size);
int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent);
int MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
int MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
int MPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count);"""


def decl(fn, cparams):
    return f"int MPI_{fn}_c({', '.join(cparams)});"


def main():
    protos = prototypes()
    mode = sys.argv[1] if len(sys.argv) > 1 else "--source"
    if mode == "--common":
        print(PREAMBLE)
        return
    if mode == "--hooks":  # the declarations of bdl_bcw_X for mpi_int.h
        for fn in FUNCS:
            if fn in HOOKED:
                print(f"int bdl_bcw_{fn}({', '.join(convert(fn, protos[fn])[0])});")
        return
    group = sys.argv[2] if len(sys.argv) > 2 else None
    if group in HEADER_ONLY:
        sys.exit(f"gen-bigcount: the {group} group is written by hand")
    head = GEN_HEAD.format(group=group)
    out = [] if mode == "--header" else [head]
    for fn in (FUNCS if mode == "--header" else GROUPS[group].split()):
        if fn not in protos:
            sys.exit(f"gen-bigcount: MPI_{fn} is not in mpi.h")
        cparams, pre, args, post, frees = convert(fn, protos[fn])
        if mode == "--header":
            out.append(decl(fn, cparams))
            continue
        body = [f"int MPI_{fn}_c({', '.join(cparams)})", "{", "    BDL_MT_GUARD;"]
        if any("call" in l for l in pre):
            body.append(f"    const char *call = \"MPI_{fn}_c\";")
        body.append("    int rc = MPI_SUCCESS;")
        if fn in HOOKED:
            names = [split_param(p)[1] for p in cparams]
            body.append(f"    if ((rc = bdl_bcw_{fn}({', '.join(names)})) != BDL_BC_THIN)")
            body.append("        return rc;")
        # Declarations of every array first, so the error path frees them all.
        arrays = [l for l in pre if "= NULL;" in l or "= MPI_DATATYPE_NULL;" in l]
        rest = [l for l in pre if l not in arrays]
        body += ["    " + l for l in arrays]
        body += ["    " + l for l in rest]
        body.append(f"    rc = MPI_{fn}({', '.join(args)});")
        body += ["    " + l for l in post]
        if frees:
            body.append("out:")
            body += ["    " + l for l in frees]
        body += ["    return rc;", "}", ""]
        out += body
    if mode == "--header":
        out = HAND_DECLS.split("\n") + out
    print("\n".join(out))


if __name__ == "__main__":
    main()
