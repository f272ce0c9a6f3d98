/* The node's memory budget (sbma.txt 4.5, the load/unload/release/proceed
 * protocol).  Ranks ask before memory becomes resident; the master grants
 * the request when the node stays within its budget, otherwise it first
 * tells blocked ranks to unload (running ranks are never unloaded under
 * them).  Under ARAW a rank is also told to unload whenever it blocks.
 * Resident bytes are counted in each rank's slot; the master's own
 * buffered messages count too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"
#include "net.h"

static uint64_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

uint64_t bdr_memacct_default_budget(void)
{
    uint64_t b = bdr_pressure_default_budget();
    return b ? b : meminfo_available() / 4 * 3;
}

/* -mem-share on: say at the start when KSM cannot merge anything here.
 * Merged pages stay counted in full in the budget (node_resident): a
 * write to one unmerges it at any moment, without asking the master, so
 * the budget cannot lend out what merging saved.  The saving is memory the
 * kernel has, not budget. */
void bdr_memacct_ksm_check(void)
{
    const bd_job_config_t *job = &g_m.hdr->job;
    if (job->mem_share != 0 || job->mem_strategy == BD_MEMS_NONE)
        return;
    FILE *f = fopen("/sys/kernel/mm/ksm/run", "r");
    int run = -1;
    if (f) {
        if (fscanf(f, "%d", &run) != 1)
            run = -1;
        fclose(f);
    }
    if (run < 0)
        bd_log_error("warning: -mem-share on, but this kernel has no KSM "
                     "(/sys/kernel/mm/ksm/run is missing): identical pages stay separate");
    else if (run != 1)
        bd_log_error("warning: -mem-share on, but KSM is not running on this node "
                     "(/sys/kernel/mm/ksm/run is %d): identical pages stay separate until root "
                     "starts it (echo 1 > /sys/kernel/mm/ksm/run)",
                     run);
    if (job->mem_track == BD_MEMT_MPROTECT)
        bd_log_error("warning: -mem-share on with -mem-track mprotect: managed memory is a "
                     "shared mapping there, which KSM never merges");
}

static uint64_t node_resident(void)
{
    uint64_t t = g_m.bytes_buffered + bdr_node_transient_bytes() + bdr_coll_staging_bytes() +
                 bdr_remote_held() + bdr_unmanaged_counted();
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (!s->exited)
            t += atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) +
                 atomic_load_explicit(&s->slot->mem_pinned, memory_order_relaxed);
    }
    return t;
}

uint64_t bdr_memacct_node_resident(void) { return node_resident(); }

static uint64_t resident_of(const slave_t *s)
{
    return atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed);
}

static void mem_answer(slave_t *s, int status)
{
    bd_slot_t *sl = s->slot;
    if (status == 0) {
        if (g_m.mem_keep == s)
            g_m.mem_keep = NULL;
        uint64_t r =
            atomic_fetch_add_explicit(&sl->mem_resident, s->mem_want, memory_order_relaxed) +
            s->mem_want;
        if (s->state == SL_RUNNING && r > s->turn_peak)
            s->turn_peak = r;
        atomic_fetch_add_explicit(&sl->stats[BD_STAT_MEM_ACQUIRES], 1, memory_order_relaxed);
    }
    atomic_store_explicit(&sl->mem_resp_status, status, memory_order_relaxed);
    if (status != BD_MEM_RESP_SHRINK)
        atomic_store_explicit(&sl->mem_resp_give, 0, memory_order_relaxed);
    atomic_store_explicit(&sl->mem_resp_seq, s->seen_mem_req, memory_order_release);
    bd_futex_wake(&sl->mem_resp_seq, 1);
    s->mem_pending = 0;
    uint64_t now = node_resident();
    if (now > g_m.peak_node_resident)
        g_m.peak_node_resident = now;
}

void bdr_memacct_unload(slave_t *s)
{
    if (s->unload_sent || s->exited || s->pf_sent) /* one command at a time */
        return;
    s->unload_sent = 1;
    g_m.nunloading++;
    uint64_t r = resident_of(s);
    /* An unload of nothing keeps what the last one saw (as the rank does);
     * so does one before the rank ran again: it holds what a look-ahead
     * loaded, often a part (SGD at -nr 2: 1 MB of 35, and the next turn's
     * fresh memory then looked like 44 MB), and the rank records no warm
     * set without a turn (bd_mem_unload_all). */
    if (r && (s->ran || r > s->warm))
        s->warm = r;
    s->ran = 0;
    s->pf_done = 0;
    atomic_store_explicit(&g_m.hdr->unloads_began, 1, memory_order_relaxed);
    atomic_store_explicit(&s->slot->cmd, BD_CMD_UNLOAD, memory_order_relaxed);
    bdr_sched_respond(s); /* wakes it; it sees the command, not an answer */
}

