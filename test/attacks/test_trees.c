/*
 * Trees a cell leaves for the host to remove: a chain of 3000 directories
 * (far past PATH_MAX and any recursion of 64 levels), 100000 entries in
 * one directory, directories of mode 0 with files in them, and HOME made
 * mode 0 by the cell itself, in HOME, TMPDIR and the workspace. After each,
 * ci_session_restart() must succeed (twice running, as the second meets
 * what the first might have left) with HOME and TMPDIR new and empty and
 * nothing beside them in the session directory, and ci_session_free()
 * must leave the workspace root empty. Each test's session has a root of
 * its own. Run as root, the program runs once more as an unprivileged
 * host (uid 1000), whose worker has its uid and so owns every directory a
 * cell locked: the host's removal must unlock them, as root's need not.
 */
#include "attack.h"

static ci_session *S;
static char *root;

static int setup(void **state)
{
    root = a_tmpdir(0755);
    /* Room for the 100000 entries of one directory under the quota. */
    struct h_limits lim = {.timeout_ms = 120000, .root = root, .inode_quota = 200000};
    S = a_session_new(&lim);
    return S ? 0 : -1;
}

static int teardown(void **state)
{
    ci_session_free(S);
    S = NULL;
    h_rmtree(root);
    free(root);
    root = NULL;
    return 0;
}

/* Asserts the directory @dir/@name lists exactly @want. */
static void assert_entries(const char *dir, const char *name, const char *want)
{
    char *path = h_fmt("%s/%s", dir, name);
    char *got = h_dir_names(path);
    if (strcmp(got, want) != 0)
        fail_msg("ATTACK SUCCEEDED: %s holds [%.300s], expected [%s]", path, got, want);
    free(got);
    free(path);
}

/* The session directory of S, malloc'ed. */
static char *session_dir(void)
{
    const char *ws = ci_session_workspace(S);
    return h_fmt("%.*s", (int)(strrchr(ws, '/') - ws), ws);
}

/* Runs @code, which ends with the value 'made'. */
static void make_trees(const char *code)
{
    ci_result *r = h_run(S, code);
    const char *v = ci_result_value(r);
    if (ci_result_status(r) != CI_STATUS_OK || !v || strcmp(v, "'made'") != 0) {
        h_dump(r);
        fail_msg("the cell could not make its trees");
    }
    ci_result_free(r);
}

/* make_trees() of @code, then frees it. */
static void make_trees_free(char *code)
{
    make_trees(code);
    free(code);
}

/* The cell @name after "import os" and a line WHERE = @where (a Python
 * expression: the directory it makes its trees in); malloc'ed. */
static char *cell_in(const char *name, const char *where)
{
    char *cell = h_cell(name);
    char *code = h_fmt("import os\nWHERE = %s\n%s", where, cell);
    free(cell);
    return code;
}

/* Restarts S; asserts it succeeded and that HOME and TMPDIR are empty
 * and alone with the workspace in the session directory. */
static void restart_leaves_nothing(const char *what)
{
    int64_t t0 = h_now_ms();
    int rc = ci_session_restart(S);
    if (rc != CI_OK)
        fail_msg("ATTACK SUCCEEDED: the restart after %s failed: %s: %s", what, ci_strerror(rc),
                 ci_session_errmsg(S));
    print_message("      restart after %s: %lld ms\n", what, (long long)(h_now_ms() - t0));
    char *dir = session_dir();
    assert_entries(dir, "", "config tmp workspace");
    assert_entries(dir, "config", "");
    assert_entries(dir, "tmp", "");
    free(dir);
    h_expect(S, "import os\nos.listdir(os.environ['HOME']), os.listdir(os.environ['TMPDIR'])",
             "([], [])", NULL);
}

/* Frees S; asserts the workspace root is left empty. */
static void free_leaves_nothing(void)
{
    ci_session_free(S);
    S = NULL;
    assert_entries(root, "", "");
}

/* The cell trees_chain: a chain of @n directories named d in @where (a
 * Python expression), made one level at a time, as no path may be longer
 * than PATH_MAX; malloc'ed. */
