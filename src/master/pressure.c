/* The adaptive memory budget (issue 16, mmlib.txt): the node's budget
 * follows the memory other processes leave free, instead of staying at
 * what was free when the job started.
 *
 * Signals, sampled every PERIOD by the master's loop:
 *   - the cgroup the master runs in and its ancestors (v2: memory.max,
 *     memory.high, memory.current; v1: memory.limit_in_bytes,
 *     memory.usage_in_bytes), each giving room = limit - (usage - inactive
 *     file cache), which the kernel reclaims before it kills anyone; the
 *     tightest one counts.  This is what Slurm and systemd jobs run under;
 *   - MemAvailable of the whole node;
 *   - PSI (/proc/pressure/memory, "some" avg10): tasks stalled on memory.
 * What the job may hold is what it holds now (accounted: the ranks'
 * managed memory, buffered messages, collective staging) plus that room,
 * less a reserve for what the budget does not account (the processes'
 * code, stacks, small allocations).
 *
 * The control loop, after mmlib.txt (react to pressure at once, give memory
 * back before the kernel must reclaim it) and PSI-driven controllers such
 * as Senpai (step slowly upwards, only while nothing stalls):
 *   - down at once: a target below the budget lowers it to the target, and
 *     ranks blocked in MPI are unloaded until the node fits.  The target
 *     keeps free, besides the reserve, what the others would take in
 *     HORIZON at the pace they have been taking it (the fall of held +
 *     room, smoothed): unloading takes time, and a limit reached before it
 *     is done means the kernel's OOM killer;
 *   - up slowly: only after GROW_STREAK samples in a row with the target at
 *     least a step above the budget and PSI under PSI_CALM, by one step (a
 *     16th of the ceiling) per sample; the gap of a step between the two
 *     directions is the hysteresis that keeps a steady signal from making
 *     the budget go up and down;
 *   - a PSI stall above PSI_STALL with no room signal lowers it by a step;
 *   - never above the ceiling (-mem, or the default computed at the start),
 *     never below -mem-min nor below what the running ranks hold: ranks that
 *     run are never unloaded, so that is the least the node can have.  Then
 *     the job says so once and keeps running at that floor.
 * The effective budget is g_m.hdr->job.mem_budget, which memacct.c reads at
 * every decision; the trace's memory counter records it with the node's
 * resident memory. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_log.h"
#include "master.h"

#define PERIOD 0.1
#define GROW_STREAK 5
#define PSI_CALM 1.0
#define PSI_STALL 20.0
#define HORIZON 1.0 /* seconds of the others' growth kept free ahead */
#define MAX_CG 16

typedef struct {
    char dir[BD_PATH_MAX];
    int v2;
} cg_t;

static struct {
    int on;
    uint64_t ceiling, least;
    cg_t cg[MAX_CG];
    int ncg;
    double next;
    int streak;
    int at_floor;        /* said so for this episode */
    uint64_t prev_x;     /* held + room at the previous sample */
    double prev_t, rate; /* how fast the others take memory (bytes/s, smoothed) */
    /* for --stats */
    uint64_t lowest, changes;
    double below_s, last_t;
} g_p;

/* The first number in FILE (or the value after KEY at the start of a line);
 * UINT64_MAX for "max" and when there is none. */
static uint64_t read_num(const char *dir, const char *file, const char *key)
{
    char path[BD_PATH_MAX + 64], buf[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return UINT64_MAX;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return UINT64_MAX;
    buf[n] = 0;
    const char *p = buf;
    if (key) {
        size_t kl = strlen(key);
        for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
            if (!strncmp(p, key, kl) && p[kl] == ' ')
                break;
        if (!p)
            return UINT64_MAX;
        p += kl + 1;
    }
    if (!strncmp(p, "max", 3))
        return UINT64_MAX;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    return end == p ? UINT64_MAX : (uint64_t)v;
}

/* The mount point of the cgroup hierarchy (v2: fstype cgroup2; v1: the one
 * with the memory controller) from /proc/self/mountinfo; 0 or -1. */
static int mount_of(int v2, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
        char root[1024], mnt[1024], fstype[64], super[1024] = "";
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) < 1)
            continue;
        if ((v2 ? !strcmp(fstype, "cgroup2")
                : !strcmp(fstype, "cgroup") && strstr(super, "memory") != NULL) &&
            strlen(mnt) < len) {
            memcpy(out, mnt, strlen(mnt) + 1);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

/* The cgroup directories of this process whose memory limits bind it: its
 * own and each ancestor up to the hierarchy's root. */
static void find_cgroups(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return;
    char line[4096], mnt[BD_PATH_MAX];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        const char *ctrls = c1 + 1, *path = c2 + 1;
        int v2 = !strcmp(line, "0") && !*ctrls;
        int v1mem = 0;
        for (char *t = strtok((char *)ctrls, ","); t; t = strtok(NULL, ","))
            v1mem |= !strcmp(t, "memory");
        if ((!v2 && !v1mem) || mount_of(v2, mnt, sizeof mnt) < 0)
            continue;
        char dir[BD_PATH_MAX];
        snprintf(dir, sizeof dir, "%s%s", mnt, path);
        /* v2 without the memory controller here: nothing to read */
        if (v2 && read_num(dir, "memory.current", NULL) == UINT64_MAX && strcmp(path, "/"))
            continue;
        for (;;) {
            if (g_p.ncg < MAX_CG) {
                snprintf(g_p.cg[g_p.ncg].dir, sizeof g_p.cg[0].dir, "%s", dir);
                g_p.cg[g_p.ncg++].v2 = v2;
            }
            size_t ml = strlen(mnt);
            char *slash = strrchr(dir, '/');
            if (strlen(dir) <= ml || !slash || slash < dir + ml)
                break;
            *slash = 0;
        }
    }
    fclose(f);
}

