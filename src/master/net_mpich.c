/* The multi-node transport on MPICH: each message is one MPI message on a
 * single tag (so MPI's ordering between a pair of masters is ours), sent
 * with MPI_Isend from a buffer the transport owns and received with
 * MPI_Improbe/MPI_Imrecv, never a blocking call.
 *
 * Progress is event-driven through doorbells.  MPICH offers no file
 * descriptor to wait on, and its blocking calls spin (a thread blocked in
 * MPI_Probe burns a whole core; docs/performance.md "Inter-node
 * progress").  So after a master has handed messages to MPICH it sends each
 * destination master a small UDP datagram carrying how many messages it
 * has sent it so far; the destination's event loop wakes on the socket and
 * then knows exactly how many messages MPICH still holds for it: it keeps
 * polling (bdr_net_busy) until it has received them, and may sleep once it
 * has.  A doorbell is only a hint: a lost one costs the safety-net poll
 * period, never a message.  Datagrams carry a job cookie so strays are
 * dropped.
 *
 * Only this file includes MPICH's mpi.h (by full path: BDMPI's own mpi.h is
 * on the include path of everything else). */
#include BD_MPICH_HEADER

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bd_fault.h"
#include "bd_log.h"
#include "bd_options.h"
#include "net.h"

#define BDR_NET_TAG 4242
#define HOSTLEN 256

typedef struct out {
    struct out *next;
    MPI_Request req;
    int dst;
    size_t bytes, cap;
    char *buf;
    void (*done)(void *); /* lent (bdr_net_send_lent): the lender's, not the pool's */
    void *arg;
} out_t;

/* Buffers of BDR_NET_POOL_SMALL and _LARGE (a chunk of a large transfer
 * and its header) are kept for reuse: the master's large
 * allocations are mappings of their own (master.c), so a fresh buffer per
 * 1 MiB chunk cost its page faults and zeroing on every chunk, on both
 * sides (process_vm_readv into a fresh 1 MiB chunk took 0.8-1.5 ms, into a
 * reused one about 0.2; docs/performance.md "Inter-node bandwidth").  The
 * kept buffers count in the node's budget (bdr_net_held).  Up to 4 MiB of
 * them (POOL_MIN), or more where the node has room to spare
 * (bdr_net_pool_limit, set by the remote-memory tier's holder from its
 * room; at most 64 MiB, POOL_CAP): a holder's buffers come and go in bursts
 * (a PUT is kept as it came; the copies it replaces go when the owner's
 * next unload of them arrives), and with 16 of 256 KiB kept it mapped ~350
 * fresh ones a run, 16% of its CPU (docs/performance.md, issue 16 sessions
 * 21 and 22). */
#define POOL_MIN ((size_t)4 << 20)
#define POOL_CAP ((size_t)64 << 20)
static const size_t g_pool_size[2] = {BDR_NET_POOL_SMALL, BDR_NET_POOL_LARGE};
static char *g_pool[2][POOL_CAP / BDR_NET_POOL_SMALL];
static int g_npool[2];
static size_t g_pool_bytes, g_pool_max = POOL_MIN;

/* The class of buffer for bytes (from half of its size up), or -1. */
static int pool_class(size_t bytes)
{
    for (int c = 0; c < 2; c++)
        if (bytes >= g_pool_size[c] / 2 && bytes <= g_pool_size[c])
            return c;
    return -1;
}

static char *pool_get(size_t bytes, size_t *cap)
{
    int c = pool_class(bytes);
    if (c < 0) {
        *cap = bytes;
        return malloc(bytes ? bytes : 1);
    }
    *cap = g_pool_size[c];
    if (!g_npool[c])
        return malloc(g_pool_size[c]);
    g_pool_bytes -= g_pool_size[c];
    return g_pool[c][--g_npool[c]];
}

static void pool_put(char *buf, size_t cap)
{
    int c = cap == g_pool_size[0] ? 0 : cap == g_pool_size[1] ? 1 : -1;
    if (buf && c >= 0 && g_pool_bytes + cap <= g_pool_max) {
        g_pool[c][g_npool[c]++] = buf;
        g_pool_bytes += cap;
    } else {
        free(buf);
    }
}

static void pool_shrink(size_t to)
{
    for (int c = 1; c >= 0; c--)
        while (g_pool_bytes > to && g_npool[c]) {
            free(g_pool[c][--g_npool[c]]);
            g_pool_bytes -= g_pool_size[c];
        }
}

void bdr_net_pool_limit(size_t bytes)
{
    g_pool_max = bytes < POOL_MIN ? POOL_MIN : bytes > POOL_CAP ? POOL_CAP : bytes;
    pool_shrink(g_pool_max);
}

