/* The timeline's conversion: one node's binary records (bd_trace.h) to
 * Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open, and the merge of the nodes' parts.
 *
 * Each rank is a thread (tid = world rank) of its node's process (pid =
 * node).  Its track is a sequence of top-level slices that never overlap:
 * "running", one slice per request that may block named after the MPI call
 * that made it (and per request that cannot block but took the master 200
 * us or more to serve), "before MPI_Init", "after MPI_Finalize".  Inside a call,
 * the master's view gives "blocked in <call>" and "waiting for a run slot";
 * inside those (or the top-level slices) the memory manager's storage I/O
 * and memory grants give "loading", "unloading", "waiting for memory".
 * Times are whole microseconds (floored from ns), so every child lies
 * within its parent exactly.  Counters per node: accounted resident memory
 * and the budget, messages queued in memory, storage bandwidth; per rank:
 * its accounted resident memory.
 *
 * Layout of a file: the first line opens the event array, then one event
 * per line (each after the first starts with a comma), then a line that
 * starts with "]" and the rest of the object.  bd_trace_merge_parts relies
 * on it. */
#include "bd_trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"

void bd_trace_part_path(char *out, size_t len, const char *path, int node, int nnodes)
{
    if (nnodes <= 1)
        snprintf(out, len, "%s", path);
    else
        snprintf(out, len, "%s.node%d", path, node);
}

static int cmp_rec(const void *x, const void *y)
{
    const bd_trace_rec_t *a = x, *b = y;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return (int)a->kind - (int)b->kind;
}

/* ------------------------------------------------------------ the writer */

typedef struct {
    FILE *f;
    int node;
    uint64_t epoch;
    long nev;
} out_t;

static long long us(const out_t *o, uint64_t t)
{
    int64_t d = (int64_t)(t - o->epoch);
    return d >= 0 ? d / 1000 : -((-d + 999) / 1000);
}

static void ev_start(out_t *o) { fputs(o->nev++ ? "\n," : "\n", o->f); }

/* Names come from the ranks' records: keep only harmless characters. */
static void put_str(FILE *f, const char *s)
{
    char b[128];
    size_t n = 0;
    b[n++] = '"';
    for (; *s && n < sizeof b - 2; s++)
        b[n++] = (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
                         strchr(" _-+.,:()/", *s)
                     ? *s
                     : '?';
    b[n++] = '"';
    fwrite(b, 1, n, f);
}

static void counter(out_t *o, uint64_t t, const char *name, const char *key, double v)
{
    ev_start(o);
    fprintf(o->f, "{\"ph\":\"C\",\"pid\":%d,\"ts\":%lld,\"name\":\"%s\",\"args\":{\"%s\":%.17g}}",
            o->node, us(o, t), name, key, v);
}

static void meta(out_t *o, int tid, const char *what, const char *key, const char *sval,
                 long long ival)
{
    ev_start(o);
    fprintf(o->f, "{\"ph\":\"M\",\"pid\":%d,", o->node);
    if (tid >= 0)
        fprintf(o->f, "\"tid\":%d,", tid);
    fprintf(o->f, "\"name\":\"%s\",\"args\":{\"%s\":", what, key);
    if (sval)
        put_str(o->f, sval);
    else
        fprintf(o->f, "%lld", ival);
    fputs("}}", o->f);
}

/* -------------------------------------------------------- one rank's track */

typedef struct {
    uint64_t s, e;
    int depth;
    const char *pre, *name; /* the slice is named pre + name */
    const char *cat;
    const char *call;             /* a state inside a call: the call */
    uint32_t code;                /* a call's request */
    uint64_t rd, wr, gr;          /* memory slices: bytes read, written, asked */
    uint64_t prd, pwr, pgr, plen; /* ... of the whole interval a piece belongs to */
} ev_t;

typedef struct {
    ev_t *v;
    size_t n, cap;
    int oom;
} evs_t;

static ev_t *ev_add(evs_t *a)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 256;
        ev_t *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv) {
            a->oom = 1;
            return NULL;
        }
        a->v = nv;
        a->cap = nc;
    }
    ev_t *e = &a->v[a->n++];
    memset(e, 0, sizeof *e);
    return e;
}

