/* A rank that waits outside MPI for the rank whose free run slot is kept
 * from it for memory (issue 13, session 16).
 *
 * 2 ranks, -nr 2, each with a managed array of argv[1] KiB (default 3072)
 * under a budget that holds one of them but not both (corun_asleep.sh:
 * -mem 5M, 3584 KiB; with 3072 the other one runs with its grants capped
 * instead, session 17).  After a first round (each writes its array, then a barrier,
 * which tells the master how much each holds), both write their arrays
 * again, free them, and meet over a socket: rank 0 accepts, rank 1
 * connects and writes a byte, rank 0 answers one.  Whichever runs first sleeps in accept() or
 * read() outside MPI for the other, whose second run slot the master keeps
 * free because the two arrays do not fit together (CORUN_HELD).  Only by
 * lending the sleeper's slot (-lend-asleep, asleep.c) does the other get
 * to run; a master that lends only when no slot is free waits for ever.
 * Rank 0 prints "PASS corun_asleep". */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(int me, const char *what)
{
    fprintf(stderr, "rank %d: %s failed\n", me, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int fill(uint64_t *a, uint64_t n, int me, int round)
{
    int bad = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t v = ((uint64_t)me << 56) ^ (k * 0x9E3779B97F4A7C15ull);
        if (round > 0 && a[k] != (v ^ (uint64_t)(round - 1)))
            bad++;
        a[k] = v ^ (uint64_t)round;
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        die(me, "running with 2 ranks");
    uint64_t n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 3072) * 1024 / 8;
    uint64_t *a = malloc(n * 8);
    if (!a)
        die(me, "malloc");
    int bad = fill(a, n, me, 0), port = 0, ls = -1;
    if (me == 0) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ls = socket(AF_INET, SOCK_STREAM, 0);
        if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0 ||
            getsockname(ls, (struct sockaddr *)&sa, &sl) < 0)
            die(me, "listen");
        port = ntohs(sa.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad += fill(a, n, me, 1);
    /* A rank asleep outside MPI cannot be unloaded: what it held would stay
     * out of reach of the one its slot is lent to. */
    free(a);
    a = NULL;
    char c = 'x';
    if (me == 0) {
        int s = accept(ls, NULL, NULL);
        if (s < 0 || read(s, &c, 1) != 1 || write(s, &c, 1) != 1)
            die(me, "accept/read/write");
        close(s);
        close(ls);
    } else {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons((uint16_t)port);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0 || write(s, &c, 1) != 1 ||
            read(s, &c, 1) != 1)
            die(me, "connect/write/read");
        close(s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s corun_asleep: %d words wrong\n", all ? "FAIL" : "PASS", all);
    MPI_Finalize();
    return all != 0;
}
