"""The Fortran interfaces of the routines written by hand in f_special.c
(gen_fortran.py binds the others from mpi.h's prototypes): the routines
whose Fortran form the standard defines apart from the C one (callbacks,
attribute values, addresses returned as integers or TYPE(C_PTR), string
arrays, the Fortran-only routines), and the predefined procedures.

An argument is (name, kind):
  int, logical, aint, count, offset   INTEGER, LOGICAL, INTEGER(KIND=MPI_*_KIND)
  int(*)                              INTEGER array
  str, str(*), str(count,*)           CHARACTER(LEN=*) scalar or array
  h:Comm, h:Info(*), ...              a handle (INTEGER; TYPE(MPI_Comm) in mpi_f08)
  fstatus, f08status                  INTEGER(MPI_STATUS_SIZE), TYPE(MPI_Status)
  cptr                                an address: INTEGER(KIND=MPI_ADDRESS_KIND) in
                                      mpif.h and mpi (which also has a _CPTR form
                                      taking TYPE(C_PTR)), TYPE(C_PTR) in mpi_f08
  choice                              any buffer (ignored or only its address used)
  proc:NAME                           a procedure with the abstract interface NAME
Options: mpi=False (mpi_f08 only), f08=False (mpif.h and mpi only: the
deprecated routines), f08sym (mpi_f08 calls this C function instead),
f08args (mpi_f08's arguments when they differ), noierror.
"""

