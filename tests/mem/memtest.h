/* memtest.h - small helpers shared by the bdmem tests.
 * Exit codes: 0 pass, 1 fail, 77 skip. */
#ifndef MEMTEST_H
#define MEMTEST_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bd_mem.h"

#define SKIP 77

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static char mt_dir[256];
static inline void mt_rmdir(void);
static void mt_cleanup_at_exit(void)
{
    if (mt_dir[0])
        mt_rmdir(); /* also after a failed CHECK */
}

static inline const char *mt_mkdir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(mt_dir, sizeof mt_dir, "%s/bdmem-test-XXXXXX", base);
    if (!mkdtemp(mt_dir)) {
        perror("mkdtemp");
        exit(1);
    }
    atexit(mt_cleanup_at_exit);
    return mt_dir;
}

/* Number of entries (other than . and ..) in the test directory. */
static inline int mt_nfiles(void)
{
    DIR *d = opendir(mt_dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static inline void mt_rmdir(void)
{
    DIR *d = opendir(mt_dir);
    if (d) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", mt_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(mt_dir);
    mt_dir[0] = 0;
}

static inline bd_mem_strategy_t mt_strategy(const char *s)
{
    if (!strcmp(s, "araw"))
        return BD_MEM_ARAW;
    if (!strcmp(s, "arlw"))
        return BD_MEM_ARLW;
    if (!strcmp(s, "lrlw"))
        return BD_MEM_LRLW;
    fprintf(stderr, "bad strategy %s\n", s);
    exit(1);
}

static inline bd_mem_track_t mt_track(const char *s)
{
    if (!strcmp(s, "uffd"))
        return BD_MEM_TRACK_UFFD;
    if (!strcmp(s, "mprotect"))
        return BD_MEM_TRACK_MPROTECT;
    if (!strcmp(s, "auto"))
        return BD_MEM_TRACK_AUTO;
    fprintf(stderr, "bad track %s\n", s);
    exit(1);
}

/* Initialize with the given parameters; exits 77 if the requested tracking
 * path is not available here.  The manager reads no environment; CTest runs
 * some tests in another mode through the harness's own variables:
 * MEMTEST_WP=async|sync sets cfg->wp, MEMTEST_PREDICT=on|off cfg->predict. */
static inline void mt_init(bd_mem_config_t *cfg)
{
    const char *wp = getenv("MEMTEST_WP");
    if (wp && !strcmp(wp, "async"))
        cfg->wp = BD_MEM_WP_ASYNC;
    if (wp && !strcmp(wp, "sync"))
        cfg->wp = BD_MEM_WP_SYNC;
    const char *pr = getenv("MEMTEST_PREDICT");
    if (pr && !strcmp(pr, "on"))
        cfg->predict = 1;
    if (pr && !strcmp(pr, "off"))
        cfg->predict = -1;
    int rc = bd_mem_init(cfg);
    if (rc == -ENOTSUP) {
        fprintf(stderr, "tracking path not available here: skipping\n");
        mt_rmdir();
        exit(SKIP);
    }
    CHECKF(rc == 0, "bd_mem_init: %s", strerror(-rc));
}

static inline void mt_setup(bd_mem_config_t *cfg, const char *strategy, size_t sbpage,
                            const char *track)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->dir = mt_mkdir();
    cfg->sbpage = sbpage;
    cfg->strategy = mt_strategy(strategy);
    cfg->track = mt_track(track);
    mt_init(cfg);
}

/* Finish: bd_mem_fini must remove every backing file. */
static inline void mt_finish(void)
{
    bd_mem_fini();
    int n = mt_nfiles();
    mt_rmdir();
    CHECKF(n == 0, "%d backing files left after bd_mem_fini", n);
}

static inline uint64_t mt_rng(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static inline size_t mt_parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10;
    if (*end == 'm' || *end == 'M')
        v <<= 20;
    return v;
}

static inline void mt_stats(bd_mem_stats_t *s) { bd_mem_stats(s); }

#endif
