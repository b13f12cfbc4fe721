/*
 * File modes as a way out: a cell that copies python3 into its workspace
 * and makes it setuid, or opens its workspace, HOME, TMPDIR, its session
 * directory or a file the host uploaded to the group or to others (a data
 * channel out of a sandbox with no network, and, with a setuid copy, a
 * way for another local user to become the worker's uid, or for an
 * unprivileged host the host's own). Every way a mode is set is tried:
 * chmod, fchmod, fchmodat, fchmodat2, the mode of open, openat, creat,
 * openat2, mkdir and mkdirat, and umask. Checked from the host (no entry
 * of the session directory carries a setuid, setgid or sticky bit or any
 * group or other bit, and the directories keep their modes and owners)
 * and, for a root host, from processes of another uid that the test
 * forks: one that is nobody's, and one in the workers' group (65534),
 * which may pass through the session directory but no further. Run as
 * root, the program runs once more as an unprivileged host (uid 1000),
 * whose worker has its uid and owns its session directory.
 */
#include <ftw.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "attack.h"

static ci_session *S;
static char *root;        /* the workspace root, test-owned, 0755 */
static char *sdir;        /* S's session directory */
static char secret[64];   /* data.txt, which the host uploaded */

static int group_setup(void **state)
{
    root = a_tmpdir(0755);
    struct h_limits lim = {.root = root};
    if (a_group_session(&S, &lim) != 0)
        return -1;
    const char *ws = ci_session_workspace(S);
    sdir = h_fmt("%.*s", (int)(strrchr(ws, '/') - ws), ws);
    a_secret_text(secret, sizeof secret, "modes-secret-", 8);
    return ci_session_put_file(S, "data.txt", secret, strlen(secret)) == CI_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    h_rmtree(root);
    free(root);
    free(sdir);
    return 0;
}

/* ------------------------------------------------- the host's view */

static int bad_entries;
static size_t config_len; /* of "<session directory>/config" */

static int check_mode(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    /* The session directory itself has the host's mode, checked apart.
     * Below HOME (config, 0700), a worker started by exec leaves what its
     * warm-up wrote before the lockdown with the modes the libraries
     * asked for (IPython's profile README, copied with its 0644;
     * fontconfig's cache directories): no cell's, and reached by no one
     * through config. Nothing there is setuid, setgid or sticky. */
    int in_config = strncmp(path, sdir, strlen(sdir)) == 0 && strlen(path) > config_len &&
                    strncmp(path + strlen(sdir), "/config/", 8) == 0;
    /* An ACL would let in whoever it names, whatever the mode says: the
     * session directory included, none of it carries one. */
    if (!S_ISLNK(st->st_mode) &&
        (lgetxattr(path, "system.posix_acl_access", NULL, 0) >= 0 ||
         lgetxattr(path, "system.posix_acl_default", NULL, 0) >= 0)) {
        print_error("ATTACK SUCCEEDED: %s carries an ACL\n", path);
        bad_entries++;
    }
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
        print_error("ATTACK SUCCEEDED: %s is a device, fifo or socket (mode %06o)\n", path,
                    st->st_mode);
        bad_entries++;
    }
    if (ftw->level == 0)
        return 0;
    if (st->st_mode & (in_config ? 07000 : 07077)) {
        print_error("ATTACK SUCCEEDED: %s has mode %04o\n", path, st->st_mode & 07777);
        bad_entries++;
    }
    return 0;
}

/* Asserts that nothing in the session directory has a setuid, setgid or
 * sticky bit or a group or other bit, and that the directories have the
 * modes and owners the host gave them. */
