#include "bd_options.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BIG (1LL << 62)

const bd_opt_desc_t bd_opt_table[BD_OPT__COUNT] = {
    [BD_OPT_N] = {"n", BD_OPT_INT, NULL, 1, 4096LL * 4096,
                  "total number of ranks, as mpiexec's -n: -ns becomes N / -nn (an error if N "
                  "is not a multiple of -nn, or if -ns is also given and disagrees)",
                  NULL, "np"},
    [BD_OPT_NN] = {"nn", BD_OPT_INT, "1", 1, 4096,
                   "number of nodes, one master each, started with MPICH's mpiexec (without -f, "
                   "all on this machine, each with its own directory and memory budget)"},
    [BD_OPT_HOSTFILE] = {"f", BD_OPT_STR, NULL, 0, 0,
                         "hostfile for mpiexec when -nn > 1 (one host per line)"},
    [BD_OPT_NS] = {"ns", BD_OPT_INT, "1", 1, 4096, "ranks (slave processes) per node", NULL, "ppn"},
    [BD_OPT_NR] = {"nr", BD_OPT_INT, "1", 1, 4096, "maximum ranks of a node running at once"},
    [BD_OPT_NC] = {"nc", BD_OPT_INT, "1", 1, 4096,
                   "maximum ranks of a node inside BDMPI_Enter_critical at once"},
    [BD_OPT_MAX_SPAWN] = {"max-spawn", BD_OPT_INT, "64", 0, 4096,
                          "ranks MPI_Comm_spawn may have alive at once on each node, since a "
                          "spawn places all its ranks on its root's node (each takes a slot "
                          "of shared memory, whose pages cost memory only once used, and is "
                          "reused once its rank has exited)"},
    [BD_OPT_UNIVERSE_SIZE] = {"universe-size", BD_OPT_INT, "0", 0, 1 << 30,
                              "MPI_UNIVERSE_SIZE, the number of processes the job suggests a "
                              "program start in all (mpi4py.futures starts this minus the "
                              "world's size as workers); 0: the job's ranks plus 16, or plus "
                              "-max-spawn if that is smaller.  At least the job's ranks",
                              NULL, "usize"},
    [BD_OPT_INITIAL_ERRHANDLER] = {"initial-errhandler", BD_OPT_ENUM, "mpi_errors_are_fatal", 0, 0,
                                   "the error handler every rank starts with on MPI_COMM_WORLD "
                                   "and MPI_COMM_SELF (MPI 4.0's mpiexec -initial-errhandler; a "
                                   "spawn's info key mpi_initial_errhandler sets its children's)",
                                   "mpi_errors_are_fatal|mpi_errors_abort|mpi_errors_return"},
    [BD_OPT_MSG_THRESHOLD] = {"msg-threshold", BD_OPT_SIZE, "4K", 0, 1LL << 30,
                              "messages up to this size are buffered in memory (a rank of the "
                              "node: in the receiver's mailbox, inline up to 1/8 of its ring), "
                              "larger ones in spill files; between ranks of a node, larger ones "
                              "up to 1/8 of a ring also go inline while the receiver's ring has "
                              "room, and a receiver that runs reads larger ones once from the "
                              "sender's memory"},
    [BD_OPT_WINDOW] = {"window", BD_OPT_SIZE, "256K", 16384, 1LL << 30,
                       "size of each rank's shared-memory transfer window "
                       "(raised to the message threshold if smaller)"},
    [BD_OPT_SPIN] = {"spin", BD_OPT_INT, "200", 0, 1000000,
                     "microseconds a rank waiting for a message spins before it sleeps in the "
                     "master, when no rank waits for a run slot and -nr > 1 (0: never spin)"},
    [BD_OPT_POLL_QUANTUM] = {"poll-quantum", BD_OPT_INT, "1000", 0, 1000000,
                             "most microseconds a rank that works between unsuccessful polls "
                             "(Test, Iprobe; it sends, or messages reach it) keeps its run slot "
                             "before a poll hands it to a waiting rank; it adapts, down to 0 "
                             "while handing over brings the rank messages; out of core also "
                             "4 times the storage I/O its last hand-over cost it, at most 250 "
                             "ms (0: every unsuccessful poll hands the slot over)"},
    [BD_OPT_POLL_REMOTE] = {"poll-remote", BD_OPT_INT, "1000", 0, 1000000,
                            "most microseconds a rank that polls in a loop (Test, Iprobe) for "
                            "a message only a rank of another node can send sleeps in the "
                            "master, its run slot given away, before the poll returns; a "
                            "message for it wakes it at once (with -nr > 1 it spins -spin "
                            "first; 0: such polls spin and hand the slot over as other polls)"},
    [BD_OPT_LEND_ASLEEP] = {"lend-asleep", BD_OPT_INT, "20", 0, 3600000,
                            "milliseconds after which a rank that holds a run slot but sleeps "
                            "in a system call outside MPI (accept, a read of a socket or pipe, "
                            "sleep) lends its slot to a rank waiting for one, so that a rank "
                            "it waits for outside MPI can run; it gets it back when it wakes, "
                            "and the node runs one rank more than -nr until one blocks "
                            "(0: never lend)"},
    [BD_OPT_PIN] = {"pin", BD_OPT_ENUM, "auto", 0, 0,
                    "place the master and its ranks on one CPU (each node's master on a "
                    "different one), so that handing the run slot from rank to rank is a "
                    "same-CPU wake-up; auto: with -nr 1 (one rank runs at a time) unless "
                    "-mem-strategy araw (its background unloading wants the other CPUs), "
                    "on: always, off: never",
                    "auto|on|off"},
    [BD_OPT_MASTER_SLICE] = {"master-slice", BD_OPT_INT, "100", 0, 100000,
                             "microseconds of CPU the master asks the kernel to run at a "
                             "time when the job spans nodes and -pin places the master on "
                             "its running rank's CPU (Linux 6.12+ EEVDF custom slice, at "
                             "least 100): woken while the rank computes, to ship its sends "
                             "to another node or deliver a message from one, it then "
                             "preempts the rank at once instead of after the rank's slice "
                             "(about 1.4 ms here); ranks keep the default; not on one node, "
                             "where it made out-of-core runs slower (0: the kernel's "
                             "default for the master too)"},
    [BD_OPT_RANK_SESSION] = {"rank-session", BD_OPT_ENUM, "on", 0, 0,
                             "start every rank in a session of its own (setsid), as MPICH's "
                             "launcher starts its processes: where the kernel groups CPU time "
                             "by session (autogroup), ranks sharing bdmpiexec's session got "
                             "one share of the CPUs between them on a busy machine (a "
                             "terminal's Ctrl-Z still stops them: their master stops and "
                             "continues them); off: the ranks stay in bdmpiexec's session and "
                             "process group",
                             "on|off"},
    [BD_OPT_WD] = {"wd", BD_OPT_STR, NULL, 0, 0,
                   "directory in which the job's private spill directory is made "
                   "(default: $TMPDIR, else /tmp)"},
    [BD_OPT_MEM] = {"mem", BD_OPT_SIZE, "0", 0, 1LL << 50,
                    "memory budget of the node for ranks' managed memory and buffered messages "
                    "(0: three quarters of the memory available when the job starts, the "
                    "smaller of MemAvailable and the room left under the job's cgroup memory "
                    "limit)"},
    [BD_OPT_MEM_STRATEGY] = {"mem-strategy", BD_OPT_ENUM, "arlw", 0, 0,
                             "how ranks' memory moves to storage: none (leave it to the OS), "
                             "araw (unload whenever a rank blocks), arlw (unload only when the "
                             "budget needs it), lrlw (as arlw, and load lazily in chunks)",
                             "none|araw|arlw|lrlw"},
    [BD_OPT_SBPAGE] = {"sbpage", BD_OPT_SIZE, "64K", 4096, 1LL << 30,
                       "unit of residency and dirty tracking of managed memory (multiple of 4K)"},
    [BD_OPT_MEM_THRESHOLD] = {"mem-threshold", BD_OPT_SIZE, "1M", 0, 1LL << 40,
                              "allocations of at least this size are managed; smaller ones are "
                              "left to libc"},
    [BD_OPT_MEM_READAHEAD] = {"mem-readahead", BD_OPT_SIZE, "8M", 0, 1LL << 40,
                              "largest read-ahead of the lrlw strategy: when a rank's faults "
                              "walk through stored memory in order, up to this much beyond the "
                              "last fault is loaded (asked from the budget first), in whole "
                              "sbpages; off or 0: load only what is touched",
                              "off"},
    [BD_OPT_MEM_PREDICT] = {"mem-predict", BD_OPT_ENUM, "auto", 0, 0,
                            "write prediction: managed memory written while last resident is "
                            "loaded writable without write tracking, and written back only if "
                            "its content hash changed; auto: on where the CPU hashes fast "
                            "(PCLMULQDQ), off: track every first write",
                            "auto|on|off"},
    [BD_OPT_MEM_TRACK] = {"mem-track", BD_OPT_ENUM, "auto", 0, 0,
                          "how the memory manager sees accesses to managed memory: uffd "
                          "(userfaultfd; the job fails where the kernel lacks what it needs), "
                          "mprotect (page protection and SIGSEGV), auto: uffd where available, "
                          "else mprotect",
                          "auto|uffd|mprotect"},
    [BD_OPT_MEM_WP] =
        {"mem-wp", BD_OPT_ENUM, "auto", 0, 0,
         "write tracking on the uffd path, for sbpages not under write prediction: async (the "
         "kernel notes each first write to a 4K page, one fault each), sync (the "
         "first write to an sbpage is one round trip to the manager), auto: sync "
         "from 1M sbpages up, async below",
         "auto|async|sync"},
    [BD_OPT_MEM_PREFETCH] = {"mem-prefetch", BD_OPT_ENUM, "on", 0, 0,
                             "look-ahead loading: while ranks run, the rank the run queue "
                             "serves next reads back what it touched the last time it resumed "
                             "from the call it waits in, within the budget and leaving the "
                             "running ranks' turns room, so storage works while the CPU computes "
                             "(PageRank 0.86-0.91 of the time without it, K-means 0.97-0.99, SGD "
                             "0.95-1.03 reading 1-5% more; docs/performance.md)",
                             "on|off"},
    [BD_OPT_MEM_PRECLEAN] = {"mem-preclean", BD_OPT_ENUM, "off", 0, 0,
                             "pre-cleaning (write-behind): while a rank runs, its changed "
                             "managed memory that has not been written for 10 ms is written to "
                             "storage in the background (write protection re-armed first, so "
                             "a later write makes it dirty again), so that its unload has "
                             "little left to write (uffd path with asynchronous write "
                             "tracking only; not with -mem-remote on)",
                             "on|off"},
    [BD_OPT_MEM_PRECLEAN_TICK] = {"mem-preclean-tick", BD_OPT_INT, "10000", 100, 10000000,
                                  "microseconds of a rank's CPU time between two scans of "
                                  "-mem-preclean (tests use small values so that short "
                                  "residencies are pre-cleaned)"},
    [BD_OPT_MEM_ALLOC_STATS] = {"mem-alloc-stats", BD_OPT_FLAG, "0", 0, 1,
                                "debugging: each rank prints, for every managed allocation "
                                "when it is freed (or at exit), the bytes the memory manager "
                                "read back and wrote for it, to see which arrays move"},
    [BD_OPT_MEM_DEDUP] = {"mem-dedup", BD_OPT_ENUM, "on", 0, 0,
                          "store identical managed memory once per node: an sbpage whose "
                          "content equals a copy already stored by any rank of the node "
                          "(compared byte for byte) refers to that copy instead of being "
                          "written, copy-on-write; all-zero sbpages are not stored at all",
                          "on|off"},
    [BD_OPT_MEM_SHARE] = {"mem-share", BD_OPT_ENUM, "off", 0, 0,
                          "let the kernel merge identical resident pages of the ranks (KSM, "
                          "prctl PR_SET_MEMORY_MERGE); needs a kernel with KSM running "
                          "(/sys/kernel/mm/ksm/run = 1) and the uffd tracking path; the budget "
                          "still counts merged memory in full",
                          "on|off"},
    [BD_OPT_MEM_ADAPT] = {"mem-adapt", BD_OPT_ENUM, "auto", 0, 0,
                          "adaptive budget: the node's budget follows the memory other "
                          "processes leave free (the cgroup's limit and usage, MemAvailable, "
                          "memory pressure stalls), shrinking at once and growing back slowly "
                          "up to the budget given or computed at the start; auto: on when -mem "
                          "is not given",
                          "auto|on|off"},
    [BD_OPT_MEM_MIN] = {"mem-min", BD_OPT_SIZE, "0", 0, 1LL << 50,
                        "the adaptive budget never goes below this (nor below what the "
                        "running ranks hold)"},
    [BD_OPT_MEM_REMOTE] = {"mem-remote", BD_OPT_ENUM, "off", 0, 0,
                           "remote-memory tier, multi-node only (-nn > 1; ignored with a note "
                           "on one node): a node whose ranks' data exceeds its budget stores "
                           "unloaded memory in the memory of another node's master that has "
                           "room in its budget, through MPICH, and reads it back from there; "
                           "when no node has room it goes to local storage as without it.  "
                           "Memory written there is not deduplicated (-mem-dedup still drops "
                           "all-zero memory and refers to identical copies stored locally)",
                           "on|off"},
    [BD_OPT_MEM_NODE] = {"mem-node", BD_OPT_STR, NULL, 0, 0,
                         "per-node memory budgets, comma-separated from node 0 (e.g. 8M,1G): "
                         "node i's -mem; nodes beyond the list keep -mem"},
    [BD_OPT_SPILL_MAX] = {"spill-max", BD_OPT_SIZE, "0", 0, 1LL << 50,
                          "spill quota of the node: the most bytes of communication data that "
                          "may wait in its spill files at once (messages not yet received, "
                          "collective data the master stages on storage); a send or a "
                          "collective that would go beyond it stops the job with an error "
                          "naming the directory, the bytes and the rank that sent them (0: "
                          "no quota)"},
    [BD_OPT_P2P_TOKENS] = {"p2p-tokens", BD_OPT_SIZE, "0", 0, 1LL << 50,
                           "flow control inside a node: the most bytes of a rank's messages to "
                           "ranks of its node that may wait in spill files, not yet received; "
                           "an MPI_Send that would go beyond it is synchronous (returns when "
                           "its receive has it). Small and nonblocking sends never wait; a "
                           "program that relies on MPI_Send buffering (unsafe for MPI) stops "
                           "with a deadlock report (0: off)"},
    [BD_OPT_NET_DIRECT] = {"net-direct", BD_OPT_SIZE, "4K", 0, 1LL << 50,
                           "between nodes, a contiguous message of at least this size and "
                           "above -msg-threshold moves without spill files when its receiver "
                           "takes it soon: the sending master reads it from the sender's "
                           "memory in pipelined chunks and the receiving master writes them "
                           "into the posted receive buffer; otherwise (or above "
                           "-msg-threshold but below this size) it goes through spill files "
                           "on both nodes (0: never)"},
    [BD_OPT_COLL_STAGE] = {"coll-stage", BD_OPT_SIZE, "0", 0, 1LL << 50,
                           "bounded collective staging: the master holds at most about this "
                           "many bytes of MPI_Alltoall(v,w) (in place: on one node), "
                           "MPI_Ialltoall(v,w) (not in place), MPI_Gather(v), MPI_Scatter(v), "
                           "MPI_Allgather(v) and MPI_Bcast (in parts of a quarter of it) at "
                           "once, all instances of the node together, in memory or its "
                           "spill file; a rank stops putting its pieces while the bound is "
                           "passed and takes the pieces sent to it as they complete (0: stage "
                           "it whole, the default: the staged data is in the memory budget and "
                           "past it in spill files, which -spill-max bounds; a bound makes "
                           "out-of-core ranks be loaded once per round)"},
    [BD_OPT_COLL_BYREF] = {"coll-byref", BD_OPT_ENUM, "on", 0, 0,
                           "a whole contiguous piece of MPI_Alltoall(v), MPI_Gather(v) or "
                           "MPI_Scatter(v) whose memory is out of memory and stored in the "
                           "node's store (-mem-dedup) goes to the master as references to its "
                           "stored copy, read once when its reader takes it, instead of being "
                           "loaded, copied and staged (not with -coll-stage)",
                           "on|off"},
    [BD_OPT_STATS] = {"stats", BD_OPT_FLAG, "0", 0, 1, "print statistics at the end of the run"},
    [BD_OPT_TRACE] = {"trace", BD_OPT_STR, NULL, 0, 0,
                      "write a timeline of the run to FILE, Chrome trace-event JSON for Perfetto "
                      "or chrome://tracing: per rank, running, blocked in MPI calls, waiting for "
                      "a run slot, loading and unloading memory; counters of memory, queued "
                      "messages and storage bandwidth (with -nn > 1 each node writes FILE.nodeK, "
                      "merged into FILE when all are readable here)"},
    [BD_OPT_VERBOSE] = {"verbose", BD_OPT_INT, "0", 0, 2, "log level: 0 errors, 1 info, 2 debug"},
    [BD_OPT_FAULT] = {"fault", BD_OPT_STR, NULL, 0, 0,
                      "fault injection, for tests: SITE:N[:ERRNO] makes the Nth call at SITE "
                      "fail in every process of the job (N+: that one and all after), with "
                      "ERRNO (default EIO); SITE:N:delay=TIME (50ms, 2s, 500us) makes it that "
                      "much slower instead; comma-separated for several; sites: mem.open, "
                      "mem.pwrite, mem.pread, mem.fallocate, mem.ftruncate, spill.open, "
                      "spill.write, spill.read, io.open, io.write, io.read, io.resize, "
                      "master.alloc, master.memalign, net.send, net.recv, rpc.die, master.grant, "
                      "master.loop, remote.cma, remote.refuse, mem.uffd_event (docs/design.md, "
                      "\"Faults\")"},
    [BD_OPT_STALL_TIMEOUT] = {"stall-timeout", BD_OPT_INT, "300", 0, 7 * 86400,
                              "seconds after which a job that cannot progress is ended with a "
                              "report of what each rank waits for: a storage call that has not "
                              "completed for this long, or every rank waiting (for memory, a run "
                              "slot, storage or MPI) with nothing moving for this long; 0: never "
                              "(waits in MPI alone are the deadlock detector's, at once)"},
    [BD_OPT_GENV] = {"genv", BD_OPT_ENV, NULL, 0, 0,
                     "set the environment variable NAME to VALUE for the ranks (MPICH's "
                     "-genv; also -genv NAME=VALUE); may be repeated"},
    [BD_OPT_X] = {"x", BD_OPT_ENV, NULL, 0, 0,
                  "pass the environment variable NAME, with this value or the one it has here, "
                  "to the ranks (Open MPI's -x); may be repeated"},
};

