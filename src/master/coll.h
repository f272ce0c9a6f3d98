/* Collectives inside the master: what coll.c (instances, pieces, local
 * protocol) and coll_net.c (the exchange between nodes) share.  Nothing
 * else includes this header. */
#ifndef BDR_COLL_H
#define BDR_COLL_H

#include "master.h"

/* coll.c */
/* The MPI call a description comes from ("MPI_Ibcast", ...), for messages. */
const char *bdr_coll_call_name(const bd_coll_desc_t *d);
/* Kinds one coordinator node computes (reductions, scans, splits). */
int bdr_coll_is_coord_kind(int k);
/* Does node `from` send data for c to node `to`? */
int bdr_coll_sends_to(const coll_t *c, int from, int to);
/* The node that coordinates c: the root's, or that of rank 0. */
int bdr_coll_coord_node(const coll_t *c);
/* The node of rank r of c's communicator. */
static inline int bdr_coll_rank_node(const coll_t *c, int r)
{
    return bdr_node_of_world(c->comm->world[r]);
}
/* The live instance (ctx, seq), or NULL. */
coll_t *bdr_coll_find(int ctx, uint64_t seq);
/* A new live instance of d on comm; NULL when out of memory. */
coll_t *bdr_coll_new(comm_t *comm, uint64_t seq, const bd_coll_desc_t *d);
/* Give piece p of c room for total bytes (memory, or c's spill file); 0 or -1. */
int bdr_coll_piece_place(coll_t *c, piece_t *p, uint64_t total);
/* Write len bytes at off into piece p of size total (placed on first use); 0 or -1. */
int bdr_coll_piece_write(coll_t *c, piece_t *p, uint64_t total, uint64_t off, const char *src,
                         uint32_t len);
/* The piece rank `me` of c PUTs with segment peer `peer`, or NULL. */
piece_t *bdr_coll_put_piece(coll_t *c, int me, int peer);
/* The piece rank `me` of c GETs with segment peer `peer`, or NULL. */
piece_t *bdr_coll_get_piece(coll_t *c, int me, int peer);
/* May rank r of c GET its results now? */
int bdr_coll_rank_ready(coll_t *c, int r);
/* Wake c's ranks blocked in it, to look again. */
void bdr_coll_poke(coll_t *c);
/* s has put all its inputs to c (idempotent); 0, or -1 when the job fails. */
int bdr_coll_arrive(slave_t *s, coll_t *c);
/* The instance a collective request is for (NULL: the job fails). */
coll_t *bdr_coll_instance(slave_t *s, const bd_req_t *r);

/* coll_pipe.c: bounded staging of blocking all-to-alls (-coll-stage). */
/* Is c's staging bounded (a blocking all-to-all; a gather or scatter among
 * ranks of this node)? */
int bdr_pipe_bounded(const coll_t *c);
/* Is c past its bound (its ranks take before they put more)? */
int bdr_pipe_over(const coll_t *c);
/* Ship the complete pieces of c for other nodes that their masters have
 * credit for; once every local rank has put all and all are shipped, the
 * DONEs (c->pipe_net instances, instead of bdr_coll_ship_local's all at
 * once). */
void bdr_pipe_ship(coll_t *c);
/* Node `node` says its reader has read piece idx (bytes) of c: credit. */
void bdr_pipe_credit(coll_t *c, int node, int idx, uint64_t bytes);
/* In place across nodes: piece idx, sent by a rank of another node to one
 * here, is complete there (CM_READY): its partner may be shipped. */
void bdr_pipe_ready(coll_t *c, int idx);
/* Piece p of c was placed (total bytes) / is gone with c: count it. */
void bdr_pipe_placed(coll_t *c, const piece_t *p, uint64_t total);
void bdr_pipe_dropped(coll_t *c, const piece_t *p);
/* A GET of reader (a comm rank) read len more bytes, at off, of piece p, whose reader expects it to have
 * `want` bytes (0: as many as it has): once the reader has read what it
 * will (all of it, or all it expects when the counts disagree, which it
 * reports as MPI_ERR_TRUNCATE), give it back (pipelined instances).  0, or
 * -1 when the job fails. */
int bdr_pipe_read(coll_t *c, piece_t *p, int reader, uint64_t off, uint64_t len, uint64_t want);
/* Do c's pieces have several readers (MPI_Allgather(v); MPI_Bcast in
 * parts, d.count of them)?  Then reader (a comm rank) has read piece p
 * once a GET reaches its end (bdr_pipe_read's off + len). */
int bdr_pipe_multi(const coll_t *c);
/* Piece p of c is complete (several readers: it may be given back now). */
void bdr_pipe_filled(coll_t *c, piece_t *p);

/* A piece of c from another node is complete here: give its credit back
 * at once when its reader waits elsewhere (nonblocking, coll_pipe.c). */
void bdr_pipe_remote_in(coll_t *c);
/* The node whose rank sent piece p of c, when another one (a pipelined
 * kind); else -1. */
