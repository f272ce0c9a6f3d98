/* Write prediction: an sbpage written during its last residency is loaded
 * writable without tracking and verified by its content hash at unload.
 * usage: mem_predict <araw|arlw|lrlw> <uffd|mprotect>
 * Checks, through the I/O and hashing counters and the data itself, that
 *  - predicted sbpages that stay unchanged are not written (and are tracked
 *    exactly the next time: no hashing then);
 *  - a one-byte change anywhere in a predicted sbpage is written back;
 *  - rewriting the same bytes counts as unchanged;
 *  - fresh sbpages left all-zero are never written, nor (when predicting)
 *    ones set to zeros;
 *  - on the mprotect path a write fault on tracked memory makes the
 *    following sbpages writable too (one fault per piece, not per sbpage);
 *  - with prediction off nothing is hashed and the same data results.
 * Skips (77) where the fast hash is missing and prediction is off. */
#include "memtest.h"

#define SB (64u << 10)
#define NSB 32u

static bd_mem_stats_t st0;
static void mark(void) { bd_mem_stats(&st0); }
static bd_mem_stats_t delta(void)
{
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    s.bytes_written -= st0.bytes_written;
    s.bytes_read -= st0.bytes_read;
    s.bytes_hashed -= st0.bytes_hashed;
    s.verified_clean -= st0.verified_clean;
    s.faults -= st0.faults;
    return s;
}

static uint8_t val(size_t sb, size_t off, unsigned gen)
{
    return (uint8_t)(sb * 131 + off * 7 + gen);
}