static void assert_modes_private(void)
{
    struct stat st;
    uid_t worker = geteuid() == 0 ? 65534 : geteuid();
    bad_entries = 0;
    config_len = strlen(sdir) + strlen("/config");
    assert_int_equal(nftw(sdir, check_mode, 16, FTW_PHYS), 0);
    if (bad_entries)
        fail_msg("ATTACK SUCCEEDED: %d entries of %s let another user in", bad_entries, sdir);
    assert_int_equal(lstat(sdir, &st), 0);
    if ((st.st_mode & 07777) != (geteuid() == 0 ? 0710u : 0700u) || st.st_uid != geteuid() ||
        (geteuid() == 0 && st.st_gid != 65534))
        fail_msg("ATTACK SUCCEEDED: the session directory %s is %04o, owner %d:%d", sdir,
                 st.st_mode & 07777, (int)st.st_uid, (int)st.st_gid);
    static const char *const mine[] = {"workspace", "config", "tmp"};
    for (size_t i = 0; i < 3; i++) {
        char *p = h_fmt("%s/%s", sdir, mine[i]);
        assert_int_equal(lstat(p, &st), 0);
        if ((st.st_mode & 07777) != 0700 || st.st_uid != worker)
            fail_msg("ATTACK SUCCEEDED: %s is %04o, owner %d", p, st.st_mode & 07777,
                     (int)st.st_uid);
        free(p);
    }
}

/* ------------------------------------------- another user's view */

/* What a process of uid @uid and gid @gid got into, as bits: 1 the
 * session directory listed, 2 the workspace listed, 4 data.txt read, 8 a
 * file made in the workspace, 16 the copy of python3 opened, 32 the
 * session directory passed through (the workspace stat'ed). Tried in a
 * forked child that only makes system calls; the answer comes through a
 * pipe. */
static unsigned another_user(uid_t uid, gid_t gid)
{
    char *ws = h_fmt("%s/workspace", sdir), *data = h_fmt("%s/data.txt", ws);
    char *made = h_fmt("%s/by-another-user", ws), *py = h_fmt("%s/py", ws);
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unsigned got = 0;
        int fd;
        close(fds[0]);
        if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 ||
            setresuid(uid, uid, uid) != 0)
            _exit(2);
        if ((fd = open(sdir, O_RDONLY | O_DIRECTORY)) >= 0)
            got |= 1, close(fd);
        if ((fd = open(ws, O_RDONLY | O_DIRECTORY)) >= 0)
            got |= 2, close(fd);
        if ((fd = open(data, O_RDONLY)) >= 0)
            got |= 4, close(fd);
        if ((fd = open(made, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0)
            got |= 8, close(fd);
        if ((fd = open(py, O_RDONLY)) >= 0)
            got |= 16, close(fd);
        struct stat st;
        if (stat(ws, &st) == 0)
            got |= 32;
        _exit(write(fds[1], &got, sizeof got) == sizeof got ? 0 : 1);
    }
    close(fds[1]);
    unsigned got = ~0u;
    ssize_t n = read(fds[0], &got, sizeof got);
    close(fds[0]);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    unlink(made);
    free(ws);
    free(data);
    free(made);
    free(py);
    assert_int_equal(n, sizeof got);
    return got;
}

/* Asserts that no other user gets into the session: checked as root only,
 * which alone can fork a process of another uid. */
static void assert_others_kept_out(void)
{
    if (geteuid() != 0) {
        h_skip_part_because("only root can fork a process of another uid to try the "
                            "session from; the modes were checked from the host");
        return;
    }
    /* Nobody's uid; then one in the workers' group, which may pass
     * through the session directory (0710) to nothing it can open. */
    unsigned got = another_user(4242, 4242);
    if (got)
        fail_msg("ATTACK SUCCEEDED: uid 4242 got into the session (0x%x)", got);
    got = another_user(4242, 65534) & ~32u;
    if (got)
        fail_msg("ATTACK SUCCEEDED: uid 4242 of group 65534 got into the session (0x%x)", got);
}

/* ------------------------------------------------------- the attacks */

/* The cell @name after the cell sc, a line SYS_<NAME> = <number> for
 * each system call the cells here make by number and try_oserror (try_(f)
 * is the name of the OSError f() raised, or 'done'); malloc'ed. */
