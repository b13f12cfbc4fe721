/*
 * Links and special files a cell plants in its workspace to reach outside
 * it: symbolic and hard links to a canary of the test's own, to a
 * directory of the test's, to /etc/shadow; fifos, device nodes and unix
 * sockets. Whatever the cell manages to make, the host's get_file must
 * refuse to follow it and put_file must not write through it; and in the
 * end state the cell cannot make any of them at all.
 */
#include <sys/sysmacros.h>

#include "attack.h"

static ci_session *S;
static char *root;   /* workspace root */
static char *dir;    /* test-owned, 0777 */
static char *canary; /* 0666 in dir */
static char canary_text[64];

static int group_setup(void **state)
{
    root = a_tmpdir(0755);
    dir = a_tmpdir(0777);
    a_secret_text(canary_text, sizeof canary_text, "links-canary-", 8);
    canary = a_canary(dir, canary_text, 0666);
    return a_group_session(&S, &(struct h_limits){.root = root});
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    h_rmtree(dir);
    h_rmtree(root);
    free(canary);
    free(dir);
    free(root);
    return 0;
}

/* Puts back the canary and clears the test directory of anything an
 * attack left in it. */
static int teardown(void **state)
{
    h_rmtree(dir);
    mkdir(dir, 0777);
    chmod(dir, 0777);
    a_write_canary(canary, canary_text, 0666);
    return a_teardown(state);
}

/*
 * Runs @code, which tries to make a link or special file in the
 * workspace. Returns 1 if it was made (the cell ended normally), 0 if it
 * was refused with a clear error (the session going on, or a
 * SandboxViolation); fails the test on anything else.
 */
static int try_make(const char *cell)
{
    ci_result *r = h_run(S, cell);
    ci_status st = ci_result_status(r);
    const char *n = ci_result_error_name(r);
    int made = st == CI_STATUS_OK;
    if (st == CI_STATUS_KILLED && n && strcmp(n, "SandboxViolation") == 0) {
        ci_result_free(r);
        a_alive(S);
        return 0;
    }
    if (!made && !(st == CI_STATUS_ERROR && n && a_name_in(n, A_OSERR))) {
        h_dump(r);
        fail_msg("the cell ended with %s %s\n  cell: %s", h_status_name(st), n ? n : "", cell);
    }
    ci_result_free(r);
    return made;
}

/* Asserts get_file(@name) gives nothing: CI_EUNSAFE for a planted link,
 * CI_ENOENT when the cell could not plant it. */
static void assert_get_refused(const char *name)
{
    void *data = NULL;
    size_t len = 0;
    int rc = ci_session_get_file(S, name, &data, &len);
    if (rc == CI_OK) {
        fail_msg("ATTACK SUCCEEDED: get_file(\"%s\") followed the link and returned %zu bytes: "
                 "%.100s",
                 name, len, (char *)data);
    }
    if (rc != CI_EUNSAFE && rc != CI_ENOENT)
        fail_msg("get_file(\"%s\") = %d (%s), expected CI_EUNSAFE or CI_ENOENT", name, rc,
                 ci_strerror(rc));
    assert_null(data);
}

/* Asserts the workspace holds no @name (the cell's attempt left
 * nothing), or only a regular file (what put_file left). */
static void assert_no_special_file(const char *name)
{
    char *p = h_fmt("%s/%s", ci_session_workspace(S), name);
    struct stat st;
    if (lstat(p, &st) == 0 && !S_ISREG(st.st_mode))
        fail_msg("ATTACK SUCCEEDED: the cell made %s, of mode 0%o", p, st.st_mode);
    free(p);
}

/* ------------------------------------------------------- symbolic links */

static void test_symlink_to_a_canary(void **state)
{
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    a_cell = h_fmt("import os\nos.symlink(%s, 'sym_canary')", lit);
    int made = try_make(a_cell);
    /* Whatever the cell managed, the host neither reads nor writes
     * through it. */
    assert_get_refused("sym_canary");
    int rc = ci_session_put_file(S, "sym_canary", "PWNED", 5);
    assert_true(rc == CI_OK || rc == CI_EUNSAFE);
    a_assert_untouched(watch, canary);
    a_assert_file_is(canary, canary_text);
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell made a symbolic link to %s", canary);
    free(lit);
}

static void test_read_through_the_cells_own_symlink(void **state)
{
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    a_cell = h_fmt("import os\nos.symlink(%s, 'sym_read')\nlen(open('sym_read', 'rb').read()) >= 0",
                   lit);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_untouched(watch, canary);
    free(lit);
}

static void test_write_through_the_cells_own_symlink(void **state)
{
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    char *cell = h_cell("links_write_through_own_symlink");
    a_cell = h_fmt("CANARY = %s\n%s", lit, cell);
    free(cell);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_untouched(watch, canary);
    a_assert_file_is(canary, canary_text);
    free(lit);
}

static void test_symlinked_directory_then_host_put(void **state)
{
    char *lit = a_pystr(dir);
    a_cell = h_fmt("import os\nos.symlink(%s, 'sym_dir')", lit);
    int made = try_make(a_cell);
    int rc = ci_session_put_file(S, "sym_dir/planted", "x", 1);
    assert_true(rc == CI_EUNSAFE || rc == CI_ENOENT);
    char *p = h_fmt("%s/planted", dir);
    a_assert_absent(p);
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell made a symbolic link to the directory %s", dir);
    free(p);
    free(lit);
}

