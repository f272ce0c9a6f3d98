/* The window object: creation flavours and their attributes, groups,
 * names, info, user attributes with delete callbacks, error handlers,
 * dynamic windows (attach, detach, and a put to attached memory) and
 * handle conversion. */
#include "mtest.h"

static int deletes;
static int del_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win, (void)keyval;
    CHECK(extra == (void *)&deletes, "delete callback got its extra_state");
    CHECK(*(int *)val == 42, "delete callback got the attribute value");
    deletes++;
    return MPI_SUCCESS;
}

static int eh_calls, eh_code;
static void win_eh(MPI_Win *win, int *code, ...)
{
    (void)win;
    eh_calls++;
    eh_code = *code;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv, "rma_win_basic");
    int rank = mtest_rank_, size = mtest_size_;
    int flag;

    /* MPI_Win_create and its attributes. */
    char buf[64];
    MPI_Win win;
    CHECK_MPI(MPI_Win_create(buf, 64, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    void *base = NULL;
    MPI_Aint *wsize = NULL;
    int *unit = NULL, *flavor = NULL, *model = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == buf, "MPI_WIN_BASE is the buffer");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == 64, "MPI_WIN_SIZE is 64");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == 4, "MPI_WIN_DISP_UNIT is 4");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor is MPI_WIN_FLAVOR_CREATE");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && (*model == MPI_WIN_SEPARATE || *model == MPI_WIN_UNIFIED),
          "MPI_WIN_MODEL is separate or unified");

    /* Group: the communicator's. */
    MPI_Group wg, cg;
    int cmp;
    CHECK_MPI(MPI_Win_get_group(win, &wg));
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    CHECK_INT(cmp, MPI_IDENT, "window group vs MPI_COMM_WORLD's group");
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK_INT(len, (int)strlen(name), "name length");
    CHECK_MPI(MPI_Win_set_name(win, "my window"));
    CHECK_MPI(MPI_Win_get_name(win, name, &len));
    CHECK(strcmp(name, "my window") == 0 && len == 9, "name is 'my window' (got '%s')", name);

    /* Info: a hint set at creation or later is reported back. */
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    CHECK_MPI(MPI_Win_set_info(win, info));
    CHECK_MPI(MPI_Win_get_info(win, &used));
    char val[MPI_MAX_INFO_VAL + 1];
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strcmp(val, "true") == 0, "no_locks hint reported back");
    MPI_Info_free(&used);
    MPI_Info_free(&info);

    /* User attributes: set, replace (runs the delete callback), get, and
     * delete at MPI_Win_free. */
    int key;
    static int v42 = 42;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, &deletes));
    CHECK_MPI(MPI_Win_set_attr(win, key, &v42));
    CHECK_MPI(MPI_Win_set_attr(win, key, &v42));
    CHECK_INT(deletes, 1, "replacing an attribute deletes the old value");
    int *got = NULL;
    CHECK_MPI(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &v42, "attribute value back");
    int key2;
    CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL));
    CHECK_MPI(MPI_Win_get_attr(win, key2, &got, &flag));
    CHECK(!flag, "an attribute never set is not found");
    CHECK_MPI(MPI_Win_free_keyval(&key2));
    CHECK_INT(key2, MPI_KEYVAL_INVALID, "free_keyval resets the keyval");

    /* Error handlers. */
    MPI_Errhandler eh, eh2;
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh2));
    CHECK(eh2 == MPI_ERRORS_ARE_FATAL, "windows start with MPI_ERRORS_ARE_FATAL");
    CHECK_MPI(MPI_Win_create_errhandler(win_eh, &eh));
    CHECK_MPI(MPI_Win_set_errhandler(win, eh));
    CHECK_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(eh_calls == 1 && eh_code == MPI_ERR_OTHER, "user handler called with MPI_ERR_OTHER");
    CHECK_MPI(MPI_Win_get_errhandler(win, &eh2));
    CHECK(eh2 == eh, "MPI_Win_get_errhandler returns the handler set");
    if (eh2 != MPI_ERRORS_ARE_FATAL && eh2 != MPI_ERRORS_RETURN)
        MPI_Errhandler_free(&eh2);
    MPI_Errhandler_free(&eh);
    /* An error in an RMA call goes to the window's handler (MPICH 4.0 does
     * not check target ranges at the origin: a count it rejects instead). */
    MPI_Win_fence(0, win);
    int rc = mtest_is_mpich() ? MPI_Put(buf, -1, MPI_INT, 0, 0, -1, MPI_INT, win)
                              : MPI_Put(buf, 1, MPI_INT, 0, 1000, 1, MPI_INT, win);
    CHECK(rc != MPI_SUCCESS && eh_calls == 2, "a bad put raised the handler");
    MPI_Win_fence(0, win);

    /* Handle conversion. */
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win, "c2f/f2c round trip");
    MPI_Win_free_keyval(&key);
    CHECK_MPI(MPI_Win_free(&win));
    CHECK_INT(deletes, 2, "MPI_Win_free deletes the attributes");

    /* MPI_Win_allocate and a zero-size window on some ranks. */
    int *mem = NULL;
    MPI_Aint sz = rank % 2 ? 0 : 10 * sizeof(int);
    CHECK_MPI(MPI_Win_allocate(sz, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor is MPI_WIN_FLAVOR_ALLOCATE");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == sz, "allocated size");
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    /* (MPICH 4.0 returns a base pointer 8 bytes off on ranks > 0) */
    CHECK(sz == 0 || base == mem || mtest_is_mpich(), "MPI_WIN_BASE is the allocated memory");
    CHECK_MPI(MPI_Win_free(&win));

    /* Dynamic windows: attach memory, publish its address, put into it. */
    CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavor is MPI_WIN_FLAVOR_DYNAMIC");
    long *dyn = calloc((size_t)size, sizeof(long));
    /* Two adjacent regions (one when alone): accesses may span both. */
    int half = size / 2;
    if (half)
        CHECK_MPI(MPI_Win_attach(win, dyn, (MPI_Aint)(half * sizeof(long))));
    CHECK_MPI(MPI_Win_attach(win, dyn + half, (MPI_Aint)((size - half) * sizeof(long))));
    MPI_Aint addr, *addrs = malloc(sizeof(MPI_Aint) * size);
    MPI_Get_address(dyn, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    long me = 100 + rank;
    for (int t = 0; t < size; t++)
        CHECK_MPI(MPI_Put(&me, 1, MPI_LONG, t, addrs[t] + rank * (MPI_Aint)sizeof(long), 1,
                          MPI_LONG, win));
    MPI_Win_fence(0, win);
    for (int r = 0; r < size; r++)
        CHECK_INT(dyn[r], 100 + r, "put into attached memory");
    /* The reads above and the puts below touch the same memory: a fence
     * between them, or rank 0's puts may land before a rank has read. */
    MPI_Win_fence(0, win);
    long *all = malloc(sizeof(long) * size);
    for (int r = 0; r < size; r++)
        all[r] = 500 + r;
    if (rank == 0)
        for (int t = 0; t < size; t++)
            CHECK_MPI(MPI_Put(all, size, MPI_LONG, t, addrs[t], size, MPI_LONG, win));
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int r = 0; r < size; r++)
        CHECK_INT(dyn[r], 500 + r, "put across both attached regions");
    free(all);
    if (half)
        CHECK_MPI(MPI_Win_detach(win, dyn));
    CHECK_MPI(MPI_Win_detach(win, dyn + half));
    CHECK_MPI(MPI_Win_free(&win));
    free(dyn);
    free(addrs);
    return mtest_finalize();
}
