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
where gfortran would pass it hidden.  Callbacks are the BIND(C) abstract
interfaces of the standard, passed as C function pointers.  Choice buffers
are TYPE(*), DIMENSION(*) with NO_ARG_CHECK, so MPI_SUBARRAYS_SUPPORTED is
.FALSE..
"""
import re

# Callback types of the C API and their mpi_f08 abstract interfaces.
CALLBACKS = {
    "MPI_User_function": [
        "SUBROUTINE MPI_User_function(invec, inoutvec, len, datatype) BIND(C)",
        "  IMPORT :: C_PTR, C_INT, MPI_Datatype",
        "  TYPE(C_PTR), VALUE :: invec, inoutvec",
        "  INTEGER(C_INT) :: len",
        "  TYPE(MPI_Datatype) :: datatype",
        "END SUBROUTINE MPI_User_function"],
    "MPI_Comm_errhandler_function": [
        "SUBROUTINE MPI_Comm_errhandler_function(comm, error_code) BIND(C)",
        "  IMPORT :: C_INT, MPI_Comm",
        "  TYPE(MPI_Comm) :: comm",
        "  INTEGER(C_INT) :: error_code",
        "END SUBROUTINE MPI_Comm_errhandler_function"],
    "MPI_Win_errhandler_function": [
        "SUBROUTINE MPI_Win_errhandler_function(win, error_code) BIND(C)",
        "  IMPORT :: C_INT, MPI_Win",
        "  TYPE(MPI_Win) :: win",
        "  INTEGER(C_INT) :: error_code",
        "END SUBROUTINE MPI_Win_errhandler_function"],
}
CALLBACKS["MPI_File_errhandler_function"] = [
    "SUBROUTINE MPI_File_errhandler_function(file, error_code) BIND(C)",
    "  IMPORT :: C_INT, MPI_File",
    "  TYPE(MPI_File) :: file",
    "  INTEGER(C_INT) :: error_code",
    "END SUBROUTINE MPI_File_errhandler_function"]
CALLBACKS["MPI_Handler_function"] = None  # deprecated: not in mpi_f08


def callback_ok(name, handle_types):
    """The abstract interface exists and the handle types it names do."""
    lines = CALLBACKS.get(name)
    return bool(lines) and all(t in handle_types for t in re.findall(r"TYPE\((MPI_\w+)\)", " ".join(lines)))

# The routines gen_fortran.py writes by hand, in their mpi_f08 form:
# (name, C symbol, [(argument, f08 declaration)]).
SPECIAL = [
    ("MPI_Init", "mpi_init_", []),
    ("MPI_Init_thread", "mpi_init_thread_",
     [("required", "INTEGER"), ("provided", "INTEGER")]),
    ("MPI_Pcontrol", "mpi_pcontrol_", [("level", "INTEGER")]),
    ("MPI_Buffer_detach", "mpi_buffer_detach_",
     [("buffer_addr", "CHOICE"), ("size", "INTEGER")]),
    ("MPI_Comm_get_attr", "mpi_comm_get_attr_",
     [("comm", "TYPE(MPI_Comm)"), ("keyval", "INTEGER"),
      ("attribute_val", "INTEGER(KIND=MPI_ADDRESS_KIND)"), ("flag", "LOGICAL")]),
]


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


def f08_arg(a, handle_types, logical_names):
    """(f08 declaration, C-interface declaration, actual argument) of one argument."""
    n, k = a.name, a.kind
    arr = "(*)" if a.is_array else ""
    if k == "choice":
        return (["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n, "TYPE(*), DIMENSION(*) :: %s" % n],
                ["TYPE(*), DIMENSION(*) :: %s" % n], n)
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


def write(path, consts, kinds, casts, bindings, specials, handle_types, sentinels, logical_names):
    """Write mpi_f08.f90; return [(routine, reason)] of those left out."""
    skipped = []
    m = ["! module mpi_f08: BDMPI's MPI for Fortran 2008 (USE mpi_f08).",
         "! Generated from mpi.h by src/fortran/gen_fortran.py and gen_f08.py; do not edit.",
         "MODULE mpi_f08",
         "  USE, INTRINSIC :: ISO_C_BINDING",
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
    m.insert(5, "  INTEGER, PARAMETER, PRIVATE :: MPI_F_STATUS_SIZE_ = %d" % size)
    for name, v in consts:
        if name in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            continue  # the components of TYPE(MPI_Status) in mpi_f08
        if name in casts:
            m.append("  TYPE(%s), PARAMETER :: %s = %s(%d)" % (casts[name], name, casts[name], v))
        elif name in kinds:
            m.append("  INTEGER(KIND=%s), PARAMETER :: %s = %d" % (kinds[name], name, v))
        else:
            m.append("  INTEGER, PARAMETER :: %s = %d" % (name, v))
    m += ["  LOGICAL, PARAMETER :: MPI_SUBARRAYS_SUPPORTED = .FALSE.",
          "  LOGICAL, PARAMETER :: MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE."]
    # The sentinels are the C objects themselves (BIND(C) names).
    for fname, blk, dims, _, _ in sentinels:
        t = "TYPE(MPI_Status)" if "STATUS" in fname else "INTEGER(C_INT)"
        d = "(1)" if fname in ("MPI_STATUSES_IGNORE", "MPI_UNWEIGHTED", "MPI_WEIGHTS_EMPTY") else ""
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

    ifaces, bodies = [], []
    for b in bindings:
        try:
            args = []
            for a in b.args:
                fdecl, cdecl, actual = f08_arg(a, handle_types, logical_names)
                args.append((a.name, fdecl, cdecl, actual, a.kind in ("str_in", "str_out")))
        except ValueError as e:
            skipped.append((b.name, str(e)))
            continue
        i, body = routine(b.name, b.cname, b.kind, args, None)
        ifaces += ["  " + ln if not ln.startswith("  ") else ln for ln in i]
        bodies += body
    for name, csym, sargs in SPECIAL:
        if name not in specials:
            continue
        args = []
        for n, t in sargs:
            if t == "CHOICE":
                args.append((n, ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n,
                                 "TYPE(*), DIMENSION(*) :: %s" % n],
                             ["TYPE(*), DIMENSION(*) :: %s" % n], n, False))
            else:
                args.append((n, ["%s :: %s" % (t, n)], ["TYPE(*) :: %s" % n], n, False))
        i, body = routine(name, csym, "sub", args, None)
        ifaces += ["  " + ln if not ln.startswith("  ") else ln for ln in i]
        bodies += body
    m.append("  INTERFACE")
    m += ifaces
    m.append("  END INTERFACE")
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
    m += bodies
    m.append("END MODULE mpi_f08")
    # The PRIVATE list of C interfaces may be long: wrap it.
    out = []
    for ln in m:
        out += wrap(ln.strip(), ln[:len(ln) - len(ln.lstrip())]) if len(ln) > 100 else [ln]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return skipped
