/* The Sessions Model (MPI 4.0 11.3), MPI_Comm_create_from_group and
 * MPI_Info_create_env.
 *
 * A session is a handle on the one library instance a rank has: the first
 * MPI_Session_init brings it up as MPI_Init would (the master already
 * started every rank, so there is nothing else to connect), and it ends
 * when the World Model and every session are done (mpi/env.c).  A program
 * that only uses sessions may open and close them several times, so the
 * instance then ends when the program exits (atexit), not with its last
 * session.
 *
 * The process sets are the two MPI 4.0 names: "mpi://WORLD" (every rank
 * of the job) and "mpi://SELF".  MPI_Comm_create_from_group runs
 * MPI_Comm_create_group on the instance's world communicator with a tag
 * derived from the string tag, so the group's members need no parent
 * communicator of their own. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core.h"
#include "mpi_int.h"
#include "objects.h"

typedef struct session {
    int used;
    MPI_Errhandler errh;
    int thread_level;
} session_t;

static session_t *g_sess; /* handles index it from 1 */
static int g_nsess;
static int g_atexit;

static const char *const g_psets[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS 2

static session_t *sess_get(MPI_Session s)
{
    return s > 0 && s < g_nsess && g_sess[s].used ? &g_sess[s] : NULL;
}

/* Report an error through session s's handler (the instance's default
 * when s is not a session).  Returns code when the handler returns. */
static int sess_error(MPI_Session s, int code, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int sess_error(MPI_Session s, int code, const char *call, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    session_t *x = sess_get(s);
    if (!x || !bdl_g.initialized)
        return bdl_error(MPI_COMM_WORLD, code, call, "%s", msg);
    if (x->errh == MPI_ERRORS_RETURN)
        return code;
    MPI_Comm_errhandler_function *fn = bdl_errh_user(x->errh);
    if (fn) {
        /* A session handler has the signature of a communicator one: the
         * handle (an int) by address, then the code. */
        fn(&s, &code);
        return code;
    }
    bdl_fatal(code, "%s: %s (session %d)", call, msg, s);
}

static const char *thread_name(int level)
{
    static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                        "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    return level >= 0 && level <= MPI_THREAD_MULTIPLE ? names[level] : names[0];
}

/* The "thread_level" the info asks for (MPI_THREAD_SINGLE if none). */
static int wanted_thread_level(MPI_Info info)
{
    char v[64];
    int flag = 0;
    if (info == MPI_INFO_NULL || MPI_Info_get(info, "thread_level", sizeof v - 1, v, &flag) ||
        !flag)
        return MPI_THREAD_SINGLE;
    for (int l = MPI_THREAD_MULTIPLE; l >= 0; l--)
        if (!strcasecmp(v, thread_name(l)))
            return l;
    return MPI_THREAD_SINGLE;
}

static void end_at_exit(void)
{
    if (bdl_g.world_state != 1 && !bdl_g.nsessions)
        bdl_instance_end();
}

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_init";
    if (bdl_g.finalized)
        bdl_fatal(MPI_ERR_OTHER, "%s called after the MPI instance ended", call);
    if (!session)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "session is NULL");
    if (info != MPI_INFO_NULL && !bdl_info_valid(info))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_INFO, call, "invalid info %d", info);
    if (errhandler != MPI_ERRHANDLER_NULL && !bdl_errh_valid(errhandler))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid error handler %d", errhandler);
    int level = wanted_thread_level(info);
    int provided = level;
    bdl_instance_begin(level, &provided);
    if (!g_atexit) {
        atexit(end_at_exit);
        g_atexit = 1;
    }
    int h = 1;
    while (h < g_nsess && g_sess[h].used)
        h++;
    if (h >= g_nsess) {
        int n = g_nsess ? g_nsess * 2 : 8;
        session_t *t = realloc(g_sess, (size_t)n * sizeof *t);
        if (!t)
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory");
        memset(t + g_nsess, 0, (size_t)(n - g_nsess) * sizeof *t);
        g_sess = t;
        h = g_nsess ? g_nsess : 1;
        g_nsess = n;
    }
    g_sess[h] = (session_t){
        1, errhandler == MPI_ERRHANDLER_NULL ? MPI_ERRORS_ARE_FATAL : errhandler, provided};
    bdl_g.nsessions++;
    *session = h;
    return MPI_SUCCESS;
}

int MPI_Session_finalize(MPI_Session *session)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_finalize";
    BDL_CHECK_INIT(call);
    if (!session || !sess_get(*session))
        return sess_error(MPI_SESSION_NULL, MPI_ERR_SESSION, call, "invalid session %d",
                          session ? *session : MPI_SESSION_NULL);
    g_sess[*session].used = 0;
    *session = MPI_SESSION_NULL;
    /* The World Model finalized already: the instance ends with its last
     * session.  Never initialized: the program may still open a session or
     * call MPI_Init, so it ends when the program exits. */
    if (!--bdl_g.nsessions && bdl_g.world_state == 2)
        bdl_instance_end();
    return MPI_SUCCESS;
}

