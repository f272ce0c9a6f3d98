#!/usr/bin/env python3
"""Compare an application's printed checksum with the reference output.

usage: check.py KIND REFERENCE OUTPUT [--rtol R]

KIND pagerank: the "sum S" line and the "top K vertex V rank R" lines.
  Values must agree within R (relative, default 1e-9); a vertex may differ
  from the reference's only where the reference has a tie within R.
KIND kmeans: every "iter T objective X moved M" line and the final
  "clusters" line; objectives within R, moves and sizes exactly; the
  "terms" line (kmeans -V) exactly, and present in both or neither.
KIND sgd: every "iter T rmse X" line and the "final rmse X" line within R.
Exit 0 if they agree, 1 with a message if not."""
import re
import sys


def fail(msg):
    print("CHECK FAILED: " + msg)
    sys.exit(1)


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-300)


def lines(path):
    with open(path) as f:
        return f.read().splitlines()


def pagerank(ref, out, rtol):
    def parse(ls, name):
        s, top = None, []
        for l in ls:
            m = re.match(r"^sum (\S+)$", l)
            if m:
                s = float(m.group(1))
            m = re.match(r"^top (\d+) vertex (\d+) rank (\S+)$", l)
            if m:
                top.append((int(m.group(2)), float(m.group(3))))
        if s is None or not top:
            fail("%s: no checksum lines" % name)
        return s, top

    rs, rt = parse(ref, "reference")
    os_, ot = parse(out, "output")
    if not close(rs, os_, rtol):
        fail("sum %r differs from reference %r" % (os_, rs))
    if len(rt) != len(ot):
        fail("%d top vertices, reference has %d" % (len(ot), len(rt)))
    rval = dict(rt)
    for k, ((ri, rv), (oi, ov)) in enumerate(zip(rt, ot)):
        if not close(rv, ov, rtol):
            fail("top %d: rank %r differs from reference %r" % (k + 1, ov, rv))
        if ri != oi:
            tie = (oi in rval and close(rval[oi], ov, rtol)) or close(rv, rt[-1][1], rtol)
            if not tie:
                fail("top %d: vertex %d, reference has %d" % (k + 1, oi, ri))
    print("OK sum %.15g, %d top vertices match" % (os_, len(ot)))


def kmeans(ref, out, rtol):
    def parse(ls, name):
        its, clusters, terms = [], None, None
        for l in ls:
            m = re.match(r"^iter (\d+) objective (\S+) moved (\d+)", l)
            if m:
                its.append((int(m.group(1)), float(m.group(2)), int(m.group(3))))
            if l.startswith("clusters "):
                clusters = l.split()[1:]
            if l.startswith("terms "):
                terms = l.split()[1:]
        if not its or clusters is None:
            fail("%s: no iteration/cluster lines" % name)
        return its, clusters, terms

    ri, rc, rt = parse(ref, "reference")
    oi, oc, ot = parse(out, "output")
    if rt != ot:
        fail("top terms (-V) differ: %s vs reference %s" % (ot, rt))
    if len(ri) != len(oi):
        fail("%d iterations, reference has %d" % (len(oi), len(ri)))
    for (t, rv, rm), (_, ov, om) in zip(ri, oi):
        if not close(rv, ov, rtol):
            fail("iter %d objective %r differs from reference %r" % (t, ov, rv))
        if rm != om:
            fail("iter %d moved %d, reference %d" % (t, om, rm))
    if rc != oc:
        fail("cluster sizes differ: %s vs reference %s" % (" ".join(oc), " ".join(rc)))
    print("OK %d iterations, final objective %.15g" % (len(oi), oi[-1][1]))


def sgd(ref, out, rtol):
    def parse(ls, name):
        its, fin = [], None
        for l in ls:
            m = re.match(r"^iter (\d+) rmse (\S+)", l)
            if m:
                its.append((int(m.group(1)), float(m.group(2))))
            m = re.match(r"^final rmse (\S+)", l)
            if m:
                fin = float(m.group(1))
        if not its or fin is None:
            fail("%s: no rmse lines" % name)
        return its, fin

    ri, rf = parse(ref, "reference")
    oi, of = parse(out, "output")
    if len(ri) != len(oi):
        fail("%d iterations, reference has %d" % (len(oi), len(ri)))
    for (t, rv), (_, ov) in zip(ri, oi):
        if not close(rv, ov, rtol):
            fail("iter %d rmse %r differs from reference %r" % (t, ov, rv))
    if not close(rf, of, rtol):
        fail("final rmse %r differs from reference %r" % (of, rf))
    print("OK %d iterations, final rmse %.15g" % (len(oi), of))


def main():
    args = sys.argv[1:]
    rtol = 1e-9
    if "--rtol" in args:
        i = args.index("--rtol")
        rtol = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3 or args[0] not in ("pagerank", "kmeans", "sgd"):
        print(__doc__)
        sys.exit(2)
    kind, ref, out = args
    globals()[kind](lines(ref), lines(out), rtol)


if __name__ == "__main__":
    main()
