/* Collective data access in two phases (MPI 3.1 13.4.3, 13.6.1 hints).
 *
 * The blocking collective reads and writes (`_at_all`, `_all` and their
 * split forms) of many small pieces that interleave between processes are
 * aggregated: the file range all of them touch is cut into domains of
 * `cb_buffer_size` bytes handled by `cb_nodes` aggregator processes, round
 * by round.  In each round every process gives each aggregator its pieces
 * of that aggregator's domain (descriptors, then data, by MPI_Alltoallv, so
 * through the master's bounded collective staging); an aggregator writes
 * the pieces of its domain as the few contiguous runs they form together,
 * or reads the span they cover with one pread and sends each process its
 * bytes back.  Under BDMPI the ranks of a node run one at a time: without
 * this, each rank of a strided write does one small pwrite per piece; with
 * it, the file sees large sequential requests.
 *
 * Contract: every process of the file's communicator calls with its own
 * arguments; all decide alike from one MPI_Allgather of a short plan.  The
 * call is aggregated only when every process's arguments are right, the
 * view is "native", the file is not in atomic mode (an aggregator's write
 * of another process's data would not be that process's atomic access), the
 * hint `collective_buffering` is not "false", the pieces are small (64 KiB
 * on average or less) and the range is dense (its bytes at least a quarter
 * of the span, and at most twice it: pieces that many processes share go
 * independently).  Otherwise each process does its own access, as
 * independent calls do.  The view's file offsets never decrease along the
 * view (set_view checks), so the pieces a process has in one domain are one
 * contiguous stretch of its data, in file order.  Nonblocking collectives
 * are not aggregated: they must not wait for the other processes.  A split
 * collective's begin is aggregated like the blocking call (MPI 13.4.5 lets
 * begin do the whole access); one refused on a process (another split
 * collective in progress there) still takes part in the plan's agreement,
 * as not ok, so that the others go on independently instead of waiting for
 * it. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

#define CB_BUFFER ((uint64_t)16 << 20) /* cb_buffer_size by default */
#define CB_BUFFER_MAX ((uint64_t)256 << 20)
#define SMALL_PIECE ((uint64_t)64 << 10)
#define ROUND_MAX ((uint64_t)256 << 20)  /* bytes one round moves at most */
#define ROUND_PIECES ((uint64_t)1 << 20) /* pieces of the average size per round */

typedef struct plan {
    long long ok;          /* 1: this process may take part in an aggregated access */
    long long first, end;  /* file bytes [first, end) it touches (0, 0: none) */
    long long bytes, segs; /* its file bytes, in segs contiguous pieces */
} plan_t;

typedef struct piece {
    int64_t off, len;
    const char *data; /* in the received data (writes) */
    int src;
} cpiece_t;

/* An integer hint of the file (dflt when absent or not a number). */
static long long hint_num(const bdl_file_t *f, const char *key, long long dflt)
{
    char v[64];
    int flag = 0;
    if (f->info == MPI_INFO_NULL || MPI_Info_get(f->info, key, sizeof v - 1, v, &flag) || !flag)
        return dflt;
    char *e;
    long long n = strtoll(v, &e, 10);
    return e != v && *e == 0 && n > 0 ? n : dflt;
}

static int hint_off(const bdl_file_t *f, const char *key)
{
    char v[64];
    int flag = 0;
    return f->info != MPI_INFO_NULL && !MPI_Info_get(f->info, key, sizeof v - 1, v, &flag) &&
           flag && (!strcasecmp(v, "false") || !strcasecmp(v, "disable"));
}

static int by_off(const void *a, const void *b)
{
    const cpiece_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* One run between the domain buffer and the file (access.c's loop: calls
 * of at most IO_STEP bytes, as the stall detector expects), counted. */
static int64_t run_rw(bdl_file_t *f, int write, char *p, uint64_t len, int64_t off)
{
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_IO_AGG_REQUESTS], 1, memory_order_relaxed);
    return bdl_io_piece_rw(f, write, off, p, len);
}

