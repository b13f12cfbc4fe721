/*
 * lib/resolve.c: opening a name below a directory a cell can write,
 * without following a link or leaving it. Each case runs through both
 * ways the library has: openat2(2) (ci_open_beneath on this kernel) and
 * the walk one component at a time that replaces it where the call is
 * missing (ci_open_beneath_fallback, called directly), and both must give
 * the same answer. Then a child whose openat2 and pidfd_open a seccomp
 * filter answers with ENOSYS, as Linux before 5.6 and valgrind 3.19 do,
 * checks that ci_open_beneath falls back by itself, that a real session's
 * ci_session_get_file() and ci_session_put_file() still refuse links, and
 * that the session still sees its worker die without a pidfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "resolve.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static char *top;    /* the directory names are resolved below */
static int top_fd;   /* O_PATH, as the session's workspace_fd is */
static char *outside; /* a directory beside it, with a secret */

static void mkdir_in(const char *rel)
{
    char *p = h_fmt("%s/%s", top, rel);
    if (mkdir(p, 0700) != 0)
        fail_msg("mkdir %s: %s", p, strerror(errno));
    free(p);
}

static void file_in(const char *rel, const char *text)
{
    char *p = h_fmt("%s/%s", top, rel);
    h_write_file(p, text, strlen(text));
    free(p);
}

static void link_in(const char *target, const char *rel)
{
    char *p = h_fmt("%s/%s", top, rel);
    if (symlink(target, p) != 0)
        fail_msg("symlink %s: %s", p, strerror(errno));
    free(p);
}

/*
 *   top/f            "top"
 *   top/d/f          "d"
 *   top/d/e/f        "e"
 *   top/fifo         a FIFO
 *   top/link         -> f            (relative, inside)
 *   top/dlink        -> d            (a directory, inside)
 *   top/abs          -> <outside>    (absolute, outside)
 *   top/up           -> ..           (upwards)
 *   top/d/uplink     -> ../f
 *   top/dangling     -> nowhere
 *   <outside>/secret
 */
static int group_setup(void **state)
{
    top = h_tmpdir();
    outside = h_tmpdir();
    char *secret = h_fmt("%s/secret", outside);
    h_write_file(secret, "secret", 6);
    free(secret);
    mkdir_in("d");
    mkdir_in("d/e");
    file_in("f", "top");
    file_in("d/f", "d");
    file_in("d/e/f", "e");
    char *fifo = h_fmt("%s/fifo", top);
    if (mkfifo(fifo, 0600) != 0)
        return -1;
    free(fifo);
    link_in("f", "link");
    link_in("d", "dlink");
    link_in(outside, "abs");
    link_in("..", "up");
    link_in("../f", "d/uplink");
    link_in("nowhere", "dangling");
    top_fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return top_fd < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
    close(top_fd);
    h_rmtree(top);
    h_rmtree(outside);
    free(top);
    free(outside);
    return 0;
}

typedef int (*open_fn)(int, const char *, int, mode_t);

/* The bytes of regular file @fd, read from its start. */
static char *slurp(int fd)
{
    static char buf[64];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* Opens @name with @flags through @fn, asserts success and that it is
 * the regular file holding @text, or (@text NULL) a directory. */
static void expect_open(open_fn fn, const char *how, const char *name, int flags,
                        const char *text)
{
    struct stat st;
    int fd = fn(top_fd, name, flags, 0);
    if (fd < 0)
        fail_msg("%s(\"%s\") failed: %s", how, name, strerror(errno));
    assert_int_equal(fstat(fd, &st), 0);
    if (text) {
        assert_true(S_ISREG(st.st_mode));
        h_assert_str(slurp(fd), text);
    } else {
        assert_true(S_ISDIR(st.st_mode));
    }
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);
}

/* Asserts @name is refused with errno @err through @fn. */
static void expect_refused(open_fn fn, const char *how, const char *name, int flags, int err)
{
    errno = 0;
    int fd = fn(top_fd, name, flags, 0);
    if (fd >= 0) {
        struct stat st;
        fstat(fd, &st);
        close(fd);
        fail_msg("%s(\"%s\") opened it (mode %o), expected %s", how, name,
                 (unsigned)st.st_mode, strerror(err));
    }
    if (errno != err)
        fail_msg("%s(\"%s\", %#o) failed with %s, expected %s", how, name, flags, strerror(errno),
                 strerror(err));
}

/* Both ways, the same answer. */
#define BOTH_OPEN(name, flags, text)                                                    \
    do {                                                                                \
        expect_open(ci_open_beneath, "ci_open_beneath", name, flags, text);             \
        expect_open(ci_open_beneath_fallback, "ci_open_beneath_fallback", name, flags,  \
                    text);                                                              \
    } while (0)
