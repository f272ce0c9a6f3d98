#!/usr/bin/env python3
"""layers_includes.py ROOT

Checks the include rules of the source layout (docs/design.md, "Layers"):
each room of src/ includes only its own headers and those of the rooms it
is allowed to use.  Reads every `#include "..."` line of the C sources and
headers under src/, finds the header (next to the including file first,
then by name under src/ and include/, as the build's include paths do) and
prints each include that breaks the rules as file:line: include.
Exit 0 pass, 1 fail.
"""
import os
import re
import sys

# room -> rooms it may include from ("public" is include/).
MAY = {
    "common": {"common", "public"},
    "mem": {"mem", "common", "public"},
    "core": {"core", "common", "mem", "public"},
    "objects": {"objects", "core", "common", "mem", "public"},
    "mpi": {"mpi", "objects", "core", "common", "mem", "public"},
    # MPI-IO sits beside mpi/, on the same rooms.
    "io": {"io", "objects", "core", "common", "mem", "public"},
    # The master includes mpi.h for the handle and datatype constants, and
    # of the memory manager only the node store's API (ONLY below).
    "master": {"master", "common", "public", "mem"},
    "launcher": {"launcher", "common"},
    # The Fortran bindings are a client of the public C API.
    "fortran": {"fortran", "public"},
}

# room -> {lower room: the only headers of it that room may include}.
ONLY = {
    "master": {"mem": {"src/mem/bd_mem_store.h"}},
}

ROOMS = [
    ("include/", "public"),
    ("src/common/", "common"),
    ("src/mem/", "mem"),
    ("src/lib/core/", "core"),
    ("src/lib/objects/", "objects"),
    ("src/lib/mpi/", "mpi"),
    ("src/lib/io/", "io"),
    ("src/master/", "master"),
    ("src/launcher/", "launcher"),
    ("src/fortran/", "fortran"),
]

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def room_of(path):
    for prefix, room in ROOMS:
        if path.startswith(prefix):
            return room
    return ""


def main():
    os.chdir(sys.argv[1])
    tree = []
    for top in ("src", "include"):
        for d, _, files in os.walk(top):
            tree += [os.path.join(d, f) for f in files if f.endswith((".c", ".h"))]
    tree.sort()
    by_name = {}
    for p in tree:
        by_name.setdefault(os.path.basename(p), []).append(p)
    bad = []
    for f in (p for p in tree if p.startswith("src/")):
        room = room_of(f)
        if not room:
            bad.append(f"{f}: in no room of the layout (tests/runtime/layers_includes.py lists them)")
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            for line, text in enumerate(fh, 1):
                m = INCLUDE.match(text)
                if not m:
                    continue
                name = m.group(1)
                near = os.path.join(os.path.dirname(f), name)
                if os.path.isfile(near):
                    hdr = os.path.relpath(os.path.normpath(near))
                else:
                    hits = [p for p in by_name.get(os.path.basename(name), [])
                            if p == name or p.endswith("/" + name)]
                    if not hits:
                        bad.append(f'{f}:{line}: #include "{name}": no such header under src/ or include/')
                        continue
                    if len(hits) > 1:
                        bad.append(f'{f}:{line}: #include "{name}": ambiguous: {" ".join(hits)}')
                        continue
                    hdr = hits[0]
                to = room_of(hdr)
                if to not in MAY[room]:
                    bad.append(f'{f}:{line}: #include "{name}" ({room} may not include {to or hdr}: {hdr})')
                elif to in ONLY.get(room, {}) and hdr not in ONLY[room][to]:
                    bad.append(f'{f}:{line}: #include "{name}" ({room} may include only '
                               f'{" ".join(sorted(ONLY[room][to]))} of {to}: {hdr})')
    for b in bad:
        print(b)
    if bad:
        print(f'FAIL: {len(bad)} includes break the layering (docs/design.md, "Layers")')
        return 1
    print("PASS: every include of src/ follows the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
