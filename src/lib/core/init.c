/* Environment: MPI_Init/Finalize, the RPC to the master, errors, timers. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bd_log.h"
#include "core.h"
#include "dt.h"
#include "nbc.h"
#include "request.h"
/* TODO(layers): upward includes, to be removed */
#include "mpi_int.h"
#include "objects.h"

bdl_lib_t bdl_g;
static uint64_t g_init_ns; /* when MPI_Init returned */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Requests after which the master may hand our run slot to another rank. */
static int may_block(uint32_t code)
{
    switch (code) {
    case BD_REQ_RECV:
    case BD_REQ_WAIT:
    case BD_REQ_TEST:
    case BD_REQ_WAITANY:
    case BD_REQ_TESTANY:
    case BD_REQ_PROBE:
    case BD_REQ_IPROBE:
    case BD_REQ_SSEND_WAIT:
    case BD_REQ_SSEND_TEST:
    case BD_REQ_COLL_WAIT:
    case BD_REQ_CRIT_ENTER:
    case BD_REQ_YIELD:
    case BD_REQ_COLL_TEST:
    case BD_REQ_COLL_WAITANY:
    case BD_REQ_COLL_TESTANY: return 1;
    default: return 0;
    }
}

/* Tell the master how much of us is resident, so it can resume the rank
 * that is cheapest to resume (bdmpi.txt 5.2). */
static void report_resident(void)
{
    if (bdl_g.mem_active) {
        atomic_store_explicit(&bdl_g.slot->resident, bdl_lib_mem_resident(), memory_order_relaxed);
        return;
    }
    static int fd = -2;
    if (fd == -2)
        fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    char buf[128];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return;
    buf[n] = 0;
    unsigned long long size, res;
    if (sscanf(buf, "%llu %llu", &size, &res) == 2)
        atomic_store_explicit(&bdl_g.slot->resident, res * (uint64_t)sysconf(_SC_PAGESIZE),
                              memory_order_relaxed);
}

void bdl_rpc(void)
{
    bd_slot_t *sl = bdl_g.slot;
    /* RMA requests wait for this rank (rma.c): serve them first. */
    if (atomic_load_explicit(&sl->rma_pending, memory_order_relaxed) &&
        sl->req.code != BD_REQ_ABORT)
        bdl_rma_serve_pending();
    if (bdl_g.hdr->job.nr < bdl_g.hdr->nslaves && may_block(sl->req.code)) {
        report_resident();
        /* Another rank may run while this one waits: hold no unaccounted memory. */
        bdl_lib_mem_idle();
    }
    uint64_t t0 = now_ns();
    uint32_t seen = atomic_load_explicit(&sl->resp_seq, memory_order_relaxed);
    uint32_t seq = atomic_load_explicit(&sl->req_seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&sl->req_seq, seq, memory_order_release);
    uint64_t one = 1;
    while (write(bdl_g.event_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    for (;;) {
        uint32_t now;
        while ((now = atomic_load_explicit(&sl->resp_seq, memory_order_acquire)) == seen)
            bd_futex_wait(&sl->resp_seq, seen, -1);
        seen = now;
        /* A command while we wait (unload our memory) is not the answer. */
        uint32_t cmd = atomic_load_explicit(&sl->cmd, memory_order_acquire);
        if (cmd == BD_CMD_NONE)
            break;
        if (cmd == BD_CMD_RMA) {
            /* Serve RMA requests to us, then wait on (rma.c). */
            seen = bdl_rma_serve_command();
            continue;
        }
        bdl_lib_mem_command();
    }
    atomic_fetch_add_explicit(&sl->stats[BD_STAT_WAIT_NS], now_ns() - t0, memory_order_relaxed);
}

/* ---------------------------------------------------------------- errors */

static const char *const g_err_strings[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_KEYVAL] = "invalid keyval",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "operation not supported",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_ASSERT] = "invalid assertion",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "wrong synchronization of RMA calls",
    [MPI_ERR_RMA_RANGE] = "target memory is not part of the window",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached to the window",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
};