SPECIALS = [
    ("MPI_Init", [], {}),
    ("MPI_Init_thread", [("required", "int"), ("provided", "int")], {}),
    ("MPI_Pcontrol", [("level", "int")], {}),
    ("MPI_Info_create_env", [("info", "h:Info")], {}),
    ("MPI_F_sync_reg", [("buf", "choice")], {"noierror": True}),
    ("MPI_Status_f2f08", [("f_status", "fstatus"), ("f08_status", "f08status")], {"mpi": False}),
    ("MPI_Status_f082f", [("f08_status", "f08status"), ("f_status", "fstatus")], {"mpi": False}),
    ("MPI_Buffer_detach", [("buffer_addr", "choice"), ("size", "int")],
     {"f08sym": "bdmpi_f08_buffer_detach", "f08args": [("buffer_addr", "cptr"), ("size", "int")]}),
    ("MPI_Buffer_detach_c", [("buffer_addr", "choice"), ("size", "count")],
     {"f08sym": "bdmpi_f08_buffer_detach_c", "f08args": [("buffer_addr", "cptr"), ("size", "count")]}),
    # attributes: values are INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER in MPI-1's calls)
    ("MPI_Comm_get_attr", [("comm", "h:Comm"), ("comm_keyval", "int"), ("attribute_val", "aint"),
                           ("flag", "logical")], {}),
    ("MPI_Type_get_attr", [("datatype", "h:Datatype"), ("type_keyval", "int"),
                           ("attribute_val", "aint"), ("flag", "logical")], {}),
    ("MPI_Win_get_attr", [("win", "h:Win"), ("win_keyval", "int"), ("attribute_val", "aint"),
                          ("flag", "logical")], {}),
    ("MPI_Comm_set_attr", [("comm", "h:Comm"), ("comm_keyval", "int"), ("attribute_val", "aint")], {}),
    ("MPI_Type_set_attr", [("datatype", "h:Datatype"), ("type_keyval", "int"),
                           ("attribute_val", "aint")], {}),
    ("MPI_Win_set_attr", [("win", "h:Win"), ("win_keyval", "int"), ("attribute_val", "aint")], {}),
    ("MPI_Attr_put", [("comm", "h:Comm"), ("keyval", "int"), ("attribute_val", "int")], {"f08": False}),
    ("MPI_Attr_get", [("comm", "h:Comm"), ("keyval", "int"), ("attribute_val", "int"),
                      ("flag", "logical")], {"f08": False}),
    ("MPI_Comm_create_keyval", [("comm_copy_attr_fn", "proc:MPI_Comm_copy_attr_function"),
                                ("comm_delete_attr_fn", "proc:MPI_Comm_delete_attr_function"),
                                ("comm_keyval", "int"), ("extra_state", "aint")], {}),
    ("MPI_Type_create_keyval", [("type_copy_attr_fn", "proc:MPI_Type_copy_attr_function"),
                                ("type_delete_attr_fn", "proc:MPI_Type_delete_attr_function"),
                                ("type_keyval", "int"), ("extra_state", "aint")], {}),
    ("MPI_Win_create_keyval", [("win_copy_attr_fn", "proc:MPI_Win_copy_attr_function"),
                               ("win_delete_attr_fn", "proc:MPI_Win_delete_attr_function"),
                               ("win_keyval", "int"), ("extra_state", "aint")], {}),
    ("MPI_Keyval_create", [("copy_fn", "proc:MPI_Copy_function"), ("delete_fn", "proc:MPI_Delete_function"),
                           ("keyval", "int"), ("extra_state", "int")], {"f08": False}),
    ("MPI_Grequest_start", [("query_fn", "proc:MPI_Grequest_query_function"),
                            ("free_fn", "proc:MPI_Grequest_free_function"),
                            ("cancel_fn", "proc:MPI_Grequest_cancel_function"),
                            ("extra_state", "aint"), ("request", "h:Request")], {}),
    ("MPI_Register_datarep", [("datarep", "str"),
                              ("read_conversion_fn", "proc:MPI_Datarep_conversion_function"),
                              ("write_conversion_fn", "proc:MPI_Datarep_conversion_function"),
                              ("dtype_file_extent_fn", "proc:MPI_Datarep_extent_function"),
                              ("extra_state", "aint")], {}),
    ("MPI_Register_datarep_c", [("datarep", "str"),
                                ("read_conversion_fn", "proc:MPI_Datarep_conversion_function_c"),
                                ("write_conversion_fn", "proc:MPI_Datarep_conversion_function_c"),
                                ("dtype_file_extent_fn", "proc:MPI_Datarep_extent_function"),
                                ("extra_state", "aint")], {}),
    # memory the library allocates: its address comes back
    ("MPI_Alloc_mem", [("size", "aint"), ("info", "h:Info"), ("baseptr", "cptr")], {}),
    ("MPI_Win_allocate", [("size", "aint"), ("disp_unit", "int"), ("info", "h:Info"),
                          ("comm", "h:Comm"), ("baseptr", "cptr"), ("win", "h:Win")], {}),
    ("MPI_Win_allocate_c", [("size", "aint"), ("disp_unit", "aint"), ("info", "h:Info"),
                            ("comm", "h:Comm"), ("baseptr", "cptr"), ("win", "h:Win")],
     {"nocptr": True}),
    ("MPI_Win_allocate_shared", [("size", "aint"), ("disp_unit", "int"), ("info", "h:Info"),
                                 ("comm", "h:Comm"), ("baseptr", "cptr"), ("win", "h:Win")], {}),
    ("MPI_Win_shared_query", [("win", "h:Win"), ("rank", "int"), ("size", "aint"),
                              ("disp_unit", "int"), ("baseptr", "cptr")], {}),
    ("MPI_Win_allocate_shared_c", [("size", "aint"), ("disp_unit", "aint"), ("info", "h:Info"),
                                   ("comm", "h:Comm"), ("baseptr", "cptr"), ("win", "h:Win")],
     {"nocptr": True}),
    ("MPI_Win_shared_query_c", [("win", "h:Win"), ("rank", "int"), ("size", "aint"),
                                ("disp_unit", "aint"), ("baseptr", "cptr")], {"nocptr": True}),
    # argument vectors: blank-terminated arrays of strings
    ("MPI_Comm_spawn", [("command", "str"), ("argv", "str(*)"), ("maxprocs", "int"), ("info", "h:Info"),
                        ("root", "int"), ("comm", "h:Comm"), ("intercomm", "h:Comm"),
                        ("array_of_errcodes", "int(*)")], {}),
    ("MPI_Comm_spawn_multiple", [("count", "int"), ("array_of_commands", "str(*)"),
                                 ("array_of_argv", "str(count,*)"), ("array_of_maxprocs", "int(*)"),
                                 ("array_of_info", "h:Info(*)"), ("root", "int"), ("comm", "h:Comm"),
                                 ("intercomm", "h:Comm"), ("array_of_errcodes", "int(*)")], {}),
]