/* Resumes from the kind of call it waits in are likely brief turns that
 * load nothing (the root of a Gather at -nr 1 is woken by every piece and
 * waits again): what it loaded ahead would be pushed out before its turn
 * (in SGD's pattern, rank 0 loaded its whole working set ahead and lost it
 * again once a turn).  The look-ahead goes to the first rank in the run
 * queue that is not so.  Learnt per rank and kind of call
 * (bd_req_phase_key, hashed to a bit of slave_t.vain) in
 * bdr_memacct_turn_end: the Gather's root had a long turn before each
 * Gather. */
static uint64_t vain_bit(uint64_t key)
{
    return 1ull << ((key ^ key >> 16) * 0x9e3779b9u >> 26 & 63);
}

static int resumes_in_vain(const slave_t *s)
{
    return (s->vain & vain_bit(bd_req_phase_key(&s->slot->req))) != 0;
}

static int not_in_vain(const slave_t *s) { return !resumes_in_vain(s); }

/* A queued rank worth loading ahead: it had memory resident when it was
 * last unloaded and has not got it back. */
static int prefetch_wanted(const slave_t *s)
{
    return !s->pf_done && !s->unload_sent && !s->mem_pending && !s->exited && s->blk != BLK_INIT &&
           atomic_load_explicit(&s->slot->cmd, memory_order_relaxed) == BD_CMD_NONE &&
           s->warm > resident_of(s);
}

/* Whose memory goes first when a grant needs room (c before v?): what was
 * loaded ahead for the next turn last; otherwise the rank whose last turn
 * began longest ago (a rank that never ran first), the largest on ties.
 * A rank that just ran, blocked or yielded a poll, likely runs again soon:
 * two ranks exchanging in turns (HPL's panel factorization down a process
 * column) wake each other at once, and a rank that yielded a poll in the
 * middle of its work is back after the others' turns.  Taken the largest
 * first, ties of equal matrices went to the lowest index (HPCC N=4000 at
 * -ns 4 -nr 1 -mem 64M read ranks 0 and 2's 32 MB matrices back about
 * 300 times each, ranks 1 and 3's 34-80 times: 23.1 GB; this order, about
 * 76 times each: 9.7 GB).  Blocked ranks first, and among queued ones the
 * last in the run queue, read twice as much as before (46 GB): the rank
 * that just ran is the one needed next. */
static int evict_before(const slave_t *c, const slave_t *v)
{
    int ca = c->state == SL_RUNNABLE && c->pf_done, va = v->state == SL_RUNNABLE && v->pf_done;
    if (ca != va)
        return va;
    if (c->turn_seq != v->turn_seq)
        return c->turn_seq < v->turn_seq;
    return resident_of(c) > resident_of(v);
}

/* Unloading under a slave is only possible while it waits in a request. */
static int can_unload(slave_t *s)
{
    return !s->exited && !s->unload_sent && !s->mem_pending && !s->pf_sent &&
           (s->state == SL_BLOCKED || s->state == SL_RUNNABLE) && s->blk != BLK_INIT &&
           atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) > 0;
}

void bdr_memacct_fit(void)
{
    uint64_t budget = g_m.hdr->job.mem_budget, total = node_resident();
    if (!budget || total <= budget)
        return;
    uint64_t writing = 0, need = total - budget;
    if (bdr_coll_shrink(need, &writing) >= need)
        return;
    writing += bdr_remote_reclaim(need - writing); /* other nodes' data goes back first */
    if (writing >= need)
        return;
    uint64_t coming = writing;
    for (int i = 0; i < g_m.ns; i++)
        if (g_m.slaves[i].unload_sent)
            coming += resident_of(&g_m.slaves[i]);
    /* blocked ranks first, then queued ones; the largest first; never a running one */
    for (int queued = 0; queued < 2 && coming < need; queued++)
        while (coming < need) {
            slave_t *v = NULL;
            for (int i = 0; i < g_m.ns; i++) {
                slave_t *c = &g_m.slaves[i];
                if (can_unload(c) && (c->state == SL_RUNNABLE) == queued &&
                    (!v || resident_of(c) > resident_of(v)))
                    v = c;
            }
            if (!v)
                break;
            coming += resident_of(v);
            bdr_memacct_unload(v);
        }
}

