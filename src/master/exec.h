/* Starting a rank's program from a multithreaded master.
 *
 * The master has threads (the stall watchdog, MPICH's and UCX's with
 * -nn > 1), so the child of its fork may call only async-signal-safe
 * functions until it execs: another thread may have held malloc's lock,
 * or the environment's, at the moment of the fork, and the child would
 * wait for it for ever.  setenv (it allocates) and execvp (its PATH search)
 * are not on that list.  So everything the child needs is made before the
 * fork: its environment (ours and the entries given) and the files to try
 * in PATH's order; the child only calls execve. */
#ifndef BDR_EXEC_H
#define BDR_EXEC_H

#include <stddef.h>

typedef struct {
    char **envp;    /* environ without the names set, then the entries set */
    char **paths;   /* the files execvp would try, in its order */
    char **sh_argv; /* "/bin/sh", (the file), argv[1..]: a script without #! */
    int nargs;      /* of argv */
    int npaths;
} bdr_exec_t;

/* Prepare to run path (searched in PATH, as execvp would, when it holds
 * no '/') with argv, in an environment of ours with the nset entries of
 * set ("NAME=value") added or replacing ours.  0, or -ENOMEM. */
int bdr_exec_prepare(bdr_exec_t *x, const char *path, char *const *argv, const char *const *set,
                     int nset);

/* In the child of a fork: execve each file in turn, with execvp's rules
 * (a file not found or not accessible is skipped, a file that is not an
 * executable format is run by /bin/sh).  Async-signal-safe.  Returns only
 * when nothing could be run, with the errno execvp would give. */
int bdr_exec_run(bdr_exec_t *x, char *const *argv);

void bdr_exec_free(bdr_exec_t *x);

#endif
