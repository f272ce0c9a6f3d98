/* Collective pieces handed over by reference (issue 13, "move only what
 * must move").  A rank that PUTs a whole contiguous piece whose memory is
 * out of memory, stored in the node's store (-mem-dedup, mem_dedup.c),
 * sends the store slots that hold it instead of the bytes
 * (BD_REQ_COLL_PUTREF, bd_mem_store_take): copying it would load it from
 * storage into the rank, and this master would write it to a spill file
 * and read it back for its reader.  By reference it is read once, here,
 * from the store, when its reader GETs it.
 *
 * The references are this master's from the PUT on: the slots cannot be
 * freed or rewritten in place while it holds them (mem_dedup.c rewrites a
 * slot in place only when its one holder writes it), so the sender may
 * change its buffer as soon as its call returns; its next write-back goes
 * to fresh slots.  They are given back when the instance is freed, after
 * every reader ENDed it.
 *
 * Kept by reference only where every reader of the piece GETs it here:
 * all-to-alls, gathers and scatters that do not pipeline (-coll-stage 0,
 * the default), on one node.  Elsewhere (other nodes ship pieces from the
 * spill file, bounded staging gives pieces back as they are read) the
 * piece is read from the store at once and placed like a PUT's.
 *
 * Reads go through one aligned buffer (direct I/O) of a run of
 * consecutive slots of one piece, up to 1 MiB (ref_buf_len), so the
 * window-sized GETs of a piece read each slot once; it holds only slots of
 * pieces held here, is emptied whenever references are given back (a
 * freed slot may be rewritten with other data), and is given back when
 * the budget needs room (bdr_coll_shrink) or no piece holds references.  With the ranks' checksums on (the default)
 * each slot read is checked against the CRC32C its writer recorded.
 *
 * A reader's pieces at once (batches).  One synchronous read per run of
 * slots waited behind the other ranks' loads and unloads each time: 16
 * ranks of PageRank under -mem 48M made 22 GETs an Alltoallv at 1.2-1.5 ms
 * each, 70% of the iteration (docs/performance.md, session 26).  So when a
 * reader GETs the start of a piece of an all-to-all or gather, every piece
 * by reference it will read there from that peer on is read at once into
 * one buffer, all runs in flight together
 * (bd_fs_pread_batch), as far as the budget has room (bdr_stage_fits, at
 * most a 16th of it); its GETs then copy from memory.  At most NBATCH
 * readers' batches are kept (two running ranks GET in turns); a batch goes
 * when a newer one needs its place, when its pieces go, or when the budget
 * needs room (bdr_ref_trim): it is only a cache. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bd_fs.h"
#include "bd_log.h"
#include "bd_mem_store.h"
#include "coll.h"

/* The read buffer: 1 MiB, at most a 32nd of the budget (as the stage's
 * buffers, so that a small budget is not taken up by the reading itself:
 * a whole MiB is half of -mem 2M), at least one sbpage. */
static uint64_t ref_buf_len(uint64_t sb)
{
    uint64_t b = g_m.hdr->job.mem_budget / 32, n = b && b < (1u << 20) ? b : (1u << 20);
    return n < sb ? sb : n / sb * sb;
}

static bd_mem_store_t g_st;
static int g_attached; /* 1 attached, -errno failed */
static char *g_buf;    /* aligned, g_buf_len bytes */
static uint64_t g_buf_len;
static uint32_t g_c0, g_cn; /* the buffer holds slots [g_c0, g_c0 + g_cn) */
static uint64_t g_held;     /* pieces holding references */
static char g_bad[BD_PATH_MAX + 64];

enum { NBATCH = 2 };
typedef struct {
    const coll_t *c; /* NULL: unused */
    int reader;
    char *buf;
    uint64_t len;
    piece_t **pieces; /* in it (NULL once gone) */
    int npieces, live;
    uint64_t tick;
} batch_t;
static batch_t g_bat[NBATCH];
static uint64_t g_tick;
static bd_fs_batch_t g_aio;

static int attach(void)
{
    if (g_attached)
        return g_attached < 0 ? g_attached : 0;
    if (!g_m.hdr->dedup_bytes) {
        g_attached = -ENOENT;
        return g_attached;
    }
    int rc = bd_mem_store_attach(&g_st, (char *)g_m.hdr + g_m.hdr->dedup_offset,
                                 g_m.hdr->dedup_bytes, g_m.jobdir, g_m.hdr->job.sbpage);
    g_attached = rc < 0 ? rc : 1;
    return rc;
}

