"""The module mpi_f08, from the same description as mpif.h and mpi (see
gen_fortran.py, which calls write()).

Handles are BIND(C) derived types holding the C handle (MPI_VAL), with ==
and /=; MPI_Status is a BIND(C) type of the C status's size whose first
components are MPI_SOURCE, MPI_TAG and MPI_ERROR.  Every routine is a
module procedure with an OPTIONAL ierror that calls the same C function as
the mpi module's routine (mpi_send_ for MPI_Send) through a BIND(C)
interface whose arguments are all TYPE(*): a handle type, a LOGICAL or an
INTEGER is passed by address exactly as the mpi module passes an INTEGER,
so one C side serves both modules.  Strings pass their length explicitly
where gfortran would pass it hidden.  Callbacks have the standard's
abstract interfaces and are passed as C function pointers (C_FUNLOC).

Choice buffers: where MPI is done with the buffer when the routine returns
they are TYPE(*), DIMENSION(*) with NO_ARG_CHECK, so that the compiler
passes a non-contiguous section as a contiguous copy; where MPI uses the
buffer later (nonblocking, persistent, one-sided...: gen_fortran.py's
buffer_mode) they are TYPE(*), DIMENSION(..), ASYNCHRONOUS, with no copy,
and a C function of their own (bdmpi_f08_<name>) refuses a non-contiguous
section.  So MPI_SUBARRAYS_SUPPORTED is .FALSE. and
MPI_ASYNC_PROTECTS_NONBLOCKING is .TRUE..
"""
import re

import specials

# The abstract interfaces of mpi_f08's callbacks (MPI 4.0 A.4): not BIND(C),
# as the standard writes them, so that a program's ordinary procedures
# match them.  gfortran passes each of these arguments as C does (by
# address, TYPE(C_PTR), VALUE by value, no hidden arguments), so the C side
# calls them through the addresses C_FUNLOC gives.
def _cb(name, args, decls):
    return (["SUBROUTINE %s(%s)" % (name, ", ".join(args))] + ["  " + d for d in decls]
            + ["END SUBROUTINE %s" % name])


def _copy_fn(obj, t):
    return _cb("MPI_%s_copy_attr_function" % obj,
               ["old%s" % obj.lower(), "%s_keyval" % obj.lower(), "extra_state", "attribute_val_in",
                "attribute_val_out", "flag", "ierror"],
               ["IMPORT :: MPI_%s, MPI_ADDRESS_KIND" % t,
                "TYPE(MPI_%s) :: old%s" % (t, obj.lower()),
                "INTEGER :: %s_keyval, ierror" % obj.lower(),
                "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
                "LOGICAL :: flag"])


def _delete_fn(obj, t, argname):
    return _cb("MPI_%s_delete_attr_function" % obj,
               [argname, "%s_keyval" % obj.lower(), "attribute_val", "extra_state", "ierror"],
               ["IMPORT :: MPI_%s, MPI_ADDRESS_KIND" % t, "TYPE(MPI_%s) :: %s" % (t, argname),
                "INTEGER :: %s_keyval, ierror" % obj.lower(),
                "INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val, extra_state"])


def _errh_fn(obj, argname):
    return _cb("MPI_%s_errhandler_function" % obj, [argname, "error_code"],
               ["IMPORT :: MPI_%s" % obj, "TYPE(MPI_%s) :: %s" % (obj, argname),
                "INTEGER :: error_code"])


