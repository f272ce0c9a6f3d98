/*
 * init_query: environment inquiry functions.
 *
 * MPI_Initialized / MPI_Finalized before MPI_Init, after MPI_Init and after
 * MPI_Finalize; MPI_Get_version and MPI_Get_library_version before MPI_Init
 * and after MPI_Finalize (both are allowed there, MPI-3.1 8.1.1 / 8.7);
 * Comm_size / Comm_rank on MPI_COMM_WORLD and MPI_COMM_SELF;
 * MPI_Get_processor_name; MPI_Wtime monotonic and MPI_Wtick > 0;
 * MPI_Query_thread and MPI_Is_thread_main after plain MPI_Init.
 */
#include "mtest.h"

#include <time.h>

int main(int argc, char **argv)
{
    int pre_init = -1, pre_fin = -1, pre_ver = -1, pre_sub = -1;
    int flag, rank, size, i;
    char libver[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = -1, pre_liblen = -1;

    /* Allowed before MPI_Init. */
    MPI_Initialized(&pre_init);
    MPI_Finalized(&pre_fin);
    MPI_Get_version(&pre_ver, &pre_sub);
    MPI_Get_library_version(libver, &pre_liblen);

    mtest_init(&argc, &argv, "init_query");
    rank = mtest_rank_;
    size = mtest_size_;

    CHECK(pre_init == 0, "MPI_Initialized before MPI_Init gave %d", pre_init);
    CHECK(pre_fin == 0, "MPI_Finalized before MPI_Init gave %d", pre_fin);
    CHECK(pre_ver >= 3, "MPI_Get_version before MPI_Init gave %d.%d", pre_ver, pre_sub);
    CHECK(pre_liblen > 0, "MPI_Get_library_version before init: len %d", pre_liblen);

    flag = -1;
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after MPI_Init gave %d", flag);
    flag = -1;
    MPI_Finalized(&flag);
    CHECK(flag == 0, "MPI_Finalized after MPI_Init gave %d", flag);

    /* ---- sizes and ranks ---- */
    CHECK(size >= 1, "MPI_COMM_WORLD size %d", size);
    CHECK(rank >= 0 && rank < size, "rank %d not in [0,%d)", rank, size);
    {
        int mn = 0, mx = 0, *all = malloc(sizeof(int) * (size_t)size);
        MPI_Allreduce(&size, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&size, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(mn == size && mx == size, "sizes differ: min %d max %d", mn, mx);
        MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        for (i = 0; i < size; i++)
            CHECK(all[i] == i, "rank gathered at %d is %d (ranks not unique)", i, all[i]);
        free(all);
    }
    {
        int ssize = -1, srank = -1;
        MPI_Comm_size(MPI_COMM_SELF, &ssize);
        MPI_Comm_rank(MPI_COMM_SELF, &srank);
        CHECK_INT(ssize, 1, "MPI_COMM_SELF size");
        CHECK_INT(srank, 0, "MPI_COMM_SELF rank");
    }

    /* ---- processor name ---- */
    {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len = -1;
        memset(name, 'x', sizeof name);
        MPI_Get_processor_name(name, &len);
        CHECK(len >= 1 && len < MPI_MAX_PROCESSOR_NAME, "processor name length %d (max %d)", len,
              MPI_MAX_PROCESSOR_NAME);
        if (len >= 0 && len < MPI_MAX_PROCESSOR_NAME)
            CHECK((int)strnlen(name, sizeof name) == len,
                  "processor name strlen %d != resultlen %d", (int)strnlen(name, sizeof name), len);
    }

    /* ---- version ---- */
    {
        int ver = -1, sub = -1;
        MPI_Get_version(&ver, &sub);
        CHECK(ver >= 3, "MPI_Get_version gave %d.%d, want >= 3", ver, sub);
        CHECK(sub >= 0, "negative subversion %d", sub);
        CHECK(ver == pre_ver && sub == pre_sub, "version before init %d.%d != after %d.%d", pre_ver,
              pre_sub, ver, sub);
        CHECK(ver == MPI_VERSION && sub == MPI_SUBVERSION,
              "library version %d.%d != mpi.h MPI_VERSION.MPI_SUBVERSION %d.%d", ver, sub,
              MPI_VERSION, MPI_SUBVERSION);

        memset(libver, 0, sizeof libver);
        MPI_Get_library_version(libver, &liblen);
        CHECK(liblen >= 1 && liblen < MPI_MAX_LIBRARY_VERSION_STRING,
              "library version length %d (max %d)", liblen, MPI_MAX_LIBRARY_VERSION_STRING);
        if (liblen >= 0 && liblen < MPI_MAX_LIBRARY_VERSION_STRING)
            CHECK((int)strlen(libver) == liblen, "library version strlen %d != resultlen %d",
                  (int)strlen(libver), liblen);
#ifdef BDMPI_VERSION_STRING
        /* BDMPI implements all of MPI 4.0 (docs/design.md, "MPI 4.0"). */
        CHECK(ver == 4 && sub == 0, "BDMPI reports MPI %d.%d, not 4.0", ver, sub);
        CHECK(strstr(libver, "MPI 4.0") != NULL, "library version \"%s\" does not say MPI 4.0",
              libver);
#endif
    }

    /* ---- timers ---- */
    {
        double tick = MPI_Wtick(), prev = MPI_Wtime(), t0 = prev, now = prev;
        int backwards = 0, advanced = 0;
        struct timespec ts = {0, 20 * 1000 * 1000}; /* 20 ms */

        CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick %g not in (0,1)", tick);
        for (i = 0; i < 100000 && !advanced; i++) {
            now = MPI_Wtime();
            if (now < prev)
                backwards++;
            if (now > t0)
                advanced = 1;
            prev = now;
        }
        CHECK(backwards == 0, "MPI_Wtime went backwards %d times", backwards);
        /* a 20 ms sleep, on a few ranks only so that it stays cheap when
         * hundreds of ranks run one after the other */
        if (rank < 4) {
            t0 = MPI_Wtime();
            nanosleep(&ts, NULL);
            now = MPI_Wtime();
            CHECK(now - t0 >= 0.015 && now - t0 < 30.0, "MPI_Wtime measured %g s for a 20 ms sleep",
                  now - t0);
        }
    }

    /* ---- threads ---- */
    {
        int provided = -1;
        MPI_Query_thread(&provided);
        CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
                  MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                  MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
              "thread level constants are not monotonic");
        CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
                  provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
              "MPI_Query_thread gave invalid level %d", provided);
        flag = -1;
        MPI_Is_thread_main(&flag);
        CHECK(flag == 1, "MPI_Is_thread_main on the main thread gave %d", flag);
    }

    /* Everyone must still be able to communicate after all of this. */
    {
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK_INT(sum, (long long)size * (size - 1) / 2, "allreduce of ranks");
    }

    {
        int total = mtest_report(NULL), late = 0, ver = -1, sub = -1, len = -1;
        MPI_Finalize();

        /* After MPI_Finalize only a few calls are allowed. */
        flag = -1;
        MPI_Finalized(&flag);
        if (flag != 1) {
            fprintf(stderr,
                    "rank %d: init_query: MPI_Finalized after "
                    "MPI_Finalize gave %d\n",
                    rank, flag);
            late++;
        }
        flag = -1;
        MPI_Initialized(&flag);
        if (flag != 1) {
            fprintf(stderr,
                    "rank %d: init_query: MPI_Initialized after "
                    "MPI_Finalize gave %d\n",
                    rank, flag);
            late++;
        }
        MPI_Get_version(&ver, &sub);
        if (ver < 3) {
            fprintf(stderr,
                    "rank %d: init_query: MPI_Get_version after "
                    "MPI_Finalize gave %d.%d\n",
                    rank, ver, sub);
            late++;
        }
        MPI_Get_library_version(libver, &len);
        if (len != liblen) {
            fprintf(stderr,
                    "rank %d: init_query: MPI_Get_library_version "
                    "after MPI_Finalize gave length %d\n",
                    rank, len);
            late++;
        }
        if (late && rank == 0)
            printf("FAIL init_query (%d errors after MPI_Finalize)\n", late);
        return (total || late) ? 1 : 0;
    }
}
