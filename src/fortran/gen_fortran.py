#!/usr/bin/env python3
"""Generate BDMPI's Fortran bindings from its C headers.

The one description of the API is include/mpi.h (and bdmpi.h): its
prototypes and #define constants.  From them this script writes

  mpif.h     constants, the sentinel common blocks and the functions' types,
             valid as fixed and as free source form (columns 7-72, no
             continuation lines);
  mpi.f90    module mpi: the same constants and explicit interfaces of every
             bound routine (choice buffers accept any type and rank through
             gfortran's NO_ARG_CHECK, or, where MPI keeps the buffer after
             the call, as descriptors: see buffer_mode);
  mpi_f08.f90  module mpi_f08 over the same C side (gen_f08.py);
  bdmpi_f.c  the C side: one function per routine, named as gfortran names
             external procedures (lower case, one trailing underscore), that
             converts Fortran arguments (all by reference, strings with a
             hidden length, 1-based indices, LOGICAL flags, statuses as
             MPI_STATUS_SIZE integers, the sentinels MPI_BOTTOM, MPI_IN_PLACE,
             MPI_STATUS(ES)_IGNORE) and calls the C function;
  bindings.txt  which C functions got a binding and why the others did not.

Nothing is written by hand per routine except those whose Fortran form
the standard defines apart from the C one (callbacks and attribute values,
addresses returned, argument vectors, MPI_INIT...): their C side is
f_special.c and their interfaces are described in specials.py.  A new
function in mpi.h whose arguments are of known kinds is bound on the next
build, and one that is not is listed in bindings.txt, never guessed at.

usage: gen_fortran.py --outdir DIR --incdir DIR [--address-kind 8] HEADER...
"""
import argparse
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree at build time
import gen_f08  # noqa: E402
import specials  # noqa: E402

# C argument names that are choice buffers (any type, any rank in Fortran).
CHOICE_NAMES = {
    "buf", "sendbuf", "recvbuf", "buffer", "inbuf", "inoutbuf", "outbuf", "origin_addr",
    "result_addr", "compare_addr", "location", "base", "packed",
}
# C int arguments that are LOGICAL in Fortran.
LOGICAL_NAMES = {"flag", "commute", "reorder", "periods", "remain_dims", "weighted", "high"}
# Callback types whose C signature a Fortran subroutine already has (every
# argument by reference, no ierror, no address-sized values).
PASSABLE_CALLBACKS = {
    "MPI_User_function", "MPI_User_function_c", "MPI_Comm_errhandler_function", "MPI_Handler_function",
    "MPI_Win_errhandler_function", "MPI_File_errhandler_function", "MPI_Session_errhandler_function",
}
# Constants that are not integer PARAMETERs in Fortran: sentinels (common
# blocks below) and the C-only description of a Fortran status.
SENTINEL_WHY = "a sentinel: an object of libbdmpi, not a value"
STATUS_WHY = "C's description of a Fortran status (MPI_STATUS_SIZE and MPI_SOURCE... in Fortran)"
PROCEDURE_WHY = "a predefined procedure in Fortran (specials.PROCEDURES)"
NOT_PARAMETERS = {
    **dict.fromkeys(("MPI_BOTTOM", "MPI_IN_PLACE", "MPI_STATUS_IGNORE", "MPI_STATUSES_IGNORE",
                     "MPI_UNWEIGHTED", "MPI_WEIGHTS_EMPTY", "MPI_F_STATUS_IGNORE",
                     "MPI_F_STATUSES_IGNORE", "MPI_F08_STATUS_IGNORE", "MPI_F08_STATUSES_IGNORE",
                     "MPI_ARGV_NULL", "MPI_ARGVS_NULL", "MPI_ERRCODES_IGNORE"), SENTINEL_WHY),
    **dict.fromkeys(("MPI_F_STATUS_SIZE", "MPI_F_SOURCE", "MPI_F_TAG", "MPI_F_ERROR"), STATUS_WHY),
    **dict.fromkeys(("MPI_NULL_COPY_FN", "MPI_DUP_FN", "MPI_NULL_DELETE_FN",
                     "MPI_CONVERSION_FN_NULL", "MPI_CONVERSION_FN_NULL_C"), PROCEDURE_WHY),
}
# Sentinels: Fortran name, common block (= C symbol without the trailing _),
# Fortran dimensions, C symbol defined in bdmpi_f.c (None: elsewhere), the
# C value it stands for (None: same address), Fortran type.
SENTINELS = [
    ("MPI_BOTTOM", "bdmpi_bottom", "", "bdmpi_bottom_", "MPI_BOTTOM", "INTEGER"),
    ("MPI_IN_PLACE", "bdmpi_in_place", "", "bdmpi_in_place_", "MPI_IN_PLACE", "INTEGER"),
    ("MPI_STATUS_IGNORE", "bdmpi_status_ignore", "(MPI_STATUS_SIZE)", "bdmpi_status_ignore_", None,
     "INTEGER"),
    ("MPI_STATUSES_IGNORE", "bdmpi_statuses_ignore", "(MPI_STATUS_SIZE,1)",
     "bdmpi_statuses_ignore_", None, "INTEGER"),
    # libbdmpi defines these two with the names of these common blocks, so
    # a Fortran program's MPI_UNWEIGHTED is the C one, no conversion needed.
    ("MPI_UNWEIGHTED", "bdmpi_unweighted", "(1)", None, None, "INTEGER"),
    ("MPI_WEIGHTS_EMPTY", "bdmpi_weights_empty", "(1)", None, None, "INTEGER"),
    # The spawn calls' (f_special.c defines and recognises them).
    ("MPI_ERRCODES_IGNORE", "bdmpi_errcodes_ignore", "(1)", None, None, "INTEGER"),
    ("MPI_ARGV_NULL", "bdmpi_argv_null", "(1)", None, None, "CHARACTER*1"),
    ("MPI_ARGVS_NULL", "bdmpi_argvs_null", "(1,1)", None, None, "CHARACTER*1"),
]
SPECIAL = {name for name, _, _ in specials.SPECIALS}