#define CHECK_SESSION(call, s)                                                                     \
    do {                                                                                           \
        BDL_CHECK_INIT(call);                                                                      \
        if (!sess_get(s))                                                                          \
            return sess_error(s, MPI_ERR_SESSION, call, "invalid session %d", s);                  \
    } while (0)

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_get_num_psets";
    CHECK_SESSION(call, session);
    (void)info;
    if (!npset_names)
        return sess_error(session, MPI_ERR_ARG, call, "npset_names is NULL");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                             char *pset_name)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_get_nth_pset";
    CHECK_SESSION(call, session);
    (void)info;
    if (n < 0 || n >= NPSETS)
        return sess_error(session, MPI_ERR_ARG, call, "invalid process set number %d (0..%d)", n,
                          NPSETS - 1);
    if (!pset_len)
        return sess_error(session, MPI_ERR_ARG, call, "pset_len is NULL");
    int need = (int)strlen(g_psets[n]) + 1;
    /* 0: the program asks for the length (with the terminator). */
    if (*pset_len <= 0) {
        *pset_len = need;
        return MPI_SUCCESS;
    }
    if (!pset_name)
        return sess_error(session, MPI_ERR_ARG, call, "pset_name is NULL");
    int k = *pset_len < need ? *pset_len - 1 : need - 1;
    memcpy(pset_name, g_psets[n], (size_t)k);
    pset_name[k] = 0;
    *pset_len = need;
    return MPI_SUCCESS;
}

/* The process set named, or -1. */
static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (!strcasecmp(name, g_psets[i]))
            return i;
    return -1;
}

int MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_get_pset_info";
    CHECK_SESSION(call, session);
    int k = pset_index(pset_name);
    if (k < 0)
        return sess_error(session, MPI_ERR_ARG, call, "unknown process set \"%s\"",
                          pset_name ? pset_name : "(null)");
    if (!info)
        return sess_error(session, MPI_ERR_ARG, call, "info is NULL");
    char v[32];
    snprintf(v, sizeof v, "%d", k == 0 ? bdl_g.world_size : 1);
    int rc = MPI_Info_create(info);
    if (!rc)
        rc = MPI_Info_set(*info, "mpi_size", v);
    return rc;
}

int MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_get_info";
    CHECK_SESSION(call, session);
    if (!info_used)
        return sess_error(session, MPI_ERR_ARG, call, "info_used is NULL");
    /* The standard's key, and the key Session_init reads (which other
     * implementations answer with). */
    const char *level = thread_name(g_sess[session].thread_level);
    int rc = MPI_Info_create(info_used);
    if (!rc)
        rc = MPI_Info_set(*info_used, "mpi_thread_support_level", level);
    if (!rc)
        rc = MPI_Info_set(*info_used, "thread_level", level);
    return rc;
}

int MPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Group_from_session_pset";
    CHECK_SESSION(call, session);
    int k = pset_index(pset_name);
    if (k < 0)
        return sess_error(session, MPI_ERR_ARG, call, "unknown process set \"%s\"",
                          pset_name ? pset_name : "(null)");
    if (!newgroup)
        return sess_error(session, MPI_ERR_ARG, call, "newgroup is NULL");
    return MPI_Comm_group(k == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
}

int MPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                  MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    /* The same kind of handler as a communicator's (an int handle by
     * address, the code by address). */
    return MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)session_errhandler_fn,
                                      errhandler);
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_set_errhandler";
    CHECK_SESSION(call, session);
    if (!bdl_errh_valid(errhandler))
        return sess_error(session, MPI_ERR_ARG, call, "invalid error handler %d", errhandler);
    g_sess[session].errh = errhandler;
    return MPI_SUCCESS;
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_get_errhandler";
    CHECK_SESSION(call, session);
    if (!errhandler)
        return sess_error(session, MPI_ERR_ARG, call, "errhandler is NULL");
    *errhandler = g_sess[session].errh;
    return MPI_SUCCESS;
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Session_call_errhandler";
    CHECK_SESSION(call, session);
    sess_error(session, errorcode, call, "error %d raised by the program", errorcode);
    return MPI_SUCCESS;
}

MPI_Fint MPI_Session_c2f(MPI_Session session) { return (MPI_Fint)session; }

MPI_Session MPI_Session_f2c(MPI_Fint session) { return (MPI_Session)session; }

/* ---------------------------------------------------------------- communicators from groups */

/* The tag every member derives from the string tag (FNV-1a, in 0..INT_MAX). */
static int string_tag(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (int)(h & INT_MAX);
}

int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Comm_create_from_group";
    BDL_CHECK_INIT(call);
    (void)info;
    if (!stringtag)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "stringtag is NULL");
    if (!newcomm)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newcomm is NULL");
    if (errhandler != MPI_ERRHANDLER_NULL && !bdl_errh_valid(errhandler))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid error handler %d", errhandler);
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, string_tag(stringtag), newcomm);
    if (rc)
        return rc;
    if (*newcomm != MPI_COMM_NULL && errhandler != MPI_ERRHANDLER_NULL)
        MPI_Comm_set_errhandler(*newcomm, errhandler);
    return MPI_SUCCESS;
}

