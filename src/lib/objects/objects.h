/* libbdmpi, middle room: communicators (intercommunicators included),
 * groups, attributes, topologies, info objects and the datatype calls, built
 * on the bottom room (core/) alone. */
#ifndef BDL_OBJECTS_H
#define BDL_OBJECTS_H

#include "core.h"
#include "dt.h"
#include "nbc.h"

/* comm.c: MPI_COMM_WORLD, MPI_COMM_SELF, BDMPI_COMM_NODE and
 * BDMPI_COMM_CWORLD (MPI_Init). */
void bdl_comm_setup_predefined(const bd_spawn_info_t *sp); /* sp: a spawned rank's */
/* comm.c: collective creation from comm (color MPI_UNDEFINED gives MPI_COMM_NULL). */
int bdl_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call);

/* comm.c: the intracommunicator of exactly the world ranks mem[n] (in that
 * order), collective over them alone; tag < 0 is for the library's own use. */
int bdl_comm_create_members(MPI_Comm parent, const int *mem, int n, int tag, MPI_Comm *newcomm,
                            const char *call);

/* objects/comm_nbc.c: communicator creation as a nonblocking collective on
 * c (size > 1): a split with color and key, call api (BD_API_COMM_DUP);
 * once it completes, fin gets the new context.  request NULL: complete it
 * now. */
int bdl_nbc_split(bdl_comm_t *c, int color, int key, int api, bdl_nbc_fin_t fin, void *arg,
                  MPI_Request *request);

/* intercomm_create.c: the library's own traffic with the remote group of
 * an intercommunicator, on its hidden internal context. */
int bdl_inter_send_to(const bdl_comm_t *c, int remote, int tag, const void *buf, uint64_t count,
                      const bdl_dt_t *t);
/* A truncated message is reported on comm as call's error. */
int bdl_inter_recv_from(MPI_Comm comm, const char *call, const bdl_comm_t *c, int remote, int tag,
                        void *buf, uint64_t count, const bdl_dt_t *t);

/* intercomm_create.c: how a leader reaches the other group's leader: it
 * sends on context ctx to world rank dst, stamped with source stamp, and
 * receives from source src on ctx. */
typedef struct bdl_leaders {
    int ctx, dst, stamp, src;
} bdl_leaders_t;
/* The intercommunicator of local_comm's group (collective over it) and the
 * group whose leader the local leader reaches as `how` says (only read
 * there): the leaders swap their groups with messages of this tag, and the
 * other group does the same.  The groups must be disjoint. */
int bdl_inter_build(MPI_Comm local_comm, int local_leader, const bdl_leaders_t *how, int tag,
                    const char *call, MPI_Comm *newintercomm);

/* intercomm_create.c: the split of an intercommunicator (bdl_comm_split of one). */
int bdl_inter_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm, const char *call);
/* MPI_Comm_idup of an intercommunicator: the split of its union that made
 * the new union (context ctx, the caller its rank urank of un members uworld,
 * taken over) is complete; make the pending entry h the new
 * intercommunicator. */
void bdl_inter_idup_done(MPI_Comm h, int ctx, int urank, int un, int *uworld);

/* info.c: MPI_SUCCESS if info is MPI_INFO_NULL or a valid info object;
 * otherwise the error, reported on MPI_COMM_WORLD for call. */
int bdl_info_check(const char *call, MPI_Info info);
int bdl_info_valid(MPI_Info info); /* the same without reporting: 1 if valid */

/* group.c: groups, attributes */
int bdl_group_new(int n, const int *world);        /* a group handle (copies world), or -1 */
const int *bdl_group_members(MPI_Group g, int *n); /* NULL if g is not a valid group */
int bdl_attr_copy_all(MPI_Comm oldcomm, MPI_Comm newcomm, const char *call);
int bdl_attr_delete_all(MPI_Comm comm, const char *call);
int bdl_attr_get(bdl_comm_t *c, int keyval, void **val, int *flag);

/* topo.c */
struct bdl_topo *bdl_topo_dup(const struct bdl_topo *t);
void bdl_topo_free(struct bdl_topo *t);
/* The neighbours of this rank in its communicator's topology, in the order
 * of the neighbourhood collectives (MPI 3.1 7.6); MPI_PROC_NULL at the
 * edges of a non-periodic Cartesian grid. */
typedef struct bdl_nbrs {
    int cart; /* Cartesian: block 2d is the -1 neighbour, 2d+1 the +1 one */
    int indeg, outdeg;
    int *in, *out;
} bdl_nbrs_t;
int bdl_topo_neighbors(const bdl_comm_t *c, bdl_nbrs_t *nb); /* -1: no topology or no memory */
void bdl_nbrs_free(bdl_nbrs_t *nb);
/* MPI_Dist_graph_create's argument checks (errors reported; *c and *nedges
 * set on success), and the creation of its communicator once every rank
 * knows its in- and out-edges (srcw/dstw: weights; collective over comm). */
int bdl_topo_dist_args(MPI_Comm comm, const char *call, int n, const int sources[],
                       const int degrees[], const int destinations[], const int weights[],
                       MPI_Info info, MPI_Comm *comm_dist_graph, bdl_comm_t **c, int *nedges);
int bdl_topo_dist_attach(MPI_Comm comm, const char *call, int indeg, const int *src,
                         const int *srcw, int outdeg, const int *dst, const int *dstw, int weighted,
                         MPI_Comm *comm_dist_graph);

/* type_create.c, type_query.c: argument checks of the datatype calls. */
static inline int bdl_type_arg(const char *call, const char *what, MPI_Datatype dt, bdl_dt_t **out)
{
    return bdl_dt_arg(MPI_COMM_WORLD, call, what, dt, out);
}
/* A constructor out of memory: the half-built type is freed. */
static inline int bdl_type_nomem(bdl_dt_builder_t *b, const char *call)
{
    bdl_dt_build_abort(b);
    return bdl_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, call, "out of memory building a datatype");
}
#define BDL_CHECK_OUT(call, p)                                                                     \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return bdl_error(MPI_COMM_WORLD, MPI_ERR_ARG, call, "NULL output argument");           \
    } while (0)

/* pack_ext.c: external32 (MPI-IO's data representation too): the bytes of
 * one element of t, and the conversion of count elements between t's
 * native packed stream at nat and external32 at ext (to_ext: nat -> ext). */
uint64_t bdl_dt_ext_size(const bdl_dt_t *t);
void bdl_dt_ext_convert(const bdl_dt_t *t, uint64_t count, void *nat, void *ext, int to_ext);

/* typeattr.c: datatype attributes (MPI_Type_dup, MPI_Type_free) */
int bdl_type_attr_copy_all(MPI_Datatype oldtype, MPI_Datatype newtype, const char *call);
int bdl_type_attr_delete_all(MPI_Datatype dt, const char *call);
void bdl_type_attr_drop(MPI_Datatype dt);

#endif