static char *modes_cell(const char *name)
{
    char *sc = h_cell("sc"), *cell = h_cells("try_oserror", name);
    char *code = h_fmt("%s\nSYS_FCHMOD = %d\nSYS_FCHMODAT = %d\nSYS_CREAT = %d\n"
                       "SYS_OPEN = %d\nSYS_UMASK = %d\nSYS_LINKAT = %d\n"
                       "SYS_MKNOD = %d\nSYS_MKNODAT = %d\nSYS_RENAMEAT2 = %d\n%s",
                       sc, SYS_fchmod, SYS_fchmodat, SYS_creat, SYS_open, SYS_umask, SYS_linkat,
                       SYS_mknod, SYS_mknodat, SYS_renameat2, cell);
    free(cell);
    free(sc);
    return code;
}

static void test_a_setuid_copy_of_python_cannot_be_made(void **state)
{
    a_cell = modes_cell("modes_setuid_copy_of_python");
    a_expect_value(S, a_cell,
                   "['PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
                   "'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
                   "'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
                   "'PermissionError', 'PermissionError', 0]",
                   "a setuid, setgid or sticky mode, or a umask that lets others in, was set");
    /* os.umask only adds to the 077 the filter demands: the mask stays. */
    h_expect(S, "import os\n[oct(os.umask(m)) for m in (0, 0o22, 0o77)]",
             "['0o77', '0o77', '0o77']", NULL);
    /* The cell is told why. */
    ci_result *r = h_run_status(S, "import os\nos.chmod('py', 0o4755)", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "PermissionError");
    h_assert_contains(ci_result_error_value(r), "private to its owner");
    h_assert_contains(ci_result_error_value(r), "0o4755");
    ci_result_free(r);
    /* New files are the owner's alone, whatever mode they ask for. */
    h_expect_cell(S, "modes_new_files_private", "('0o700', '0o700')", NULL);
    /* shutil copies a system file's 0644 and 0755 with the owner's bits,
     * as notebook code expects copy, copy2 and copytree to work. */
    h_expect_cell(S, "modes_shutil_copies", "['0o600', '0o600', '0o700', '0o600']", NULL);
    assert_modes_private();
    assert_others_kept_out();
}

static void test_the_workspace_and_its_files_cannot_be_opened_to_others(void **state)
{
    a_cell = modes_cell("modes_workspace_opened_to_others");
    a_expect_value(S, a_cell,
                   "['PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
                   "'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
                   "'done', 'done', 'done']",
                   "a mode that lets another user in was set");
    /* The session directory is not the worker's where the host is root:
     * even a mode within 0700 is the kernel's to refuse. Where the worker
     * has the host's uid it may narrow it, and a restart puts it back. */
    if (geteuid() != 0) {
        h_expect(S, "import os\nos.chmod('..', 0)", NULL, NULL);
        assert_int_equal(ci_session_restart(S), CI_OK);
        a_assert_filtered(S);
    }
    assert_modes_private();
    assert_others_kept_out();
    char *p = h_fmt("%s/data.txt", ci_session_workspace(S));
    a_assert_file_is(p, secret);
    free(p);
}

/* The other ways to a file with a mode: an unnamed O_TMPFILE given a
 * name by linkat, chmod through the /proc/self/fd link of an O_PATH
 * descriptor, an archive's members, a hard link to a setuid program. */
static void test_other_ways_to_a_mode_keep_it_private(void **state)
{
    a_cell = modes_cell("modes_other_ways_to_a_mode");
    /* The hard link crosses the worker's mounts (EXDEV); the others keep
     * the owner's bits, as the umask and the filter leave them. */
    a_expect_value(S, a_cell,
                   "['PermissionError', 'PermissionError', 'OSError', "
                   "['0o700', '0o600', '0o700', '0o600']]",
                   "a mode that lets another user in was set");
    assert_modes_private();
    assert_others_kept_out();
    h_expect(S, "import shutil\nshutil.rmtree('other')", NULL, NULL);
}

/* Nodes that are neither file, directory nor link, and their modes: mknod
 * and mkfifo are refused, and so is the whiteout renameat2 leaves, a
 * character device (0, 0) of mode 0. */