int bdr_pipe_from_node(const coll_t *c, const piece_t *p);
/* Is s, blocked in COLL_TAKE, to be answered now? */
int bdr_pipe_take_ready(slave_t *s);
/* coll_fold.c: fold c's arrived contributions into c->acc (rank order, or
 * as they come where that gives the same bits), keeping the scans'
 * prefixes; c->next_fold reaches the communicator's size when all are in. */
void bdr_coll_try_fold(coll_t *c);
/* Something changed for c: fold, compute, ship what is due, wake its ranks. */
void bdr_coll_progress(coll_t *c);
/* Free c once every local rank ended it and every node sent its part. */
void bdr_coll_maybe_free(coll_t *c);

/* coll_stage.c: the spill file of an instance, through direct I/O. */
/* May a piece of `bytes` stay in the master's memory?  Only while the
 * node's budget has room for it and no rank waits for memory. */
int bdr_stage_fits(uint64_t bytes);
/* Create c's spill file (c->fd); 0 or -errno. */
int bdr_stage_open(coll_t *c);
/* Write len bytes at off of piece p (placed in c's file); 0 or -errno. */
int bdr_stage_write(coll_t *c, piece_t *p, uint64_t off, const char *src, uint32_t len);
/* Store piece p, just placed in c's file, from data (the piece's memory
 * as place() in coll.c allocates it: aligned to BD_FS_DIO_ALIGN, with room
 * for p->total rounded up to it), which the stage owns from now on: its
 * write is queued, and data stays counted in bdr_coll_staging_bytes()
 * until the write completes and it is freed.  0 or -errno. */
int bdr_stage_store(coll_t *c, piece_t *p, char *data);
/* Bytes of staging memory being written, freed when the writes complete. */
uint64_t bdr_stage_writing_bytes(void);
/* Read len bytes at off of piece p; 0 or -errno. */
int bdr_stage_read(coll_t *c, const piece_t *p, uint64_t off, char *dst, uint32_t len);
/* After bdr_stage_read or a write failed with -EBADMSG (storage gave back
 * other bytes than were written): "at offset O in FILE". */
const char *bdr_stage_bad(void);
/* The checksums of p's blocks in c's file (for bdr_node_send_file), after
 * bdr_stage_ship_fd; malloc'd. */
uint32_t *bdr_stage_piece_ck(coll_t *c, const piece_t *p);
/* A descriptor of c's file for readers that do not align (node.c ships
 * whole pieces to other nodes from it); -errno on failure. */
int bdr_stage_ship_fd(coll_t *c);
/* c is freed: close its file, drop what is staged for it. */
void bdr_stage_close(coll_t *c);
/* Start reading piece p of c (complete, in the file, with one reader)
 * whole into memory for the GETs to come: 1 started, 0 nothing to do, -1
 * no room (the budget or the bound of reads ahead). */
int bdr_stage_readahead(coll_t *c, const piece_t *p);
/* Piece p of c, in its file, has been read whole by its one reader: drop
 * what is staged for it and give its blocks back to the file system.
 * 0 or -errno. */
int bdr_stage_release(coll_t *c, const piece_t *p);
/* Give back the buffers not in use (the pool, the read cache); returns
 * the bytes freed. */
uint64_t bdr_stage_trim(void);

/* coll_ref.c: pieces handed over by reference to their stored copy. */
/* Read len bytes at off of piece p (p->ref); 0 or -errno (-EBADMSG: the
 * store gave back other bytes than the sender stored, bdr_ref_bad says
 * where). */
int bdr_ref_read(const piece_t *p, uint64_t off, char *dst, uint32_t len);
const char *bdr_ref_bad(void);
/* p goes: give its references back (nothing when it has none). */
void bdr_ref_drop(piece_t *p);
/* Rank `reader` (a comm rank) of c GETs the start of its piece from peer
 * `from`: read the pieces by reference it will read from c from that peer
 * on (readers read in peer order), all at once, when the budget has room
 * (a cache: what is not read so is read as it is asked for).  Only
 * all-to-alls and gathers: a scatter's reader reads one piece. */
void bdr_ref_batch(coll_t *c, int reader, int from);
/* Bytes of the master's memory for reading references (in the budget). */
uint64_t bdr_ref_buffer_bytes(void);
/* The buffers are not in use: give them back; returns the bytes freed. */
uint64_t bdr_ref_trim(void);

/* coll_net.c */
/* This node's ranks have given what the other nodes need: send it. */
void bdr_coll_ship_local(coll_t *c);
/* Send piece idx of c to node n / c's DONE to node n. */
void bdr_coll_ship_piece(coll_t *c, int n, int idx);
void bdr_coll_ship_done(coll_t *c, int n);
/* Tell node n that piece idx of c (bytes) has been read here. */
void bdr_coll_ship_credit(coll_t *c, int n, int idx, uint64_t bytes);
/* In place across nodes: tell node n that piece idx (of a rank here, for
 * one there) is complete (coll_pipe.c, bdr_pipe_ready there). */
void bdr_coll_ship_ready(coll_t *c, int n, int idx);
/* Coordinator: everything has come; send every node its results. */
void bdr_coll_ship_results(coll_t *c);
/* Apply data that came for communicator ctx before it was known here. */
void bdr_coll_replay_orphans(int ctx);

#endif