# The predefined procedures (MPI 4.0 7.7.2, 13.5.3) and the abstract
# interface each has in mpi_f08 (None: not in mpi_f08, the MPI-1 ones).
PROCEDURES = [
    ("MPI_COMM_NULL_COPY_FN", "MPI_Comm_copy_attr_function"),
    ("MPI_COMM_DUP_FN", "MPI_Comm_copy_attr_function"),
    ("MPI_COMM_NULL_DELETE_FN", "MPI_Comm_delete_attr_function"),
    ("MPI_TYPE_NULL_COPY_FN", "MPI_Type_copy_attr_function"),
    ("MPI_TYPE_DUP_FN", "MPI_Type_copy_attr_function"),
    ("MPI_TYPE_NULL_DELETE_FN", "MPI_Type_delete_attr_function"),
    ("MPI_WIN_NULL_COPY_FN", "MPI_Win_copy_attr_function"),
    ("MPI_WIN_DUP_FN", "MPI_Win_copy_attr_function"),
    ("MPI_WIN_NULL_DELETE_FN", "MPI_Win_delete_attr_function"),
    ("MPI_NULL_COPY_FN", None),
    ("MPI_DUP_FN", None),
    ("MPI_NULL_DELETE_FN", None),
    ("MPI_CONVERSION_FN_NULL", "MPI_Datarep_conversion_function"),
    ("MPI_CONVERSION_FN_NULL_C", "MPI_Datarep_conversion_function_c"),
]

# C functions that have no Fortran binding by the standard's design.
C_ONLY_SUFFIXES = ("_c2f", "_f2c", "_c2f08", "_f082c")

# MPI_SIZEOF's specific procedures: (suffix, Fortran type).
SIZEOF_TYPES = [
    ("i1", "INTEGER(KIND=1)"), ("i2", "INTEGER(KIND=2)"), ("i4", "INTEGER(KIND=4)"),
    ("i8", "INTEGER(KIND=8)"), ("r4", "REAL(KIND=4)"), ("r8", "REAL(KIND=8)"),
    ("r16", "REAL(KIND=16)"), ("c4", "COMPLEX(KIND=4)"), ("c8", "COMPLEX(KIND=8)"),
    ("c16", "COMPLEX(KIND=16)"), ("l1", "LOGICAL(KIND=1)"), ("l2", "LOGICAL(KIND=2)"),
    ("l4", "LOGICAL(KIND=4)"), ("l8", "LOGICAL(KIND=8)"), ("ch", "CHARACTER(LEN=*)"),
]


def mpi_decl(name, kind):
    """Declaration lines of one argument in the module mpi (and mpif.h's terms)."""
    base, arr = kind, ""
    if "(" in kind:
        base, arr = kind.split("(", 1)
        arr = "(" + arr
    if base.startswith("h:"):
        base = "int"
    if base == "proc:MPI_Copy_function" or base.startswith("proc:"):
        return ["EXTERNAL :: %s" % name]
    if base == "choice":
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % name, "TYPE(*), DIMENSION(*) :: %s" % name]
    t = {"int": "INTEGER", "logical": "LOGICAL", "aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
         "count": "INTEGER(KIND=MPI_COUNT_KIND)", "offset": "INTEGER(KIND=MPI_OFFSET_KIND)",
         "str": "CHARACTER(LEN=*)", "fstatus": "INTEGER", "cptr": "INTEGER(KIND=MPI_ADDRESS_KIND)",
         "cptr_c": "TYPE(C_PTR)"}[base]
    if base == "fstatus":
        arr = "(MPI_STATUS_SIZE)"
    return ["%s :: %s%s" % (t, name, arr)]