static const char *err_class_name(int c)
{
    static const char *const names[] = {
        "MPI_SUCCESS",          "MPI_ERR_BUFFER",     "MPI_ERR_COUNT",
        "MPI_ERR_TYPE",         "MPI_ERR_TAG",        "MPI_ERR_COMM",
        "MPI_ERR_RANK",         "MPI_ERR_REQUEST",    "MPI_ERR_ROOT",
        "MPI_ERR_GROUP",        "MPI_ERR_OP",         "MPI_ERR_TOPOLOGY",
        "MPI_ERR_DIMS",         "MPI_ERR_ARG",        "MPI_ERR_UNKNOWN",
        "MPI_ERR_TRUNCATE",     "MPI_ERR_OTHER",      "MPI_ERR_INTERN",
        "MPI_ERR_IN_STATUS",    "MPI_ERR_PENDING",    "MPI_ERR_KEYVAL",
        "MPI_ERR_NO_MEM",       "MPI_ERR_INFO",       "MPI_ERR_UNSUPPORTED_OPERATION",
        "MPI_ERR_WIN",          "MPI_ERR_BASE",       "MPI_ERR_SIZE",
        "MPI_ERR_DISP",         "MPI_ERR_LOCKTYPE",   "MPI_ERR_ASSERT",
        "MPI_ERR_RMA_CONFLICT", "MPI_ERR_RMA_SYNC",   "MPI_ERR_RMA_RANGE",
        "MPI_ERR_RMA_ATTACH",   "MPI_ERR_RMA_SHARED", "MPI_ERR_RMA_FLAVOR"};
    return c >= 0 && c < (int)(sizeof names / sizeof *names) ? names[c] : "MPI_ERR_UNKNOWN";
}

static void send_abort(int code, const char *msg)
{
    if (!bdl_g.slot) {
        fprintf(stderr, "%s: %s\n", bd_log_prefix(), msg);
        exit(code ? code : 1);
    }
    bd_req_t *r = bdl_req_begin(BD_REQ_ABORT);
    r->arg[0] = code;
    snprintf(bdl_g.win, 1024, "%s", msg);
    /* The master kills every rank, this one included. */
    bdl_rpc();
    for (;;)
        pause();
}

_Noreturn void bdl_fatal(int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bd_log_error("%s", msg);
    send_abort(code ? code : 1, "");
    exit(1);
}

/* User error handlers (MPI_Comm_create_errhandler): handles 3, 4, ...
 * A freed handler stays valid for the communicators using it (MPI 3.1
 * 8.3.4); its slot is reclaimed when the table is full and no communicator
 * names it any more. */
static MPI_Comm_errhandler_function **g_errh_fn;
static char *g_errh_freed;
static int g_nerrh;

/* Error codes and classes added by the program (MPI_Add_error_*). */
#define BDL_MAX_USER_CODES 256
static int g_ncodes;
static int g_code_class[BDL_MAX_USER_CODES];
static char *g_code_string[BDL_MAX_USER_CODES];

static MPI_Comm_errhandler_function *user_errh(MPI_Errhandler eh)
{
    int i = eh - 3;
    return i >= 0 && i < g_nerrh ? g_errh_fn[i] : NULL;
}

static int valid_errh(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || user_errh(eh);
}

/* The largest error code or class in use: the MPI_LASTUSEDCODE attribute. */
int bdl_errcode_lastused(void) { return MPI_ERR_LASTCODE + g_ncodes; }

int bdl_errcode_valid(int code)
{
    return (code > 0 && code <= MPI_ERR_LASTCODE) ||
           (code > MPI_ERR_LASTCODE && code - (MPI_ERR_LASTCODE + 1) < g_ncodes);
}

MPI_Errhandler bdl_errh_effective(const bdl_comm_t *c)
{
    if (c && c->errh != BDL_ERRH_DEFAULT)
        return c->errh;
    const bdl_comm_t *w = bdl_comm_get(MPI_COMM_WORLD);
    return w && w->errh != BDL_ERRH_DEFAULT ? w->errh : MPI_ERRORS_ARE_FATAL;
}

int bdl_error(MPI_Comm comm, int code, const char *call, const char *fmt, ...)
{
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c) {
        c = bdl_comm_get(MPI_COMM_WORLD);
        comm = MPI_COMM_WORLD;
    }
    MPI_Errhandler eh = bdl_errh_effective(c);
    if (eh == MPI_ERRORS_RETURN)
        return code;
    MPI_Comm_errhandler_function *fn = user_errh(eh);
    if (fn) {
        fn(&comm, &code);
        return code;
    }
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bd_log_error("%s: %s [%s]", call, msg, err_class_name(code));
    send_abort(code, "");
    return code;
}