static const char *req_name(uint32_t code)
{
    switch (code) {
    case BD_REQ_INIT: return "INIT";
    case BD_REQ_FINALIZE: return "FINALIZE";
    case BD_REQ_P2P_WAIT: return "P2P_WAIT (a message)";
    case BD_REQ_MBOX_FULL: return "MBOX_FULL (room in a mailbox)";
    case BD_REQ_COLL_WAIT: return "COLL_WAIT (a collective)";
    case BD_REQ_COLL_SMALL: return "COLL_SMALL (a small collective, one request)";
    case BD_REQ_CRIT_ENTER: return "CRIT_ENTER (the critical section)";
    case BD_REQ_YIELD: return "YIELD (a poll that found nothing)";
    case BD_REQ_COLL_TEST: return "COLL_TEST (a poll of a collective)";
    case BD_REQ_COLL_WAITANY: return "COLL_WAITANY (one of several collectives)";
    case BD_REQ_COLL_TESTANY: return "COLL_TESTANY (a poll of collectives)";
    case BD_REQ_COLL_PUTREF: return "COLL_PUTREF (collective data by reference)";
    case BD_REQ_COLL_PUT: return "COLL_PUT (collective data to the master)";
    case BD_REQ_COLL_GET: return "COLL_GET (collective data from the master)";
    case BD_REQ_COLL_BEGIN: return "COLL_BEGIN (a collective starts)";
    case BD_REQ_COLL_END: return "COLL_END (a collective ends)";
    case BD_REQ_COLL_TAKE: return "COLL_TAKE (collective data in parts)";
    case BD_REQ_SEND: return "SEND (a message through the master)";
    case BD_REQ_MBOX_FETCH: return "MBOX_FETCH (a message from the master)";
    case BD_REQ_NET_PULL: return "NET_PULL (a message from another node)";
    default: return "other";
    }
}

/* Order of writing: by start as written (whole microseconds), parents
 * (smaller depth) first. */
typedef struct {
    uint64_t key;
    size_t i;
} ord_t;