def strip_c(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return text


def parse_defines(texts):
    """#define NAME VALUE -> {NAME: int} for integer constants (casts dropped)."""
    raw = {}
    order = []
    for text in texts:
        for line in strip_c(text).split("\n"):
            m = re.match(r"\s*#\s*define\s+((?:MPI|BDMPI)_\w+)\s+(.+?)\s*$", line)
            if not m or line.rstrip().endswith("\\"):
                continue
            name, val = m.group(1), m.group(2)
            if name not in raw:
                order.append(name)
            raw[name] = val
    vals = {}

    def value(name, depth=0):
        if name in vals:
            return vals[name]
        if depth > 20 or name not in raw:
            raise ValueError(name)
        expr = raw[name]
        if '"' in expr or "*" in expr or "void" in expr:
            raise ValueError(name)
        expr = re.sub(r"\(\s*(?:MPI|BDMPI)_[A-Za-z]\w*\s*\)", " ", expr)  # (MPI_Comm) casts
        # C's integer literals: hex and octal, and the suffixes u, l, ll.
        expr = re.sub(r"\b0[xX]([0-9a-fA-F]+)[uUlL]*\b", lambda m: str(int(m.group(1), 16)), expr)
        expr = re.sub(r"\b0([0-7]+)[uUlL]*\b", lambda m: str(int(m.group(1), 8)), expr)
        expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expr)
        for ref in set(re.findall(r"\b(?:MPI|BDMPI)_\w+\b", expr)):
            expr = re.sub(r"\b%s\b" % ref, "(%d)" % value(ref, depth + 1), expr)
        if not re.fullmatch(r"[\s\d()+\-*/<>|&~]*", expr):
            raise ValueError(name)
        v = eval(expr, {"__builtins__": {}})  # only digits and operators remain
        if not isinstance(v, int):
            raise ValueError(name)
        vals[name] = v
        return v

    out = []
    skipped = []
    for name in order:
        if name.startswith("BDMPI_PMPI") or re.fullmatch(r"BDMPI_\w+_H", name):
            continue  # the PMPI list, include guards
        if name in NOT_PARAMETERS:
            skipped.append((name, NOT_PARAMETERS[name]))
            continue
        try:
            v = value(name)
        except (ValueError, SyntaxError, ZeroDivisionError):
            skipped.append((name, None))
            continue
        if -(2**31) <= v < 2**31:
            out.append((name, v))
        else:
            skipped.append((name, None))
    return out, skipped


def parse_typedefs(texts):
    kinds = {}
    for text in texts:
        for m in re.finditer(r"typedef\s+([\w\s]+?)\s+((?:MPI|BDMPI)_\w+)\s*;", strip_c(text)):
            base, name = m.group(1).strip(), m.group(2)
            if base == "int":
                kinds[name] = "int"
            elif base in ("intptr_t", "long", "ptrdiff_t") and name == "MPI_Aint":
                kinds[name] = "aint"
            elif base == "long long" and name in ("MPI_Offset", "MPI_Count"):
                kinds[name] = "offset" if name == "MPI_Offset" else "count"
    return kinds


def parse_prototypes(texts):
    protos = []
    for text in texts:
        t = strip_c(text)
        t = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", t, flags=re.M)  # preprocessor lines
        t = re.sub(r"\s+", " ", t)
        for m in re.finditer(r"([A-Za-z_][\w ]*?[\w*])\s*\b((?:MPI|BDMPI)_\w+)\s*\(([^()]*)\)\s*;", t):
            ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
            ret = ret.split(";")[-1].split("}")[-1].strip()
            if "typedef" in ret:
                continue
            protos.append((ret, name, params))
    return protos


