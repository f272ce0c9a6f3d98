#!/usr/bin/env python3
"""Write BDMPI's man pages from the texts its programs already print.

  gen_man.py help NAME SECTION SUMMARY [SEE-ALSO...] < HELP-TEXT > NAME.SECTION
      A program's page from its --help output (bdmpiexec -h, bdmpicc -h),
      so the page says what --help says: the usage line(s) become the
      synopsis, lines that start with two blanks and a dash are the options
      (their more indented lines the option's text), the rest is prose.
  gen_man.py header HEADER > bdmpi.3
      The page of the BDMPI_* extension calls and constants from bdmpi.h:
      each comment with the declarations that follow it.
  gen_man.py alias PAGE > NAME.SECTION
      A page that points to another (".so PAGE").

The pages are roff with the man macros; test docs.man checks them.
"""
import re
import sys

VERSION_DATE = "BDMPI"


def esc(text):
    """Escape text for roff: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def bold_options(text):
    """Option names in prose in bold: -n, --showme:link, BDMPI_CC stay literal."""
    return re.sub(r"(?<![\w\\])(\\-(?:\\-)?[a-z][\w:]*(?:\\-[a-z][\w:]*)*)", r"\\fB\1\\fR", text)


def page_from_help(name, section, summary, see_also, help_text):
    lines = help_text.rstrip("\n").split("\n")
    out = [".TH %s %s \"\" \"%s\" \"BDMPI\"" % (name.upper(), section, VERSION_DATE),
           ".SH NAME", "%s \\- %s" % (esc(name), esc(summary))]
    usage, body = [], []
    for ln in lines:
        if not body and ln.startswith("usage:"):
            usage.append(ln[len("usage:"):].strip())
        else:
            body.append(ln)
    if usage:
        out.append(".SH SYNOPSIS")
        for u in usage:
            out += [".nf", "\\fB%s\\fR" % esc(u), ".fi"]
    out.append(".SH DESCRIPTION")
    in_opts = False
    para = []

    def flush():
        if para:
            out.append(bold_options(esc(" ".join(s.strip() for s in para))))
            del para[:]

    for ln in body:
        if re.match(r"^  -{1,2}\S", ln):  # an option, maybe with its text after 2+ blanks
            flush()
            in_opts = True
            parts = re.split(r" {2,}", ln.strip(), maxsplit=1)
            term, rest = parts[0], parts[1] if len(parts) > 1 else ""
            out += [".TP", "\\fB%s\\fR" % esc(term)]
            if rest:
                para.append(rest)
        elif in_opts and re.match(r"^ {3,}\S", ln):  # the option's text
            para.append(ln)
        elif not ln.strip():
            flush()
            if not in_opts:
                out.append(".PP")
        else:
            flush()
            if in_opts and not ln.startswith(" "):
                in_opts = False
                out.append(".PP")
            para.append(ln)
    flush()
    if see_also:
        out += [".SH SEE ALSO", ", ".join("\\fB%s\\fR" % esc(s) for s in see_also)]
    return "\n".join(out) + "\n"


def page_from_header(path):
    text = open(path).read()
    out = [".TH BDMPI 3 \"\" \"%s\" \"BDMPI\"" % VERSION_DATE, ".SH NAME",
           "bdmpi.h \\- BDMPI's extensions to MPI",
           ".SH SYNOPSIS", ".nf", "\\fB#include <mpi.h>\\fR", ".fi", ".SH DESCRIPTION"]
    # Comment blocks followed by declarations (#define or prototypes).
    items = re.findall(r"/\*((?:(?!\*/).)*)\*/\s*\n((?:(?:#define|int|void|double)[^\n]*\n)+)",
                       text, re.S)
    for comment, decls in items:
        decls = [d for d in decls.strip().split("\n")
                 if d.startswith(("#define BDMPI", "int BDMPI", "void BDMPI", "double BDMPI"))]
        if not decls:
            continue
        out += [".PP", ".nf"]
        for d in decls:
            out.append("\\fB%s\\fR" % esc(d.strip()))
        out.append(".fi")
        words = " ".join(re.sub(r"^\s*\*\s?", "", l).strip() for l in comment.strip().split("\n"))
        out += [".RS", esc(words.strip()), ".RE"]
    out += [".SH SEE ALSO", "\\fBbdmpiexec\\fR(1), \\fBbdmpicc\\fR(1)"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "help":
        name, section, summary = sys.argv[2], sys.argv[3], sys.argv[4]
        sys.stdout.write(page_from_help(name, section, summary, sys.argv[5:], sys.stdin.read()))
    elif len(sys.argv) == 3 and sys.argv[1] == "header":
        sys.stdout.write(page_from_header(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "alias":
        sys.stdout.write(".so %s\n" % sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
