/* The one list of statistics.  Every component counts into these slots;
 * `bdmpiexec --stats` prints them per node and per rank.  Per-rank values
 * live in the rank's shared-memory slot so both sides can add to them. */
#ifndef BD_STATS_H
#define BD_STATS_H

#include <stdint.h>
#include <stdio.h>

#define BD_STATS(X)                                                                                \
    X(SENDS_MEM, "count", "messages buffered in memory")                                           \
    X(SENDS_FILE, "count", "messages buffered in spill files")                                     \
    X(BYTES_MEM, "bytes", "bytes of messages buffered in memory")                                  \
    X(BYTES_FILE, "bytes", "bytes of messages written to spill files")                             \
    X(SENDS_DIRECT, "count", "messages the receiver read once from the sender's memory")           \
    X(BYTES_DIRECT, "bytes", "bytes of messages read once from the sender's memory")               \
    X(NET_DIRECT, "count",                                                                         \
      "messages to other nodes the master read from the sender's memory (no spill file on the "    \
      "sender's node)")                                                                            \
    X(NET_DIRECT_BYTES, "bytes", "bytes of those messages")                                        \
    X(NET_PLACED, "count",                                                                         \
      "messages from other nodes the master wrote straight into the receive buffer (no spill "     \
      "file on either node)")                                                                      \
    X(SENDS_POSTED, "count",                                                                       \
      "small sends to other nodes posted to the master's queue without a request (of SENDS_MEM)")  \
    X(RECVS, "count", "messages received")                                                         \
    X(RECVS_DEFERRED, "count",                                                                     \
      "nonblocking receives into managed memory filled from their spill file only when reported "  \
      "complete")                                                                                  \
    X(COLLS, "count", "collective calls")                                                          \
    X(COLL_BYTES_UP, "bytes", "bytes given to the master by collectives")                          \
    X(COLL_BYTES_DOWN, "bytes", "bytes taken from the master by collectives")                      \
    X(COLL_BYTES_REF, "bytes",                                                                     \
      "of COLL_BYTES_UP, bytes handed over as references to their stored copy (out of memory, in " \
      "the node's store): neither loaded nor copied")                                              \
    X(IO_AGGREGATED, "count",                                                                      \
      "collective MPI-IO calls aggregated in two phases (few large requests per node)")            \
    X(IO_AGG_REQUESTS, "count",                                                                    \
      "contiguous file requests the rank made as an aggregator of them (each one or more system "  \
      "calls of at most 8 MiB)")                                                                   \
    X(RPCS, "count", "requests to the master")                                                     \
    X(RESUMES, "count", "times the rank was given a run slot")                                     \
    X(BLOCKS, "count", "times the rank blocked and gave up its run slot")                          \
    X(POLLS, "count", "unsuccessful polls (Test, Iprobe, ...)")                                    \
    X(YIELDS, "count", "polls that handed the run slot to another rank")                           \
    X(POLLS_KEPT, "count",                                                                         \
      "unsuccessful polls that kept the run slot a rank waited for (-poll-quantum)")               \
    X(POLL_SLEEPS, "count",                                                                        \
      "polls for another node's message that slept in the master until it came (-poll-remote)")    \
    X(LENDS, "count",                                                                              \
      "times the rank, asleep in a system call outside MPI, lent its run slot (-lend-asleep)")     \
    X(WAIT_NS, "ns", "time spent waiting for the master (blocked or descheduled)")                 \
    X(RUN_NS, "ns", "time from MPI_Init to MPI_Finalize")                                          \
    X(TIME_COMPUTE_NS, "ns",                                                                       \
      "computing: running, not in a request to the master, no storage I/O or memory grant of "     \
      "its own in progress")                                                                       \
    X(TIME_CPU_WAIT_NS, "ns",                                                                      \
      "waiting for a CPU while running: the rank's MPI thread runnable but not on a CPU (the "     \
      "kernel's run_delay, /proc/thread-self/schedstat), between being given its run slot and "    \
      "its next request: other processes' load; taken out of computing")                           \
    X(TIME_IO_RUN_NS, "ns",                                                                        \
      "storage while running: not in a request to the master, managed-memory I/O of the rank "     \
      "in progress (loads on faults, read-ahead)")                                                 \
    X(TIME_GRANT_NS, "ns",                                                                         \
      "waiting for memory: not in a request to the master, a load waits for the master's "         \
      "grant (other ranks unloading), no I/O of its own")                                          \
    X(TIME_IO_WAIT_NS, "ns",                                                                       \
      "storage while waiting: in a request to the master, managed-memory I/O of the rank in "      \
      "progress (unloads the master ordered, loading ahead of its turn)")                          \
    X(TIME_WAIT_NS, "ns",                                                                          \
      "waiting: in a request to the master (blocked, for a run slot, or being served), no I/O "    \
      "of its own")                                                                                \
    X(MEM_WRITTEN, "bytes", "managed memory written to storage")                                   \
    X(MEM_READ, "bytes", "managed memory read from storage")                                       \
    X(MEM_LOADS, "count", "loads of managed memory (chunks or allocations)")                       \
    X(MEM_UNLOADS, "count", "allocations unloaded to storage")                                     \
    X(MEM_FAULTS, "count", "faults on managed memory")                                             \
    X(MEM_IO_NS, "ns",                                                                             \
      "time in managed-memory storage I/O, summed over the requests in flight at once (can "       \
      "exceed the wall time)")                                                                     \
    X(MEM_PEAK, "bytes", "peak resident managed memory")                                           \
    X(MEM_HASHED, "bytes", "managed memory hashed at unloads (write prediction)")                  \
    X(MEM_PREDICT_MISS, "bytes", "managed memory loaded as written that proved unchanged")         \
    X(MEM_ACQUIRES, "count", "requests to the master for memory")                                  \
    X(MEM_SHRINKS, "count", "times a running rank gave memory back to the budget (all or part)")   \
    X(MEM_SHRUNK, "bytes", "managed memory running ranks gave back to the budget")                 \
    X(CORUN_HELD, "count",                                                                         \
      "times a free run slot was kept from the rank because its memory (what it holds and what "   \
      "a turn from the same call loaded) did not fit beside the running ranks' (-nr "              \
      "effectively lower then; master line below)")                                                \
    X(CORUN_CAPPED, "count",                                                                       \
      "times the rank got a free run slot beside running ranks it did not fit beside, with room "  \
      "for at least half of its turn: its grants kept what their turns were expected to load")     \
    X(MEM_PREFETCHES, "count", "times the rank was told to load its memory ahead of its turn")     \
    X(MEM_PREFETCHED, "bytes", "managed memory loaded ahead while the rank waited for its slot")   \
    X(MEM_DEDUP, "bytes",                                                                          \
      "managed memory not written to storage because an identical copy was stored on the node "    \
      "(-mem-dedup)")                                                                              \
    X(MEM_DEDUP_ZERO, "bytes", "managed memory not written to storage because it was all zeros")   \
    X(MEM_DEDUP_VERIFY, "bytes",                                                                   \
      "stored copies read back to compare them byte for byte with data about to be written")       \
    X(MEM_KSM, "bytes",                                                                            \
      "ranks' memory merged with identical pages by the kernel (-mem-share; per rank the most "    \
      "seen in /proc/PID/ksm_stat, summed)")                                                       \
    X(MEM_RMT_STORED, "bytes", "managed memory stored in another node's memory (-mem-remote)")     \
    X(MEM_RMT_READ, "bytes",                                                                       \
      "managed memory read back through the remote tier (from another node, or from the "          \
      "master's file of what a node gave back)")                                                   \
    X(MEM_RMT_AHEAD, "bytes",                                                                      \
      "managed memory read back through the remote tier that the master had asked for ahead of "   \
      "the load")                                                                                  \
    X(MEM_RMT_AHEAD_NEXT, "bytes",                                                                 \
      "of MEM_RMT_AHEAD, what the master asked for because it followed the rank's previous load "  \
      "(or its last load before its turn) the time before")                                        \
    X(MEM_RMT_AHEAD_READY, "bytes",                                                                \
      "of MEM_RMT_AHEAD, what had all arrived when the rank asked (no wait for the holder)")       \
    X(MEM_RMT_FALLBACK, "bytes",                                                                   \
      "managed memory stored locally because no other node had room for it (-mem-remote)")         \
    X(MEM_RMT_RETURNED, "bytes",                                                                   \
      "managed memory another node gave back because it needed the memory (written to local "      \
      "storage by this node's master)")                                                            \
    X(SPILL_PEAK, "bytes",                                                                         \
      "peak bytes of communication data in the node's spill files at once (messages not yet "      \
      "received, staged collective data; -spill-max bounds it; the node's value, shown on its "    \
      "first rank)")                                                                               \
    X(FLOW_WAITS, "count",                                                                         \
      "MPI_Send calls made synchronous by flow control (-p2p-tokens): the rank's messages not "    \
      "yet received were over the budget")                                                         \
    X(STAGE_PEAK, "bytes",                                                                         \
      "peak bytes of collective data the master staged at once, in memory and spill files (the "   \
      "node's value, shown on its first rank; -coll-stage bounds all-to-alls, gathers, scatters, " \
      "allgathers, broadcasts)")                                                                   \
    X(MEM_PRECLEANED, "bytes",                                                                     \
      "managed memory written back while its rank ran (-mem-preclean), not at an unload")

typedef enum {
#define BD_STAT_ENUM(name, unit, help) BD_STAT_##name,
    BD_STATS(BD_STAT_ENUM)
#undef BD_STAT_ENUM
        BD_STAT__COUNT
} bd_stat_id_t;

typedef struct bd_stat_desc {
    const char *name;
    const char *unit;
    const char *help;
} bd_stat_desc_t;

extern const bd_stat_desc_t bd_stat_table[BD_STAT__COUNT];

/* Print totals and per-rank min/avg/max of nranks stat arrays. */
void bd_stats_print(FILE *f, const uint64_t (*per_rank)[BD_STAT__COUNT], int nranks,
                    double elapsed_s);

#endif