static void env_name(const char *name, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "BDMPI_");
    for (const char *p = name; *p && n + 1 < len; p++)
        out[n++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
    out[n] = 0;
}

int bd_opts_parse_size(const char *s, long long *out)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    long long mult = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mult = 1LL << 10; break;
        case 'M': mult = 1LL << 20; break;
        case 'G': mult = 1LL << 30; break;
        case 'T': mult = 1LL << 40; break;
        default: return -1;
        }
        end++;
        if (toupper((unsigned char)*end) == 'I')
            end++;
        if (toupper((unsigned char)*end) == 'B')
            end++;
        if (*end)
            return -1;
    }
    if (v > BIG / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static int set_value(bd_opts_t *o, int id, const char *val, const char *from, char *err,
                     size_t errlen)
{
    const bd_opt_desc_t *d = &bd_opt_table[id];
    long long v = 0;
    switch (d->type) {
    case BD_OPT_ENV: /* parsed by parse_envset, never given a value here */
        snprintf(err, errlen, "%s: option '%s' cannot be set this way", from, d->name);
        return -1;
    case BD_OPT_ENUM: {
        const char *c = d->choices;
        size_t vl = val ? strlen(val) : 0;
        for (int k = 0; c && *c; k++) {
            const char *bar = strchr(c, '|');
            size_t cl = bar ? (size_t)(bar - c) : strlen(c);
            if (vl == cl && !strncmp(val, c, cl)) {
                o->num[id] = k;
                return 0;
            }
            c = bar ? bar + 1 : c + cl;
        }
        snprintf(err, errlen, "%s: option '%s' takes one of %s, not '%s'", from, d->name,
                 d->choices, val ? val : "");
        return -1;
    }
    case BD_OPT_STR:
        if (!val || !*val) {
            snprintf(err, errlen, "%s: option '%s' needs a non-empty value", from, d->name);
            return -1;
        }
        o->str[id] = val;
        return 0;
    case BD_OPT_FLAG:
        if (!val || !strcmp(val, "1") || !strcasecmp(val, "yes") || !strcasecmp(val, "true") ||
            !strcasecmp(val, "on"))
            v = 1;
        else if (!strcmp(val, "0") || !strcasecmp(val, "no") || !strcasecmp(val, "false") ||
                 !strcasecmp(val, "off"))
            v = 0;
        else {
            snprintf(err, errlen, "%s: option '%s' takes 0 or 1, not '%s'", from, d->name, val);
            return -1;
        }
        break;
    case BD_OPT_INT: {
        char *end;
        errno = 0;
        v = val ? strtoll(val, &end, 10) : 0;
        if (!val || !*val || errno || *end) {
            snprintf(err, errlen, "%s: option '%s' needs an integer, not '%s'", from, d->name,
                     val ? val : "");
            return -1;
        }
        break;
    }
    case BD_OPT_SIZE:
        if (d->choices && val && !strcasecmp(val, d->choices))
            v = 0;
        else if (bd_opts_parse_size(val, &v) < 0) {
            snprintf(err, errlen,
                     "%s: option '%s' needs a size such as 4096, 64K, 2M or 1G%s%s, not '%s'", from,
                     d->name, d->choices ? " or " : "", d->choices ? d->choices : "",
                     val ? val : "");
            return -1;
        }
        break;
    }
    if (v < d->min || v > d->max) {
        snprintf(err, errlen, "%s: option '%s' must be between %lld and %lld, not %lld", from,
                 d->name, d->min, d->max, v);
        return -1;
    }
    o->num[id] = v;
    return 0;
}

int bd_opts_load_env(bd_opts_t *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < BD_OPT__COUNT; i++) {
        const bd_opt_desc_t *d = &bd_opt_table[i];
        if (d->def && set_value(o, i, d->def, "default", err, errlen) < 0)
            return -1;
    }
    for (int i = 0; i < BD_OPT__COUNT; i++) {
        char name[64];
        if (bd_opt_table[i].type == BD_OPT_ENV)
            continue;
        env_name(bd_opt_table[i].name, name, sizeof name);
        const char *v = getenv(name);
        if (v && set_value(o, i, v, name, err, errlen) < 0)
            return -1;
        o->set_in_env[i] = v != NULL;
    }
    return 0;
}

