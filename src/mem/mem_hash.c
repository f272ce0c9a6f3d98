/* mem_hash.c - keyed content hash of sbpages (write prediction, see bd_mem.h).
 *
 * An sbpage that was loaded writable without write tracking is compared at
 * unload time with what storage holds by hashing it.  The hash must make a
 * missed change practically impossible for *any* data, not just random data,
 * so it is a universal hash: the polynomial hash over GF(2^128)
 *
 *     H_k(m_1 .. m_n) = m_1 k^n + m_2 k^(n-1) + ... + m_n k
 *
 * with 16-byte blocks m_i and a random secret key k drawn once per process.
 * For two different contents of the same length the difference of their
 * hashes is a non-zero polynomial in k of degree at most n, so they collide
 * for at most n of the 2^128 keys: with 1 MiB sbpages (n = 65536) the chance
 * that a changed sbpage looks unchanged is at most 2^-112 per comparison.
 * All-zero content hashes to 0 for every key, which is how fresh sbpages
 * that were never written are recognised.
 *
 * Field: polynomials over GF(2) modulo x^128 + x^7 + x^2 + x + 1, a 128-bit
 * value stored as two 64-bit words, bit i of lo being the coefficient of x^i
 * and bit i of hi that of x^(64+i) (no bit reflection: nothing here has to
 * interoperate with GCM).  Blocks are read as two little-endian words.
 *
 * The fast path multiplies with PCLMULQDQ and reduces once per 8 blocks
 * (Horner's rule on k^8 with the 8 partial products summed unreduced); a
 * portable version computes the same function bit by bit and is used for
 * testing and where the instruction is missing (then bdm_hash_fast() says so
 * and the manager keeps exact write tracking instead).
 */
#include <stdint.h>
#include <string.h>

#include "mem_internal.h"

typedef struct {
    uint64_t lo, hi;
} gf_t;

#define NPOW 16
static gf_t key_pow[NPOW]; /* k^1 .. k^16 */
static int hash_fast = -1;

/* ------------------------------------------------------------------------ */
/* portable arithmetic                                                       */

static void clmul_soft(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = 0, h = 0;
    for (int i = 0; i < 64; i++) {
        if ((b >> i) & 1) {
            l ^= a << i;
            if (i)
                h ^= a >> (64 - i);
        }
    }
    *lo = l;
    *hi = h;
}

/* Reduce the 256-bit product (z3:z2:z1:z0) modulo x^128 + x^7 + x^2 + x + 1:
 * x^128 = x^7 + x^2 + x + 1 (0x87), applied twice since z3 * 0x87 spills
 * 7 bits past x^127. */
static gf_t reduce_soft(uint64_t z0, uint64_t z1, uint64_t z2, uint64_t z3)
{
    uint64_t a0, a1, b0, b1, c0, c1;
    clmul_soft(z2, 0x87, &a0, &a1); /* a1 < 2^7 */
    clmul_soft(z3, 0x87, &b0, &b1); /* lands at x^64: b1 is x^128.. */
    clmul_soft(b1, 0x87, &c0, &c1); /* c1 == 0 */
    (void)c1;
    gf_t r = {z0 ^ a0 ^ c0, z1 ^ a1 ^ b0};
    return r;
}

static gf_t mul_soft(gf_t a, gf_t b)
{
    uint64_t l0, h0, l1, h1, l2, h2, l3, h3;
    clmul_soft(a.lo, b.lo, &l0, &h0);
    clmul_soft(a.lo, b.hi, &l1, &h1);
    clmul_soft(a.hi, b.lo, &l2, &h2);
    clmul_soft(a.hi, b.hi, &l3, &h3);
    return reduce_soft(l0, h0 ^ l1 ^ l2, h1 ^ h2 ^ l3, h3);
}

static inline gf_t load_block(const uint8_t *p)
{
    gf_t m;
    memcpy(&m.lo, p, 8);
    memcpy(&m.hi, p + 8, 8);
    return m;
}

void bdm_hash_soft(const void *buf, size_t len, uint64_t out[2])
{
    const uint8_t *p = buf;
    gf_t acc = {0, 0};
    for (size_t i = 0; i + 16 <= len; i += 16) {
        gf_t m = load_block(p + i);
        acc.lo ^= m.lo;
        acc.hi ^= m.hi;
        acc = mul_soft(acc, key_pow[0]);
    }
    out[0] = acc.lo;
    out[1] = acc.hi;
}

/* ------------------------------------------------------------------------ */
/* PCLMULQDQ                                                                 */

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("pclmul,sse4.1")))

/* acc (256 bits as lo/hi halves of two 128-bit lanes) ^= a * b, unreduced */
TGT static inline void mac(__m128i a, __m128i b, __m128i *lo, __m128i *mid, __m128i *hi)
{
    *lo = _mm_xor_si128(*lo, _mm_clmulepi64_si128(a, b, 0x00));
    *mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x10));
    *mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x01));
    *hi = _mm_xor_si128(*hi, _mm_clmulepi64_si128(a, b, 0x11));
}

TGT static inline __m128i reduce_hw(__m128i lo, __m128i mid, __m128i hi)
{
    /* z0 z1 z2 z3 with lo = z1:z0, hi = z3:z2, mid straddling z1:z2 */
    lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
    hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
    const __m128i poly = _mm_set_epi64x(0, 0x87);
    __m128i a = _mm_clmulepi64_si128(hi, poly, 0x00); /* z2 * 0x87, at x^0 */
    __m128i b = _mm_clmulepi64_si128(hi, poly, 0x01); /* z3 * 0x87, at x^64 */
    __m128i c = _mm_clmulepi64_si128(b, poly, 0x01);  /* spill of b past x^127 */
    __m128i r = _mm_xor_si128(lo, a);
    r = _mm_xor_si128(r, _mm_slli_si128(b, 8));
    return _mm_xor_si128(r, c);
}