size_t bdr_net_held(void) { return g_pool_bytes; }

void bdr_net_trim(void) { pool_shrink(0); }

typedef struct bell {
    uint64_t cookie;
    int32_t src;
    uint32_t pad;
    uint64_t count; /* messages src has sent to the receiver so far */
} bell_t;

static out_t *g_out;
static size_t *g_pending;
static size_t g_lent; /* bytes of lent buffers in flight (counted by their lenders) */
static int g_node, g_nnodes;
static int g_broken;      /* a send failed (bdr_net_broken) */
static int g_out_blocked; /* node.c waits for sends to complete (tokens) */
static int g_all_local;   /* every master is on this host */

/* Receives in progress, in the order MPI matched them (MPI's order between
 * a pair of masters), handed out in that order.  Several at once, so MPICH
 * moves the chunks of a large transfer while we wait for the first one: one
 * at a time, each chunk waited for a turn of the master's loop (and its
 * nap) before the next was even matched. */
#define RX_MAX 8
static MPI_Request g_rx_req[RX_MAX];
static bdr_net_msg_t *g_rx_msg[RX_MAX];
static int g_rx_head, g_rx_n;

static int g_bell_fd = -1;
static uint64_t g_cookie;
static struct sockaddr_in *g_bell_addr; /* per node; sin_port 0: no doorbell */
static uint64_t *g_sent_msgs, *g_rung;  /* per destination */
static uint64_t *g_announced, *g_recvd; /* per source */

static void check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    bd_log_error("node %d: %s failed between the masters: %s", g_node, what, s);
    bdr_net_abort(1);
}

/* Where node n's doorbell rings: loopback for a master on our host, else
 * the address its host name resolves to here.  0 if it cannot be found
 * (that node is then only polled). */