void bd_opts_normalise(bd_opts_t *o)
{
    if (o->num[BD_OPT_NR] > o->num[BD_OPT_NS])
        o->num[BD_OPT_NR] = o->num[BD_OPT_NS];
}

static int name_is(const char *want, const char *name, size_t len)
{
    return want && strlen(want) == len && !strncmp(want, name, len);
}

static int find_opt(const char *name, size_t len)
{
    for (int i = 0; i < BD_OPT__COUNT; i++)
        if (name_is(bd_opt_table[i].name, name, len) || name_is(bd_opt_table[i].alias, name, len))
            return i;
    return -1;
}

/* A -genv or -x setting from its argument(s); argv[*i] is the option. */
static int parse_envset(bd_opts_t *o, int id, int argc, char **argv, int *i, const char *inline_val,
                        char *err, size_t errlen)
{
    const char *opt = argv[*i];
    const char *a = inline_val;
    if (!a) {
        if (*i + 1 >= argc) {
            snprintf(err, errlen, "option '%s' needs %s", opt,
                     id == BD_OPT_GENV ? "NAME VALUE" : "NAME or NAME=VALUE");
            return -1;
        }
        a = argv[++*i];
    }
    const char *eq = strchr(a, '=');
    size_t namelen = eq ? (size_t)(eq - a) : strlen(a);
    const char *value = eq ? eq + 1 : NULL;
    int ok = namelen > 0 && (isalpha((unsigned char)a[0]) || a[0] == '_');
    for (size_t k = 0; ok && k < namelen; k++)
        ok = isalnum((unsigned char)a[k]) || a[k] == '_';
    if (!ok) {
        snprintf(err, errlen, "option '%s': '%.*s' is not an environment variable name", opt,
                 (int)namelen, a);
        return -1;
    }
    if (!value && id == BD_OPT_GENV) {
        if (*i + 1 >= argc) {
            snprintf(err, errlen, "option '%s %s' needs a VALUE", opt, a);
            return -1;
        }
        value = argv[++*i];
    }
    if (!value) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)namelen, a);
        value = getenv(name);
        if (!value) {
            snprintf(err, errlen, "option '%s %s': %s is not set here (give %s %s=VALUE)", opt, a,
                     name, opt, name);
            return -1;
        }
    }
    if (o->n_envset >= BD_OPT_MAX_ENVSETS) {
        snprintf(err, errlen, "more than %d -genv/-x options", BD_OPT_MAX_ENVSETS);
        return -1;
    }
    o->envset[o->n_envset++] = (bd_opt_envset_t){a, namelen, value};
    return 0;
}

