/* Many spawned ranks alive at once, spawned concurrently by ranks that were
 * spawned themselves: world rank 0 spawns FANOUT children one at a time on
 * MPI_COMM_SELF, each child spawns FANOUT-1 of its own, and so on down to
 * leaves that spawn none.  No one exits before its whole subtree has
 * reported, so with FANOUT 4 all 4 + 4*3 + 4*3*2 + 4*3*2*1 = 64 spawned
 * ranks are alive together, and siblings' spawns overlap in time.
 *
 * Checks, bottom up: every rank's argv names its depth; every child reports
 * (over its parent intercommunicator) the size of its subtree and the sum of
 * the depths in it; the root compares both totals with the closed form.  A
 * failure anywhere is counted in the reports, so the root's verdict covers
 * every process.  MPI_UNIVERSE_SIZE, where set, must exceed the world for
 * the test to run at all (otherwise it skips, as a runtime that cannot
 * spawn). */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define FANOUT 4

/* The root's first spawn failed in an MPI that cannot create processes
 * here (MPICH's mpiexec under some launchers): the test skips. */
static int g_unavailable;

/* Spawned ranks in the subtree of a rank allowed to spawn fan children,
 * and the sum of their depths when the rank itself is at depth d. */
static void expect(int fan, int d, long *count, long *depths)
{
    *count = 0;
    *depths = 0;
    for (int i = 0; i < fan; i++) {
        long c, s;
        expect(fan - 1, d + 1, &c, &s);
        *count += 1 + c;
        *depths += (d + 1) + s;
    }
}

/* Spawns fan children, one MPI_Comm_spawn each, each told fan-1, then sums
 * their reports: [subtree count, depth sum, failures].  The children stay
 * alive until release_children. */
static int spawn_children(const char *prog, int fan, int depth, MPI_Comm ic[], long rep[3])
{
    int n = 0;
    for (int i = 0; i < fan; i++) {
        char fan_s[16], depth_s[16];
        snprintf(fan_s, sizeof fan_s, "%d", fan - 1);
        snprintf(depth_s, sizeof depth_s, "%d", depth + 1);
        char *args[] = {"child", fan_s, depth_s, NULL};
        int errcode = -1;
        int rc = MPI_Comm_spawn(prog, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic[n], &errcode);
        if (rc != MPI_SUCCESS && depth == 0 && i == 0) {
            char v[MPI_MAX_LIBRARY_VERSION_STRING];
            int len = 0;
            MPI_Get_library_version(v, &len);
            if (!strstr(v, "BDMPI")) {
                g_unavailable = 1;
                return 0;
            }
        }
        if (rc != MPI_SUCCESS || errcode != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, msg, &len);
            CHECK(0, "depth %d: spawn %d of %d failed: %s (errcode %d)", depth, i, fan, msg,
                  errcode);
            rep[2]++;
            continue;
        }
        n++;
    }
    for (int i = 0; i < n; i++) {
        long sub[3];
        MPI_Recv(sub, 3, MPI_LONG, 0, 7, ic[i], MPI_STATUS_IGNORE);
        rep[0] += 1 + sub[0];
        rep[1] += (depth + 1) + sub[1];
        rep[2] += sub[2];
    }
    return n;
}

/* Nobody below has exited yet: every rank of the subtrees is alive now. */
static void release_children(MPI_Comm ic[], int n)
{
    for (int i = 0; i < n; i++) {
        int go = 1;
        MPI_Send(&go, 1, MPI_INT, 0, 8, ic[i]);
        MPI_Comm_disconnect(&ic[i]);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm parent;
    MPI_Init(&argc, &argv);
    mtest_begin("spawn_tree");
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        long rep[3] = {0, 0, 0};
        MPI_Comm ic[FANOUT];
        int n = 0;
        int fan = argc >= 4 ? atoi(argv[2]) : -1, depth = argc >= 4 ? atoi(argv[3]) : -1;
        int size = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (argc < 4 || strcmp(argv[1], "child") || fan < 0 || fan >= FANOUT || depth < 1 ||
            size != 1) {
            fprintf(stderr, "spawn_tree: a child with argc %d, world size %d\n", argc, size);
            rep[2]++;
        } else {
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
            n = spawn_children(argv[0], fan, depth, ic, rep);
        }
        rep[2] += mtest_errors();
        MPI_Send(rep, 3, MPI_LONG, 0, 7, parent);
        int go = 0;
        MPI_Recv(&go, 1, MPI_INT, 0, 8, parent, MPI_STATUS_IGNORE);
        release_children(ic, n);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }

    int size = mtest_size_;
    int *usize = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
    if (flag && *usize <= size) {
        if (mtest_rank_ == 0)
            printf("SKIP spawn_tree: MPI_UNIVERSE_SIZE %d leaves no room to spawn\n", *usize);
        MPI_Finalize();
        return 77;
    }
    if (mtest_rank_ == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        long rep[3] = {0, 0, 0}, count, depths;
        MPI_Comm ic[FANOUT];
        int n = spawn_children(argv[0], FANOUT, 0, ic, rep);
        release_children(ic, n);
        if (g_unavailable) {
            MPI_Bcast(&g_unavailable, 1, MPI_INT, 0, MPI_COMM_WORLD);
            printf("SKIP spawn_tree: this MPI cannot create processes here\n");
            MPI_Finalize();
            return 77;
        }
        expect(FANOUT, 0, &count, &depths);
        CHECK(rep[0] == count, "%ld spawned ranks reported, expected %ld", rep[0], count);
        CHECK(rep[1] == depths, "depth sum %ld, expected %ld", rep[1], depths);
        CHECK(rep[2] == 0, "the spawned ranks reported %ld failures", rep[2]);
    }
    if (!g_unavailable)
        MPI_Bcast(&g_unavailable, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (g_unavailable) {
        MPI_Finalize();
        return 77;
    }
    return mtest_finalize();
}