static int resolve(const char *host, const char *myhost, struct sockaddr_in *a)
{
    if (!strcmp(host, myhost)) {
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return 1;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return 0;
    a->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 1;
}

static void bells_init(void)
{
    char *hosts = calloc((size_t)g_nnodes, HOSTLEN);
    uint32_t *ports = calloc((size_t)g_nnodes, sizeof *ports);
    g_bell_addr = calloc((size_t)g_nnodes, sizeof *g_bell_addr);
    char me[HOSTLEN] = {0};
    if (gethostname(me, sizeof me - 1) < 0)
        strcpy(me, "localhost");
    check(MPI_Allgather(me, HOSTLEN, MPI_CHAR, hosts, HOSTLEN, MPI_CHAR, MPI_COMM_WORLD),
          "MPI_Allgather of host names");
    int all_local = 1;
    for (int n = 0; n < g_nnodes; n++)
        all_local &= !strcmp(hosts + (size_t)n * HOSTLEN, me);
    g_all_local = all_local;

    /* All masters on this host (the usual test setup): listen on loopback
     * only, so nothing outside the machine can ring. */
    uint32_t port = 0;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(all_local ? INADDR_LOOPBACK : INADDR_ANY);
    socklen_t alen = sizeof a;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0) {
        port = ntohs(a.sin_port);
        g_bell_fd = fd;
    } else {
        bd_log_info("no doorbell socket (%s): other masters will poll this one", strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    if (g_node == 0 && getrandom(&g_cookie, sizeof g_cookie, 0) != sizeof g_cookie)
        g_cookie = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
    check(MPI_Bcast(&g_cookie, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast of the cookie");
    check(MPI_Allgather(&port, 1, MPI_UINT32_T, ports, 1, MPI_UINT32_T, MPI_COMM_WORLD),
          "MPI_Allgather of doorbell ports");
    for (int n = 0; n < g_nnodes; n++) {
        if (n == g_node || !ports || !ports[n])
            continue;
        struct sockaddr_in *p = &g_bell_addr[n];
        p->sin_family = AF_INET;
        if (resolve(hosts + (size_t)n * HOSTLEN, me, p))
            p->sin_port = htons((uint16_t)ports[n]);
        else
            bd_log_info("cannot resolve host %s of node %d: it is polled, not rung",
                        hosts + (size_t)n * HOSTLEN, n);
    }
    free(hosts);
    free(ports);
}

/* What bdmpiexec set for our MPI_Init alone (BD_MASTER_ONLY_ENV) is not the
 * ranks': gone before we start them. */
static void master_only_env_drop(void)
{
    const char *v = getenv(BD_MASTER_ONLY_ENV);
    char names[256];
    snprintf(names, sizeof names, "%s", v ? v : "");
    for (char *save = NULL, *t = strtok_r(names, ",", &save); t; t = strtok_r(NULL, ",", &save))
        unsetenv(t);
    unsetenv(BD_MASTER_ONLY_ENV);
}

int bdr_net_init(int *argc, char ***argv, int *node, int *nnodes)
{
    /* MPICH starts threads of its own (UCX's progress thread).  They must
     * block the signals the master takes through its signalfd, else the
     * kernel delivers SIGCHLD to one of them (lost: our ranks are reaped
     * only by the poll's timeout) and SIGTERM kills the master with no
     * clean-up; SIGTSTP, taken by one of them, would be dropped (a master
     * leads its own session, an orphaned group) and its ranks not stopped. */
    sigset_t mask, old;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTSTP);
    sigaddset(&mask, SIGCONT);
    pthread_sigmask(SIG_BLOCK, &mask, &old);
    int provided;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    master_only_env_drop();
    if (rc != MPI_SUCCESS) {
        bd_log_error("MPI_Init_thread of the masters failed");
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, node);
    MPI_Comm_size(MPI_COMM_WORLD, nnodes);
    g_node = *node;
    size_t n = (size_t)*nnodes;
    g_pending = calloc(n, sizeof *g_pending);
    g_sent_msgs = calloc(n, sizeof *g_sent_msgs);
    g_rung = calloc(n, sizeof *g_rung);
    g_announced = calloc(n, sizeof *g_announced);
    g_recvd = calloc(n, sizeof *g_recvd);
    if (!g_pending || !g_sent_msgs || !g_rung || !g_announced || !g_recvd)
        return -1;
    /* Only now may anything be sent: a failure above (an allocation that
     * ends the job tells the other nodes first) finds no node to send to,
     * and the job ends through MPI_Abort.  It used to write into the
     * tables it had failed to make (soak, issue 18). */
    g_nnodes = *nnodes;
    bells_init();
    return g_bell_addr ? 0 : -1;
}

int bdr_net_fd(void) { return g_bell_fd; }

/* buf (header + payload) is done with: back to the pool, or to its lender. */
static void release(char *buf, size_t cap, void (*done)(void *), void *arg)
{
    if (done)
        done(arg);
    else
        pool_put(buf, cap);
}

/* Hand buf (header + len payload bytes) to MPICH until the send completes:
 * ours (from the pool or malloc), or lent (done: the lender's, told when
 * MPICH no longer reads it, also when the send fails). */
static int send_owned(int dst, char *buf, size_t bytes, size_t cap, void (*done)(void *), void *arg)
{
    if (dst < 0 || dst >= g_nnodes) { /* not set up (yet) */
        release(buf, cap, done, arg);
        return -1;
    }
    out_t *o = malloc(sizeof *o);
    if (!o || bytes > (size_t)0x7fffffff) {
        free(o);
        release(buf, cap, done, arg);
        return -1;
    }
    int rc = BD_FAULT_HIT(BD_FAULT_NET_SEND)
                 ? MPI_ERR_OTHER
                 : MPI_Isend(buf, (int)bytes, MPI_BYTE, dst, BDR_NET_TAG, MPI_COMM_WORLD, &o->req);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int n = 0;
        MPI_Error_string(rc, s, &n);
        if (!g_broken) /* once: it is tried again until the job has ended */
            bd_log_error("node %d: MPI_Isend of %zu bytes to the master of node %d failed: %s",
                         g_node, bytes, dst, s);
        g_broken = 1;
        free(o);
        release(buf, cap, done, arg);
        return -1;
    }
    o->dst = dst;
    o->bytes = bytes;
    o->cap = cap;
    o->buf = buf;
    o->done = done;
    o->arg = arg;
    o->next = g_out;
    g_out = o;
    g_pending[dst] += bytes;
    if (done)
        g_lent += bytes;
    g_sent_msgs[dst]++;
    return 0;
}

int bdr_net_send(int dst, const bdr_net_hdr_t *h, const void *payload, size_t len)
{
    size_t cap;
    char *buf = pool_get(sizeof *h + len, &cap);
    if (!buf)
        return -1;
    memcpy(buf, h, sizeof *h);
    if (len)
        memcpy(buf + sizeof *h, payload, len);
    return send_owned(dst, buf, sizeof *h + len, cap, NULL, NULL);
}

void *bdr_net_buf(size_t len)
{
    size_t cap;
    char *buf = pool_get(sizeof(bdr_net_hdr_t) + len, &cap);
    return buf ? buf + sizeof(bdr_net_hdr_t) : NULL;
}

/* A buffer of bdr_net_buf came from the pool exactly when its size is in
 * a class of the pool (pool_get), so its capacity follows from len. */
static size_t cap_of(size_t bytes)
{
    int c = pool_class(bytes);
    return c < 0 ? bytes : g_pool_size[c];
}

int bdr_net_send_buf(int dst, const bdr_net_hdr_t *h, void *payload, size_t len)
{
    char *buf = (char *)payload - sizeof *h;
    memcpy(buf, h, sizeof *h);
    return send_owned(dst, buf, sizeof *h + len, cap_of(sizeof *h + len), NULL, NULL);
}

int bdr_net_send_lent(int dst, const bdr_net_hdr_t *h, void *payload, size_t len,
                      void (*done)(void *), void *arg)
{
    char *buf = (char *)payload - sizeof *h;
    memcpy(buf, h, sizeof *h);
    return send_owned(dst, buf, sizeof *h + len, 0, done, arg);
}

size_t bdr_net_lent_bytes(void) { return g_lent; }

void bdr_net_free_buf(void *payload, size_t len)
{
    if (payload)
        pool_put((char *)payload - sizeof(bdr_net_hdr_t), cap_of(sizeof(bdr_net_hdr_t) + len));
}

size_t bdr_net_pending(int dst) { return dst >= 0 && dst < g_nnodes ? g_pending[dst] : 0; }

static uint64_t g_bells_sent, g_bells_heard, g_bell_reads; /* --stats */

void bdr_net_flush(void)
{
    for (int n = 0; n < g_nnodes; n++) {
        if (g_sent_msgs[n] == g_rung[n])
            continue;
        g_rung[n] = g_sent_msgs[n];
        if (g_bell_fd < 0 || !g_bell_addr || !g_bell_addr[n].sin_port)
            continue;
        bell_t b = {.cookie = g_cookie, .src = g_node, .count = g_sent_msgs[n]};
        /* A full socket buffer means the receiver has unread bells, which
         * already make it poll; any other failure leaves the safety net. */
        if (sendto(g_bell_fd, &b, sizeof b, MSG_DONTWAIT, (struct sockaddr *)&g_bell_addr[n],
                   sizeof g_bell_addr[n]) == (ssize_t)sizeof b)
            g_bells_sent++;
    }
}

/* The bells that woke us, in one system call for up to BELLS_AT_ONCE: a
 * read until EAGAIN cost a second call per bell, and the socket is polled
 * level-triggered, so what one call leaves wakes the next turn. */
#define BELLS_AT_ONCE 16
void bdr_net_doorbell(void)
{
    bell_t b[BELLS_AT_ONCE];
    struct iovec iov[BELLS_AT_ONCE];
    struct mmsghdr mm[BELLS_AT_ONCE];
    memset(mm, 0, sizeof mm);
    for (int i = 0; i < BELLS_AT_ONCE; i++) {
        iov[i].iov_base = &b[i];
        iov[i].iov_len = sizeof b[i];
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    int r;
    do {
        r = recvmmsg(g_bell_fd, mm, BELLS_AT_ONCE, MSG_DONTWAIT, NULL);
        g_bell_reads++;
    } while (r < 0 && errno == EINTR);
    for (int i = 0; i < r; i++) {
        if (mm[i].msg_len != sizeof b[i] || b[i].cookie != g_cookie || b[i].src < 0 ||
            b[i].src >= g_nnodes)
            continue; /* not from this job */
        g_bells_heard++;
        if (b[i].count > g_announced[b[i].src])
            g_announced[b[i].src] = b[i].count;
    }
}

void bdr_net_bell_stats(uint64_t *rung, uint64_t *heard, uint64_t *reads)
{
    *rung = g_bells_sent;
    *heard = g_bells_heard;
    *reads = g_bell_reads;
}

static void reap_sends(void)
{
    out_t **pp = &g_out;
    while (*pp) {
        out_t *o = *pp;
        int done = 0;
        check(MPI_Test(&o->req, &done, MPI_STATUS_IGNORE), "MPI_Test of a send");
        if (done) {
            g_pending[o->dst] -= o->bytes;
            if (o->done)
                g_lent -= o->bytes;
            *pp = o->next;
            release(o->buf, o->cap, o->done, o->arg);
            free(o);
        } else {
            pp = &o->next;
        }
    }
}

/* Sends alone (nothing to receive) keep the master polling only where the
 * masters are on several hosts, or while node.c waits for them (its
 * tokens).  On one host MPICH's transport is shared memory, where the
 * receiver pulls a large message itself (UCX's rendezvous by get): the
 * sender's polling only finds out that it has finished, and a holder
 * whose answers waited for an owner without a CPU napped every 50 us
 * meanwhile (in the PageRank benchmark 8-9 of its 11-13 thousand
 * event-loop turns; without them 3.5 thousand and 8% less CPU in both
 * masters; docs/performance.md, issue 16 session 22).  The master then
 * sleeps until a doorbell, one of its ranks or the safety net (1 ms while
 * sends are out, bdr_node_quiet) wakes it, and reaps the sends then. */
void bdr_net_out_blocked(int on) { g_out_blocked = on; }

int bdr_net_busy(void)
{
    if (g_rx_n)
        return 1;
    for (int n = 0; n < g_nnodes; n++)
        if (g_announced[n] > g_recvd[n])
            return 1;
    return g_out && (g_out_blocked || !g_all_local);
}

bdr_net_msg_t *bdr_net_poll(void)
{
    reap_sends();
    while (g_rx_n < RX_MAX) {
        int flag = 0;
        MPI_Message mh;
        MPI_Status st;
        check(MPI_Improbe(MPI_ANY_SOURCE, BDR_NET_TAG, MPI_COMM_WORLD, &flag, &mh, &st),
              "MPI_Improbe");
        if (!flag)
            break;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        if (n < (int)sizeof(bdr_net_hdr_t) || st.MPI_SOURCE < 0 || st.MPI_SOURCE >= g_nnodes) {
            bd_log_error("malformed %d-byte message from master %d", n, st.MPI_SOURCE);
            bdr_net_abort(1);
        }
        size_t cap;
        bdr_net_msg_t *m = (bdr_net_msg_t *)pool_get(sizeof *m + (size_t)n, &cap);
        if (!m) {
            bd_log_error("out of memory receiving %d bytes from master %d", n, st.MPI_SOURCE);
            bdr_net_abort(1);
            return NULL;
        }
        m->len = (size_t)n;
        m->cap = cap;
        m->payload = (char *)(m + 1);
        g_recvd[st.MPI_SOURCE]++;
        int k = (g_rx_head + g_rx_n) % RX_MAX;
        check(BD_FAULT_HIT(BD_FAULT_NET_RECV)
                  ? MPI_ERR_OTHER
                  : MPI_Imrecv(m->payload, n, MPI_BYTE, &mh, &g_rx_req[k]),
              "MPI_Imrecv");
        g_rx_msg[k] = m;
        g_rx_n++;
    }
    if (!g_rx_n)
        return NULL;
    int done = 0;
    check(MPI_Test(&g_rx_req[g_rx_head], &done, MPI_STATUS_IGNORE), "MPI_Test of a receive");
    if (!done)
        return NULL;
    bdr_net_msg_t *m = g_rx_msg[g_rx_head];
    g_rx_msg[g_rx_head] = NULL;
    g_rx_head = (g_rx_head + 1) % RX_MAX;
    g_rx_n--;
    memcpy(&m->h, m->payload, sizeof m->h);
    m->payload += sizeof m->h;
    m->len -= sizeof m->h;
    return m;
}

uint64_t bdr_net_sent_total(void)
{
    uint64_t t = 0;
    for (int n = 0; n < g_nnodes; n++)
        t += g_sent_msgs[n];
    return t;
}

int bdr_net_idle(void)
{
    reap_sends();
    return g_out == NULL;
}

void bdr_net_fini(void)
{
    /* Everyone is done; a late status message may still be on its way.
     * Drain (and drop) incoming messages until all masters are here, so
     * none is left unreceived at MPI_Finalize. */
    while (!bdr_net_idle())
        ;
    MPI_Request bar;
    check(MPI_Ibarrier(MPI_COMM_WORLD, &bar), "MPI_Ibarrier");
    for (int done = 0; !done;) {
        bdr_net_msg_t *m;
        while ((m = bdr_net_poll()))
            bdr_net_msg_free(m);
        check(MPI_Test(&bar, &done, MPI_STATUS_IGNORE), "MPI_Test of the final barrier");
    }
    bdr_net_msg_t *m;
    while ((m = bdr_net_poll()) || g_rx_n)
        bdr_net_msg_free(m);
    bdr_net_trim();
    if (g_bell_fd >= 0)
        close(g_bell_fd);
    MPI_Finalize();
}

int bdr_net_broken(void) { return g_broken; }

void bdr_net_msg_free(bdr_net_msg_t *m)
{
    if (m)
        pool_put((char *)m, m->cap);
}

void bdr_net_abort(int code)
{
    /* MPI_Abort makes MPICH's launcher kill every process at once, and the
     * message just written, still on its way through the launcher's output
     * forwarding, was lost (fault.full, net.recv:9, 1 run in 20): give it
     * time to arrive. */
    usleep(300000);
    MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}