static int buffer(void)
{
    if (g_buf)
        return 0;
    uint64_t len = ref_buf_len(g_st.sbpage);
    void *b = NULL;
    if (posix_memalign(&b, BD_FS_DIO_ALIGN, len))
        return -ENOMEM;
    g_buf = b;
    g_buf_len = len;
    g_cn = 0;
    return 0;
}

static uint64_t batch_free(batch_t *b)
{
    if (!b->c)
        return 0;
    for (int i = 0; i < b->npieces; i++)
        if (b->pieces[i])
            b->pieces[i]->ref_at = 0;
    uint64_t n = b->len;
    free(b->buf);
    free(b->pieces);
    memset(b, 0, sizeof *b);
    return n;
}

uint64_t bdr_ref_buffer_bytes(void)
{
    uint64_t n = g_buf ? g_buf_len : 0;
    for (int i = 0; i < NBATCH; i++)
        n += g_bat[i].len;
    return n;
}

uint64_t bdr_ref_trim(void)
{
    uint64_t n = 0;
    for (int i = 0; i < NBATCH; i++)
        n += batch_free(&g_bat[i]);
    if (!g_buf)
        return n; /* only a cache: the next read allocates it again */
    n += g_buf_len;
    free(g_buf);
    g_buf = NULL;
    g_buf_len = 0;
    g_cn = 0;
    return n;
}

const char *bdr_ref_bad(void) { return g_bad; }

/* Slots [k, k + n) of p into the buffer, checked. */
static int fill(const piece_t *p, uint32_t k, uint32_t n)
{
    uint64_t sb = g_st.sbpage;
    g_cn = 0;
    int rc = bd_mem_store_read(&g_st, p->ref[k], n, g_buf);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; p->ref_crc && i < n; i++)
        if (bd_mem_store_check(&g_st, g_buf + i * sb, p->ref[p->nref + k + i]) < 0) {
            snprintf(g_bad, sizeof g_bad, "at offset %llu in %s/bdmem.store",
                     (unsigned long long)(p->ref[k + i] - 1) * sb, g_m.jobdir);
            return -EBADMSG;
        }
    g_c0 = p->ref[k];
    g_cn = n;
    return 0;
}

int bdr_ref_read(const piece_t *p, uint64_t off, char *dst, uint32_t len)
{
    uint64_t sb = g_st.sbpage, pos = p->ref_first + off;
    if (p->ref_at) {
        memcpy(dst, g_bat[p->ref_batch].buf + (p->ref_at - 1) + pos, len);
        return 0;
    }
    int rc = buffer();
    if (rc < 0)
        return rc;
    while (len) {
        uint32_t k = (uint32_t)(pos / sb), in = (uint32_t)(pos % sb);
        uint32_t take = sb - in < len ? (uint32_t)(sb - in) : len, s = p->ref[k];
        if (!s) {
            memset(dst, 0, take); /* never stored: zeros */
        } else {
            if (!g_cn || s < g_c0 || s >= g_c0 + g_cn) {
                /* the run of consecutive slots from here, within the piece */
                uint32_t n = 1, cap = (uint32_t)(g_buf_len / sb);
                while (n < cap && k + n < p->nref && p->ref[k + n] == s + n)
                    n++;
                if ((rc = fill(p, k, n)) < 0)
                    return rc;
            }
            memcpy(dst, g_buf + (uint64_t)(s - g_c0) * sb + in, take);
        }
        dst += take;
        pos += take;
        len -= take;
    }
    return 0;
}

void bdr_ref_drop(piece_t *p)
{
    if (!p->ref)
        return;
    if (p->ref_at) {
        batch_t *b = &g_bat[p->ref_batch];
        for (int i = 0; i < b->npieces; i++)
            if (b->pieces[i] == p)
                b->pieces[i] = NULL;
        p->ref_at = 0;
        if (--b->live == 0)
            batch_free(b);
    }
    g_cn = 0; /* a slot given back may be rewritten with other data */
    if (bd_mem_store_drop(&g_st, p->ref, p->nref) < 0)
        bd_log_warn("master: the node store's table lock is unusable: %u slots of collective "
                    "data stay allocated until the job ends",
                    p->nref);
    free(p->ref);
    p->ref = NULL;
    p->nref = 0;
    if (--g_held == 0)
        bdr_ref_trim();
}

