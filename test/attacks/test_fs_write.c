/*
 * Writing outside the workspace: /tmp, the interpreter's own directories
 * (site-packages, a .pth file, __pycache__ beside the standard library),
 * the matplotlib cache and config of the user running the host, another
 * live session's workspace and configuration, and a canary of the test's
 * own. Targets are test-owned and world-writable where the test can make
 * them so, so only the sandbox stops the write. Every name an attack would
 * create is new and unique, and removed if an attack did create it.
 */
#include <pwd.h>

#include "attack.h"

static ci_session *A, *B; /* A attacks; B is the victim session */
static char *root;        /* workspace root of both sessions */
static char *dir;         /* test-owned, 0777 */
static char *canary;      /* 0666 in dir */
static const char *home;
static char canary_text[64], b_text[64];
static char tag[40];      /* unique part of the names attacks create */
static char *target;

static int group_setup(void **state)
{
    snprintf(tag, sizeof tag, "ci_attack_%d_", (int)getpid());
    a_random_hex(tag + strlen(tag), 4);
    root = a_tmpdir(0755);
    dir = a_tmpdir(0777);
    a_secret_text(canary_text, sizeof canary_text, "fs-write-canary-", 8);
    canary = a_canary(dir, canary_text, 0666);
    struct passwd *pw = getpwuid(getuid());
    if (!pw)
        return -1;
    home = pw->pw_dir;

    struct h_limits lim = {.root = root};
    if (a_group_session(&A, &lim) != 0 || !(B = a_session_new(&lim)))
        return -1;
    a_secret_text(b_text, sizeof b_text, "other-session-", 8);
    if (ci_session_put_file(B, "data.txt", b_text, strlen(b_text)) != CI_OK)
        return -1;
    char *p = h_fmt("%s/data.txt", ci_session_workspace(B));
    int rc = chmod(p, 0666);
    free(p);
    return rc;
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    ci_session_free(B);
    h_rmtree(dir);
    h_rmtree(root);
    free(canary);
    free(dir);
    free(root);
    return 0;
}

/* Every path an attack of this file would create. */
static char **created_paths(void)
{
    const char *bw = ci_session_workspace(B);
    int blen = (int)(strrchr(bw, '/') - bw);
    char **p = calloc(16, sizeof *p);
    int n = 0;
    p[n++] = h_fmt("/tmp/%s", tag);
    p[n++] = h_fmt("%s/%s", dir, tag);
    p[n++] = h_fmt("%s/%s.d", dir, tag);
    p[n++] = h_fmt("/usr/lib/python3/dist-packages/%s.py", tag);
    p[n++] = h_fmt("/usr/local/lib/python3.11/dist-packages/%s.pth", tag);
    p[n++] = h_fmt("/usr/lib/python3/dist-packages/%s.pth", tag);
    p[n++] = h_fmt("/usr/lib/python3.11/dist-packages/%s.pth", tag);
    p[n++] = h_fmt("/usr/lib/python3.11/json/__pycache__/%s.cpython-311.pyc", tag);
    p[n++] = h_fmt("%s/.cache/matplotlib/%s.json", home, tag);
    p[n++] = h_fmt("%s/.config/matplotlib/%s", home, tag);
    p[n++] = h_fmt("%s/%s", bw, tag);
    p[n++] = h_fmt("%.*s/config/matplotlibrc", blen, bw);
    p[n++] = h_fmt("%.*s/tmp/%s.py", blen, bw, tag);
    return p;
}

/* Removes whatever an attack that worked left behind, even when its test
 * failed before looking, and puts back a canary it got to, so that a
 * missing layer costs no trace on the machine and no later test. */
static int teardown(void **state)
{
    char **p = created_paths();
    for (int i = 0; p[i]; i++) {
        struct stat st;
        if (lstat(p[i], &st) == 0) {
            fprintf(stderr, "removing %s, left by an attack\n", p[i]);
            if (S_ISDIR(st.st_mode))
                h_rmtree(p[i]);
            else
                unlink(p[i]);
        }
        free(p[i]);
    }
    free(p);
    a_write_canary(canary, canary_text, 0666);
    free(target);
    target = NULL;
    return a_teardown(state);
}

/* What keeps a cell out of the test's directories (world-writable), its
 * canary (world-writable) and the other session's (the same uid's, for
 * a root host's workers): Landlock refuses them, and they are not in the
 * worker's mount namespace. Without both (test/probe.c agrees) nothing
 * does, as SECURITY.md says; the test is skipped. */