/* The aggregator's part of a round: the pieces of its domain [ds, ds + cb)
 * from every process, sorted by offset into pc (n of them).  Writes: copied
 * into dbuf and written as the runs they form.  Reads: the span they cover
 * read into dbuf (one pread when they fill an eighth of it, else one per
 * run); *eof gets the first file byte not there (INT64_MAX: none).  0 or
 * -errno. */
static int agg_domain(bdl_file_t *f, int write, cpiece_t *pc, size_t n, int64_t ds, char *dbuf,
                      int64_t *eof)
{
    *eof = INT64_MAX;
    if (!n)
        return 0;
    qsort(pc, n, sizeof *pc, by_off);
    if (write)
        for (size_t i = 0; i < n; i++)
            memcpy(dbuf + (pc[i].off - ds), pc[i].data, (size_t)pc[i].len);
    int64_t lo = pc[0].off, hi = lo, covered = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t e = pc[i].off + pc[i].len;
        covered += pc[i].len;
        hi = e > hi ? e : hi;
    }
    if (!write && covered * 8 >= hi - lo) {
        int64_t got = run_rw(f, 0, dbuf + (lo - ds), (uint64_t)(hi - lo), lo);
        if (got < 0)
            return (int)got;
        if (got < hi - lo) {
            *eof = lo + got;
            memset(dbuf + (*eof - ds), 0, (size_t)(hi - *eof));
        }
        return 0;
    }
    for (size_t i = 0; i < n;) {
        int64_t s = pc[i].off, e = s + pc[i].len;
        size_t j = i + 1;
        for (; j < n && pc[j].off <= e; j++)
            e = pc[j].off + pc[j].len > e ? pc[j].off + pc[j].len : e;
        if (*eof <= s) {
            memset(dbuf + (s - ds), 0, (size_t)(e - s));
        } else {
            int64_t got = run_rw(f, write, dbuf + (s - ds), (uint64_t)(e - s), s);
            if (got < 0)
                return (int)got;
            if (got < e - s) {
                *eof = s + got;
                memset(dbuf + (*eof - ds), 0, (size_t)(e - *eof));
            }
        }
        i = j;
    }
    return 0;
}

/* This process's pieces of view bytes [v + p, v + n) whose file offsets lie
 * below lim, cut at domain boundaries (cb bytes from dom0): appended to
 * *out (growing *cap), p advanced past them.  0 or -ENOMEM. */
static int my_pieces(const bdl_file_t *f, uint64_t v, uint64_t n, uint64_t *p, int64_t lim,
                     int64_t dom0, uint64_t cb, cpiece_t **out, size_t *cnt, size_t *cap)
{
    while (*p < n) {
        int64_t off;
        uint64_t len;
        bdl_view_segment(f, v + *p, n - *p, &off, &len);
        if (off >= lim)
            break;
        int64_t dend = dom0 + ((off - dom0) / (int64_t)cb + 1) * (int64_t)cb;
        if (off + (int64_t)len > dend)
            len = (uint64_t)(dend - off);
        if (*cnt == *cap) {
            size_t c = *cap ? *cap * 2 : 256;
            cpiece_t *t = realloc(*out, c * sizeof *t);
            if (!t)
                return -ENOMEM;
            *out = t;
            *cap = c;
        }
        (*out)[(*cnt)++] = (cpiece_t){.off = off, .len = (int64_t)len};
        *p += len;
    }
    return 0;
}

typedef struct round_bufs {
    cpiece_t *mine, *all;
    size_t nmine, capmine, capall;
    long long *desc_out, *desc_in;
    size_t cap_out, cap_in;
    int *sc, *sd, *rc, *rd;     /* bytes */
    int *dsc, *dsd, *drc, *drd; /* descriptor words */
    long long *cnt_out, *cnt_in;
    char *stream, *agg_in, *dbuf;
    uint64_t stream_cap, agg_in_cap, dbuf_cap;
} round_bufs_t;

