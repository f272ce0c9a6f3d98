/* Recording the timeline and accounting the ranks' time (see bd_trace.h).
 * The rank side runs in fault handlers, I/O workers and inside malloc: it
 * uses only atomics, clock_gettime and write(2). */
#include "bd_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bd_log.h"

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ ring */

/* Reserve the next record, or count a drop when the ring is full. */
static bd_trace_rec_t *ring_reserve(bd_trace_ring_t *r, uint64_t *idx)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        /* Acquire: the master has finished copying the record it freed. */
        uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h - t >= r->cap) {
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return NULL;
        }
        if (atomic_compare_exchange_weak_explicit(&r->head, &h, h + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    *idx = h;
    return &r->rec[h % r->cap];
}

/* ------------------------------------------------------------- rank side */

/* Time accounting: one word holds the time of the last change (ns since
 * R.base, bits 8..63) and what the rank is doing (bits 0..7); every change
 * is one compare-and-swap, and the time since the last change goes to the
 * part of the time the old bits name. */
#define A_WAIT 1u  /* in a request to the master */
#define A_GRANT 2u /* a load waits for the master's grant */
#define A_ON 4u    /* between MPI_Init and MPI_Finalize: accounted */
#define A_IO_SHIFT 3
#define A_IO_MASK (31u << A_IO_SHIFT) /* storage I/O operations in progress */

static struct {
    bd_trace_ring_t *ring; /* NULL: not traced */
    _Atomic uint64_t *stats;
    int event_fd;
    uint64_t base;
    _Atomic uint64_t acct;
    int depth; /* requests in progress (a command served inside a wait makes more) */
    /* The MPI thread's run_delay (time runnable but not on a CPU) and the
     * computing time when its run slot was last given: at its next request
     * the run_delay since goes from computing to TIME_CPU_WAIT_NS. */
    int sched_fd; /* /proc/thread-self/schedstat of the MPI thread, or -1 */
    int run_open;
    uint64_t run_delay0, compute0;
    /* names of MPI calls already recorded (the program's thread only) */
    const char *names[255];
    int nnames, last;
    /* the request in progress that cannot block (recorded only if long) */
    uint64_t srv_t0;
    uint16_t srv_id;
} R;

/* A request that cannot block is on the timeline only when the master took
 * this long to serve it (a collective GET reading pieces from storage),
 * as a slice of its own instead of "running" (session 26: PageRank's GETs
 * were a third of its iterations, shown as running). */
#define SERVED_MIN_NS 200000u

static int acct_part(uint64_t w)
{
    int io = (w & A_IO_MASK) != 0;
    if (w & A_WAIT)
        return io ? BD_STAT_TIME_IO_WAIT_NS : BD_STAT_TIME_WAIT_NS;
    if (io)
        return BD_STAT_TIME_IO_RUN_NS;
    return (w & A_GRANT) ? BD_STAT_TIME_GRANT_NS : BD_STAT_TIME_COMPUTE_NS;
}

/* Returns the time of the change (CLOCK_MONOTONIC ns), for its record. */
static uint64_t account(uint64_t set, uint64_t clear, int dio)
{
    if (!R.stats)
        return now_ns();
    uint64_t old = atomic_load_explicit(&R.acct, memory_order_relaxed), nw, now;
    do {
        /* Read after the word: never before the last change's time. */
        now = now_ns() - R.base;
        uint64_t fl = ((old & 0xff) | set) & ~(uint64_t)clear;
        int io = (int)((fl & A_IO_MASK) >> A_IO_SHIFT) + dio;
        io = io < 0 ? 0 : io > 31 ? 31 : io;
        fl = (fl & ~(uint64_t)A_IO_MASK) | (uint64_t)io << A_IO_SHIFT;
        nw = now << 8 | fl;
    } while (!atomic_compare_exchange_weak_explicit(&R.acct, &old, nw, memory_order_relaxed,
                                                    memory_order_relaxed));
    uint64_t last = old >> 8;
    if ((old & A_ON) && now > last)
        atomic_fetch_add_explicit(&R.stats[acct_part(old)], now - last, memory_order_relaxed);
    return now + R.base;
}

static void put(uint64_t t, uint16_t kind, uint16_t aux, uint64_t a, uint64_t b)
{
    bd_trace_ring_t *r = R.ring;
    uint64_t idx;
    bd_trace_rec_t *x = ring_reserve(r, &idx);
    if (!x)
        return;
    x->t = t;
    x->kind = kind;
    x->aux = aux;
    x->a = a;
    x->b = b;
    __atomic_store_n(&x->seq, (uint32_t)(idx + 1), __ATOMIC_RELEASE);
    /* Half full: ring the master once, so it drains us even if we ask it
     * for nothing for a long time. */
    if (idx + 1 - atomic_load_explicit(&r->tail, memory_order_relaxed) >= r->cap / 2 &&
        !atomic_exchange_explicit(&r->kicked, 1, memory_order_relaxed)) {
        int saved = errno; /* we may be in a signal handler */
        uint64_t one = 1;
        while (write(R.event_fd, &one, sizeof one) < 0 && errno == EINTR)
            ;
        errno = saved;
    }
}

/* The calling thread's run_delay in ns (CONFIG_SCHED_INFO: the second
 * field of schedstat), or UINT64_MAX when it cannot be read.  No stdio:
 * one pread of a few bytes, parsed here. */
static uint64_t run_delay_ns(void)
{
    char b[96];
    ssize_t n = R.sched_fd < 0 ? -1 : pread(R.sched_fd, b, sizeof b - 1, 0);
    if (n <= 0)
        return UINT64_MAX;
    b[n] = 0;
    const char *p = b;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p != ' ')
        return UINT64_MAX;
    p++;
    if (*p < '0' || *p > '9')
        return UINT64_MAX;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (uint64_t)(*p++ - '0');
    return v;
}