def declared_names(texts):
    """Every MPI_/BDMPI_ function the headers declare, parsed or not."""
    names = []
    for text in texts:
        t = strip_c(text)
        t = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", t, flags=re.M)
        for stmt in re.sub(r"\s+", " ", t).split(";"):
            m = re.match(r"\s*(?:extern \s*)?[A-Za-z_][\w ]*?[\w*]\s*\b((?:MPI|BDMPI)_\w+)\s*\(", stmt)
            if m and "typedef" not in stmt.split(m.group(1))[0]:
                names.append(m.group(1))
    return names


# Constants whose C type is an address-sized or offset-sized integer have
# that kind in Fortran too.
KIND_OF_CAST = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND",
                "MPI_Count": "MPI_COUNT_KIND"}


def const_kinds(texts):
    """{constant: Fortran kind name} for constants cast to MPI_Aint/Offset/Count."""
    out = {}
    for text in texts:
        for m in re.finditer(r"#\s*define\s+((?:MPI|BDMPI)_\w+)\s+\(\s*\(\s*(MPI_\w+)\s*\)", text):
            if m.group(2) in KIND_OF_CAST:
                out[m.group(1)] = KIND_OF_CAST[m.group(2)]
    return out


class Arg:
    """One C parameter and how it crosses from Fortran."""

    def __init__(self, text):
        self.text = text
        m = re.fullmatch(r"(const\s+)?([A-Za-z_][\w ]*?)\s*(\**)\s*([A-Za-z_]\w*)\s*((?:\[\w*\])*)", text)
        if not m:
            raise ValueError("cannot parse parameter '%s'" % text)
        self.const = bool(m.group(1))
        self.base = re.sub(r"\s+", " ", m.group(2)).strip()
        self.stars = len(m.group(3))
        self.name = m.group(4)
        self.dims = re.findall(r"\[(\w*)\]", m.group(5))
        self.is_array = bool(self.dims)
        self.depth = self.stars + (1 if self.dims else 0)


def classify(arg, typekinds):
    """The kind of a parameter, or raise ValueError with the reason."""
    b = arg.base
    if b == "void":
        if arg.stars == 1 and not arg.is_array and arg.name in CHOICE_NAMES:
            return "choice"
        raise ValueError("void *%s is not a choice buffer" % arg.name)
    if b == "char":
        if (arg.stars == 1 and not arg.is_array) or (arg.stars == 0 and len(arg.dims) == 1):
            return "str_in" if arg.const else "str_out"
        raise ValueError("char argument %s" % arg.text)
    if b == "MPI_Status":
        if arg.depth != 1:
            raise ValueError("status argument %s" % arg.text)
        if arg.name in ("statuses", "array_of_statuses") or arg.is_array:
            return "statuses"
        return "status_in" if arg.const else "status"
    if b.endswith(("_function", "_function_c")):
        if b in PASSABLE_CALLBACKS and arg.stars == 1:
            return "callback"
        raise ValueError("callback type %s has no Fortran form here" % b)
    if b == "MPI_Fint":
        raise ValueError("MPI_Fint argument (a C-only conversion)")
    if b in ("int",) or typekinds.get(b) == "int":
        kind = "int"
    elif typekinds.get(b) in ("aint", "offset", "count"):
        kind = typekinds[b]
    elif b in ("long long", "unsigned long long"):
        kind = "int8"
    else:
        raise ValueError("type %s" % b)
    if arg.depth == 0:
        return kind + "_in"
    if arg.stars <= 1:
        return kind + "_ref"  # output scalar, or array
    raise ValueError("pointer depth of %s" % arg.text)


FKIND = {
    "int": "INTEGER", "aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
    "offset": "INTEGER(KIND=MPI_OFFSET_KIND)", "count": "INTEGER(KIND=MPI_COUNT_KIND)",
    "int8": "INTEGER(KIND=8)",
}
CTYPE = {"int": "int", "aint": "MPI_Aint", "offset": "MPI_Offset", "count": "MPI_Count",
         "int8": "long long"}


def fortran_decl(arg, kind):
    """Declaration line of a dummy argument in the module's interface."""
    n = arg.name
    if kind == "choice":
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n, "TYPE(*), DIMENSION(*) :: %s" % n]
    if kind in ("str_in", "str_out"):
        return ["CHARACTER(LEN=*) :: %s" % n]
    if kind in ("status", "status_in"):
        return ["INTEGER :: %s(MPI_STATUS_SIZE)" % n]
    if kind == "statuses":
        return ["INTEGER :: %s(MPI_STATUS_SIZE,*)" % n]
    if kind == "callback":
        return ["EXTERNAL :: %s" % n]
    base = kind.split("_")[0]
    t = FKIND[base]
    if base == "int" and n in LOGICAL_NAMES:
        t = "LOGICAL"
    if arg.is_array:
        if len(arg.dims) == 2:  # int ranges[][3] -> ranges(3,*)
            return ["%s :: %s(%s,*)" % (t, n, arg.dims[1])]
        return ["%s :: %s(*)" % (t, n)]
    return ["%s :: %s" % (t, n)]