int MPI_Error_class(int errorcode, int *errorclass)
{
    int u = errorcode - (MPI_ERR_LASTCODE + 1);
    if (u >= 0 && u < g_ncodes) {
        *errorclass = g_code_class[u];
        return MPI_SUCCESS;
    }
    if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d",
                         errorcode);
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *s = NULL;
    int u = errorcode - (MPI_ERR_LASTCODE + 1);
    if (u >= 0 && u < g_ncodes) {
        int n =
            snprintf(string, MPI_MAX_ERROR_STRING, "%s", g_code_string[u] ? g_code_string[u] : "");
        *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
        return MPI_SUCCESS;
    }
    if (errorcode >= 0 && errorcode < (int)(sizeof g_err_strings / sizeof *g_err_strings))
        s = g_err_strings[errorcode];
    if (!s) {
        if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string",
                             "invalid error code %d", errorcode);
        s = "unknown error";
    }
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", err_class_name(errorcode), s);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    BDL_CHECK_INIT("MPI_Comm_set_errhandler");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_set_errhandler", "invalid communicator %d",
                         comm);
    if (!valid_errh(errhandler))
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler %d",
                         errhandler);
    c->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    BDL_CHECK_INIT("MPI_Comm_get_errhandler");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_get_errhandler", "invalid communicator %d",
                         comm);
    if (!errhandler)
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
    *errhandler = bdl_errh_effective(c);
    return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler is NULL");
    if (user_errh(*errhandler))
        g_errh_freed[*errhandler - 3] = 1;
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* Free the slots of freed handlers that no communicator uses; 1 if any. */
static int errh_reclaim(void)
{
    int got = 0;
    for (int i = 0; i < g_nerrh; i++) {
        if (!g_errh_fn[i] || !g_errh_freed[i])
            continue;
        int used = 0;
        for (int h = 0; h < bdl_g.ncomms && !used; h++)
            used = bdl_g.comms[h].used && bdl_g.comms[h].errh == 3 + i;
        if (!used) {
            g_errh_fn[i] = NULL;
            g_errh_freed[i] = 0;
            got = 1;
        }
    }
    return got;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    const char *call = "MPI_Comm_create_errhandler";
    if (!function || !errhandler)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "%s is NULL",
                         function ? "errhandler" : "function");
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < g_nerrh; i++)
            if (!g_errh_fn[i]) {
                g_errh_fn[i] = function;
                g_errh_freed[i] = 0;
                *errhandler = 3 + i;
                return MPI_SUCCESS;
            }
        if (pass == 0 && errh_reclaim())
            continue;
        int n = g_nerrh ? 2 * g_nerrh : 16;
        MPI_Comm_errhandler_function **f = realloc(g_errh_fn, (size_t)n * sizeof *f);
        if (f)
            g_errh_fn = f;
        char *fr = f ? realloc(g_errh_freed, (size_t)n) : NULL;
        if (!fr)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
        g_errh_freed = fr;
        memset(g_errh_fn + g_nerrh, 0, (size_t)(n - g_nerrh) * sizeof *f);
        memset(g_errh_freed + g_nerrh, 0, (size_t)(n - g_nerrh));
        g_nerrh = n;
    }
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_INTERN, call, "no error handler slot");
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    BDL_CHECK_INIT("MPI_Comm_call_errhandler");
    if (!bdl_comm_get(comm))
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_call_errhandler", "invalid communicator %d",
                         comm);
    bdl_error(comm, errorcode, "MPI_Comm_call_errhandler", "error %d raised by the program",
              errorcode);
    return MPI_SUCCESS;
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return MPI_Comm_set_errhandler(comm, errhandler);
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return MPI_Comm_get_errhandler(comm, errhandler);
}

int MPI_Add_error_class(int *errorclass)
{
    if (g_ncodes == BDL_MAX_USER_CODES)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI_Add_error_class",
                         "more than %d added error codes", BDL_MAX_USER_CODES);
    int code = MPI_ERR_LASTCODE + 1 + g_ncodes;
    g_code_class[g_ncodes++] = code;
    *errorclass = code;
    return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
    int u = errorclass - (MPI_ERR_LASTCODE + 1);
    if ((errorclass < 0 || errorclass > MPI_ERR_LASTCODE) && (u < 0 || u >= g_ncodes))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code",
                         "invalid error class %d", errorclass);
    if (g_ncodes == BDL_MAX_USER_CODES)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI_Add_error_code",
                         "more than %d added error codes", BDL_MAX_USER_CODES);
    g_code_class[g_ncodes] = errorclass;
    *errorcode = MPI_ERR_LASTCODE + 1 + g_ncodes++;
    return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char *string)
{
    int u = errorcode - (MPI_ERR_LASTCODE + 1);
    if (u < 0 || u >= g_ncodes)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                         "error code %d was not added by the program", errorcode);
    free(g_code_string[u]);
    g_code_string[u] = strdup(string ? string : "");
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- init */

static int env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > INT_MAX)
        return -1;
    *out = (int)x;
    return 0;
}

