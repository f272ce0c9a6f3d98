/* The environment's MPI calls (top room): MPI_Init and MPI_Finalize, error
 * classes, strings and handlers, aborting, timers and the library's
 * identity.  The state, the RPC and error reporting they build on are in
 * core/ (rpc.c, error.c). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bd_log.h"
#include "bd_mem.h"
#include "core.h"
#include "mpi_int.h"
#include "objects.h"
#include "request.h"

static uint64_t g_init_ns;      /* when MPI_Init returned */
static pthread_t g_main_thread; /* the thread that began the instance (MPI_Is_thread_main) */

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
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_NOT_SAME] = "arguments differ among the processes of a collective I/O call",
    [MPI_ERR_AMODE] = "invalid access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_SPAWN] = "processes could not be spawned",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_NAME] = "service name not published",
    [MPI_ERR_SERVICE] = "service name could not be (un)published",
    [MPI_ERR_NO_SUCH_FILE] = "file does not exist",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "file in use by some process",
    [MPI_ERR_DUP_DATAREP] = "data representation already registered",
    [MPI_ERR_CONVERSION] = "data conversion failed",
    [MPI_ERR_IO] = "I/O error",
    [MPI_ERR_INFO_KEY] = "invalid info key (empty or longer than MPI_MAX_INFO_KEY)",
    [MPI_ERR_INFO_VALUE] = "invalid info value (empty or longer than MPI_MAX_INFO_VAL)",
    [MPI_ERR_INFO_NOKEY] = "no such key in the info object",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_PROC_ABORTED] = "operation with a process that has aborted",
    [MPI_ERR_VALUE_TOO_LARGE] = "a value is too large to be stored in the output argument",
    [MPIX_ERR_PROC_FAILED] = "a process of the communicator failed",
    [MPIX_ERR_PROC_FAILED_PENDING] = "a process failure left the request pending",
    [MPIX_ERR_REVOKED] = "the communicator was revoked",
    /* the tool information interface (mpi_t.h) */
    [MPI_T_ERR_MEMORY] = "out of memory (tool interface)",
    [MPI_T_ERR_NOT_INITIALIZED] = "the tool interface is not initialized (MPI_T_init_thread)",
    [MPI_T_ERR_CANNOT_INIT] = "the tool interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "no variable, category, source or event has that index",
    [MPI_T_ERR_INVALID_ITEM] = "no item of the enumeration has that index",
    [MPI_T_ERR_INVALID_HANDLE] = "invalid tool interface handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "no more tool interface handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "no more performance variable sessions",
    [MPI_T_ERR_INVALID_SESSION] = "invalid performance variable session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "the control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "the control variable can never be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "the performance variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "the performance variable cannot be written or reset",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "the performance variable cannot be read and reset at once",
    [MPI_T_ERR_INVALID_NAME] = "no variable, category or event has that name",
    [MPI_T_ERR_INVALID] = "invalid use of the tool interface",
    [MPI_T_ERR_NOT_SUPPORTED] = "not supported by the tool interface",
};

int MPI_Error_class(int errorcode, int *errorclass)
{
    BDL_MT_GUARD;
    int cls = bdl_errcode_class(errorcode);
    if (cls >= 0) {
        *errorclass = cls;
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
    BDL_MT_GUARD;
    const char *s = NULL;
    if (bdl_errcode_class(errorcode) >= 0) {
        int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", bdl_errcode_string(errorcode));
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
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", bdl_err_class_name(errorcode), s);
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Comm_set_errhandler");
    bdl_comm_t *c = bdl_comm_get(comm);
    if (!c)
        return bdl_error(comm, MPI_ERR_COMM, "MPI_Comm_set_errhandler", "invalid communicator %d",
                         comm);
    if (!bdl_errh_valid(errhandler))
        return bdl_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "invalid error handler %d",
                         errhandler);
    c->errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
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
    BDL_MT_GUARD;
    if (!errhandler)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler is NULL");
    if (*errhandler == MPI_ERRHANDLER_NULL)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free",
                         "errhandler is MPI_ERRHANDLER_NULL");
    bdl_errh_free(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_create_errhandler";
    if (!function || !errhandler)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "%s is NULL",
                         function ? "errhandler" : "function");
    int rc = bdl_errh_create(function, errhandler);
    if (rc == MPI_ERR_NO_MEM)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
    if (rc)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INTERN, call, "no error handler slot");
    return MPI_SUCCESS;
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    BDL_MT_GUARD;
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
    BDL_MT_GUARD;
    return MPI_Comm_set_errhandler(comm, errhandler);
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    return MPI_Comm_get_errhandler(comm, errhandler);
}