class COnly(ValueError):
    """A C function the standard gives no Fortran binding."""


class Binding:
    def __init__(self, ret, name, params, typekinds):
        if name.endswith(specials.C_ONLY_SUFFIXES):
            raise COnly("a conversion between C and Fortran, which the standard defines in C only")
        self.ret, self.name = ret, name
        self.fname = name.upper()
        self.cname = name.lower() + "_"
        if ret == "int":
            self.kind = "sub"
        elif ret == "double":
            self.kind = "double"
        elif typekinds.get(ret) == "aint":
            self.kind = "aint"
        else:
            raise ValueError("returns %s" % ret)
        if name.upper() == name:
            raise ValueError("a C predefined callback (Fortran has its own, see 'procedure' lines)")
        self.args = []
        if params in ("", "void"):
            return
        for p in params.split(","):
            p = p.strip()
            if p == "...":
                raise ValueError("variable arguments")
            a = Arg(p)
            a.kind = classify(a, typekinds)
            self.args.append(a)
        if self.kind != "sub" and any(a.kind not in ("int_in", "aint_in") for a in self.args):
            raise ValueError("a function with reference arguments")
        if any(a.kind == "statuses" for a in self.args) and not self.count_arg():
            raise ValueError("array of statuses without a count")

    def count_arg(self):
        for a in self.args:
            if a.kind == "int_in" and a.name in ("count", "incount"):
                return a
        return None


def c_param(a):
    """The C side's declaration of parameter a (as c_wrapper declares it)."""
    n, k = a.name, a.kind
    if k.endswith("_in") and k not in ("str_in", "status_in"):
        return "const %s *%s" % (CTYPE[k[:-3]], n)
    return {"choice": "void *%s", "str_in": "const char *%s", "str_out": "char *%s",
            "status_in": "const MPI_Fint *%s", "status": "MPI_Fint *%s", "statuses": "MPI_Fint *%s",
            "callback": a.base + " *%s"}.get(k, "void *%s") % n


def c_wrapper(b):
    """C source of one binding."""
    params, pre, call, post, free = [], [], [], [], []
    strs = []
    for a in b.args:
        n, k = a.name, a.kind
        if k.endswith("_in") and k not in ("str_in", "status_in"):
            params.append("const %s *%s" % (CTYPE[k[:-3]], n))
            call.append("*%s" % n)
        elif k.endswith("_ref"):
            params.append("void *%s" % n)
            call.append(n)
            if a.name in LOGICAL_NAMES and not a.is_array and not a.const:
                post.append("    *(int *)%s = *(int *)%s != 0;" % (n, n))
            if a.name == "index" and not a.is_array:
                post.append("    if (rc == MPI_SUCCESS && *(int *)%s >= 0)\n"
                            "        *(int *)%s += 1;" % (n, n))
            if a.name in ("indices", "array_of_indices"):
                post.append("    if (rc == MPI_SUCCESS && *(int *)outcount != MPI_UNDEFINED)\n"
                            "        for (int i = 0; i < *(int *)outcount; i++)\n"
                            "            ((int *)%s)[i] += 1;" % n)
        elif k == "choice":
            params.append("void *%s" % n)
            call.append("bdmpi_f_buf(%s)" % n)
        elif k == "callback":
            params.append("%s *%s" % (a.base, n))
            call.append(n)
        elif k == "str_in":
            params.append("const char *%s" % n)
            strs.append(n)
            pre.append("    char *c_%s = bdmpi_f_cstr(%s, %s_len);" % (n, n, n))
            call.append("c_%s" % n)
            free.append("    free(c_%s);" % n)
        elif k == "str_out":
            params.append("char *%s" % n)
            strs.append(n)
            pre.append("    size_t c_%s_size = %s_len + 1 > 4096 ? %s_len + 1 : 4096;\n"
                       "    char *c_%s = calloc(1, c_%s_size);" % (n, n, n, n, n))
            call.append("c_%s" % n)
            post.append("    if (c_%s)\n        bdmpi_f_fstr(c_%s, %s, %s_len);" % (n, n, n, n))
            free.append("    free(c_%s);" % n)
        elif k == "status_in":
            params.append("const MPI_Fint *%s" % n)
            pre.append("    MPI_Status c_%s;\n    memcpy(&c_%s, %s, sizeof c_%s);" % (n, n, n, n))
            call.append("&c_%s" % n)
        elif k == "status":
            params.append("MPI_Fint *%s" % n)
            pre.append("    MPI_Status c_%s, *p_%s = MPI_STATUS_IGNORE;\n"
                       "    if (%s != bdmpi_status_ignore_ && %s != bdmpi_statuses_ignore_) {\n"
                       "        memcpy(&c_%s, %s, sizeof c_%s);\n"
                       "        p_%s = &c_%s;\n    }" % (n, n, n, n, n, n, n, n, n))
            call.append("p_%s" % n)
            post.append("    if (p_%s != MPI_STATUS_IGNORE)\n"
                        "        memcpy(%s, &c_%s, sizeof c_%s);" % (n, n, n, n))
        elif k == "statuses":
            cnt = b.count_arg().name
            params.append("MPI_Fint *%s" % n)
            pre.append("    MPI_Status *c_%s = MPI_STATUSES_IGNORE;\n"
                       "    if (%s != bdmpi_statuses_ignore_ && %s != bdmpi_status_ignore_ && *%s > 0) {\n"
                       "        c_%s = calloc((size_t)*%s, sizeof(MPI_Status));\n"
                       "        if (!c_%s) {\n"
                       "            *ierror = MPI_ERR_NO_MEM;\n"
                       "            return;\n"
                       "        }\n"
                       "        memcpy(c_%s, %s, (size_t)*%s * sizeof(MPI_Status));\n"
                       "    }" % (n, n, n, cnt, n, cnt, n, n, n, cnt))
            call.append("c_%s" % n)
            post.append("    if (c_%s != MPI_STATUSES_IGNORE)\n"
                        "        memcpy(%s, c_%s, (size_t)*%s * sizeof(MPI_Status));" % (n, n, n, cnt))
            free.append("    if (c_%s != MPI_STATUSES_IGNORE)\n        free(c_%s);" % (n, n))
        else:
            raise AssertionError(k)
    hidden = ["size_t %s_len" % s for s in strs]
    if b.kind == "sub":
        sig = "void %s(%s)" % (b.cname, ", ".join(params + ["MPI_Fint *ierror"] + hidden))
        body = pre + ["    int rc = %s(%s);" % (b.name, ", ".join(call))]
        body += post + free + ["    *ierror = rc;"]
    else:
        rtype = "double" if b.kind == "double" else "MPI_Aint"
        sig = "%s %s(%s)" % (rtype, b.cname, ", ".join(params) or "void")
        body = ["    return %s(%s);" % (b.name, ", ".join(call))]
    return "%s;\n%s\n{\n%s\n}\n" % (sig, sig, "\n".join(body))


