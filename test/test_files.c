/*
 * Moving files in and out of the workspace, and the links a cell may
 * plant to reach the host's files. The group's session lives under a
 * test-owned root with a 2 MiB file limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "read_all.h"

#define FILE_LIMIT (2u * 1024 * 1024)

static ci_session *S;
static char *root;    /* workspace root given to the session */
static char *outside; /* a test-owned directory outside any workspace */

static int group_setup(void **state)
{
    root = h_tmpdir();
    outside = h_tmpdir();
    return h_group_session(&S, &(struct h_limits){.root = root, .file = FILE_LIMIT});
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    h_rmtree(root);
    h_rmtree(outside);
    free(root);
    free(outside);
    return 0;
}

static char *ws_path(const char *name)
{
    return h_fmt("%s/%s", ci_session_workspace(S), name);
}

/* A file holding @text, outside the workspace, hard-linked into it as
 * @name; malloc'ed path of the file. In a host's directory, or, where
 * the session directory is a filesystem of its own (its disk quota's
 * tmpfs), in the session's tmp/ beside the workspace: no link can cross
 * filesystems. */
static char *plant_hardlink(const char *outside_dir, const char *base, const char *text,
                            const char *name)
{
    char *target = h_fmt("%s/%s", outside_dir, base), *lp = ws_path(name);
    h_write_file(target, text, strlen(text));
    if (link(target, lp) != 0 && errno == EXDEV &&
        (ci_session_sandbox(S) & CI_SANDBOX_DISK_QUOTA)) {
        unlink(target);
        free(target);
        target = h_fmt("%s/../tmp/%s", ci_session_workspace(S), base);
        h_write_file(target, text, strlen(text));
        if (link(target, lp) != 0)
            fail_msg("link %s -> %s: %s", target, lp, strerror(errno));
    } else if (access(lp, F_OK) != 0) {
        fail_msg("link %s -> %s: %s", target, lp, strerror(errno));
    }
    free(lp);
    return target;
}

/* Gets @name, asserts @want and that nothing came back. */
static void assert_get_fails(const char *name, int want)
{
    void *data = &data;
    size_t len = 99;
    int rc = ci_session_get_file(S, name, &data, &len);
    if (rc != want)
        fail_msg("get_file(\"%s\") = %d (%s), expected %d (%s)", name ? name : "(null)", rc,
                 ci_strerror(rc), want, ci_strerror(want));
    assert_null(data);
    assert_int_equal(len, 0);
}

static void assert_get_equals(const char *name, const void *want, size_t want_len)
{
    void *data = NULL;
    size_t len = 0;
    int rc = ci_session_get_file(S, name, &data, &len);
    if (rc != CI_OK)
        fail_msg("get_file(\"%s\") = %d (%s): %s", name, rc, ci_strerror(rc),
                 ci_session_errmsg(S));
    assert_non_null(data);
    assert_int_equal(len, want_len);
    assert_memory_equal(data, want, want_len);
    assert_int_equal(((char *)data)[len], '\0');
    ci_free(data);
}

/*
 * Plants the symbolic link @name -> @target in the workspace. From the
 * test, not a cell: where the kernel has Landlock a cell cannot make
 * links, but without it one can, and the host must refuse a link however
 * it got there.
 */
static void plant_symlink(const char *target, const char *name)
{
    char *path = ws_path(name);
    if (symlink(target, path) != 0)
        fail_msg("symlink %s -> %s: %s", path, target, strerror(errno));
    free(path);
}

/* Asserts the host file @path holds exactly the text @want. */
static void assert_host_file(const char *path, const char *want)
{
    size_t len = 0;
    char *t = h_read_file(path, &len);
    assert_non_null(t);
    assert_int_equal(len, strlen(want));
    assert_string_equal(t, want);
    free(t);
}

/* ------------------------------------------------------------ round trip */

static void test_put_get_round_trips_bytes_with_nuls(void **state)
{
    const char bytes[] = "a\0b\0\xff\xfe\n\r";
    assert_int_equal(ci_session_put_file(S, "nuls.bin", bytes, sizeof bytes), CI_OK);
    assert_get_equals("nuls.bin", bytes, sizeof bytes);
}

static void test_put_get_round_trips_empty_file(void **state)
{
    assert_int_equal(ci_session_put_file(S, "empty.bin", "", 0), CI_OK);
    assert_get_equals("empty.bin", "", 0);
    h_expect(S, "import os\nos.path.getsize('empty.bin')", "0", "");
}

