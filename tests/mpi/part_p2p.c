/*
 * part_p2p.c - partitioned point-to-point (MPI 4.0 4.2): a ring of
 * MPI_Psend_init/MPI_Precv_init pairs run for several rounds, partitions
 * marked with MPI_Pready (in reverse order), MPI_Pready_range and
 * MPI_Pready_list, the receiver polling MPI_Parrived; two channels with the
 * same peer and tag matched in init order although the second one is made
 * ready and completed first; a derived datatype; the receive's status.
 */
#include "mtest.h"

#define PARTS 4
#define COUNT 3
#define ROUNDS 3

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "part_p2p");
    int rank = mtest_rank_, size = mtest_size_;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* The ring. */
    {
        int out[PARTS * COUNT], in[PARTS * COUNT];
        MPI_Request s, r;
        MPI_Psend_init(out, PARTS, COUNT, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
        MPI_Precv_init(in, PARTS, COUNT, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        for (int it = 0; it < ROUNDS; it++) {
            for (int i = 0; i < PARTS * COUNT; i++) {
                out[i] = rank * 1000 + it * 100 + i;
                in[i] = -1;
            }
            MPI_Start(&r);
            MPI_Start(&s);
            if (it == 0) {
                for (int k = PARTS - 1; k >= 0; k--)
                    MPI_Pready(k, s);
            } else if (it == 1) {
                MPI_Pready_range(0, PARTS - 1, s);
            } else {
                int list[PARTS];
                for (int k = 0; k < PARTS; k++)
                    list[k] = (k * 3 + 1) % PARTS;
                MPI_Pready_list(PARTS, list, s);
            }
            /* Every partition arrives eventually. */
            for (int k = 0; k < PARTS; k++) {
                int flag = 0;
                while (!flag)
                    MPI_Parrived(r, k, &flag);
                for (int i = 0; i < COUNT; i++) {
                    int want = left * 1000 + it * 100 + k * COUNT + i;
                    CHECK(in[k * COUNT + i] == want, "round %d partition %d [%d]=%d want %d", it, k,
                          i, in[k * COUNT + i], want);
                }
            }
            MPI_Status st;
            MPI_Wait(&r, &st);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
            CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "status source %d tag %d",
                  st.MPI_SOURCE, st.MPI_TAG);
            int cnt = -1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK(cnt == PARTS * COUNT, "status count %d", cnt);
        }
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }

    /* Two channels with the same peer and tag: matched in init order. */
    {
        int a_out[2], b_out[2], a_in[2] = {-1, -1}, b_in[2] = {-1, -1};
        MPI_Request sa, sb, ra, rb;
        MPI_Psend_init(a_out, 2, 1, MPI_INT, right, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sa);
        MPI_Psend_init(b_out, 2, 1, MPI_INT, right, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sb);
        MPI_Precv_init(a_in, 2, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &ra);
        MPI_Precv_init(b_in, 2, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &rb);
        for (int it = 0; it < ROUNDS; it++) {
            a_out[0] = a_out[1] = rank * 10 + 1 + it * 100;
            b_out[0] = b_out[1] = rank * 10 + 2 + it * 100;
            MPI_Request all[4] = {sa, sb, ra, rb};
            MPI_Startall(4, all);
            MPI_Pready_range(0, 1, sb);
            MPI_Wait(&sb, MPI_STATUS_IGNORE);
            MPI_Pready(1, sa);
            MPI_Pready(0, sa);
            MPI_Wait(&sa, MPI_STATUS_IGNORE);
            MPI_Wait(&rb, MPI_STATUS_IGNORE);
            MPI_Wait(&ra, MPI_STATUS_IGNORE);
            CHECK(a_in[0] == left * 10 + 1 + it * 100 && a_in[1] == a_in[0],
                  "round %d channel A got %d %d", it, a_in[0], a_in[1]);
            CHECK(b_in[0] == left * 10 + 2 + it * 100 && b_in[1] == b_in[0],
                  "round %d channel B got %d %d", it, b_in[0], b_in[1]);
        }
        MPI_Request_free(&sa);
        MPI_Request_free(&sb);
        MPI_Request_free(&ra);
        MPI_Request_free(&rb);
    }

    /* A strided type: every other int of the buffer. */
    {
        MPI_Datatype vec;
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int out[12], in[12];
        for (int i = 0; i < 12; i++) {
            out[i] = rank * 100 + i;
            in[i] = -1;
        }
        MPI_Request s, r;
        MPI_Psend_init(out, 3, 1, vec, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
        MPI_Precv_init(in, 3, 1, vec, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Type_free(&vec);
        MPI_Start(&s);
        MPI_Start(&r);
        MPI_Pready_range(0, 2, s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        /* vec's extent is 3 ints: element k covers ints 3k and 3k+2. */
        for (int k = 0; k < 3; k++) {
            CHECK(in[3 * k] == left * 100 + 3 * k, "vector element %d first %d", k, in[3 * k]);
            CHECK(in[3 * k + 1] == -1, "vector element %d gap written: %d", k, in[3 * k + 1]);
            CHECK(in[3 * k + 2] == left * 100 + 3 * k + 2, "vector element %d second %d", k,
                  in[3 * k + 2]);
        }
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }

    return mtest_finalize();
}
