/* Several threads fault on the same sbpage at the same time.
 * usage: mem_threads <araw|arlw|lrlw> <uffd|mprotect>
 * Every round the main thread unloads; then all threads start together and
 * read/write the same sbpage (each writes its own bytes).  No thread may see
 * a partially loaded sbpage and no write may be lost. */
#include <pthread.h>

#include "memtest.h"

#define NT 8
#define ROUNDS 60
#define SB (64u << 10)

static uint8_t *buf;
static size_t nbytes = 2u << 20;
static pthread_barrier_t bar;
static volatile int failed;
static volatile int slow;

static int acq(void *ctx, size_t n, size_t *give_back)
{
    (void)give_back;
    (void)ctx;
    (void)n;
    if (slow)
        usleep(300); /* widen the window in which other threads pile up */
    return 0;
}
static void rel(void *ctx, size_t n)
{
    (void)ctx;
    (void)n;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&bar);
        size_t pg = (size_t)(r % 7) * SB; /* all threads hit the same sbpage */
        uint8_t expect = (uint8_t)(r * 3 + 1);
        /* read: whole sbpage must hold the previous round's pattern */
        for (size_t k = 0; k < SB; k += 64) {
            size_t off = pg + k;
            if (off % 64 >= NT && buf[off] != expect)
                failed = 1;
        }
        /* write own byte in every 64-byte line of the sbpage */
        for (size_t k = 0; k < SB; k += 64)
            buf[pg + k + (size_t)id] = (uint8_t)(r + id);
        pthread_barrier_wait(&bar);
    }
    return NULL;
}

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
    cfg.acquire = acq;
    cfg.release = rel;
    mt_init(&cfg);
    buf = bd_mem_alloc(nbytes, 0);
    CHECK(buf);
    pthread_barrier_init(&bar, NULL, NT + 1);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int r = 0; r < ROUNDS; r++) {
        uint8_t v = (uint8_t)(r * 3 + 1);
        for (size_t k = 0; k < nbytes; k++)
            if (k % 64 >= NT)
                buf[k] = v;
        slow = r % 2;
        CHECK(bd_mem_unload_all() == 0);
        pthread_barrier_wait(&bar); /* threads run */
        pthread_barrier_wait(&bar); /* threads done */
        CHECKF(!failed, "round %d: a thread saw wrong data", r);
        CHECK(bd_mem_unload_all() == 0);
        size_t pg = (size_t)(r % 7) * SB;
        for (size_t k = 0; k < SB; k += 64)
            for (int t = 0; t < NT; t++)
                CHECKF(buf[pg + k + (size_t)t] == (uint8_t)(r + t),
                       "round %d: lost write of thread %d at %zu", r, t, k);
    }
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    bd_mem_stats_t st;
    bd_mem_stats(&st);
    fprintf(stderr, "faults %llu loads %llu\n", (unsigned long long)st.faults,
            (unsigned long long)st.loads);
    bd_mem_free(buf);
    mt_finish();
    return 0;
}
