/*
 * p2p_unexp_queue: matching against a long queue of unexpected messages.
 *
 * Every rank but 0 sends NQ small messages to rank 0 on each of two
 * communicators (interleaved, tags cycling over 3 values) before rank 0
 * posts any receive (a barrier between).  Rank 0 then takes them in an
 * order that jumps between sources, communicators and tags: by source
 * from the highest rank down (any tag, then the tag of the source's next
 * message), probes and matched probes by source, receives from any source
 * with one tag, and the rest from any source with any tag.  Every message
 * must come once, and none before an earlier one of the same source and
 * communicator that the same receive would have matched (non-overtaking,
 * MPI-3.1 3.5); every probe's status must describe the message the
 * receive after it takes.
 */
#include "mtest.h"

#define NQ 60

typedef struct {
    int src, seq, tag;
} msg_t;

static int tag_of(int seq) { return seq % 3; }

/* got[c][src * NQ + seq]: message seq of src on communicator c taken */
static char *got[2];

static void take(MPI_Comm comm, int c, int size, int src, int tag, const char *how)
{
    msg_t m;
    MPI_Status st;
    MPI_Recv(&m, 3, MPI_INT, src, tag, comm, &st);
    CHECK(m.src >= 1 && m.src < size && m.seq >= 0 && m.seq < NQ, "%s: bad message %d/%d", how,
          m.src, m.seq);
    if (!(m.src >= 1 && m.src < size && m.seq >= 0 && m.seq < NQ))
        return;
    CHECK(st.MPI_SOURCE == m.src && st.MPI_TAG == m.tag && m.tag == tag_of(m.seq),
          "%s: status %d/%d for message %d/%d tag %d", how, st.MPI_SOURCE, st.MPI_TAG, m.src, m.seq,
          m.tag);
    CHECK(src == MPI_ANY_SOURCE || m.src == src, "%s: message of %d for a receive from %d", how,
          m.src, src);
    CHECK(tag == MPI_ANY_TAG || m.tag == tag, "%s: tag %d for a receive of tag %d", how, m.tag,
          tag);
    char *g = got[c] + (size_t)m.src * NQ;
    CHECK(!g[m.seq], "%s: message %d/%d taken twice", how, m.src, m.seq);
    for (int q = 0; q < m.seq; q++)
        CHECK(g[q] || (tag != MPI_ANY_TAG && tag_of(q) != tag), "%s: message %d/%d overtook %d/%d",
              how, m.src, m.seq, m.src, q);
    g[m.seq] = 1;
}

/* The next message of src not yet taken on communicator c, or -1. */
static int next_of(int c, int src)
{
    for (int q = 0; q < NQ; q++)
        if (!got[c][(size_t)src * NQ + q])
            return q;
    return -1;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_unexp_queue");
    int rank = mtest_rank_, size = mtest_size_;
    MPI_Comm comms[2];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    if (rank > 0) {
        msg_t *out = malloc(sizeof *out * 2 * NQ);
        MPI_Request *req = malloc(sizeof *req * 2 * NQ);
        for (int q = 0; q < NQ; q++)
            for (int c = 0; c < 2; c++) {
                out[2 * q + c] = (msg_t){rank, q, tag_of(q)};
                MPI_Isend(&out[2 * q + c], 3, MPI_INT, 0, tag_of(q), comms[c], &req[2 * q + c]);
            }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(2 * NQ, req, MPI_STATUSES_IGNORE);
        free(out);
        free(req);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int c = 0; c < 2; c++)
            got[c] = calloc((size_t)size * NQ, 1);
        /* by source, from the highest down; the duplicate first */
        for (int c = 1; c >= 0; c--)
            for (int src = size - 1; src >= 1; src--)
                for (int k = 0; k < NQ / 6; k++)
                    take(comms[c], c, size, src, MPI_ANY_TAG, "by source, any tag");
        for (int src = size - 1; src >= 1; src--)
            for (int c = 0; c < 2; c++)
                for (int k = 0; k < NQ / 6; k++) {
                    int q = next_of(c, src);
                    take(comms[c], c, size, src, tag_of(q), "by source and tag");
                }
        /* a later tag of one source: overtakes messages of other tags only */
        for (int src = 1; src < size; src++)
            take(comms[0], 0, size, src, (tag_of(next_of(0, src)) + 1) % 3, "a later tag");
        /* probes by source describe what the receive after takes */
        for (int src = size - 1; src >= 1; src--) {
            MPI_Status st;
            int flag = 0;
            while (!flag)
                MPI_Iprobe(src, MPI_ANY_TAG, comms[1], &flag, &st);
            int q = next_of(1, src);
            CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag_of(q),
                  "MPI_Iprobe from %d: source %d tag %d, expected tag %d", src, st.MPI_SOURCE,
                  st.MPI_TAG, tag_of(q));
            take(comms[1], 1, size, src, MPI_ANY_TAG, "after MPI_Iprobe");
            MPI_Message mh;
            msg_t m;
            MPI_Mprobe(src, MPI_ANY_TAG, comms[0], &mh, &st);
            MPI_Mrecv(&m, 3, MPI_INT, &mh, MPI_STATUS_IGNORE);
            q = next_of(0, src);
            CHECK(m.src == src && m.seq == q, "MPI_Mprobe from %d: message %d/%d, expected %d", src,
                  m.src, m.seq, q);
            if (m.src == src && m.seq == q)
                got[0][(size_t)src * NQ + q] = 1;
        }
        /* any source, one tag; then everything left */
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < size - 1; k++)
                take(comms[c], c, size, MPI_ANY_SOURCE, 2, "any source, tag 2");
        for (int c = 0; c < 2; c++)
            for (int src = 1; src < size; src++)
                while (next_of(c, src) >= 0)
                    take(comms[c], c, size, MPI_ANY_SOURCE, MPI_ANY_TAG, "any source, any tag");
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms[0], &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a message is left on MPI_COMM_WORLD");
        free(got[0]);
        free(got[1]);
    }
    MPI_Comm_free(&comms[1]);
    return mtest_finalize();
}
