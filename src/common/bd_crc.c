/* CRC32C (bd_crc.h): reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF (as in iSCSI, ext4 and the SSE4.2 instruction).
 * The hardware path keeps three independent crc32 chains in flight over
 * three thirds of a long buffer (the instruction's latency is three times
 * its issue rate) and joins them by shifting the first two over the bytes
 * that follow them: a shift by a fixed length is linear in the CRC, so it
 * is a table lookup per byte of the CRC (4 tables of 256 words per
 * length, built once for the block length used). */
#include "bd_crc.h"

#include <string.h>

#define POLY 0x82F63B78u

static uint32_t g_tab[8][256];
static int g_hw = -1;

/* Shift operators for the three-way split: shifting a CRC state over
 * BLK zero bytes (and over 2*BLK), as 4 byte-indexed tables each. */
#define BLK 1024u
static uint32_t g_sh1[4][256], g_sh2[4][256];

/* One zero byte through the state, bit by bit (table building only). */
static uint32_t shift_byte(uint32_t c)
{
    for (int k = 0; k < 8; k++)
        c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
    return c;
}

static uint32_t shift_bytes(uint32_t c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c = shift_byte(c);
    return c;
}

static void build_shift(uint32_t t[4][256], size_t n)
{
    /* linear over GF(2): the image of each single-bit state, then every
     * byte value as the xor of its bits' images */
    uint32_t bit[32];
    for (int b = 0; b < 32; b++)
        bit[b] = shift_bytes(1u << b, n);
    for (int k = 0; k < 4; k++)
        for (int v = 0; v < 256; v++) {
            uint32_t x = 0;
            for (int b = 0; b < 8; b++)
                if (v >> b & 1)
                    x ^= bit[8 * k + b];
            t[k][v] = x;
        }
}

static inline uint32_t apply_shift(const uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

__attribute__((constructor)) static void crc_init(void)
{
    for (uint32_t v = 0; v < 256; v++) {
        uint32_t c = v;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        g_tab[0][v] = c;
    }
    for (uint32_t v = 0; v < 256; v++)
        for (int t = 1; t < 8; t++)
            g_tab[t][v] = (g_tab[t - 1][v] >> 8) ^ g_tab[0][g_tab[t - 1][v] & 0xff];
#if defined(__x86_64__)
    __builtin_cpu_init();
    g_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
    g_hw = 0;
#endif
    if (g_hw) {
        build_shift(g_sh1, BLK);
        build_shift(g_sh2, 2 * BLK);
    }
}

/* On the raw state (no initial or final xor). */
static uint32_t soft_raw(uint32_t c, const unsigned char *p, size_t len)
{
    while (len && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ g_tab[0][(c ^ *p++) & 0xff];
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c;
        c = g_tab[7][w & 0xff] ^ g_tab[6][(w >> 8) & 0xff] ^ g_tab[5][(w >> 16) & 0xff] ^
            g_tab[4][(w >> 24) & 0xff] ^ g_tab[3][(w >> 32) & 0xff] ^ g_tab[2][(w >> 40) & 0xff] ^
            g_tab[1][(w >> 48) & 0xff] ^ g_tab[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        c = (c >> 8) ^ g_tab[0][(c ^ *p++) & 0xff];
    return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t hw_raw(uint32_t c, const unsigned char *p,
                                                         size_t len)
{
    while (len && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi(c, *p++);
        len--;
    }
    /* three chains over blocks of BLK bytes each */
    while (len >= 3 * BLK) {
        uint64_t c0 = c, c1 = 0, c2 = 0;
        for (size_t i = 0; i < BLK; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + BLK + i, 8);
            memcpy(&w2, p + 2 * BLK + i, 8);
            c0 = __builtin_ia32_crc32di(c0, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        c = apply_shift(g_sh2, (uint32_t)c0) ^ apply_shift(g_sh1, (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * BLK;
        len -= 3 * BLK;
    }
    uint64_t c64 = c;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
        p += 8;
        len -= 8;
    }
    c = (uint32_t)c64;
    while (len--)
        c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#endif

uint32_t bd_crc32c_soft(uint32_t crc, const void *p, size_t len) { return ~soft_raw(~crc, p, len); }

uint32_t bd_crc32c(uint32_t crc, const void *p, size_t len)
{
#if defined(__x86_64__)
    if (g_hw > 0)
        return ~hw_raw(~crc, p, len);
#endif
    return ~soft_raw(~crc, p, len);
}

int bd_crc32c_hw(void) { return g_hw > 0; }