#define OUTSIDE (CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS)

/* A cell creating the new file @path (Python: open(p, 'x')), which must be
 * refused and leave nothing there. */
static void attack_create(const char *path, const char *content)
{
    char *lit = a_pystr(path);
    a_cell = h_fmt("p = %s\nwith open(p, 'x') as f:\n    f.write(%s)\n", lit, content);
    a_stopped(A, a_cell, A_OSERR "|FileNotFoundError");
    a_assert_absent(path);
    free(lit);
}

/* ------------------------------------------------------------------- /tmp */

static void test_new_file_in_tmp(void **state)
{
    target = h_fmt("/tmp/%s", tag);
    /* World-writable: Landlock refuses it. Without Landlock, a worker
     * with a mount namespace writes its own /tmp, a tmpfs, and the
     * host's stays untouched. */
    h_require_layer(A, OUTSIDE);
    if (h_has_layer(A, CI_SANDBOX_LANDLOCK, "the refusal of the write")) {
        attack_create(target, "'x'");
        return;
    }
    a_cell = h_fmt("with open('%s', 'x') as f:\n    f.write('x')\n'written'", target);
    h_expect(A, a_cell, "'written'", NULL);
    a_assert_absent(target);
}

static void test_new_file_in_a_world_writable_test_directory(void **state)
{
    h_require_layer(A, OUTSIDE);
    target = h_fmt("%s/%s", dir, tag);
    attack_create(target, "'x'");
}

static void test_new_directory_in_a_test_directory(void **state)
{
    h_require_layer(A, OUTSIDE);
    target = h_fmt("%s/%s.d", dir, tag);
    char *lit = a_pystr(target);
    a_cell = h_fmt("import os\nos.mkdir(%s)", lit);
    a_stopped(A, a_cell, A_OSERR);
    a_assert_absent(target);
    free(lit);
}

/* ------------------------------------------------------ the canary itself */

static void attack_canary(const char *how)
{
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    a_cell = h_fmt("import os\np = %s\n%s", lit, how);
    a_stopped(A, a_cell, A_OSERR);
    a_assert_untouched(watch, canary);
    a_assert_file_is(canary, canary_text);
    free(lit);
}

static void test_overwrite_a_canary(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_canary("with open(p, 'r+b') as f:\n    f.write(b'PWNED')");
}

static void test_truncate_a_canary(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_canary("os.truncate(p, 0)");
}

static void test_delete_a_canary(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_canary("os.unlink(p)");
}

static void test_move_a_canary_into_the_workspace(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_canary("os.rename(p, 'stolen')");
}

static void test_chmod_a_canary(void **state)
{
    /* Landlock does not govern chmod(2): the modes stop a root host's
     * worker (uid 65534), and only the mount namespace an unprivileged
     * host's, which has the host's uid and so owns the canary. */
    if (geteuid() != 0 && !h_layers_of(A, CI_SANDBOX_MNTNS))
        h_skip_because("an unprivileged host's worker, which has its uid, can chmod the host's "
                       "files but for a mount namespace, which this kernel or container "
                       "refuses (probed): Landlock does not govern chmod");
    struct stat before, after;
    assert_int_equal(stat(canary, &before), 0);
    attack_canary("os.chmod(p, 0o4777)");
    assert_int_equal(stat(canary, &after), 0);
    assert_int_equal(after.st_mode, before.st_mode);
}

/* ------------------------------------------------- the interpreter's files */

static void test_new_module_in_dist_packages(void **state)
{
    target = h_fmt("/usr/lib/python3/dist-packages/%s.py", tag);
    attack_create(target, "'print(1)\\n'");
}

static void test_pth_file_in_every_site_directory(void **state)
{
    /* A .pth file runs at every interpreter's start on the machine: the
     * content is a comment only, should one ever land. */
    char *cell = h_cell("fs_write_pth_in_every_site_directory");
    a_cell = h_fmt("TAG = '%s'\n%s", tag, cell);
    free(cell);
    a_stopped(A, a_cell, A_OSERR "|FileNotFoundError");
    const char *dirs[] = {"/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
                          "/usr/lib/python3.11/dist-packages"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *p = h_fmt("%s/%s.pth", dirs[i], tag);
        a_assert_absent(p);
        free(p);
    }
}