#define BOTH_REFUSED(name, flags, err)                                                  \
    do {                                                                                \
        expect_refused(ci_open_beneath, "ci_open_beneath", name, flags, err);           \
        expect_refused(ci_open_beneath_fallback, "ci_open_beneath_fallback", name,      \
                       flags, err);                                                     \
    } while (0)

#define RD (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) /* as get_file */
#define DIRP (O_PATH | O_DIRECTORY | O_CLOEXEC)            /* as put_file */
#define SUBDIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) /* as changes.c */

static void test_plain_names_open(void **state)
{
    BOTH_OPEN("f", RD, "top");
    BOTH_OPEN("d/f", RD, "d");
    BOTH_OPEN("d/e/f", RD, "e");
    BOTH_OPEN("d", DIRP, NULL);
    BOTH_OPEN("d/e", DIRP, NULL);
    BOTH_OPEN("d/e", SUBDIR, NULL);
}

static void test_names_with_dots_empty_parts_or_a_root_are_einval(void **state)
{
    static const char *const bad[] = {"", ".", "..", "./f", "../f", "d/..", "d/../f",
                                      "d/./f", "d//f", "d/", "/", "/etc/passwd", "d/e/.."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        BOTH_REFUSED(bad[i], RD, EINVAL);
        BOTH_REFUSED(bad[i], DIRP, EINVAL);
    }
    BOTH_REFUSED(NULL, RD, EINVAL);
    assert_int_equal(ci_name_beneath_valid("..."), 1); /* a name like any other */
    assert_int_equal(ci_name_beneath_valid(".hidden/.x"), 1);
}

static void test_a_link_as_the_last_component_is_refused(void **state)
{
    BOTH_REFUSED("link", RD, ELOOP);
    BOTH_REFUSED("abs", RD, ELOOP);
    BOTH_REFUSED("up", RD, ELOOP);
    BOTH_REFUSED("d/uplink", RD, ELOOP);
    BOTH_REFUSED("dangling", RD, ELOOP);
    /* Without O_NOFOLLOW in the flags too: no link is ever followed. */
    BOTH_REFUSED("link", O_RDONLY | O_CLOEXEC, ELOOP);
    BOTH_REFUSED("dlink", DIRP, ELOOP);
    BOTH_REFUSED("abs", DIRP, ELOOP);
    /* With O_NOFOLLOW, O_DIRECTORY sees the link itself: not a directory. */
    BOTH_REFUSED("dlink", SUBDIR, ENOTDIR);
    BOTH_REFUSED("up", SUBDIR, ENOTDIR);
}

static void test_a_link_on_the_way_is_refused(void **state)
{
    BOTH_REFUSED("dlink/f", RD, ELOOP);
    BOTH_REFUSED("dlink/e/f", RD, ELOOP);
    BOTH_REFUSED("abs/secret", RD, ELOOP);
    BOTH_REFUSED("up/f", RD, ELOOP);
    BOTH_REFUSED("dlink/e", DIRP, ELOOP);
    BOTH_REFUSED("abs/secret", O_RDONLY | O_CLOEXEC, ELOOP);
}

static void test_a_file_on_the_way_is_enotdir_and_missing_is_enoent(void **state)
{
    BOTH_REFUSED("f/x", RD, ENOTDIR);
    BOTH_REFUSED("d/f/x", DIRP, ENOTDIR);
    BOTH_REFUSED("f", DIRP, ENOTDIR);
    BOTH_REFUSED("nope", RD, ENOENT);
    BOTH_REFUSED("nope/f", RD, ENOENT);
    BOTH_REFUSED("d/nope/f", DIRP, ENOENT);
}

static void test_o_path_o_nofollow_returns_the_link_itself(void **state)
{
    /* As openat2 does with RESOLVE_NO_SYMLINKS: the caller asked for it. */
    open_fn fns[] = {ci_open_beneath, ci_open_beneath_fallback};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        int fd = fns[i](top_fd, "link", O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        close(fd);
    }
}

static void test_a_fifo_opens_without_blocking(void **state)
{
    open_fn fns[] = {ci_open_beneath, ci_open_beneath_fallback};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        int fd = fns[i](top_fd, "fifo", RD, 0);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));
        close(fd);
    }
}

