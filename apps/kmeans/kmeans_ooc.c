/* kmeans_ooc -- the explicit out-of-core variant (the paper's BDMPI-ooc) of
 * kmeans.c: same algorithm, same output; around every blocking MPI call the
 * rank spills its rows and assignment vector to a file in -d DIR (default
 * $TMPDIR) and frees them, then reads them back. */
#define KM_OOC 1
#include "kmeans.c"