CALLBACKS = {
    "MPI_User_function": _cb("MPI_User_function", ["invec", "inoutvec", "len", "datatype"],
                             ["IMPORT :: C_PTR, MPI_Datatype", "TYPE(C_PTR), VALUE :: invec, inoutvec",
                              "INTEGER :: len", "TYPE(MPI_Datatype) :: datatype"]),
    "MPI_User_function_c": _cb("MPI_User_function_c", ["invec", "inoutvec", "len", "datatype"],
                               ["IMPORT :: C_PTR, MPI_Datatype, MPI_COUNT_KIND",
                                "TYPE(C_PTR), VALUE :: invec, inoutvec",
                                "INTEGER(KIND=MPI_COUNT_KIND) :: len",
                                "TYPE(MPI_Datatype) :: datatype"]),
    "MPI_Comm_errhandler_function": _errh_fn("Comm", "comm"),
    "MPI_Win_errhandler_function": _errh_fn("Win", "win"),
    "MPI_File_errhandler_function": _errh_fn("File", "file"),
    "MPI_Session_errhandler_function": _errh_fn("Session", "session"),
    "MPI_Comm_copy_attr_function": _copy_fn("Comm", "Comm"),
    "MPI_Comm_delete_attr_function": _delete_fn("Comm", "Comm", "comm"),
    "MPI_Type_copy_attr_function": _copy_fn("Type", "Datatype"),
    "MPI_Type_delete_attr_function": _delete_fn("Type", "Datatype", "datatype"),
    "MPI_Win_copy_attr_function": _copy_fn("Win", "Win"),
    "MPI_Win_delete_attr_function": _delete_fn("Win", "Win", "win"),
    "MPI_Grequest_query_function": _cb(
        "MPI_Grequest_query_function", ["extra_state", "status", "ierror"],
        ["IMPORT :: MPI_Status, MPI_ADDRESS_KIND", "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state",
         "TYPE(MPI_Status) :: status", "INTEGER :: ierror"]),
    "MPI_Grequest_free_function": _cb(
        "MPI_Grequest_free_function", ["extra_state", "ierror"],
        ["IMPORT :: MPI_ADDRESS_KIND", "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state",
         "INTEGER :: ierror"]),
    "MPI_Grequest_cancel_function": _cb(
        "MPI_Grequest_cancel_function", ["extra_state", "complete", "ierror"],
        ["IMPORT :: MPI_ADDRESS_KIND", "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state",
         "LOGICAL :: complete", "INTEGER :: ierror"]),
    "MPI_Datarep_conversion_function": _cb(
        "MPI_Datarep_conversion_function",
        ["userbuf", "datatype", "count", "filebuf", "position", "extra_state", "ierror"],
        ["IMPORT :: C_PTR, MPI_Datatype, MPI_OFFSET_KIND, MPI_ADDRESS_KIND",
         "TYPE(C_PTR), VALUE :: userbuf, filebuf", "TYPE(MPI_Datatype) :: datatype",
         "INTEGER :: count, ierror", "INTEGER(KIND=MPI_OFFSET_KIND) :: position",
         "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state"]),
    "MPI_Datarep_conversion_function_c": _cb(
        "MPI_Datarep_conversion_function_c",
        ["userbuf", "datatype", "count", "filebuf", "position", "extra_state", "ierror"],
        ["IMPORT :: C_PTR, MPI_Datatype, MPI_OFFSET_KIND, MPI_ADDRESS_KIND, MPI_COUNT_KIND",
         "TYPE(C_PTR), VALUE :: userbuf, filebuf", "TYPE(MPI_Datatype) :: datatype",
         "INTEGER(KIND=MPI_COUNT_KIND) :: count", "INTEGER :: ierror",
         "INTEGER(KIND=MPI_OFFSET_KIND) :: position",
         "INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state"]),
    "MPI_Datarep_extent_function": _cb(
        "MPI_Datarep_extent_function", ["datatype", "extent", "extra_state", "ierror"],
        ["IMPORT :: MPI_Datatype, MPI_ADDRESS_KIND", "TYPE(MPI_Datatype) :: datatype",
         "INTEGER(KIND=MPI_ADDRESS_KIND) :: extent, extra_state", "INTEGER :: ierror"]),
    "MPI_Handler_function": None,  # deprecated: not in mpi_f08
}


