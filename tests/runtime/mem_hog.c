/* Another job's memory: takes argv[1] MiB in steps of argv[2] MiB (default
 * 8) every argv[3] ms (default 50), touching every page, holds it for
 * argv[4] ms (default 2000), then frees it and exits 0.  Used by
 * mem_adapt.sh to put a BDMPI job under memory pressure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 256, step = argc > 2 ? atol(argv[2]) : 8;
    long every = argc > 3 ? atol(argv[3]) : 50, hold = argc > 4 ? atol(argv[4]) : 2000;
    if (total <= 0 || step <= 0)
        return 2;
    long n = (total + step - 1) / step;
    char **blk = calloc((size_t)n, sizeof *blk);
    if (!blk)
        return 2;
    for (long i = 0; i < n; i++) {
        blk[i] = malloc((size_t)step << 20);
        if (!blk[i]) {
            fprintf(stderr, "mem_hog: out of memory after %ld MiB\n", i * step);
            return 3;
        }
        memset(blk[i], (int)(i + 1), (size_t)step << 20);
        sleep_ms(every);
    }
    fprintf(stderr, "mem_hog: holding %ld MiB\n", n * step);
    sleep_ms(hold);
    for (long i = 0; i < n; i++)
        free(blk[i]);
    fprintf(stderr, "mem_hog: released\n");
    return 0;
}