void bd_trace_rank_init(bd_shm_hdr_t *h, bd_slot_t *sl, int event_fd)
{
    /* Called by the thread that calls MPI_Init: its schedstat is the one
     * read at every request (a rank that calls MPI from other threads too
     * gets its CPU wait counted for this one only). */
    if (R.sched_fd > 0)
        close(R.sched_fd);
    /* Only for --stats, the one report of it: two preads per request made
     * the hand-overs of an -nr 1 ping-pong 1.4x slower (session 18). */
    R.sched_fd = h->job.stats ? open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC) : -1;
    R.run_open = 0;
    R.stats = sl->stats;
    R.event_fd = event_fd;
    R.base = now_ns();
    atomic_store_explicit(&R.acct, 0, memory_order_relaxed);
    if (h->trace_offset) {
        uint64_t idx = ((uint64_t)((char *)sl - (char *)h) - h->slot_offset) / h->slot_stride;
        R.ring = (bd_trace_ring_t *)((char *)h + h->trace_offset + idx * h->trace_stride);
    }
}

/* The id of a call's name, recorded the first time it is used (0: none). */
static uint16_t name_id(const char *call)
{
    if (!call)
        return 0;
    if (R.last && R.names[R.last - 1] == call)
        return (uint16_t)R.last;
    for (int i = 0; i < R.nnames; i++)
        if (R.names[i] == call)
            return (uint16_t)(R.last = i + 1);
    if (R.nnames == 255)
        return 0;
    R.names[R.nnames++] = call;
    uint16_t id = (uint16_t)R.nnames;
    size_t n = strlen(call);
    uint64_t t = now_ns();
    for (size_t c = 0; c * 16 < n && c < 3; c++) {
        char chunk[16] = {0};
        memcpy(chunk, call + c * 16, n - c * 16 < 16 ? n - c * 16 : 16);
        uint64_t a, b;
        memcpy(&a, chunk, 8);
        memcpy(&b, chunk + 8, 8);
        put(t, BD_TR_NAME, (uint16_t)(id | c << 8), a, b);
    }
    return (uint16_t)(R.last = id);
}

/* Requests recorded on the timeline: those after which the master may give
 * the run slot away (the library's may_block list), MPI_Init and
 * MPI_Finalize.  The others are short and count as running there. */
