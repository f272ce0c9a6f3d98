/* Built when no MPI was found: multi-node jobs are refused with a message. */
#include <stdlib.h>

#include "bd_log.h"
#include "net.h"

int bdr_net_init(int *argc, char ***argv, int *node, int *nnodes)
{
    (void)argc;
    (void)argv;
    *node = 0;
    *nnodes = 1;
    bd_log_error("this bdmprun was built without MPICH: -nn > 1 is not available");
    return -1;
}

int bdr_net_send(int dst, const bdr_net_hdr_t *h, const void *payload, size_t len)
{
    (void)dst, (void)h, (void)payload, (void)len;
    return -1;
}

size_t bdr_net_pending(int dst)
{
    (void)dst;
    return 0;
}

bdr_net_msg_t *bdr_net_poll(void) { return NULL; }
int bdr_net_idle(void) { return 1; }
uint64_t bdr_net_sent_total(void) { return 0; }
void bdr_net_fini(void) {}
void bdr_net_abort(int code) { exit(code); }
int bdr_net_broken(void) { return 0; }

void *bdr_net_buf(size_t len) { return malloc(len ? len : 1); }

int bdr_net_send_buf(int dst, const bdr_net_hdr_t *h, void *payload, size_t len)
{
    (void)dst, (void)h, (void)len;
    free(payload);
    return -1;
}

int bdr_net_send_lent(int dst, const bdr_net_hdr_t *h, void *payload, size_t len,
                      void (*done)(void *), void *arg)
{
    (void)dst, (void)h, (void)payload, (void)len;
    done(arg);
    return -1;
}

size_t bdr_net_lent_bytes(void) { return 0; }

void bdr_net_free_buf(void *payload, size_t len)
{
    (void)len;
    free(payload);
}
size_t bdr_net_held(void) { return 0; }
void bdr_net_trim(void) {}
void bdr_net_pool_limit(size_t bytes) { (void)bytes; }
void bdr_net_msg_free(bdr_net_msg_t *m) { free(m); }
void bdr_net_flush(void) {}
int bdr_net_fd(void) { return -1; }
void bdr_net_doorbell(void) {}
void bdr_net_bell_stats(uint64_t *rung, uint64_t *heard, uint64_t *reads)
{
    *rung = *heard = *reads = 0;
}
int bdr_net_busy(void) { return 0; }
void bdr_net_out_blocked(int on) { (void)on; }