static void run(const char *strategy, const char *track, int predict)
{
    bd_mem_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.dir = mt_mkdir();
    cfg.sbpage = SB;
    cfg.strategy = mt_strategy(strategy);
    cfg.track = mt_track(track);
    cfg.predict = predict ? 1 : -1;
    mt_init(&cfg);
    int mprot = !strcmp(track, "mprotect");
    bd_mem_stats_t s;
    bd_mem_stats(&s);
    CHECKF(s.predict == predict, "predict %d, asked %d", s.predict, predict);
    const size_t n = NSB * SB;
    uint8_t *a = bd_mem_alloc(n, 0);
    CHECK(a);
    unsigned gen[NSB];

    /* fresh, fully written: everything is written (and hashed when predicting) */
    mark();
    for (size_t i = 0; i < NSB; i++) {
        gen[i] = 1;
        for (size_t o = 0; o < SB; o++)
            a[i * SB + o] = val(i, o, 1);
    }
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    CHECKF(s.bytes_written == n, "first write-back wrote %llu",
           (unsigned long long)s.bytes_written);
    CHECKF(s.bytes_hashed == (predict ? n : 0), "hashed %llu", (unsigned long long)s.bytes_hashed);

    /* read only: predicted dirty, found unchanged, nothing written */
    mark();
    for (size_t i = 0; i < NSB; i++)
        CHECK(a[i * SB + 17] == val(i, 17, 1));
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    CHECKF(s.bytes_written == 0, "read-only epoch wrote %llu", (unsigned long long)s.bytes_written);
    if (predict)
        CHECKF(s.verified_clean == n, "verified clean %llu", (unsigned long long)s.verified_clean);

    /* again read only: now tracked, so not even hashed */
    mark();
    for (size_t i = 0; i < NSB; i++)
        CHECK(a[i * SB + SB - 1] == val(i, SB - 1, 1));
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    CHECKF(s.bytes_written == 0 && s.bytes_hashed == 0, "cold epoch wrote %llu hashed %llu",
           (unsigned long long)s.bytes_written, (unsigned long long)s.bytes_hashed);

    /* one byte in sbpage 3 (tracked): exactly that sbpage is written */
    mark();
    a[3 * SB + 1000] = val(3, 1000, 2);
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    CHECKF(s.bytes_written == SB, "tracked one-byte change wrote %llu",
           (unsigned long long)s.bytes_written);

    /* sbpage 3 is predicted now: the same bytes again count as unchanged;
   * sbpage 5 (tracked) changes at its first byte */
    mark();
    a[3 * SB + 1000] = val(3, 1000, 2);
    a[5 * SB] ^= 0x80;
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    /* exact tracking counts rewriting the same bytes as a write */
    CHECKF(s.bytes_written == (predict ? SB : 2 * SB), "wrote %llu",
           (unsigned long long)s.bytes_written);
    /* on the mprotect path the write fault on sbpage 5 also made the tracked
   * sbpages after it untracked (write_ahead): they prove unchanged too */
    if (predict)
        CHECKF(mprot ? s.verified_clean >= SB : s.verified_clean == SB, "verified clean %llu",
               (unsigned long long)s.verified_clean);
    /* sbpage 5 predicted: a change in its very last bit must be seen */
    mark();
    a[5 * SB + SB - 1] ^= 0x01;
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    CHECKF(s.bytes_written == SB, "last-bit change wrote %llu",
           (unsigned long long)s.bytes_written);

    /* everything comes back as last written */
    for (size_t i = 0; i < NSB; i++)
        for (size_t o = 0; o < SB; o++) {
            uint8_t e = val(i, o, gen[i]);
            if (i == 3 && o == 1000)
                e = val(3, 1000, 2);
            if (i == 5 && o == 0)
                e ^= 0x80;
            if (i == 5 && o == SB - 1)
                e ^= 0x01;
            CHECKF(a[i * SB + o] == e, "sbpage %zu offset %zu: %u, expected %u", i, o,
                   a[i * SB + o], e);
        }
    CHECK(bd_mem_unload_all() == 0);

    /* fresh memory that is only read, or set to zeros, is never written */
    uint8_t *z = bd_mem_alloc(n, 0);
    CHECK(z);
    mark();
    unsigned sum = 0;
    for (size_t k = 0; k < n / 2; k += 4096)
        sum += z[k];
    memset(z + n / 2, 0, n / 2);
    CHECK(sum == 0);
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    /* exact tracking writes what memset touched; prediction sees zeros */
    CHECKF(s.bytes_written == (predict ? 0 : n / 2), "zero memory wrote %llu",
           (unsigned long long)s.bytes_written);
    for (size_t k = 0; k < n; k += 512)
        CHECK(z[k] == 0);
    bd_mem_free(z);

    /* a write sweep over resident, tracked (cold) data: on the mprotect path
   * with prediction, a write fault makes the next sbpages writable too, so
   * the sweep takes far fewer faults than sbpages; all of it is written */
    for (size_t k = 0; k < n; k += 64)
        CHECK(a[k] == a[k]); /* load, tracked: cold since the read-only epochs */
    for (size_t k = 0; k < n; k += 4096)
        (void)*(volatile uint8_t *)&a[k];
    mark();
    for (size_t i = 0; i < NSB; i++)
        memset(a + i * SB, (int)(i + 1), SB);
    s = delta();
    if (mprot && predict)
        CHECKF(s.faults <= NSB / 4, "write sweep over %u tracked sbpages took %llu faults", NSB,
               (unsigned long long)s.faults);
    if (mprot && !predict)
        CHECKF(s.faults >= NSB, "exact tracking took only %llu faults for %u sbpages",
               (unsigned long long)s.faults, NSB);
    CHECK(bd_mem_unload_all() == 0);
    s = delta();
    CHECKF(s.bytes_written == n, "write sweep wrote %llu", (unsigned long long)s.bytes_written);
    for (size_t i = 0; i < NSB; i++)
        CHECK(a[i * SB + 77] == (uint8_t)(i + 1) && a[i * SB + SB - 1] == (uint8_t)(i + 1));
    bd_mem_free(a);
    mt_finish();
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    run(argv[1], argv[2], 0);
    /* forced on, as it is by default where the fast hash exists */
    run(argv[1], argv[2], 1);
    printf("mem_predict %s %s: ok\n", argv[1], argv[2]);
    return 0;
}