static int ws_find(const slave_t *s, uint64_t key)
{
    for (int k = 0; k < BDR_WS_KEYS; k++)
        if (s->ws_used[k] && s->ws_key[k] == key)
            return k;
    return -1;
}

void bdr_memacct_turn_begin(slave_t *s)
{
    s->turn_key = bd_req_phase_key(&s->slot->req);
    /* Its next wait is another call, whose resume may need other memory:
     * it may be loaded ahead for that one (a look-ahead for a call that
     * touches nothing, K-means' resume from its Allreduce right before a
     * Broadcast, loads nothing and must not use up the rank's turn). */
    s->turn_pf = s->pf_done;
    s->pf_done = 0;
    s->turn_peak = s->turn_base = resident_of(s);
    s->turn_req = s->seen_req;
    s->turn_seq = ++g_m.order_counter;
    s->mem_last = s->turn_t0 = bdr_master_now();
    s->ran = 1;
    s->polled = 0;
}

/* Shorter than a turn that uses what was loaded ahead for it (resumes_in_vain). */
#define BDR_VAIN_TURN_S 0.002
void bdr_memacct_turn_end(slave_t *s)
{
    uint64_t r = resident_of(s);
    if (r > s->turn_peak)
        s->turn_peak = r;
    uint64_t grew = s->turn_peak > s->turn_base ? s->turn_peak - s->turn_base : 0;
    /* A brief turn that loaded nothing (or ran none of its own code):
     * resumes from the same kind of call are likely so (resumes_in_vain)
     * when it had been loaded ahead for (a turn that found its memory
     * loaded ahead and used it computes for longer) or when the previous
     * resume from that kind of call was brief too.  One brief turn alone
     * says nothing: the first resume from a Sendrecv often only completes
     * its send, and the next one goes on to compute (mem.prefetch_partial
     * loaded nothing ahead in 1 run of 4 when it counted).  Only two long
     * turns in a row undo it: the Gather's root waits for its pieces and
     * for its next block in the same kind of call, and one long turn an
     * iteration had it loaded ahead in vain once an iteration. */
    uint64_t bit = vain_bit(s->turn_key);
    if (s->seen_req == s->turn_req || (!grew && bdr_master_now() - s->turn_t0 < BDR_VAIN_TURN_S)) {
        if (s->turn_pf || (s->brief & bit))
            s->vain |= bit;
        s->brief |= bit;
    } else if (s->brief & bit) {
        s->brief &= ~bit; /* one long turn after brief ones: still likely brief */
    } else {
        s->vain &= ~bit;
    }
    /* Resumed only to wait again in the same request (a collective not yet
     * complete, a mailbox still empty): it ran none of its own code, and
     * what it holds then says nothing of what it works on. */
    if (s->seen_req == s->turn_req)
        return;
    if (!grew) /* nor does a turn that loaded nothing (a barrier's stage) */
        return;
    int k = ws_find(s, s->turn_key);
    if (k < 0) { /* the least recently used entry describes this call from now on */
        k = 0;
        for (int j = 1; j < BDR_WS_KEYS; j++)
            if (s->ws_used[j] < s->ws_used[k])
                k = j;
        s->ws_key[k] = s->turn_key;
        s->ws_peak[k] = 0;
        s->ws_fresh[k] = 0;
    }
    /* Beyond its warm set (what it held at its last unload, which a
     * look-ahead loads): SGD's turns receive two 9 MB blocks into fresh
     * allocations each time.  Not before its first unload (everything is
     * fresh then: counted, it left no room for a look-ahead in a 4-turn
     * run, mem.prefetch_partial); halved when a turn held less. */
    if (s->warm) {
        uint64_t fresh = s->turn_peak > s->warm ? s->turn_peak - s->warm : 0;
        s->ws_fresh[k] = fresh > s->ws_fresh[k] / 2 ? fresh : s->ws_fresh[k] / 2;
    }
    /* The most of any turn from there: a call is also resumed for short
     * turns that load little (a barrier's stages are mailbox waits of one
     * kind; with the last turn only, one such made the next pair run
     * together and shrink, 3-9 times in 10 rounds of mem.corun_fit).
     * What it gave back when asked to shrink counts: it held that too.
     * What it held at the resume does not: that is counted as held (the
     * most held at once made PageRank's small phase look as large as its
     * large one when the graph was still resident from before). */
    if (grew > s->ws_peak[k])
        s->ws_peak[k] = grew;
    s->ws_used[k] = ++g_m.order_counter;
}

