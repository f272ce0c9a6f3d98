#!/bin/bash
# netns.sh BDMPIEXEC PROGRAM [NN]
# Runs a job whose masters live on separate "hosts": one network namespace
# each, with its own address on a private bridge made for the test, started
# by MPICH's launcher through `ip netns exec` instead of ssh.  The bridge
# and the launcher live in a namespace of their own too: interfaces that
# appear and vanish in the root namespace broke other tests' jobs running
# at the same time (UCX inside MPICH enumerates the interfaces at
# MPI_Init: "init_worker ... No such device").  Skips (77) where
# namespaces cannot be made (not root, no ip, no permission).
set -u
exe=$1; prog=$2; nn=${3:-2}
[ "$(id -u)" = 0 ] && command -v ip >/dev/null || { echo "SKIP: needs root and ip(8)"; exit 77; }
id=$(( ($$ + RANDOM) % 200 + 20 ))
net=10.213.$id
br=bdbr$id
tmp=$(mktemp -d /tmp/bdmpi-netns.XXXXXX)
hub=bdns$id-hub
cleanup() {
  for k in $(seq 0 $((nn - 1))); do ip netns del bdns$id-$k 2>/dev/null; done
  ip netns del "$hub" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$hub" 2>/dev/null || { echo "SKIP: cannot create network namespaces"; exit 77; }
if ! ip -n "$hub" link add "$br" type bridge 2>/dev/null; then echo "SKIP: cannot create a bridge here"; exit 77; fi
ip -n "$hub" addr add "$net.1/24" dev "$br" && ip -n "$hub" link set "$br" up && ip -n "$hub" link set lo up ||
  { echo "SKIP: cannot configure the bridge"; exit 77; }
: > "$tmp/hosts"
for k in $(seq 0 $((nn - 1))); do
  ns=bdns$id-$k
  ip netns add "$ns" || { echo "SKIP: cannot create network namespaces"; exit 77; }
  ip -n "$hub" link add "bdv$id-$k" type veth peer name eth0 netns "$ns" || { echo "SKIP: no veth"; exit 77; }
  ip -n "$hub" link set "bdv$id-$k" master "$br" up
  ip -n "$ns" addr add "$net.$((k + 2))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  echo "$net.$((k + 2))" >> "$tmp/hosts"
done
# The "ssh" that MPICH's launcher uses: run the command in the host's namespace.
cat > "$tmp/nsexec" <<EOS
#!/bin/bash
while [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
ns=bdns$id-\$(( \${host##*.} - 2 ))
exec ip netns exec "\$ns" sh -c "\$*"
EOS
chmod +x "$tmp/nsexec"
out=$(BDMPI_MPIEXEC_ARGS="-launcher ssh -launcher-exec $tmp/nsexec -localhost $net.1" \
      timeout 120 ip netns exec "$hub" "$exe" -nn "$nn" -f "$tmp/hosts" -ns 4 -nr 1 "$prog" 2>&1)
rc=$?
echo "$out" | tail -20
if [ $rc -ne 0 ]; then echo "FAIL: the job exited with $rc"; exit 1; fi
echo "PASS: $nn masters in separate network namespaces ($net.2 ...)"
exit 0