# Routines whose choice buffers MPI keeps using after they return
# (nonblocking, persistent, one-sided, split collective, attached buffers):
# mpi_f08 passes those buffers as descriptors, with no copy, and the C side
# refuses a non-contiguous section (f_special.c:bdmpi_f_contig).
DEFERRED_ALSO = {"Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap",
                 "Win_create", "Win_attach", "Buffer_attach"}
# Routines that only take the buffer's address (mpi_f08: a descriptor's,
# whatever the section's layout).
ADDRESS_ONLY = {"MPI_Get_address", "MPI_Address", "MPI_Win_detach"}


def buffer_mode(b):
    """How mpi_f08 passes b's choice buffers: 'copy' (assumed size: the
    compiler copies a non-contiguous section in and out around the call),
    'deferred' or 'address' (descriptors, see above)."""
    if not any(a.kind == "choice" for a in b.args):
        return "copy"
    if b.name in ADDRESS_ONLY:
        return "address"
    n = re.sub(r"_c$", "", b.name[4:])
    if (re.match(r"I[a-z]", n) or n.startswith("File_i") or n.endswith(("_init", "_begin", "_end"))
            or (n.startswith("R") and n[1:].lower() in ("put", "get", "accumulate", "get_accumulate"))
            or n in DEFERRED_ALSO):
        return "deferred"
    return "copy"


def f08_csym(b):
    """The C function mpi_f08's MPI_<name> calls."""
    return b.cname if buffer_mode(b) == "copy" else "bdmpi_f08_" + b.name[4:].lower()


def check_descriptor_form(b):
    """A descriptor form is BIND(C) in the module mpi: every argument must
    be interoperable there (no strings, no LOGICALs)."""
    for a in b.args:
        if a.kind in ("str_in", "str_out") or (a.name in LOGICAL_NAMES and a.kind.startswith("int")):
            sys.exit("gen_fortran: %s has a buffer MPI keeps and a %s argument %s: "
                     "its descriptor form cannot be BIND(C)" % (b.name, a.kind, a.name))


def mpi_csym(b):
    """The C function of the module mpi's descriptor form of b (an alias of
    mpi_f08's)."""
    return "bdmpi_fts_" + b.name[4:].lower()


