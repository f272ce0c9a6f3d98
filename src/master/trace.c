/* The master's part of the timeline (-trace FILE, src/common/bd_trace.h):
 * it drains the ranks' rings once per round of the event loop and records
 * what only it knows: each rank's scheduling state (running, blocked,
 * waiting for a run slot), and the node's accounted resident memory and
 * queued message bytes.  Everything else (the rings, the file of records,
 * the conversion to JSON) is bd_trace's. */
#include <stdlib.h>

#include "bd_log.h"
#include "bd_trace.h"
#include "master.h"

static int g_on;
static uint8_t *g_state; /* last recorded state + 1 per rank (0: none yet) */
static uint64_t *g_mem;  /* last recorded resident bytes per rank */
static uint64_t g_node_mem = UINT64_MAX, g_queued = UINT64_MAX;
static double g_next_sample;

uint64_t bdr_trace_layout(bd_shm_hdr_t *h, uint64_t total)
{
    return bd_trace_layout(h, total, g_m.opts.str[BD_OPT_TRACE] != NULL);
}

int bdr_trace_open(void)
{
    if (!g_m.opts.str[BD_OPT_TRACE])
        return 0;
    char err[BD_PATH_MAX + 128];
    g_state = calloc((size_t)g_m.nslots, 1);
    g_mem = calloc((size_t)g_m.nslots, sizeof *g_mem);
    if (!g_state || !g_mem) {
        bd_log_error("trace: out of memory");
        return -1;
    }
    if (bd_trace_master_open(g_m.hdr, g_m.opts.str[BD_OPT_TRACE], err, sizeof err) < 0) {
        bd_log_error("%s", err);
        return -1;
    }
    g_on = 1;
    return 0;
}

static uint16_t trace_state(const slave_t *s)
{
    switch (s->state) {
    case SL_PREINIT: return BD_TRS_PREINIT;
    case SL_RUNNING: return BD_TRS_RUNNING;
    case SL_RUNNABLE: return BD_TRS_RUNNABLE;
    case SL_BLOCKED: return BD_TRS_BLOCKED;
    case SL_FINALIZED: return BD_TRS_FINALIZED;
    case SL_EXITED: return BD_TRS_EXITED;
    }
    return BD_TRS_PREINIT;
}

void bdr_trace_poll(void)
{
    if (!g_on)
        return;
    bd_trace_drain();
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        uint16_t st = trace_state(s);
        if (g_state[i] != st + 1) {
            g_state[i] = (uint8_t)(st + 1);
            bd_trace_put((uint32_t)i, BD_TR_STATE, st, (uint64_t)s->blk, 0);
        }
    }
    /* Counters: at most one sample a millisecond. */
    double now = bdr_master_now();
    if (now < g_next_sample)
        return;
    g_next_sample = now + 1e-3;
    uint64_t node = g_m.bytes_buffered + bdr_node_transient_bytes(), queued = g_m.bytes_buffered;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        uint64_t r =
            s->exited ? 0 : atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed);
        node += r;
        if (r != g_mem[i]) {
            g_mem[i] = r;
            bd_trace_put((uint32_t)i, BD_TR_RANK_MEM, 0, r, 0);
        }
        if (s->mb && !s->exited)
            queued += atomic_load_explicit(&s->mb->head, memory_order_relaxed) -
                      atomic_load_explicit(&s->mb->tail, memory_order_relaxed);
    }
    static uint64_t budget_seen;
    if (node != g_node_mem || g_m.hdr->job.mem_budget != budget_seen) {
        g_node_mem = node;
        budget_seen = g_m.hdr->job.mem_budget;
        bd_trace_put(BD_TRACE_NODE, BD_TR_NODE_MEM, 0, node, g_m.hdr->job.mem_budget);
    }
    if (queued != g_queued) {
        g_queued = queued;
        bd_trace_put(BD_TRACE_NODE, BD_TR_QUEUED, 0, queued, 0);
    }
}

void bdr_trace_finish(void)
{
    if (!g_on)
        return;
    g_next_sample = 0;
    bdr_trace_poll();
    int rc = bd_trace_master_finish();
    uint64_t written, dropped;
    bd_trace_counts(&written, &dropped);
    if (rc == 0) {
        char part[BD_PATH_MAX + 48];
        bd_trace_part_path(part, sizeof part, g_m.opts.str[BD_OPT_TRACE], g_m.node, g_m.nnodes);
        bd_log_info("trace: timeline of %llu records written to %s", (unsigned long long)written,
                    part);
    } else if (!g_m.job_failed) {
        g_m.job_failed = 1;
    }
    g_on = 0;
    free(g_state);
    free(g_mem);
}

void bdr_trace_stats(FILE *f)
{
    if (!g_m.opts.str[BD_OPT_TRACE])
        return;
    uint64_t written, dropped;
    bd_trace_counts(&written, &dropped);
    fprintf(f, "  trace: %llu records, %llu dropped because a rank's ring (%d KiB) was full\n",
            (unsigned long long)written, (unsigned long long)dropped, BD_TRACE_RING_BYTES / 1024);
}