static int recorded(uint32_t code)
{
    switch (code) {
    case BD_REQ_INIT:
    case BD_REQ_FINALIZE:
    case BD_REQ_P2P_WAIT:
    case BD_REQ_MBOX_FULL:
    case BD_REQ_COLL_WAIT:
    case BD_REQ_COLL_SMALL:
    case BD_REQ_CRIT_ENTER:
    case BD_REQ_YIELD:
    case BD_REQ_COLL_TEST:
    case BD_REQ_COLL_WAITANY:
    case BD_REQ_COLL_TESTANY: return 1;
    default: return 0;
    }
}

/* The rank runs from here (its request answered; MPI_Init's included). */
static void cpu_wait_open(void)
{
    R.run_open = 0;
    if (!R.stats || R.sched_fd < 0)
        return;
    uint64_t d = run_delay_ns();
    if (d == UINT64_MAX)
        return;
    R.run_delay0 = d;
    R.compute0 = atomic_load_explicit(&R.stats[BD_STAT_TIME_COMPUTE_NS], memory_order_relaxed);
    R.run_open = 1;
}

/* ... to here, its next request: the time the MPI thread spent runnable
 * but without a CPU is moved from computing, where account() put it (it
 * cannot tell), to TIME_CPU_WAIT_NS, at most what was accounted computing
 * meanwhile, so the parts still add up to the rank's time.  A rank on a
 * busy machine computes at a fraction of a CPU; without this its
 * "computing" looked like slow code (issue 13, session 18: SGD's doubled). */
static void cpu_wait_close(void)
{
    if (!R.run_open)
        return;
    R.run_open = 0;
    uint64_t d = run_delay_ns();
    if (d == UINT64_MAX || d <= R.run_delay0)
        return;
    uint64_t c = atomic_load_explicit(&R.stats[BD_STAT_TIME_COMPUTE_NS], memory_order_relaxed);
    uint64_t comp = c > R.compute0 ? c - R.compute0 : 0, mv = d - R.run_delay0;
    mv = mv < comp ? mv : comp;
    if (!mv)
        return;
    atomic_fetch_sub_explicit(&R.stats[BD_STAT_TIME_COMPUTE_NS], mv, memory_order_relaxed);
    atomic_fetch_add_explicit(&R.stats[BD_STAT_TIME_CPU_WAIT_NS], mv, memory_order_relaxed);
}

uint32_t bd_trace_wait_begin(const bd_req_t *r, const char *call)
{
    uint32_t code = r->code;
    if (R.depth++)
        return code;
    /* MPI_Finalize ends the accounted time. */
    uint64_t t = account(A_WAIT, code == BD_REQ_FINALIZE ? A_ON : 0, 0);
    cpu_wait_close();
    if (R.ring && recorded(code)) {
        uint64_t why = code == BD_REQ_P2P_WAIT
                           ? ((uint64_t)r->arg[1] & 0xffff) | ((uint64_t)r->arg[3] & 0xffff) << 16
                           : 0;
        uint16_t id = code == BD_REQ_INIT ? 0 : name_id(call);
        put(t, BD_TR_WAIT_BEGIN, (uint16_t)code, why, id);
    } else if (R.ring) {
        R.srv_t0 = t;
        R.srv_id = name_id(call);
    }
    return code;
}

void bd_trace_wait_end(uint32_t code)
{
    if (R.depth > 0 && --R.depth)
        return;
    /* MPI_Init's answer starts the accounted time. */
    uint64_t t = account(code == BD_REQ_INIT ? A_ON : 0, A_WAIT, 0);
    cpu_wait_open();
    if (R.ring && recorded(code)) {
        put(t, BD_TR_WAIT_END, (uint16_t)code, 0, 0);
    } else if (R.ring && R.srv_t0 && t - R.srv_t0 >= SERVED_MIN_NS) {
        /* its begin now, with its time: the converter pairs a BEGIN with
         * the END that follows it in the ring, and nothing else of this
         * thread's calls came between */
        put(R.srv_t0, BD_TR_WAIT_BEGIN, (uint16_t)code, 0, R.srv_id);
        put(t, BD_TR_WAIT_END, (uint16_t)code, 0, 0);
    }
    R.srv_t0 = 0;
}