static int do_init(int required, int *provided)
{
    if (bdl_g.initialized) {
        bd_log_error("MPI_Init called twice");
        exit(1);
    }
    int shm_fd, slot, ev_fd;
    if (env_int("BDMPI_SHM_FD", &shm_fd) < 0 || env_int("BDMPI_SLOT", &slot) < 0 ||
        env_int("BDMPI_EVENT_FD", &ev_fd) < 0) {
        fprintf(stderr,
                "bdmpi: this program was built with bdmpicc and must be started with "
                "bdmpiexec, e.g. `bdmpiexec -ns 4 %s`\n",
                "./program");
        exit(1);
    }
    struct stat st;
    if (fstat(shm_fd, &st) < 0) {
        fprintf(stderr, "bdmpi: shared memory fd %d is not usable: %s\n", shm_fd, strerror(errno));
        exit(1);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "bdmpi: cannot map %lld bytes of shared memory: %s\n",
                (long long)st.st_size, strerror(errno));
        exit(1);
    }
    bdl_g.hdr = p;
    if (bdl_g.hdr->magic != BD_SHM_MAGIC || (uint32_t)slot >= bdl_g.hdr->nslaves) {
        fprintf(stderr, "bdmpi: shared memory does not belong to a compatible bdmprun\n");
        exit(1);
    }
    bdl_g.slot = bd_shm_slot(bdl_g.hdr, (uint32_t)slot);
    bdl_g.win = bd_slot_window(bdl_g.hdr, bdl_g.slot);
    bdl_g.window = bdl_g.hdr->window;
    bdl_g.threshold = bdl_g.hdr->job.msg_threshold;
    bdl_g.event_fd = ev_fd;
    /* Ranks must not leak the master's descriptors into programs they exec. */
    fcntl(shm_fd, F_SETFD, FD_CLOEXEC);
    fcntl(ev_fd, F_SETFD, FD_CLOEXEC);

    bdl_req_begin(BD_REQ_INIT);
    bdl_rpc();
    bdl_g.world_size = (int)bdl_resp()->arg[0];
    bdl_g.world_rank = (int)bdl_resp()->arg[1];
    char prefix[32];
    snprintf(prefix, sizeof prefix, "bdmpi: rank %d", bdl_g.world_rank);
    bd_log_set_prefix(prefix);
    bdl_comm_setup_predefined();
    bdl_lib_mem_init();
    bdl_g.thread_level = required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : required;
    if (bdl_g.thread_level < MPI_THREAD_SINGLE)
        bdl_g.thread_level = MPI_THREAD_SINGLE;
    if (provided)
        *provided = bdl_g.thread_level;
    bdl_g.initialized = 1;
    g_init_ns = now_ns();
    /* Waiting for the first run slot happened before MPI_Init returned:
     * not part of the run that RUN_NS measures. */
    atomic_store_explicit(&bdl_g.slot->stats[BD_STAT_WAIT_NS], 0, memory_order_relaxed);
    return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return do_init(MPI_THREAD_SINGLE, NULL);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    return do_init(required, provided);
}

int MPI_Finalize(void)
{
    BDL_CHECK_INIT("MPI_Finalize");
    /* MPI 3.1 8.7.1: MPI_Finalize first deletes MPI_COMM_SELF's attributes,
     * so programs can hook their own cleanup there. */
    bdl_attr_delete_all(MPI_COMM_SELF, "MPI_Finalize");
    if (bdl_g.ndetached)
        bdl_p2p_reap_detached();
    bdl_lib_mem_stats();
    atomic_store_explicit(&bdl_g.slot->stats[BD_STAT_RUN_NS], now_ns() - g_init_ns,
                          memory_order_relaxed);
    bdl_req_begin(BD_REQ_FINALIZE);
    bdl_rpc();
    bdl_g.finalized = 1;
    return MPI_SUCCESS;
}

int MPI_Initialized(int *flag)
{
    *flag = bdl_g.initialized;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    *flag = bdl_g.finalized;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    *provided = bdl_g.thread_level;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    (void)comm;
    char msg[64];
    snprintf(msg, sizeof msg, "(called on communicator %d)", comm);
    send_abort(errorcode, bdl_g.initialized ? "" : msg);
    return MPI_SUCCESS;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) < 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    int n =
        snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "%s (out-of-core MPI runtime; MPI %d.%d)",
                 BDMPI_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n;
    return MPI_SUCCESS;
}

double MPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double MPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) == 0 && (ts.tv_sec || ts.tv_nsec))
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return 1e-9;
}

int BDMPI_Enter_critical(void)
{
    BDL_CHECK_INIT("BDMPI_Enter_critical");
    bdl_req_begin(BD_REQ_CRIT_ENTER);
    bdl_rpc();
    return MPI_SUCCESS;
}

int BDMPI_Exit_critical(void)
{
    BDL_CHECK_INIT("BDMPI_Exit_critical");
    bdl_req_begin(BD_REQ_CRIT_EXIT);
    bdl_rpc();
    return MPI_SUCCESS;
}
