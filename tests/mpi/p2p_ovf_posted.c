/*
 * p2p_ovf_posted: a posted noncontiguous receive matched while the
 * receiver takes a batch of held messages.  Rank 0 sends rank 1 many small
 * messages, then one large one, then many small ones again, while rank 1
 * waits for a last message with a strided (vector) receive for the large
 * one already posted.  Under BDMPI at -nr 1 the small messages fill rank
 * 1's mailbox ring and the master holds the rest for it; rank 1 then takes
 * them in batches, and the large message, held in a spill file, is
 * unpacked into the strided buffer in the middle of a batch.  Every
 * message must arrive whole and in order (MPI 3.1 3.5): the unpacking must
 * not overwrite the batch's entries not yet taken.
 */
#include "mtest.h"

#define NSMALL 3000   /* small messages before and after the large one */
#define SMALL_INTS 64 /* 256 bytes each */
#define LARGE_INTS                                                                                 \
    (256 * 1024) /* the large message, 1 MiB: more than the window a batch comes in */

static int small_val(int phase, int k, int i) { return phase * 10000000 + k * 1000 + i; }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "p2p_ovf_posted");
    int rank = mtest_rank_, size = mtest_size_;
    if (size < 2) {
        return mtest_finalize_note("needs 2 ranks");
    }
    if (rank == 0) {
        int *out = malloc((size_t)2 * NSMALL * SMALL_INTS * sizeof(int));
        int *large = malloc(LARGE_INTS * sizeof(int));
        MPI_Request *rq = malloc((2 * NSMALL + 2) * sizeof *rq);
        int nrq = 0;
        for (int phase = 0; phase < 2; phase++) {
            for (int k = 0; k < NSMALL; k++) {
                int *b = out + ((size_t)phase * NSMALL + k) * SMALL_INTS;
                for (int i = 0; i < SMALL_INTS; i++)
                    b[i] = small_val(phase, k, i);
                MPI_Isend(b, SMALL_INTS, MPI_INT, 1, 2 + phase, MPI_COMM_WORLD, &rq[nrq++]);
            }
            if (phase == 0) {
                for (int i = 0; i < LARGE_INTS; i++)
                    large[i] = 7 * i + 1;
                MPI_Isend(large, LARGE_INTS, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq[nrq++]);
            }
        }
        static int last = 99;
        MPI_Isend(&last, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &rq[nrq++]);
        MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE);
        free(out);
        free(large);
        free(rq);
    } else if (rank == 1) {
        MPI_Datatype strided;
        MPI_Type_vector(LARGE_INTS, 1, 2, MPI_INT, &strided);
        MPI_Type_commit(&strided);
        int *big = malloc((size_t)2 * LARGE_INTS * sizeof(int));
        for (int i = 0; i < 2 * LARGE_INTS; i++)
            big[i] = -1;
        MPI_Request r;
        MPI_Irecv(big, 1, strided, 0, 1, MPI_COMM_WORLD, &r);
        int last = 0;
        MPI_Recv(&last, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_INT(last, 99, "the last message");
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < LARGE_INTS; i++)
            bad += big[2 * i] != 7 * i + 1 || big[2 * i + 1] != -1;
        CHECK(bad == 0, "the strided receive of the large message: %d of %d wrong", bad,
              LARGE_INTS);
        int in[SMALL_INTS];
        for (int phase = 0; phase < 2; phase++) {
            bad = 0;
            for (int k = 0; k < NSMALL; k++) {
                MPI_Status st;
                int cnt = -1;
                MPI_Recv(in, SMALL_INTS, MPI_INT, 0, 2 + phase, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_INT, &cnt);
                int ok = cnt == SMALL_INTS;
                for (int i = 0; ok && i < SMALL_INTS; i++)
                    ok = in[i] == small_val(phase, k, i);
                bad += !ok;
            }
            CHECK(bad == 0, "phase %d: %d of %d small messages wrong or out of order", phase, bad,
                  NSMALL);
        }
        MPI_Type_free(&strided);
        free(big);
    }
    return mtest_finalize();
}
