/*
 * name_service: MPI_Publish_name, MPI_Lookup_name, MPI_Unpublish_name
 * within one job (MPI 4.1 section 11.4.4).
 *
 * The last rank opens a port and publishes it under a service name made
 * unique by the process id; after a barrier every rank looks the name up
 * and must find the same port name the publisher broadcasts.  The
 * publisher unpublishes it; after a barrier a lookup fails with
 * MPI_ERR_NAME, and unpublishing it again fails (MPI_ERR_SERVICE).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "name_service");
    int rank = mtest_rank_, size = mtest_size_, pub = size - 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char service[64], port[MPI_MAX_PORT_NAME] = "", found[MPI_MAX_PORT_NAME] = "";
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, pub, MPI_COMM_WORLD);
    snprintf(service, sizeof service, "name_service-%d", id);
    int rc = MPI_SUCCESS;
    if (rank == pub) {
        rc = MPI_Open_port(MPI_INFO_NULL, port);
        if (rc == MPI_SUCCESS)
            rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    }
    MPI_Bcast(&rc, 1, MPI_INT, pub, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        /* No ports or name service where this MPI runs: nothing to test,
         * except under BDMPI. */
        mtest_dynproc_unavailable(rc);
        CHECK_INT(rc, MPI_SUCCESS, "MPI_Open_port and MPI_Publish_name");
    }
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, pub, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_Lookup_name(service, MPI_INFO_NULL, found));
    CHECK(!strcmp(found, port), "looked up \"%s\", published \"%s\"", found, port);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == pub)
        CHECK_MPI(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    MPI_Barrier(MPI_COMM_WORLD);
    int cls = -1;
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS, "lookup of an unpublished name succeeded");
    if (rc != MPI_SUCCESS)
        CHECK_INT(cls, MPI_ERR_NAME, "class of a failed lookup");
    if (rank == pub) {
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS, "unpublishing twice succeeded");
        if (rc != MPI_SUCCESS)
            CHECK_INT(cls, MPI_ERR_SERVICE, "class of unpublishing twice");
        CHECK_MPI(MPI_Close_port(port));
    }
    return mtest_finalize();
}
