/* Data integrity across unload and reload.
 * usage: mem_integrity <araw|arlw|lrlw> <sbpage> <uffd|mprotect>
 * Sequential and random writes/reads against a shadow copy, with unloads in
 * between; sizes that are not multiples of the sbpage; an untouched
 * allocation that must never cause I/O. */
#include "memtest.h"

#define NA 3

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s strategy sbpage track\n", argv[0]);
        return 1;
    }
    bd_mem_config_t cfg;
    size_t sbp = mt_parse_size(argv[2]);
    mt_setup(&cfg, argv[1], sbp, argv[3]);

    size_t sizes[NA] = {24u << 20, (8u << 20) + 12345, 3 * sbp + 17};
    uint8_t *m[NA], *shadow[NA];
    for (int i = 0; i < NA; i++) {
        m[i] = bd_mem_alloc(sizes[i], 0);
        CHECK(m[i] != NULL);
        CHECK(((uintptr_t)m[i] % sbp) == 0);
        CHECK(bd_mem_usable_size(m[i]) >= sizes[i]);
        shadow[i] = calloc(1, sizes[i]);
        CHECK(shadow[i]);
    }
    uint8_t *untouched = bd_mem_alloc(16u << 20, 0);
    CHECK(untouched);

    /* fresh memory reads as zero */
    for (int i = 0; i < NA; i++)
        for (size_t k = 0; k < sizes[i]; k += 511)
            CHECK(m[i][k] == 0);

    /* sequential writes */
    for (int i = 0; i < NA; i++)
        for (size_t k = 0; k < sizes[i]; k++)
            m[i][k] = shadow[i][k] = (uint8_t)(k * 7 + i);
    CHECK(bd_mem_unload_all() == 0);
    CHECK(bd_mem_resident_bytes() == 0);
    for (int i = 0; i < NA; i++)
        CHECK(memcmp(m[i], shadow[i], sizes[i]) == 0);

    /* random writes and reads over several unload rounds */
    uint64_t rng = 88172645463325252ull;
    for (int round = 0; round < 6; round++) {
        for (int n = 0; n < 20000; n++) {
            int i = (int)(mt_rng(&rng) % NA);
            size_t k = mt_rng(&rng) % sizes[i];
            if (mt_rng(&rng) & 1) {
                uint8_t v = (uint8_t)mt_rng(&rng);
                m[i][k] = v;
                shadow[i][k] = v;
            } else {
                CHECKF(m[i][k] == shadow[i][k], "round %d alloc %d offset %zu", round, i, k);
            }
        }
        if (round % 2 == 0) {
            CHECK(bd_mem_unload_all() == 0);
        } else {
            CHECK(bd_mem_block_point() == 0); /* unloads under ARAW only */
        }
        /* random-order verification of sampled sbpages */
        for (int n = 0; n < 200; n++) {
            int i = (int)(mt_rng(&rng) % NA);
            size_t k = mt_rng(&rng) % sizes[i];
            size_t l = sizes[i] - k < 4096 ? sizes[i] - k : 4096;
            CHECKF(memcmp(m[i] + k, shadow[i] + k, l) == 0, "round %d alloc %d offset %zu", round,
                   i, k);
        }
    }
    CHECK(bd_mem_unload_all() == 0);
    for (int i = 0; i < NA; i++)
        CHECK(memcmp(m[i], shadow[i], sizes[i]) == 0);

    /* the untouched allocation never caused I/O and never got a file: the
   * number of files equals the number of written allocations */
    CHECKF(mt_nfiles() == NA, "files: %d", mt_nfiles());
    bd_mem_stats_t st;
    mt_stats(&st);
    CHECK(st.nallocs == NA + 1);
    fprintf(stderr, "written %llu read %llu loads %llu faults %llu track %d direct %d\n",
            (unsigned long long)st.bytes_written, (unsigned long long)st.bytes_read,
            (unsigned long long)st.loads, (unsigned long long)st.faults, st.track, st.direct_io);

    for (int i = 0; i < NA; i++) {
        bd_mem_free(m[i]);
        free(shadow[i]);
    }
    CHECK(mt_nfiles() == 0); /* free removes the backing files */
    bd_mem_free(untouched);
    mt_finish();
    return 0;
}
