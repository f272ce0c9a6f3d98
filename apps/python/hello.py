"""hello.py: mpi4py under BDMPI (README, "Python").

Every rank owns a slice of 1..N, sums it, passes a token around a ring and
joins an allreduce; rank 0 prints the total, which must be N*(N+1)/2.

    bdmpiexec -ns 8 -nr 2 python apps/python/hello.py [N]
"""
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000

lo, hi = rank * n // size + 1, (rank + 1) * n // size + 1
part = sum(range(lo, hi))

# a token around the ring: each rank adds one
token = comm.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
assert token == (rank - 1) % size

total = comm.allreduce(part, op=MPI.SUM)
if rank == 0:
    ok = total == n * (n + 1) // 2
    print("%d ranks (%s): sum of 1..%d = %d %s" % (size, MPI.Get_library_version().split("\n")[0],
                                                    n, total, "right" if ok else "WRONG"))
    sys.exit(0 if ok else 1)
