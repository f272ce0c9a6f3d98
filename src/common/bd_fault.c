/* Fault injection (bd_fault.h).  Depends on libc only: the memory manager,
 * the library, the master and the launcher all link it. */
#include "bd_fault.h"

#include <errno.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_iowatch.h"

static bd_iowatch_t g_own_iowatch;
bd_iowatch_t *_Atomic bd_iowatch = &g_own_iowatch;

void bd_iowatch_attach(bd_iowatch_t *w)
{
    atomic_store_explicit(&bd_iowatch, w ? w : &g_own_iowatch, memory_order_release);
}

const char *const bd_fault_names[BD_FAULT__COUNT] = {
    [BD_FAULT_MEM_OPEN] = "mem.open",
    [BD_FAULT_MEM_PWRITE] = "mem.pwrite",
    [BD_FAULT_MEM_PREAD] = "mem.pread",
    [BD_FAULT_MEM_FALLOCATE] = "mem.fallocate",
    [BD_FAULT_MEM_FTRUNCATE] = "mem.ftruncate",
    [BD_FAULT_SPILL_OPEN] = "spill.open",
    [BD_FAULT_SPILL_WRITE] = "spill.write",
    [BD_FAULT_SPILL_READ] = "spill.read",
    [BD_FAULT_IO_OPEN] = "io.open",
    [BD_FAULT_IO_WRITE] = "io.write",
    [BD_FAULT_IO_READ] = "io.read",
    [BD_FAULT_IO_RESIZE] = "io.resize",
    [BD_FAULT_MASTER_ALLOC] = "master.alloc",
    [BD_FAULT_MASTER_ALIGN] = "master.memalign",
    [BD_FAULT_NET_SEND] = "net.send",
    [BD_FAULT_NET_RECV] = "net.recv",
    [BD_FAULT_RPC_DIE] = "rpc.die",
    [BD_FAULT_MASTER_GRANT] = "master.grant",
    [BD_FAULT_MASTER_LOOP] = "master.loop",
    [BD_FAULT_RMT_CMA] = "remote.cma",
    [BD_FAULT_RMT_REFUSE] = "remote.refuse",
    [BD_FAULT_MEM_UFFD_EVENT] = "mem.uffd_event",
};

