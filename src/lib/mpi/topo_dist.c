/* MPI_Dist_graph_create: the edges every rank describes are exchanged with
 * MPI_Alltoall(v), so this call lives with the collectives; the topology
 * object and the argument checks are objects/topo.c's. */
#include <limits.h>
#include <stdlib.h>

#include "core.h"
#include "mpi_int.h"
#include "objects.h"

static const int *weights_of(const int *w)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? NULL : w;
}

/* Every rank describes some edges (source -> destination, weight); each
 * edge is sent to its source (as an out-edge) and to its destination (as an
 * in-edge) with one all-to-all.  Both lists are in the order of (describing
 * rank, position in its arrays), so multiple edges between two ranks pair
 * up in order. */
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *comm_dist_graph)
{
    BDL_MT_GUARD;
    const char *call = "MPI_Dist_graph_create";
    (void)reorder;
    bdl_comm_t *c;
    int nedges;
    int rc = bdl_topo_dist_args(comm_old, call, n, sources, degrees, destinations, weights, info,
                                comm_dist_graph, &c, &nedges);
    if (rc)
        return rc;
    int size = c->size;
    int weighted = weights != MPI_UNWEIGHTED;
    const int *w = weights_of(weights);
    /* Per target rank: triples (0 out-edge / 1 in-edge, peer, weight). */
    int *scount = calloc((size_t)size, sizeof(int)), *sdisp = calloc((size_t)size, sizeof(int));
    int *rcount = calloc((size_t)size, sizeof(int)), *rdisp = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    int *sbuf = malloc((size_t)(nedges ? nedges : 1) * 6 * sizeof(int)), *rbuf = NULL;
    int *src = NULL, *dst = NULL, *srcw = NULL, *dstw = NULL, indeg = 0, outdeg = 0;
    rc = MPI_ERR_NO_MEM;
    if (!scount || !sdisp || !rcount || !rdisp || !fill || !sbuf)
        goto out;
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scount[sources[i]] += 3;
            scount[destinations[e]] += 3;
        }
    for (int r = 1; r < size; r++)
        sdisp[r] = sdisp[r - 1] + scount[r - 1];
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e], wt = w ? w[e] : 1;
            int *p = sbuf + sdisp[s] + fill[s];
            p[0] = 0, p[1] = d, p[2] = wt;
            fill[s] += 3;
            p = sbuf + sdisp[d] + fill[d];
            p[0] = 1, p[1] = s, p[2] = wt;
            fill[d] += 3;
        }
    if ((rc = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old)))
        goto out;
    long long total = 0;
    for (int r = 0; r < size; r++) {
        rdisp[r] = (int)total;
        total += rcount[r];
    }
    rc = MPI_ERR_NO_MEM;
    if (total > INT_MAX || !(rbuf = malloc((size_t)(total ? total : 1) * sizeof(int))))
        goto out;
    if ((rc = MPI_Alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT, comm_old)))
        goto out;
    for (long long k = 0; k < total; k += 3)
        if (rbuf[k])
            indeg++;
        else
            outdeg++;
    src = malloc((size_t)(indeg ? indeg : 1) * sizeof(int) * 2);
    dst = malloc((size_t)(outdeg ? outdeg : 1) * sizeof(int) * 2);
    rc = MPI_ERR_NO_MEM;
    if (src && dst) {
        srcw = src + (indeg ? indeg : 1);
        dstw = dst + (outdeg ? outdeg : 1);
        int a = 0, b = 0;
        for (long long k = 0; k < total; k += 3) {
            if (rbuf[k]) {
                src[a] = rbuf[k + 1];
                srcw[a++] = rbuf[k + 2];
            } else {
                dst[b] = rbuf[k + 1];
                dstw[b++] = rbuf[k + 2];
            }
        }
        rc = MPI_SUCCESS;
    }
out:
    free(scount);
    free(sdisp);
    free(rcount);
    free(rdisp);
    free(fill);
    free(sbuf);
    free(rbuf);
    if (rc == MPI_ERR_NO_MEM)
        rc = bdl_error(comm_old, rc, call, "out of memory");
    else if (!rc)
        rc = bdl_topo_dist_attach(comm_old, call, indeg, src, srcw, outdeg, dst, dstw, weighted,
                                  comm_dist_graph);
    free(src);
    free(dst);
    return rc;
}