def c_f08_wrapper(b):
    """C source of the descriptor form of a routine (mode 'deferred' or
    'address'): the buffers' addresses, then the routine's C side."""
    mode = buffer_mode(b)
    obj = ("'c'", "MPI_COMM_WORLD")
    for a in b.args:
        if a.kind == "int_in" and a.base in ("MPI_Comm", "MPI_Win", "MPI_File"):
            obj = ("'%s'" % {"MPI_Comm": "c", "MPI_Win": "w", "MPI_File": "f"}[a.base], "*" + a.name)
            break
    params, pre, call = [], [], []
    for a in b.args:
        if a.kind == "choice":
            params.append("CFI_cdesc_t *%s" % a.name)
            if mode == "address":
                call.append("bdmpi_f_addr(%s)" % a.name)
            else:
                pre.append("    void *a_%s;\n"
                           "    if (bdmpi_f_contig(%s, &a_%s, %s, %s, \"%s\", \"%s\", ierror))\n"
                           "        return;" % (a.name, a.name, a.name, obj[0], obj[1], b.name, a.name))
                call.append("a_%s" % a.name)
        else:
            params.append(c_param(a))
            call.append(a.name)
    hidden = ["size_t %s_len" % a.name for a in b.args if a.kind in ("str_in", "str_out")]
    sig = "void %s(%s)" % (f08_csym(b), ", ".join(params + ["MPI_Fint *ierror"] + hidden))
    body = pre + ["    %s(%s);" % (b.cname, ", ".join(call + ["ierror"] + [h.split()[1] for h in hidden]))]
    alias = "void %s(%s)" % (mpi_csym(b), ", ".join(params + ["MPI_Fint *ierror"] + hidden))
    return "%s;\n%s\n{\n%s\n}\n%s __attribute__((alias(\"%s\")));\n" % (
        sig, sig, "\n".join(body), alias, f08_csym(b))


