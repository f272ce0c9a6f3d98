/* Storage deduplication (bd_mem_config_t.share, src/mem/mem_dedup.c).
 * usage: mem_dedup <araw|arlw|lrlw> <uffd|mprotect> <sbpage>
 *
 * Two processes share a table (a shared anonymous mapping made before the
 * fork) and a directory:
 *   - the parent stores allocation A (pattern P) : P is written once;
 *   - the child stores B = P: nothing written, MEM_DEDUP = |B|, the copy
 *     compared byte for byte (dedup_verify); B reads back right; the child
 *     changes every other sbpage of B (copy on write), stores it, checks
 *     it, and exits (its references go);
 *   - the parent's A still reads P (the child's writes got their own slots);
 *   - C = P in the parent: nothing written; A freed, C still reads P
 *     (references); rewriting C in place with Q writes it, P stays only
 *     where referenced;
 *   - an all-zero allocation written explicitly is not stored (dedup_zero);
 *   - after bd_mem_fini every slot has been punched: the store file holds
 *     no blocks.
 * Exit 0 pass, 1 fail, 77 skip (no tracking path, or no fast hash: then
 * deduplication is off). */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "memtest.h"

static size_t SB;
#define SHARE (2u << 20)

static uint64_t pat(size_t i, uint64_t seed) { return (i + 1) * 0x9E3779B97F4A7C15ULL ^ seed; }

static void fill(uint64_t *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pat(i, seed);
}

static size_t bad_words(const uint64_t *p, size_t n, uint64_t seed)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != pat(i, seed);
    return bad;
}

static void init(bd_mem_config_t *cfg, const char *strategy, const char *track, void *share)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->dir = mt_dir;
    cfg->sbpage = SB;
    cfg->strategy = mt_strategy(strategy);
    cfg->track = mt_track(track);
    cfg->share = share;
    cfg->share_len = SHARE;
    mt_init(cfg);
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    if (!st.dedup) {
        fprintf(stderr, "deduplication is off here (no fast hash): skipping\n");
        bd_mem_fini();
        exit(SKIP);
    }
}

#define DELTA(field) (s1.field - s0.field)

