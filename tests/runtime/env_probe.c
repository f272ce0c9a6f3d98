/* env_probe [NAME=VALUE | -NAME ...]: every rank checks that each NAME is
 * set to VALUE in its environment (what bdmpiexec -genv/-x promise), and
 * that each -NAME is not set (what the launcher set for its masters only,
 * BD_MASTER_ONLY_ENV); rank 0 prints
 * "env_probe: SIZE ranks, ok" or names the first rank and variable that
 * differ.  Exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc && !bad; i++) {
        char name[256];
        if (argv[i][0] == '-') {
            const char *v = getenv(argv[i] + 1);
            if (v) {
                fprintf(stderr, "env_probe: rank %d: %s is '%s', not unset\n", rank, argv[i] + 1,
                        v);
                bad = i;
            }
            continue;
        }
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof name) {
            fprintf(stderr, "env_probe: argument '%s' is not NAME=VALUE\n", argv[i]);
            bad = i;
            break;
        }
        snprintf(name, sizeof name, "%.*s", (int)(eq - argv[i]), argv[i]);
        const char *v = getenv(name);
        if (!v || strcmp(v, eq + 1)) {
            fprintf(stderr, "env_probe: rank %d: %s is %s%s%s, not '%s'\n", rank, name,
                    v ? "'" : "", v ? v : "unset", v ? "'" : "", eq + 1);
            bad = i;
        }
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("env_probe: %d ranks, %s\n", size, anybad ? "FAILED" : "ok");
    MPI_Finalize();
    return anybad ? 1 : 0;
}