static const struct {
    const char *name;
    int err;
} g_errnos[] = {
    {"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"ENOMEM", ENOMEM},
    {"EINTR", EINTR},   {"EAGAIN", EAGAIN}, {"EACCES", EACCES}, {"EPERM", EPERM},
    {"EMFILE", EMFILE}, {"ENFILE", ENFILE}, {"EFBIG", EFBIG},   {"EROFS", EROFS},
    {"ENOENT", ENOENT}, {"EEXIST", EEXIST}, {"EINVAL", EINVAL}, {"EBADF", EBADF},
    {"ELOOP", ELOOP},   {"EFAULT", EFAULT},
};

unsigned bd_fault_armed;

/* Per site: the call to fail, whether every later one fails too, the
 * errno, and the calls counted so far. */
static unsigned long g_nth[BD_FAULT__COUNT];
static int g_sticky[BD_FAULT__COUNT];
static int g_err[BD_FAULT__COUNT];
static unsigned long g_calls[BD_FAULT__COUNT];
/* nonzero: the call is delayed by this many ns instead of failing */
static unsigned long long g_delay[BD_FAULT__COUNT];

static const char *errno_name(int e)
{
    for (size_t i = 0; i < sizeof g_errnos / sizeof g_errnos[0]; i++)
        if (g_errnos[i].err == e)
            return g_errnos[i].name;
    return NULL;
}

/* Decimal of v into out (at least 24 bytes); async-signal-safe. */
static void fmt_ulong(char *out, unsigned long v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = 0;
}

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

int bd_fault_fire(bd_fault_site_t site)
{
    if ((unsigned)site >= BD_FAULT__COUNT || !((bd_fault_armed >> site) & 1u))
        return 0;
    unsigned long n = __atomic_add_fetch(&g_calls[site], 1, __ATOMIC_RELAXED);
    if (n != g_nth[site] && !(g_sticky[site] && n > g_nth[site]))
        return 0;
    int saved = errno;
    char num[24], pid[24], line[160];
    const char *en = errno_name(g_err[site]);
    char ebuf[24];
    unsigned long long delay = g_delay[site];
    if (delay) {
        /* one line for the first call delayed, not one per call */
        if (n == g_nth[site]) {
            char d[24];
            const char *unit = delay % 1000000000ull == 0 ? " s"
                               : delay % 1000000ull == 0  ? " ms"
                                                          : " us";
            fmt_ulong(d, (unsigned long)(delay / (delay % 1000000000ull == 0 ? 1000000000ull
                                                  : delay % 1000000ull == 0  ? 1000000ull
                                                                             : 1000ull)));
            fmt_ulong(num, n);
            fmt_ulong(pid, (unsigned long)getpid());
            const char *parts[] = {"bdmpi-fault: delaying call ",
                                   num,
                                   g_sticky[site] ? " and every later one" : "",
                                   " of ",
                                   bd_fault_names[site],
                                   " by ",
                                   d,
                                   unit,
                                   " (pid ",
                                   pid,
                                   ")\n"};
            line[0] = 0;
            size_t len = 0;
            for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
                size_t l = strlen(parts[i]);
                if (len + l >= sizeof line)
                    break;
                memcpy(line + len, parts[i], l);
                len += l;
                line[len] = 0;
            }
            say(line);
        }
        struct timespec ts = {(time_t)(delay / 1000000000ull), (long)(delay % 1000000000ull)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
        errno = saved;
        return 0;
    }
    if (!en) {
        fmt_ulong(ebuf, (unsigned long)g_err[site]);
        en = ebuf;
    }
    fmt_ulong(num, n);
    fmt_ulong(pid, (unsigned long)getpid());
    /* one write, so that lines of several processes do not mix */
    line[0] = 0;
    /* master.grant has no errno: the grant is withheld */
    if (site == BD_FAULT_MASTER_GRANT)
        en = "a withheld grant";
    if (site == BD_FAULT_MASTER_LOOP)
        en = "a hang";
    const char *parts[] = {"bdmpi-fault: injected ", en,       " into call ", num,  " of ",
                           bd_fault_names[site],     " (pid ", pid,           ")\n"};
    size_t len = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t l = strlen(parts[i]);
        if (len + l >= sizeof line)
            break;
        memcpy(line + len, parts[i], l);
        len += l;
        line[len] = 0;
    }
    say(line);
    errno = saved;
    if (site == BD_FAULT_RPC_DIE) {
        kill(getpid(), SIGKILL);
        for (;;)
            pause();
    }
    return g_err[site];
}

int bd_fault_sys(bd_fault_site_t site)
{
    int e = bd_fault_fire(site);
    if (!e)
        return 0;
    errno = e;
    return -1;
}

/* "50ms", "2s", "500us", "100ns" into ns: from 1 us to 1 h. */
static int parse_delay(const char *v, unsigned long long *ns)
{
    char *e;
    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(v, &e, 10);
    unsigned long long unit;
    if (!strcmp(e, "ns"))
        unit = 1;
    else if (!strcmp(e, "us"))
        unit = 1000;
    else if (!strcmp(e, "ms"))
        unit = 1000000;
    else if (!strcmp(e, "s"))
        unit = 1000000000;
    else
        return -1;
    const unsigned long long hour = 3600ull * 1000000000ull;
    if (errno || x > hour / unit || x * unit < 1000 || x * unit > hour)
        return -1;
    *ns = x * unit;
    return 0;
}