def wrap_free(line, indent):
    """Split a free-form line at commas to at most 100 columns."""
    out = []
    while len(indent + line) > 100:
        cut = line.rfind(", ", 0, 100 - len(indent) - 2)
        if cut < 0:
            break
        out.append(indent + line[:cut + 1] + " &")
        line = line[cut + 2:]
        indent = indent + "    " if len(out) == 1 else indent
    out.append(indent + line)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--incdir", required=True)
    ap.add_argument("--address-kind", type=int, default=8)
    ap.add_argument("headers", nargs="+")
    opt = ap.parse_args()
    texts = [open(h).read() for h in opt.headers]
    consts, skipped_consts = parse_defines(texts)
    cnames = {n for n, _ in consts}
    status_size = None
    m = re.search(r"#define MPI_F_STATUS_SIZE (\d+)", texts[0])
    if m:
        status_size = int(m.group(1))
    fields = {}
    for f in ("SOURCE", "TAG", "ERROR"):
        m = re.search(r"#define MPI_F_%s (\d+)" % f, texts[0])
        fields[f] = int(m.group(1)) + 1 if m else None
    if status_size is None or None in fields.values():
        sys.exit("gen_fortran: mpi.h lacks MPI_F_STATUS_SIZE or MPI_F_SOURCE/TAG/ERROR")
    extra = [("MPI_STATUS_SIZE", status_size), ("MPI_SOURCE", fields["SOURCE"]),
             ("MPI_TAG", fields["TAG"]), ("MPI_ERROR", fields["ERROR"]),
             ("MPI_INTEGER_KIND", 4), ("MPI_ADDRESS_KIND", opt.address_kind),
             ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8)]
    consts = [c for c in extra if c[0] not in cnames] + consts
    typekinds = parse_typedefs(texts)

    bindings, skipped, c_only = [], [], []
    seen = set()
    for ret, name, params in parse_prototypes(texts):
        if name in seen:
            continue
        seen.add(name)
        if name in SPECIAL:
            continue
        try:
            bindings.append(Binding(ret, name, params, typekinds))
        except COnly as e:
            c_only.append((name, str(e)))
        except ValueError as e:
            skipped.append((name, str(e)))
    # The hand-written routines the C library has (MPI_F_sync_reg is
    # Fortran's alone), and the predefined procedures.
    specials_bound = [n for n, _, _ in specials.SPECIALS if n in seen or n == "MPI_F_sync_reg"]
    procedures = [p for p, _ in specials.PROCEDURES]
    skipped = [(n, why) for n, why in skipped if n not in procedures]
    for name in declared_names(texts):
        if name not in seen:
            seen.add(name)
            skipped.append((name, "declaration not understood by gen_fortran.py"))
    kinds = const_kinds(texts)

    # ---- mpif.h ----
    fh = ["! mpif.h: BDMPI's MPI for Fortran (INCLUDE 'mpif.h').",
          "! Generated from mpi.h by src/fortran/gen_fortran.py; do not edit.",
          "! Valid as fixed and as free source form."]
    decl = []
    for n, v in consts:
        decl.append("      INTEGER%s %s" % ("(KIND=%s)" % kinds[n] if n in kinds else "", n))
        decl.append("      PARAMETER (%s=%d)" % (n, v))
    decl += ["      LOGICAL MPI_SUBARRAYS_SUPPORTED",
             "      PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)",
             "      LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING",
             "      PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)"]
    common = []
    for fname, blk, dims, _, _, ftype in SENTINELS:
        common.append("      %s %s%s" % (ftype, fname, dims))
        common.append("      COMMON /%s/ %s" % (blk, fname))
    for p in procedures:
        common.append("      EXTERNAL %s" % p)
    funcs = []
    for b in bindings:
        if b.kind == "double":
            funcs.append("      DOUBLE PRECISION %s" % b.fname)
            funcs.append("      EXTERNAL %s" % b.fname)
        elif b.kind == "aint":
            funcs.append("      INTEGER(KIND=MPI_ADDRESS_KIND) %s" % b.fname)
            funcs.append("      EXTERNAL %s" % b.fname)
    body = decl + common + funcs
    for line in body:
        if len(line) > 72:
            sys.exit("gen_fortran: mpif.h line longer than 72 columns: " + line)
    with open(os.path.join(opt.incdir, "mpif.h"), "w") as f:
        f.write("\n".join(fh + body) + "\n")

    # ---- mpi.f90 ----
    m = ["! module mpi: BDMPI's MPI for Fortran (USE mpi).",
         "! Generated from mpi.h by src/fortran/gen_fortran.py; do not edit.",
         "MODULE mpi",
         "  IMPLICIT NONE"]
    # The module's nonblocking routines take ASYNCHRONOUS descriptors, as
    # mpi_f08's do (below), unlike mpif.h's.
    m += ["  " + line.strip().replace("MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.",
                                      "MPI_ASYNC_PROTECTS_NONBLOCKING=.TRUE.") for line in decl + common]
    sizeof_generic, sizeof_procs = specials.sizeof_procs(False)
    m += sizeof_generic
    m.append("  PRIVATE :: " + ", ".join("bdmpi_sizeof_%s" % t for t, _ in specials.SIZEOF_TYPES))
    m.append("  INTERFACE")
    imp = "    IMPORT :: MPI_ADDRESS_KIND, MPI_OFFSET_KIND, MPI_COUNT_KIND, MPI_STATUS_SIZE"
    for b in bindings:
        names = [a.name for a in b.args]
        mode = buffer_mode(b)
        if b.kind == "sub" and mode != "copy":
            # The descriptor form (c_f08_wrapper): no temporary copy of a
            # section MPI uses after the call.  Under a name of its own,
            # since gfortran compares the interfaces of one binding label
            # across a file, and a file may use mpi in one routine and
            # mpi_f08 (whose handles are derived types) in another.
            head = "SUBROUTINE %s(%s) BIND(C, NAME=\"%s\")" % (b.fname, ", ".join(names + ["ierror"]),
                                                               mpi_csym(b))
            end = "END SUBROUTINE %s" % b.fname
        elif b.kind == "sub":
            head = "SUBROUTINE %s(%s)" % (b.fname, ", ".join(names + ["ierror"]))
            end = "END SUBROUTINE %s" % b.fname
        else:
            t = "DOUBLE PRECISION" if b.kind == "double" else "INTEGER(KIND=MPI_ADDRESS_KIND)"
            head = "%s FUNCTION %s(%s)" % (t, b.fname, ", ".join(names))
            end = "END FUNCTION %s" % b.fname
        m += wrap_free(head, "  ")
        m.append(imp)
        m.append("    IMPLICIT NONE")
        for a in b.args:
            if a.kind == "choice" and mode != "copy":
                m.append("    TYPE(*), DIMENSION(..)%s :: %s"
                         % (", ASYNCHRONOUS" if mode == "deferred" else "", a.name))
            else:
                m += ["    " + d for d in fortran_decl(a, a.kind)]
        if b.kind == "sub":
            m.append("    INTEGER :: ierror")
        m.append("  " + end)
    m.append("  END INTERFACE")
    m += specials.mpi_interfaces(seen)
    m += ["CONTAINS"] + sizeof_procs + ["END MODULE mpi"]
    out = []
    for ln in m:
        out += wrap_free(ln.strip(), ln[:len(ln) - len(ln.lstrip())]) if len(ln) > 100 else [ln]
    with open(os.path.join(opt.outdir, "mpi.f90"), "w") as f:
        f.write("\n".join(out) + "\n")

    # ---- mpi_f08.f90 ----
    handle_types = {n for n, k in typekinds.items() if k == "int" and n != "MPI_Fint"}
    f08_skipped = gen_f08.write(os.path.join(opt.outdir, "mpi_f08.f90"), consts, kinds,
                                gen_f08.handle_casts(texts, handle_types), bindings, specials_bound,
                                handle_types, SENTINELS, LOGICAL_NAMES, buffer_mode, f08_csym)

    # ---- bdmpi_f.c ----
    c = ["/* BDMPI's Fortran bindings, generated from mpi.h by src/fortran/gen_fortran.py;",
         " * do not edit.  See that script for the conventions. */",
         "#include <ISO_Fortran_binding.h>", "#include <stdlib.h>", "#include <string.h>", "",
         "#include \"mpi.h\"", "",
         "/* f_special.c: the addresses of mpi_f08's descriptor arguments. */",
         "int bdmpi_f_contig(const CFI_cdesc_t *d, void **addr, int kind, MPI_Fint handle,",
         "                   const char *call, const char *arg, MPI_Fint *ierror);",
         "void *bdmpi_f_addr(const CFI_cdesc_t *d);", "",
         "_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),",
         "               \"a Fortran status holds a C status\");",
         "_Static_assert(sizeof(MPI_Aint) == %d, \"MPI_ADDRESS_KIND is sizeof(MPI_Aint)\");" % opt.address_kind,
         "",
         "/* The sentinels' common blocks: a Fortran program passes these variables,",
         " * recognised here by their address. */"]
    for fname, blk, dims, sym, _, _ in SENTINELS:
        if sym is None:
            continue
        size = {"": "1", "(MPI_STATUS_SIZE)": "MPI_F_STATUS_SIZE",
                "(MPI_STATUS_SIZE,1)": "MPI_F_STATUS_SIZE"}[dims]
        # gfortran aligns common blocks to 16 bytes; the definition must too.
        c.append("MPI_Fint %s[%s] __attribute__((aligned(16)));" % (sym, size))
    c += ["",
          "static void *bdmpi_f_buf(void *p)",
          "{",
          "    if (p == (void *)bdmpi_bottom_)",
          "        return MPI_BOTTOM;",
          "    if (p == (void *)bdmpi_in_place_)",
          "        return MPI_IN_PLACE;",
          "    return p;",
          "}",
          "",
          "/* A Fortran string (len bytes, blank-padded) as a C string without the",
          " * trailing blanks; NULL if out of memory (the C call then reports it). */",
          "static char *bdmpi_f_cstr(const char *s, size_t len)",
          "{",
          "    while (len > 0 && s[len - 1] == ' ')",
          "        len--;",
          "    char *c = malloc(len + 1);",
          "    if (c) {",
          "        memcpy(c, s, len);",
          "        c[len] = 0;",
          "    }",
          "    return c;",
          "}",
          "",
          "/* A C string into a Fortran one of len bytes: truncated or blank-padded. */",
          "static void bdmpi_f_fstr(const char *c, char *s, size_t len)",
          "{",
          "    size_t n = strlen(c);",
          "    if (n > len)",
          "        n = len;",
          "    memcpy(s, c, n);",
          "    memset(s + n, ' ', len - n);",
          "}", ""]
    for b in bindings:
        c.append(c_wrapper(b))
    descriptor = [b for b in bindings if buffer_mode(b) != "copy"]
    for b in descriptor:
        check_descriptor_form(b)
    c.append("/* mpi_f08's descriptor forms (gen_fortran.py:buffer_mode). */")
    for b in descriptor:
        c.append(c_f08_wrapper(b))
    with open(os.path.join(opt.outdir, "bdmpi_f.c"), "w") as f:
        f.write("\n".join(c))

    # ---- bindings.txt ----
    with open(os.path.join(opt.outdir, "bindings.txt"), "w") as f:
        f.write("# Fortran bindings generated from %s\n" % ", ".join(os.path.basename(h) for h in opt.headers))
        f.write("# bound: %d routines, %d predefined procedures, %d constants\n"
                % (len(bindings) + len(specials_bound), len(procedures), len(consts)))
        for b in bindings:
            f.write("bound %s\n" % b.name)
        for n in specials_bound:
            f.write("bound %s (written by hand: f_special.c, specials.py)\n" % n)
        for n in procedures:
            f.write("procedure %s (predefined, f_special.c)\n" % n)
        f.write("fortran-only MPI_Sizeof (a generic of module procedures in mpi and mpi_f08)\n")
        for b in descriptor:
            f.write("f08 descriptor %s %s %s (%s buffers)\n" % (b.name, f08_csym(b), mpi_csym(b),
                                                                 buffer_mode(b)))
        for n, why in c_only:
            f.write("c-only %s: %s\n" % (n, why))
        for n, why in skipped:
            f.write("not bound %s: %s\n" % (n, why))
        for n, why in f08_skipped:
            f.write("not in mpi_f08 %s: %s\n" % (n, why))
        for n, why in skipped_consts:
            if why:
                f.write("not a parameter %s: %s\n" % (n, why))
            else:
                f.write("not a Fortran constant %s\n" % n)


if __name__ == "__main__":
    main()