/* Room left in the tightest cgroup limit that binds the master (and so the
 * ranks it started); UINT64_MAX without one. */
static uint64_t cgroup_room(void)
{
    uint64_t room = UINT64_MAX;
    for (int i = 0; i < g_p.ncg; i++) {
        const cg_t *c = &g_p.cg[i];
        uint64_t limit, usage, inactive;
        if (c->v2) {
            limit = read_num(c->dir, "memory.max", NULL);
            uint64_t high = read_num(c->dir, "memory.high", NULL);
            limit = high < limit ? high : limit;
            if (limit == UINT64_MAX)
                continue;
            usage = read_num(c->dir, "memory.current", NULL);
            inactive = read_num(c->dir, "memory.stat", "inactive_file");
        } else {
            limit = read_num(c->dir, "memory.limit_in_bytes", NULL);
            if (limit >= (1ull << 62)) /* v1's "unlimited" is a huge page-rounded number */
                continue;
            usage = read_num(c->dir, "memory.usage_in_bytes", NULL);
            inactive = read_num(c->dir, "memory.stat", "total_inactive_file");
        }
        if (usage == UINT64_MAX)
            continue;
        if (inactive != UINT64_MAX && inactive < usage)
            usage -= inactive;
        uint64_t r = limit > usage ? limit - usage : 0;
        room = r < room ? r : room;
    }
    return room;
}

static uint64_t mem_available(void)
{
    uint64_t kb = read_num("/proc", "meminfo", "MemAvailable:");
    return kb == UINT64_MAX ? UINT64_MAX : kb * 1024;
}

/* PSI "some" avg10 (percent of time some task stalled on memory); 0
 * where the kernel has no PSI. */