def f08_arg(name, kind):
    """(mpi_f08 declarations, C-interface declarations, actual argument, is_string)."""
    base, arr = kind, ""
    if "(" in kind:
        base, arr = kind.split("(", 1)
        arr = "(" + arr
    cdecl = ["TYPE(*), DIMENSION(*) :: %s" % name] if arr else ["TYPE(*) :: %s" % name]
    if base.startswith("proc:"):
        return (["PROCEDURE(%s) :: %s" % (base[5:], name)], ["TYPE(C_FUNPTR), VALUE :: %s" % name],
                "C_FUNLOC(%s)" % name, False)
    if base.startswith("h:"):
        return (["TYPE(MPI_%s) :: %s%s" % (base[2:], name, arr)], cdecl, name, False)
    if base == "str":
        return (["CHARACTER(LEN=*) :: %s%s" % (name, arr)],
                ["CHARACTER(KIND=C_CHAR) :: %s(*)" % name], name, True)
    if base == "choice":
        return (["TYPE(*), DIMENSION(..), ASYNCHRONOUS :: %s" % name],
                ["TYPE(*), DIMENSION(..), ASYNCHRONOUS :: %s" % name], name, False)
    if base == "fstatus":
        return (["INTEGER :: %s(MPI_STATUS_SIZE)" % name], ["TYPE(*), DIMENSION(*) :: %s" % name],
                name, False)
    t = {"int": "INTEGER", "logical": "LOGICAL", "aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
         "count": "INTEGER(KIND=MPI_COUNT_KIND)", "offset": "INTEGER(KIND=MPI_OFFSET_KIND)",
         "f08status": "TYPE(MPI_Status)", "cptr": "TYPE(C_PTR)"}[base]
    return (["%s :: %s%s" % (t, name, arr)], cdecl, name, False)


def mpi_interfaces(c_declared):
    """Lines of the module mpi for the hand-written routines: plain
    interfaces, and a generic of two specifics (NAME and NAME_CPTR) for
    those that return an address.  c_declared: the C names mpi.h declares
    (a routine it lacks is left out)."""
    plain, generic = [], []
    for name, args, opt in SPECIALS:
        if not opt.get("mpi", True) or (name not in c_declared and name != "MPI_F_sync_reg"):
            continue
        forms = [(name.upper(), args, False)]
        cptr = any(k == "cptr" for _, k in args) and not opt.get("nocptr")
        if cptr:
            forms.append((name.upper() + "_CPTR", [(n, "cptr_c" if k == "cptr" else k) for n, k in args],
                          True))
        out = []
        for fname, fargs, uses_c in forms:
            names = [a for a, _ in fargs] + ([] if opt.get("noierror") else ["ierror"])
            out.append("  SUBROUTINE %s(%s)" % (fname, ", ".join(names)))
            if uses_c:
                out.append("    USE, INTRINSIC :: ISO_C_BINDING, ONLY : C_PTR")
            out.append("    IMPORT :: MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND, MPI_STATUS_SIZE")
            out.append("    IMPLICIT NONE")
            for a, k in fargs:
                out += ["    " + d for d in mpi_decl(a, k)]
            if not opt.get("noierror"):
                out.append("    INTEGER :: ierror")
            out.append("  END SUBROUTINE %s" % fname)
        if cptr:
            generic += ["  INTERFACE %s" % name.upper()] + out + ["  END INTERFACE %s" % name.upper()]
        else:
            plain += out
    return ["  INTERFACE"] + plain + ["  END INTERFACE"] + generic


def sizeof_procs(optional_ierror):
    """MPI_SIZEOF: a generic of one module procedure per intrinsic type and
    kind, for scalars and arrays of any rank.  Returns (generic block,
    procedures)."""
    gen = ["  INTERFACE MPI_SIZEOF"]
    gen.append("    MODULE PROCEDURE " + ", ".join("bdmpi_sizeof_%s" % s for s, _ in SIZEOF_TYPES[:8]))
    gen.append("    MODULE PROCEDURE " + ", ".join("bdmpi_sizeof_%s" % s for s, _ in SIZEOF_TYPES[8:]))
    gen.append("  END INTERFACE MPI_SIZEOF")
    procs = []
    opt = ", OPTIONAL" if optional_ierror else ""
    for s, t in SIZEOF_TYPES:
        procs += ["  SUBROUTINE bdmpi_sizeof_%s(x, size, ierror)" % s,
                  "    %s, DIMENSION(..), INTENT(IN) :: x" % t,
                  "    INTEGER, INTENT(OUT) :: size",
                  "    INTEGER%s, INTENT(OUT) :: ierror" % opt,
                  "    size = INT(STORAGE_SIZE(x) / 8)" if s != "ch" else "    size = LEN(x)",
                  "    %sierror = 0" % ("IF (PRESENT(ierror)) " if optional_ierror else ""),
                  "  END SUBROUTINE bdmpi_sizeof_%s" % s]
    return gen, procs
