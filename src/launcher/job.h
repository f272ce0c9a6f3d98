/* The processes of one job, found by the mark bdmpiexec puts in their
 * environment.
 *
 * A job's processes do not share a process group or a session: MPICH's
 * launcher (hydra) puts its proxy and each master in sessions of their
 * own.  So bdmpiexec marks the job: it exports BD_JOB_ID_ENV=<random id>
 * before it starts anything, every process of the job (the MPI launcher,
 * its proxies, the masters, the ranks and whatever they start) inherits it,
 * and /proc/<pid>/environ shows it for as long as the process lives.  Only
 * processes of our own user are looked at, and only a process carrying this
 * job's id is ever signalled: never another job's. */
#ifndef BD_LAUNCHER_JOB_H
#define BD_LAUNCHER_JOB_H

#include <stddef.h>
#include <sys/types.h>

#define BD_JOB_ID_ENV "BDMPI_JOB_ID"

/* A fresh random id ("%016llx") in out (at least 17 bytes).  Called before
 * any process of the job is started: it also notes when we started, and
 * processes older than that are never looked at as the job's. */
void bd_job_id_make(char *out, size_t len);

/* What /proc/PID/stat says of a process: its state letter ('Z' zombie,
 * 'X' dead), its parent and when it started (clock ticks since boot). */
typedef struct {
    char state;
    pid_t ppid;
    unsigned long long start;
} bd_job_proc_stat_t;

/* Fills out; 0, or -1 when pid is gone (or /proc cannot be read). */
int bd_job_proc_stat(pid_t pid, bd_job_proc_stat_t *out);

/* pid exists and is not a zombie (a zombie has ended; its parent reaps it). */
int bd_job_proc_alive(pid_t pid);

/* The live processes carrying id, except skip (our own helper; 0: none),
 * in out (at most max).  Returns how many were found (possibly more than
 * max). */
int bd_job_procs_find(const char *id, pid_t skip, pid_t *out, int max);

/* Wait up to grace_ms for every process carrying id to end, then SIGKILL
 * those left and wait up to 2 s more for them to go.  Returns how many had
 * to be killed (0: the job had ended by itself); their pids are listed in
 * killed (up to nkilled_max). */
int bd_job_procs_end(const char *id, pid_t skip, int grace_ms, pid_t *killed, int nkilled_max);

#endif