/* The runs of consecutive slots of the pieces in b, at most 1 MiB each, as
 * reads into b->buf (zero slots are cleared, not read); the slots are then
 * checked.  0 or -errno (-EBADMSG: a slot's CRC differs). */
static int batch_read(batch_t *b)
{
    uint64_t sb = g_st.sbpage, cap = (1u << 20) / sb;
    int nrd = 0, maxrd = 0;
    for (int i = 0; i < b->npieces; i++)
        maxrd += (int)b->pieces[i]->nref;
    bd_fs_rd_t *rd = malloc((size_t)(maxrd ? maxrd : 1) * sizeof *rd);
    if (!rd)
        return -ENOMEM;
    for (int i = 0; i < b->npieces; i++) {
        const piece_t *p = b->pieces[i];
        char *at = b->buf + (p->ref_at - 1);
        for (uint32_t k = 0; k < p->nref;) {
            uint32_t s0 = p->ref[k], n = 1;
            if (!s0) {
                memset(at + (uint64_t)k * sb, 0, sb);
                k++;
                continue;
            }
            while (n < cap && k + n < p->nref && p->ref[k + n] == s0 + n)
                n++;
            rd[nrd++] = (bd_fs_rd_t){at + (uint64_t)k * sb, n * sb, (uint64_t)(s0 - 1) * sb};
            k += n;
        }
    }
    int rc = bd_fs_pread_batch(&g_aio, g_st.fd, rd, nrd);
    free(rd);
    for (int i = 0; rc == 0 && i < b->npieces; i++) {
        const piece_t *p = b->pieces[i];
        for (uint32_t k = 0; p->ref_crc && k < p->nref; k++)
            if (p->ref[k] && bd_mem_store_check(&g_st, b->buf + (p->ref_at - 1) + (uint64_t)k * sb,
                                                p->ref[p->nref + k]) < 0)
                return -EBADMSG;
    }
    return rc;
}

void bdr_ref_batch(coll_t *c, int reader, int from)
{
    int k = c->d.kind, size = c->comm->size;
    if (!g_held || g_attached <= 0 || (k != BD_COLL_ALLTOALL && k != BD_COLL_GATHER) || from < 0 ||
        from >= size) /* a bad peer is the GET's to report */
        return;
    batch_t *b = NULL;
    for (int i = 0; i < NBATCH; i++) {
        if (g_bat[i].c == c && g_bat[i].reader == reader)
            return; /* read already (or being read from memory) */
        if (!b || !g_bat[i].c || (b->c && g_bat[i].tick < b->tick))
            b = &g_bat[i];
    }
    uint64_t sb = g_st.sbpage, b16 = g_m.hdr->job.mem_budget / 16,
             cap = b16 && b16 < (16u << 20) ? b16 : (16u << 20), len = 0;
    int n = 0;
    piece_t **ps = malloc((size_t)(size - from) * sizeof *ps);
    if (!ps)
        return;
    for (int peer = from; peer < size; peer++) {
        piece_t *p = bdr_coll_get_piece(c, reader, peer);
        if (!p || !p->ref || p->ref_at || p->taken || p->got)
            continue;
        uint64_t slots = (uint64_t)p->nref * sb;
        if (len + slots > cap)
            continue;
        ps[n++] = p;
        len += slots;
    }
    /* one piece gains nothing over reading it as it is asked for */
    if (n < 2 || !bdr_stage_fits(len)) {
        free(ps);
        return;
    }
    batch_free(b);
    void *buf = NULL;
    if (posix_memalign(&buf, BD_FS_DIO_ALIGN, len)) {
        free(ps);
        return;
    }
    *b = (batch_t){.c = c,
                   .reader = reader,
                   .buf = buf,
                   .len = len,
                   .pieces = ps,
                   .npieces = n,
                   .live = n,
                   .tick = ++g_tick};
    uint64_t at = 0, bytes = 0;
    for (int i = 0; i < n; i++) {
        ps[i]->ref_at = at + 1;
        ps[i]->ref_batch = (int)(b - g_bat);
        at += (uint64_t)ps[i]->nref * sb;
        bytes += ps[i]->total;
    }
    if (batch_read(b) < 0) {
        batch_free(b); /* each piece is read as it is asked for, which reports it */
        return;
    }
    g_m.coll_ref_batched += bytes;
}