int MPI_Add_error_class(int *errorclass)
{
    BDL_MT_GUARD;
    int code = bdl_errcode_add(-1);
    if (code < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI_Add_error_class",
                         "more than %d added error codes", BDL_MAX_USER_CODES);
    *errorclass = code;
    return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
    BDL_MT_GUARD;
    if ((errorclass < 0 || errorclass > MPI_ERR_LASTCODE) && bdl_errcode_class(errorclass) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code",
                         "invalid error class %d", errorclass);
    int code = bdl_errcode_add(errorclass);
    if (code < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI_Add_error_code",
                         "more than %d added error codes", BDL_MAX_USER_CODES);
    *errorcode = code;
    return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char *string)
{
    BDL_MT_GUARD;
    if (bdl_errcode_class(errorcode) < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                         "error code %d was not added by the program", errorcode);
    bdl_errcode_set_string(errorcode, string ? string : "");
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

/* The master's executable for a singleton: bdmprun in the bin directory
 * beside the lib directory this library was loaded from (installed tree:
 * PREFIX/lib or PREFIX/lib/<multiarch>; build tree: build/lib). */
static int find_bdmprun(char *out, size_t len)
{
    Dl_info di;
    if (!dladdr((void *)&find_bdmprun, &di) || !di.dli_fname)
        return -1;
    char lib[PATH_MAX];
    if (!realpath(di.dli_fname, lib))
        return -1;
    char *slash = strrchr(lib, '/');
    if (!slash)
        return -1;
    *slash = 0;
    static const char *const rel[] = {"/../bin/bdmprun", "/../../bin/bdmprun", "/bdmprun"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++)
        if ((size_t)snprintf(out, len, "%s%s", lib, rel[i]) < len && access(out, X_OK) == 0)
            return 0;
    return -1;
}

/* Singleton start (MPI 4.1 section 11.8.2, "Singleton MPI_INIT"): a program started
 * without bdmpiexec becomes a one-rank job.  This process forks: the child
 * goes on as the program, rank 0; this process execs bdmprun, which adopts
 * the child as its slot 0 (src/master/master.c, singleton_setup).  So the
 * process the shell waits for is the master, which ends with the rank's
 * status after it has cleaned up, and the rank, the master's child, dies
 * with it (PR_SET_PDEATHSIG) like any other rank.  The shared memory and the
 * eventfd are made here, inherited by the master; a pipe says when the
 * master has laid the shared memory out. */
static void singleton_start(int *shm_fd, int *slot, int *ev_fd)
{
    char master[PATH_MAX], self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0 || find_bdmprun(master, sizeof master) < 0) {
        fprintf(stderr,
                "bdmpi: this program was started without bdmpiexec and bdmprun, which would "
                "run it as a one-rank job, is not installed beside libbdmpi; start it with "
                "`bdmpiexec -ns 1 PROGRAM`\n");
        exit(1);
    }
    self[n] = 0;
    int shm = memfd_create("bdmpi-shm", 0);
    int ev = eventfd(0, EFD_NONBLOCK);
    int p[2];
    if (shm < 0 || ev < 0 || pipe(p) < 0) {
        fprintf(stderr, "bdmpi: singleton start: %s\n", strerror(errno));
        exit(1);
    }
    fflush(NULL); /* what the program printed so far is printed once */
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "bdmpi: singleton start: fork failed: %s\n", strerror(errno));
        exit(1);
    }
    if (pid > 0) {
        close(p[0]);
        fcntl(p[1], F_SETFD, 0);
        char v[96];
        snprintf(v, sizeof v, "%d,%d,%d,%d", (int)pid, shm, ev, p[1]);
        setenv("BDMPI_SINGLETON", v, 1);
        execl(master, "bdmprun", self, (char *)NULL);
        fprintf(stderr, "bdmpi: singleton start: cannot run %s: %s\n", master, strerror(errno));
        kill(pid, SIGKILL);
        _exit(1);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != me)
        _exit(1);
    close(p[1]);
    char ok = 0;
    while ((n = read(p[0], &ok, 1)) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (n != 1) {
        fprintf(stderr, "bdmpi: singleton start: the master (%s) did not start\n", master);
        _exit(1);
    }
    *shm_fd = shm;
    *ev_fd = ev;
    *slot = 0;
}