int bd_fault_arm(const char *spec, char *err, size_t errlen)
{
    unsigned armed = 0;
    unsigned long nth[BD_FAULT__COUNT] = {0};
    int sticky[BD_FAULT__COUNT] = {0}, ev[BD_FAULT__COUNT] = {0};
    unsigned long long dl[BD_FAULT__COUNT] = {0};
    const char *p = spec ? spec : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char one[128];
        if (len == 0 || len >= sizeof one) {
            snprintf(err, errlen, "fault '%.*s': expected site:nth[:errno] or site:nth:delay=TIME",
                     (int)len, p);
            return -1;
        }
        memcpy(one, p, len);
        one[len] = 0;
        char *c1 = strchr(one, ':');
        if (!c1) {
            snprintf(err, errlen, "fault '%s': expected site:nth[:errno] or site:nth:delay=TIME",
                     one);
            return -1;
        }
        *c1 = 0;
        int site = -1;
        for (int s = 0; s < BD_FAULT__COUNT; s++)
            if (!strcmp(one, bd_fault_names[s]))
                site = s;
        if (site < 0) {
            char names[512];
            size_t k = 0;
            names[0] = 0;
            for (int s = 0; s < BD_FAULT__COUNT && k + 20 < sizeof names; s++)
                k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", s ? " " : "",
                                      bd_fault_names[s]);
            snprintf(err, errlen, "fault site '%s' is unknown (sites: %s)", one, names);
            return -1;
        }
        char *num = c1 + 1, *c2 = strchr(num, ':');
        if (c2)
            *c2 = 0;
        char *e;
        errno = 0;
        unsigned long v = strtoul(num, &e, 10);
        int st = 0;
        if (*e == '+')
            st = 1, e++;
        if (errno || e == num || *e || v == 0 || num[0] == '-') {
            snprintf(err, errlen, "fault '%s': the call number must be 1 or more, not '%s'",
                     bd_fault_names[site], num);
            return -1;
        }
        int code = site == BD_FAULT_MASTER_ALLOC || site == BD_FAULT_MASTER_ALIGN ? ENOMEM : EIO;
        unsigned long long delay = 0;
        if (c2 && !strncmp(c2 + 1, "delay=", 6)) {
            if (site == BD_FAULT_RPC_DIE) {
                snprintf(err, errlen, "fault '%s': this site cannot be delayed",
                         bd_fault_names[site]);
                return -1;
            }
            if (parse_delay(c2 + 7, &delay) < 0) {
                snprintf(err, errlen,
                         "fault '%s': 'delay=%s' is not a duration from 1us to 1h such as "
                         "50ms, 2s or 500us",
                         bd_fault_names[site], c2 + 7);
                return -1;
            }
        } else if (c2) {
            const char *en = c2 + 1;
            code = 0;
            for (size_t i = 0; i < sizeof g_errnos / sizeof g_errnos[0]; i++)
                if (!strcmp(en, g_errnos[i].name))
                    code = g_errnos[i].err;
            if (!code) {
                long x = strtol(en, &e, 10);
                if (*en && !*e && x > 0 && x < 4096)
                    code = (int)x;
            }
            if (!code) {
                snprintf(err, errlen, "fault '%s': '%s' is not an errno name or number",
                         bd_fault_names[site], en);
                return -1;
            }
        }
        armed |= 1u << site;
        nth[site] = v;
        sticky[site] = st;
        ev[site] = code;
        dl[site] = delay;
        p = end ? end + 1 : p + len;
    }
    for (int s = 0; s < BD_FAULT__COUNT; s++) {
        g_nth[s] = nth[s];
        g_sticky[s] = sticky[s];
        g_err[s] = ev[s];
        g_delay[s] = dl[s];
        g_calls[s] = 0;
    }
    __atomic_store_n(&bd_fault_armed, armed, __ATOMIC_RELEASE);
    return 0;
}

/* Every process of the job reads the spec before main (a rank before its
 * memory manager starts).  A bad spec was refused by the launcher; one set
 * by hand for a program run alone is reported and ignored. */
__attribute__((constructor)) static void bd_fault_init(void)
{
    const char *spec = getenv("BDMPI_FAULT");
    if (!spec || !*spec)
        return;
    char err[640];
    if (bd_fault_arm(spec, err, sizeof err) < 0) {
        say("bdmpi-fault: BDMPI_FAULT ignored: ");
        say(err);
        say("\n");
    }
}
