/*
 * session.c - the Sessions Model (MPI 4.0 11.3) beside the World Model: a
 * session opened before MPI_Init (MPI_Initialized stays false), its process
 * sets "mpi://WORLD" and "mpi://SELF" with their info, communicators made
 * from their groups, the session's info and error handlers, MPI_Info_create_env,
 * the MPI 4.0 error classes and MPI_Comm_split_type's hardware types.
 */
#include "mtest.h"

static int handler_calls, handler_code;

static void on_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    handler_code = *code;
}

int main(int argc, char **argv)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE");
    MPI_Session s;
    int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &s);
    MPI_Info_free(&info);
    int inited = 1;
    MPI_Initialized(&inited);

    mtest_init(&argc, &argv, "session");
    int rank = mtest_rank_, size = mtest_size_;
    CHECK(rc == MPI_SUCCESS, "MPI_Session_init returned %d", rc);
    CHECK(!inited, "MPI_Initialized is true after MPI_Session_init alone");

    /* Process sets. */
    int np = 0, seen_world = 0, seen_self = 0;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &np);
    CHECK(np >= 2, "%d process sets", np);
    for (int i = 0; i < np; i++) {
        int len = 0;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL);
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
        char *name = malloc((size_t)len + 1);
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        if (!strcmp(name, "mpi://WORLD"))
            seen_world = 1;
        if (!strcmp(name, "mpi://SELF"))
            seen_self = 1;
        free(name);
    }
    CHECK(seen_world && seen_self, "process sets: mpi://WORLD %d, mpi://SELF %d", seen_world,
          seen_self);
    const char *psets[2] = {"mpi://WORLD", "mpi://SELF"};
    int want_size[2] = {size, 1};
    for (int k = 0; k < 2; k++) {
        MPI_Info pi;
        char v[64];
        int flag = 0;
        MPI_Session_get_pset_info(s, psets[k], &pi);
        MPI_Info_get(pi, "mpi_size", sizeof v - 1, v, &flag);
        CHECK(flag && atoi(v) == want_size[k], "%s: mpi_size %s", psets[k], flag ? v : "unset");
        MPI_Info_free(&pi);

        /* A communicator of the set, without a parent communicator. */
        MPI_Group g;
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Group_from_session_pset(s, psets[k], &g);
        int gs = -1;
        MPI_Group_size(g, &gs);
        CHECK(gs == want_size[k], "%s: group size %d", psets[k], gs);
        rc = MPI_Comm_create_from_group(g, k ? "org.bdmpi.session.self" : "org.bdmpi.session.world",
                                        MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        CHECK(rc == MPI_SUCCESS && c != MPI_COMM_NULL, "%s: create_from_group rc %d", psets[k], rc);
        if (c != MPI_COMM_NULL) {
            int cs = -1, cr = -1, sum = 0;
            MPI_Comm_size(c, &cs);
            MPI_Comm_rank(c, &cr);
            CHECK(cs == want_size[k], "%s: communicator size %d", psets[k], cs);
            CHECK(cr == (k ? 0 : rank), "%s: rank %d", psets[k], cr);
            MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
            int want = k ? rank : size * (size - 1) / 2;
            CHECK(sum == want, "%s: allreduce %d want %d", psets[k], sum, want);
            MPI_Comm_free(&c);
        }
        MPI_Group_free(&g);
    }
    /* (MPICH 4.0.2 reports this one through MPI_COMM_WORLD's handler.) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group bad = MPI_GROUP_NULL;
    rc = MPI_Group_from_session_pset(s, "mpi://no-such-set", &bad);
    CHECK(rc != MPI_SUCCESS, "an unknown process set was accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* The session's info. */
    MPI_Info used;
    MPI_Session_get_info(s, &used);
    {
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get(used, "mpi_thread_support_level", MPI_MAX_INFO_VAL, v, &flag);
        if (!flag) /* MPICH 4.0.2's name */
            MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, v, &flag);
        CHECK(flag && !strncmp(v, "MPI_THREAD_", 11), "mpi_thread_support_level: %s",
              flag ? v : "unset");
    }
    MPI_Info_free(&used);

    /* Error handlers. */
    MPI_Errhandler eh, got;
    MPI_Session_create_errhandler(on_error, &eh);
    MPI_Session_set_errhandler(s, eh);
    MPI_Session_get_errhandler(s, &got);
    CHECK(got == eh, "MPI_Session_get_errhandler gave another handler");
    MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "handler: %d calls, code %d",
          handler_calls, handler_code);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);

    /* MPI_Info_create_env. */
    {
        MPI_Info env;
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_create_env(argc, argv, &env);
        MPI_Info_get(env, "maxprocs", MPI_MAX_INFO_VAL, v, &flag);
        CHECK(!flag || atoi(v) >= 1, "maxprocs %s", v);
        MPI_Info_free(&env);
    }

    /* MPI 4.0 error classes. */
    int classes[3] = {MPI_ERR_SESSION, MPI_ERR_PROC_ABORTED, MPI_ERR_VALUE_TOO_LARGE};
    for (int i = 0; i < 3; i++) {
        int cls = -1, len = 0;
        char str[MPI_MAX_ERROR_STRING];
        MPI_Error_class(classes[i], &cls);
        CHECK(cls == classes[i], "class of %d is %d", classes[i], cls);
        CHECK(classes[i] <= MPI_ERR_LASTCODE, "class %d above MPI_ERR_LASTCODE", classes[i]);
        MPI_Error_string(classes[i], str, &len);
        CHECK(len > 0, "no string for class %d", classes[i]);
    }

    /* MPI_Comm_split_type with the hardware types. */
    {
        MPI_Comm shared, guided, unguided;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
        MPI_Info hi;
        MPI_Info_create(&hi);
        MPI_Info_set(hi, "mpi_hw_resource_type", "mpi_shared_memory");
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, hi, &guided);
        MPI_Info_free(&hi);
        int ss, gsz = -1;
        MPI_Comm_size(shared, &ss);
        if (guided != MPI_COMM_NULL)
            MPI_Comm_size(guided, &gsz);
        CHECK(gsz == ss, "HW_GUIDED mpi_shared_memory: size %d, shared %d", gsz, ss);
        /* MPI 4.0 7.4.2: a new communicator comes with the key
         * mpi_hw_resource_type set in info, naming the resource, which
         * HW_GUIDED then takes (MPICH's comm/cmsplit_type; at -nn > 1). */
        MPI_Info uinfo;
        MPI_Info_create(&uinfo);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, uinfo, &unguided);
        if (unguided != MPI_COMM_NULL) {
            int us, flag = 0, gs = -1;
            char v[MPI_MAX_INFO_VAL + 1] = "";
            MPI_Comm_size(unguided, &us);
            CHECK(us < size, "HW_UNGUIDED gave all %d ranks (must be a strict subset)", us);
            MPI_Info_get(uinfo, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag);
            CHECK(flag && v[0], "HW_UNGUIDED: info key mpi_hw_resource_type not set");
            MPI_Comm again;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, uinfo, &again);
            if (again != MPI_COMM_NULL) {
                MPI_Comm_size(again, &gs);
                MPI_Comm_free(&again);
            }
            CHECK(gs == us, "HW_GUIDED with HW_UNGUIDED's '%s': size %d, not %d", v, gs, us);
            MPI_Comm_free(&unguided);
        }
        MPI_Info_free(&uinfo);
        if (guided != MPI_COMM_NULL)
            MPI_Comm_free(&guided);
        MPI_Comm_free(&shared);
    }

    rc = MPI_Session_finalize(&s);
    CHECK(rc == MPI_SUCCESS && s == MPI_SESSION_NULL, "MPI_Session_finalize: rc %d", rc);
    return mtest_finalize();
}