static void test_symlink_to_etc_shadow(void **state)
{
    int made = try_make("import os\nos.symlink('/etc/' + 'shadow', 'sym_shadow')");
    assert_get_refused("sym_shadow");
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell made a symbolic link to /etc/shadow");
}

/* ------------------------------------------------------------ hard links */

/* What keeps a cell's links away from the test's world-writable
 * directory: Landlock refuses linking or renaming across it, and it is
 * not in the worker's mount namespace. Without both (test/probe.c
 * agrees), nothing does. */
#define OUTSIDE (CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS)

static void test_hardlink_to_a_canary(void **state)
{
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    a_cell = h_fmt("import os\nos.link(%s, 'hard_canary')", lit);
    int made = try_make(a_cell);
    free(lit);
    /* The host writes nothing through the link, whether or not the cell
     * could make it. */
    assert_get_refused("hard_canary");
    int rc = ci_session_put_file(S, "hard_canary", "PWNED", 5);
    assert_true(rc == CI_OK || rc == CI_EUNSAFE);
    /* A link made changes the canary's inode (its link count), and the
     * host's refusal opens it: the watch sees both. */
    int guarded = !made || h_has_layer(S, OUTSIDE, "the refusal of the link, and the untouched "
                                                   "canary");
    if (guarded)
        a_assert_untouched(watch, canary);
    else
        close(watch);
    a_assert_file_is(canary, canary_text);
    if (made && guarded)
        fail_msg("ATTACK SUCCEEDED: the cell hard-linked %s into its workspace", canary);
}

static void test_write_through_a_hardlink(void **state)
{
    h_require_layer(S, OUTSIDE);
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    char *cell = h_cell("links_write_through_a_hardlink");
    a_cell = h_fmt("CANARY = %s\n%s", lit, cell);
    free(cell);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_untouched(watch, canary);
    a_assert_file_is(canary, canary_text);
    free(lit);
}

static void test_hardlink_of_a_workspace_file_out(void **state)
{
    h_require_layer(S, OUTSIDE);
    /* The other direction: a name outside for a file the cell owns. */
    char *out = h_fmt("%s/hard_out", dir);
    char *lit = a_pystr(out);
    a_cell = h_fmt("import os\nopen('mine', 'w').write('x')\nos.link('mine', %s)", lit);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_absent(out);
    free(lit);
    free(out);
}

static void test_rename_of_a_workspace_file_out(void **state)
{
    h_require_layer(S, OUTSIDE);
    char *out = h_fmt("%s/moved_out", dir);
    char *lit = a_pystr(out);
    a_cell = h_fmt("import os\nopen('mine2', 'w').write('x')\nos.rename('mine2', %s)", lit);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_absent(out);
    free(lit);
    free(out);
}

/* ------------------------------------------------------- special files */

static void test_fifo_in_the_workspace(void **state)
{
    int made = try_make("import os\nos.mkfifo('fifo')");
    int64_t t0 = h_now_ms();
    assert_get_refused("fifo");
    assert_true(h_now_ms() - t0 < 2000);
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell made a fifo");
}

static void test_device_node_for_memory(void **state)
{
    /* /dev/mem's numbers: a node of it would be the machine's memory. */
    int made = try_make("import os, stat\n"
                        "os.mknod('devmem', stat.S_IFCHR | 0o666, os.makedev(1, 1))");
    assert_no_special_file("devmem");
    assert_get_refused("devmem");
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell made a device node");
}

static void test_block_device_node_for_the_disk(void **state)
{
    struct stat st;
    assert_int_equal(stat(root, &st), 0);
    a_cell = h_fmt("import os, stat\n"
                   "os.mknod('disk', stat.S_IFBLK | 0o666, os.makedev(%u, %u))",
                   major(st.st_dev), minor(st.st_dev));
    int made = try_make(a_cell);
    assert_no_special_file("disk");
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell made a block device node");
}

static void test_unix_socket_file_in_the_workspace(void **state)
{
    int made = try_make("import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('sock')");
    assert_no_special_file("sock");
    if (made)
        fail_msg("ATTACK SUCCEEDED: the cell bound a unix socket in its workspace");
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
#define T(f) cmocka_unit_test_setup_teardown(f, a_setup_alive, teardown)
    const struct CMUnitTest tests[] = {
        T(test_symlink_to_a_canary),
        T(test_read_through_the_cells_own_symlink),
        T(test_write_through_the_cells_own_symlink),
        T(test_symlinked_directory_then_host_put),
        T(test_symlink_to_etc_shadow),
        T(test_hardlink_to_a_canary),
        T(test_write_through_a_hardlink),
        T(test_hardlink_of_a_workspace_file_out),
        T(test_rename_of_a_workspace_file_out),
        T(test_fifo_in_the_workspace),
        T(test_device_node_for_memory),
        T(test_block_device_node_for_the_disk),
        T(test_unix_socket_file_in_the_workspace),
    };
#undef T
    return cmocka_run_group_tests_name("attacks: links and special files", tests, group_setup,
                                       group_teardown);
}