/* What s will likely hold at once in the turn that begins (or began) in
 * the call `key` holding `base`: base and what turns from there loaded.  A
 * call it never resumed from is taken at the most other ranks' turns from
 * it loaded (the ranks of an MPI program mostly do the same: the first
 * round, MPI_Init's turns above all, ran in pairs that knew nothing of
 * each other and shrank, 27 times in SGD at 16:2), else at the most of its
 * other calls (0 before any turn ended). */
static uint64_t expect(const slave_t *s, uint64_t key, uint64_t base)
{
    int k = ws_find(s, key);
    uint64_t e = 0;
    if (k >= 0)
        return base + s->ws_peak[k];
    int seen = 0;
    for (int i = 0; i < g_m.ns; i++) {
        const slave_t *o = &g_m.slaves[i];
        int j = o == s ? -1 : ws_find(o, key);
        if (j >= 0) {
            seen = 1;
            e = o->ws_peak[j] > e ? o->ws_peak[j] : e;
        }
    }
    if (!seen)
        for (int j = 0; j < BDR_WS_KEYS; j++)
            if (s->ws_used[j] && s->ws_peak[j] > e)
                e = s->ws_peak[j];
    return base + e;
}

/* At -nr above 1 two running ranks whose working sets together exceed the
 * budget both load part of theirs and then wait for each other: resolve_stuck
 * makes one give back what it loaded, which it reads (and writes) again when
 * the other is done.  SGD at D/M 8 under 48M (16:2): 84 shrinks, 755 MB given
 * back, manager bytes read 1.44x and written 2.1x those at 16:1, 33 s of
 * grant waits against 0.7 s.  So a free slot goes to the next rank only when
 * its memory fits beside the running ranks', as far as their last turns
 * from the same calls tell (bdr_sched_next); otherwise it waits for one of
 * them to block, as at -nr 1.
 * What the master holds for itself counts only where it cannot be stored on
 * demand (buffered messages, data in transit between nodes). */
/* What running rank r is likely to hold at once in its turn: what it holds
 * now with what it asks for, its turn so far (it may have given part back)
 * and what turns from the same call loaded beyond their start. */
static uint64_t run_expect(const slave_t *r)
{
    uint64_t have = resident_of(r) +
                    atomic_load_explicit(&r->slot->mem_pinned, memory_order_relaxed) +
                    (r->mem_pending ? r->mem_want : 0);
    uint64_t e = expect(r, r->turn_key, r->turn_base);
    e = e > have ? e : have;
    return e > r->turn_peak ? e : r->turn_peak;
}

int bdr_memacct_corun_fits(const slave_t *c)
{
    uint64_t budget = g_m.hdr->job.mem_budget;
    if (!budget || g_m.hdr->job.mem_strategy == BD_MEMS_NONE)
        return 1;
    uint64_t t = g_m.bytes_buffered + bdr_node_transient_bytes();
    int others = 0;
    for (int i = 0; i < g_m.ns; i++) {
        const slave_t *r = &g_m.slaves[i];
        if (r == c || r->exited || r->state != SL_RUNNING)
            continue;
        others = 1;
        t += run_expect(r);
    }
    if (!others)
        return 1;
    uint64_t have =
        resident_of(c) + atomic_load_explicit(&c->slot->mem_pinned, memory_order_relaxed);
    uint64_t need = expect(c, bd_req_phase_key(&c->slot->req), have);
    if (t + need <= budget)
        return 1;
    /* Working sets of more than half the budget never fit in pairs (at D/M
     * 8 with 16 ranks every rank's is: K-means 25 MiB, PageRank 37, SGD 44
     * under 48M), and held apart -nr 2 is -nr 1 with a core idle.  With
     * room for a good part of its turn it runs, loading and computing
     * while the other one does, its grants capped to what the ranks that
     * began before it leave (reserved_for_elders): it waits for the rest
     * until one of them blocks, and they never wait for it. */
    uint64_t room = t + have < budget ? budget - t - have : 0;
    return room && 2 * room >= need - have ? BDR_CORUN_CAPPED : 0;
}

