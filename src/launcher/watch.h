/* bdmpiexec's watch over the masters of a -nn > 1 job on this host. */
#ifndef BD_LAUNCHER_WATCH_H
#define BD_LAUNCHER_WATCH_H

#include <signal.h>
#include <sys/types.h>

/* Ctrl-Z and fg of a -nn > 1 job: bdmpiexec's handler sets SIGTSTP or
 * SIGCONT here and the watch passes it to the masters of this host (and
 * the MPI launcher), since MPICH's launcher, which gives each master a
 * session of its own, does not; on SIGTSTP the watch then stops
 * bdmpiexec itself. */
extern volatile sig_atomic_t bd_job_watch_signal;

/* Wait for the MPI launcher (pid launcher; its status in st) while
 * watching the masters: those MPICH's fork launcher started here (found as
 * its proxies' children) and those that leave "node.N.pid" in jobdir until
 * their orderly end.  A master still running grace_ms after the process
 * that started it ended is killed, saying so.  Returns the node whose
 * master died first without its orderly end (its file still there), or -1;
 * *also gets another node whose master was seen dead the same way at the
 * same moment (which of the two died first cannot be told then), or -1. */
/* ... Signals the masters as bd_job_watch_signal asks. */
int bd_job_masters_watch(pid_t launcher, int *st, const char *jobdir, int nn, int grace_ms,
                         int *also);

#endif