static int cmp_ord(const void *x, const void *y)
{
    const ord_t *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

typedef struct {
    uint64_t s, e, rd, wr, gr;
} mem_t;

static int cmp_mem(const void *x, const void *y)
{
    const mem_t *a = x, *b = y;
    return a->s < b->s ? -1 : a->s > b->s;
}

typedef struct {
    uint64_t t;
    int state;
} st_t;

static void emit_rank(out_t *o, const bd_trace_rec_t *x, size_t n, int world, evs_t *ev)
{
    static char names[256][49];
    memset(names, 0, sizeof names);
    uint64_t T0 = UINT64_MAX, T1 = 0;
    size_t nst = 0, nmem = 0, nwait = 0;
    for (size_t i = 0; i < n; i++) {
        T0 = x[i].t < T0 ? x[i].t : T0;
        T1 = x[i].t > T1 ? x[i].t : T1;
        nst += x[i].kind == BD_TR_STATE;
        nmem += x[i].kind == BD_TR_IO || x[i].kind == BD_TR_GRANT;
        nwait += x[i].kind == BD_TR_WAIT_BEGIN;
        if (x[i].kind == BD_TR_NAME) {
            int id = x[i].aux & 0xff, c = x[i].aux >> 8;
            if (c < 3) {
                memcpy(names[id] + c * 16, &x[i].a, 8);
                memcpy(names[id] + c * 16 + 8, &x[i].b, 8);
            }
        }
        if (x[i].kind == BD_TR_RANK_MEM) {
            char nm[48];
            snprintf(nm, sizeof nm, "resident rank %d", world);
            counter(o, x[i].t, nm, "bytes", (double)x[i].a);
        }
    }
    if (!n)
        return;
    st_t *st = calloc(nst + 1, sizeof *st);
    mem_t *mem = calloc(nmem + 1, sizeof *mem);
    if (!st || !mem) {
        ev->oom = 1;
        free(st);
        free(mem);
        return;
    }
    /* The master's states; before the first one the rank was starting. */
    size_t k = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (x[i].kind == BD_TR_STATE)
            st[k++] = (st_t){x[i].t, x[i].aux};
        if (x[i].kind == BD_TR_IO || x[i].kind == BD_TR_GRANT) {
            mem_t *q = &mem[m++];
            q->e = x[i].t;
            q->s = x[i].b < q->e && x[i].b >= T0 ? x[i].b : q->e;
            if (x[i].kind == BD_TR_GRANT)
                q->gr = x[i].a ? x[i].a : 1;
            else if (x[i].aux)
                q->wr = x[i].a ? x[i].a : 1;
            else
                q->rd = x[i].a ? x[i].a : 1;
        }
    }
    /* Top level: calls (pairs of WAIT_BEGIN/END) and what lies between. */
    size_t top0 = ev->n;
    int phase = 0; /* 0 before MPI_Init, 1 running, 2 after MPI_Finalize */
    static const char *gap[] = {"before MPI_Init", "running", "after MPI_Finalize"};
    uint64_t cur = T0;
    for (size_t i = 0; i < n; i++) {
        if (x[i].kind != BD_TR_WAIT_BEGIN)
            continue;
        uint64_t b = x[i].t, e = T1;
        size_t j = i + 1;
        for (; j < n; j++)
            if (x[j].kind == BD_TR_WAIT_BEGIN || x[j].kind == BD_TR_WAIT_END)
                break;
        if (j < n)
            e = x[j].t; /* its end, or (a lost record) the next call's start */
        uint32_t code = x[i].aux;
        if (phase == 0 && code != BD_REQ_INIT)
            phase = 1;
        if (b > cur) {
            ev_t *g = ev_add(ev);
            if (g)
                *g = (ev_t){.s = cur, .e = b, .name = gap[phase], .cat = "state"};
        }
        ev_t *c = ev_add(ev);
        if (c) {
            const char *nm = names[x[i].b & 0xff];
            if (code == BD_REQ_INIT)
                nm = "MPI_Init";
            else if (code == BD_REQ_FINALIZE && !*nm)
                nm = "MPI_Finalize";
            else if (!*nm)
                nm = "MPI call";
            *c = (ev_t){.s = b, .e = e, .name = nm, .cat = "mpi", .code = code};
        }
        cur = e;
        if (code == BD_REQ_INIT)
            phase = 1;
        if (code == BD_REQ_FINALIZE)
            phase = 2;
    }
    if (T1 > cur) {
        ev_t *g = ev_add(ev);
        if (g)
            *g = (ev_t){.s = cur, .e = T1, .name = gap[phase], .cat = "state"};
    }
    size_t top1 = ev->n;
    (void)nwait;
    /* Inside the top level: the master's blocked and runnable states. */
    size_t si = 0;
    for (size_t t = top0; t < top1 && !ev->oom; t++) {
        uint64_t ts = ev->v[t].s, te = ev->v[t].e;
        const char *call = ev->v[t].name;
        while (si < nst && st[si].t <= ts)
            si++;
        /* Only inside calls: the rank's own records say when it runs (the
         * master records a state at the end of its round, a little late). */
        if (!ev->v[t].code)
            continue;
        /* st[si - 1] is the state at ts; the segments until te */
        size_t j = si;
        uint64_t s = ts;
        int state = j > 0 ? st[j - 1].state : BD_TRS_PREINIT;
        for (;;) {
            uint64_t e = j < nst && st[j].t < te ? st[j].t : te;
            if (e > s && (state == BD_TRS_BLOCKED || state == BD_TRS_RUNNABLE)) {
                ev_t *c = ev_add(ev);
                if (!c)
                    break;
                if (state == BD_TRS_BLOCKED)
                    *c = (ev_t){.s = s,
                                .e = e,
                                .depth = 1,
                                .pre = "blocked in ",
                                .name = call,
                                .cat = "state",
                                .call = call};
                else
                    *c = (ev_t){.s = s,
                                .e = e,
                                .depth = 1,
                                .name = "waiting for a run slot",
                                .cat = "state",
                                .call = call};
            }
            if (e >= te)
                break;
            s = e;
            state = st[j++].state;
        }
    }
    size_t ch1 = ev->n;
    /* Memory: the union of I/O and grant intervals, cut where the slices
     * above begin and end, each piece nested in the innermost one. */
    qsort(mem, nmem, sizeof *mem, cmp_mem);
    size_t nm = 0;
    for (size_t i = 0; i < nmem; i++) {
        if (nm && mem[i].s <= mem[nm - 1].e) {
            mem_t *u = &mem[nm - 1];
            u->e = mem[i].e > u->e ? mem[i].e : u->e;
            u->rd += mem[i].rd;
            u->wr += mem[i].wr;
            u->gr += mem[i].gr;
        } else {
            mem[nm++] = mem[i];
        }
    }
    /* The leaves: top-level slices refined by their children (both sorted). */
    size_t c = top1;
    for (size_t t = top0, mi = 0; t < top1 && !ev->oom; t++) {
        uint64_t ts = ev->v[t].s, te = ev->v[t].e;
        uint64_t s = ts;
        while (s < te && !ev->oom) {
            /* the next leaf [s, le) and its depth */
            while (c < ch1 && ev->v[c].e <= s)
                c++;
            uint64_t le = te;
            int depth = 0;
            if (c < ch1 && ev->v[c].s <= s && ev->v[c].e > s) {
                le = ev->v[c].e < te ? ev->v[c].e : te;
                depth = 1;
            } else if (c < ch1 && ev->v[c].s < te) {
                le = ev->v[c].s;
            }
            while (mi < nm && mem[mi].e <= s)
                mi++;
            for (size_t q = mi; q < nm && mem[q].s < le; q++) {
                uint64_t ps = mem[q].s > s ? mem[q].s : s, pe = mem[q].e < le ? mem[q].e : le;
                if (pe <= ps)
                    continue;
                ev_t *p = ev_add(ev);
                if (!p)
                    break;
                mem_t *u = &mem[q];
                const char *name = u->rd && u->wr   ? "loading + unloading"
                                   : u->wr          ? "unloading"
                                   : u->rd && u->gr ? "loading + waiting for memory"
                                   : u->rd          ? "loading"
                                                    : "waiting for memory";
                *p = (ev_t){.s = ps,
                            .e = pe,
                            .depth = depth + 1,
                            .name = name,
                            .cat = "memory",
                            .prd = u->rd,
                            .pwr = u->wr,
                            .pgr = u->gr,
                            .plen = u->e - u->s};
            }
            s = le;
        }
    }
    free(st);
    free(mem);
    /* Write them, parents before their children. */
    size_t no = ev->n - top0;
    ord_t *ord = malloc((no ? no : 1) * sizeof *ord);
    if (!ord) {
        ev->oom = 1;
        ev->n = top0;
        return;
    }
    for (size_t i = 0; i < no; i++)
        ord[i] = (ord_t){(uint64_t)(us(o, ev->v[top0 + i].s) + (1ll << 50)) << 2 |
                             (uint64_t)ev->v[top0 + i].depth,
                         top0 + i};
    qsort(ord, no, sizeof *ord, cmp_ord);
    for (size_t k = 0; k < no; k++) {
        ev_t *e = &ev->v[ord[k].i];
        long long ts = us(o, e->s), dur = us(o, e->e) - ts;
        if (dur <= 0)
            continue;
        ev_start(o);
        fprintf(o->f,
                "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"dur\":%lld,\"cat\":\"%s\",",
                o->node, world, ts, dur, e->cat);
        fputs("\"name\":", o->f);
        if (e->pre && *e->pre) {
            char full[96];
            snprintf(full, sizeof full, "%s%s", e->pre, e->name);
            put_str(o->f, full);
        } else {
            put_str(o->f, e->name);
        }
        if (e->code)
            fprintf(o->f, ",\"args\":{\"request\":\"%s\"}", req_name(e->code));
        else if (e->call) {
            fputs(",\"args\":{\"call\":", o->f);
            put_str(o->f, e->call);
            fputs("}", o->f);
        } else if (e->plen) {
            /* bytes of the interval, shared among its pieces by duration */
            double f = (double)(e->e - e->s) / (double)e->plen;
            fprintf(o->f, ",\"args\":{\"read\":%.0f,\"written\":%.0f,\"asked\":%.0f}",
                    (double)e->prd * f, (double)e->pwr * f, (double)e->pgr * f);
        }
        fputs("}", o->f);
    }
    free(ord);
    ev->n = top0;
}