static char *chain(const char *where, int n)
{
    char *cell = cell_in("trees_chain", where);
    char *code = h_fmt("LEVELS = %d\n%s", n, cell);
    free(cell);
    return code;
}

static void test_restart_after_deep_chains_in_home_then_tmp(void **state)
{
    /* The second restart meets whatever the first left behind. */
    make_trees_free(chain("os.environ['HOME']", 3000));
    restart_leaves_nothing("3000 levels in HOME");
    make_trees_free(chain("os.environ['TMPDIR']", 3000));
    restart_leaves_nothing("3000 levels in TMPDIR");
    make_trees_free(chain("'.'", 1000));
    free_leaves_nothing();
}

static void test_restart_after_a_wide_directory_in_tmp(void **state)
{
    make_trees_free(h_cell("trees_wide_directory_in_tmp"));
    restart_leaves_nothing("100000 entries");
    free_leaves_nothing();
}

/* The cell trees_locked: directories of mode 0 holding a locked
 * directory and a file, in HOME, TMPDIR and, where @ws is "True", the
 * workspace (WS); below them a chain deeper than the walk holds open,
 * every seventh level locked too; and HOME made mode 0 and TMPDIR 0100
 * last. Malloc'ed. */
static char *locked(const char *ws)
{
    char *cell = h_cell("trees_locked");
    char *code = h_fmt("WS = %s\n%s", ws, cell);
    free(cell);
    return code;
}

static void test_restart_and_free_after_directories_of_mode_0(void **state)
{
    for (int round = 0; round < 2; round++) {
        make_trees_free(locked("False"));
        restart_leaves_nothing(round ? "the second locked trees" : "the first locked trees");
    }
    make_trees_free(locked("True"));
    free_leaves_nothing();
}

/* The cell trees_long_names in @where (a Python expression): names of
 * 255 bytes, 120 levels deep (30 KiB of path), with files and a directory
 * named as the walk names what it moves aside (".ci-rm-N"), and every
 * 40th level locked to search and write only; then the value 'made'.
 * Malloc'ed. */
static char *long_names(const char *where)
{
    char *cell = cell_in("trees_long_names", where);
    char *code = h_fmt("%s\n'made'", cell);
    free(cell);
    return code;
}

static void test_restart_after_long_names_and_the_walks_own_names(void **state)
{
    for (int round = 0; round < 2; round++) {
        char *home = cell_in("trees_long_names", "os.environ['HOME']");
        char *tmp = long_names("os.environ['TMPDIR']");
        make_trees_free(h_fmt("%s\n%s", home, tmp));
        free(tmp);
        free(home);
        restart_leaves_nothing(round ? "long names, again" : "long names");
    }
    make_trees_free(long_names("'.'"));
    free_leaves_nothing();
}

/* A restart while threads the cell left running still make, lock and
 * remove directories in HOME and TMPDIR: the worker is killed and reaped
 * before the host removes anything, so nothing is made behind it. */
static void test_restart_while_the_cells_threads_still_make_files(void **state)
{
    for (int round = 0; round < 5; round++) {
        make_trees_free(h_cell("trees_threads_still_making_files"));
        restart_leaves_nothing("threads still making files");
    }
    free_leaves_nothing();
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 220);
    int other = a_also_unprivileged(argv);
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_restart_and_free_after_directories_of_mode_0),
        T(test_restart_after_deep_chains_in_home_then_tmp),
        T(test_restart_after_a_wide_directory_in_tmp),
        T(test_restart_after_long_names_and_the_walks_own_names),
        T(test_restart_while_the_cells_threads_still_make_files),
    };
#undef T
    /* The unprivileged host's run, the one where the modes matter, runs
     * only the first: deep and wide trees cost the same removal for both
     * hosts, and seconds of disk time on a loaded machine. */
    size_t n = geteuid() == 0 ? sizeof tests / sizeof *tests : 1;
    char *name = h_fmt("attacks: trees left for removal (%s)", a_host_kind());
    int rc = _cmocka_run_group_tests(name, tests, n, NULL, NULL);
    free(name);
    return rc || other;
}