static double psi_some(void)
{
    char buf[256];
    int fd = open("/proc/pressure/memory", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strstr(buf, "some avg10=");
    return p ? strtod(p + 11, NULL) : 0;
}

uint64_t bdr_pressure_default_budget(void)
{
    if (!g_p.ncg)
        find_cgroups();
    uint64_t avail = mem_available(), room = cgroup_room();
    if (avail == UINT64_MAX)
        avail = 0;
    /* a cgroup limit is the memory available to this job as much as
     * MemAvailable is */
    if (room < avail)
        avail = room;
    return avail / 4 * 3;
}

void bdr_pressure_init(void)
{
    const bd_opts_t *o = &g_m.opts;
    int mode = (int)o->num[BD_OPT_MEM_ADAPT];
    g_p.on = g_m.hdr->job.mem_budget != 0 &&
             (mode == BD_ADAPT_ON || (mode == BD_ADAPT_AUTO && !o->num[BD_OPT_MEM]));
    if (!g_p.on)
        return;
    if (!g_p.ncg)
        find_cgroups();
    g_p.ceiling = g_m.hdr->job.mem_budget;
    g_p.least = (uint64_t)o->num[BD_OPT_MEM_MIN];
    g_p.lowest = g_p.ceiling;
    g_p.last_t = bdr_master_now();
    for (int i = 0; i < g_p.ncg; i++)
        bd_log_debug("adaptive budget: watching cgroup %s (v%d)", g_p.cg[i].dir,
                     g_p.cg[i].v2 ? 2 : 1);
}

int bdr_pressure_on(void) { return g_p.on; }

/* What the node cannot give back: buffered messages, collective staging,
 * and what the ranks that hold a run slot need (nobody unloads those): what
 * they hold and are asking for, or, when more, what they held at their
 * last unload (a rank just given its slot is about to load it).  And never
 * less than the largest working set of any rank beside the master's data:
 * some rank must run for the job to progress, and at -nr 1 there are
 * moments when none holds its slot (one has blocked, the next is not yet
 * resumed).  A floor that counted only the ranks running at the sample
 * went to 0 there, the budget with it, and the next grant raised it again:
 * the budget changed at every sample (bench/pressure_bench.py). */
static uint64_t floor_now(void)
{
    uint64_t base = g_m.bytes_buffered + bdr_node_transient_bytes() + bdr_coll_staging_bytes() +
                    bdr_unmanaged_counted();
    uint64_t t = base, one = 0;
    for (int i = 0; i < g_m.ns; i++) {
        slave_t *s = &g_m.slaves[i];
        if (s->exited)
            continue;
        uint64_t r = atomic_load_explicit(&s->slot->mem_resident, memory_order_relaxed) +
                     (s->mem_pending ? s->mem_want : 0);
        r = r > s->warm ? r : s->warm;
        one = r > one ? r : one;
        if (s->state == SL_RUNNING)
            t += r;
    }
    return t > base + one ? t : base + one;
}

int bdr_pressure_floor(uint64_t need)
{
    uint64_t cur = g_m.hdr->job.mem_budget;
    if (!g_p.on || need <= cur || cur >= g_p.ceiling)
        return 0;
    uint64_t want = need < g_p.ceiling ? need : g_p.ceiling;
    if (!g_p.at_floor)
        bd_log_warn(
            "memory pressure: the node's budget went down to %llu bytes, but a running rank "
            "needs %llu in all: running at that minimum",
            (unsigned long long)cur, (unsigned long long)want);
    g_p.at_floor = 1;
    g_m.hdr->job.mem_budget = want;
    g_p.changes++;
    return 1;
}

void bdr_pressure_poll(void)
{
    if (!g_p.on || g_m.stopping)
        return;
    double now = bdr_master_now();
    uint64_t cur = g_m.hdr->job.mem_budget;
    if (cur < g_p.ceiling)
        g_p.below_s += now - g_p.last_t;
    g_p.last_t = now;
    if (now < g_p.next)
        return;
    g_p.next = now + PERIOD;

    uint64_t held = bdr_memacct_node_resident(), room = mem_available(), cg = cgroup_room();
    room = cg < room ? cg : room;
    double psi = psi_some();
    uint64_t step = g_p.ceiling / 16, reserve = g_p.ceiling / 32;
    reserve = reserve > (16u << 20) ? reserve : (16u << 20);
    uint64_t target = g_p.ceiling;
    if (room != UINT64_MAX) {
        /* x, what the job could hold, moves only when other processes take
         * or give memory (the job's own loads move held and room
         * oppositely).  While it falls, keep free what the others would
         * take within HORIZON at their current pace, so that unloading
         * (which takes time) starts before the limit is reached. */
        uint64_t x = held + room;
        if (g_p.prev_t > 0 && now > g_p.prev_t) {
            double d = ((double)g_p.prev_x - (double)x) / (now - g_p.prev_t);
            g_p.rate = 0.5 * g_p.rate + 0.5 * (d > 0 ? d : 0);
        }
        g_p.prev_x = x;
        g_p.prev_t = now;
        double ahead = g_p.rate * HORIZON;
        if (ahead > (double)(g_p.ceiling / 2))
            ahead = (double)(g_p.ceiling / 2);
        reserve += (uint64_t)ahead;
        target = x > reserve ? x - reserve : 0;
    }
    if (psi > PSI_STALL && target >= cur)
        target = cur > step ? cur - step : 0; /* stalls with no room signal: probe down */

    uint64_t want = cur;
    if (target + step / 4 < cur) {
        /* down at once, but not for the jitter of the signals (the job's
         * own unaccounted memory and file cache move room a little) */
        want = target;
        g_p.streak = 0;
    } else if (target >= cur + step && psi < PSI_CALM) {
        if (++g_p.streak >= GROW_STREAK)
            want = cur + step < target ? cur + step : target;
    } else {
        g_p.streak = 0;
    }
    if (want > g_p.ceiling)
        want = g_p.ceiling;
    uint64_t fl = floor_now();
    fl = fl > g_p.least ? fl : g_p.least;
    if (want < fl) {
        if (!g_p.at_floor)
            bd_log_warn(
                "memory pressure: the node's budget would be %llu bytes, but the running ranks "
                "and the master hold %llu that cannot be unloaded (-mem-min %llu): running at "
                "that minimum",
                (unsigned long long)want, (unsigned long long)fl, (unsigned long long)g_p.least);
        g_p.at_floor = 1;
        want = fl > g_p.ceiling ? g_p.ceiling : fl;
    } else if (want > fl + step) {
        g_p.at_floor = 0;
    }
    if (want == 0)
        want = 1; /* 0 would mean no budget at all */
    if (want < cur && cur - want < step / 4 && cur <= g_p.ceiling)
        want = cur; /* the floor moving a little with what the running ranks hold */
    if (want == cur)
        return;
    g_m.hdr->job.mem_budget = want;
    g_p.changes++;
    if (want < g_p.lowest)
        g_p.lowest = want;
    bd_log_debug("adaptive budget: %llu -> %llu bytes (held %llu, room %llu, psi %.2f)",
                 (unsigned long long)cur, (unsigned long long)want, (unsigned long long)held,
                 (unsigned long long)room, psi);
    if (want < held)
        bdr_memacct_fit(); /* unload blocked ranks until the node fits */
}

double bdr_pressure_period(void) { return g_p.on ? PERIOD : 0; }

void bdr_pressure_stats(FILE *f)
{
    if (!g_p.on)
        return;
    fprintf(f,
            "  master: adaptive budget: ceiling %llu bytes, lowest %llu, %llu changes, %.2f s "
            "below the ceiling\n",
            (unsigned long long)g_p.ceiling, (unsigned long long)g_p.lowest,
            (unsigned long long)g_p.changes, g_p.below_s);
}