/* write 2: a pre-cleaning write in the background of the running rank,
 * on the timeline but not the rank's own storage time (it computes). */
void bd_trace_io_begin(void *ctx, int write)
{
    (void)ctx;
    if (write != 2)
        account(0, 0, 1);
}

void bd_trace_io_end(void *ctx, int write, size_t bytes, uint64_t t0_ns)
{
    (void)ctx;
    uint64_t t = write != 2 ? account(0, 0, -1) : now_ns();
    if (R.ring)
        put(t, BD_TR_IO, (uint16_t)(write != 0), bytes, t0_ns);
}

uint64_t bd_trace_grant_begin(void) { return account(A_GRANT, 0, 0); }

void bd_trace_grant_end(uint64_t t0_ns, size_t bytes)
{
    uint64_t t = account(0, A_GRANT, 0);
    if (R.ring)
        put(t, BD_TR_GRANT, 0, bytes, t0_ns);
}

/* ----------------------------------------------------------- master side */

#define MBUF 2048

static struct {
    bd_shm_hdr_t *h;
    int fd; /* unlinked file of records in the job directory */
    char out[BD_PATH_MAX + 32];
    uint64_t epoch; /* CLOCK_MONOTONIC ns that is ts 0 */
    uint64_t written;
    size_t n;
    int failed;
    bd_trace_rec_t buf[MBUF];
} M = {.fd = -1};

static bd_trace_ring_t *ring_of(uint32_t i)
{
    return (bd_trace_ring_t *)((char *)M.h + M.h->trace_offset + (uint64_t)i * M.h->trace_stride);
}

uint64_t bd_trace_layout(bd_shm_hdr_t *h, uint64_t total, int tracing)
{
    h->trace_offset = h->trace_stride = 0;
    if (!tracing)
        return total;
    h->trace_offset = (total + 4095) / 4096 * 4096;
    h->trace_stride = BD_TRACE_RING_BYTES;
    return h->trace_offset + h->trace_stride * h->nslaves;
}

int bd_trace_active(void) { return M.fd >= 0; }

static void flush(void)
{
    if (!M.n)
        return;
    if (!M.failed && bd_write_full(M.fd, M.buf, M.n * sizeof M.buf[0]) < 0) {
        bd_log_error("trace: cannot keep the records in the job directory %s: %s (the "
                     "timeline will stop here)",
                     M.h->jobdir, strerror(errno));
        M.failed = 1;
    }
    if (!M.failed)
        M.written += M.n;
    M.n = 0;
}

static void append(const bd_trace_rec_t *x)
{
    if (M.n == MBUF)
        flush();
    M.buf[M.n++] = *x;
}

