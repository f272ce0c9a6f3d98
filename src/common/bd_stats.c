#include <string.h>

#include "bd_stats.h"

const bd_stat_desc_t bd_stat_table[BD_STAT__COUNT] = {
#define BD_STAT_DESC(name, unit, help) {#name, unit, help},
    BD_STATS(BD_STAT_DESC)
#undef BD_STAT_DESC
};

void bd_stats_print(FILE *f, const uint64_t (*per_rank)[BD_STAT__COUNT], int nranks,
                    double elapsed_s)
{
    /* The six parts of each rank's time between MPI_Init and MPI_Finalize
     * (bd_trace.c accounts them; their sum is the ranks' time exactly). */
    static const int part[] = {BD_STAT_TIME_COMPUTE_NS, BD_STAT_TIME_CPU_WAIT_NS,
                               BD_STAT_TIME_IO_RUN_NS,  BD_STAT_TIME_GRANT_NS,
                               BD_STAT_TIME_IO_WAIT_NS, BD_STAT_TIME_WAIT_NS};
    enum { NPART = sizeof part / sizeof part[0] };
    double sec[NPART] = {0}, total = 0;
    for (int r = 0; r < nranks; r++)
        for (int k = 0; k < NPART; k++)
            sec[k] += (double)per_rank[r][part[k]] * 1e-9;
    for (int k = 0; k < NPART; k++)
        total += sec[k];
    fprintf(f,
            "bdmpi: where the time went: %.2f s wall; the ranks' time from MPI_Init to "
            "MPI_Finalize, %.2f s in total, = %.2f s computing + %.2f s waiting for a CPU while "
            "running (other processes' load) + %.2f s storage I/O while running + %.2f s waiting "
            "for memory grants + %.2f s storage I/O while waiting in MPI + %.2f s waiting in MPI "
            "(blocked, for a run slot, or being served)\n",
            elapsed_s, total, sec[0], sec[1], sec[2], sec[3], sec[4], sec[5]);
    fprintf(f, "bdmpi stats: %d ranks, %.3f s\n", nranks, elapsed_s);
    int w = 4; /* the name column fits the longest name */
    for (int s = 0; s < BD_STAT__COUNT; s++) {
        int n = (int)strlen(bd_stat_table[s].name);
        w = n > w ? n : w;
    }
    fprintf(f, "  %-*s %14s %12s %12s %12s  %s\n", w, "stat", "total", "min/rank", "avg/rank",
            "max/rank", "meaning");
    for (int s = 0; s < BD_STAT__COUNT; s++) {
        uint64_t tot = 0, mn = UINT64_MAX, mx = 0;
        for (int r = 0; r < nranks; r++) {
            uint64_t v = per_rank[r][s];
            tot += v;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        if (!nranks)
            mn = 0;
        fprintf(f, "  %-*s %14llu %12llu %12.0f %12llu  %s (%s)\n", w, bd_stat_table[s].name,
                (unsigned long long)tot, (unsigned long long)mn,
                nranks ? (double)tot / nranks : 0.0, (unsigned long long)mx, bd_stat_table[s].help,
                bd_stat_table[s].unit);
    }
}