int bd_opts_parse_argv(bd_opts_t *o, int argc, char **argv, int *first_arg, char *err,
                       size_t errlen)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' || !a[1])
            break;
        const char *name = a + 1 + (a[1] == '-');
        if (!strcmp(name, "h") || !strcmp(name, "help"))
            return 1;
        if (!strcmp(name, "version"))
            return 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int id = find_opt(name, len);
        if (id < 0) {
            snprintf(err, errlen, "unknown option '%s' (see -h)", a);
            return -1;
        }
        const char *val = eq ? eq + 1 : NULL;
        if (bd_opt_table[id].type == BD_OPT_ENV) {
            if (parse_envset(o, id, argc, argv, &i, val, err, errlen) < 0)
                return -1;
            continue;
        }
        if (!val && bd_opt_table[id].type != BD_OPT_FLAG) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option '%s' needs a value", a);
                return -1;
            }
            val = argv[++i];
        }
        if (set_value(o, id, val, "command line", err, errlen) < 0)
            return -1;
        o->set_on_cmdline[id] = 1;
    }
    *first_arg = i;
    return 0;
}

int bd_opts_resolve_total(bd_opts_t *o, char *err, size_t errlen)
{
    long long n = o->num[BD_OPT_N], nn = o->num[BD_OPT_NN], ns = o->num[BD_OPT_NS];
    if (!n)
        return 0;
    /* -ns counts against -n if it was given where -n was, or higher. */
    int ns_given =
        o->set_on_cmdline[BD_OPT_NS] || (o->set_in_env[BD_OPT_NS] && !o->set_on_cmdline[BD_OPT_N]);
    if (ns_given && ns * nn != n) {
        snprintf(
            err, errlen,
            "-n %lld asks for %lld ranks in all, but -ns %lld on %lld node%s (-nn) makes %lld; "
            "give -n (the total) or -ns (the ranks per node), not both",
            n, n, ns, nn, nn > 1 ? "s" : "", ns * nn);
        return -1;
    }
    if (n % nn) {
        snprintf(err, errlen,
                 "-n %lld: %lld ranks cannot be spread evenly over -nn %lld nodes; give -n a "
                 "multiple of %lld, or -ns, the ranks per node",
                 n, n, nn, nn);
        return -1;
    }
    if (n / nn > bd_opt_table[BD_OPT_NS].max) {
        snprintf(err, errlen,
                 "-n %lld makes %lld ranks per node, more than the %lld a node can run", n, n / nn,
                 bd_opt_table[BD_OPT_NS].max);
        return -1;
    }
    o->num[BD_OPT_NS] = n / nn;
    return 0;
}