static void test_pyc_in_stdlib_pycache(void **state)
{
    /* Beside json/decoder.py, where a planted .pyc would be imported by
     * the next interpreter. A new name, so nothing real is shadowed. */
    target = h_fmt("/usr/lib/python3.11/json/__pycache__/%s.cpython-311.pyc", tag);
    char *lit = a_pystr(target);
    char *cell = h_cell("fs_write_pyc_in_stdlib_pycache");
    a_cell = h_fmt("TARGET = %s\n%s", lit, cell);
    free(cell);
    a_stopped(A, a_cell, A_OSERR "|FileNotFoundError");
    a_assert_absent(target);
    free(lit);
}

/* ------------------------------------------------------------ matplotlib */

static void test_matplotlib_cache_of_the_user(void **state)
{
    /* The modes keep a root host's worker (uid 65534) out of root's home;
     * an unprivileged host's worker has its uid. */
    if (geteuid() != 0)
        h_require_layer(A, OUTSIDE);
    target = h_fmt("%s/.cache/matplotlib/%s.json", home, tag);
    attack_create(target, "'{}'");
}

static void test_matplotlib_config_of_the_user(void **state)
{
    /* The modes keep a root host's worker (uid 65534) out of root's home;
     * an unprivileged host's worker has its uid. */
    if (geteuid() != 0)
        h_require_layer(A, OUTSIDE);
    target = h_fmt("%s/.config/matplotlib/%s", home, tag);
    attack_create(target, "'backend: agg\\n'");
}

/* --------------------------------------------------- another session */

static void test_new_file_in_another_sessions_workspace(void **state)
{
    h_require_layer(A, OUTSIDE);
    target = h_fmt("%s/%s", ci_session_workspace(B), tag);
    attack_create(target, "'planted'");
}

static void test_overwrite_in_another_sessions_workspace(void **state)
{
    h_require_layer(A, OUTSIDE);
    char *p = h_fmt("%s/data.txt", ci_session_workspace(B));
    int watch = a_watch(p);
    char *lit = a_pystr(p);
    a_cell = h_fmt("with open(%s, 'w') as f:\n    f.write('PWNED')", lit);
    a_stopped(A, a_cell, A_OSERR);
    a_assert_untouched(watch, p);
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(ci_session_get_file(B, "data.txt", &data, &len), CI_OK);
    assert_int_equal(len, strlen(b_text));
    assert_memory_equal(data, b_text, len);
    ci_free(data);
    free(lit);
    free(p);
}

static void test_matplotlibrc_in_another_sessions_config(void **state)
{
    h_require_layer(A, OUTSIDE);
    /* The other worker's MPLCONFIGDIR, next to its workspace. */
    const char *bw = ci_session_workspace(B);
    target = h_fmt("%.*s/config/matplotlibrc", (int)(strrchr(bw, '/') - bw), bw);
    attack_create(target, "'backend: agg\\n'");
}

static void test_module_in_another_sessions_tmp(void **state)
{
    h_require_layer(A, OUTSIDE);
    /* The other worker's TMPDIR, next to its workspace. */
    const char *bw = ci_session_workspace(B);
    target = h_fmt("%.*s/tmp/%s.py", (int)(strrchr(bw, '/') - bw), bw, tag);
    attack_create(target, "'import os\\n'");
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
#define T(f) cmocka_unit_test_setup_teardown(f, a_setup_alive, teardown)
    const struct CMUnitTest tests[] = {
        T(test_new_file_in_tmp),
        T(test_new_file_in_a_world_writable_test_directory),
        T(test_new_directory_in_a_test_directory),
        T(test_overwrite_a_canary),
        T(test_truncate_a_canary),
        T(test_delete_a_canary),
        T(test_move_a_canary_into_the_workspace),
        T(test_chmod_a_canary),
        T(test_new_module_in_dist_packages),
        T(test_pth_file_in_every_site_directory),
        T(test_pyc_in_stdlib_pycache),
        T(test_matplotlib_cache_of_the_user),
        T(test_matplotlib_config_of_the_user),
        T(test_new_file_in_another_sessions_workspace),
        T(test_overwrite_in_another_sessions_workspace),
        T(test_matplotlibrc_in_another_sessions_config),
        T(test_module_in_another_sessions_tmp),
    };
#undef T
    return cmocka_run_group_tests_name("attacks: writing outside the workspace", tests,
                                       group_setup, group_teardown);
}
