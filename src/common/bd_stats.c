#include "bd_stats.h"

const bd_stat_desc_t bd_stat_table[BD_STAT__COUNT] = {
#define BD_STAT_DESC(name, unit, help) {#name, unit, help},
    BD_STATS(BD_STAT_DESC)
#undef BD_STAT_DESC
};

void bd_stats_print(FILE *f, const uint64_t (*per_rank)[BD_STAT__COUNT], int nranks,
                    double elapsed_s)
{
    double run = 0, wait = 0, io = 0;
    for (int r = 0; r < nranks; r++) {
        run += (double)per_rank[r][BD_STAT_RUN_NS] * 1e-9;
        wait += (double)per_rank[r][BD_STAT_WAIT_NS] * 1e-9;
        io += (double)per_rank[r][BD_STAT_MEM_IO_NS] * 1e-9;
    }
    double active = run - wait, comp = active - io;
    fprintf(f,
            "bdmpi: where the time went: %.2f s wall; ranks ran for %.2f s in total, of which "
            "%.2f s computing and %.2f s moving managed memory to and from storage; they "
            "waited %.2f s in total in MPI calls (blocked, or for a run slot)\n",
            elapsed_s, active > 0 ? active : 0, comp > 0 ? comp : 0, io, wait);
    fprintf(f, "bdmpi stats: %d ranks, %.3f s\n", nranks, elapsed_s);
    fprintf(f, "  %-16s %14s %12s %12s %12s  %s\n", "stat", "total", "min/rank", "avg/rank",
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
        fprintf(f, "  %-16s %14llu %12llu %12.0f %12llu  %s (%s)\n", bd_stat_table[s].name,
                (unsigned long long)tot, (unsigned long long)mn,
                nranks ? (double)tot / nranks : 0.0, (unsigned long long)mx, bd_stat_table[s].help,
                bd_stat_table[s].unit);
    }
}