/* Out of memory in the middle of the exchange: the other processes cannot
 * be told in step, so the job ends with the reason (no hang). */
static void oom(const char *what)
{
    bdl_fatal(MPI_ERR_NO_MEM, "collective file access: out of memory for %s", what);
}

static void *grow(void *p, size_t *cap, size_t want, size_t el)
{
    if (want <= *cap)
        return p;
    size_t c = *cap ? *cap : 64;
    while (c < want)
        c *= 2;
    void *t = realloc(p, c * el);
    if (!t)
        return NULL;
    *cap = c;
    return t;
}

static void bufs_free(round_bufs_t *b)
{
    free(b->mine);
    free(b->all);
    free(b->desc_out);
    free(b->desc_in);
    free(b->sc);
    free(b->cnt_out);
    bdl_io_unbounce(b->stream, b->stream_cap);
    bdl_io_unbounce(b->agg_in, b->agg_in_cap);
    bdl_io_unbounce(b->dbuf, b->dbuf_cap);
}

/* A bounce buffer of at least want bytes (kept from round to round). */
static char *bounce_at_least(char **p, uint64_t *cap, uint64_t want)
{
    if (want <= *cap && *p)
        return *p;
    bdl_io_unbounce(*p, *cap);
    *cap = want;
    *p = bdl_io_bounce(want);
    return *p;
}

/* The aggregated access itself; every process calls it with the same plan
 * (lo, hi, na aggregators, cb).  *moved gets this process's bytes moved;
 * returns 0 or an errno (the first any process met). */