TGT static void hash_hw(const void *buf, size_t len, uint64_t out[2])
{
    const uint8_t *p = buf;
    __m128i k[8];
    for (int j = 0; j < 8; j++)
        k[j] = _mm_set_epi64x((long long)key_pow[j].hi, (long long)key_pow[j].lo);
    __m128i acc = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 128 <= len; i += 128) {
        __m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
        __m128i m0 = _mm_xor_si128(acc, _mm_loadu_si128((const __m128i *)(p + i)));
        mac(m0, k[7], &lo, &mid, &hi);
        for (int j = 1; j < 8; j++)
            mac(_mm_loadu_si128((const __m128i *)(p + i + 16 * j)), k[7 - j], &lo, &mid, &hi);
        acc = reduce_hw(lo, mid, hi);
    }
    for (; i + 16 <= len; i += 16) {
        __m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
        mac(_mm_xor_si128(acc, _mm_loadu_si128((const __m128i *)(p + i))), k[0], &lo, &mid, &hi);
        acc = reduce_hw(lo, mid, hi);
    }
    _mm_storeu_si128((__m128i *)out, acc);
}

/* The same function, 16 blocks per step: four 512-bit registers of four
 * blocks each, multiplied lane-wise by k^16 .. k^1 (VPCLMULQDQ), the lanes'
 * unreduced products summed, one reduction per 256 bytes. */
#define TGT512 __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

TGT512 static inline __m128i fold4(__m512i v)
{
    __m128i r = _mm512_castsi512_si128(v);
    r = _mm_xor_si128(r, _mm512_extracti32x4_epi32(v, 1));
    r = _mm_xor_si128(r, _mm512_extracti32x4_epi32(v, 2));
    return _mm_xor_si128(r, _mm512_extracti32x4_epi32(v, 3));
}

TGT512 static void hash_avx512(const void *buf, size_t len, uint64_t out[2])
{
    const uint8_t *p = buf;
    __m512i k[4];
    for (int j = 0; j < 4; j++) {
        /* register j holds blocks 4j .. 4j+3, multiplied by k^(16-4j) .. k^(13-4j) */
        const gf_t *a = &key_pow[15 - 4 * j], *b = &key_pow[14 - 4 * j], *c = &key_pow[13 - 4 * j],
                   *d = &key_pow[12 - 4 * j];
        k[j] = _mm512_set_epi64((long long)d->hi, (long long)d->lo, (long long)c->hi,
                                (long long)c->lo, (long long)b->hi, (long long)b->lo,
                                (long long)a->hi, (long long)a->lo);
    }
    __m128i acc = _mm_setzero_si128();
    size_t i = 0;
    for (; i + 256 <= len; i += 256) {
        __m512i lo = _mm512_setzero_si512(), mid = lo, hi = lo;
        for (int j = 0; j < 4; j++) {
            __m512i m = _mm512_loadu_si512((const void *)(p + i + 64 * j));
            if (j == 0)
                m = _mm512_xor_si512(m, _mm512_zextsi128_si512(acc));
            lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128(m, k[j], 0x00));
            mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(m, k[j], 0x10));
            mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128(m, k[j], 0x01));
            hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128(m, k[j], 0x11));
        }
        acc = reduce_hw(fold4(lo), fold4(mid), fold4(hi));
    }
    __m128i k1 = _mm_set_epi64x((long long)key_pow[0].hi, (long long)key_pow[0].lo);
    for (; i + 16 <= len; i += 16) {
        __m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
        mac(_mm_xor_si128(acc, _mm_loadu_si128((const __m128i *)(p + i))), k1, &lo, &mid, &hi);
        acc = reduce_hw(lo, mid, hi);
    }
    _mm_storeu_si128((__m128i *)out, acc);
}
#endif

/* ------------------------------------------------------------------------ */

void bdm_hash_setkey(const uint64_t key[2])
{
    gf_t k = {key[0], key[1]};
    if (!k.lo && !k.hi)
        k.lo = 1; /* k = 0 would map everything to 0 */
    key_pow[0] = k;
    for (int j = 1; j < NPOW; j++)
        key_pow[j] = mul_soft(key_pow[j - 1], k);
#if defined(__x86_64__)
    __builtin_cpu_init();
    hash_fast = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    if (hash_fast && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq"))
        hash_fast = 2;
#else
    hash_fast = 0;
#endif
}

int bdm_hash_fast(void) { return hash_fast > 0 ? hash_fast : 0; }

/* Tests: use at most implementation level (0 portable, 1 PCLMULQDQ, 2 also
 * VPCLMULQDQ); returns the level in use. */
int bdm_hash_cap(int level)
{
    if (hash_fast > level)
        hash_fast = level;
    return hash_fast;
}

/* len must be a multiple of 16 (sbpages are). */
void bdm_hash(const void *buf, size_t len, uint64_t out[2])
{
#if defined(__x86_64__)
    if (hash_fast == 2) {
        hash_avx512(buf, len, out);
        return;
    }
    if (hash_fast > 0) {
        hash_hw(buf, len, out);
        return;
    }
#endif
    bdm_hash_soft(buf, len, out);
}
