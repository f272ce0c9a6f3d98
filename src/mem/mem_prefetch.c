/* Look-ahead loading (bd_mem_phase, bd_mem_prefetch): what a residency
 * touched is recorded per phase (the MPI call the process resumed from), and
 * a process that waits for its run slot loads back, in the background, what
 * the same phase touched last time, or the part of it the budget has room
 * for.  docs/design.md, "Memory". */
#include <errno.h>

#include "mem_internal.h"

#define G bdm_g

/* What a look-ahead load of a must account: AR, the whole allocation if it
 * was touched before its last unload and has stored data; LRLW, its warm
 * stored sbpages that are not resident. */
static size_t pf_need(const alloc_t *a)
{
    if (bdm_is_ar())
        return (a->warm >> G.pf_slot & 1) && !a->loaded && bdm_has_stored(a) && a->len > a->acct
                   ? a->len - a->acct
                   : 0;
    size_t n = 0;
    for (size_t i = 0; i < a->nsb; i++)
        if (!(a->st[i] & (SB_RES | SB_LOADING)) && !bdm_pf_skip(a->st[i]))
            n++;
    return n * G.sbpage;
}

static int phase_slot(uint64_t key)
{
    for (int k = 0; k < BDM_NPHASE; k++)
        if (G.phase_used[k] && G.phase_key[k] == key)
            return k;
    return -1;
}

void bd_mem_phase(uint64_t key)
{
    if (!G.active)
        return;
    LOCK();
    if (G.phase_cur >= 0 && G.phase_key[G.phase_cur] == key) {
        /* the residency goes on (a call answered without giving up the run
         * slot): only pre-cleaning resumes */
        __atomic_store_n(&G.pc_run, 1, __ATOMIC_RELEASE);
        UNLOCK();
        return;
    }
    int k = phase_slot(key);
    if (k < 0) { /* the least recently used slot describes this call from now on */
        k = 0;
        for (int j = 1; j < BDM_NPHASE; j++)
            if (G.phase_used[j] < G.phase_used[k])
                k = j;
        G.phase_key[k] = key;
        for (size_t i = 0; i < G.ntab; i++)
            bdm_note_warm(G.tab[i], 0, k);
    }
    G.phase_used[k] = ++G.io_seq;
    G.phase_cur = k;
    for (size_t i = 0; i < G.ntab; i++)
        G.tab[i]->ovw = 0;
    /* the process runs: pre-cleaning may run until bd_mem_idle */
    __atomic_store_n(&G.pc_run, 1, __ATOMIC_RELEASE);
    UNLOCK();
}

/* Which of the look-ahead loads to make under limit bytes: AR loads whole
 * allocations, so the largest that still fit go first (most bytes for the
 * room); LRLW takes the first warm sbpages of each allocation in table
 * order.  Each allocation's pf_take gets its bytes to load; returns the
 * sum.  Under the lock. */
static size_t pf_choose(size_t limit)
{
    size_t used = 0;
    for (size_t k = 0; k < G.ntab; k++)
        G.tab[k]->pf_take = 0;
    if (!bdm_is_ar()) {
        for (size_t k = 0; k < G.ntab && used < limit; k++) {
            size_t n = pf_need(G.tab[k]);
            n = n < limit - used ? n : (limit - used) / G.sbpage * G.sbpage;
            G.tab[k]->pf_take = n;
            used += n;
        }
        return used;
    }
    for (;;) {
        alloc_t *best = NULL;
        size_t bn = 0;
        for (size_t k = 0; k < G.ntab; k++) {
            size_t n = G.tab[k]->pf_take ? 0 : pf_need(G.tab[k]);
            if (n && used + n <= limit && n > bn) {
                best = G.tab[k];
                bn = n;
            }
        }
        if (!best)
            return used;
        best->pf_take = bn;
        used += bn;
    }
}

int64_t bd_mem_prefetch(uint64_t key, uint64_t limit)
{
    if (!G.active)
        return 0;
    size_t sb = G.sbpage, need = 0;
    LOCK();
    bdm_reap_done();
    /* one look-ahead at a time: pf_slot is read by the streams it starts */
    for (size_t k = 0; k < G.ntab; k++)
        if (G.tab[k]->pf) {
            UNLOCK();
            return 0;
        }
    G.pf_slot = phase_slot(key);
    if (G.pf_slot < 0) {
        G.pf_slot = 0;
        UNLOCK();
        return 0;
    }
    need = pf_choose(limit);
    UNLOCK();
    if (!need)
        return 0;
    if (G.acquire) {
        size_t give = 0; /* a look-ahead load is never asked to shrink */
        int rc = G.acquire(G.ctx, need, &give);
        if (rc != 0)
            return rc < 0 ? rc : -EAGAIN;
    }
    LOCK();
    /* chosen again: the table may have changed while the budget answered */
    pf_choose(need);
    size_t used = 0;
    for (size_t k = 0; k < G.ntab; k++) {
        alloc_t *a = G.tab[k];
        size_t n = a->pf_take;
        if (!n || used + n > need)
            continue;
        used += n;
        bdm_acct_add(a, n);
        if (bdm_is_ar()) {
            a->loaded = 1;
            a->ra_next = 0;
            a->ra_end = a->nsb;
        } else {
            /* the stream covers the first n / sb warm sbpages only: past
             * them it would ask the budget for more than was granted */
            size_t lo = a->nsb, hi = 0, left = n / sb;
            for (size_t i = 0; i < a->nsb && left; i++)
                if (!(a->st[i] & (SB_RES | SB_LOADING)) && !bdm_pf_skip(a->st[i])) {
                    lo = i < lo ? i : lo;
                    hi = i + 1;
                    left--;
                }
            a->pf = 1;
            a->npf = n / sb;
            a->ra_win = 0;
            a->ra_next = lo;
            a->ra_end = hi;
        }
    }
    G.rel_pending += need - used; /* the table changed meanwhile */
    G.st.prefetched += used;
    G.pf_active = 1;
    bdm_pump_all();
    if (!bdm_is_uffd()) {
        /* no handler thread carries the streams on: finish them here */
        while (!bdm_io_idle()) {
            for (int k = 0; k < IO_NSLOT; k++)
                bdm_io_wait(&G.io[k]);
            bdm_reap_done();
            bdm_pump_all();
        }
        G.pf_active = 0;
    }
    UNLOCK();
    return (int64_t)used;
}