static int two_phase(bdl_file_t *f, int write, uint64_t v, char *contig, void *buf, uint64_t count,
                     const bdl_dt_t *t, uint64_t n, int64_t lo, int64_t hi, int na, uint64_t cb,
                     uint64_t *moved)
{
    int size = f->size, me = f->rank, err = 0;
    round_bufs_t b = {0};
    *moved = 0;
    b.sc = calloc((size_t)size * 8, sizeof(int));
    b.cnt_out = calloc((size_t)size * 4, sizeof(long long));
    if (!b.sc || !b.cnt_out)
        oom("counts");
    b.sd = b.sc + size, b.rc = b.sd + size, b.rd = b.rc + size;
    b.dsc = b.rd + size, b.dsd = b.dsc + size, b.drc = b.dsd + size, b.drd = b.drc + size;
    b.cnt_in = b.cnt_out + 2 * size;
    int my_agg = -1; /* my domain index when I aggregate */
    for (int k = 0; k < na; k++)
        if ((int)((int64_t)k * size / na) == me)
            my_agg = k;
    uint64_t win = (uint64_t)na * cb, p = 0, valid_end = 0;
    int short_seen = 0;
    int64_t rounds = (hi - lo + (int64_t)win - 1) / (int64_t)win;
    for (int64_t r = 0; r < rounds; r++) {
        int64_t r0 = lo + r * (int64_t)win, r1 = r0 + (int64_t)win;
        uint64_t p0 = p;
        b.nmine = 0;
        if (my_pieces(f, v, n, &p, r1, lo, cb, &b.mine, &b.nmine, &b.capmine) < 0)
            oom("pieces");
        /* my pieces go to the aggregator of their domain, in order */
        memset(b.cnt_out, 0, (size_t)size * 2 * sizeof(long long));
        for (size_t i = 0; i < b.nmine; i++) {
            int k = (int)((b.mine[i].off - r0) / (int64_t)cb);
            int dst = (int)((int64_t)k * size / na);
            b.cnt_out[2 * dst]++;
            b.cnt_out[2 * dst + 1] += b.mine[i].len;
        }
        MPI_Alltoall(b.cnt_out, 2, MPI_LONG_LONG, b.cnt_in, 2, MPI_LONG_LONG, f->comm);
        size_t nin = 0;
        uint64_t bytes_in = 0, words_in = 0;
        for (int j = 0; j < size; j++) {
            bytes_in += (uint64_t)b.cnt_in[2 * j + 1];
            words_in += 2 * (uint64_t)b.cnt_in[2 * j];
        }
        /* The exchange's counts and displacements are ints: what one
         * process sends is bounded by the round's window, what an
         * aggregator gets only by how much the processes' pieces overlap
         * (the plan allows a little).  Past that, a clear end, not an
         * overflow. */
        if (bytes_in > INT_MAX || words_in > INT_MAX || p - p0 > INT_MAX)
            bdl_fatal(MPI_ERR_IO,
                      "collective file access: %llu bytes in %llu pieces for one aggregator in "
                      "one round (the processes' pieces overlap too much to aggregate)",
                      (unsigned long long)bytes_in, (unsigned long long)words_in / 2);
        bytes_in = 0;
        int off_b = 0, off_d = 0, in_b = 0, in_d = 0;
        for (int j = 0; j < size; j++) {
            b.sc[j] = (int)b.cnt_out[2 * j + 1];
            b.sd[j] = off_b;
            off_b += b.sc[j];
            b.dsc[j] = (int)(2 * b.cnt_out[2 * j]);
            b.dsd[j] = off_d;
            off_d += b.dsc[j];
            b.rc[j] = (int)b.cnt_in[2 * j + 1];
            b.rd[j] = in_b;
            in_b += b.rc[j];
            b.drc[j] = (int)(2 * b.cnt_in[2 * j]);
            b.drd[j] = in_d;
            in_d += b.drc[j];
            nin += (size_t)b.cnt_in[2 * j];
            bytes_in += (uint64_t)b.cnt_in[2 * j + 1];
        }
        if (!(b.desc_out = grow(b.desc_out, &b.cap_out, (size_t)off_d + 1, sizeof(long long))) ||
            !(b.desc_in = grow(b.desc_in, &b.cap_in, (size_t)in_d + 1, sizeof(long long))) ||
            !(b.all = grow(b.all, &b.capall, nin + 1, sizeof(cpiece_t))))
            oom("piece lists");
        for (size_t i = 0; i < b.nmine; i++) {
            b.desc_out[2 * i] = b.mine[i].off;
            b.desc_out[2 * i + 1] = b.mine[i].len;
        }
        MPI_Alltoallv(b.desc_out, b.dsc, b.dsd, MPI_LONG_LONG, b.desc_in, b.drc, b.drd,
                      MPI_LONG_LONG, f->comm);
        /* my data of this round: view bytes [p0, p), in the order of the pieces */
        uint64_t mine_bytes = p - p0;
        char *stream = NULL;
        if (contig) {
            stream = contig + p0;
            bdl_lib_mem_prepare(stream, mine_bytes, !write);
        } else if (mine_bytes &&
                   !(stream = bounce_at_least(&b.stream, &b.stream_cap, mine_bytes))) {
            oom("packed data");
        }
        char *agg_in = NULL;
        if (my_agg >= 0 && bytes_in &&
            !(agg_in = bounce_at_least(&b.agg_in, &b.agg_in_cap, bytes_in)))
            oom("received data");
        if (my_agg >= 0 && nin && !bounce_at_least(&b.dbuf, &b.dbuf_cap, cb))
            oom("the domain buffer");
        size_t m = 0;
        for (int j = 0; j < size; j++)
            for (int i = 0; i < b.drc[j] / 2; i++, m++)
                b.all[m] = (cpiece_t){.off = b.desc_in[b.drd[j] + 2 * i],
                                      .len = b.desc_in[b.drd[j] + 2 * i + 1],
                                      .src = j};
        int64_t ds = r0 + (int64_t)(my_agg < 0 ? 0 : my_agg) * (int64_t)cb, eof = INT64_MAX;
        if (write) {
            if (!contig && mine_bytes)
                bdl_dt_pack(t, buf, count, p0, stream, mine_bytes);
            MPI_Alltoallv(stream, b.sc, b.sd, MPI_BYTE, agg_in, b.rc, b.rd, MPI_BYTE, f->comm);
            /* each source's pieces lie one after another in its data */
            m = 0;
            for (int j = 0; j < size; j++) {
                uint64_t at = (uint64_t)b.rd[j];
                for (int i = 0; i < b.drc[j] / 2; i++, m++) {
                    b.all[m].data = agg_in + at;
                    at += (uint64_t)b.all[m].len;
                }
            }
            if (!err && my_agg >= 0) {
                int rc = agg_domain(f, 1, b.all, nin, ds, b.dbuf, &eof);
                err = rc < 0 ? -rc : 0;
            }
            *moved += mine_bytes;
        } else {
            if (!err && my_agg >= 0) {
                /* sorting loses each source's order: keep it in agg_in's
                 * layout by copying after the read, source by source */
                cpiece_t *sorted = malloc((nin + 1) * sizeof *sorted);
                if (!sorted)
                    oom("sorting");
                memcpy(sorted, b.all, nin * sizeof *sorted);
                int rc = agg_domain(f, 0, sorted, nin, ds, b.dbuf, &eof);
                err = rc < 0 ? -rc : 0;
                free(sorted);
            }
            /* valid bytes per source (those below the end of the file) */
            memset(b.cnt_out, 0, (size_t)size * 2 * sizeof(long long));
            m = 0;
            for (int j = 0; j < size; j++) {
                uint64_t at = (uint64_t)b.rd[j];
                for (int i = 0; i < b.drc[j] / 2; i++, m++) {
                    const cpiece_t *c = &b.all[m];
                    if (!err)
                        memcpy(agg_in + at, b.dbuf + (c->off - ds), (size_t)c->len);
                    at += (uint64_t)c->len;
                    int64_t ok = eof - c->off;
                    b.cnt_out[2 * j] += ok <= 0 ? 0 : ok >= c->len ? c->len : ok;
                }
            }
            MPI_Alltoall(b.cnt_out, 2, MPI_LONG_LONG, b.cnt_in, 2, MPI_LONG_LONG, f->comm);
            MPI_Alltoallv(agg_in, b.rc, b.rd, MPI_BYTE, stream, b.sc, b.sd, MPI_BYTE, f->comm);
            uint64_t valid = 0;
            for (int j = 0; j < size; j++)
                valid += (uint64_t)b.cnt_in[2 * j];
            if (!contig && mine_bytes)
                bdl_dt_unpack(t, buf, count, p0, stream, valid);
            /* the view's offsets only grow: once short, the rest is past the end */
            if (!short_seen)
                valid_end = p0 + valid;
            if (valid < mine_bytes)
                short_seen = 1;
        }
    }
    if (!write)
        *moved = valid_end;
    int all_err = 0;
    MPI_Allreduce(&err, &all_err, 1, MPI_INT, MPI_MAX, f->comm);
    bufs_free(&b);
    return all_err;
}