/* What the running ranks whose turns began before s's (as -nr 1 would have
 * run them first) may still load in them, as bdr_memacct_corun_fits
 * expected: s's grants leave that much free, so that a rank let in beside
 * them with a cap never makes them wait or give memory back.  None for a
 * rank others read from (they wait on it), for the one resolve_stuck keeps,
 * and none for elders that cannot be waited for: asleep outside MPI, polling
 * in vain (they wait for someone, perhaps s), or silent for
 * BDR_RESERVE_IDLE_S (their turn loaded less than the estimate). */
#define BDR_RESERVE_IDLE_S 0.25
/* A rank let in with a cap also leaves free what its loads need outside
 * the budget (the manager's bounce buffers, 4 I/O slots x 1 MiB, part of
 * the job's stated overhead of 16 MiB + 512 KiB a rank): without it two
 * loading ranks took PageRank 16:2 to 1.05 of -mem + that overhead. */
#define BDR_CAPPED_MARGIN (4ull << 20)
static int being_read(const slave_t *s);
static uint64_t reserved_for_elders(const slave_t *s)
{
    if (s->state != SL_RUNNING || s == g_m.mem_keep || being_read(s))
        return 0;
    double now = bdr_master_now();
    uint64_t sum = 0;
    for (int i = 0; i < g_m.ns; i++) {
        const slave_t *r = &g_m.slaves[i];
        if (r == s || r->exited || r->state != SL_RUNNING || r->asleep || r->polled ||
            r->turn_seq > s->turn_seq || now - r->mem_last > BDR_RESERVE_IDLE_S)
            continue;
        uint64_t e = run_expect(r),
                 held = resident_of(r) +
                        atomic_load_explicit(&r->slot->mem_pinned, memory_order_relaxed);
        sum += e > held ? e - held : 0;
    }
    return sum;
}

/* Other ranks are reading s's send buffers (single copy, process_vm_readv):
 * they cannot finish their receive before s goes on. */
static int being_read(const slave_t *s)
{
    return atomic_load_explicit(&s->slot->cma_out, memory_order_acquire) != 0;
}

/* The pending request served first: that of a rank whose send buffers are
 * being read (the readers wait on it, and it is never told to shrink: see
 * resolve_stuck), else the one of a rank chosen to go first when every
 * holder of memory was stuck, else the oldest.  A reader kept first while
 * the rank it reads waited behind it for a grant that fitted hung both
 * (issue 18, tests mem.grant_cma.*). */
static slave_t *next_pending(void)
{
    slave_t *best = NULL;
    slave_t *k = g_m.mem_keep;
    int kept = k && k->mem_pending && !k->exited;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->mem_pending && !s->exited && being_read(s) &&
            (!best || s->mem_order < best->mem_order))
            best = s;
    }
    /* Among several being read, the one resolve_stuck chose: answering
     * another one first made it choose again, for ever (the master spun
     * with 6 ranks at -nr 6; soak, issue 18, test mem.grant_read_many). */
    if (best)
        return kept && being_read(k) ? k : best;
    if (kept)
        return k;
    g_m.mem_keep = NULL;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->mem_pending && !s->exited && !s->mem_defer &&
            (!best || s->mem_order < best->mem_order))
            best = s;
    }
    return best;
}

/* s cannot be granted, nothing is being unloaded and no waiting rank can be
 * unloaded.  If some other rank still runs, it will block (and become
 * unloadable), ask, or end: wait for it.  Otherwise every rank that could
 * give memory back waits for memory itself, and nothing would ever change:
 * the pending rank holding the most keeps its memory and goes first, the
 * other pending holders store part of theirs, what the kept one lacks, the
 * largest holder first, and ask again (BD_MEM_RESP_SHRINK with a size:
 * each gives back the memory it touched longest ago, so what it works on
 * stays resident; issue 16).  With nobody left to shrink, the one kept
 * cannot fit even alone, and the job ends with a message.  Returns 0 to
 * wait, 1 to look at the pending requests again, -1 when the job was
 * ended. */