def callback_ok(name, handle_types):
    """The abstract interface exists and the handle types it names do."""
    lines = CALLBACKS.get(name)
    return bool(lines) and all(t in handle_types for t in re.findall(r"TYPE\((MPI_\w+)\)", " ".join(lines))
                               if t != "MPI_Status")


def wrap(line, indent="  "):
    """Split a free-form line at commas so that no line passes 100 columns."""
    out = []
    cur = indent + line
    while len(cur) > 100:
        cut = cur.rfind(", ", 0, 96)
        if cut <= len(indent):
            break
        out.append(cur[:cut + 1] + " &")
        cur = indent + "    " + cur[cut + 2:]
    out.append(cur)
    return out


def handle_casts(texts, handle_types):
    """{constant: handle type} for constants defined as ((MPI_Type)N)."""
    raw = {}
    for text in texts:
        for m in re.finditer(r"#\s*define\s+((?:MPI|BDMPI)_\w+)\s+(.+)", text):
            raw[m.group(1)] = m.group(2).strip()
    out = {}
    for name, val in raw.items():
        seen = 0
        while val in raw and seen < 10:  # an alias of another constant
            val = raw[val]
            seen += 1
        m = re.match(r"\(\s*\(\s*(MPI_\w+)\s*\)", val)
        if m and m.group(1) in handle_types:
            out[name] = m.group(1)
    return out