static void test_a_cell_cannot_make_a_device_node_or_a_fifo(void **state)
{
    a_cell = modes_cell("modes_device_node_or_fifo");
    a_expect_value(S, a_cell,
                   "['PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
                   "'PermissionError', 'PermissionError', 'PermissionError', ['victim']]",
                   "a device node, fifo or whiteout was made");
    assert_modes_private();
    /* renameat2 goes on working without it (RENAME_NOREPLACE). */
    char *code = modes_cell("modes_renameat2_noreplace");
    h_expect(S, code, "['done', ['moved']]", NULL);
    free(code);
    h_expect(S, "import shutil\nshutil.rmtree('nodes')", NULL, NULL);
}

/* A default ACL of @dir giving uid 4242 all, and others read and search
 * (as on a shared project directory); 0, or -1 with errno. */
static int set_default_acl(const char *dir)
{
    /* The kernel's posix_acl_xattr format: a version, then (tag, perm,
     * id) entries in tag order (linux/posix_acl_xattr.h). */
    struct __attribute__((packed)) {
        uint32_t version;
        struct __attribute__((packed)) {
            uint16_t tag, perm;
            uint32_t id;
        } e[5];
    } acl = {2,
             {{0x01, 7, ~0u},   /* ACL_USER_OBJ rwx */
              {0x02, 7, 4242},  /* ACL_USER 4242 rwx */
              {0x04, 5, ~0u},   /* ACL_GROUP_OBJ r-x */
              {0x10, 7, ~0u},   /* ACL_MASK rwx */
              {0x20, 5, ~0u}}}; /* ACL_OTHER r-x */
    return setxattr(dir, "system.posix_acl_default", &acl, sizeof acl, 0);
}

/* A session under a workspace root that is setgid and has a default ACL:
 * a new directory inherits both, and under a default ACL the umask does
 * not apply, so without the host's care the session directory, the
 * worker's three and every file and directory a cell makes would be
 * setgid, carry group and other bits, and let uid 4242 in by its ACL
 * entry, whatever mode the cell asks for. */
static ci_session *s2;  /* its session, under */
static char *r2;        /* its root */
static char *saved_sdir;

/* a_teardown, and s2 and r2 freed, sdir S's again. */
static int inherit_teardown(void **state)
{
    ci_session_free(s2);
    s2 = NULL;
    if (r2)
        h_rmtree(r2);
    free(r2);
    r2 = NULL;
    if (saved_sdir) {
        free(sdir);
        sdir = saved_sdir;
        saved_sdir = NULL;
    }
    return a_teardown(state);
}

static void test_a_setgid_root_with_a_default_acl_is_not_inherited(void **state)
{
    r2 = a_tmpdir(02755);
    struct stat st;
    assert_int_equal(stat(r2, &st), 0);
    assert_true(st.st_mode & S_ISGID);
    if (set_default_acl(r2) != 0) {
        if (errno != EOPNOTSUPP)
            fail_msg("setxattr %s: %s", r2, strerror(errno));
        h_skip_part_because("the filesystem of %s has no ACLs; its setgid bit is tried alone",
                            r2);
    }
    struct h_limits lim = {.timeout_ms = 30000, .root = r2};
    s2 = a_session_new(&lim);
    assert_non_null(s2);
    h_expect_cell(s2, "modes_setgid_acl_root_files", "'made'", NULL);
    const char *ws = ci_session_workspace(s2);
    saved_sdir = sdir;
    sdir = h_fmt("%.*s", (int)(strrchr(ws, '/') - ws), ws);
    assert_modes_private();
    assert_others_kept_out();
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    int other = a_also_unprivileged(argv);
    const struct CMUnitTest tests[] = {
        A_TEST(test_a_setuid_copy_of_python_cannot_be_made),
        A_TEST(test_the_workspace_and_its_files_cannot_be_opened_to_others),
        A_TEST(test_other_ways_to_a_mode_keep_it_private),
        A_TEST(test_a_cell_cannot_make_a_device_node_or_a_fifo),
        cmocka_unit_test_setup_teardown(test_a_setgid_root_with_a_default_acl_is_not_inherited,
                                        a_setup_alive, inherit_teardown),
    };
    char *name = h_fmt("attacks: file modes (%s)", a_host_kind());
    int rc = cmocka_run_group_tests_name(name, tests, group_setup, group_teardown);
    free(name);
    return rc || other;
}