static void test_put_get_round_trips_one_megabyte(void **state)
{
    size_t n = 1u << 20;
    unsigned char *buf = malloc(n);
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 13);
    assert_int_equal(ci_session_put_file(S, "mb.bin", buf, n), CI_OK);
    assert_get_equals("mb.bin", buf, n);
    h_expect(S, "import os\nos.path.getsize('mb.bin')", "1048576", "");
    free(buf);
}

static void test_put_replaces_a_longer_file(void **state)
{
    assert_int_equal(ci_session_put_file(S, "ow.txt", "long content", 12), CI_OK);
    assert_int_equal(ci_session_put_file(S, "ow.txt", "x", 1), CI_OK);
    assert_get_equals("ow.txt", "x", 1);
}

static void test_cell_reads_a_put_file(void **state)
{
    const char csv[] = "a,b\n1,2\n3,4\n";
    assert_int_equal(ci_session_put_file(S, "in.csv", csv, strlen(csv)), CI_OK);
    h_expect(S, "open('in.csv').read()", "'a,b\\n1,2\\n3,4\\n'", "");
    h_expect(S, "import pandas as pd\nint(pd.read_csv('in.csv')['b'].sum())", "6", "");
}

static void test_cell_can_overwrite_and_remove_a_put_file(void **state)
{
    assert_int_equal(ci_session_put_file(S, "given.txt", "from host", 9), CI_OK);
    /* A root host's worker is uid 65534: the file must be its own. */
    char *path = ws_path("given.txt");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    if (geteuid() == 0) {
        assert_int_equal(st.st_uid, 65534);
        assert_int_equal(st.st_gid, 65534);
    } else {
        assert_int_equal(st.st_uid, geteuid());
    }
    h_expect(S, "open('given.txt', 'r+').write('from cell'); open('given.txt').read()",
             "'from cell'", "");
    assert_get_equals("given.txt", "from cell", 9);
    h_expect(S, "import os\nos.remove('given.txt')\nos.path.exists('given.txt')", "False", "");
    free(path);
}

static void test_get_returns_a_file_the_cell_wrote(void **state)
{
    h_expect(S, "with open('out.txt', 'w') as f:\n    f.write('written by cell')", NULL, "");
    assert_get_equals("out.txt", "written by cell", 15);
}

static void test_files_in_subdirectories(void **state)
{
    h_expect(S, "import os\nos.makedirs('sub/dir', exist_ok=True)\n"
                "open('sub/dir/f.txt', 'w').write('deep');",
             NULL, "");
    assert_get_equals("sub/dir/f.txt", "deep", 4);
    assert_int_equal(ci_session_put_file(S, "sub/dir/g.txt", "put deep", 8), CI_OK);
    h_expect(S, "open('sub/dir/g.txt').read()", "'put deep'", "");
}

static void test_non_ascii_name(void **state)
{
    const char *name = "donn\xc3\xa9" "es \xc3\xa0.txt";
    assert_int_equal(ci_session_put_file(S, name, "u", 1), CI_OK);
    h_expect(S, "open('donn\xc3\xa9" "es \xc3\xa0.txt').read()", "'u'", "");
    assert_get_equals(name, "u", 1);
}

/* ----------------------------------------------------------------- names */

static const char *const bad_names[] = {
    "", "/etc/passwd", "../x", "a/../b", ".", "..", "./a", "a/.", "a/./b", "x/..",
};

static void test_refused_names_are_einval_for_put(void **state)
{
    assert_int_equal(ci_session_put_file(S, NULL, "x", 1), CI_EINVAL);
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        int rc = ci_session_put_file(S, bad_names[i], "x", 1);
        if (rc != CI_EINVAL)
            fail_msg("put_file(\"%s\") = %d, expected CI_EINVAL", bad_names[i], rc);
    }
    /* Nothing was written beside the workspace. */
    char *sibling = h_fmt("%s/../x", ci_session_workspace(S));
    assert_int_equal(access(sibling, F_OK), -1);
    free(sibling);
}

static void test_refused_names_are_einval_for_get(void **state)
{
    assert_get_fails(NULL, CI_EINVAL);
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
        assert_get_fails(bad_names[i], CI_EINVAL);
}