static void test_o_creat_makes_the_file_below_and_never_through_a_link(void **state)
{
    open_fn fns[] = {ci_open_beneath, ci_open_beneath_fallback};
    const char *names[] = {"d/e/new0", "d/e/new1"};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        int fd = fns[i](top_fd, names[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        mode_t mask = umask(0);
        umask(mask);
        assert_int_equal(st.st_mode & 07777, 0640 & ~mask);
        close(fd);
        char *p = h_fmt("%s/%s", top, names[i]);
        assert_int_equal(unlink(p), 0);
        free(p);
    }
    BOTH_REFUSED("dangling", O_WRONLY | O_CREAT | O_CLOEXEC, ELOOP);
    BOTH_REFUSED("abs/new", O_WRONLY | O_CREAT | O_CLOEXEC, ELOOP);
    char *made = h_fmt("%s/nowhere", top);
    assert_int_equal(access(made, F_OK), -1);
    free(made);
    made = h_fmt("%s/new", outside);
    assert_int_equal(access(made, F_OK), -1);
    free(made);
}

/* A directory that another mount covers is refused (RESOLVE_NO_XDEV),
 * in a mount namespace of the child's own, where it can mount; skipped
 * where it cannot. */
static void test_a_mount_point_on_the_way_is_exdev(void **state)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Freed before any exit: valgrind checks this child too. */
        char *mnt = h_fmt("%s/d/e", top), *inner = h_fmt("%s/d/e/f", top);
        int fd = -1;
        if (unshare(CLONE_NEWNS) != 0 ||
            mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0)
            fd = -77;
        else
            fd = open(inner, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        free(mnt);
        free(inner);
        if (fd < 0)
            _exit(fd == -77 ? 77 : 2);
        close(fd);
        /* A descriptor opened after the mount sees it. */
        int dirfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
        open_fn fns[] = {ci_open_beneath, ci_open_beneath_fallback};
        const char *names[] = {"d/e/f", "d/e"};
        for (int i = 0; i < 2; i++)
            for (int n = 0; n < 2; n++) {
                errno = 0;
                fd = fns[i](dirfd, names[n], n ? SUBDIR : RD, 0);
                if (fd >= 0 || errno != EXDEV) {
                    fprintf(stderr, "%s \"%s\": fd %d, %s\n", i ? "fallback" : "openat2",
                            names[n], fd, strerror(errno));
                    _exit(3);
                }
            }
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77)
        h_skip_because("this process may not mount in a mount namespace of its own (a "
                       "container, no CAP_SYS_ADMIN)");
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* In the child: openat2 and pidfd_open fail with @err from now on: ENOSYS
 * as on Linux 5.2, EPERM as under an old container's seccomp profile. 0,
 * or -1 where seccomp filters cannot be installed. */
static int hide_openat2(int err)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof filter / sizeof *filter, .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
}

/* Runs @fn in a child without openat2 (@err); asserts it exited 0 (77:
 * skipped). */
#define in_child_without_openat2(fn, err) in_child_without_openat2_(__func__, (fn), (err))
static void in_child_without_openat2_(const char *test, int (*fn)(void), int err)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (hide_openat2(err) != 0)
            _exit(77);
        /* Under valgrind both calls fail with ENOSYS before the kernel
         * (and the filter) sees them. */
        errno = 0;
        if (syscall(SYS_openat2, AT_FDCWD, ".", NULL, 0) != -1 || (errno != err && errno != ENOSYS))
            _exit(4);
        errno = 0;
        if (syscall(SYS_pidfd_open, getpid(), 0) != -1 || (errno != err && errno != ENOSYS))
            _exit(5);
        _exit(fn());
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        h_skip_because_(test, "this process may not install a seccomp filter");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the child without openat2 failed (wait status %#x)", st);
}

static int resolve_without_openat2(void)
{
    int fd = ci_open_beneath(top_fd, "d/e/f", RD, 0);
    if (fd < 0 || strcmp(slurp(fd), "e") != 0)
        return 10;
    close(fd);
    static const char *const links[] = {"link", "abs", "up", "dlink/f", "abs/secret",
                                        "up/f", "d/uplink"};
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        errno = 0;
        if (ci_open_beneath(top_fd, links[i], RD, 0) >= 0 || errno != ELOOP) {
            fprintf(stderr, "without openat2, \"%s\" was not refused: %s\n", links[i],
                    strerror(errno));
            return 11;
        }
    }
    errno = 0;
    if (ci_open_beneath(top_fd, "../f", RD, 0) >= 0 || errno != EINVAL)
        return 12;
    return 0;
}

static void test_enosys_falls_back_by_itself(void **state)
{
    in_child_without_openat2(resolve_without_openat2, ENOSYS);
}

static void test_eperm_of_a_container_profile_falls_back_too(void **state)
{
    in_child_without_openat2(resolve_without_openat2, EPERM);
}

/* A session whose host has no openat2 and no pidfd_open (its worker
 * inherits the filter, which hides only those two): get and put still
 * refuse links, and a worker that dies is seen at once. */
