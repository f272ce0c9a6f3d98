/* mem_hash: the content hash used to verify predicted-dirty sbpages.
 * Checks that the fast (PCLMULQDQ) and portable versions agree, that the
 * function is the polynomial it claims to be (linearity over XOR, zero for
 * zero content), that single-bit, swapped-word and shifted changes are seen,
 * and prints the hashing rate (information only, no timing assertion). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mem_internal.h"

static int fails;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "mem_hash: %s:%d: ", __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t rng = 0x1234567887654321ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int eq(const uint64_t a[2], const uint64_t b[2]) { return a[0] == b[0] && a[1] == b[1]; }

int main(void)
{
    uint64_t key[2] = {next(), next()};
    bdm_hash_setkey(key);
    size_t len = 1 << 20;
    uint8_t *a = malloc(len), *b = malloc(len), *c = malloc(len);
    if (!a || !b || !c)
        return 77;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v = next();
        memcpy(a + i, &v, 8);
        v = next();
        memcpy(b + i, &v, 8);
    }
    uint64_t h1[2], h2[2], h3[2], hz[2];
    /* every available implementation == portable, for several lengths (tails
   * below one step too) */
    size_t lens[] = {16, 48, 128, 144, 256, 272, 4096, 65536 + 112, len};
    int top = bdm_hash_fast();
    for (int lvl = top; lvl >= 1; lvl--) {
        bdm_hash_setkey(key);
        bdm_hash_cap(lvl);
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            bdm_hash(a, lens[k], h1);
            bdm_hash_soft(a, lens[k], h2);
            CHECK(eq(h1, h2), "level %d and portable differ at len %zu", lvl, lens[k]);
        }
    }
    bdm_hash_setkey(key);
    /* zero content hashes to zero */
    memset(c, 0, len);
    bdm_hash(c, len, hz);
    CHECK(hz[0] == 0 && hz[1] == 0, "zeros hash to %016llx%016llx", (unsigned long long)hz[1],
          (unsigned long long)hz[0]);
    /* linear: H(a ^ b) = H(a) ^ H(b) */
    for (size_t i = 0; i < len; i++)
        c[i] = a[i] ^ b[i];
    bdm_hash(a, len, h1);
    bdm_hash(b, len, h2);
    bdm_hash(c, len, h3);
    CHECK(h3[0] == (h1[0] ^ h2[0]) && h3[1] == (h1[1] ^ h2[1]), "not linear over XOR");
    /* every single-bit flip at sampled positions changes the hash */
    memcpy(c, a, len);
    for (int t = 0; t < 2000; t++) {
        size_t bit = next() % (len * 8);
        c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        bdm_hash(c, len, h2);
        CHECK(!eq(h1, h2), "bit flip at %zu not seen", bit);
        c[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    bdm_hash(c, len, h2);
    CHECK(eq(h1, h2), "restored content hashes differently");
    /* swapping two blocks and rotating by one block change it (position matters) */
    memcpy(c, a, len);
    memcpy(c, a + 16, 16);
    memcpy(c + 16, a, 16);
    bdm_hash(c, len, h2);
    CHECK(!eq(h1, h2), "swapped blocks not seen");
    memcpy(c, a + 16, len - 16);
    memcpy(c + len - 16, a, 16);
    bdm_hash(c, len, h2);
    CHECK(!eq(h1, h2), "rotation not seen");
    /* a different key gives a different hash */
    uint64_t key2[2] = {next(), next()};
    bdm_hash_setkey(key2);
    bdm_hash(a, len, h2);
    CHECK(!eq(h1, h2), "key does not matter");

    /* rate over 64 MiB, for the record */
    size_t big = 64u << 20;
    uint8_t *m = malloc(big);
    if (m) {
        for (size_t i = 0; i < big; i += 4096)
            memset(m + i, (int)(i >> 12), 4096);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (size_t off = 0; off < big; off += len)
            bdm_hash(m + off, len, h1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        static const char *const name[] = {"portable", "PCLMULQDQ", "VPCLMULQDQ"};
        printf("mem_hash: %s path, %.2f GB/s over 64 MiB in 1 MiB pieces\n", name[bdm_hash_fast()],
               (double)big / s / 1e9);
        free(m);
    }
    free(a);
    free(b);
    free(c);
    if (fails)
        return 1;
    printf("mem_hash: ok\n");
    return 0;
}