static int resolve_stuck(slave_t *s)
{
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *c = &g_m.slaves[i];
        if (c != s && !c->exited && !c->mem_pending &&
            (c->state == SL_RUNNING || c->state == SL_FINALIZED))
            return 0;
        if (c->pf_sent && !c->exited)
            return 0; /* unloadable once it has acknowledged its look-ahead */
    }
    /* A rank being read goes first (it cannot shrink, its readers wait on
     * it); else the one holding the most. */
    slave_t *keep = s;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *c = &g_m.slaves[i];
        if (!c->mem_pending || c->exited)
            continue;
        int cr = being_read(c), kr = being_read(keep);
        if ((cr && !kr) || (cr == kr && resident_of(c) > resident_of(keep)))
            keep = c;
    }
    int shrunk = 0, reading = 0;
    uint64_t budget = g_m.hdr->job.mem_budget, total = node_resident() + keep->mem_want;
    uint64_t lack = total > budget ? total - budget : 0;
    for (;;) {
        slave_t *v = NULL;
        for (int i = 0; i < g_m.ns; i++) {
            slave_t *c = &g_m.slaves[i];
            if (c == keep || !c->mem_pending || c->exited || resident_of(c) == 0)
                continue;
            if (being_read(c)) {
                reading = 1; /* others read its buffers: they finish first */
                continue;
            }
            if (!v || resident_of(c) > resident_of(v))
                v = c;
        }
        if (!v || (shrunk && !lack))
            break;
        /* 0 asks for all of it (also when the amount is unknown) */
        uint64_t give = lack && lack < resident_of(v) ? lack : 0;
        atomic_store_explicit(&v->slot->mem_resp_give, give, memory_order_relaxed);
        lack -= give ? give : (lack < resident_of(v) ? lack : resident_of(v));
        mem_answer(v, BD_MEM_RESP_SHRINK);
        shrunk = 1;
    }
    g_m.mem_keep = keep;
    if (keep != s)
        return 1;
    if (shrunk)
        return 0; /* served when their memory is back */
    if (reading) {
        /* Every other holder that waits for memory is being read, by
         * ranks that wait for memory too (none runs): none can give
         * memory back without pulling pages from under a reader, and
         * nobody's read ends.  The kept request is granted over the
         * budget, by its size, so that its rank goes on and its readers
         * with it; the node comes back within the budget as ranks block
         * and are unloaded.  Six ranks in a ring at -nr 6 all waited so
         * (soak, issue 18, test mem.grant_read_many). */
        mem_answer(s, 0);
        return 0;
    }
    /* an adaptive budget lowered under pressure goes up to the least it needs */
    if (bdr_pressure_floor(node_resident() + s->mem_want))
        return 1;
    /* The transport's kept buffers count in the budget (bdr_net_held) and
     * are there only for speed: they go now, then it may fit (without
     * this, 6 MiB did not fit in 8M on a node whose transport kept 2 MiB
     * of a message's chunks: net_direct.unloaded, 1 run in 2 under load).
     * The remote tier's copies and chunks on their way leave by
     * themselves: wait for them. */
    bdr_net_trim();
    uint64_t draining = bdr_remote_draining();
    if (node_resident() + s->mem_want <= budget)
        return 1;
    if (draining)
        return 0;
    /* Collective pieces up to -msg-threshold stay in memory by design, but
     * many ranks' pieces of one all-to-all can take the whole budget (64
     * ranks' at 8 MiB): they go to the spill file too, and their writes
     * wake the loop when they complete. */
    uint64_t writing = 0;
    uint64_t freed = bdr_coll_shrink_small(node_resident() + s->mem_want - budget, &writing);
    if (freed || writing)
        return freed ? 1 : 0;
    /* The ranks' memory outside the manager is counted to keep the job
     * within its bound, never to end it: a rank that fits without it goes
     * on (test mem.grant_cma.uffd). */
    if (node_resident() - bdr_unmanaged_counted() + s->mem_want <= budget) {
        mem_answer(s, 0);
        return 0;
    }
    bdr_master_fail(1,
                    "rank %d needs %llu more bytes of memory with %llu resident, but the node's "
                    "budget (-mem) is %llu bytes and %llu of it is held by buffered messages "
                    "and %llu by collective data in the master: its working set cannot fit; use "
                    "more ranks or a larger -mem",
                    s->world, (unsigned long long)s->mem_want, (unsigned long long)resident_of(s),
                    (unsigned long long)budget, (unsigned long long)g_m.bytes_buffered,
                    (unsigned long long)bdr_coll_staging_bytes());
    mem_answer(s, -12);
    return -1;
}

