/* The MPI tool information interface (MPI_T_*, MPI 4.0 chapter 15), as any
 * implementation must answer it, whatever variables it has (BDMPI has none,
 * MPICH many):
 *  - before MPI_T_init_thread a query fails with MPI_T_ERR_NOT_INITIALIZED;
 *    MPI_T_init_thread works before MPI_Init, and nests: two inits need
 *    two finalizes, and a third finalize fails;
 *  - for control and performance variables, categories, event sources and
 *    event types: the count is >= 0; every index below it has a name whose
 *    lookup gives the index back; the index equal to the count and -1 are
 *    MPI_T_ERR_INVALID_INDEX (not checked under MPICH 4.0.2, which crashes
 *    there), an unknown name MPI_T_ERR_INVALID_NAME;
 *  - a performance-variable session can be made, used with
 *    MPI_T_PVAR_ALL_HANDLES, and freed (the handle becomes NULL);
 *    allocating a handle of a missing variable is MPI_T_ERR_INVALID_INDEX;
 *  - the MPI_T error classes are error classes MPI_Error_string knows. */
#include "mtest.h"

#define BOGUS "org.bdmpi.no.such.variable"

int main(int argc, char **argv)
{
    int n = -1, idx = -1, provided = -1, rc;
    char name[256], desc[256];
    int nlen, dlen, verb, bind, scope, cls, ro, cont, atomic;
    MPI_Datatype dt;
    MPI_T_enum en;

    rc = MPI_T_cvar_get_num(&n);
    int before_init = rc;
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    mtest_init(&argc, &argv, "tool_info");
    /* MPICH 4.0.2 (Debian's build) does not check MPI_T indices: an index
     * past the end crashes it (SIGSEGV), so those checks are BDMPI's only. */
    int bad = !mtest_is_mpich();
    CHECK_INT(before_init, MPI_T_ERR_NOT_INITIALIZED,
              "MPI_T_cvar_get_num before MPI_T_init_thread");
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
          "MPI_T_init_thread provided %d", provided);

    /* control variables */
    CHECK_MPI(MPI_T_cvar_get_num(&n));
    CHECK(n >= 0, "%d control variables", n);
    for (int i = 0; i < n; i++) {
        nlen = sizeof name, dlen = sizeof desc;
        rc = MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope);
        CHECK_INT(rc, MPI_SUCCESS, "MPI_T_cvar_get_info of a valid index");
        if (rc == MPI_SUCCESS && MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS)
            CHECK(idx == i, "cvar %s: index %d, expected %d", name, idx, i);
    }
    nlen = sizeof name, dlen = sizeof desc;
    if (bad)
        CHECK_INT(MPI_T_cvar_get_info(n, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope),
                  MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_get_info(count)");
    nlen = sizeof name, dlen = sizeof desc;
    if (bad)
        CHECK_INT(MPI_T_cvar_get_info(-1, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope),
                  MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_get_info(-1)");
    CHECK_INT(MPI_T_cvar_get_index(BOGUS, &idx), MPI_T_ERR_INVALID_NAME,
              "MPI_T_cvar_get_index(unknown)");
    MPI_T_cvar_handle ch;
    int count;
    if (bad)
        CHECK_INT(MPI_T_cvar_handle_alloc(n, NULL, &ch, &count), MPI_T_ERR_INVALID_INDEX,
                  "MPI_T_cvar_handle_alloc(count)");

    /* performance variables */
    CHECK_MPI(MPI_T_pvar_get_num(&n));
    CHECK(n >= 0, "%d performance variables", n);
    for (int i = 0; i < n; i++) {
        nlen = sizeof name, dlen = sizeof desc;
        rc = MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro,
                                 &cont, &atomic);
        CHECK_INT(rc, MPI_SUCCESS, "MPI_T_pvar_get_info of a valid index");
        if (rc == MPI_SUCCESS && MPI_T_pvar_get_index(name, cls, &idx) == MPI_SUCCESS)
            CHECK(idx == i, "pvar %s: index %d, expected %d", name, idx, i);
    }
    nlen = sizeof name, dlen = sizeof desc;
    if (bad)
        CHECK_INT(MPI_T_pvar_get_info(n, name, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind,
                                      &ro, &cont, &atomic),
                  MPI_T_ERR_INVALID_INDEX, "MPI_T_pvar_get_info(count)");
    CHECK_INT(MPI_T_pvar_get_index(BOGUS, MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_T_ERR_INVALID_NAME,
              "MPI_T_pvar_get_index(unknown)");
    MPI_T_pvar_session ps = MPI_T_PVAR_SESSION_NULL;
    CHECK_MPI(MPI_T_pvar_session_create(&ps));
    CHECK(ps != MPI_T_PVAR_SESSION_NULL, "MPI_T_pvar_session_create gave the null session");
    MPI_T_pvar_handle ph;
    if (bad)
        CHECK_INT(MPI_T_pvar_handle_alloc(ps, n, NULL, &ph, &count), MPI_T_ERR_INVALID_INDEX,
                  "MPI_T_pvar_handle_alloc(count)");
    CHECK_MPI(MPI_T_pvar_session_free(&ps));
    CHECK(ps == MPI_T_PVAR_SESSION_NULL, "MPI_T_pvar_session_free did not set the handle null");

    /* categories */
    CHECK_MPI(MPI_T_category_get_num(&n));
    CHECK(n >= 0, "%d categories", n);
    int nc, np, ncat;
    for (int i = 0; i < n; i++) {
        nlen = sizeof name, dlen = sizeof desc;
        rc = MPI_T_category_get_info(i, name, &nlen, desc, &dlen, &nc, &np, &ncat);
        CHECK_INT(rc, MPI_SUCCESS, "MPI_T_category_get_info of a valid index");
        if (rc == MPI_SUCCESS && MPI_T_category_get_index(name, &idx) == MPI_SUCCESS)
            CHECK(idx == i, "category %s: index %d, expected %d", name, idx, i);
    }
    nlen = sizeof name, dlen = sizeof desc;
    if (bad)
        CHECK_INT(MPI_T_category_get_info(n, name, &nlen, desc, &dlen, &nc, &np, &ncat),
                  MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_info(count)");
    int indices[4];
    if (bad)
        CHECK_INT(MPI_T_category_get_cvars(n, 4, indices), MPI_T_ERR_INVALID_INDEX,
                  "MPI_T_category_get_cvars(count)");
    CHECK_INT(MPI_T_category_get_index(BOGUS, &idx), MPI_T_ERR_INVALID_NAME,
              "MPI_T_category_get_index(unknown)");
    int stamp = -1;
    CHECK_MPI(MPI_T_category_changed(&stamp));

    /* event sources and event types (MPI 4.0) */
    CHECK_MPI(MPI_T_source_get_num(&n));
    CHECK(n >= 0, "%d event sources", n);
    MPI_Count ts;
    if (bad)
        CHECK_INT(MPI_T_source_get_timestamp(n, &ts), MPI_T_ERR_INVALID_INDEX,
                  "MPI_T_source_get_timestamp(count)");
    CHECK_MPI(MPI_T_event_get_num(&n));
    CHECK(n >= 0, "%d event types", n);
    MPI_T_event_registration reg;
    if (bad)
        CHECK_INT(MPI_T_event_handle_alloc(n, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX,
                  "MPI_T_event_handle_alloc(count)");
    CHECK_INT(MPI_T_event_get_index(BOGUS, &idx), MPI_T_ERR_INVALID_NAME,
              "MPI_T_event_get_index(unknown)");

    /* the error classes */
    int e[] = {MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_INVALID_INDEX, MPI_T_ERR_INVALID_NAME,
               MPI_T_ERR_INVALID_HANDLE, MPI_T_ERR_INVALID_SESSION};
    for (size_t i = 0; i < sizeof e / sizeof *e; i++) {
        char s[MPI_MAX_ERROR_STRING];
        int len = 0, c = -1;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK_INT(MPI_Error_class(e[i], &c), MPI_SUCCESS, "MPI_Error_class of an MPI_T error");
        CHECK_INT(c, e[i], "an MPI_T error is its own class");
        CHECK_INT(MPI_Error_string(e[i], s, &len), MPI_SUCCESS, "MPI_Error_string of it");
        CHECK(len > 0, "empty string for MPI_T error %d", e[i]);
    }

    CHECK_MPI(MPI_T_finalize());
    CHECK_MPI(MPI_T_cvar_get_num(&n)); /* still initialized once */
    CHECK_MPI(MPI_T_finalize());
    CHECK_INT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "a query after the last finalize");
    CHECK_INT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED, "a third MPI_T_finalize");
    return mtest_finalize();
}
