/*
 * mem_bench.c - micro-benchmark of the storage-backed memory manager (SBMA).
 *
 * Modelled on the synthetic application of the SBMA paper (section 6.1.1,
 * Table 2): one large allocation is swept by three access kernels
 *   read   (x == y)  sum every 8-byte word (the sum is checked),
 *   write  (x = y)   store every word,
 *   rw     (x += y)  add to every word,
 * on unmanaged memory (plain anonymous mmap, "np") and on SBMA allocations for
 * every strategy (ARAW, ARLW, LRLW), sbpage size and tracking path (uffd,
 * mprotect), in two placements:
 *   I  the data is resident and clean (as right after a load): the loop
 *      measures the access overhead of the manager only;
 *   R  the data was written and unloaded with bd_mem_unload_all(): the loop
 *      faults it back in from storage.
 * After every write kernel the following bd_mem_unload_all() (the write-back
 * of the whole allocation) is timed as well.  For the unmanaged baseline in
 * placement R the same work is done explicitly: O_DIRECT pread of the file in
 * 1 MiB requests into released memory, then the kernel; write-back is an
 * O_DIRECT pwrite in 1 MiB requests.
 *
 * The raw sequential O_DIRECT bandwidth of the storage directory (1 MiB
 * requests, queue depth 1) is measured in the same run and is the reference
 * for placement R.  Everything happens in a fresh directory that is removed
 * at exit; SBMA backing files are O_DIRECT, the raw-test files are fsync'ed
 * and dropped from the page cache before they are read.  Each measurement is
 * repeated (-r) and the median is reported; a repetition is a round over all
 * configurations (raw bandwidth, unmanaged, every SBMA configuration), so a
 * period of foreign load disturbs one sample of many configurations instead
 * of all samples of one.  I/O of other processes on the same block device
 * during the run (/proc/diskstats minus our own) is reported.
 *
 * Output: a Markdown table on stdout (one row per strategy, path and
 * placement; per kernel a column for np and for every sbpage size; each cell
 * "GB/s (ratio)"), optionally a CSV with every measurement (--csv), progress
 * on stderr.  GB = 10^9 bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bd_crc.h"
#include "bd_mem.h"

#ifndef MEM_BENCH_BUILD_TYPE
#define MEM_BENCH_BUILD_TYPE "unknown"
#endif

#define MIB (1024UL * 1024UL)
#define IO_REQ MIB /* raw and explicit I/O request size */
#define MAX_REPS 32
#define MAX_SAMPLES (2 * MAX_REPS) /* raw bandwidth: start and end of the run */
#define NSTRAT 3
#define NTRACK 4 /* uffd, mprotect, and both with storage deduplication (cfg.share) */
#define MAX_SB 8

enum { K_READ, K_WRITE, K_RW, K_WB, K_CU, NKERN };
enum { P_I, P_R, NPLACE };

static const char *const kern_name[NKERN] = {"read", "write", "rw", "writeback", "clean_unload"};
static const char *const kern_head[NKERN] = {"read (x==y)", "write (x=y)", "rw (x+=y)",
                                             "write-back", "clean unload"};
static const char *const place_name[NPLACE] = {"I", "R"};
static const char *const strat_name[NSTRAT] = {"araw", "arlw", "lrlw"};
static const bd_mem_strategy_t strat_val[NSTRAT] = {BD_MEM_ARAW, BD_MEM_ARLW, BD_MEM_LRLW};
static const char *const track_name[NTRACK] = {"uffd", "mprotect", "uffd-dedup", "mprotect-dedup"};
static const bd_mem_track_t track_val[NTRACK] = {BD_MEM_TRACK_UFFD, BD_MEM_TRACK_MPROTECT,
                                                 BD_MEM_TRACK_UFFD, BD_MEM_TRACK_MPROTECT};

typedef struct {
    double sec;
    uint64_t faults, bytes_read, bytes_written, io_ns; /* bd_mem_stats deltas (SBMA only) */
    uint64_t minflt;                                   /* kernel page faults (getrusage) */
} sample_t;

typedef struct {
    int n;
    sample_t s[MAX_SAMPLES];
} meas_t;

/* options */
static size_t opt_size;
static int opt_quick;
static int opt_reps = 3;
static const char *opt_parent;
static const char *opt_csv;
static size_t opt_chunk;
static int opt_predict;       /* bd_mem_config_t.predict: 0 default, 1 on, -1 off */
static int opt_verify;        /* bd_mem_config_t.verify: 0 on (default), -1 off */
static bd_mem_wp_t opt_wp;    /* bd_mem_config_t.wp */
static int sbma_predict = -1; /* bd_mem_stats.predict */
static int use_strat[NSTRAT] = {1, 1, 1};
static int use_track[NTRACK] = {1, 1, 0, 0};
static size_t sbpages[MAX_SB] = {4096, 16384, 65536, 262144, 1048576};
static int nsb = 5;

/* state */
static char g_dir[4096];
static char raw_path[4200], np_path[4200];
static size_t g_page;
static int raw_direct = 1;             /* raw-test files opened with O_DIRECT */
static int sbma_direct = -1;           /* bd_mem_stats.direct_io after a write-back */
static int track_state[NTRACK];        /* 0 not requested, 1 available, -1 unavailable */
static int track_kfaults[NTRACK];      /* bd_mem_stats.kernel_faults */
static meas_t raw_rd, raw_wr, raw_rd4; /* raw_rd4: 4 MiB requests, for context only */
static int raw_fd = -1;
static uint8_t *raw_buf;
#define RAW_BIG (4 * MIB)
/* I/O of this program, to tell other I/O on the device apart (/proc/diskstats) */
static uint64_t own_rd, own_wr;
static int disk_found;
static char disk_name[64];
static uint64_t disk_rd0, disk_wr0, disk_rd1, disk_wr1;
static meas_t np_res[NPLACE][NKERN];
static meas_t sb_res[NSTRAT][NTRACK][NPLACE][NKERN][MAX_SB];
static uint64_t cur_c; /* word i holds i * KMUL + cur_c */
static double t_begin;
static char load_begin[64], load_end[64]; /* /proc/loadavg: other load on the machine */