int bdl_io_access_all(MPI_File fh, const char *call, int write, int where, MPI_Offset offset,
                      void *buf, int count, MPI_Datatype dt, MPI_Status *status, int refused)
{
    BDL_CHECK_INIT(call);
    bdl_file_t *f = bdl_file_get(fh);
    if (refused && (!f || f->size == 1))
        return refused;
    if (!f || f->size == 1)
        return bdl_io_access(fh, call, write, where, offset, buf, count, dt, status);
    bdl_dt_t *t = NULL;
    int rc = refused ? refused : bdl_io_check(f, fh, call, write, where, offset, count, dt, &t);
    plan_t mine = {.ok = !rc && f->rep == BDL_REP_NATIVE && !f->atomic &&
                         !hint_off(f, "collective_buffering")};
    MPI_Offset pos = where == BDL_IO_INDIV ? f->pos : offset;
    uint64_t v = (uint64_t)pos * f->esize, n = 0;
    if (mine.ok && count && t->size) {
        n = bdl_io_file_bytes(f, t, (uint64_t)count);
        mine.first = bdl_view_file_offset(f, v);
        mine.end = bdl_view_file_offset(f, v + n - 1) + 1;
        mine.bytes = (long long)n;
        for (uint64_t p = 0; p < n;) {
            int64_t off;
            uint64_t len;
            bdl_view_segment(f, v + p, n - p, &off, &len);
            p += len;
            mine.segs++;
        }
    }
    plan_t *all = malloc((size_t)f->size * sizeof *all);
    if (!all)
        oom("the plan");
    MPI_Allgather(&mine, 5, MPI_LONG_LONG, all, 5, MPI_LONG_LONG, f->comm);
    if (rc) {
        free(all);
        return rc; /* reported by bdl_io_check */
    }
    int ok = 1;
    long long bytes = 0, segs = 0;
    int64_t lo = INT64_MAX, hi = 0;
    for (int r = 0; ok && r < f->size; r++) {
        ok = all[r].ok != 0;
        bytes += all[r].bytes;
        segs += all[r].segs;
        if (all[r].bytes) {
            lo = all[r].first < lo ? all[r].first : lo;
            hi = all[r].end > hi ? all[r].end : hi;
        }
    }
    free(all);
    /* dense (bytes at least a quarter of the span) and overlapping little
     * (several processes reading the same pieces would each be sent them
     * by the aggregator: at most twice the span in all) */
    ok = ok && bytes && segs > f->size && (uint64_t)bytes <= SMALL_PIECE * (uint64_t)segs &&
         (hi - lo) <= 4 * (int64_t)bytes && bytes <= 2 * (long long)(hi - lo);
    if (!ok)
        return bdl_io_access(fh, call, write, where, offset, buf, count, dt, status);
    int na = (int)hint_num(f, "cb_nodes", (long long)bdl_g.hdr->nnodes);
    na = na < 1 ? 1 : na > f->size ? f->size : na;
    uint64_t cb = (uint64_t)hint_num(f, "cb_buffer_size", (long long)CB_BUFFER);
    /* A round moves at most na * cb bytes and one descriptor (16 bytes) per
     * piece: its window is kept to ROUND_MAX bytes and ROUND_PIECES pieces
     * of the average size, so the int counts and displacements of the
     * exchange cannot overflow and the descriptors stay small beside the
     * data. */
    uint64_t avg = (uint64_t)bytes / (uint64_t)segs, win = ROUND_PIECES * (avg ? avg : 1);
    win = win < ROUND_MAX ? win : ROUND_MAX;
    cb = cb > win / (uint64_t)na ? win / (uint64_t)na : cb;
    cb = cb < 4096 ? 4096 : cb > CB_BUFFER_MAX ? CB_BUFFER_MAX : cb;
    atomic_fetch_add_explicit(&bdl_g.slot->stats[BD_STAT_IO_AGGREGATED], 1, memory_order_relaxed);
    uint64_t moved = 0;
    char *contig = n ? bdl_dt_contig(t, buf, (uint64_t)count) : NULL;
    int e = two_phase(f, write, v, contig, buf, (uint64_t)count, t, n, lo, hi, na, cb, &moved);
    if (where == BDL_IO_INDIV)
        f->pos += (MPI_Offset)(moved / f->esize);
    if (e)
        return bdl_file_error(fh, bdl_io_errno_class(e), call,
                              "aggregated %s of %llu bytes %s \"%s\" at etype %lld: %s",
                              write ? "write" : "read", (unsigned long long)n,
                              write ? "to" : "from", f->path, (long long)pos, strerror(e));
    if (status && status != MPI_STATUS_IGNORE) {
        bdl_status_empty(status);
        status->bd_nbytes = (long long)moved;
    }
    return MPI_SUCCESS;
}
