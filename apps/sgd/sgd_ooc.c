/* sgd_ooc -- the explicit out-of-core variant (the paper's BDMPI-ooc) of
 * sgd.c: same algorithm, same output; around every blocking MPI call the
 * rank spills its block of the rating matrix to a file in -d DIR (default
 * $TMPDIR) and frees it, then reads it back. */
#define SGD_OOC 1
#include "sgd.c"
