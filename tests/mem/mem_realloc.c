/* realloc grow (in place and moving) and shrink keep the data.
 * usage: mem_realloc <araw|arlw|lrlw> <uffd|mprotect> */
#include "memtest.h"

static void fill(uint8_t *p, size_t from, size_t to, int salt)
{
    for (size_t k = from; k < to; k++)
        p[k] = (uint8_t)(k * 13 + salt);
}
static void check(const uint8_t *p, size_t from, size_t to, int salt)
{
    for (size_t k = from; k < to; k++)
        CHECKF(p[k] == (uint8_t)(k * 13 + salt), "offset %zu", k);
}
static void zero(const uint8_t *p, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++)
        CHECKF(p[k] == 0, "offset %zu not zero", k);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 1;
    bd_mem_config_t cfg;
    mt_setup(&cfg, argv[1], 64u << 10, argv[2]);
    const size_t M = 1u << 20;
    uint8_t *p = bd_mem_alloc(3 * M, 0);
    uint8_t *blocker = bd_mem_alloc(M, 0); /* lives behind p's growth room */
    CHECK(p && blocker);
    blocker[0] = 1;
    fill(p, 0, 3 * M, 1);
    CHECK(bd_mem_unload_all() == 0);

    /* grow a little: in place */
    uint8_t *q = bd_mem_realloc(p, 5 * M + 3);
    CHECK(q == p);
    check(q, 0, 3 * M, 1);
    zero(q, 3 * M, 5 * M + 3);
    fill(q, 3 * M, 5 * M + 3, 1);
    CHECK(bd_mem_unload_all() == 0);
    check(q, 0, 5 * M + 3, 1);

    /* grow a lot: must move; data that is only on disk comes along */
    CHECK(bd_mem_unload_all() == 0);
    uint8_t *r = bd_mem_realloc(q, 40 * M);
    CHECK(r && r != q);
    check(r, 0, 5 * M + 3, 1);
    zero(r, 5 * M + 3, 40 * M);
    CHECK(bd_mem_unload_all() == 0);
    check(r, 0, 5 * M + 3, 1);
    zero(r, 5 * M + 3, 40 * M);

    /* shrink keeps the head, and growing again shows zeros, not old data */
    fill(r, 0, 40 * M, 2);
    CHECK(bd_mem_unload_all() == 0);
    uint8_t *s = bd_mem_realloc(r, 2 * M + 100);
    CHECK(s == r);
    CHECK(bd_mem_usable_size(s) == 2 * M + (64u << 10));
    check(s, 0, 2 * M + 100, 2);
    CHECK(bd_mem_unload_all() == 0);
    check(s, 0, 2 * M + 100, 2);
    uint8_t *t = bd_mem_realloc(s, 6 * M);
    CHECK(t == s);
    check(t, 0, 2 * M + 100, 2);
    zero(t, 2 * M + (64u << 10), 6 * M);
    CHECK(bd_mem_unload_all() == 0);
    check(t, 0, 2 * M + 100, 2);
    zero(t, 2 * M + (64u << 10), 6 * M);

    CHECK(bd_mem_realloc(t, 0) == NULL);
    CHECK(blocker[0] == 1);
    bd_mem_free(blocker);
    CHECK(bd_mem_resident_bytes() == 0);
    mt_finish();
    return 0;
}
