/* pagerank_ooc -- the explicit out-of-core variant (the paper's BDMPI-ooc)
 * of pagerank.c: same algorithm, same output; around every blocking MPI
 * call the rank spills its graph, rank vector and receive index to a file in
 * -d DIR (default $TMPDIR) and frees them, then reads them back. */
#define PR_OOC 1
#include "pagerank.c"
