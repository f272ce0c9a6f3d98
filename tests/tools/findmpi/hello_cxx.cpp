// The C++ twin of hello_c.c, through MPI::MPI_CXX.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, len;
    std::vector<char> lib(MPI_MAX_LIBRARY_VERSION_STRING);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_library_version(lib.data(), &len);
    std::vector<int> all(size);
    MPI_Allgather(&rank, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    bool ok = true;
    for (int i = 0; i < size; i++)
        ok = ok && all[i] == i;
    if (rank == 0)
        std::printf("hello_cxx: %d ranks, %s\n", size, std::string(lib.data(), len).c_str());
    MPI_Finalize();
    return ok ? 0 : 1;
}
