/*
 * Reading outside the workspace: the machine's password files, the home
 * directory of the user running the host, another live session's
 * workspace, and a canary file of the test's own. Canaries are 0644 in
 * 0755 directories, so only the sandbox, not the permission bits, can keep
 * a worker out; the host watches each with inotify and must see no open.
 */
#include <pwd.h>

#include "attack.h"

/* What keeps a cell from world-readable files outside: Landlock refuses
 * them, and they are not in the worker's mount namespace. Without both
 * (test/probe.c agrees) only the modes do, as SECURITY.md says. */
#define OUTSIDE (CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS)

static ci_session *A, *B; /* A attacks; B is the victim session */
static char *root;        /* workspace root of both sessions */
static char *dir;         /* test-owned, 0755 */
static char *canary;      /* 0644 in dir */
static char *home_canary; /* 0644 in the user's home; NULL where it is read-only */
static char *b_secret;    /* a file put into B's workspace */
static char secret_text[64], home_text[64], b_text[64];

static int group_setup(void **state)
{
    root = a_tmpdir(0755);
    dir = a_tmpdir(0755);
    a_secret_text(secret_text, sizeof secret_text, "fs-read-canary-", 8);
    canary = a_canary(dir, secret_text, 0644);

    struct passwd *pw = getpwuid(getuid());
    if (!pw)
        return -1;
    home_canary = h_fmt("%s/.ci-attack-home-%d", pw->pw_dir, (int)getpid());
    a_secret_text(home_text, sizeof home_text, "home-canary-", 8);
    if (h_read_only(pw->pw_dir)) { /* a container's read-only root */
        free(home_canary);
        home_canary = NULL;
    } else {
        a_write_canary(home_canary, home_text, 0644);
    }

    struct h_limits lim = {.root = root};
    if (a_group_session(&A, &lim) != 0 || !(B = a_session_new(&lim)))
        return -1;
    a_secret_text(b_text, sizeof b_text, "other-session-", 8);
    if (ci_session_put_file(B, "secret.txt", b_text, strlen(b_text)) != CI_OK)
        return -1;
    b_secret = h_fmt("%s/secret.txt", ci_session_workspace(B));
    return chmod(b_secret, 0644);
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    ci_session_free(B);
    if (home_canary)
        unlink(home_canary);
    h_rmtree(dir);
    h_rmtree(root);
    free(b_secret);
    free(home_canary);
    free(canary);
    free(dir);
    free(root);
    return 0;
}

/* Runs a cell reading @path with @how (a Python expression of `p` giving
 * bytes), which must fail; the file must see no access. */
static void attack_read(const char *path, const char *how)
{
    int watch = a_watch(path);
    char *lit = a_pystr(path);
    a_cell = h_fmt("import os\np = %s\ndata = %s\nlen(data) >= 0", lit, how);
    a_stopped(A, a_cell, A_OSERR);
    a_assert_untouched(watch, path);
    free(lit);
}

static void test_etc_shadow(void **state)
{
    /* Its modes keep the worker's uid out, unless that uid owns it (a
     * bubblewrap root whose one uid maps to root's). */
    if (h_open_by_the_workers_uid("/etc/shadow", O_RDONLY))
        h_require_layer(A, OUTSIDE);
    /* Only the cell's answer: the test does not watch or read the
     * machine's password hashes. Whether the read worked, never what. */
    a_stopped(A, "data = open('/etc/' + 'shadow', 'rb').read()\nb':' in data", A_OSERR);
}

static void test_etc_passwd(void **state)
{
    h_require_layer(A, OUTSIDE); /* world-readable */
    a_stopped(A, "data = open('/etc/' + 'passwd', 'rb').read()\nb':' in data", A_OSERR);
}

/* Unless the modes alone keep the worker out of the home directory @home
 * (a root host's worker is uid 65534; root's home is not world-readable
 * on Debian), the test needs Landlock or the mount namespace. */
#define require_outside_unless_modes(home) require_outside_unless_modes_(__func__, (home))
static void require_outside_unless_modes_(const char *test, const char *home)
{
    struct stat st;
    if (geteuid() == 0 && stat(home, &st) == 0 && !(st.st_mode & S_IROTH) && !(st.st_mode & S_IXOTH))
        return;
    h_layers_of(A, OUTSIDE);
    if (!(ci_session_sandbox(A) & OUTSIDE))
        h_skip_because_(test, "%s is open to the worker's uid, and only Landlock or the mount "
                              "namespace, which this kernel or container refuses (probed), keep "
                              "a cell out",
                        home);
}

static void test_home_directory_listing(void **state)
{
    struct passwd *pw = getpwuid(getuid());
    assert_non_null(pw);
    char *home = h_fmt("%s", pw->pw_dir);
    require_outside_unless_modes(home);
    char *lit = a_pystr(home);
    a_cell = h_fmt("import os\nlen(os.listdir(%s)) >= 0", lit);
    a_stopped(A, a_cell, A_OSERR);
    free(lit);
    free(home);
}

