#!/bin/bash
# symbols_exports.sh LIBBDMPI MPI_H
# Fails when libbdmpi exports a symbol outside the set below, naming each,
# and when it lacks one it must export: MPI_<name> and PMPI_<name> for every
# function of MPI_H's PMPI list, and the overrides all or none (sanitizer
# builds link no overrides).  The library is built with -fvisibility=hidden:
# a name appearing here was marked for export by hand (a visibility pragma
# or attribute), or comes from an object built without the flag.
# Exit 0 pass, 1 fail, 77 skip (no nm).
set -u
lib=$1
hdr=$2
command -v nm >/dev/null || { echo "nm not installed"; exit 77; }

# The allowed set, in three groups of regular expressions over whole names.
public=(
  # The MPI interface of include/mpi.h and include/bdmpi.h: functions,
  # predefined callbacks (MPI_COMM_DUP_FN, ...), profiling twins, extensions.
  '(MPI|PMPI|MPIX|PMPIX|BDMPI)_[A-Za-z0-9_]+'
  # Data objects include/mpi.h declares: MPI_UNWEIGHTED's and
  # MPI_WEIGHTS_EMPTY's markers (their addresses are the values).
  'bdmpi_unweighted_|bdmpi_weights_empty_'
  # AddressSanitizer's ODR indicators of those data objects (sanitizer
  # builds: GCC names them __odr_asan.<name>, Clang __odr_asan_gen_<name>).
  '__odr_asan(\.|_gen_)(bdmpi_unweighted_|bdmpi_weights_empty_)'
)
# The overrides, which interpose on the C library's functions.  They come
# from the static library bdmem_override, linked whole or not at all, so a
# library with malloc must export every one of them.
overrides=(
  # Allocation (src/mem/alloc-override.c).
  'malloc|free|calloc|realloc|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|malloc_usable_size'
  # System calls (src/mem/syscall-override.c): unistd.h, sys/uio.h,
  # sys/socket.h, fcntl.h, sys/random.h ...
  'read|pread|pread64|write|pwrite|pwrite64|readv|preadv|preadv64|preadv2|preadv64v2'
  'writev|pwritev|pwritev64|pwritev2|pwritev64v2'
  'recv|recvfrom|recvmsg|recvmmsg|send|sendto|sendmsg|sendmmsg|vmsplice|getrandom|getentropy'
  # ... and stdio.h.
  'fread|fread_unlocked|fwrite|fwrite_unlocked|setvbuf|setbuffer|setbuf|fclose|pclose'
  # memset (src/mem/fill-override.c).
  'memset'
  # The fortified forms (_FORTIFY_SOURCE) of the overridden calls.
  '__read_chk|__pread_chk|__pread64_chk|__recv_chk|__recvfrom_chk|__fread_chk|__fread_unlocked_chk'
)
all=("${public[@]}" "${overrides[@]}")
allowed="^($(IFS='|'; echo "${all[*]}"))\$"

exported=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {sub(/@.*/, "", $3); print $3}' | sort -u)
[ -n "$exported" ] || { echo "FAIL: no dynamic symbols in $lib"; exit 1; }
fail=0

extra=$(grep -Ev "$allowed" <<<"$exported")
if [ -n "$extra" ]; then
  echo "FAIL: $lib exports $(wc -l <<<"$extra") symbols outside the allowed set" \
       "(give them internal linkage or leave them hidden):"
  sed 's/^/  /' <<<"$extra"
  fail=1
fi

names=$(awk '/BEGIN PMPI LIST/ {on = 1} on {print} /END PMPI LIST/ {on = 0}' "$hdr" |
        grep -o 'X([A-Za-z0-9_]*)' | sed 's/^X(\(.*\))$/\1/')
[ -n "$names" ] || { echo "FAIL: no PMPI list in $hdr"; exit 1; }
missing=$(for n in $names; do echo "MPI_$n"; echo "PMPI_$n"; done | sort -u | comm -23 - <(echo "$exported"))
if grep -qx malloc <<<"$exported"; then
  missing+=$'\n'$(printf '%s\n' "${overrides[@]}" | tr '|' '\n' | sort -u | comm -23 - <(echo "$exported"))
fi
missing=$(grep -v '^$' <<<"$missing")
if [ -n "$missing" ]; then
  echo "FAIL: $lib does not export:"
  sed 's/^/  /' <<<"$missing"
  fail=1
fi

[ $fail = 0 ] && echo "PASS: $(wc -l <<<"$exported") exported symbols, all in the allowed set"
exit $fail
