#include "bd_mbox.h"

#include <errno.h>
#include <string.h>

#include "bd_ipc.h"

void bd_mbox_init(bd_mbox_t *mb, uint64_t ring_size)
{
    memset(mb, 0, sizeof *mb);
    mb->size = ring_size;
}

/* A futex mutex (Drepper's "Futexes are tricky", mutex 2); critical
 * sections are a copy of at most the eager limit. */
void bd_mbox_lock(bd_mbox_t *mb)
{
    uint32_t c = 0;
    if (atomic_compare_exchange_strong_explicit(&mb->lock, &c, 1, memory_order_acquire,
                                                memory_order_relaxed))
        return;
    for (int spin = 0; spin < 200; spin++) {
        c = 0;
        if (atomic_load_explicit(&mb->lock, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&mb->lock, &c, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    if (c != 2)
        c = atomic_exchange_explicit(&mb->lock, 2, memory_order_acquire);
    while (c != 0) {
        bd_futex_wait(&mb->lock, 2, -1);
        c = atomic_exchange_explicit(&mb->lock, 2, memory_order_acquire);
    }
}

void bd_mbox_unlock(bd_mbox_t *mb)
{
    if (atomic_fetch_sub_explicit(&mb->lock, 1, memory_order_release) != 1) {
        atomic_store_explicit(&mb->lock, 0, memory_order_release);
        bd_futex_wake(&mb->lock, 1);
    }
}

int bd_mbox_fits(const bd_mbox_t *mb, uint64_t inline_bytes)
{
    /* Room for the worst padding before it as well. */
    return 2 * bd_mentry_size(inline_bytes) <= mb->size;
}

uint64_t bd_mbox_room(bd_mbox_t *mb)
{
    uint64_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&mb->tail, memory_order_acquire);
    return mb->size - (head - tail);
}

int bd_mbox_append(bd_mbox_t *mb, const bd_mentry_t *proto, const void *data, uint64_t nbytes,
                   bd_mbox_pack_fn pack, void *arg)
{
    if (atomic_load_explicit(&mb->dead, memory_order_relaxed))
        return -EPIPE;
    uint64_t need = bd_mentry_size(nbytes);
    uint64_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&mb->tail, memory_order_acquire);
    uint64_t off = head & (mb->size - 1);
    uint64_t pad = off + need > mb->size ? mb->size - off : 0;
    if (head - tail + pad + need > mb->size)
        return -ENOSPC;
    char *ring = bd_mbox_ring(mb);
    if (pad) {
        bd_mentry_t *p = (bd_mentry_t *)(ring + off);
        p->size = (uint32_t)pad;
        p->kind = BD_ME_PAD;
        atomic_store_explicit(&p->state, BD_ME_READY, memory_order_relaxed);
        off = 0;
    }
    bd_mentry_t *e = (bd_mentry_t *)(ring + off);
    memcpy((char *)e + sizeof e->state, (const char *)proto + sizeof proto->state,
           sizeof *e - sizeof e->state);
    e->size = (uint32_t)need;
    if (nbytes) {
        if (pack)
            pack(arg, bd_mentry_data(e), nbytes);
        else
            memcpy(bd_mentry_data(e), data, nbytes);
    }
    atomic_store_explicit(&e->state, BD_ME_READY, memory_order_relaxed);
    /* Release: the consumer that sees the new head sees the entry. */
    atomic_store_explicit(&mb->head, head + pad + need, memory_order_release);
    return 0;
}

int bd_mbox_notify(bd_mbox_t *mb)
{
    /* Sequentially consistent against the owner's store to sleeping and
     * its load of event_seq: either it sees the new count, or we see it
     * sleeping.  No futex wake: nobody waits on event_seq in the kernel
     * (the owner spins on it, or sleeps in the master, which the caller
     * rings), and a FUTEX_WAKE system call per message was a third of the
     * cost of a small send. */
    atomic_fetch_add_explicit(&mb->event_seq, 1, memory_order_seq_cst);
    return atomic_load_explicit(&mb->sleeping, memory_order_seq_cst) != 0;
}

bd_mentry_t *bd_mbox_peek(bd_mbox_t *mb, uint64_t *pos)
{
    uint64_t head = atomic_load_explicit(&mb->head, memory_order_acquire);
    while (*pos != head) {
        bd_mentry_t *e = (bd_mentry_t *)(bd_mbox_ring(mb) + (*pos & (mb->size - 1)));
        if (e->kind != BD_ME_PAD)
            return e;
        *pos += e->size;
    }
    return NULL;
}

void bd_mbox_advance(bd_mbox_t *mb, uint64_t *pos, const bd_mentry_t *e)
{
    (void)mb;
    *pos += e->size;
}

int bd_mbox_consumed(bd_mbox_t *mb, uint64_t pos)
{
    atomic_store_explicit(&mb->tail, pos, memory_order_seq_cst);
    return atomic_load_explicit(&mb->room_wanted, memory_order_seq_cst) != 0;
}

int bd_mbox_take(bd_mentry_t *e)
{
    for (;;) {
        uint32_t st = BD_ME_READY;
        if (atomic_compare_exchange_strong_explicit(&e->state, &st, BD_ME_TAKEN,
                                                    memory_order_acq_rel, memory_order_acquire))
            return 1;
        if (st != BD_ME_BUSY)
            return 0;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

bd_mentry_t *bd_mbox_find(bd_mbox_t *mb, int src_world, uint64_t send_id)
{
    uint64_t head = atomic_load_explicit(&mb->head, memory_order_relaxed);
    uint64_t pos = atomic_load_explicit(&mb->tail, memory_order_acquire);
    while (pos != head) {
        bd_mentry_t *e = (bd_mentry_t *)(bd_mbox_ring(mb) + (pos & (mb->size - 1)));
        pos += e->size;
        if (e->kind == BD_ME_MSG && e->src_world == src_world && e->send_id == send_id)
            return e;
    }
    return NULL;
}

int bd_mbox_cancel(bd_mbox_t *mb, int src_world, uint64_t send_id, bd_mentry_t *out)
{
    bd_mentry_t *e = bd_mbox_find(mb, src_world, send_id);
    uint32_t st = BD_ME_READY;
    if (!e)
        return 0;
    if (!atomic_compare_exchange_strong_explicit(&e->state, &st, BD_ME_CANCELLED,
                                                 memory_order_acq_rel, memory_order_relaxed))
        return st == BD_ME_CANCELLED ? 0 : -1;
    memcpy(out, e, sizeof *out);
    return 1;
}

int bd_mbox_unexp_add(bd_mbox_t *mb, int src_world, uint64_t send_id)
{
    bd_unexp_t *t = bd_mbox_unexp(mb);
    for (int i = 0; i < BD_MBOX_UNEXP; i++) {
        uint64_t w = atomic_load_explicit(&t[i].word, memory_order_relaxed);
        if ((w & 3) != BD_UX_FREE)
            continue;
        t[i].src_world = src_world;
        t[i].send_id = send_id;
        /* Release: a canceller that sees WAITING sees the ids. */
        atomic_store_explicit(&t[i].word, (w & ~3ull) | BD_UX_WAITING, memory_order_release);
        return i;
    }
    return -1;
}

int bd_mbox_unexp_claim(bd_mbox_t *mb, int i)
{
    bd_unexp_t *u = &bd_mbox_unexp(mb)[i];
    uint64_t w = atomic_load_explicit(&u->word, memory_order_acquire);
    uint64_t next = ((w >> 2) + 1) << 2 | BD_UX_FREE;
    /* Only the owner frees; a canceller changes WAITING to CANCELLED only. */
    while (!atomic_compare_exchange_weak_explicit(&u->word, &w, next, memory_order_acq_rel,
                                                  memory_order_acquire))
        ;
    return (w & 3) == BD_UX_WAITING;
}

int bd_mbox_unexp_cancelled(bd_mbox_t *mb, int i)
{
    return (atomic_load_explicit(&bd_mbox_unexp(mb)[i].word, memory_order_acquire) & 3) ==
           BD_UX_CANCELLED;
}

int bd_mbox_unexp_cancel(bd_mbox_t *mb, int src_world, uint64_t send_id)
{
    bd_unexp_t *t = bd_mbox_unexp(mb);
    for (int i = 0; i < BD_MBOX_UNEXP; i++) {
        uint64_t w = atomic_load_explicit(&t[i].word, memory_order_acquire);
        if ((w & 3) != BD_UX_WAITING || t[i].src_world != src_world || t[i].send_id != send_id)
            continue;
        uint64_t want = (w & ~3ull) | BD_UX_CANCELLED;
        /* The generation in w: a slot freed and reused since is left alone. */
        return atomic_compare_exchange_strong_explicit(&t[i].word, &w, want, memory_order_acq_rel,
                                                       memory_order_relaxed);
    }
    return 0;
}

void bd_mbox_drop_file(struct bd_shm_hdr *h, const bd_mentry_t *e, const char *path)
{
    if (bd_spill_unlink(h, path, e->nbytes) < 0 || !(e->flags & BD_ME_FLOW))
        return;
    int i = bd_world_slot(h, e->src_world);
    if (i >= 0 && (uint32_t)i < h->nslaves)
        atomic_fetch_sub_explicit(&bd_shm_slot(h, (uint32_t)i)->flow_out, e->nbytes,
                                  memory_order_release);
}