static void test_home_directory_canary(void **state)
{
    if (!home_canary)
        h_skip_because("this user's home directory is read-only here (a container's read-only "
                       "root): no canary can be put in it");
    char *home = h_fmt("%.*s", (int)(strrchr(home_canary, '/') - home_canary), home_canary);
    require_outside_unless_modes(home);
    free(home);
    attack_read(home_canary, "open(p, 'rb').read()");
}

static void test_test_canary_with_open(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_read(canary, "open(p, 'rb').read()");
}

static void test_test_canary_with_numpy_fromfile(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_read(canary, "__import__('numpy').fromfile(p, dtype='uint8').tobytes()");
}

static void test_test_canary_with_os_open_and_mmap(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_read(canary, "__import__('mmap').mmap(os.open(p, os.O_RDONLY), 0, "
                        "prot=__import__('mmap').PROT_READ)[:]");
}

static void test_other_sessions_file_by_absolute_path(void **state)
{
    h_require_layer(A, OUTSIDE);
    attack_read(b_secret, "open(p, 'rb').read()");
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(ci_session_get_file(B, "secret.txt", &data, &len), CI_OK);
    assert_int_equal(len, strlen(b_text));
    assert_memory_equal(data, b_text, len);
    ci_free(data);
}

static void test_other_sessions_file_by_relative_path(void **state)
{
    h_require_layer(A, OUTSIDE);
    /* ../../<B's session directory>/workspace/secret.txt from A's cwd. */
    const char *bw = ci_session_workspace(B);
    const char *end = strrchr(bw, '/');
    const char *start = end - 1;
    while (start > bw && *start != '/')
        start--;
    char *rel = h_fmt("../..%.*s/workspace/secret.txt", (int)(end - start), start);
    int watch = a_watch(b_secret);
    char *lit = a_pystr(rel);
    a_cell = h_fmt("data = open(%s, 'rb').read()\nlen(data) >= 0", lit);
    a_stopped(A, a_cell, A_OSERR);
    a_assert_untouched(watch, b_secret);
    free(lit);
    free(rel);
}

/* The name below @above (absolute, with a trailing '/') on the way to
 * A's session directory, as a Python list; "[]" if it is not below. */
static char *names_on_the_way(const char *above)
{
    const char *ws = ci_session_workspace(A);
    size_t n = strlen(above);
    if (strncmp(ws, above, n) != 0)
        return h_fmt("[]");
    return h_fmt("['%.*s']", (int)strcspn(ws + n, "/"), ws + n);
}

/* Landlock refuses listing @dir_expr; without it, in the worker's mount
 * namespace, the listing holds only the way to its own session
 * directory (@want); without both the test is skipped. */
static void attack_listing(const char *dir_expr, const char *want)
{
    h_require_layer(A, OUTSIDE);
    a_cell = h_fmt("import os\nsorted(os.listdir(%s))", dir_expr);
    if (h_has_layer(A, CI_SANDBOX_LANDLOCK, "the refused listing"))
        a_stopped(A, a_cell, A_OSERR);
    else
        a_expect_value(A, a_cell, want, "the listing shows more than the way to its own session");
}

static void test_listing_the_workspace_root_finds_no_other_session(void **state)
{
    /* The workspace root, as the session's path names it. */
    const char *ws = ci_session_workspace(A);
    const char *session = ws + strlen(ws) - strlen("/workspace");
    const char *start = session;
    while (start > ws && start[-1] != '/')
        start--;
    char *top = h_fmt("%.*s", (int)(start - ws), ws);
    char *want = names_on_the_way(top);
    attack_listing("os.path.dirname(os.path.dirname(os.getcwd()))", want);
    free(want);
    free(top);
}

static void test_listing_tmp(void **state)
{
    char *want = names_on_the_way("/tmp/");
    attack_listing("'/tmp'", want);
    free(want);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    const struct CMUnitTest tests[] = {
        A_TEST(test_etc_shadow),
        A_TEST(test_etc_passwd),
        A_TEST(test_home_directory_listing),
        A_TEST(test_home_directory_canary),
        A_TEST(test_test_canary_with_open),
        A_TEST(test_test_canary_with_numpy_fromfile),
        A_TEST(test_test_canary_with_os_open_and_mmap),
        A_TEST(test_other_sessions_file_by_absolute_path),
        A_TEST(test_other_sessions_file_by_relative_path),
        A_TEST(test_listing_the_workspace_root_finds_no_other_session),
        A_TEST(test_listing_tmp),
    };
    return cmocka_run_group_tests_name("attacks: reading outside the workspace", tests,
                                       group_setup, group_teardown);
}
