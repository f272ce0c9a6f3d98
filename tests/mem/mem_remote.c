/* The memory manager's side of the remote-memory tier (cfg.rput, rget,
 * rdrop), against a tier faked in this process: a table of sbpages.
 * Checks that write-back goes to the tier (nothing to the backing file),
 * that loads come back from it with the right data, that a refused run is
 * stored locally (and the tier holds no stale copy of it), and that
 * discard and free make the manager forget its remote copies (the table is
 * empty at the end).
 * usage: mem_remote <araw|arlw|lrlw> <uffd|mprotect> */
#include <pthread.h>

#include "memtest.h"

#define SB (64u << 10)
#define MAXID 16
#define MAXSB 1024

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *g_tier[MAXID][MAXSB]; /* the fake tier's copies */
static int g_held, g_refuse_odd, g_bad;
static uint64_t g_puts, g_gets, g_drops;

static void drop_locked(uint64_t id, size_t sb, size_t n)
{
    for (size_t i = sb; i < sb + n; i++)
        if (g_tier[id][i]) {
            free(g_tier[id][i]);
            g_tier[id][i] = NULL;
            g_held--;
        }
}

static int rput(void *ctx, int lane, uint64_t id, size_t sb, size_t n, const void *buf)
{
    (void)ctx;
    if (id >= MAXID || sb + n > MAXSB || lane < -1 || lane > 3 || n * SB > (1u << 20)) {
        g_bad = 1;
        return -EINVAL;
    }
    pthread_mutex_lock(&g_lock);
    int refuse = g_refuse_odd && (((sb * SB) >> 20) & 1); /* every other MiB */
    drop_locked(id, sb, n);                               /* replaced, or gone with the refusal */
    for (size_t i = 0; i < n && !refuse; i++) {
        g_tier[id][sb + i] = malloc(SB);
        memcpy(g_tier[id][sb + i], (const uint8_t *)buf + i * SB, SB);
        g_held++;
    }
    g_puts++;
    pthread_mutex_unlock(&g_lock);
    return refuse ? BD_MEM_REMOTE_REFUSED : 0;
}

static int rget(void *ctx, int lane, uint64_t id, size_t sb, size_t n, void *buf)
{
    (void)ctx;
    (void)lane;
    int rc = 0;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < n; i++) {
        if (id >= MAXID || sb + i >= MAXSB || !g_tier[id][sb + i]) {
            g_bad = 1; /* asked for a copy the tier does not have */
            rc = -ENODATA;
            break;
        }
        memcpy((uint8_t *)buf + i * SB, g_tier[id][sb + i], SB);
    }
    g_gets++;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static void rdrop(void *ctx, uint64_t id, size_t sb, size_t n)
{
    (void)ctx;
    pthread_mutex_lock(&g_lock);
    if (id < MAXID && sb + n <= MAXSB)
        drop_locked(id, sb, n);
    g_drops++;
    pthread_mutex_unlock(&g_lock);
}

static uint8_t pat(size_t k, int round) { return (uint8_t)(k * 131 + (k >> 16) * 7 + round); }

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = SB;
    cfg.strategy = mt_strategy(argv[1]);
    cfg.track = mt_track(argv[2]);
    cfg.rput = rput;
    cfg.rget = rget;
    cfg.rdrop = rdrop;
    mt_init(&cfg);
    const size_t n = 4u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    for (size_t k = 0; k < n; k++)
        a[k] = pat(k, 0);
    bd_mem_stats_t s0, s1;
    CHECK(bd_mem_unload_all() == 0);
    bd_mem_stats(&s0);
    CHECKF(s0.remote_put == n && s0.bytes_written == 0 && g_held == (int)(n / SB),
           "first unload: %llu to the tier, %llu to storage, %d held",
           (unsigned long long)s0.remote_put, (unsigned long long)s0.bytes_written, g_held);

    /* everything comes back from the tier */
    for (size_t k = 0; k < n; k += 997)
        CHECKF(a[k] == pat(k, 0), "offset %zu after the first unload", k);
    bd_mem_stats(&s1);
    CHECKF(s1.remote_get > 0 && s1.bytes_read == 0, "loads: %llu from the tier, %llu from storage",
           (unsigned long long)s1.remote_get, (unsigned long long)s1.bytes_read);

    /* rewritten; the tier refuses runs that start in an odd MiB */
    for (size_t k = 0; k < n; k++)
        a[k] = pat(k, 1);
    g_refuse_odd = 1;
    CHECK(bd_mem_unload_all() == 0);
    g_refuse_odd = 0;
    bd_mem_stats(&s1);
    CHECKF(s1.remote_refused > 0 && s1.bytes_written == s1.remote_refused,
           "refused %llu, written to storage %llu", (unsigned long long)s1.remote_refused,
           (unsigned long long)s1.bytes_written);
    for (size_t k = 0; k < n; k++)
        if (a[k] != pat(k, 1))
            CHECKF(0, "offset %zu after a partly refused unload: %u, not %u", k, a[k], pat(k, 1));

    /* a discarded range is forgotten; the rest still comes back right */
    CHECK(bd_mem_unload_all() == 0);
    int before = g_held;
    CHECK(bd_mem_discard(a + 8 * SB, 16 * SB) == 0);
    CHECKF(g_held < before, "discard left the tier's copies (%d held, %d before)", g_held, before);
    for (size_t k = 0; k < n; k += 501)
        CHECKF(a[k] == (k >= 8 * SB && k < 24 * SB ? 0 : pat(k, 1)), "offset %zu after discard", k);

    bd_mem_free(a);
    CHECKF(g_held == 0, "free left %d copies in the tier", g_held);
    CHECKF(!g_bad, "the manager asked the tier for something it never stored or out of bounds");
    mt_finish();
    printf("PASS mem_remote %s %s: %llu puts, %llu gets, %llu drops\n", argv[1], argv[2],
           (unsigned long long)g_puts, (unsigned long long)g_gets, (unsigned long long)g_drops);
    return 0;
}