#define KMUL 0x9E3779B97F4A7C15ULL

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */

static uint64_t minflt(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void cleanup_dir(void)
{
    if (!g_dir[0])
        return;
    DIR *d = opendir(g_dir);
    if (d) {
        struct dirent *e;
        char p[4400];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
    g_dir[0] = 0;
}

static void on_signal(int sig)
{
    cleanup_dir();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mem_bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (bd_mem_active())
        bd_mem_fini();
    cleanup_dir();
    exit(1);
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[%6.1fs] ", now() - t_begin);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void read_loadavg(char *out, size_t n)
{
    snprintf(out, n, "?");
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(out, n, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    case 't':
    case 'T':
        shift = 40;
        end++;
        break;
    default: break;
    }
    if (*end == 'i' && end[1] == 'B')
        end += 2;
    else if (*end == 'B')
        end++;
    if (*end)
        return -1;
    if (shift && v > (~0ULL >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static void fmt_size(char *out, size_t n, size_t v)
{
    if (v >= (1UL << 30) && v % (1UL << 30) == 0)
        snprintf(out, n, "%zuG", v >> 30);
    else if (v >= MIB && v % MIB == 0)
        snprintf(out, n, "%zuM", v >> 20);
    else if (v % 1024 == 0)
        snprintf(out, n, "%zuK", v >> 10);
    else
        snprintf(out, n, "%zu", v);
}

/* Comma separated names -> flags.  Returns 0 or -1 on an unknown name. */
static int parse_names(const char *arg, const char *const *names, int n, int *flags)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    for (int i = 0; i < n; i++)
        flags[i] = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(t, names[i]))
                flags[i] = found = 1;
        if (!found)
            return -1;
    }
    return 0;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int cmp_sample(const void *a, const void *b)
{
    double x = ((const sample_t *)a)->sec, y = ((const sample_t *)b)->sec;
    return (x > y) - (x < y);
}

/* Median sample (time = mean of the middle two for an even count; the
 * counters are those of the lower middle sample). */
static int median(const meas_t *m, sample_t *out)
{
    if (m->n == 0)
        return 0;
    sample_t tmp[MAX_SAMPLES];
    memcpy(tmp, m->s, (size_t)m->n * sizeof tmp[0]);
    qsort(tmp, (size_t)m->n, sizeof tmp[0], cmp_sample);
    *out = tmp[(m->n - 1) / 2];
    if (m->n % 2 == 0)
        out->sec = (tmp[m->n / 2 - 1].sec + tmp[m->n / 2].sec) / 2;
    return 1;
}

static double gbps_of(const meas_t *m)
{
    sample_t s;
    if (!median(m, &s) || s.sec <= 0)
        return 0;
    return (double)opt_size / s.sec / 1e9;
}

static void add_sample(meas_t *m, sample_t s)
{
    if (m->n < MAX_SAMPLES)
        m->s[m->n++] = s;
}

/* ------------------------------------------------------------------------ */
/* kernels: never inlined, so every configuration runs the same code         */

__attribute__((noinline)) static uint64_t k_read(const uint64_t *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

__attribute__((noinline)) static void k_write(uint64_t *p, size_t n, uint64_t c)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint64_t)i * KMUL + c;
}

__attribute__((noinline)) static void k_rw(uint64_t *p, size_t n, uint64_t y)
{
    for (size_t i = 0; i < n; i++)
        p[i] += y;
}

static uint64_t expected_sum(size_t n, uint64_t c)
{
    uint64_t nn = n;
    uint64_t tri =
        (nn % 2 == 0) ? (nn / 2) * (nn - 1) : nn * ((nn - 1) / 2); /* sum of 0..n-1, mod 2^64 */
    return tri * KMUL + nn * c;
}

static void check_sum(uint64_t got, const char *where)
{
    uint64_t want = expected_sum(opt_size / 8, cur_c);
    if (got != want)
        die("data check failed after %s: sum %#" PRIx64 ", expected %#" PRIx64
            " (memory manager returned wrong data)",
            where, got, want);
}

static uint64_t next_value(void)
{
    static uint64_t x = 0x243F6A8885A308D3ULL;
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x | 1;
}

/* ------------------------------------------------------------------------ */
/* explicit I/O (raw bandwidth and the unmanaged R baseline)                 */

static int open_file(const char *path, int create)
{
    int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0);
    int fd = -1;
    if (raw_direct) {
        fd = open(path, flags | O_DIRECT, 0600);
        if (fd < 0 && errno == EINVAL) {
            raw_direct = 0;
            progress("warning: %s does not support O_DIRECT; raw I/O is buffered, with fsync and "
                     "POSIX_FADV_DONTNEED",
                     g_dir);
        }
    }
    if (fd < 0 && !raw_direct)
        fd = open(path, flags, 0600);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    return fd;
}

/* Make sure nothing of the file is in the page cache. */
static void flush_file(int fd)
{
    if (fsync(fd) != 0)
        die("fsync: %s", strerror(errno));
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void io_req(int fd, void *buf, size_t len, int wr, int advance_buf, size_t req)
{
    uint8_t *b = buf;
    if (wr)
        own_wr += len;
    else
        own_rd += len;
    for (size_t off = 0; off < len;) {
        size_t m = len - off < req ? len - off : req;
        ssize_t r = wr ? pwrite(fd, b, m, (off_t)off) : pread(fd, b, m, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("%s of the benchmark file: %s", wr ? "pwrite" : "pread",
                r < 0 ? strerror(errno) : "short");
        off += (size_t)r;
        if (advance_buf)
            b += r;
    }
}

static void io_all(int fd, void *buf, size_t len, int wr, int advance_buf)
{
    io_req(fd, buf, len, wr, advance_buf, IO_REQ);
}

/* Explicit write-back: the buffered fallback has to reach the device too. */
static void write_back(int fd, void *buf, size_t len)
{
    io_all(fd, buf, len, 1, 1);
    if (!raw_direct) {
        if (fdatasync(fd) != 0)
            die("fdatasync: %s", strerror(errno));
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
}

static void read_in(int fd, void *buf, size_t len)
{
    if (!raw_direct)
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    io_all(fd, buf, len, 0, 1);
}

static void *map_anon(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die("mmap %zu bytes: %s", len, strerror(errno));
    return p;
}

/* Raw sequential bandwidth: 1 MiB requests, one at a time, from/to one
 * buffer, over a file of the benchmark size created once.  The timed writes
 * overwrite it without fsync, as SBMA write-back does; before every read the
 * file is fsync'ed and dropped from the page cache.  One sample per call; a
 * read with 4 MiB requests (SBMA's uffd load piece) is recorded for context. */
static void raw_setup(void)
{
    raw_buf = map_anon(RAW_BIG);
    for (size_t i = 0; i < RAW_BIG; i++)
        raw_buf[i] = (uint8_t)(i * 131 + 7);
    raw_fd = open_file(raw_path, 1);
    io_all(raw_fd, raw_buf, opt_size, 1, 0); /* allocate the blocks */
    flush_file(raw_fd);
}

static void raw_sample(const char *when)
{
    double t0 = now();
    io_all(raw_fd, raw_buf, opt_size, 1, 0);
    if (!raw_direct)
        fdatasync(raw_fd);
    sample_t w = {.sec = now() - t0};
    flush_file(raw_fd);
    t0 = now();
    if (!raw_direct)
        posix_fadvise(raw_fd, 0, 0, POSIX_FADV_DONTNEED);
    io_all(raw_fd, raw_buf, opt_size, 0, 0);
    sample_t rd = {.sec = now() - t0};
    if (!raw_direct)
        posix_fadvise(raw_fd, 0, 0, POSIX_FADV_DONTNEED);
    t0 = now();
    io_req(raw_fd, raw_buf, opt_size, 0, 0, RAW_BIG);
    sample_t rd4 = {.sec = now() - t0};
    add_sample(&raw_wr, w);
    add_sample(&raw_rd, rd);
    add_sample(&raw_rd4, rd4);
    progress("raw (%s): write %.2f GB/s, read %.2f GB/s (4 MiB requests: %.2f GB/s)", when,
             (double)opt_size / w.sec / 1e9, (double)opt_size / rd.sec / 1e9,
             (double)opt_size / rd4.sec / 1e9);
}

static void raw_teardown(void)
{
    close(raw_fd);
    unlink(raw_path);
    munmap(raw_buf, RAW_BIG);
}

/* Sectors read/written so far by the block device holding dir. */
static int disk_bytes(uint64_t *rd, uint64_t *wr)
{
    struct stat st;
    if (stat(g_dir, &st) != 0)
        return -1;
    FILE *f = fopen("/proc/diskstats", "r");
    if (!f)
        return -1;
    char line[512];
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned maj, min;
        char name[64];
        unsigned long long v[10];
        if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu", &maj, &min, name,
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 11)
            continue;
        if (maj == major(st.st_dev) && min == minor(st.st_dev)) {
            *rd = v[2] * 512;
            *wr = v[6] * 512;
            snprintf(disk_name, sizeof disk_name, "%s", name);
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

/* ------------------------------------------------------------------------ */
/* unmanaged baseline                                                        */

static void np_round(int r)
{
    size_t n = opt_size / 8;
    uint64_t *p = map_anon(opt_size);
    int fd = open_file(np_path, 1);
    cur_c = next_value();
    k_write(p, n, cur_c);
    io_all(fd, p, opt_size, 1, 1);
    flush_file(fd);
    double t0;
    uint64_t sum;
#define NP_TIME(pl, k, stmt)                                                                       \
    do {                                                                                           \
        uint64_t f0_ = minflt();                                                                   \
        t0 = now();                                                                                \
        stmt;                                                                                      \
        double t1_ = now();                                                                        \
        add_sample(&np_res[pl][k], (sample_t){.sec = t1_ - t0, .minflt = minflt() - f0_});         \
    } while (0)
    {
        /* R read: released memory, explicit reload, then the kernel */
        madvise(p, opt_size, MADV_DONTNEED);
        NP_TIME(P_R, K_READ, (read_in(fd, p, opt_size), sum = k_read(p, n)));
        check_sum(sum, "unmanaged R read");
        NP_TIME(P_I, K_READ, sum = k_read(p, n));
        check_sum(sum, "unmanaged I read");
        uint64_t c = next_value();
        NP_TIME(P_I, K_WRITE, k_write(p, n, c));
        cur_c = c;
        NP_TIME(P_I, K_WB, write_back(fd, p, opt_size));
        madvise(p, opt_size, MADV_DONTNEED);
        uint64_t y = next_value();
        NP_TIME(P_R, K_RW, (read_in(fd, p, opt_size), k_rw(p, n, y)));
        cur_c += y;
        write_back(fd, p, opt_size);
        y = next_value();
        NP_TIME(P_I, K_RW, k_rw(p, n, y));
        cur_c += y;
        write_back(fd, p, opt_size);
        madvise(p, opt_size, MADV_DONTNEED);
        c = next_value();
        NP_TIME(P_R, K_WRITE, (read_in(fd, p, opt_size), k_write(p, n, c)));
        cur_c = c;
        NP_TIME(P_R, K_WB, write_back(fd, p, opt_size));
        progress("unmanaged round %d/%d: I read %.2f write %.2f rw %.2f | R read %.2f write %.2f "
                 "rw %.2f wb %.2f GB/s",
                 r + 1, opt_reps, (double)opt_size / np_res[P_I][K_READ].s[r].sec / 1e9,
                 (double)opt_size / np_res[P_I][K_WRITE].s[r].sec / 1e9,
                 (double)opt_size / np_res[P_I][K_RW].s[r].sec / 1e9,
                 (double)opt_size / np_res[P_R][K_READ].s[r].sec / 1e9,
                 (double)opt_size / np_res[P_R][K_WRITE].s[r].sec / 1e9,
                 (double)opt_size / np_res[P_R][K_RW].s[r].sec / 1e9,
                 (double)opt_size / np_res[P_R][K_WB].s[r].sec / 1e9);
    }
#undef NP_TIME
    madvise(p, opt_size, MADV_DONTNEED);
    read_in(fd, p, opt_size);
    check_sum(k_read(p, n), "unmanaged final reload");
    close(fd);
    unlink(np_path);
    munmap(p, opt_size);
}

/* ------------------------------------------------------------------------ */
/* SBMA                                                                      */

static void unload(void)
{
    int rc = bd_mem_unload_all();
    if (rc)
        die("bd_mem_unload_all: %s", strerror(-rc));
}

static void expect_resident(size_t want, const char *what)
{
    size_t got = bd_mem_resident_bytes();
    if (got != want)
        die("before %s: %zu bytes resident, expected %zu", what, got, want);
}

typedef struct {
    double t0;
    bd_mem_stats_t s0;
    uint64_t f0;
} tmr_t;

static void tmr_start(tmr_t *t)
{
    bd_mem_stats(&t->s0);
    t->f0 = minflt();
    t->t0 = now();
}

static sample_t tmr_stop(tmr_t *t, meas_t *m)
{
    double t1 = now();
    uint64_t f1 = minflt();
    bd_mem_stats_t s1;
    bd_mem_stats(&s1);
    sample_t s = {.sec = t1 - t->t0,
                  .faults = s1.faults - t->s0.faults,
                  .bytes_read = s1.bytes_read - t->s0.bytes_read,
                  .bytes_written = s1.bytes_written - t->s0.bytes_written,
                  .io_ns = s1.io_ns - t->s0.io_ns,
                  .minflt = f1 - t->f0};
    add_sample(m, s);
    return s;
}

/* The *-dedup paths: storage deduplication on, with a table of the size
 * bdmprun gives a node (26 MiB, zero-filled, sparse) shared with nobody:
 * what it costs when nothing is shared.  The store file is removed after
 * each use. */
#define DD_BYTES (26UL << 20)
static void *dd_region(int ti)
{
    if (ti < 2)
        return NULL;
    void *p = mmap(NULL, DD_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die("mmap of the deduplication table: %s", strerror(errno));
    return p;
}

static void dd_done(void *p)
{
    if (!p)
        return;
    munmap(p, DD_BYTES);
    char path[8192];
    snprintf(path, sizeof path, "%s/bdmem.store", g_dir);
    unlink(path);
}

/* Probe whether a tracking path is available. */
static void probe_track(int ti)
{
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = g_dir;
    cfg.track = track_val[ti];
    cfg.share = dd_region(ti);
    cfg.share_len = cfg.share ? DD_BYTES : 0;
    int rc = bd_mem_init(&cfg);
    if (rc == -ENOTSUP) {
        track_state[ti] = -1;
        progress("tracking path %s not available here (bd_mem_init: -ENOTSUP); skipped",
                 track_name[ti]);
        return;
    }
    if (rc)
        die("bd_mem_init (%s): %s", track_name[ti], strerror(-rc));
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    bd_mem_fini();
    dd_done(cfg.share);
    if (st.track != (int)track_val[ti])
        die("asked for %s tracking, got %d", track_name[ti], st.track);
    if (cfg.share && !st.dedup)
        die("asked for %s, but deduplication is off (no fast hash on this CPU)", track_name[ti]);
    track_state[ti] = 1;
    track_kfaults[ti] = st.kernel_faults;
}

static void sbma_round(int si, int ti, int bi, int r)
{
    size_t sb = sbpages[bi];
    char sbs[32];
    fmt_size(sbs, sizeof sbs, sb);
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = g_dir;
    cfg.sbpage = sb;
    cfg.chunk = opt_chunk;
    cfg.strategy = strat_val[si];
    cfg.track = track_val[ti];
    cfg.predict = opt_predict;
    cfg.verify = opt_verify;
    cfg.wp = opt_wp;
    cfg.share = dd_region(ti);
    cfg.share_len = cfg.share ? DD_BYTES : 0;
    int rc = bd_mem_init(&cfg);
    if (rc)
        die("bd_mem_init(%s, %s, sbpage %s): %s", strat_name[si], track_name[ti], sbs,
            strerror(-rc));
    size_t n = opt_size / 8;
    uint64_t *p = bd_mem_alloc(opt_size, 0);
    if (!p)
        die("bd_mem_alloc(%zu): %s", opt_size, strerror(errno));
#define M(pl, k) (&sb_res[si][ti][pl][k][bi])
    tmr_t t;
    uint64_t sum;
    /* fill fresh memory and store it */
    cur_c = next_value();
    k_write(p, n, cur_c);
    unload();
    {
        sample_t s[NPLACE][NKERN];
        /* R read: faults everything back in */
        expect_resident(0, "R read");
        tmr_start(&t);
        sum = k_read(p, n);
        s[P_R][K_READ] = tmr_stop(&t, M(P_R, K_READ));
        check_sum(sum, "SBMA R read");
        /* I read: resident and clean */
        expect_resident(opt_size, "I read");
        tmr_start(&t);
        sum = k_read(p, n);
        s[P_I][K_READ] = tmr_stop(&t, M(P_I, K_READ));
        check_sum(sum, "SBMA I read");
        /* I write, then the write-back of everything */
        uint64_t c = next_value();
        tmr_start(&t);
        k_write(p, n, c);
        s[P_I][K_WRITE] = tmr_stop(&t, M(P_I, K_WRITE));
        cur_c = c;
        tmr_start(&t);
        unload();
        s[P_I][K_WB] = tmr_stop(&t, M(P_I, K_WB));
        if (s[P_I][K_WB].bytes_written != opt_size)
            die("unload after a full write wrote %" PRIu64 " bytes, expected %zu",
                s[P_I][K_WB].bytes_written, opt_size);
        if (sbma_direct < 0) {
            bd_mem_stats_t st;
            bd_mem_stats(&st);
            sbma_direct = st.direct_io;
        }
        /* R rw */
        uint64_t y = next_value();
        expect_resident(0, "R rw");
        tmr_start(&t);
        k_rw(p, n, y);
        s[P_R][K_RW] = tmr_stop(&t, M(P_R, K_RW));
        cur_c += y;
        unload();
        /* I rw: load untimed (clean), then modify */
        rc = bd_mem_prepare(p, opt_size, 0);
        if (rc)
            die("bd_mem_prepare: %s", strerror(-rc));
        expect_resident(opt_size, "I rw");
        y = next_value();
        tmr_start(&t);
        k_rw(p, n, y);
        s[P_I][K_RW] = tmr_stop(&t, M(P_I, K_RW));
        cur_c += y;
        unload();
        /* I clean unload: the data was written during its last residency, is
     * loaded (untimed) and left unchanged; the unload must find out that
     * nothing changed.  With write prediction this is its worst case (every
     * sbpage is hashed); with exact tracking a page-table scan. */
        rc = bd_mem_prepare(p, opt_size, 0);
        if (rc)
            die("bd_mem_prepare: %s", strerror(-rc));
        expect_resident(opt_size, "I clean unload");
        tmr_start(&t);
        unload();
        s[P_I][K_CU] = tmr_stop(&t, M(P_I, K_CU));
        if (s[P_I][K_CU].bytes_written != 0)
            die("unload of unchanged data wrote %" PRIu64 " bytes", s[P_I][K_CU].bytes_written);
        /* R write (reloads: SBMA cannot know the old contents are dead), then write-back */
        c = next_value();
        expect_resident(0, "R write");
        tmr_start(&t);
        k_write(p, n, c);
        s[P_R][K_WRITE] = tmr_stop(&t, M(P_R, K_WRITE));
        cur_c = c;
        tmr_start(&t);
        unload();
        s[P_R][K_WB] = tmr_stop(&t, M(P_R, K_WB));
        progress(
            "%s %s %s round %d/%d: I read %.2f write %.2f rw %.2f wb %.2f | R read %.2f write %.2f "
            "rw %.2f wb %.2f "
            "GB/s (R read: %" PRIu64 " SBMA faults; I write: %" PRIu64 " page faults)",
            strat_name[si], track_name[ti], sbs, r + 1, opt_reps,
            (double)opt_size / s[P_I][K_READ].sec / 1e9,
            (double)opt_size / s[P_I][K_WRITE].sec / 1e9, (double)opt_size / s[P_I][K_RW].sec / 1e9,
            (double)opt_size / s[P_I][K_WB].sec / 1e9, (double)opt_size / s[P_R][K_READ].sec / 1e9,
            (double)opt_size / s[P_R][K_WRITE].sec / 1e9, (double)opt_size / s[P_R][K_RW].sec / 1e9,
            (double)opt_size / s[P_R][K_WB].sec / 1e9, s[P_R][K_READ].faults,
            s[P_I][K_WRITE].minflt);
    }
#undef M
    check_sum(k_read(p, n), "SBMA final reload");
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    sbma_predict = st.predict;
    own_rd += st.bytes_read;
    own_wr += st.bytes_written;
    bd_mem_free(p);
    bd_mem_fini();
    dd_done(cfg.share);
}

/* ------------------------------------------------------------------------ */
/* output                                                                    */

/* Reference bandwidth for a cell's ratio (0 = none). */
static double ref_gbps(int pl, int k)
{
    if (k == K_WB)
        return gbps_of(&raw_wr);
    if (k == K_CU)
        return gbps_of(&raw_rd);
    if (pl == P_R)
        return gbps_of(&raw_rd);
    return gbps_of(&np_res[P_I][k]);
}

static const char *ref_name(int pl, int k)
{
    if (k == K_WB)
        return "raw_write";
    if (k == K_CU)
        return "raw_read";
    if (pl == P_R)
        return "raw_read";
    return "unmanaged";
}

static void cell(char *out, size_t n, const meas_t *m, int pl, int k)
{
    double g = gbps_of(m), ref = ref_gbps(pl, k);
    if (m->n == 0 || g <= 0)
        snprintf(out, n, "-");
    else if (ref > 0)
        snprintf(out, n, "%.2f (%.2f)", g, g / ref);
    else
        snprintf(out, n, "%.2f", g);
}

static void print_table(FILE *f)
{
    char buf[64];
    fprintf(f, "| strategy | path | pl. |");
    for (int k = 0; k < NKERN; k++) {
        fprintf(f, " %s np |", kern_head[k]);
        for (int b = 0; b < nsb; b++) {
            fmt_size(buf, sizeof buf, sbpages[b]);
            fprintf(f, " %s |", buf);
        }
    }
    fprintf(f, "\n|---|---|---|");
    for (int k = 0; k < NKERN; k++)
        for (int b = 0; b <= nsb; b++)
            fprintf(f, "---:|");
    fputc('\n', f);
    for (int pl = 0; pl < NPLACE; pl++)
        for (int ti = 0; ti < NTRACK; ti++) {
            if (track_state[ti] != 1)
                continue;
            for (int si = 0; si < NSTRAT; si++) {
                if (!use_strat[si])
                    continue;
                fprintf(f, "| %s | %s | %s |", strat_name[si], track_name[ti], place_name[pl]);
                for (int k = 0; k < NKERN; k++) {
                    cell(buf, sizeof buf, &np_res[pl][k], pl, k);
                    fprintf(f, " %s |", buf);
                    for (int b = 0; b < nsb; b++) {
                        cell(buf, sizeof buf, &sb_res[si][ti][pl][k][b], pl, k);
                        fprintf(f, " %s |", buf);
                    }
                }
                fputc('\n', f);
            }
        }
}

static void csv_row(FILE *f, const char *strat, const char *track, const char *pl, const char *kern,
                    size_t sb, const meas_t *m, double ref, const char *refname)
{
    sample_t med, lo, hi;
    if (!median(m, &med))
        return;
    lo = hi = m->s[0];
    for (int i = 1; i < m->n; i++) {
        if (m->s[i].sec < lo.sec)
            lo = m->s[i];
        if (m->s[i].sec > hi.sec)
            hi = m->s[i];
    }
    double g = (double)opt_size / med.sec / 1e9;
    fprintf(f, "%s,%s,%s,%s,%zu,%zu,%d,%.6f,%.6f,%.6f,%.4f,", strat, track, pl, kern, sb, opt_size,
            m->n, med.sec, lo.sec, hi.sec, g);
    if (ref > 0)
        fprintf(f, "%.4f,%s,", g / ref, refname);
    else
        fprintf(f, ",,");
    fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%" PRIu64 "\n", med.faults, med.bytes_read,
            med.bytes_written, (double)med.io_ns * 1e-9, med.minflt);
}

static void write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "strategy,track,placement,kernel,sbpage,bytes,samples,median_s,min_s,max_s,gbps,"
               "ratio,ratio_ref,"
               "faults,bytes_read,bytes_written,io_s,page_faults\n");
    csv_row(f, "raw", "odirect", "-", "read", 0, &raw_rd, 0, "");
    csv_row(f, "raw", "odirect", "-", "write", 0, &raw_wr, 0, "");
    csv_row(f, "raw", "odirect_4m", "-", "read", 0, &raw_rd4, 0, "");
    for (int pl = 0; pl < NPLACE; pl++)
        for (int k = 0; k < NKERN; k++)
            csv_row(f, "unmanaged", "-", place_name[pl], kern_name[k], 0, &np_res[pl][k],
                    ref_gbps(pl, k), ref_name(pl, k));
    for (int pl = 0; pl < NPLACE; pl++)
        for (int ti = 0; ti < NTRACK; ti++)
            for (int si = 0; si < NSTRAT; si++)
                for (int k = 0; k < NKERN; k++)
                    for (int b = 0; b < nsb; b++)
                        csv_row(f, strat_name[si], track_name[ti], place_name[pl], kern_name[k],
                                sbpages[b], &sb_res[si][ti][pl][k][b], ref_gbps(pl, k),
                                ref_name(pl, k));
    if (fclose(f) != 0)
        die("writing %s: %s", path, strerror(errno));
}

static const char *fs_name(long type)
{
    switch ((unsigned long)type) {
    case 0xEF53UL: return "ext4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x01021994UL: return "tmpfs";
    case 0x794C7630UL: return "overlayfs";
    case 0x2FC12FC1UL: return "zfs";
    case 0x6969UL: return "nfs";
    default: return "other";
    }
}

/* The CRC32C every sbpage read back is checked with (bd_mem_config_t.verify),
 * against memcpy of the same bytes: GB/s of each, measured alternately in
 * 7 rounds over a 32 MiB buffer (median), so that other load on the machine
 * hits both alike.  Their ratio is the check's cost per byte in units of a
 * copy, which is what a reload costs the CPU at least. */
static double g_crc_gbs, g_copy_gbs;
static void crc_speed(void)
{
    size_t n = 32 * MIB;
    uint8_t *a = map_anon(n), *b = map_anon(n);
    if (!a || !b)
        return;
    memset(a, 0x5a, n);
    memset(b, 0, n);
    double tc[7], tm[7];
    uint32_t sink = 0;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        sink ^= bd_crc32c(0, a, n);
        double t1 = now();
        memcpy(b, a, n);
        double t2 = now();
        tc[r] = t1 - t0;
        tm[r] = t2 - t1;
        sink ^= b[r];
    }
    for (int i = 0; i < 7; i++) /* sort both (insertion), take the middles */
        for (int j = i; j > 0 && tc[j] < tc[j - 1]; j--) {
            double x = tc[j];
            tc[j] = tc[j - 1];
            tc[j - 1] = x;
        }
    for (int i = 0; i < 7; i++)
        for (int j = i; j > 0 && tm[j] < tm[j - 1]; j--) {
            double x = tm[j];
            tm[j] = tm[j - 1];
            tm[j - 1] = x;
        }
    g_crc_gbs = (double)n / tc[3] / 1e9;
    g_copy_gbs = (double)n / tm[3] / 1e9 + (sink == 0xffffffffu ? 1e-12 : 0);
    munmap(a, n);
    munmap(b, n);
}

static void print_report(double elapsed)
{
    char sz[32], ch[32];
    fmt_size(sz, sizeof sz, opt_size);
    fmt_size(ch, sizeof ch, opt_chunk ? opt_chunk : 65536);
    struct utsname u;
    uname(&u);
    struct statfs sfs;
    const char *fs = statfs(g_dir, &sfs) == 0 ? fs_name((long)sfs.f_type) : "?";
    long mem_mib = (long)(sysconf(_SC_PHYS_PAGES) / 1024 * (sysconf(_SC_PAGESIZE) / 1024));
    char thp[64] = "?";
    FILE *tf = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (tf) {
        if (fgets(thp, sizeof thp, tf))
            thp[strcspn(thp, "\n")] = 0;
        fclose(tf);
    }
    printf("# mem_bench: SBMA micro-benchmark\n\n");
    printf("- allocation %s, %d repetitions per measurement (median; each repetition is a round "
           "over all "
           "configurations), %.0f s in total\n",
           sz, opt_reps, elapsed);
    printf("- machine: %ld CPUs online, %ld MiB RAM, Linux %s %s, THP %s; mem_bench built as %s\n",
           sysconf(_SC_NPROCESSORS_ONLN), mem_mib, u.release, u.machine, thp, MEM_BENCH_BUILD_TYPE);
    printf("- load average (1/5/15 min) at start %s, at end %s\n", load_begin, load_end);
    printf("- storage: fresh directory under %s (%s); raw %s sequential bandwidth, 1 MiB requests, "
           "queue depth 1, "
           "median of %d (one per round and one at the end): read %.2f GB/s, write %.2f GB/s (read "
           "with 4 MiB "
           "requests, for context: %.2f GB/s)\n",
           opt_parent, fs, raw_direct ? "O_DIRECT" : "BUFFERED (no O_DIRECT!)", raw_rd.n,
           gbps_of(&raw_rd), gbps_of(&raw_wr), gbps_of(&raw_rd4));
    if (disk_found)
        printf("- I/O on %s during the run: this program %.1f GB read, %.1f GB written; other I/O "
               "%.2f GB read, %.2f GB "
               "written\n",
               disk_name, (double)own_rd / 1e9, (double)own_wr / 1e9,
               ((double)(disk_rd1 - disk_rd0) - (double)own_rd) / 1e9,
               ((double)(disk_wr1 - disk_wr0) - (double)own_wr) / 1e9);
    printf("- SBMA backing files: %s; LRLW chunk %s; tracking paths:",
           sbma_direct == 0   ? "buffered (no O_DIRECT!)"
           : sbma_direct == 1 ? "O_DIRECT"
                              : "?",
           ch);
    for (int ti = 0; ti < NTRACK; ti++) {
        if (track_state[ti] == 1)
            printf(" %s%s", track_name[ti],
                   ti == 0 ? (track_kfaults[ti] ? " (faults in syscalls handled)"
                                                : " (user-mode faults only)")
                           : "");
        else if (track_state[ti] == -1)
            printf(" %s unavailable", track_name[ti]);
    }
    printf("\n- write prediction (bd_mem_config_t.predict): %s\n", sbma_predict == 1   ? "on"
                                                                   : sbma_predict == 0 ? "off"
                                                                                       : "?");
    printf("- CRC32C check of what is read back (bd_mem_config_t.verify): %s\n\n",
           opt_verify < 0 ? "off" : "on");
    if (g_crc_gbs > 0)
        printf("- CRC32C (%s): %.2f GB/s, memcpy of the same 32 MiB %.2f GB/s, alternately "
               "(median of 7): the check costs %.2f copies per byte\n\n",
               bd_crc32c_hw() ? "crc32 instruction" : "tables", g_crc_gbs, g_copy_gbs,
               g_copy_gbs / g_crc_gbs);
    print_table(stdout);
    printf("\nCells: GB/s (10^9 bytes/s) over the allocation, and in parentheses the ratio to the "
           "reference:\n"
           "placement I (data resident and clean) vs unmanaged memory (np, anonymous mmap) running "
           "the same kernel;\n"
           "placement R (data unloaded with bd_mem_unload_all() before the loop) vs the raw "
           "O_DIRECT read bandwidth, for\n"
           "write too, because the loop reloads the stored data before overwriting it; write-back "
           "(the\n"
           "bd_mem_unload_all() after a full write, in I after the I write, in R after the R "
           "write) vs the raw O_DIRECT\n"
           "write bandwidth.  np in R: explicit O_DIRECT pread of the file (1 MiB requests) into "
           "released memory, then\n"
           "the kernel; np write-back: O_DIRECT pwrite (1 MiB requests).  Clean unload (I only): "
           "bd_mem_unload_all()\n"
           "of data written in its previous residency, reloaded and left unchanged (nothing is "
           "written), vs the raw\n"
           "O_DIRECT read bandwidth: a ratio of 4 means it costs a quarter of reloading the same "
           "bytes.  ARAW and ARLW differ only in\n"
           "bd_mem_block_point(), which this benchmark does not call: their rows measure the same "
           "code.\n");
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: mem_bench [options]\n"
        "  -s, --size SIZE       allocation size, K/M/G suffixes (default 1G; 128M with --quick)\n"
        "  -q, --quick           CI-sized run (128 MiB unless --size is given)\n"
        "  -d, --dir DIR         parent of the fresh storage directory (default $TMPDIR or /tmp)\n"
        "  -r, --reps N          repetitions per measurement, median reported (default 3, max %d)\n"
        "      --csv FILE        write every measurement as CSV\n"
        "      --strategies LIST comma separated subset of araw,arlw,lrlw\n"
        "      --tracks LIST     comma separated subset of uffd,mprotect,uffd-dedup,\n"
        "                        mprotect-dedup (default: uffd,mprotect; *-dedup: storage\n"
        "                        deduplication on, nothing shared)\n"
        "      --sbpages LIST    sbpage sizes (default 4K,16K,64K,256K,1M)\n"
        "      --chunk SIZE      LRLW load chunk (bd_mem_config_t.chunk; default 0 = 64 KiB)\n"
        "      --predict on|off  write prediction (bd_mem_config_t.predict; default: the "
        "manager's)\n"
        "      --verify on|off   CRC32C check of what is read back (bd_mem_config_t.verify; "
        "default on)\n"
        "      --wp async|sync   uffd write tracking (bd_mem_config_t.wp; default: sync from 1M "
        "sbpages up)\n"
        "  -h, --help\n",
        MAX_REPS);
}

int main(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"size", required_argument, NULL, 's'},    {"quick", no_argument, NULL, 'q'},
        {"dir", required_argument, NULL, 'd'},     {"reps", required_argument, NULL, 'r'},
        {"csv", required_argument, NULL, 'C'},     {"strategies", required_argument, NULL, 'S'},
        {"tracks", required_argument, NULL, 'T'},  {"sbpages", required_argument, NULL, 'B'},
        {"chunk", required_argument, NULL, 'c'},   {"help", no_argument, NULL, 'h'},
        {"predict", required_argument, NULL, 'P'}, {"wp", required_argument, NULL, 'W'},
        {"verify", required_argument, NULL, 'V'},  {NULL, 0, NULL, 0}};
    int size_given = 0, c;
    t_begin = now();
    g_page = (size_t)sysconf(_SC_PAGESIZE);
    while ((c = getopt_long(argc, argv, "s:qd:r:h", lopts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_size(optarg, &opt_size) || opt_size == 0) {
                fprintf(stderr, "mem_bench: bad size '%s'\n", optarg);
                return 2;
            }
            size_given = 1;
            break;
        case 'q': opt_quick = 1; break;
        case 'd': opt_parent = optarg; break;
        case 'r':
            opt_reps = atoi(optarg);
            if (opt_reps < 1 || opt_reps > MAX_REPS) {
                fprintf(stderr, "mem_bench: -r must be 1..%d\n", MAX_REPS);
                return 2;
            }
            break;
        case 'C': opt_csv = optarg; break;
        case 'P':
            if (!strcmp(optarg, "on"))
                opt_predict = 1;
            else if (!strcmp(optarg, "off"))
                opt_predict = -1;
            else {
                fprintf(stderr, "mem_bench: --predict must be on or off\n");
                return 2;
            }
            break;
        case 'V':
            if (!strcmp(optarg, "on") || !strcmp(optarg, "off")) {
                opt_verify = !strcmp(optarg, "on") ? 0 : -1;
            } else {
                fprintf(stderr, "mem_bench: --verify must be on or off\n");
                return 2;
            }
            break;
        case 'W':
            if (!strcmp(optarg, "async"))
                opt_wp = BD_MEM_WP_ASYNC;
            else if (!strcmp(optarg, "sync"))
                opt_wp = BD_MEM_WP_SYNC;
            else {
                fprintf(stderr, "mem_bench: --wp must be async or sync\n");
                return 2;
            }
            break;
        case 'S':
            if (parse_names(optarg, strat_name, NSTRAT, use_strat)) {
                fprintf(stderr, "mem_bench: bad --strategies '%s'\n", optarg);
                return 2;
            }
            break;
        case 'T':
            if (parse_names(optarg, track_name, NTRACK, use_track)) {
                fprintf(stderr, "mem_bench: bad --tracks '%s'\n", optarg);
                return 2;
            }
            break;
        case 'B': {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            nsb = 0;
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                size_t v;
                if (nsb == MAX_SB || parse_size(t, &v) || v == 0 || v % g_page != 0) {
                    fprintf(stderr, "mem_bench: bad --sbpages '%s' (at most %d multiples of %zu)\n",
                            optarg, MAX_SB, g_page);
                    return 2;
                }
                sbpages[nsb++] = v;
            }
            qsort(sbpages, (size_t)nsb, sizeof sbpages[0], cmp_size);
            break;
        }
        case 'c':
            if (parse_size(optarg, &opt_chunk)) {
                fprintf(stderr, "mem_bench: bad --chunk '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    if (!size_given)
        opt_size = opt_quick ? 128 * MIB : 1024 * MIB;
    /* whole I/O requests and whole sbpages */
    size_t unit = IO_REQ;
    for (int b = 0; b < nsb; b++)
        if (sbpages[b] > unit)
            unit = sbpages[b];
    opt_size = (opt_size + unit - 1) / unit * unit;
    /* drop sbpage sizes the OS cannot do (page size above 4 KiB) */
    for (int b = 0; b < nsb;) {
        if (sbpages[b] % g_page) {
            memmove(&sbpages[b], &sbpages[b + 1], (size_t)(nsb - b - 1) * sizeof sbpages[0]);
            nsb--;
        } else {
            b++;
        }
    }
    if (!opt_parent) {
        opt_parent = getenv("TMPDIR");
        if (!opt_parent || !opt_parent[0])
            opt_parent = "/tmp";
    }
    snprintf(g_dir, sizeof g_dir, "%s/mem_bench.XXXXXX", opt_parent);
    if (!mkdtemp(g_dir)) {
        fprintf(stderr, "mem_bench: mkdtemp in %s: %s\n", opt_parent, strerror(errno));
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
    snprintf(raw_path, sizeof raw_path, "%s/raw.dat", g_dir);
    snprintf(np_path, sizeof np_path, "%s/np.dat", g_dir);
    char sz[32];
    fmt_size(sz, sizeof sz, opt_size);
    read_loadavg(load_begin, sizeof load_begin);
    progress("size %s, %d reps, storage %s, load average %s", sz, opt_reps, g_dir, load_begin);

    for (int ti = 0; ti < NTRACK; ti++)
        if (use_track[ti])
            probe_track(ti);
    int any_track = 0;
    for (int ti = 0; ti < NTRACK; ti++)
        any_track |= track_state[ti] == 1;
    if (!any_track)
        die("no tracking path available");

    /* Each repetition is a round over all configurations, so that a period of
   * other load on the machine or the disk hits one sample of many
   * configurations rather than every sample of one. */
    disk_found = disk_bytes(&disk_rd0, &disk_wr0) == 0;
    raw_setup();
    int nconf = 0;
    for (int ti = 0; ti < NTRACK; ti++)
        for (int si = 0; si < NSTRAT; si++)
            if (track_state[ti] == 1 && use_strat[si])
                nconf += nsb;
    for (int r = 0; r < opt_reps; r++) {
        uint64_t d0r = 0, d0w = 0, d1r = 0, d1w = 0, o0r = own_rd, o0w = own_wr;
        int dk = disk_bytes(&d0r, &d0w) == 0;
        double tr = now();
        char when[32];
        snprintf(when, sizeof when, "round %d/%d", r + 1, opt_reps);
        raw_sample(when);
        np_round(r);
        int iconf = 0;
        /* the paths innermost: a path and its -dedup twin run back to back,
         * so that load that comes and goes hits both alike */
        for (int si = 0; si < NSTRAT; si++) {
            if (!use_strat[si])
                continue;
            for (int b = 0; b < nsb; b++) {
                for (int tk = 0; tk < NTRACK; tk++) {
                    static const int order[NTRACK] = {0, 2, 1, 3};
                    int ti = order[tk];
                    if (track_state[ti] != 1)
                        continue;
                    char sbs[32];
                    fmt_size(sbs, sizeof sbs, sbpages[b]);
                    progress("round %d/%d, config %d/%d: %s %s sbpage %s", r + 1, opt_reps, ++iconf,
                             nconf, strat_name[si], track_name[ti], sbs);
                    sbma_round(si, ti, b, r);
                }
            }
        }
        if (dk && disk_bytes(&d1r, &d1w) == 0)
            progress(
                "round %d/%d took %.0f s; other I/O on %s meanwhile: %.2f GB read, %.2f GB written",
                r + 1, opt_reps, now() - tr, disk_name,
                ((double)(d1r - d0r) - (double)(own_rd - o0r)) / 1e9,
                ((double)(d1w - d0w) - (double)(own_wr - o0w)) / 1e9);
    }
    raw_sample("end");
    raw_teardown();
    if (disk_found)
        disk_found = disk_bytes(&disk_rd1, &disk_wr1) == 0;
    read_loadavg(load_end, sizeof load_end);
    crc_speed();
    print_report(now() - t_begin);
    if (opt_csv)
        write_csv(opt_csv);
    cleanup_dir();
    progress("done");
    return 0;
}
