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

/* A chain of @n directories named d in @where (a Python expression),
 * made one level at a time, as no path may be longer than PATH_MAX. */
#define CHAIN_PY(where, n)                                                \
    "top = os.open('.', os.O_RDONLY)\n"                                   \
    "os.chdir(" where ")\n"                                               \
    "for i in range(" #n "):\n"                                           \
    "    os.mkdir('d')\n    os.chdir('d')\n"                              \
    "os.fchdir(top)\nos.close(top)\n"

static void test_restart_after_deep_chains_in_home_then_tmp(void **state)
{
    /* The second restart meets whatever the first left behind. */
    make_trees("import os\n" CHAIN_PY("os.environ['HOME']", 3000) "'made'");
    restart_leaves_nothing("3000 levels in HOME");
    make_trees("import os\n" CHAIN_PY("os.environ['TMPDIR']", 3000) "'made'");
    restart_leaves_nothing("3000 levels in TMPDIR");
    make_trees("import os\n" CHAIN_PY("'.'", 1000) "'made'");
    free_leaves_nothing();
}

static void test_restart_after_a_wide_directory_in_tmp(void **state)
{
    make_trees("import os\n"
               "d = os.path.join(os.environ['TMPDIR'], 'wide')\n"
               "os.mkdir(d)\n"
               "fd = os.open(d, os.O_RDONLY)\n"
               "for i in range(100000):\n"
               "    os.close(os.open(str(i), os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))\n"
               "os.close(fd)\n"
               "len(os.listdir(d)) == 100000 and 'made'");
    restart_leaves_nothing("100000 entries");
    free_leaves_nothing();
}

/* Directories of mode 0 holding a locked directory and a file, in HOME,
 * TMPDIR and, where @ws is "True", the workspace; below them a chain
 * deeper than the walk holds open, every seventh level locked too; and
 * HOME made mode 0 and TMPDIR 0100 last. */
#define LOCKED_PY(ws)                                                     \
    "import os\n"                                                         \
    "home, tmp = os.environ['HOME'], os.environ['TMPDIR']\n"              \
    "for d in (home, tmp) + ((os.getcwd(),) if " ws " else ()):\n"        \
    "    os.makedirs(f'{d}/locked/inner')\n"                              \
    "    open(f'{d}/locked/inner/f', 'w').close()\n"                      \
    "    open(f'{d}/locked/f', 'w').close()\n"                            \
    "    top = os.open('.', os.O_RDONLY)\n"                               \
    "    os.chdir(f'{d}/locked/inner')\n"                                 \
    "    for i in range(100):\n"                                          \
    "        os.mkdir('d')\n        os.chdir('d')\n"                      \
    "        if i % 7 == 0:\n            os.chmod('..', 0)\n"             \
    "    os.fchdir(top)\n    os.close(top)\n"                             \
    "    os.chmod(f'{d}/locked/inner', 0)\n"                              \
    "    os.chmod(f'{d}/locked', 0)\n"                                    \
    "os.chmod(home, 0)\n"                                                 \
    "os.chmod(tmp, 0o100)\n"                                              \
    "'made'"

static void test_restart_and_free_after_directories_of_mode_0(void **state)
{
    for (int round = 0; round < 2; round++) {
        make_trees(LOCKED_PY("False"));
        restart_leaves_nothing(round ? "the second locked trees" : "the first locked trees");
    }
    make_trees(LOCKED_PY("True"));
    free_leaves_nothing();
}

/* Names of 255 bytes, 120 levels deep (30 KiB of path), with files and a
 * directory named as the walk names what it moves aside (".ci-rm-N"),
 * and every 40th level locked to search and write only. */
#define NAMES_PY(where)                                                   \
    "top = os.open('.', os.O_RDONLY)\n"                                   \
    "os.chdir(" where ")\n"                                               \
    "for i in range(120):\n"                                              \
    "    for j in range(5):\n"                                            \
    "        open(f'.ci-rm-{j}', 'w').close()\n"                          \
    "    os.mkdir('.ci-rm-5')\n"                                          \
    "    n = f'{i:03d}' + 'n' * 252\n"                                    \
    "    os.mkdir(n)\n    os.chdir(n)\n"                                  \
    "    if i % 40 == 39:\n        os.chmod('..', 0o300)\n"               \
    "os.fchdir(top)\nos.close(top)\n"

static void test_restart_after_long_names_and_the_walks_own_names(void **state)
{
    for (int round = 0; round < 2; round++) {
        make_trees("import os\n" NAMES_PY("os.environ['HOME']") NAMES_PY("os.environ['TMPDIR']")
                   "'made'");
        restart_leaves_nothing(round ? "long names, again" : "long names");
    }
    make_trees("import os\n" NAMES_PY("'.'") "'made'");
    free_leaves_nothing();
}

/* A restart while threads the cell left running still make, lock and
 * remove directories in HOME and TMPDIR: the worker is killed and reaped
 * before the host removes anything, so nothing is made behind it. */
static void test_restart_while_the_cells_threads_still_make_files(void **state)
{
    for (int round = 0; round < 5; round++) {
        make_trees("import os, threading, time\n"
                   "def churn(base):\n"
                   "    os.makedirs(base, exist_ok=True)\n"
                   "    fd = os.open(base, os.O_RDONLY)\n"
                   "    i = 0\n"
                   "    while True:\n"
                   "        try:\n"
                   "            os.makedirs(f'{base}/d{i}/e/f')\n"
                   "            for j in range(20):\n"
                   "                open(f'{base}/d{i}/e/{j}', 'w').close()\n"
                   "            if i % 3 == 0:\n"
                   "                os.chmod(f'{base}/d{i}', 0)\n"
                   "        except OSError:\n"
                   "            pass\n"
                   "        i += 1\n"
                   "for k in range(4):\n"
                   "    for d in (os.environ['HOME'], os.environ['TMPDIR']):\n"
                   "        threading.Thread(target=churn, args=(f'{d}/c{k}',),"
                   " daemon=True).start()\n"
                   "time.sleep(0.2)\n"
                   "'made'");
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