static int do_init(int required, int *provided)
{
    if (bdl_g.initialized) { /* a session started the instance */
        /* Asking for more than it has: the instance can still give it, as
         * nothing runs beside this call (the level it had promised that). */
        if (required == MPI_THREAD_MULTIPLE && bdl_g.thread_level < MPI_THREAD_MULTIPLE) {
            bdl_mt_enable();
            bdl_g.thread_level = MPI_THREAD_MULTIPLE;
        }
        if (provided)
            *provided = bdl_g.thread_level;
        return MPI_SUCCESS;
    }
    g_main_thread = pthread_self();
    int shm_fd, slot, ev_fd;
    if (env_int("BDMPI_SHM_FD", &shm_fd) < 0 || env_int("BDMPI_SLOT", &slot) < 0 ||
        env_int("BDMPI_EVENT_FD", &ev_fd) < 0)
        singleton_start(&shm_fd, &slot, &ev_fd);
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
    bd_iowatch_attach(&bdl_g.slot->io); /* the master watches our storage calls there */
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
    /* A spawned rank: its MPI_COMM_WORLD and its parents (bd_spawn_info_t). */
    bd_spawn_info_t *sp = NULL;
    if (bdl_resp()->arg[2]) {
        bd_spawn_info_t hd;
        memcpy(&hd, bdl_g.win, sizeof hd);
        size_t len = sizeof hd + (size_t)(hd.size + hd.psize) * sizeof(int32_t);
        if (!(sp = malloc(len)))
            bdl_fatal(MPI_ERR_NO_MEM, "out of memory in MPI_Init");
        memcpy(sp, bdl_g.win, len);
        bdl_g.world_size = sp->size;
        bdl_g.appnum = sp->appnum;
    }
    char prefix[48];
    if (sp)
        snprintf(prefix, sizeof prefix, "bdmpi: spawned rank %d", bdl_g.world_rank);
    else
        snprintf(prefix, sizeof prefix, "bdmpi: rank %d", bdl_g.world_rank);
    bd_log_set_prefix(prefix);
    bdl_comm_setup_predefined(sp);
    /* MPI 4.0's initial error handler: a spawn's info key for its children,
     * else the job's -initial-errhandler; on MPI_COMM_WORLD and _SELF. */
    bdl_g.initial_errh =
        sp && sp->initial_errh >= 0 ? sp->initial_errh : bdl_g.hdr->job.initial_errh;
    if (bdl_g.initial_errh > 0) {
        MPI_Errhandler eh = bdl_errh_initial_handle(bdl_g.initial_errh);
        bdl_comm_t *w = bdl_comm_get(MPI_COMM_WORLD), *me = bdl_comm_get(MPI_COMM_SELF);
        if (w)
            w->errh = eh;
        if (me)
            me->errh = eh;
    }
    bdl_p2p_init();
    bdl_lib_mem_init();
    bdl_g.thread_level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    if (bdl_g.thread_level < MPI_THREAD_SINGLE)
        bdl_g.thread_level = MPI_THREAD_SINGLE;
    if (bdl_g.thread_level == MPI_THREAD_MULTIPLE)
        bdl_mt_enable(); /* core/mt.c */
    if (provided)
        *provided = bdl_g.thread_level;
    bdl_g.initialized = 1;
    if (sp) {
        /* MPI_Init of spawned ranks is collective with the spawn: the
         * intercommunicator to the parents is made now (dyn.c). */
        int rc = bdl_dyn_child_init(sp);
        free(sp);
        if (rc)
            return rc;
    }
    g_init_ns = bdl_now_ns();
    /* Waiting for the first run slot happened before MPI_Init returned:
     * not part of the run that RUN_NS measures. */
    atomic_store_explicit(&bdl_g.slot->stats[BD_STAT_WAIT_NS], 0, memory_order_relaxed);
    return MPI_SUCCESS;
}

/* The World Model begins (MPI_Init, MPI_Init_thread). */
static int world_init(int required, int *provided)
{
    if (bdl_g.world_state || bdl_g.finalized) {
        bd_log_error("MPI_Init called twice");
        exit(1);
    }
    int rc = do_init(required, provided);
    bdl_g.world_state = 1;
    return rc;
}