/* May piece p of c stay a reference until c is freed?  Only when its one
 * reader GETs it from this master and nothing gives it back earlier. */
static int keepable(const coll_t *c)
{
    int k = c->d.kind;
    return g_m.nnodes == 1 && !c->pipe && !c->pipe_net && !c->inplace &&
           (k == BD_COLL_ALLTOALL || k == BD_COLL_GATHER || k == BD_COLL_SCATTER);
}

/* The piece read from the store now and placed as a PUT would have: 0,
 * -errno of the store (not reported yet), or 1 when placing or writing the
 * piece failed the job (already reported). */
static int materialize(coll_t *c, piece_t *p)
{
    enum { CHUNK = 64 << 10 };
    uint64_t total = p->total;
    p->total = p->filled = 0;
    if (bdr_coll_piece_place(c, p, total) < 0)
        return 1;
    char *tmp = malloc(CHUNK);
    if (!tmp)
        return -ENOMEM;
    int rc = 0;
    for (uint64_t done = 0; done < total && rc == 0;) {
        uint32_t n = total - done < CHUNK ? (uint32_t)(total - done) : CHUNK;
        if ((rc = bdr_ref_read(p, done, tmp, n)) == 0 &&
            bdr_coll_piece_write(c, p, total, done, tmp, n) < 0)
            rc = 1;
        done += n;
    }
    free(tmp);
    return rc;
}

void bdr_coll_req_putref(slave_t *s, const bd_req_t *r)
{
    coll_t *c = bdr_coll_instance(s, r);
    if (!c)
        return;
    bd_putref_t h;
    memcpy(&h, s->win, sizeof h);
    uint64_t sb = g_m.hdr->job.sbpage, room = (g_m.hdr->window - sizeof h) / 8;
    piece_t *p = bdr_coll_put_piece(c, s->coll_rank, h.peer);
    if (!h.nslot || h.nslot > room || h.first >= sb || !h.total ||
        h.first + h.total > (uint64_t)h.nslot * sb ||
        h.first + h.total <= (uint64_t)(h.nslot - 1) * sb || !p || p->taken || p->filled ||
        p->data || p->in_file || p->ref || c->pipe || c->pipe_net) {
        bdr_master_fail(1, "rank %d: bad reference segment in %s (peer %d, %llu bytes in %u slots)",
                        s->world, bdr_coll_call_name(&c->d), h.peer, (unsigned long long)h.total,
                        h.nslot);
        return;
    }
    int rc = attach();
    if (rc < 0) {
        bdr_master_fail(1,
                        "rank %d: %s data by reference, but the node's store in %s cannot be "
                        "opened: %s",
                        s->world, bdr_coll_call_name(&c->d), g_m.jobdir, strerror(-rc));
        return;
    }
    size_t bytes = (size_t)h.nslot * 2 * sizeof(uint32_t);
    p->ref = malloc(bytes);
    if (!p->ref) { /* the references go back to the store: the job fails anyway */
        bdr_master_oom("malloc", bytes, ENOMEM);
        return;
    }
    memcpy(p->ref, s->win + sizeof h, bytes);
    p->nref = h.nslot;
    p->ref_first = h.first;
    p->ref_crc = h.crc != 0;
    p->total = h.total;
    g_held++;
    if (keepable(c)) {
        p->filled = h.total;
        atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLL_BYTES_REF], h.total,
                                  memory_order_relaxed);
    } else {
        rc = materialize(c, p);
        bdr_ref_drop(p);
        if (rc == 0)
            g_m.coll_ref_read += h.total;
        if (rc != 0) {
            if (rc == -EBADMSG)
                bdr_master_fail(1, "storage returned corrupted data for rank %d %s (%s data)",
                                s->world, g_bad, bdr_coll_call_name(&c->d));
            else if (rc < 0)
                bdr_master_fail(1,
                                "cannot read %s data of rank %d from the node's store in %s: "
                                "%s",
                                bdr_coll_call_name(&c->d), s->world, g_m.jobdir, strerror(-rc));
            return;
        }
    }
    atomic_fetch_add_explicit(&s->slot->stats[BD_STAT_COLL_BYTES_UP], h.total,
                              memory_order_relaxed);
    s->slot->resp.flag = bdr_pipe_over(c);
    bdr_sched_respond(s);
}