/* ------------------------------------------------------- node counters */

/* An I/O record's start, within the records' time (a start before the
 * first record is not believed). */
static uint64_t io_start(const bd_trace_rec_t *x, uint64_t first)
{
    return x->b < x->t && x->b >= first ? x->b : x->t;
}

static void emit_bandwidth(out_t *o, const bd_trace_rec_t *x, size_t n)
{
    uint64_t S = UINT64_MAX, E = 0, first = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        first = x[i].t < first ? x[i].t : first;
    for (size_t i = 0; i < n; i++) {
        if (x[i].kind != BD_TR_IO)
            continue;
        uint64_t b = io_start(&x[i], first);
        S = b < S ? b : S;
        E = x[i].t > E ? x[i].t : E;
    }
    if (S >= E)
        return;
    /* Buckets of at least 1 ms, at most about 2000 of them. */
    uint64_t W = (E - S) / 2000;
    W = W < 1000000 ? 1000000 : W;
    size_t nb = (size_t)((E - S) / W) + 1;
    double *rd = calloc(nb, sizeof *rd), *wr = calloc(nb, sizeof *wr);
    if (!rd || !wr) {
        free(rd);
        free(wr);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (x[i].kind != BD_TR_IO)
            continue;
        double *acc = x[i].aux ? wr : rd;
        uint64_t b = io_start(&x[i], first), e = x[i].t;
        if (e == b) {
            acc[(e - S) / W] += (double)x[i].a;
            continue;
        }
        for (size_t k = (size_t)((b - S) / W); k <= (size_t)((e - S) / W) && k < nb; k++) {
            uint64_t ks = S + k * W, ke = ks + W;
            uint64_t os = b > ks ? b : ks, oe = e < ke ? e : ke;
            if (oe > os)
                acc[k] += (double)x[i].a * (double)(oe - os) / (double)(e - b);
        }
    }
    double prd = -1, pwr = -1;
    for (size_t k = 0; k < nb; k++) {
        double r = rd[k] / ((double)W * 1e-9) / 1e6, w = wr[k] / ((double)W * 1e-9) / 1e6;
        if (r != prd)
            counter(o, S + k * W, "storage read", "MB/s", r);
        if (w != pwr)
            counter(o, S + k * W, "storage written", "MB/s", w);
        prd = r;
        pwr = w;
    }
    counter(o, S + nb * W, "storage read", "MB/s", 0);
    counter(o, S + nb * W, "storage written", "MB/s", 0);
    free(rd);
    free(wr);
}