int bdl_instance_begin(int required, int *provided) { return do_init(required, provided); }

int MPI_Init(int *argc, char ***argv)
{
    BDL_MT_GUARD;
    (void)argc;
    (void)argv;
    return world_init(MPI_THREAD_SINGLE, NULL);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    BDL_MT_GUARD;
    (void)argc;
    (void)argv;
    return world_init(required, provided);
}

/* The World Model and the sessions are done: end the library instance. */
void bdl_instance_end(void)
{
    if (!bdl_g.initialized || bdl_g.finalized)
        return;
    if (bdl_g.ndetached)
        bdl_req_reap_detached();
    bdl_p2p_settle();
    bdl_lib_mem_stats();
    atomic_store_explicit(&bdl_g.slot->stats[BD_STAT_RUN_NS], bdl_now_ns() - g_init_ns,
                          memory_order_relaxed);
    bdl_req_begin(BD_REQ_FINALIZE);
    bdl_rpc();
    bdl_g.finalized = 1;
}

int MPI_Finalize(void)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Finalize");
    if (bdl_g.world_state != 1)
        bdl_fatal(MPI_ERR_OTHER, "MPI_Finalize called before MPI_Init (only sessions are open)");
    /* MPI 3.1 8.7.1: MPI_Finalize first deletes MPI_COMM_SELF's attributes,
     * so programs can hook their own cleanup there. */
    bdl_attr_delete_all(MPI_COMM_SELF, "MPI_Finalize");
    bdl_g.world_state = 2;
    if (!bdl_g.nsessions)
        bdl_instance_end();
    return MPI_SUCCESS;
}

/* MPI 4.0 11.2.1: these say what the World Model did. */
int MPI_Initialized(int *flag)
{
    BDL_MT_GUARD;
    *flag = bdl_g.world_state >= 1;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
    BDL_MT_GUARD;
    *flag = bdl_g.world_state == 2;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
    BDL_MT_GUARD;
    *provided = bdl_g.thread_level;
    return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
    BDL_MT_GUARD;
    if (!flag)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
    *flag = pthread_equal(pthread_self(), g_main_thread) != 0;
    return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    BDL_MT_GUARD;
    (void)comm;
    char msg[64];
    snprintf(msg, sizeof msg, "(called on communicator %d)", comm);
    bdl_abort(errorcode, bdl_g.initialized ? "" : msg);
    return MPI_SUCCESS;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
    BDL_MT_GUARD;
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) < 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
    BDL_MT_GUARD;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
    BDL_MT_GUARD;
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

int BDMPI_Mem_info(int *managed, unsigned long long *resident, int *track)
{
    BDL_CHECK_INIT("BDMPI_Mem_info");
    int on = bd_mem_active();
    if (managed)
        *managed = on;
    if (resident)
        *resident = on ? (unsigned long long)bd_mem_resident_bytes() : 0;
    if (track) {
        *track = BDMPI_MEM_TRACK_NONE;
        if (on) {
            bd_mem_stats_t st;
            bd_mem_stats(&st);
            *track = st.track == BD_MEM_TRACK_MPROTECT ? BDMPI_MEM_TRACK_MPROTECT
                     : st.kernel_faults                ? BDMPI_MEM_TRACK_UFFD
                                                       : BDMPI_MEM_TRACK_UFFD_USER;
        }
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- memory */

/* Large allocations are the memory manager's anyway; MPI_Alloc_mem is malloc. */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Alloc_mem";
    BDL_CHECK_INIT(call);
    if (size < 0)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid size %lld", (long long)size);
    int rc = bdl_info_check(call, info);
    if (rc)
        return rc;
    if (!baseptr)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "baseptr is NULL");
    void *p = malloc(size ? (size_t)size : 1);
    if (!p)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "cannot allocate %lld bytes",
                         (long long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    BDL_MT_GUARD;
    BDL_CHECK_INIT("MPI_Free_mem");
    free(base);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- profiling, old names */

/* No profiling library is attached: every level is accepted and ignored. */
int MPI_Pcontrol(const int level, ...)
{
    BDL_MT_GUARD;
    (void)level;
    return MPI_SUCCESS;
}

int MPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    return MPI_Comm_create_errhandler(function, errhandler);
}