int bd_trace_master_open(bd_shm_hdr_t *h, const char *out_path, char *err, size_t errlen)
{
    M.h = h;
    if (!h->trace_offset) {
        snprintf(err, errlen, "trace: no room for the rings in shared memory");
        return -1;
    }
    if (snprintf(M.out, sizeof M.out, "%s", out_path) >= (int)sizeof M.out) {
        snprintf(err, errlen, "trace: file name too long: %s", out_path);
        return -1;
    }
    char part[sizeof M.out + 16];
    bd_trace_part_path(part, sizeof part, out_path, (int)h->node, (int)h->nnodes);
    int t = open(part, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (t < 0) {
        snprintf(err, errlen, "trace: cannot write the timeline to %s: %s", part, strerror(errno));
        return -1;
    }
    close(t);
    char tmp[BD_PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/trace-records", h->jobdir);
    M.fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (M.fd < 0) {
        snprintf(err, errlen, "trace: cannot create %s: %s", tmp, strerror(errno));
        return -1;
    }
    unlink(tmp); /* nothing is left behind, however the master ends */
    for (uint32_t i = 0; i < h->nslaves; i++) {
        bd_trace_ring_t *r = ring_of(i);
        memset(r, 0, sizeof *r);
        r->cap = (uint32_t)((h->trace_stride - sizeof *r) / sizeof(bd_trace_rec_t));
    }
    /* ts 0 is when bdmpiexec started (BDMPI_TRACE_T0, CLOCK_REALTIME ns),
     * the same instant for every node; else now. */
    uint64_t mono = now_ns();
    M.epoch = mono;
    const char *t0 = getenv("BDMPI_TRACE_T0");
    struct timespec rt;
    if (t0 && *t0 && clock_gettime(CLOCK_REALTIME, &rt) == 0) {
        uint64_t real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
        uint64_t start = strtoull(t0, NULL, 10);
        if (start && start <= real && real - start < mono)
            M.epoch = mono - (real - start);
    }
    return 0;
}

void bd_trace_put(uint32_t who, uint16_t kind, uint16_t aux, uint64_t a, uint64_t b)
{
    if (M.fd < 0)
        return;
    bd_trace_rec_t x = {.t = now_ns(), .seq = who, .kind = kind, .aux = aux, .a = a, .b = b};
    append(&x);
}

void bd_trace_drain(void)
{
    if (M.fd < 0)
        return;
    for (uint32_t i = 0; i < M.h->nslaves; i++) {
        bd_trace_ring_t *r = ring_of(i);
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        if (tail == head)
            continue;
        while (tail != head) {
            bd_trace_rec_t *x = &r->rec[tail % r->cap];
            /* A producer that reserved it may still be writing it. */
            if (__atomic_load_n(&x->seq, __ATOMIC_ACQUIRE) != (uint32_t)(tail + 1))
                break;
            bd_trace_rec_t c = *x;
            c.seq = i;
            append(&c);
            tail++;
        }
        atomic_store_explicit(&r->tail, tail, memory_order_release);
        atomic_store_explicit(&r->kicked, 0, memory_order_relaxed);
    }
}

void bd_trace_counts(uint64_t *written, uint64_t *dropped)
{
    *written = M.written + M.n;
    *dropped = 0;
    if (!M.h || !M.h->trace_offset)
        return;
    for (uint32_t i = 0; i < M.h->nslaves; i++)
        *dropped += atomic_load_explicit(&ring_of(i)->dropped, memory_order_relaxed);
}

int bd_trace_master_finish(void)
{
    if (M.fd < 0)
        return 0;
    bd_trace_drain();
    flush();
    uint64_t written, dropped;
    bd_trace_counts(&written, &dropped);
    int rc = -1;
    char part[sizeof M.out + 16];
    bd_trace_part_path(part, sizeof part, M.out, (int)M.h->node, (int)M.h->nnodes);
    bd_trace_rec_t *recs = NULL;
    off_t size = lseek(M.fd, 0, SEEK_END);
    size_t n = size > 0 ? (size_t)size / sizeof *recs : 0;
    if (size < 0 || (n && !(recs = malloc(n * sizeof *recs)))) {
        bd_log_error("trace: cannot read back %zu records: %s", n, strerror(errno));
        goto out;
    }
    if (n && bd_pread_full(M.fd, recs, n * sizeof *recs, 0) < 0) {
        bd_log_error("trace: cannot read back the records: %s", strerror(errno));
        goto out;
    }
    FILE *f = fopen(part, "w");
    if (!f) {
        bd_log_error("trace: cannot write the timeline to %s: %s", part, strerror(errno));
        goto out;
    }
    bd_trace_node_info_t info = {
        .node = (int)M.h->node,
        .nnodes = (int)M.h->nnodes,
        .nranks = (int)M.h->nslaves,
        .first_rank = (int)M.h->first_rank,
        .budget = M.h->job.mem_budget,
        .epoch_ns = M.epoch,
        .dropped = dropped,
    };
    int wrc = bd_trace_write_json(f, recs, n, &info);
    if (fclose(f) != 0 || wrc < 0) {
        bd_log_error("trace: writing %s failed: %s", part, strerror(errno));
        goto out;
    }
    if (dropped)
        bd_log_error("trace: %llu records were dropped because a rank's ring (%d KiB) was "
                     "full: the timeline has gaps",
                     (unsigned long long)dropped, BD_TRACE_RING_BYTES / 1024);
    rc = 0;
out:
    free(recs);
    close(M.fd);
    M.fd = -1;
    return rc;
}