int bd_trace_write_json(FILE *f, bd_trace_rec_t *recs, size_t nrec,
                        const bd_trace_node_info_t *info)
{
    qsort(recs, nrec, sizeof *recs, cmp_rec);
    out_t o = {.f = f, .node = info->node, .epoch = info->epoch_ns};
    fputs("{\"traceEvents\":[", f);
    char nm[64];
    snprintf(nm, sizeof nm, "node %d", info->node);
    meta(&o, -1, "process_name", "name", nm, 0);
    meta(&o, -1, "process_sort_index", "sort_index", NULL, info->node);
    for (int r = 0; r < info->nranks; r++) {
        snprintf(nm, sizeof nm, "rank %d", info->first_rank + r);
        meta(&o, info->first_rank + r, "thread_name", "name", nm, 0);
        meta(&o, info->first_rank + r, "thread_sort_index", "sort_index", NULL,
             info->first_rank + r);
    }
    evs_t ev = {0};
    size_t i = 0;
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t j = 0; j < nrec; j++) {
        first = recs[j].t < first ? recs[j].t : first;
        last = recs[j].t > last ? recs[j].t : last;
    }
    while (i < nrec && recs[i].seq != BD_TRACE_NODE) {
        size_t j = i;
        while (j < nrec && recs[j].seq == recs[i].seq)
            j++;
        if (recs[i].seq < (uint32_t)info->nranks)
            emit_rank(&o, recs + i, j - i, info->first_rank + (int)recs[i].seq, &ev);
        i = j;
    }
    free(ev.v);
    /* The node's counters. */
    if (nrec) { /* 0: no budget (-mem-strategy none) */
        counter(&o, first, "budget", "bytes", (double)info->budget);
        counter(&o, last, "budget", "bytes", (double)info->budget);
    }
    for (; i < nrec; i++) {
        if (recs[i].kind == BD_TR_NODE_MEM)
            counter(&o, recs[i].t, "accounted resident", "bytes", (double)recs[i].a);
        else if (recs[i].kind == BD_TR_QUEUED)
            counter(&o, recs[i].t, "queued messages", "bytes", (double)recs[i].a);
    }
    emit_bandwidth(&o, recs, nrec);
    fprintf(f,
            "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"bdmpi_nodes\":%d,"
            "\"bdmpi_node%d\":{\"ranks\":%d,\"first_rank\":%d,\"budget\":%llu,"
            "\"dropped_records\":%llu,\"oom\":%d}}}\n",
            info->nnodes, info->node, info->nranks, info->first_rank,
            (unsigned long long)info->budget, (unsigned long long)info->dropped, ev.oom);
    return ferror(f) ? -1 : 0;
}

