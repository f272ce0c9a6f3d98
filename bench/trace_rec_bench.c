/* trace_rec_bench: what one record of the timeline costs (src/common/bd_trace.c),
 * measured in one process on a ring laid out as the master lays it out:
 *   wait       a request's bd_trace_wait_begin + bd_trace_wait_end (2 records)
 *   io         the memory manager's io_begin + io_end (1 record)
 *   each also without a ring (the time accounting --stats always does),
 *   drain      the master's bd_trace_drain, per record
 *   convert    bd_trace_master_finish (JSON), per record
 * Prints "RESULT name ns-per-operation" (CPU time).  Usage: trace_rec_bench [N]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bd_trace.h"

/* CPU time of the process: what the machine's other load disturbs least. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    char dir[] = "/tmp/bdmpi-tracerec.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    size_t slot = (sizeof(bd_slot_t) + 4095) / 4096 * 4096;
    size_t total = 4096 + slot + BD_TRACE_RING_BYTES;
    bd_shm_hdr_t *h = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED)
        return 1;
    h->nslaves = 1;
    h->slot_offset = 4096;
    h->slot_stride = slot;
    snprintf(h->jobdir, sizeof h->jobdir, "%s", dir);
    bd_slot_t *sl = bd_shm_slot(h, 0);
    int efd = eventfd(0, EFD_NONBLOCK);
    bd_req_t req = {.code = BD_REQ_P2P_WAIT};

    /* Without a ring: the accounting alone. */
    bd_trace_rank_init(h, sl, efd);
    double t0 = now();
    for (long i = 0; i < n; i++)
        bd_trace_wait_end(bd_trace_wait_begin(&req, "MPI_Recv"));
    double t_wait0 = (now() - t0) / n * 1e9;
    t0 = now();
    for (long i = 0; i < n; i++) {
        bd_trace_io_begin(NULL, 0);
        bd_trace_io_end(NULL, 0, 65536, mono_ns());
    }
    double t_io0 = (now() - t0) / n * 1e9;

    /* With the ring, drained every 512 operations as the master would. */
    bd_trace_layout(h, 4096 + slot, 1);
    char out[600], err[256];
    snprintf(out, sizeof out, "%s/t.json", dir);
    if (bd_trace_master_open(h, out, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    bd_trace_rank_init(h, sl, efd);
    double drain = 0;
    t0 = now();
    for (long i = 0; i < n; i++) {
        bd_trace_wait_end(bd_trace_wait_begin(&req, "MPI_Recv"));
        if ((i & 511) == 511) {
            double d0 = now();
            bd_trace_drain();
            drain += now() - d0;
        }
    }
    double t_wait = ((now() - t0) - drain) / n * 1e9, drain_wait = drain;
    t0 = now();
    for (long i = 0; i < n; i++) {
        bd_trace_io_begin(NULL, 0);
        bd_trace_io_end(NULL, 0, 65536, mono_ns());
        if ((i & 1023) == 1023) {
            double d0 = now();
            bd_trace_drain();
            drain += now() - d0;
        }
    }
    double t_io = ((now() - t0) - (drain - drain_wait)) / n * 1e9;
    uint64_t written, dropped;
    bd_trace_drain();
    bd_trace_counts(&written, &dropped);
    t0 = now();
    int rc = bd_trace_master_finish();
    double t_conv = (now() - t0) / (double)written * 1e9;
    printf("RESULT wait_accounting_only %.1f\n", t_wait0);
    printf("RESULT wait_traced %.1f\n", t_wait);
    printf("RESULT io_accounting_only %.1f\n", t_io0);
    printf("RESULT io_traced %.1f\n", t_io);
    printf("RESULT drain_per_record %.1f\n", drain / (double)written * 1e9);
    printf("RESULT convert_per_record %.1f\n", t_conv);
    printf("records %llu, dropped %llu, trace rc %d\n", (unsigned long long)written,
           (unsigned long long)dropped, rc);
    unlink(out);
    rmdir(dir);
    return rc == 0 && dropped == 0 ? 0 : 1;
}