/* Look-ahead loading (issue 13): while ranks run, the rank the run queue
 * serves next reads back what it had resident at its last unload, so that
 * storage works while the CPU computes and the rank finds its working set
 * in memory when its turn comes.  One rank loads ahead at a time, only when
 * no rank waits for memory, into memory that is free or held by ranks that
 * wait in MPI and are not queued (the next rank's loads would push those
 * out anyway).  Running and queued ranks are never unloaded for it.  When
 * even then not all of it fits, it loads the part that does (cmd_limit):
 * one rank's working set that takes most of the budget still leaves room
 * for part of the next one's, and every byte loaded ahead is one fewer
 * loaded while the CPU waits. */
static void prefetch_next(void)
{
    uint64_t budget = g_m.hdr->job.mem_budget;
    /* with a run slot free, the next rank runs now instead (unless the slot
     * is kept from it because its memory does not fit: sched.c corun_gate) */
    if (!budget || g_m.hdr->job.mem_prefetch != 0 || g_m.stopping ||
        (g_m.nrunning < g_m.nr && !g_m.corun_gated))
        return;
    for (int i = 0; i < g_m.ns; i++)
        if (g_m.slaves[i].pf_sent)
            return;
    /* Only the rank that runs next: a look-ahead for the ranks behind it
     * filled the budget's last megabytes with parts of three or four of
     * them (K-means, 16 ranks at -nr 1), which the next rank's own loads
     * then had to push out again. */
    slave_t *c = bdr_sched_peek(not_in_vain);
    if (!c || !prefetch_wanted(c))
        return;
    /* Running ranks come first: they will likely touch again what they
     * had resident at their last unload, and hold beyond it what their
     * turns from the same call held beyond it (fresh allocations, receive
     * buffers), so that much stays free.  Without the second part, SGD's
     * look-ahead filled the room its running rank's two received blocks
     * then took back at once: a fifth more read, nothing gained. */
    uint64_t want = c->warm - resident_of(c), total = node_resident();
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *r = &g_m.slaves[i];
        if (r->state != SL_RUNNING)
            continue;
        int k = ws_find(r, r->turn_key);
        uint64_t expect = r->warm + (k >= 0 ? r->ws_fresh[k] : 0), have = resident_of(r);
        if (expect > have)
            total += expect - have;
    }
    if (total + want > budget) {
        uint64_t need = total + want - budget, coming = 0;
        for (int i = 0; i < g_m.ns; i++)
            if (g_m.slaves[i].unload_sent)
                coming += resident_of(&g_m.slaves[i]);
        while (coming < need) {
            slave_t *v = NULL;
            for (int i = 0; i < g_m.ns; i++) {
                slave_t *o = &g_m.slaves[i];
                if (o != c && o->state == SL_BLOCKED && can_unload(o) &&
                    (!v || resident_of(o) > resident_of(v)))
                    v = o;
            }
            if (!v)
                break;
            coming += resident_of(v);
            bdr_memacct_unload(v);
        }
        if (coming)
            return; /* asked again when the unloads are done */
        /* All of it cannot fit beside the running ranks: load ahead the part
         * that does (the rest is loaded when touched), unless that is too
         * little to be worth a command. */
        uint64_t room = budget > total ? budget - total : 0, least = budget / 16;
        least = least < (1u << 20) ? least : (1u << 20);
        if (room < least) {
            c->pf_done = 1;
            return;
        }
        want = room;
    }
    c->pf_sent = 1;
    c->pf_done = 1;
    atomic_store_explicit(&c->slot->cmd_limit, want, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->slot->stats[BD_STAT_MEM_PREFETCHES], 1, memory_order_relaxed);
    atomic_store_explicit(&c->slot->cmd, BD_CMD_PREFETCH, memory_order_relaxed);
    bdr_sched_respond(c); /* wakes it; it sees the command, not an answer */
}