int bd_opts_apply_envsets(const bd_opts_t *o)
{
    for (int k = 0; k < o->n_envset; k++) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)o->envset[k].namelen, o->envset[k].name);
        if (setenv(name, o->envset[k].value, 1) < 0)
            return -errno;
    }
    return 0;
}

int bd_opts_export_env(const bd_opts_t *o)
{
    for (int i = 0; i < BD_OPT__COUNT; i++) {
        char name[64], val[64];
        /* -genv/-x are not options of the runtime; an unset -n is not
         * passed on (the ranks per node are in BDMPI_NS). */
        if (bd_opt_table[i].type == BD_OPT_ENV || (i == BD_OPT_N && !o->num[i]))
            continue;
        env_name(bd_opt_table[i].name, name, sizeof name);
        if (bd_opt_table[i].type == BD_OPT_STR) {
            if (o->str[i] && setenv(name, o->str[i], 1) < 0)
                return -errno;
            continue;
        }
        if (bd_opt_table[i].type == BD_OPT_ENUM) {
            const char *c = bd_opt_table[i].choices;
            for (long long k = 0; k < o->num[i] && c; k++) {
                c = strchr(c, '|');
                c = c ? c + 1 : NULL;
            }
            size_t cl = c ? strcspn(c, "|") : 0;
            snprintf(val, sizeof val, "%.*s", (int)cl, c ? c : "");
            if (setenv(name, val, 1) < 0)
                return -errno;
            continue;
        }
        snprintf(val, sizeof val, "%lld", o->num[i]);
        if (setenv(name, val, 1) < 0)
            return -errno;
    }
    return 0;
}

