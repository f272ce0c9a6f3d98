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
 * each slot read is checked against the CRC32C its writer recorded. */
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

uint64_t bdr_ref_buffer_bytes(void) { return g_buf ? g_buf_len : 0; }

uint64_t bdr_ref_trim(void)
{
    if (!g_buf)
        return 0; /* only a cache: the next read allocates it again */
    uint64_t n = g_buf_len;
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