def f08_arg(a, handle_types, logical_names, mode):
    """(f08 declaration, C-interface declaration, actual argument) of one
    argument; mode is the routine's gen_fortran.buffer_mode."""
    n, k = a.name, a.kind
    arr = "(*)" if a.is_array else ""
    if k == "choice" and mode == "copy":
        # Assumed size: the compiler passes a non-contiguous section as a
        # contiguous copy, copied back after the call.
        return (["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n, "TYPE(*), DIMENSION(*) :: %s" % n],
                ["TYPE(*), DIMENSION(*) :: %s" % n], n)
    if k == "choice":
        # Assumed rank: the actual argument itself, described (no copy).
        d = "TYPE(*), DIMENSION(..)%s :: %s" % (", ASYNCHRONOUS" if mode == "deferred" else "", n)
        return ([d], [d], n)
    if k in ("str_in", "str_out"):
        return (["CHARACTER(LEN=*) :: %s" % n], ["CHARACTER(KIND=C_CHAR) :: %s(*)" % n], n)
    if k in ("status", "status_in"):
        return (["TYPE(MPI_Status) :: %s" % n], ["TYPE(*) :: %s" % n], n)
    if k == "statuses":
        return (["TYPE(MPI_Status) :: %s(*)" % n], ["TYPE(*), DIMENSION(*) :: %s" % n], n)
    if k == "callback":
        if not callback_ok(a.base, handle_types):
            raise ValueError("callback %s has no mpi_f08 form" % a.base)
        return (["PROCEDURE(%s) :: %s" % (a.base, n)], ["TYPE(C_FUNPTR), VALUE :: %s" % n],
                "C_FUNLOC(%s)" % n)
    base = k.split("_")[0]
    if a.base in handle_types:
        t = "TYPE(%s)" % a.base
    elif base == "int" and n in logical_names:
        t = "LOGICAL"
    else:
        t = {"int": "INTEGER", "aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
             "offset": "INTEGER(KIND=MPI_OFFSET_KIND)", "count": "INTEGER(KIND=MPI_COUNT_KIND)",
             "int8": "INTEGER(KIND=8)"}[base]
    if a.is_array and len(a.dims) == 2:
        arr = "(%s,*)" % a.dims[1]
    cdecl = "TYPE(*), DIMENSION(*) :: %s" % n if a.is_array else "TYPE(*) :: %s" % n
    return (["%s :: %s%s" % (t, n, arr)], [cdecl], n)


def tkr(decls):
    """(type and kind, rank) of a dummy argument from its declarations;
    None for an assumed-type one (compatible with anything)."""
    d = [x for x in decls if not x.startswith("!")][0]
    t, _, name = d.partition("::")
    t = t.replace(", ASYNCHRONOUS", "").replace(", DIMENSION(..)", "").replace(
        ", DIMENSION(*)", "").strip()
    if t.startswith("TYPE(*)") or t.startswith("PROCEDURE"):
        return None
    # MPI_ADDRESS_KIND, MPI_OFFSET_KIND and MPI_COUNT_KIND are all 8 here:
    # one kind to the compiler.
    t = re.sub(r"KIND=MPI_(ADDRESS|OFFSET|COUNT)_KIND", "KIND=8", t)
    return (t, "(" in name)


def distinguishable(a, b):
    """Two specifics of one generic can be told apart by their arguments'
    types, kinds and ranks (same number of arguments, differing in one
    position where neither is assumed-type)."""
    return len(a) == len(b) and any(x is not None and y is not None and x != y for x, y in zip(a, b))


def routine(fname, csym, kind, args, decl_rows):
    """One module procedure and its C interface.  args: [(name, f08 decls,
    C decls, actual, is_string)]; kind: sub, double or aint."""
    names = [a[0] for a in args]
    cnames = names[:]
    cactual = [a[3] for a in args]
    cdecl = [d for a in args for d in a[2]]
    strs = [a[0] for a in args if a[4]]
    iface, body = [], []
    cname = "bdmpi_c_" + fname[4:].lower()
    if kind == "sub":
        cnames.append("ierror")
        cnames += ["%s_len" % s for s in strs]
        cdecl.append("INTEGER(C_INT) :: ierror")
        cdecl += ["INTEGER(C_SIZE_T), VALUE :: %s_len" % s for s in strs]
        iface += wrap("SUBROUTINE %s(%s) BIND(C, NAME=\"%s\")" % (cname, ", ".join(cnames), csym))
        iface.append("    IMPORT")
        iface += ["    " + d for d in cdecl]
        iface.append("  END SUBROUTINE %s" % cname)
        body += wrap("SUBROUTINE %s(%s)" % (fname, ", ".join(names + ["ierror"])))
        body += ["    " + d for a in args for d in a[1]]
        body += ["    INTEGER, OPTIONAL, INTENT(OUT) :: ierror", "    INTEGER :: ierror_c"]
        actual = cactual + ["ierror_c"] + ["LEN(%s, KIND=C_SIZE_T)" % s for s in strs]
        body += wrap("CALL %s(%s)" % (cname, ", ".join(actual)), "    ")
        body += ["    IF (PRESENT(ierror)) ierror = ierror_c", "  END SUBROUTINE %s" % fname]
    else:
        ct = "REAL(KIND=C_DOUBLE)" if kind == "double" else "INTEGER(KIND=C_INTPTR_T)"
        ft = "DOUBLE PRECISION" if kind == "double" else "INTEGER(KIND=MPI_ADDRESS_KIND)"
        iface += wrap("%s FUNCTION %s(%s) BIND(C, NAME=\"%s\")" % (ct, cname, ", ".join(cnames), csym))
        iface.append("    IMPORT")
        iface += ["    " + d for d in cdecl]
        iface.append("  END FUNCTION %s" % cname)
        body += wrap("%s FUNCTION %s(%s)" % (ft, fname, ", ".join(names)))
        body += ["    " + d for a in args for d in a[1]]
        body += wrap("%s = %s(%s)" % (fname, cname, ", ".join(cactual)), "    ")
        body.append("  END FUNCTION %s" % fname)
    return iface, body


def write(path, consts, kinds, casts, bindings, specials_bound, handle_types, sentinels,
          logical_names, buffer_mode, f08_csym):
    """Write mpi_f08.f90; return [(routine, reason)] of those left out."""
    skipped = []
    m = ["! module mpi_f08: BDMPI's MPI for Fortran 2008 (USE mpi_f08).",
         "! Generated from mpi.h by src/fortran/gen_fortran.py and gen_f08.py; do not edit.",
         "MODULE mpi_f08",
         # Only what the module uses, all of it private: a program that
         # uses ISO_C_BINDING too must not get C_ASSOCIATED and friends
         # through two paths (gfortran 12 then fails with an internal error).
         "  USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_INT, C_CHAR, C_SIZE_T, C_FUNPTR, C_DOUBLE, &",
         "                                          C_FUNLOC, C_PTR, C_INTPTR_T",
         "  IMPLICIT NONE",
         "  PRIVATE :: C_INT, C_CHAR, C_SIZE_T, C_FUNPTR, C_DOUBLE, C_FUNLOC, C_PTR, &",
         "             C_INTPTR_T"]
    for t in sorted(handle_types):
        m += ["  TYPE, BIND(C) :: %s" % t, "    INTEGER(C_INT) :: MPI_VAL", "  END TYPE %s" % t]
    m += ["  TYPE, BIND(C) :: MPI_Status",
          "    INTEGER(C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
          "    INTEGER(C_INT), PRIVATE :: bd_private(MPI_F_STATUS_SIZE_ - 3)",
          "  END TYPE MPI_Status"]
    # The status size must be known before the type: put it first.
    size = dict(consts).get("MPI_STATUS_SIZE")
    m.insert(m.index("  IMPLICIT NONE") + 1, "  INTEGER, PARAMETER, PRIVATE :: MPI_F_STATUS_SIZE_ = %d" % size)
    for name, v in consts:
        # (MPI_SOURCE, MPI_TAG, MPI_ERROR are also the components of
        # TYPE(MPI_Status); as constants they index an INTEGER status.)
        if name in casts:
            m.append("  TYPE(%s), PARAMETER :: %s = %s(%d)" % (casts[name], name, casts[name], v))
        elif name in kinds:
            m.append("  INTEGER(KIND=%s), PARAMETER :: %s = %d" % (kinds[name], name, v))
        else:
            m.append("  INTEGER, PARAMETER :: %s = %d" % (name, v))
    # Non-contiguous sections reach a routine as the compiler's contiguous
    # copy, or are refused where MPI would use them after the call returns
    # (gen_fortran.py:buffer_mode): no subarray support.  Every buffer of a
    # nonblocking routine is ASYNCHRONOUS.
    m += ["  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .FALSE.",
          "  LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .TRUE."]
    # The sentinels are the C objects themselves (BIND(C) names).
    for fname, blk, dims, _, _, ftype in sentinels:
        if "STATUS" in fname:
            t = "TYPE(MPI_Status)"
        else:
            t = "CHARACTER(KIND=C_CHAR)" if ftype.startswith("CHARACTER") else "INTEGER(C_INT)"
        d = {"": "", "(MPI_STATUS_SIZE)": "", "(MPI_STATUS_SIZE,1)": "(1)"}.get(dims, dims)
        m.append("  %s, BIND(C, NAME=\"%s_\") :: %s%s" % (t, blk, fname, d))
    for op, fn in (("==", "eq"), ("/=", "ne")):
        m.append("  INTERFACE OPERATOR(%s)" % op)
        m += wrap("MODULE PROCEDURE %s" % ", ".join("bdmpi_%s_%s" % (fn, t[4:].lower())
                                                     for t in sorted(handle_types)), "    ")
        m.append("  END INTERFACE")
    m.append("  ABSTRACT INTERFACE")
    for name, lines in CALLBACKS.items():
        if callback_ok(name, handle_types):
            m += ["    " + ln for ln in lines]
    m.append("  END INTERFACE")
    # The predefined procedures (f_special.c), external procedures with
    # their callbacks' interfaces.
    for proc, iface in specials.PROCEDURES:
        if iface and callback_ok(iface, handle_types):
            m.append("  PROCEDURE(%s) :: %s" % (iface, proc))
    sizeof_generic, sizeof_procs = specials.sizeof_procs(True)
    m += sizeof_generic
    m.append("  PRIVATE :: " + ", ".join("bdmpi_sizeof_%s" % t for t, _ in specials.SIZEOF_TYPES))

    ifaces, bodies = [], []
    sigs = {}  # routine -> its arguments' type, kind and rank, for the generics below
    for b in bindings:
        try:
            args = []
            for a in b.args:
                fdecl, cdecl, actual = f08_arg(a, handle_types, logical_names, buffer_mode(b))
                args.append((a.name, fdecl, cdecl, actual, a.kind in ("str_in", "str_out")))
        except ValueError as e:
            skipped.append((b.name, str(e)))
            continue
        sigs[b.name] = [tkr(a[1]) for a in args]
        i, body = routine(b.name, f08_csym(b), b.kind, args, None)
        ifaces += ["  " + ln if not ln.startswith("  ") else ln for ln in i]
        bodies += body
    for name, sargs, opt in specials.SPECIALS:
        if name not in specials_bound:
            continue
        if not opt.get("f08", True):
            skipped.append((name, "deprecated MPI-1 routine, which mpi_f08 leaves out"))
            continue
        args = [(n,) + specials.f08_arg(n, k) for n, k in opt.get("f08args", sargs)]
        args = [(a[0], a[1], a[2], a[3], a[4]) for a in args]
        sigs[name] = [tkr(a[1]) for a in args]
        csym = opt.get("f08sym", name.lower() + "_")
        if opt.get("noierror"):
            i = ["  SUBROUTINE bdmpi_c_%s(%s) BIND(C, NAME=\"%s\")" % (name[4:].lower(), args[0][0], csym),
                 "    IMPORT"] + ["    " + d for d in args[0][2]] + \
                ["  END SUBROUTINE bdmpi_c_%s" % name[4:].lower()]
            body = ["  SUBROUTINE %s(%s)" % (name, args[0][0])] + ["    " + d for d in args[0][1]] + \
                ["    CALL bdmpi_c_%s(%s)" % (name[4:].lower(), args[0][3]), "  END SUBROUTINE %s" % name]
        else:
            i, body = routine(name, csym, "sub", args, None)
        ifaces += ["  " + ln if not ln.startswith("  ") else ln for ln in i]
        bodies += body
    m.append("  INTERFACE")
    m += ifaces
    m.append("  END INTERFACE")
    # The large-count routines (MPI 4.0 19.1.11): MPI_Send with an
    # INTEGER(KIND=MPI_COUNT_KIND) count is MPI_Send_c, by a generic of both
    # (the generic may share the specific's name).  Where no argument tells
    # the two apart (MPI_Type_get_extent: MPI_Aint and MPI_Count are both
    # 8 bytes), only the _c name reaches the large-count one, as the
    # standard says.
    for name in sorted(sigs):
        big = name + "_c"
        if big in sigs and distinguishable(sigs[name], sigs[big]):
            m += ["  INTERFACE %s" % name, "    MODULE PROCEDURE %s, %s" % (name, big),
                  "  END INTERFACE %s" % name]
    # (The C interfaces stay public: gfortran warns about private names
    # with binding labels.  Their names start with bdmpi_c_.)
    m.append("CONTAINS")
    for t in sorted(handle_types):
        s = t[4:].lower()
        for op, fn in (("==", "eq"), ("/=", "ne")):
            m += ["  ELEMENTAL LOGICAL FUNCTION bdmpi_%s_%s(a, b)" % (fn, s),
                  "    TYPE(%s), INTENT(IN) :: a, b" % t,
                  "    bdmpi_%s_%s = a%%MPI_VAL %s b%%MPI_VAL" % (fn, s, op),
                  "  END FUNCTION bdmpi_%s_%s" % (fn, s)]
    m += bodies + sizeof_procs
    m.append("END MODULE mpi_f08")
    # The PRIVATE list of C interfaces may be long: wrap it.
    out = []
    for ln in m:
        out += wrap(ln.strip(), ln[:len(ln) - len(ln.lstrip())]) if len(ln) > 100 else [ln]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return skipped