void bd_opts_print_help(FILE *f, const char *usage)
{
    fprintf(f, "%s\n\nOptions (each also settable as the environment variable shown):\n", usage);
    for (int i = 0; i < BD_OPT__COUNT; i++) {
        const bd_opt_desc_t *d = &bd_opt_table[i];
        char env[64], arg[32] = "";
        env_name(d->name, env, sizeof env);
        if (d->type == BD_OPT_INT)
            snprintf(arg, sizeof arg, " N");
        else if (d->type == BD_OPT_SIZE)
            snprintf(arg, sizeof arg, " SIZE%s%s", d->choices ? "|" : "",
                     d->choices ? d->choices : "");
        else if (d->type == BD_OPT_STR)
            snprintf(arg, sizeof arg, " %s", i == BD_OPT_WD ? "DIR" : "FILE");
        else if (d->type == BD_OPT_ENUM)
            snprintf(arg, sizeof arg, " %s", d->choices);
        else if (d->type == BD_OPT_ENV)
            snprintf(arg, sizeof arg, "%s", i == BD_OPT_GENV ? " NAME VALUE" : " NAME[=VALUE]");
        char names[160];
        if (d->alias)
            snprintf(names, sizeof names, "-%s%s, -%s%s", d->name, arg, d->alias, arg);
        else
            snprintf(names, sizeof names, "-%s%s", d->name, arg);
        if (d->type == BD_OPT_ENV)
            fprintf(f, "  %s\n      %s\n", names, d->help);
        else
            fprintf(f, "  %s\n      %s\n      [%s, default %s]\n", names, d->help, env,
                    d->def ? d->def : "none");
    }
    fprintf(f, "  -h, --help\n      print this help\n  --version\n      print BDMPI's version\n");
}

void bd_opts_print_markdown(FILE *f)
{
    fprintf(f, "| option | environment | default | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < BD_OPT__COUNT; i++) {
        const bd_opt_desc_t *d = &bd_opt_table[i];
        char env[64];
        env_name(d->name, env, sizeof env);
        char names[160];
        if (d->alias)
            snprintf(names, sizeof names, "`-%s`, `-%s`", d->name, d->alias);
        else
            snprintf(names, sizeof names, "`-%s`", d->name);
        char envcol[80] = "-";
        if (d->type != BD_OPT_ENV)
            snprintf(envcol, sizeof envcol, "`%s`", env);
        fprintf(f, "| %s | %s | %s | %s |\n", names, envcol, d->def ? d->def : "-", d->help);
    }
}