static int session_without_openat2(void)
{
    char *root = h_tmpdir();
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    void *data = NULL;
    size_t len = 0;
    int rc = 0;

    if (!cfg || ci_config_set_workspace_root(cfg, root) != CI_OK ||
        ci_session_new(&s, cfg) != CI_OK) {
        fprintf(stderr, "no session without openat2: %s\n", ci_session_errmsg(NULL));
        rc = 20;
        goto out;
    }
    const char *ws = ci_session_workspace(s);
    ci_result *r = NULL;
    char *l1 = h_fmt("%s/link", ws), *l2 = h_fmt("%s/out", ws);
    if (ci_run(s, "import os\nos.mkdir('sub')", &r) != CI_OK ||
        ci_result_status(r) != CI_STATUS_OK || symlink(outside, l1) != 0 ||
        symlink("sub", l2) != 0) {
        fprintf(stderr, "setup without openat2: %s, %s\n", ci_session_errmsg(s), strerror(errno));
        if (r)
            h_dump(r);
        rc = 21;
    }
    ci_result_free(r);
    r = NULL;
    free(l1);
    free(l2);
    if (rc)
        goto out;
    if (ci_session_put_file(s, "sub/a.txt", "abc", 3) != CI_OK ||
        ci_session_get_file(s, "sub/a.txt", &data, &len) != CI_OK || len != 3 ||
        memcmp(data, "abc", 3) != 0) {
        fprintf(stderr, "put/get without openat2: %s\n", ci_session_errmsg(s));
        rc = 22;
        goto out;
    }
    ci_free(data);
    data = NULL;
    if (ci_session_get_file(s, "link/secret", &data, &len) != CI_EUNSAFE ||
        ci_session_get_file(s, "out/a.txt", &data, &len) != CI_EUNSAFE ||
        ci_session_put_file(s, "link/pwned", "x", 1) != CI_EUNSAFE ||
        ci_session_put_file(s, "out/b.txt", "x", 1) != CI_EUNSAFE) {
        rc = 23;
        goto out;
    }
    char *pwned = h_fmt("%s/pwned", outside);
    if (access(pwned, F_OK) == 0)
        rc = 24;
    free(pwned);
    if (rc)
        goto out;
    /* changes.c: the scan descends into sub/, not into the links. */
    if (ci_run(s, "open('sub/c.txt', 'w').write('c')", &r) != CI_OK ||
        ci_result_status(r) != CI_STATUS_OK || ci_result_file_count(r) != 1 ||
        strcmp(ci_result_file_name(r, 0), "sub/c.txt") != 0) {
        if (r)
            h_dump(r);
        rc = 25;
    }
    ci_result_free(r);
    r = NULL;
    if (rc)
        goto out;
    int64_t t0 = h_now_ms();
    if (ci_run(s, "import os\nos._exit(3)", &r) != CI_OK ||
        ci_result_status(r) != CI_STATUS_KILLED || !ci_result_error_value(r) ||
        !strstr(ci_result_error_value(r), "exited with status 3") || h_now_ms() - t0 > 5000) {
        if (r)
            h_dump(r);
        rc = 26;
    }
    ci_result_free(r);
    r = NULL;
    if (rc == 0 && (ci_session_restart(s) != CI_OK || ci_run(s, "6 * 7", &r) != CI_OK ||
                    !ci_result_value(r) || strcmp(ci_result_value(r), "42") != 0))
        rc = 27;
    ci_result_free(r);
out:
    ci_free(data);
    ci_session_free(s);
    ci_config_free(cfg);
    h_rmtree(root);
    free(root);
    return rc;
}

static void test_a_session_without_openat2_or_pidfd_open_works(void **state)
{
    in_child_without_openat2(session_without_openat2, ENOSYS);
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_names_open),
        cmocka_unit_test(test_names_with_dots_empty_parts_or_a_root_are_einval),
        cmocka_unit_test(test_a_link_as_the_last_component_is_refused),
        cmocka_unit_test(test_a_link_on_the_way_is_refused),
        cmocka_unit_test(test_a_file_on_the_way_is_enotdir_and_missing_is_enoent),
        cmocka_unit_test(test_o_path_o_nofollow_returns_the_link_itself),
        cmocka_unit_test(test_a_fifo_opens_without_blocking),
        cmocka_unit_test(test_o_creat_makes_the_file_below_and_never_through_a_link),
        cmocka_unit_test(test_a_mount_point_on_the_way_is_exdev),
        cmocka_unit_test(test_enosys_falls_back_by_itself),
        cmocka_unit_test(test_eperm_of_a_container_profile_falls_back_too),
        cmocka_unit_test(test_a_session_without_openat2_or_pidfd_open_works),
    };
    return cmocka_run_group_tests_name("resolve", tests, group_setup, group_teardown);
}