static void test_get_of_missing_file_is_enoent(void **state)
{
    assert_get_fails("no-such-file", CI_ENOENT);
    assert_get_fails("no-such-dir/file", CI_ENOENT);
}

static void test_put_into_missing_directory_is_enoent(void **state)
{
    assert_int_equal(ci_session_put_file(S, "no-such-dir/x", "x", 1), CI_ENOENT);
}

static void test_put_through_a_file_is_eunsafe(void **state)
{
    assert_int_equal(ci_session_put_file(S, "plain", "p", 1), CI_OK);
    assert_int_equal(ci_session_put_file(S, "plain/x", "x", 1), CI_EUNSAFE);
}

/* ---------------------------------------------------------------- limits */

static void test_put_at_file_limit_is_ok_and_over_is_etoobig(void **state)
{
    char *buf = calloc(1, FILE_LIMIT + 1);
    assert_int_equal(ci_session_put_file(S, "limit.bin", buf, FILE_LIMIT), CI_OK);
    assert_int_equal(ci_session_put_file(S, "over.bin", buf, FILE_LIMIT + 1), CI_ETOOBIG);
    char *over = ws_path("over.bin");
    assert_int_equal(access(over, F_OK), -1);
    free(over);
    free(buf);
}

static void test_get_at_file_limit_is_ok_and_over_is_etoobig(void **state)
{
    /* The cell cannot write past the limit (RLIMIT_FSIZE), so we do. */
    char *buf = malloc(FILE_LIMIT + 1);
    memset(buf, 'g', FILE_LIMIT + 1);
    char *at = ws_path("at-limit.bin"), *over = ws_path("over-limit.bin");
    h_write_file(at, buf, FILE_LIMIT);
    h_write_file(over, buf, FILE_LIMIT + 1);
    assert_get_equals("at-limit.bin", buf, FILE_LIMIT);
    assert_get_fails("over-limit.bin", CI_ETOOBIG);
    free(at);
    free(over);
    free(buf);
}

/* A get with a limit of its own: at it is fine, over it CI_ETOOBIG with
 * the file's size; a limit over the file limit is the file limit. */
static void test_get_file_max_refuses_past_its_limit_and_tells_the_size(void **state)
{
    char *buf = malloc(FILE_LIMIT + 1), *over = ws_path("max-over.bin"), *small = ws_path("max.bin");
    void *data = &data;
    size_t len = 0;

    memset(buf, 'm', FILE_LIMIT + 1);
    h_write_file(small, buf, 100);
    h_write_file(over, buf, FILE_LIMIT + 1);
    assert_int_equal(ci_session_get_file_max(S, "max.bin", 100, &data, &len), CI_OK);
    assert_int_equal(len, 100);
    assert_memory_equal(data, buf, 100);
    ci_free(data);
    assert_int_equal(ci_session_get_file_max(S, "max.bin", 99, &data, &len), CI_ETOOBIG);
    assert_null(data);
    assert_int_equal(len, 100);
    h_assert_contains(ci_session_errmsg(S), "100 bytes is over the limit this get asked of 99");
    assert_int_equal(ci_session_get_file_max(S, "max-over.bin", UINT64_MAX, &data, &len),
                     CI_ETOOBIG);
    assert_int_equal(len, FILE_LIMIT + 1);
    h_assert_contains(ci_session_errmsg(S), "over the file limit");
    free(over);
    free(small);
    free(buf);
}

static void test_cell_cannot_write_past_file_limit(void **state)
{
    int pid = ci_session_pid(S);
    ci_result *r = h_run_status(S, "with open('toolong.bin', 'wb') as f:\n"
                                   "    f.write(b'x' * (3 * 1024 * 1024))",
                                CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "OSError"); /* EFBIG, its message the limit's */
    h_assert_str(ci_result_error_value(r),
                 "the file reached the session's file size limit of 2 MiB");
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), pid);
    h_expect(S, "import os\nos.path.getsize('toolong.bin')", "2097152", "");
}

/* ----------------------------------------------------------------- links */

static void test_get_of_planted_symlink_is_eunsafe(void **state)
{
    plant_symlink("/etc/passwd", "link");
    assert_get_fails("link", CI_EUNSAFE);
}

static void test_get_of_relative_symlink_inside_workspace_is_eunsafe(void **state)
{
    h_expect(S, "open('target.txt', 'w').write('t');", NULL, "");
    plant_symlink("target.txt", "rel-link");
    assert_get_fails("rel-link", CI_EUNSAFE);
}