/* ---------------------------------------------------------------- merge */

int bd_trace_merge_parts(const char *path, int nnodes)
{
    char tmp[4096], part[4096];
    int missing = 0;
    for (int k = 0; k < nnodes; k++) {
        bd_trace_part_path(part, sizeof part, path, k, nnodes);
        if (access(part, R_OK) != 0) {
            bd_log_error("trace: %s is not readable here (%s): the nodes' parts %s.node0 ... "
                         "%s.node%d are kept as they are",
                         part, strerror(errno), path, path, nnodes - 1);
            missing = 1;
        }
    }
    if (missing)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.merging", path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        bd_log_error("trace: cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    fputs("{\"traceEvents\":[", out);
    char *line = NULL, *other = NULL;
    size_t cap = 0, olen = 0;
    long nev = 0;
    int rc = 0;
    for (int k = 0; k < nnodes && !rc; k++) {
        bd_trace_part_path(part, sizeof part, path, k, nnodes);
        FILE *in = fopen(part, "r");
        if (!in) {
            rc = -1;
            break;
        }
        ssize_t len;
        int in_events = 0, after = 0;
        while ((len = getline(&line, &cap, in)) > 0) {
            if (line[len - 1] == '\n')
                line[--len] = 0;
            if (!in_events && !after) {
                in_events = !strcmp(line, "{\"traceEvents\":[");
                continue;
            }
            if (in_events && line[0] == ']') {
                in_events = 0;
                after = 1;
                continue;
            }
            if (in_events && len > 0) {
                const char *e = line[0] == ',' ? line + 1 : line;
                fprintf(out, "\n%s%s", nev++ ? "," : "", e);
            } else if (after && !strncmp(line, "\"otherData\":{", 13)) {
                /* keep each node's entry: "bdmpi_nodeK":{...} */
                const char *p = strstr(line, "\"bdmpi_node");
                const char *q = p ? strstr(p + 1, "\"bdmpi_node") : NULL;
                const char *use = q ? q : p;
                if (use) {
                    size_t ul = strlen(use);
                    while (ul && (use[ul - 1] == '}'))
                        ul--;
                    char *no = realloc(other, olen + ul + 4);
                    if (no) {
                        other = no;
                        olen += (size_t)sprintf(other + olen, ",%.*s}", (int)ul, use);
                    }
                }
            }
        }
        if (ferror(in) || !after)
            rc = -1;
        fclose(in);
    }
    fprintf(out, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"bdmpi_nodes\":%d%s}}\n",
            nnodes, other ? other : "");
    free(line);
    free(other);
    if (fclose(out) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -1;
    if (rc < 0) {
        bd_log_error("trace: merging the nodes' parts into %s failed: they are kept", path);
        unlink(tmp);
        return -1;
    }
    for (int k = 0; k < nnodes; k++) {
        bd_trace_part_path(part, sizeof part, path, k, nnodes);
        unlink(part);
    }
    return 0;
}