int main(int argc, char **argv)
{
    if (argc != 4)
        return 1;
    SB = mt_parse_size(argv[3]);
    mt_mkdir();
    void *share = mmap(NULL, SHARE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(share != MAP_FAILED);
    const size_t bytes = 16 * SB + (SB < (1u << 20) ? (2u << 20) : 0), n = bytes / 8;
    int go[2], done[2];
    CHECK(pipe(go) == 0 && pipe(done) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    bd_mem_config_t cfg;
    bd_mem_stats_t s0, s1;
    char c = 0;
    if (pid == 0) {
        CHECK(read(go[0], &c, 1) == 1);
        if (c == 'S')
            _exit(SKIP);
        init(&cfg, argv[1], argv[2], share);
        uint64_t *b = bd_mem_alloc(bytes, 0);
        CHECK(b);
        fill(b, n, 1);
        bd_mem_stats(&s0);
        CHECK(bd_mem_unload_all() == 0);
        bd_mem_stats(&s1);
        CHECKF(DELTA(bytes_written) == 0, "B = A written: %llu bytes",
               (unsigned long long)DELTA(bytes_written));
        CHECKF(DELTA(dedup_bytes) == bytes, "dedup %llu of %zu",
               (unsigned long long)DELTA(dedup_bytes), bytes);
        CHECK(DELTA(dedup_verify) == bytes);
        CHECKF(bad_words(b, n, 1) == 0, "B reads back wrong");
        /* copy on write: every other sbpage changes */
        for (size_t s = 0; s < bytes / SB; s += 2)
            b[s * SB / 8 + 5] ^= 0xff;
        CHECK(bd_mem_unload_all() == 0);
        for (size_t i = 0; i < n; i++) {
            uint64_t want = pat(i, 1) ^ ((i * 8 / SB) % 2 == 0 && i % (SB / 8) == 5 ? 0xff : 0);
            CHECKF(b[i] == want, "B word %zu after the change", i);
        }
        bd_mem_fini();
        CHECK(write(done[1], "d", 1) == 1);
        _exit(0);
    }
    bd_mem_config_t pc;
    memset(&pc, 0, sizeof pc);
    pc.dir = mt_dir;
    pc.sbpage = SB;
    pc.strategy = mt_strategy(argv[1]);
    pc.track = mt_track(argv[2]);
    pc.share = share;
    pc.share_len = SHARE;
    int rc = bd_mem_init(&pc);
    bd_mem_stats(&s0);
    if (rc == -ENOTSUP || (rc == 0 && !s0.dedup)) {
        if (rc == 0)
            bd_mem_fini();
        CHECK(write(go[1], "S", 1) == 1);
        waitpid(pid, NULL, 0);
        fprintf(stderr, "tracking path or deduplication not available here: skipping\n");
        mt_rmdir();
        return SKIP;
    }
    CHECKF(rc == 0, "bd_mem_init: %s", strerror(-rc));
    uint64_t *a = bd_mem_alloc(bytes, 0);
    CHECK(a);
    fill(a, n, 1);
    bd_mem_stats(&s0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s1);
    CHECKF(DELTA(bytes_written) == bytes, "A written: %llu bytes",
           (unsigned long long)DELTA(bytes_written));
    CHECK(write(go[1], "g", 1) == 1);
    CHECK(read(done[0], &c, 1) == 1);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status %d)", status);
    CHECKF(bad_words(a, n, 1) == 0, "A changed by the child's writes");

    /* C = P in the same process: refers to A's slots */
    uint64_t *cc = bd_mem_alloc(bytes, 0);
    CHECK(cc);
    CHECK(bd_mem_unload_all() == 0);
    fill(cc, n, 1);
    bd_mem_stats(&s0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s1);
    CHECKF(DELTA(bytes_written) == 0 && DELTA(dedup_bytes) == bytes, "C: written %llu, dedup %llu",
           (unsigned long long)DELTA(bytes_written), (unsigned long long)DELTA(dedup_bytes));
    bd_mem_free(a);
    CHECKF(bad_words(cc, n, 1) == 0, "C wrong after A was freed");
    fill(cc, n, 2);
    bd_mem_stats(&s0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s1);
    CHECKF(DELTA(bytes_written) == bytes, "C rewritten: %llu bytes",
           (unsigned long long)DELTA(bytes_written));
    CHECKF(bad_words(cc, n, 2) == 0, "C wrong after its rewrite");
    bd_mem_free(cc);

    /* zeros written explicitly are not stored */
    volatile uint64_t *z = bd_mem_alloc(bytes, 0);
    CHECK(z);
    for (size_t i = 0; i < n; i++)
        z[i] = 0;
    bd_mem_stats(&s0);
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s1);
    /* tracked as written: dropped as zeros; loaded untracked (write
     * prediction, fresh memory): its hash equals that of zeros, clean */
    CHECKF(DELTA(bytes_written) == 0 && DELTA(dedup_zero) + DELTA(verified_clean) == bytes,
           "zeros: written %llu, dropped %llu, clean %llu, hashed %llu",
           (unsigned long long)DELTA(bytes_written), (unsigned long long)DELTA(dedup_zero),
           (unsigned long long)DELTA(verified_clean), (unsigned long long)DELTA(bytes_hashed));
    for (size_t i = 0; i < n; i += 97)
        CHECK(z[i] == 0);
    bd_mem_free((void *)z);

    bd_mem_fini();
    char path[600];
    snprintf(path, sizeof path, "%s/bdmem.store", mt_dir);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECKF(st.st_blocks == 0, "the store still holds %lld blocks after every reference went",
           (long long)st.st_blocks);
    unlink(path);
    mt_finish();
    return 0;
}
