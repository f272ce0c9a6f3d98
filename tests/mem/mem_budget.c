/* Budget accounting: acquire before bytes become resident, release after.
 * usage: mem_budget <araw|arlw|lrlw> <uffd|mprotect> */
#include "memtest.h"

#define SB (64u << 10)
/* modified from the fault path (handler thread or signal handler) */
static volatile long long balance, nacq, last_acq;
static int refuse;

static int acq(void *ctx, size_t n, size_t *give_back)
{
    (void)give_back;
    CHECK(ctx == (void *)&balance);
    if (refuse)
        return -ENOMEM;
    balance += (long long)n;
    last_acq = (long long)n;
    nacq++;
    return 0;
}
static void rel(void *ctx, size_t n)
{
    CHECK(ctx == (void *)&balance);
    balance -= (long long)n;
    CHECK(balance >= 0);
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
    cfg.ctx = (void *)&balance;
    mt_init(&cfg);
    int lazy = cfg.strategy == BD_MEM_LRLW;
    const size_t n = 8u << 20;
    uint8_t *a = bd_mem_alloc(n, 0);
    uint8_t *b = bd_mem_alloc(n, 0);
    CHECK(a && b);
    CHECK(balance == 0); /* allocation alone is not resident */

    a[5] = 1;
    CHECKF((size_t)balance == (lazy ? SB : n), "after first touch %lld", balance);
    CHECK((size_t)balance == bd_mem_resident_bytes());
    memset(a, 2, n / 2);
    CHECKF((size_t)balance == (lazy ? n / 2 : n), "balance %lld nacq %lld last %lld", balance, nacq,
           last_acq);
    CHECK((size_t)balance == bd_mem_resident_bytes());
    b[n - 1] = 3;
    CHECK((size_t)balance == bd_mem_resident_bytes());
    CHECK(bd_mem_unload_all() == 0);
    CHECK(balance == 0 && bd_mem_resident_bytes() == 0);

    CHECK(a[0] == 2 && a[n / 2] == 0 && b[n - 1] == 3);
    CHECK(balance > 0 && (size_t)balance == bd_mem_resident_bytes());
    CHECK(bd_mem_discard(a, n) == 0);
    CHECK((size_t)balance == bd_mem_resident_bytes());

    /* a refused acquire is reported by prepare */
    CHECK(bd_mem_unload_all() == 0);
    refuse = 1;
    CHECK(bd_mem_prepare(b, n, 1) < 0);
    refuse = 0;
    CHECK(bd_mem_prepare(b, n, 1) == 0);
    CHECK((size_t)balance == n);

    bd_mem_free(a);
    CHECK((size_t)balance == bd_mem_resident_bytes());
    bd_mem_free(b);
    CHECK(balance == 0);
    uint8_t *c = bd_mem_alloc(n, 0);
    c[0] = 1;
    CHECK(balance > 0);
    bd_mem_fini(); /* fini releases what is still accounted */
    CHECK(balance == 0);
    mt_rmdir();
    return 0;
}