static void test_get_through_symlinked_directory_is_eunsafe(void **state)
{
    plant_symlink("/etc", "etcdir");
    assert_get_fails("etcdir/passwd", CI_EUNSAFE);
    /* Even when the link stays inside the workspace. */
    h_expect(S, "import os\nos.makedirs('real', exist_ok=True)\n"
                "open('real/f', 'w').write('x');",
             NULL, "");
    plant_symlink("real", "alias");
    assert_get_fails("alias/f", CI_EUNSAFE);
}

static void test_put_through_symlinked_directory_is_eunsafe(void **state)
{
    plant_symlink(outside, "outdir");
    assert_int_equal(ci_session_put_file(S, "outdir/pwned", "x", 1), CI_EUNSAFE);
    char *pwned = h_fmt("%s/pwned", outside);
    assert_int_equal(access(pwned, F_OK), -1);
    free(pwned);
}

static void test_get_of_hardlink_to_outside_file_is_eunsafe(void **state)
{
    char *secret = plant_hardlink(outside, "secret", "host secret", "hardlink");
    assert_get_fails("hardlink", CI_EUNSAFE);
    free(secret);
}

static void test_put_over_planted_symlink_replaces_the_link(void **state)
{
    char *target = h_fmt("%s/victim-target", outside);
    h_write_file(target, "original", 8);
    plant_symlink(target, "victim");

    assert_int_equal(ci_session_put_file(S, "victim", "new", 3), CI_OK);

    assert_host_file(target, "original");
    char *v = ws_path("victim");
    struct stat st;
    assert_int_equal(lstat(v, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_get_equals("victim", "new", 3);
    free(v);
    free(target);
}

static void test_put_over_planted_hardlink_leaves_the_outside_file(void **state)
{
    char *target = plant_hardlink(outside, "hl-target", "untouched", "hl-victim");

    assert_int_equal(ci_session_put_file(S, "hl-victim", "changed", 7), CI_OK);
    assert_host_file(target, "untouched");
    assert_get_equals("hl-victim", "changed", 7);
    free(target);
}

static void test_get_of_fifo_is_eunsafe_and_does_not_block(void **state)
{
    /* Made by the test: the seccomp filter may refuse mknod to cells, but the
     * host must not hang on a FIFO however it got there. */
    char *fifo = ws_path("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_get_fails("fifo", CI_EUNSAFE);
    free(fifo);
}

static void test_get_of_directory_is_eunsafe(void **state)
{
    h_expect(S, "import os\nos.makedirs('adir', exist_ok=True)", NULL, "");
    assert_get_fails("adir", CI_EUNSAFE);
}

/* ------------------------------------------------------------- workspace */

static void test_workspace_is_cwd_under_the_root_and_private(void **state)
{
    const char *ws = ci_session_workspace(S);
    assert_non_null(ws);
    /* <root>/codeinterp-XXXXXX/workspace */
    char *prefix = h_fmt("%s/codeinterp-", root);
    assert_memory_equal(ws, prefix, strlen(prefix));
    const char *rest = ws + strlen(prefix);
    assert_int_equal(strlen(rest), 6 + strlen("/workspace"));
    assert_string_equal(rest + 6, "/workspace");

    char *want = h_fmt("'%s'", ws);
    h_expect(S, "import os\nos.getcwd()", want, "");

    /* Private to the worker's uid: 65534 for a root host, else ours. */
    uid_t owner = geteuid() == 0 ? 65534 : geteuid();
    struct stat st;
    assert_int_equal(stat(ws, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(st.st_uid, owner);
    char *dir = strdup(ws);
    *strrchr(dir, '/') = '\0';
    static const char *const parts[] = {"/config", "/tmp"};
    for (size_t i = 0; i < 2; i++) {
        char *p = h_fmt("%s%s", dir, parts[i]);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(st.st_uid, owner);
        free(p);
    }
    /* The session directory stays the host's: a root host's worker may
     * only pass through it, by its group (0710), so it can add nothing
     * beside its own three directories, and no other user may enter. */
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(st.st_gid, geteuid() == 0 ? 65534 : getegid());
    assert_int_equal(st.st_mode & 07777, geteuid() == 0 ? 0710 : 0700);
    free(dir);
    free(want);
    free(prefix);
}

static void test_free_removes_the_session_directory_without_following_links(void **state)
{
    char *keep_dir = h_fmt("%s/keep-dir", outside);
    char *keep_file = h_fmt("%s/keep-dir/keep.txt", outside);
    char *keep_top = h_fmt("%s/keep-top.txt", outside);
    assert_int_equal(mkdir(keep_dir, 0700), 0);
    h_write_file(keep_file, "keep me", 7);
    h_write_file(keep_top, "me too", 6);

    struct h_limits lim = {.root = root};
    ci_session *s = h_session(&lim);
    char *dir = strdup(ci_session_workspace(s));
    *strrchr(dir, '/') = '\0';
    h_expect_cell(s, "files_nested_directories", NULL, "");
    /* Links out of the workspace, planted by us (see plant_symlink). */
    const char *links[][2] = {{keep_dir, "a/outdir"}, {keep_top, "a/b/outfile"}, {"/", "rootlink"}};
    for (size_t i = 0; i < 3; i++) {
        char *path = h_fmt("%s/%s", ci_session_workspace(s), links[i][1]);
        if (symlink(links[i][0], path) != 0)
            fail_msg("symlink %s: %s", path, strerror(errno));
        free(path);
    }
    ci_session_free(s);

    struct stat st;
    assert_int_equal(lstat(dir, &st), -1);
    assert_int_equal(errno, ENOENT);
    assert_host_file(keep_file, "keep me");
    assert_host_file(keep_top, "me too");
    assert_int_equal(stat(root, &st), 0);

    free(dir);
    free(keep_top);
    free(keep_file);
    free(keep_dir);
}

static void test_a_root_that_resolves_too_long_is_refused(void **state)
{
    /* A short link to a path over 3000 bytes: the session directory is
     * named by the resolved path, which must leave room under PATH_MAX. */
    char *base = h_tmpdir(), *path = strdup(base), *link = h_fmt("%s-short", base);
    char name[201];
    memset(name, 'd', 200);
    name[200] = '\0';
    while (strlen(path) <= 3000) {
        char *deeper = h_fmt("%s/%s", path, name);
        assert_int_equal(mkdir(deeper, 0711), 0);
        free(path);
        path = deeper;
    }
    assert_int_equal(symlink(path, link), 0);
    ci_config *cfg = h_config(&(struct h_limits){.root = link});
    h_start_fails(cfg, CI_EIO, "resolves to a path of");
    ci_config_free(cfg);
    assert_int_equal(unlink(link), 0);
    h_rmtree(base);
    free(link);
    free(path);
    free(base);
}

static void test_a_root_others_could_write_is_refused_unless_sticky(void **state)
{
    /* Another user could swap a session directory for their own there
     * (and read what the cell writes); /tmp's sticky bit forbids it. */
    char *dir = h_tmpdir();
    ci_config *cfg = h_config(&(struct h_limits){.root = dir});
    ci_session *s = NULL;
    assert_int_equal(chmod(dir, 0777), 0);
    h_start_fails(cfg, CI_EIO, "can be written by another user");
    assert_int_equal(chmod(dir, 01777), 0);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_expect(s, "1 + 1", "2", "");
    ci_session_free(s);
    ci_config_free(cfg);
    h_rmtree(dir);
    free(dir);
}

static void test_live_sessions_keep_their_directories(void **state)
{
    /* A new session removes the directories of dead hosts under its root
     * (their locks are free), never one whose host still holds its lock:
     * here this process's own. */
    char *dir = h_tmpdir();
    struct h_limits lim = {.root = dir};
    ci_session *a = h_session(&lim);
    ci_session *b = h_session(&lim);
    struct stat st;
    void *data;
    size_t len;

    assert_int_equal(stat(ci_session_workspace(a), &st), 0);
    assert_int_equal(ci_session_put_file(a, "kept.txt", "yes", 3), CI_OK);
    ci_session_free(b);
    assert_int_equal(ci_session_get_file(a, "kept.txt", &data, &len), CI_OK);
    assert_int_equal(len, 3);
    ci_free(data);
    h_expect(a, "open('kept.txt').read()", "'yes'", "");
    ci_session_free(a);
    h_rmtree(dir);
    free(dir);
}

/* In a child: a session under @under whose workspace holds a file; its
 * directory's name goes to @fd; then the child lives on until the pipe
 * @hold has a byte (a live host), or dies at once without
 * ci_session_free (a host killed: @hold is NULL). No cmocka there: an assertion would go on
 * with the parent's tests; a failure sends an empty name. Its worker is
 * started by exec: the parent's zygote is the parent's. */
static void host_in_child(const char *under, int fd, const int *hold)
{
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    char dir[4096] = "", byte;

    if (cfg && ci_config_set_workspace_root(cfg, under) == CI_OK &&
        ci_config_set_zygote(cfg, 0) == CI_OK && ci_session_new(&s, cfg) == CI_OK && ci_session_put_file(s, "left.txt", "x", 1) == CI_OK) {
        snprintf(dir, sizeof dir, "%s", ci_session_workspace(s));
        *strrchr(dir, '/') = '\0';
    }
    if (write(fd, dir, strlen(dir) + 1) < 0 || !dir[0])
        _exit(1);
    if (hold) {
        close(hold[1]);
        (void)!read(hold[0], &byte, 1);
    }
    _exit(0);
}

/* <@top>/@name with a workspace and a "lock" file, flock()ed if @lock:
 * the layout of an earlier version. The lock file's descriptor. */
static int old_layout(const char *top, const char *name, int lock)
{
    char path[4200];
    int fd;

    snprintf(path, sizeof path, "%s/%s", top, name);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/%s/workspace", top, name);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/%s/lock", top, name);
    assert_true((fd = open(path, O_RDONLY | O_CREAT, 0600)) >= 0);
    if (lock)
        assert_int_equal(flock(fd, LOCK_EX), 0);
    return fd;
}

static void test_a_dead_hosts_directory_is_removed(void **state)
{
    /* Under a root this process has not used yet, so its first session
     * scans it: the directory of a host that died without freeing its
     * session goes, with the files in it; a live host's stays, and so
     * does one without a workspace (a host may be making it), and one a
     * live host of an earlier version holds by its lock file. */
    char *top = h_tmpdir(), dead[4096], live[4096], making[4200];
    int names[2], hold[2];
    pid_t a, b;
    struct stat st;

    assert_int_equal(pipe(names), 0);
    assert_int_equal(pipe(hold), 0);
    /* The live one first: the other's first session scans the root too. */
    if ((b = fork()) == 0)
        host_in_child(top, names[1], hold);
    assert_true(read(names[0], live, sizeof live) > 1);
    if ((a = fork()) == 0)
        host_in_child(top, names[1], NULL);
    assert_true(read(names[0], dead, sizeof dead) > 1);
    assert_int_equal(waitpid(a, NULL, 0), a);
    snprintf(making, sizeof making, "%s/codeinterp-making", top);
    assert_int_equal(mkdir(making, 0700), 0);
    assert_int_equal(stat(dead, &st), 0);
    /* As a host of an earlier version leaves them: a "lock" file in it,
     * flock()ed while its session lives. */
    int held = old_layout(top, "codeinterp-oldliv", 1);
    int freed = old_layout(top, "codeinterp-olddea", 0);

    struct h_limits lim = {.root = top};
    ci_session *s = h_session(&lim);
    errno = 0;
    assert_int_equal(stat(dead, &st), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(stat(live, &st), 0);
    assert_int_equal(stat(making, &st), 0);
    snprintf(making, sizeof making, "%s/codeinterp-oldliv/workspace", top);
    assert_int_equal(stat(making, &st), 0);
    snprintf(making, sizeof making, "%s/codeinterp-olddea", top);
    errno = 0;
    assert_int_equal(stat(making, &st), -1);
    assert_int_equal(errno, ENOENT);
    close(held);
    close(freed);
    ci_session_free(s);
    assert_int_equal(write(hold[1], "x", 1), 1);
    assert_int_equal(waitpid(b, NULL, 0), b);
    close(names[0]);
    close(names[1]);
    close(hold[0]);
    close(hold[1]);
    h_rmtree(top);
    free(top);
}

/* ci_read_all, which get_file, the manifest's files and the worker's
 * policy read through: the whole input up to one byte past its bound. */
static void test_read_all_reads_to_one_byte_past_its_bound(void **state)
{
    char path[] = "/tmp/ci-read-all-XXXXXX", *buf;
    size_t len, big = 200 * 1024;
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    for (size_t i = 0; i < big; i++)
        assert_int_equal(write(fd, "0123456789" + i % 10, 1), 1);
    struct { size_t max, hint, len; } cases[] = {
        {big, 0, big},          {big, big, big},     {big - 1, big, big},
        {10, 0, 11},            {0, 0, 1},           {4 * big, 16, big},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        assert_int_equal(ci_read_all(fd, cases[i].max, cases[i].hint, &buf, &len), 0);
        assert_int_equal(len, cases[i].len);
        assert_int_equal(buf[len], '\0');
        assert_memory_equal(buf, "0123456789", len < 10 ? len : 10);
        assert_int_equal(buf[len - 1], "0123456789"[(len - 1) % 10]);
        free(buf);
    }
    /* A read error: errno, and no buffer. */
    close(fd);
    buf = (char *)&len;
    assert_int_equal(ci_read_all(fd, 10, 0, &buf, &len), -1);
    assert_int_equal(errno, EBADF);
    assert_null(buf);
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_all_reads_to_one_byte_past_its_bound),
        cmocka_unit_test_setup(test_put_get_round_trips_bytes_with_nuls, h_setup_alive),
        cmocka_unit_test_setup(test_put_get_round_trips_empty_file, h_setup_alive),
        cmocka_unit_test_setup(test_put_get_round_trips_one_megabyte, h_setup_alive),
        cmocka_unit_test_setup(test_put_replaces_a_longer_file, h_setup_alive),
        cmocka_unit_test_setup(test_cell_reads_a_put_file, h_setup_alive),
        cmocka_unit_test_setup(test_cell_can_overwrite_and_remove_a_put_file, h_setup_alive),
        cmocka_unit_test_setup(test_get_returns_a_file_the_cell_wrote, h_setup_alive),
        cmocka_unit_test_setup(test_files_in_subdirectories, h_setup_alive),
        cmocka_unit_test_setup(test_non_ascii_name, h_setup_alive),
        cmocka_unit_test_setup(test_refused_names_are_einval_for_put, h_setup_alive),
        cmocka_unit_test_setup(test_refused_names_are_einval_for_get, h_setup_alive),
        cmocka_unit_test_setup(test_get_of_missing_file_is_enoent, h_setup_alive),
        cmocka_unit_test_setup(test_put_into_missing_directory_is_enoent, h_setup_alive),
        cmocka_unit_test_setup(test_put_through_a_file_is_eunsafe, h_setup_alive),
        cmocka_unit_test_setup(test_put_at_file_limit_is_ok_and_over_is_etoobig, h_setup_alive),
        cmocka_unit_test_setup(test_get_at_file_limit_is_ok_and_over_is_etoobig, h_setup_alive),
        cmocka_unit_test_setup(test_get_file_max_refuses_past_its_limit_and_tells_the_size,
                               h_setup_alive),
        cmocka_unit_test_setup(test_cell_cannot_write_past_file_limit, h_setup_alive),
        cmocka_unit_test_setup(test_get_of_planted_symlink_is_eunsafe, h_setup_alive),
        cmocka_unit_test_setup(test_get_of_relative_symlink_inside_workspace_is_eunsafe,
                               h_setup_alive),
        cmocka_unit_test_setup(test_get_through_symlinked_directory_is_eunsafe, h_setup_alive),
        cmocka_unit_test_setup(test_put_through_symlinked_directory_is_eunsafe, h_setup_alive),
        cmocka_unit_test_setup(test_get_of_hardlink_to_outside_file_is_eunsafe, h_setup_alive),
        cmocka_unit_test_setup(test_put_over_planted_symlink_replaces_the_link, h_setup_alive),
        cmocka_unit_test_setup(test_put_over_planted_hardlink_leaves_the_outside_file,
                               h_setup_alive),
        cmocka_unit_test_setup(test_get_of_fifo_is_eunsafe_and_does_not_block, h_setup_alive),
        cmocka_unit_test_setup(test_get_of_directory_is_eunsafe, h_setup_alive),
        cmocka_unit_test_setup(test_workspace_is_cwd_under_the_root_and_private, h_setup_alive),
        cmocka_unit_test(test_a_root_that_resolves_too_long_is_refused),
        cmocka_unit_test(test_a_root_others_could_write_is_refused_unless_sticky),
        cmocka_unit_test(test_live_sessions_keep_their_directories),
        cmocka_unit_test(test_a_dead_hosts_directory_is_removed),
        cmocka_unit_test_setup(test_free_removes_the_session_directory_without_following_links,
                               h_setup_alive),
    };
    return cmocka_run_group_tests_name("files", tests, group_setup, group_teardown);
}