void bdr_memacct_poll(void)
{
    uint32_t waiting = 0;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->exited)
            continue;
        uint32_t seq = atomic_load_explicit(&s->slot->mem_req_seq, memory_order_acquire);
        if (seq != s->seen_mem_req) {
            s->seen_mem_req = seq;
            s->mem_want = atomic_load_explicit(&s->slot->mem_req_bytes, memory_order_relaxed);
            s->mem_pending = 1;
            s->mem_order = ++g_m.order_counter;
            s->mem_last = bdr_master_now();
            bdr_unmanaged_sample(s, 1);
        }
        s->mem_defer = 0;
        if (s->unload_sent && atomic_load_explicit(&s->slot->cmd, memory_order_acquire) == 0) {
            s->unload_sent = 0;
            g_m.nunloading--;
            bdr_sched_poke(s);
        }
        if (s->pf_sent && atomic_load_explicit(&s->slot->cmd, memory_order_acquire) == 0) {
            s->pf_sent = 0;
            bdr_sched_poke(s);
        }
    }
    uint64_t budget = g_m.hdr->job.mem_budget;
    /* A look-ahead load is answered at once: granted only into free memory
     * that no other request waits for, else refused (it is optional). */
    int demand = 0;
    for (int i = 0; i < g_m.ns; i++)
        demand |= g_m.slaves[i].mem_pending && !g_m.slaves[i].pf_sent;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->mem_pending && s->pf_sent)
            mem_answer(s, !demand && node_resident() + s->mem_want <= budget ? 0 : -11);
    }
    for (;;) {
        slave_t *s = next_pending();
        if (!s)
            break;
        uint64_t total = node_resident();
        budget = g_m.hdr->job.mem_budget; /* the adaptive budget may have gone up */
        /* what running ranks that began before it may still load */
        uint64_t resv = budget ? reserved_for_elders(s) : 0;
        /* A rank let in with a cap loads once the ranks before it have
         * loaded what they were expected to: its I/O then overlaps their
         * computing, not their loads (which it would only slow). */
        int behind = resv && s->capped && s->state == SL_RUNNING;
        if (resv && s->capped)
            resv += BDR_CAPPED_MARGIN;
        /* A finalized rank is no longer scheduled: let it finish. */
        if (!budget || (!behind && total + s->mem_want + resv <= budget) ||
            s->state == SL_FINALIZED) {
            if (BD_FAULT_HIT(BD_FAULT_MASTER_GRANT)) { /* fault injection: withheld */
                waiting = 1;
                break;
            }
            mem_answer(s, 0);
            continue;
        }
        if (total + s->mem_want + resv <= budget) { /* behind: wait, taking nothing */
            s->mem_defer = 1;
            continue;
        }
        /* Collective data kept in memory goes to storage: what is freed
         * now is looked at again at once; what is being written counts as
         * coming, like the memory of ranks being unloaded, and its
         * completion wakes the loop (bdr_stage_poll). */
        uint64_t writing = 0;
        if (bdr_coll_shrink(total + s->mem_want + resv - budget, &writing))
            continue;
        uint64_t need = total + s->mem_want + resv - budget;
        /* other nodes' data held here goes back to them before our ranks unload */
        if (writing < need)
            writing += bdr_remote_reclaim(need - writing);
        uint64_t coming = writing;
        for (int i = 0; i < g_m.ns; i++)
            if (g_m.slaves[i].unload_sent)
                coming +=
                    atomic_load_explicit(&g_m.slaves[i].slot->mem_resident, memory_order_relaxed);
        while (coming < need) {
            slave_t *v = NULL;
            for (int i = 0; i < g_m.ns; i++) {
                slave_t *c = &g_m.slaves[i];
                if (c != s && can_unload(c) && (!v || evict_before(c, v)))
                    v = c;
            }
            if (!v)
                break;
            coming += resident_of(v);
            bdr_memacct_unload(v);
        }
        if (resv && (coming == 0 || behind)) {
            /* it waits for an elder to block (or ask, or stay silent);
             * the requests behind it may fit */
            s->mem_defer = 1;
            continue;
        }
        if (coming == 0 && !g_m.nunloading) {
            int r = resolve_stuck(s);
            if (r < 0)
                return;
            if (r > 0)
                continue;
        }
        waiting = 1;
        break;
    }
    for (int i = 0; i < g_m.ns; i++)
        waiting += g_m.slaves[i].mem_pending;
    atomic_store_explicit(&g_m.hdr->mem_waiters, waiting, memory_order_relaxed);
    if (!waiting)
        prefetch_next();
}
