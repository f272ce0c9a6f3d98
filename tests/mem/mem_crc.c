/* CRC32C (src/common/bd_crc.c): the check value of the standard, the
 * instruction path against the tables on every length up to 10 KiB from
 * every alignment of a word, and chaining (a CRC continued over the next
 * piece is the CRC of both).  Exit 0 pass, 1 fail. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bd_crc.h"

int main(void)
{
    int bad = 0;
    const char *check = "123456789";
    uint32_t c = bd_crc32c(0, check, 9), s = bd_crc32c_soft(0, check, 9);
    if (c != 0xE3069283u || s != 0xE3069283u) {
        printf("FAIL: CRC32C(\"123456789\") = %08x (tables %08x), want e3069283\n", c, s);
        bad++;
    }
    size_t n = 10240 + 16;
    unsigned char *buf = malloc(n);
    if (!buf)
        return 1;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    for (size_t al = 0; al < 8; al++)
        for (size_t len = 0; len + al <= 10240 && bad < 5; len += len < 64 ? 1 : 37) {
            uint32_t h = bd_crc32c(0, buf + al, len), t = bd_crc32c_soft(0, buf + al, len);
            uint32_t cut = (uint32_t)(len / 3);
            uint32_t ch = bd_crc32c(bd_crc32c(0, buf + al, cut), buf + al + cut, len - cut);
            if (h != t || ch != h) {
                printf("FAIL: length %zu at offset %zu: %08x, tables %08x, chained %08x\n", len, al,
                       h, t, ch);
                bad++;
            }
        }
    free(buf);
    if (bad)
        return 1;
    printf("PASS: CRC32C (%s) matches the check value, the tables and chaining\n",
           bd_crc32c_hw() ? "crc32 instruction" : "tables");
    return 0;
}
