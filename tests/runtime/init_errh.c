/* MPI 4.0's initial error handler (BDMPI-specific launcher option, so not
 * among the portable tests/mpi programs).
 *
 *   init_errh expect NAME   every rank starts with the handler NAME on
 *                           MPI_COMM_WORLD and MPI_COMM_SELF (bdmpiexec
 *                           -initial-errhandler NAME, or none given for
 *                           mpi_errors_are_fatal), MPI_Info_create_env's
 *                           mpi_initial_errhandler says NAME, and with
 *                           mpi_errors_return a bad send returns
 *                           MPI_ERR_RANK instead of ending the job
 *   init_errh spawn NAME    rank 0 spawns two children with the info key
 *                           mpi_initial_errhandler NAME; each checks it
 *                           starts with NAME and tells the parent; the
 *                           parent keeps the job's own handler
 *
 * Prints "PASS init_errh" from rank 0; exit 0 pass, 1 fail. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static MPI_Errhandler handle(const char *name)
{
    return !strcmp(name, "mpi_errors_return")  ? MPI_ERRORS_RETURN
           : !strcmp(name, "mpi_errors_abort") ? MPI_ERRORS_ABORT
                                               : MPI_ERRORS_ARE_FATAL;
}

/* 0 when this process started with the handler name says. */
static int check(const char *name, int env)
{
    MPI_Errhandler w, s;
    int bad = 0, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &w);
    MPI_Comm_get_errhandler(MPI_COMM_SELF, &s);
    if (w != handle(name) || s != handle(name)) {
        printf("FAIL init_errh: world %d, self %d, expected %d (%s)\n", (int)w, (int)s,
               (int)handle(name), name);
        bad = 1;
    }
    if (env) {
        char v[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        MPI_Info env;
        MPI_Info_create_env(0, NULL, &env);
        MPI_Info_get(env, "mpi_initial_errhandler", MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_free(&env);
        if (!flag || strcmp(v, name)) {
            printf("FAIL init_errh: MPI_Info_create_env's mpi_initial_errhandler '%s', expected "
                   "%s\n",
                   v, name);
            bad = 1;
        }
    }
    if (handle(name) == MPI_ERRORS_RETURN) {
        int rc = MPI_Send(NULL, 0, MPI_INT, size + 5, 0, MPI_COMM_WORLD), cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_RANK) {
            printf("FAIL init_errh: a send to rank %d gave class %d, expected MPI_ERR_RANK\n",
                   size + 5, cls);
            bad = 1;
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 2 ? argv[1] : "expect";
    const char *name = argc > 2 ? argv[2] : "mpi_errors_are_fatal";
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) { /* a child of "spawn" */
        int mine = check(name, 0), sum = 0;
        MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            MPI_Send(&sum, 1, MPI_INT, 0, 7, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(mode, "spawn")) {
        bad |= check("mpi_errors_are_fatal", 1); /* the job's own ranks keep theirs */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_initial_errhandler", name);
        char *args[] = {"child", (char *)name, NULL};
        MPI_Comm inter;
        int errs[2];
        MPI_Comm_spawn(argv[0], args, 2, info, 0, MPI_COMM_SELF, &inter, errs);
        MPI_Info_free(&info);
        int sum = -1;
        MPI_Recv(&sum, 1, MPI_INT, 0, 7, inter, MPI_STATUS_IGNORE);
        if (sum) {
            printf("FAIL init_errh: %d spawned children did not start with %s\n", sum, name);
            bad = 1;
        }
        MPI_Comm_disconnect(&inter);
    } else {
        bad |= check(name, 1);
    }
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && !all)
        printf("PASS init_errh\n");
    MPI_Finalize();
    return all != 0;
}