/* The intercommunicator of two disjoint groups of the instance's world
 * (MPI 4.0 7.6.2): each group makes its local communicator from its group
 * (the string tag's communicator), then the leaders meet as in
 * MPI_Intercomm_create with the world as peer communicator (its internal
 * context: no user message can match) and the string tag's hash as tag. */
int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                     MPI_Group remote_group, int remote_leader,
                                     const char *stringtag, MPI_Info info,
                                     MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Intercomm_create_from_groups";
    BDL_CHECK_INIT(call);
    if (!stringtag)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "stringtag is NULL");
    if (!newintercomm)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "newintercomm is NULL");
    if (errhandler != MPI_ERRHANDLER_NULL && !bdl_errh_valid(errhandler))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "invalid error handler %d", errhandler);
    int lsize = 0, rsize = 0, me = MPI_UNDEFINED, rc;
    if (MPI_Group_size(local_group, &lsize) || MPI_Group_size(remote_group, &rsize))
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call, "invalid %s %d",
                         lsize ? "remote_group" : "local_group",
                         lsize ? remote_group : local_group);
    MPI_Group_rank(local_group, &me);
    if (me == MPI_UNDEFINED)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call,
                         "the calling process is not in local_group");
    if (local_leader < 0 || local_leader >= lsize)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call,
                         "invalid local_leader %d (local_group size %d)", local_leader, lsize);
    if (remote_leader < 0 || remote_leader >= rsize)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_RANK, call,
                         "invalid remote_leader %d (remote_group size %d)", remote_leader, rsize);
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int rl_world = MPI_UNDEFINED, mine = MPI_UNDEFINED;
    MPI_Group_translate_ranks(remote_group, 1, &remote_leader, wg, &rl_world);
    MPI_Group_translate_ranks(local_group, 1, &me, wg, &mine);
    MPI_Group_free(&wg);
    if (rl_world == MPI_UNDEFINED || rl_world == mine)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_GROUP, call,
                         "remote_group is not disjoint from local_group (its leader %d is here)",
                         remote_leader);
    MPI_Comm local = MPI_COMM_NULL;
    char tag[256];
    snprintf(tag, sizeof tag, "%.200s\x01local", stringtag);
    if ((rc = MPI_Comm_create_from_group(local_group, tag, info, errhandler, &local)))
        return rc;
    rc = MPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, rl_world, string_tag(stringtag),
                              newintercomm);
    MPI_Comm_free(&local);
    if (rc)
        return rc;
    if (errhandler != MPI_ERRHANDLER_NULL)
        MPI_Comm_set_errhandler(*newintercomm, errhandler);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- MPI_Info_create_env */

int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Info_create_env";
    BDL_CHECK_NOT_ENDED(call);
    if (!info)
        return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "info is NULL");
    int rc = MPI_Info_create(info);
    if (rc)
        return rc;
    if (argv && argc > 0 && argv[0]) {
        MPI_Info_set(*info, "command", argv[0]);
        size_t n = 1;
        for (int i = 1; i < argc; i++)
            n += strlen(argv[i] ? argv[i] : "") + 1;
        char *all = malloc(n);
        if (all) {
            all[0] = 0;
            for (int i = 1; i < argc; i++) {
                if (i > 1)
                    strcat(all, " ");
                strcat(all, argv[i] ? argv[i] : "");
            }
            if (argc > 1)
                MPI_Info_set(*info, "argv", all);
            free(all);
        }
    }
    /* Before initialization the job's size is the launcher's -ns (ranks
     * per node) times -nn (nodes). */
    const char *ns = getenv("BDMPI_NS"), *nn = getenv("BDMPI_NN");
    char v[64];
    long size = bdl_g.initialized ? bdl_g.world_size
                                  : (ns ? atol(ns) : 1) * (nn && atol(nn) > 0 ? atol(nn) : 1);
    snprintf(v, sizeof v, "%ld", size > 0 ? size : 1);
    MPI_Info_set(*info, "maxprocs", v);
    if (!gethostname(v, sizeof v - 1)) {
        v[sizeof v - 1] = 0;
        MPI_Info_set(*info, "host", v);
    }
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd))
        MPI_Info_set(*info, "wdir", cwd);
    MPI_Info_set(*info, "thread_level",
                 thread_name(bdl_g.initialized ? bdl_g.thread_level : MPI_THREAD_SINGLE));
    const char *ie = getenv("BDMPI_INITIAL_ERRHANDLER");
    MPI_Info_set(*info, "mpi_initial_errhandler",
                 bdl_errh_initial_name(bdl_g.initialized ? bdl_g.initial_errh
                                       : ie              ? bdl_errh_initial_index(ie)
                                                         : 0));
    return MPI_SUCCESS;
}
