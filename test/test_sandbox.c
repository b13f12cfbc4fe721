/*
 * The worker's lockdown, tested by what a cell can and cannot do and by
 * what the host sees of the worker in /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "worker_start.h" /* CI_WORKER_UID */

#define CANARY_NAME "CI_TEST_CANARY"
#define CANARY_VALUE "ci-canary-value-7f3a9"

static ci_session *S;
static char *tmp;         /* test-owned directory, mode 0711 */
static char *canary_path; /* a file we hold open, inheritable, across the spawn */
static int canary_fd = -1;
static int canary_pipe[2] = {-1, -1};

static int group_setup(void **state)
{
    tmp = h_tmpdir();
    canary_path = h_fmt("%s/canary-file", tmp);
    h_write_file(canary_path, "secret", 6);
    /* Inheritable on purpose: no O_CLOEXEC. */
    canary_fd = open(canary_path, O_RDONLY);
    if (canary_fd < 0 || pipe(canary_pipe) != 0)
        return -1;
    setenv(CANARY_NAME, CANARY_VALUE, 1);
    int rc = h_group_session(&S, NULL);
    unsetenv(CANARY_NAME);
    return rc;
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    close(canary_fd);
    close(canary_pipe[0]);
    close(canary_pipe[1]);
    h_rmtree(tmp);
    free(canary_path);
    free(tmp);
    return 0;
}

/* @value is "('<name>', rest)" with name one of the OSErrors a refused
 * call gives. */
static void assert_refused(const char *code, const char *rest)
{
    ci_result *r = h_run_status(S, code, CI_STATUS_OK);
    const char *v = ci_result_value(r);
    char *perm = h_fmt("('PermissionError'%s)", rest);
    char *oserr = h_fmt("('OSError'%s)", rest);
    if (!v || (strcmp(v, perm) != 0 && strcmp(v, oserr) != 0)) {
        h_dump(r);
        fail_msg("value %s, expected %s (or OSError)", v ? v : "(null)", perm);
    }
    free(perm);
    free(oserr);
    ci_result_free(r);
    h_expect(S, "'still here'", "'still here'", "");
}

/* ------------------------------------------------------------ processes */

static void test_subprocess_is_refused(void **state)
{
    char *cell = h_cell("sandbox_subprocess");
    assert_refused(cell, ", False");
    free(cell);
}

static void test_os_system_does_not_run_the_command(void **state)
{
    h_expect_cell(S, "sandbox_os_system", "(True, False)", "");
}

static void test_fork_is_refused(void **state)
{
    char *cell = h_cell("sandbox_fork");
    assert_refused(cell, ", 0");
    free(cell);
}

static void test_multiprocessing_is_refused(void **state)
{
    char *cell = h_cell("sandbox_multiprocessing");
    ci_result *r = h_run(S, cell);
    free(cell);
    /* No second process: the cell fails (it may not be killed for it). */
    assert_int_equal(ci_result_status(r), CI_STATUS_ERROR);
    ci_result_free(r);
    h_expect(S, "'still here'", "'still here'", "");
}

/* -------------------------------------------------------------- network */

static void test_socket_is_refused(void **state)
{
    char *cell = h_cell("sandbox_socket");
    assert_refused(cell, ", 1");
    free(cell);
}

static void test_unix_and_udp_sockets_are_refused(void **state)
{
    char *cell = h_cell("sandbox_unix_and_udp_sockets");
    assert_refused(cell, ", True");
    free(cell);
}

/* ---------------------------------------------------------- environment */

static void test_host_environment_does_not_reach_the_worker(void **state)
{
    /* The canary is assembled in the cell so its source does not hold it.
     * A non-dumpable worker of a non-root host cannot read its own
     * /proc/self/environ (root owns it); os.environ is checked anyway. */
    h_expect_cell(S, "sandbox_no_host_environment", "(False, False, False, False)", "");
}

static void test_worker_environ_seen_from_host_has_no_canary(void **state)
{
    char *path = h_fmt("/proc/%d/environ", ci_session_pid(S));
    size_t len = 0;
    char *env = h_read_file(path, &len);
    if (!env && errno == EACCES) {
        /* Not dumpable: only a process with CAP_SYS_PTRACE may read it
         * (root, but not a container's root without it), and neither
         * may a cell. */
        free(path);
        h_skip_because("this process may not read the worker's environ (not root, or without "
                       "CAP_SYS_PTRACE), as no cell may");
    }
    if (!env)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    assert_null(memmem(env, len, CANARY_NAME, strlen(CANARY_NAME)));
    assert_null(memmem(env, len, CANARY_VALUE, strlen(CANARY_VALUE)));
    free(env);
    free(path);
}

/* ---------------------------------------------------------- descriptors */

/* Lists the worker's descriptors from inside; asserts exactly 0-3, of
 * the kinds proto.h gives, and none of them our canary. */
static void assert_worker_descriptors(void)
{
    char *cell = h_cell("sandbox_list_descriptors");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    if (strstr(o, canary_path))
        fail_msg("the worker holds our canary file open:\n%s", o);
    const char *want = "([0, 1, 2, 3], ['/dev/null', 'pipe', 'pipe', 'socket'])";
    if (!ci_result_value(r) || strcmp(ci_result_value(r), want) != 0) {
        h_dump(r);
        fail_msg("descriptors %s, expected %s", ci_result_value(r), want);
    }
    ci_result_free(r);
}

/* Runs first, on the worker as spawned: a cell that leaks descriptors
 * (multiprocessing does when fork fails) would spoil the count. */
static void test_only_descriptors_0_to_3_are_open(void **state)
{
    assert_worker_descriptors();
    /* A restarted worker inherits nothing of the old one's either. */
    assert_int_equal(ci_session_restart(S), CI_OK);
    assert_worker_descriptors();
}

/* --------------------------------------------------------------- seccomp */

/* Checks one /proc/<pid>/task/<tid>/status file. */
static void assert_task_locked(const char *status_path)
{
    char *st = h_read_file(status_path, NULL);
    if (!st)
        return; /* the thread ended meanwhile */
    if (!strstr(st, "\nSeccomp:\t2\n"))
        fail_msg("%s has no seccomp filter:\n%s", status_path, st);
    if (!strstr(st, "\nNoNewPrivs:\t1\n"))
        fail_msg("%s lacks no_new_privs:\n%s", status_path, st);
    free(st);
}

static int assert_all_tasks_locked(int pid)
{
    char *dir = h_fmt("/proc/%d/task", pid);
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = h_fmt("%s/%s/status", dir, e->d_name);
        assert_task_locked(path);
        free(path);
        n++;
    }
    closedir(d);
    free(dir);
    return n;
}

#define ALL_LAYERS                                                                      \
    (CI_SANDBOX_SECCOMP | CI_SANDBOX_RLIMITS | CI_SANDBOX_NO_NEW_PRIVS | CI_SANDBOX_LANDLOCK | \
     CI_SANDBOX_UNPRIVILEGED | CI_SANDBOX_USERNS | CI_SANDBOX_NETNS | CI_SANDBOX_IPCNS |       \
     CI_SANDBOX_UTSNS | CI_SANDBOX_MNTNS | CI_SANDBOX_PIDNS | CI_SANDBOX_TASK_LIMIT |         \
     CI_SANDBOX_DISK_QUOTA)

static void test_sandbox_reports_the_layers_this_kernel_has(void **state)
{
    /* Exactly the layers the kernel, and any container around us, give
     * a worker that tries them as the worker does (test/probe.c): none
     * missing that it gives, none reported that it refuses. */
    const struct h_probe *p = h_probe(h_zygote_default());
    unsigned got = ci_session_sandbox(S);
    char *missing = h_layer_list(ALL_LAYERS & ~p->layers);
    print_message("      probed for a %s worker: %s%s; a /proc of its own: %s\n",
                  p->zygote ? "zygote-forked" : "exec-started", *missing ? "refused here: " : "",
                  *missing ? missing : "every layer given",
                  p->own_proc ? "yes" : "refused here");
    if (p->unknown)
        print_message("      not probed (under valgrind, without securityfs): Landlock\n");
    free(missing);
    assert_int_equal(got & ~p->unknown, p->layers & ~p->unknown);
    /* The /proc a cell sees is its PID namespace's own exactly where the
     * kernel let the probe mount one; else the host's (the one where
     * the host's name for the worker is its own). */
    if ((got & (CI_SANDBOX_PIDNS | CI_SANDBOX_MNTNS)) == (CI_SANDBOX_PIDNS | CI_SANDBOX_MNTNS)) {
        char *want = p->own_proc ? h_fmt("'1'") : h_fmt("'%d'", ci_session_pid(S));
        h_expect(S, "import os\nos.readlink('/proc/self')", want, "");
        free(want);
    }
}

/* In a forked host: mount(2), pivot_root(2) and the new mount API fail
 * with EPERM from now on, as under a container's profile that allows
 * unshare(2) but not mounts. 0, or -1 where no filter can be installed. */
static int refuse_mounts(void)
{
    static const long calls[] = {SYS_mount,      SYS_umount2, SYS_pivot_root, SYS_open_tree,
                                 SYS_move_mount, SYS_fsopen,  SYS_fsconfig,   SYS_fsmount,
                                 SYS_fspick,     SYS_mount_setattr};
    enum { N = sizeof calls / sizeof *calls };
    struct sock_filter f[2 * N + 2];
    unsigned n = 0;
    f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, nr));
    for (unsigned i = 0; i < N; i++) {
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)calls[i], 0, 1);
        f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    }
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    return h_seccomp_filter(f, (unsigned short)n);
}

/* In the forked host: a session (from the zygote or started by exec, as
 * @zygote says) that runs a cell and has every layer the probe found
 * but the mount namespace, a proc of its own, and the disk quota, whose
 * tmpfs this host then cannot mount either. No cmocka assertion:
 * the child reports by its exit status, and says why on stderr. */
static int session_without_mounts(int zygote)
{
    const struct h_probe *p = h_probe(zygote);
    unsigned want = p->layers & ~p->unknown & ~(CI_SANDBOX_MNTNS | CI_SANDBOX_DISK_QUOTA);
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    ci_result *r = NULL;
    int rc = 0;

    if (!cfg || ci_config_set_workspace_root(cfg, tmp) != CI_OK ||
        ci_config_set_zygote(cfg, zygote) != CI_OK || ci_session_new(&s, cfg) != CI_OK) {
        fprintf(stderr, "no session where mounts are refused: %s\n", ci_session_errmsg(NULL));
        rc = 20;
    } else if ((ci_session_sandbox(s) & ~p->unknown) != want) {
        fprintf(stderr, "where mounts are refused, the worker has 0x%x, not 0x%x\n",
                ci_session_sandbox(s), want);
        rc = 21;
    } else if (ci_run(s, "import os\n(6 * 7, os.readlink('/proc/self') != '1')", &r) != CI_OK ||
               ci_result_status(r) != CI_STATUS_OK || !ci_result_value(r) ||
               strcmp(ci_result_value(r), "(42, True)") != 0) {
        fprintf(stderr, "where mounts are refused, the cell gave %s\n",
                r && ci_result_value(r) ? ci_result_value(r) : ci_session_errmsg(s));
        rc = 22;
    }
    ci_result_free(r);
    ci_session_free(s);
    ci_config_free(cfg);
    return rc;
}

/* Where a container's filter allows unshare(2) but refuses mount(2),
 * the worker cannot make its root: it goes without the mount namespace
 * and says so, keeping every other layer, from the zygote and by exec. */
static void test_worker_where_mounts_are_refused_goes_without_its_root(void **state)
{
    for (int zygote = 0; zygote <= h_zygote_default(); zygote++) {
        h_probe(zygote); /* before the filter, which would change its answer */
        h_filtered_host(refuse_mounts, session_without_mounts, zygote,
                        zygote ? "the zygote-forked worker where mounts are refused"
                               : "the exec-started worker where mounts are refused");
    }
}

/* 1 if the worker is pid 1 of a PID namespace of its own. */
static int pid_namespace(void)
{
    return (ci_session_sandbox(S) & CI_SANDBOX_PIDNS) != 0;
}

static void test_every_thread_has_seccomp_and_no_new_privs(void **state)
{
    int pid = ci_session_pid(S);
    assert_true(pid > 0);
    assert_true(assert_all_tasks_locked(pid) >= 1);
}

static void test_threads_started_by_a_cell_are_locked_too(void **state)
{
    h_expect_cell(S, "sandbox_thread_waits", NULL, "");
    int n = assert_all_tasks_locked(ci_session_pid(S));
    h_expect(S, "sb_ev.set()\nsb_t.join()", NULL, "");
    assert_true(n >= 2);
}

/* Runs @code; asserts the filter killed the worker for it (a
 * SandboxViolation that says why, the session dead), then restarts. */
static void assert_violation(const char *code)
{
    ci_result *r = h_run_status(S, code, CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "SandboxViolation");
    assert_non_null(ci_result_error_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), -1);
    assert_int_equal(ci_session_restart(S), CI_OK);
}

static void test_kill_listed_syscall_is_sandbox_violation(void **state)
{
    assert_violation(h_kill_listed_cell());
    h_expect(S, "'restarted'", "'restarted'", "");
}

static void test_ptrace_through_python_is_sandbox_violation(void **state)
{
    /* The same call the friendly way a cell would try it. */
    assert_violation("import ctypes, os\nlibc = ctypes.CDLL(None)\n"
                     "libc.ptrace(16, os.getppid(), 0, 0)");
}

/* ------------------------------------------- the seccomp filter, probed */

/*
 * As bubblewrap's try-syscall: each call is made with arguments the kernel
 * would refuse or that harm nothing, so EPERM can only come from the
 * filter; the kernel's own answer is in the comment.
 */
static void test_refused_calls_fail_with_eperm_from_the_filter(void **state)
{
    h_expect_cell(S, "sandbox_refused_calls_eperm",
                  "['EPERM', 'EPERM', 'EPERM', 'EPERM', 'EPERM']", "");
}

/* The cell @name after a line HOST_PID = this process's pid; malloc'ed. */
static char *host_pid_then(const char *name)
{
    char *cell = h_cell(name);
    char *code = h_fmt("HOST_PID = %d\n%s", (int)getpid(), cell);
    free(cell);
    return code;
}

static void test_signals_reach_only_the_worker_itself(void **state)
{
    /* Signal 0 delivers nothing: only the permission check runs. The
     * host, init (in a PID namespace of its own, pid 1 is the worker),
     * the process group, everyone. */
    char *code = host_pid_then("sandbox_signal_others");
    h_expect(S, code,
             pid_namespace() ? "['PermissionError', 'sent', 'PermissionError', 'PermissionError']"
                             : "['PermissionError', 'PermissionError', 'PermissionError', "
                               "'PermissionError']",
             "");
    free(code);
}

static void test_dangerous_ioctl_and_fcntl_are_refused(void **state)
{
    /* TIOCSTI on /dev/null: ENOTTY from the kernel; F_SETOWN on a pipe
     * would succeed. */
    h_expect_cell(S, "sandbox_ioctl_and_fcntl_refused", "['PermissionError', 'PermissionError']",
                  "");
}

static void test_dumpable_cannot_be_turned_back_on(void **state)
{
    h_expect_cell(S, "sandbox_dumpable_stays_off", "(-1, 1)", "");
}

static void test_resource_limits_cannot_be_raised(void **state)
{
    /* Defaults: 2 GiB of address space, 1 GiB files. Even a worker that
     * runs as root must not get them back. */
    h_expect_cell(S, "sandbox_rlimits_cannot_be_raised",
                  "(['ValueError', 'ValueError', 'ValueError'], (2147483648, 2147483648), "
                  "(1073741824, 1073741824))",
                  "");
}

static void test_host_memory_cannot_be_opened(void **state)
{
    /* For a worker of an unprivileged host, which has the host's uid,
     * only the Landlock domain stands between a cell and the host's
     * memory. Its own maps, guarded by the same ptrace-mode check, stay
     * readable: the refusal is about the host. */
    char *code = host_pid_then("sandbox_host_memory");
    /* A worker of an unprivileged host that shares its user namespace
     * can open it but for Landlock (SECURITY.md, "Where a kernel lacks a
     * layer"). */
    if (geteuid() != 0 && !(ci_session_sandbox(S) & CI_SANDBOX_USERNS))
        h_require_layer(S, CI_SANDBOX_LANDLOCK);
    /* In a /proc of its own PID namespace, the host is not there. */
    h_expect(S, code,
             h_own_proc(S) ? "(['FileNotFoundError', 'FileNotFoundError'], True)"
                             : "(['PermissionError', 'PermissionError'], True)",
             "");
    free(code);
}

static void test_socketpair_and_asyncio_still_work(void **state)
{
    h_expect_cell(S, "sandbox_socketpair_and_asyncio", "(b'x', 'loop ran')", "");
}

static void test_io_uring_is_sandbox_violation(void **state)
{
    assert_violation("import ctypes\nctypes.CDLL(None).syscall(425, 1, 0)");
}

static void test_i386_syscall_is_sandbox_violation(void **state)
{
#if defined(__x86_64__)
    char *cell = h_cell("sandbox_i386_syscall");
    assert_violation(cell);
    free(cell);
#else
    h_skip_because("the i386 system call ABI is x86-64's only");
#endif
}

static void test_x32_syscall_is_sandbox_violation(void **state)
{
#if defined(__x86_64__)
    assert_violation("import ctypes\nctypes.CDLL(None).syscall(0x40000000 + 39)");
#else
    h_skip_because("the x32 system call ABI is x86-64's only");
#endif
}

/* ------------------------------------------------------------ credentials */

/* The value of the field @name ("Uid") of a /proc status text. */
static char *status_field(const char *st, const char *name)
{
    char *key = h_fmt("\n%s:\t", name);
    const char *p = strstr(st, key);
    if (!p)
        fail_msg("no %s in the worker's status", name);
    p += strlen(key);
    char *v = strndup(p, strcspn(p, "\n"));
    free(key);
    return v;
}

static void test_worker_runs_without_root_or_capabilities(void **state)
{
    char *path = h_fmt("/proc/%d/status", ci_session_pid(S));
    char *st = h_read_file(path, NULL);
    assert_non_null(st);
    static const char *const caps[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
    char *uid = status_field(st, "Uid"), *gid = status_field(st, "Gid");
    if (geteuid() == 0) {
        h_assert_str(uid, "65534\t65534\t65534\t65534");
        h_assert_str(gid, "65534\t65534\t65534\t65534");
        h_assert_contains(st, "\nGroups:\t \n");
        for (size_t i = 0; i < 5; i++) {
            char *v = status_field(st, caps[i]);
            if (strcmp(v, "0000000000000000") != 0)
                fail_msg("%s is %s in the worker of a root host", caps[i], v);
            free(v);
        }
    } else {
        /* Not root: the worker keeps our uid; its bounding set is empty
         * only if it got a user namespace, so it is not checked. */
        print_message("      not root: the switch to uid 65534 is not tested\n");
        char *want = h_fmt("%d\t%d\t%d\t%d", (int)getuid(), (int)getuid(), (int)getuid(),
                           (int)getuid());
        h_assert_str(uid, want);
        free(want);
        for (size_t i = 0; i < 5; i++) {
            char *v = status_field(st, caps[i]);
            if (i != 3 && strcmp(v, "0000000000000000") != 0)
                fail_msg("%s is %s in the worker", caps[i], v);
            free(v);
        }
    }
    h_expect(S, "import os\nos.getuid() != 0, os.geteuid() != 0", "(True, True)", "");
    free(uid);
    free(gid);
    free(st);
    free(path);
}

static void test_root_host_needs_a_root_the_worker_can_pass(void **state)
{
    if (geteuid() != 0) {
        h_skip_because("not root, so the worker keeps our uid");
    }
    /* 0700 and ours: uid 65534 cannot reach a session directory in it. */
    char *root = h_fmt("%s/private-root", tmp);
    assert_int_equal(mkdir(root, 0700), 0);
    ci_config *cfg = h_config(&(struct h_limits){.root = root});
    h_start_fails(cfg, CI_ESPAWN, "uid 65534 cannot reach its workspace");
    assert_int_equal(rmdir(root), 0); /* nothing left behind */
    ci_config_free(cfg);
    free(root);
}

/* In a forked root host: into a user namespace that maps only uid and
 * gid 0, as a container may, then a session. 0 if it failed as it must,
 * 77 if no user namespace could be made. No cmocka assertion here. */
static int session_where_only_root_is_mapped(void)
{
    static const char *const maps[][2] = {
        {"/proc/self/setgroups", "deny"},
        {"/proc/self/uid_map", "0 0 1\n"},
        {"/proc/self/gid_map", "0 0 1\n"},
    };
    if (unshare(CLONE_NEWUSER) != 0)
        return 77;
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) {
        int fd = open(maps[i][0], O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, maps[i][1], strlen(maps[i][1])) < 0) {
            fprintf(stderr, "%s: %s\n", maps[i][0], strerror(errno));
            return 30;
        }
        close(fd);
    }
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    if (!cfg || ci_config_set_workspace_root(cfg, tmp) != CI_OK)
        return 31;
    int rc = ci_session_new(&s, cfg);
    const char *msg = ci_session_errmsg(NULL);
    if (rc != CI_ESPAWN || !strstr(msg, "does not map it")) {
        fprintf(stderr, "where only root is mapped, ci_session_new gave %d: %s\n", rc, msg);
        return 32;
    }
    ci_config_free(cfg);
    return 0;
}

static void test_root_host_whose_namespace_maps_only_root_is_a_spawn_error(void **state)
{
    if (geteuid() != 0)
        h_skip_because("not root, so the worker keeps our uid");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(session_where_only_root_is_mapped());
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        h_skip_because("this process may not make a user namespace");
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ------------------------------------------------------------ filesystem */

/* The cell try_oserror, which defines try_(f) ('done', or the name of
 * the OSError f raised), then @lines and the cell @name; malloc'ed. */
static char *try_then_cell(const char *lines, const char *name)
{
    char *cell = h_cell(name);
    char *code = h_fmt("%s%s", lines, cell);
    char *both = h_cell_then("try_oserror", code);
    free(code);
    free(cell);
    return both;
}

/* What a cell meets on a host path that the worker's mount namespace
 * (if any) leaves out: nothing there; else Landlock's refusal. */
static const char *absent(void)
{
    return (ci_session_sandbox(S) & CI_SANDBOX_MNTNS) ? "FileNotFoundError" : "PermissionError";
}

static void test_cell_cannot_read_the_hosts_configuration(void **state)
{
    h_require_layer(S, CI_SANDBOX_LANDLOCK);
    /* /etc/passwd is world-readable: only Landlock (or its absence from
     * the mount namespace) refuses it. /etc itself is there either way. */
    const char *a = absent();
    char *want = h_fmt("['%s', '%s', '%s', '%s', 'PermissionError']", a, a, a, a);
    char *code = h_cells("try_oserror", "sandbox_read_host_configuration");
    h_expect(S, code, want, "");
    free(code);
    free(want);
}

static void test_cell_cannot_write_outside_its_directories(void **state)
{
    h_require_layer(S, CI_SANDBOX_LANDLOCK);
    /* /tmp is world-writable: only Landlock refuses it. */
    char *name = h_fmt("ci-escape-%d", (int)getpid());
    char *line = h_fmt("NAME = '%s'\n", name);
    char *code = try_then_cell(line, "sandbox_write_outside");
    free(line);
    /* The last four: the session directory itself has no rule, so what
     * is beside the three directories, and they themselves, stay put. In
     * the mount namespace /usr is a read-only mount (OSError, EROFS) and
     * /tmp the worker's own, still refused by Landlock; so is /usr where
     * the host's is read-only (a container's read-only root): the kernel
     * says EROFS before it asks Landlock. */
    const char *usr = (ci_session_sandbox(S) & CI_SANDBOX_MNTNS) ||
                              h_read_only("/usr/lib/python3/dist-packages")
                          ? "OSError"
                          : "PermissionError";
    char *want = h_fmt("['PermissionError', 'PermissionError', '%s', '%s', "
                       "'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError']",
                       usr, usr);
    h_expect(S, code, want, "");
    free(want);
    char *paths[] = {h_fmt("/tmp/%s", name), h_fmt("/usr/lib/python3/dist-packages/%s.py", name),
                     h_fmt("/usr/lib/python3/dist-packages/%s.pth", name)};
    for (size_t i = 0; i < 3; i++) {
        if (access(paths[i], F_OK) == 0)
            fail_msg("the cell created %s", paths[i]);
        free(paths[i]);
    }
    free(code);
    free(name);
}

/* 1 if uid 65534 (or we, when not root) can read @path, tried in a
 * forked child: what file modes alone allow. The answer comes through a
 * pipe: under make valgrind a forked child's exit status is valgrind's,
 * whose leak check at its _exit can miss pointers the parent still holds
 * in registers. */
static int readable_by_the_workers_uid(const char *path)
{
    int fds[2];
    char answer = 0;
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
                               setresuid(65534, 65534, 65534) != 0))
            _exit(2);
        char yes = open(path, O_RDONLY) >= 0 ? 'y' : 'n';
        _exit(write(fds[1], &yes, 1) == 1 ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], &answer, 1);
    close(fds[0]);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    return n == 1 && answer == 'y';
}

static void test_cell_cannot_read_a_world_readable_file_outside(void **state)
{
    h_require_layer(S, CI_SANDBOX_LANDLOCK);
    char *dir = h_fmt("%s/world-readable", tmp);
    char *file = h_fmt("%s/canary.txt", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(chmod(dir, 0755), 0);
    h_write_file(file, "world-readable canary", 21);
    assert_int_equal(chmod(file, 0644), 0);
    /* The modes let the worker's uid in: only Landlock can stop it. */
    assert_true(readable_by_the_workers_uid(file));
    char *line = h_fmt("import os\n"
                       "[try_(lambda: open('%s').read()), try_(lambda: os.listdir('%s'))]",
                       file, dir);
    char *code = h_cell_then("try_oserror", line);
    free(line);
    char *want = h_fmt("['%s', '%s']", absent(), absent());
    h_expect(S, code, want, "");
    free(want);
    free(code);
    free(file);
    free(dir);
}

static void test_cell_cannot_read_the_hosts_proc_entries(void **state)
{
    h_require_layer(S, CI_SANDBOX_LANDLOCK);
    /* cmdline is world-readable; environ would leak the host's secrets.
     * The worker's own entries stay readable. */
    char *line = h_fmt("HOST_PID = %d\n", (int)getpid());
    char *code = try_then_cell(line, "sandbox_read_host_proc");
    free(line);
    /* In a /proc of its own PID namespace, the host is not there, and
     * pid 1 is the worker. In the host's /proc, pid 1 is the host's init;
     * so is the worker's own pid 1 of a PID namespace whose proc the
     * kernel refused (the 7th). */
    h_expect(S, code,
             h_own_proc(S)   ? "['FileNotFoundError', 'FileNotFoundError', 'FileNotFoundError', "
                               "'FileNotFoundError', 'done', 'done', 'done', 'done']"
             : pid_namespace() ? "['PermissionError', 'PermissionError', 'PermissionError', "
                                 "'PermissionError', 'PermissionError', 'done', 'PermissionError', "
                                 "'done']"
                               : "['PermissionError', 'PermissionError', 'PermissionError', "
                                 "'PermissionError', 'PermissionError', 'done', 'done', 'done']",
             "");
    free(code);
}

static void test_own_proc_entries_survive_dentry_eviction(void **state)
{
    /* The rule for /proc/<pid> names an inode; procfs builds a new one
     * when the unused dentry is evicted, unless the host pins it. */
    h_require_layer(S, CI_SANDBOX_LANDLOCK);
    if (geteuid() != 0) {
        h_skip_because("dropping the kernel's caches needs root");
    }
    h_expect(S, "len(open('/proc/self/status').read()) > 0", "True", "");
    /* Thrice: a recently used dentry survives a pass (its second chance
     * on the LRU). */
    sync();
    for (int i = 0; i < 3; i++) {
        int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "2", 1), 1);
        close(fd);
    }
    h_expect(S, "len(open('/proc/self/status').read()) > 0", "True", "");
}

static void test_cell_cannot_make_links_fifos_or_devices(void **state)
{
    h_require_layer(S, CI_SANDBOX_LANDLOCK);
    /* symlink is allowed by the seccomp filter: Landlock refuses it.
     * (mknod is refused by both.) */
    char *code = h_cells("try_oserror", "sandbox_links_fifos_devices");
    h_expect(S, code,
             "(['PermissionError', 'PermissionError', 'PermissionError', 'PermissionError', "
             "'PermissionError', 'PermissionError', 'PermissionError', 'PermissionError'], [])",
             "");
    free(code);
}

static void test_cell_works_in_its_workspace_and_tmpdir(void **state)
{
    /* Everything a cell does with its own files, in both directories
     * and between them (Landlock's REFER). */
    h_expect_cell(S, "sandbox_workspace_and_tmpdir_work",
                  "(['hell', 'hell', 'hellhell', ['x'], 7], [])", "");
}

/* ------------------------------------------------------------ namespaces */

static void test_network_namespace_has_only_loopback(void **state)
{
    h_require_layer(S, CI_SANDBOX_NETNS);
    /* /proc/self/net is the reader's network namespace. A loopback that
     * is up would have ::1 (if_inet6, absent without IPv6) and a local
     * route to 127.0.0.1 (fib_trie). */
    h_expect_cell(S, "sandbox_netns_only_loopback", "(['lo'], '', False)", "");
}

static void test_namespaces_are_the_workers_own(void **state)
{
    static const struct {
        const char *name;
        unsigned layer;
    } ns[] = {{"user", CI_SANDBOX_USERNS},
              {"net", CI_SANDBOX_NETNS},
              {"ipc", CI_SANDBOX_IPCNS},
              {"uts", CI_SANDBOX_UTSNS},
              {"pid", CI_SANDBOX_PIDNS}};
    unsigned layers = ci_session_sandbox(S);
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        char *path = h_fmt("/proc/self/ns/%s", ns[i].name), mine[128];
        ssize_t n = readlink(path, mine, sizeof mine - 1);
        assert_true(n > 0);
        mine[n] = '\0';
        char *code = h_fmt("import os\nos.readlink('%s')", path);
        ci_result *r = h_run_status(S, code, CI_STATUS_OK);
        const char *theirs = ci_result_value(r);
        assert_non_null(theirs);
        /* The value is the repr: 'net:[4026531840]'. */
        int same = strlen(theirs) == (size_t)n + 2 && memcmp(theirs + 1, mine, (size_t)n) == 0;
        if (same == !!(layers & ns[i].layer))
            fail_msg("%s namespace: worker %s, host %s, layer %s", ns[i].name, theirs, mine,
                     layers & ns[i].layer ? "reported" : "not reported");
        ci_result_free(r);
        free(code);
        free(path);
    }
}

static void test_proc_shows_only_the_workers_pid_namespace(void **state)
{
    h_require_layer(S, CI_SANDBOX_PIDNS);
    /* The host sees the worker by its own pid, and the worker is pid 1
     * of its namespace. */
    char *path = h_fmt("/proc/%d/status", ci_session_pid(S));
    char *st = h_read_file(path, NULL);
    assert_non_null(st);
    char *want = h_fmt("\nNSpid:\t%d\t1\n", ci_session_pid(S));
    h_assert_contains(st, want);
    free(want);
    free(st);
    free(path);
    h_expect(S, "import os\nos.getpid()", "1", "");
    /* Landlock keeps a cell's reads to /proc/self, but not stat(2): the
     * host's pid and the machine's files would be seen there in the
     * host's /proc. Ours is pid 1, and subset=pid leaves out the rest. */
    if (!h_has_layer(S, CI_SANDBOX_MNTNS, "the worker's own /proc"))
        return;
    if (!h_own_proc(S)) {
        /* The kernel refused a new proc instance: the host's /proc, as
         * without the PID namespace (include/codeinterp.h says so). */
        h_skip_part_because("a /proc of the worker's PID namespace, which this kernel refuses "
                            "to mount here (probed; a container's /proc): the worker has the "
                            "host's");
        want = h_fmt("'%d'", ci_session_pid(S));
        h_expect(S, "import os\nos.readlink('/proc/self')", want, "");
        free(want);
        return;
    }
    char *code = h_fmt("import os\n(os.readlink('/proc/self'), os.path.exists('/proc/%d'),\n"
                       " os.path.exists('/proc/1/status'), os.path.exists('/proc/meminfo'))",
                       (int)getpid());
    h_expect(S, code, "('1', False, True, False)", "");
    free(code);
}

static void test_command_line_does_not_name_the_host(void **state)
{
    /* The worker's options (--parent <host pid>) are wiped once parsed:
     * only its path is left in /proc/self/cmdline. */
    char *code = h_fmt("a = open('/proc/self/cmdline', 'rb').read()\n"
                       "len(a.rstrip(b'\\0').split(b'\\0')), b'%d' in a",
                       (int)getpid());
    h_expect(S, code, "(1, False)", "");
    free(code);
}

static void test_a_signal_between_cells_is_told_at_the_next_run(void **state)
{
    /* An alarm the cell set ends the worker after the cell did: the next
     * run reports that death, not a protocol error, and runs nothing. */
    h_expect(S, "import signal\nsignal.alarm(1)\n'set'", "'set'", "");
    usleep(1500 * 1000);
    ci_result *r = h_run_status(S, "'never runs'", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    h_assert_contains(ci_result_error_value(r), "SIGALRM");
    ci_result_free(r);
    assert_int_equal(ci_session_restart(S), CI_OK);
}

/* ------------------------------------------------------- host death */

static const char *self_exe;

/* The --host-then-die mode: start a session, tell the parent the worker's
 * pid through @fd, then wait to be killed. */
static int host_then_die(int fd)
{
    ci_session *s = NULL;
    if (ci_session_new(&s, NULL) != CI_OK)
        return 1;
    int pid = ci_session_pid(s);
    if (write(fd, &pid, sizeof pid) != (ssize_t)sizeof pid)
        return 1;
    for (;;)
        pause();
}

/* 'Z' for a zombie, 0 when the process is gone. */
static char proc_state(int pid)
{
    char st;
    int ppid, sid;
    return h_proc_stat(pid, &st, &ppid, &sid) ? st : 0;
}

static void test_worker_dies_with_its_host(void **state)
{
    /* The dead host cannot remove its session directory: keep it under a
     * root of the test's own, removed below. */
    char *root = h_tmpdir();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t host = fork();
    assert_true(host >= 0);
    if (host == 0) {
        close(fds[0]);
        setenv("TMPDIR", root, 1);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", fds[1]);
        execl(self_exe, self_exe, "--host-then-die", arg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    int worker = -1;
    ssize_t n = read(fds[0], &worker, sizeof worker);
    close(fds[0]);
    if (n != (ssize_t)sizeof worker) {
        kill(host, SIGKILL);
        waitpid(host, NULL, 0);
        fail_msg("the helper host did not start a session");
    }
    assert_true(worker > 0);
    assert_int_not_equal(proc_state(worker), 0);

    assert_int_equal(kill(host, SIGKILL), 0);
    assert_int_equal(waitpid(host, NULL, 0), host);

    int64_t t0 = h_now_ms();
    char st;
    while ((st = proc_state(worker)) != 0 && st != 'Z' && h_now_ms() - t0 < 10000)
        usleep(20 * 1000);
    if (st != 0 && st != 'Z') {
        kill(worker, SIGKILL);
        fail_msg("worker %d still running (state %c) 10 s after its host died", worker, st);
    }
    /* The next host's session under that root removes what the dead one
     * left, its disk quota's tmpfs included. */
    ci_session_free(h_session(&(struct h_limits){.root = root}));
    char *left = h_dir_names(root), *mounts = h_read_file("/proc/self/mountinfo", NULL);
    h_assert_str(left, "");
    if (strstr(mounts, root))
        fail_msg("the dead host's session tmpfs under %s is still mounted", root);
    free(mounts);
    free(left);
    h_rmtree(root);
    free(root);
}

/* ----------------------------------------------------------- the process */

static void test_worker_is_our_child_in_its_own_session(void **state)
{
    int pid = ci_session_pid(S);
    char *path = h_fmt("/proc/%d/status", pid);
    char *st = h_read_file(path, NULL);
    assert_non_null(st);
    char *want = h_fmt("\nPPid:\t%d\n", (int)getpid());
    h_assert_contains(st, want);
    assert_int_equal(getsid(pid), pid);
    assert_int_equal(getpgid(pid), pid);
    free(want);
    free(st);
    free(path);
}

static void test_cell_sees_its_parent_is_the_host(void **state)
{
    /* Or, as pid 1 of its own PID namespace, no parent in it: neither
     * our pid nor its own host-side one is to be seen from inside. */
    char *want = ci_session_sandbox(S) & CI_SANDBOX_PIDNS
                     ? h_fmt("(1, 0)")
                     : h_fmt("(%d, %d)", ci_session_pid(S), (int)getpid());
    h_expect(S, "import os\nos.getpid(), os.getppid()", want, "");
    free(want);
}

/* ------------------------------------------ messages a model can act on */

/* Runs @code; asserts it raised @name (or @alt, if not NULL) with exactly
 * @message, and that the session goes on. */
static void expect_policy_error(const char *code, const char *name, const char *alt,
                                const char *message)
{
    ci_result *r = h_run_status(S, code, CI_STATUS_ERROR);
    const char *n = ci_result_error_name(r);
    if (!n || (strcmp(n, name) != 0 && (!alt || strcmp(n, alt) != 0))) {
        h_dump(r);
        fail_msg("raised %s, expected %s", n ? n : "(null)", name);
    }
    h_assert_str(ci_result_error_value(r), message);
    h_assert_contains(ci_result_traceback(r), message);
    /* The hook raises from inside the cell's call; its frame is the
     * worker's own and must not show. */
    h_assert_not_contains(ci_result_traceback(r), "<codeinterp>");
    ci_result_free(r);
    h_expect(S, "'still here'", "'still here'", "");
}

static void test_blocked_actions_raise_messages_naming_the_policy(void **state)
{
    const char *net = "network access is disabled in this sandbox";
    const char *proc =
        "creating processes is disabled in this sandbox (subprocess, os.system, os.fork)";
    char *ws = h_worker_string(S, "import os\nos.getcwd()");
    char *tmpdir = h_worker_string(S, "import os\nos.environ['TMPDIR']");
    char *home = h_worker_string(S, "import os\nos.environ['HOME']");
    char *write = h_fmt("this sandbox can only write inside the session workspace (%s), "
                        "TMPDIR (%s) and HOME (%s)", ws, tmpdir, home);

    expect_policy_error("import socket\nsocket.socket()", "PermissionError", NULL, net);
    expect_policy_error("import socket\nsocket.create_connection(('127.0.0.1', 9))",
                        "PermissionError", NULL, net);
    expect_policy_error("import subprocess\nsubprocess.run(['true'])", "PermissionError",
                        NULL, proc);
    expect_policy_error("import os\nos.fork()", "PermissionError", NULL, proc);
    char *kill_host = h_fmt("import os\nos.kill(%d, 0)", (int)getpid());
    expect_policy_error(kill_host, "PermissionError", NULL,
                        "sending signals to other processes is disabled in this sandbox");
    free(kill_host);
    /* Landlock refuses /etc/passwd; a mount namespace hides it. */
    if ((ci_session_sandbox(S) & CI_SANDBOX_MNTNS) ||
        h_has_layer(S, CI_SANDBOX_LANDLOCK, "the refused read of /etc/passwd"))
        expect_policy_error("open('/etc/passwd')", "PermissionError", "FileNotFoundError",
                            "this sandbox can only read the session directories and the Python "
                            "installation; /etc/passwd is outside them");
    /* Only Landlock refuses /tmp, which is world-writable. */
    if (h_has_layer(S, CI_SANDBOX_LANDLOCK, "the refused write to /tmp"))
        expect_policy_error("open('/tmp/x', 'w')", "PermissionError", NULL, write);
    expect_policy_error("import os\nos.symlink('a', 'b')", "PermissionError", NULL,
                        "creating symbolic links is disabled in this sandbox; copy the file "
                        "instead (shutil.copy)");
    /* Inside the session, the kernel's own message stays. */
    h_expect_error(S, "open('no such file')", "FileNotFoundError",
                   "[Errno 2] No such file or directory: 'no such file'");
    /* os.system keeps reporting a status; stderr says why. */
    ci_result *r = h_run_status(S, "import os\nos.system('true') != 0", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "True");
    h_assert_contains(ci_result_stderr(r, NULL), proc);
    ci_result_free(r);
    free(write);
    free(tmpdir);
    free(home);
    free(ws);
}

/* The messages are not the boundary: past the audit hook, through libc
 * by ctypes, the kernel still refuses each of those. */
static void test_kernel_refuses_with_the_audit_hook_bypassed(void **state)
{
    /* The write to /tmp is refused by Landlock alone: without it the
     * cell would make the file, so it is not tried. */
    int landlock = h_has_layer(S, CI_SANDBOX_LANDLOCK, "the refused open of /tmp");
    char *lines =
        h_fmt("HOST_PID = %d\nLANDLOCK = %s\n", (int)getpid(), landlock ? "True" : "False");
    char *cell = h_cell("sandbox_audit_hook_bypassed");
    char *code = h_fmt("%s%s", lines, cell);
    free(cell);
    free(lines);
    h_expect(S, code,
             landlock ? "['EPERM', 'EPERM', 'EPERM', 'EPERM', 'EACCES', False]"
                      : "['EPERM', 'EPERM', 'EPERM', 'EPERM']",
             "");
    free(code);
}

/* numpy, pandas and matplotlib open files all the time: the hook lets
 * them, and asyncio's socketpair still works. */
static void test_audit_hook_leaves_libraries_alone(void **state)
{
    h_expect_cell(S, "sandbox_libraries_under_audit_hook", "(3, b'x')", "");
}

/* ------------------------------------------------------ violations named */

/* Runs @code; asserts the worker was killed for the call @name. */
static void assert_named_violation(const char *code, const char *name)
{
    ci_result *r = h_run_status(S, code, CI_STATUS_KILLED);
    char *want = h_fmt("the cell made a forbidden system call (%s); the worker was killed", name);
    h_assert_str(ci_result_error_name(r), "SandboxViolation");
    h_assert_str(ci_result_error_value(r), want);
    free(want);
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), -1);
    assert_int_equal(ci_session_restart(S), CI_OK);
    h_expect(S, "'restarted'", "'restarted'", "");
}

static void test_violation_names_the_system_call(void **state)
{
    assert_named_violation("import ctypes\nctypes.CDLL(None).syscall(101, 0, 0, 0, 0)", "ptrace");
    assert_named_violation("import ctypes\nctypes.CDLL(None).syscall(272, 0)", "unshare");
    assert_named_violation("import ctypes\nctypes.CDLL(None).syscall(425, 1, 0)",
                           "io_uring_setup");
    assert_named_violation("import ctypes\nctypes.CDLL(None).syscall(321, 0, 0, 0)", "bpf");
    /* From a thread the cell started, too. */
    char *cell = h_cell("sandbox_violation_from_thread");
    assert_named_violation(cell, "ptrace");
    free(cell);
}

/* The warm-up runs before the lockdown, so what an earlier cell planted
 * for it (a matplotlibrc in the workspace, HOME or MPLCONFIGDIR) must not
 * reach it: it runs from /, and a restart renews config/ and tmp/. */
static void test_warm_up_reads_nothing_a_cell_planted(void **state)
{
    h_expect_cell(S, "sandbox_warm_up_plant_matplotlibrc", "33.0", "");
    assert_int_equal(ci_session_restart(S), CI_OK);
    h_expect_cell(S, "sandbox_warm_up_after_restart", "(100.0, True, False, [])", "");
}

/* A cell cannot replace the handler (rt_sigaction on SIGSYS is refused,
 * high bits or not), and blocking SIGSYS does not save it: the kernel
 * unblocks the signal it forces, and the worker still dies by it. */
static void test_cell_cannot_escape_a_violation_by_its_signal_handling(void **state)
{
    h_expect_cell(S, "sandbox_sigsys_handler_refused",
                  "('EPERM', -1, 'EPERM', <Handlers.SIG_DFL: 0>)", "");
    char *cell = h_cell("sandbox_violation_with_sigsys_blocked");
    ci_result *r = h_run_status(S, cell, CI_STATUS_KILLED);
    free(cell);
    h_assert_str(ci_result_error_name(r), "SandboxViolation");
    ci_result_free(r);
    assert_int_equal(ci_session_restart(S), CI_OK);
    /* With the handler's stack taken away the signal cannot be delivered:
     * the kernel kills the worker (by SIGSEGV) all the same. */
    cell = h_cell("sandbox_violation_without_altstack");
    r = h_run_status(S, cell, CI_STATUS_KILLED);
    free(cell);
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_restart(S), CI_OK);
}

/* ------------------------------------------------ the mount namespace */

/* The first component of @path (absolute), e.g. "tmp" of "/tmp/a/b". */
static char *first_component(const char *path)
{
    const char *end = strchr(path + 1, '/');
    return h_fmt("%.*s", (int)(end ? end - path - 1 : (long)strlen(path + 1)), path + 1);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* @names sorted, without duplicates, joined by spaces. */
static char *sorted_names(const char **names, size_t n)
{
    qsort(names, n, sizeof *names, cmp_names);
    char *out = h_fmt("%s", "");
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
            continue;
        char *next = h_fmt("%s%s%s", out, *out ? " " : "", names[i]);
        free(out);
        out = next;
    }
    return out;
}

static void test_mount_namespace_root_holds_only_what_python_needs(void **state)
{
    h_require_layer(S, CI_SANDBOX_MNTNS);
    if (geteuid() != 0) {
        h_skip_because("only root may look into /proc/<pid>/root of the worker");
    }
    int pid = ci_session_pid(S);
    struct stat st;
    /* The top level: what the host has of these, plus where the session is. */
    static const char *const top[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
    const char *want_top[16];
    size_t n = 0;
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) {
        char *path = h_fmt("/%s", top[i]);
        if (lstat(path, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
            want_top[n++] = top[i];
        free(path);
    }
    char *session_top = first_component(ci_session_workspace(S));
    want_top[n++] = "dev";
    want_top[n++] = "etc";
    want_top[n++] = "proc";
    want_top[n++] = "sys";
    want_top[n++] = "tmp";
    want_top[n++] = "usr";
    want_top[n++] = session_top;
    char *want = sorted_names(want_top, n);
    char *root = h_fmt("/proc/%d/root", pid);
    char *got = h_dir_names(root);
    h_assert_str(got, want);
    free(got);
    free(want);

    /* /etc: the files the Landlock rules allow, and the three directories
     * the warm-up reads, as far as the host has them. */
    static const char *const etc[] = {"ld.so.cache", "localtime", "matplotlibrc", "mime.types",
                                      "alternatives", "fonts", "python3.11"};
    const char *want_etc[16];
    n = 0;
    for (size_t i = 0; i < sizeof etc / sizeof *etc; i++) {
        char *path = h_fmt("/etc/%s", etc[i]);
        if (stat(path, &st) == 0)
            want_etc[n++] = etc[i];
        free(path);
    }
    want = sorted_names(want_etc, n);
    char *path = h_fmt("%s/etc", root);
    got = h_dir_names(path);
    h_assert_str(got, want);
    free(got);
    free(want);
    free(path);

    path = h_fmt("%s/dev", root);
    got = h_dir_names(path);
    h_assert_str(got, "null random urandom zero");
    free(got);
    free(path);

    /* The root is a read-only tmpfs (pivot_root happened, the old root
     * is gone), /usr a read-only mount. */
    path = h_fmt("/proc/%d/mountinfo", pid);
    char *info = h_read_file(path, NULL);
    int root_seen = 0, usr_seen = 0, session_seen = 0;
    /* The session directory once, at its own path: the host's name of it
     * has no links here, so no second name is bound. */
    char *session = strdup(ci_session_workspace(S));
    *strrchr(session, '/') = '\0';
    for (char *line = strtok(info, "\n"); line; line = strtok(NULL, "\n")) {
        char mnt[4096], opts[256];
        if (sscanf(line, "%*s %*s %*s %*s %4095s %255s", mnt, opts) != 2)
            continue;
        if (strstr(mnt, "/codeinterp-")) {
            const char *where = mnt;
            session_seen++;
            h_assert_str(where, session);
        }
        if (strcmp(mnt, "/") == 0) {
            root_seen++;
            assert_non_null(strstr(line, " - tmpfs "));
            assert_true(strncmp(opts, "ro,", 3) == 0);
        } else if (strcmp(mnt, "/usr") == 0) {
            usr_seen++;
            assert_true(strncmp(opts, "ro,", 3) == 0);
        }
    }
    assert_int_equal(root_seen, 1);
    assert_int_equal(usr_seen, 1);
    assert_int_equal(session_seen, 1);
    free(session);
    free(info);
    free(path);
    free(root);
    free(session_top);
}

static void test_host_files_do_not_exist_for_a_cell(void **state)
{
    h_require_layer(S, CI_SANDBOX_MNTNS);
    /* stat needs no Landlock right: only the mount namespace hides these. */
    h_expect_cell(S, "sandbox_host_files_absent",
                  "['FileNotFoundError', 'FileNotFoundError', 'FileNotFoundError', "
                  "'FileNotFoundError', 'FileNotFoundError', 'FileNotFoundError', "
                  "'FileNotFoundError', 'there', 'there']",
                  "");
    /* The workspace is at the same path, and so are HOME and TMPDIR. */
    h_expect(S, "import os\nall(os.path.isdir(os.environ[v]) for v in ('HOME', 'TMPDIR', 'MPLCONFIGDIR'))",
             "True", "");
    char *want = h_fmt("'%s'", ci_session_workspace(S));
    h_expect(S, "import os\nos.getcwd()", want, "");
    free(want);
}

/*
 * Creates @path (under /proc/PID/root of a worker) as the worker's uid,
 * from a child of ours. A zygote's child owns its mounts through its own
 * user namespace, where our uid 0 has no mapping (the kernel refuses to
 * create a file whose owner it cannot map, EOVERFLOW); its uid, 65534,
 * is mapped there. setfsuid keeps CAP_SYS_PTRACE, which /proc/PID/root
 * needs, and /tmp is mode 1777 either way.
 */
static void write_as_worker(const char *path, const char *text)
{
    pid_t pid = fork();
    int st = 0;
    assert_true(pid >= 0);
    if (pid == 0) {
        setfsgid(CI_WORKER_GID);
        setfsuid(CI_WORKER_UID);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        _exit(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("could not create %s as uid %u", path, CI_WORKER_UID);
}

static void test_tmp_is_private_to_the_worker(void **state)
{
    h_require_layer(S, CI_SANDBOX_MNTNS);
    /* A file in the host's /tmp is not in the worker's. */
    char *name = h_fmt("ci-mntns-probe-%d", (int)getpid());
    char *host_file = h_fmt("/tmp/%s", name);
    h_write_file(host_file, "host", 4);
    char *code = h_fmt("import os\nos.path.lexists('/tmp/%s')", name);
    h_expect(S, code, "False", "");
    free(code);
    /* A cell cannot write there (Landlock; without it, it writes its
     * own tmpfs), and nothing of it reaches the host's /tmp. */
    char *cell = h_cell("sandbox_write_worker_tmp");
    code = h_fmt("NAME = '%s'\n%s", name, cell);
    free(cell);
    h_expect(S, code,
             h_has_layer(S, CI_SANDBOX_LANDLOCK, "the refused write to the worker's /tmp")
                 ? "'PermissionError'"
                 : "'written'",
             "");
    free(code);
    char *cell_file = h_fmt("/tmp/%s-cell", name);
    assert_int_equal(access(cell_file, F_OK), -1);
    if (geteuid() == 0) {
        /* The worker's /tmp is another filesystem; what is put in it is
         * seen there only, and goes with the worker. */
        int pid = ci_session_pid(S);
        char *inside = h_fmt("/proc/%d/root/tmp/%s-inside", pid, name);
        struct stat host_tmp, worker_tmp;
        char *worker_tmp_path = h_fmt("/proc/%d/root/tmp", pid);
        assert_int_equal(stat("/tmp", &host_tmp), 0);
        assert_int_equal(stat(worker_tmp_path, &worker_tmp), 0);
        assert_true(host_tmp.st_dev != worker_tmp.st_dev);
        write_as_worker(inside, "inside");
        code = h_fmt("import os\nos.path.exists('/tmp/%s-inside')", name);
        h_expect(S, code, "True", "");
        char *outside = h_fmt("/tmp/%s-inside", name);
        assert_int_equal(access(outside, F_OK), -1);
        assert_int_equal(ci_session_restart(S), CI_OK);
        h_expect(S, code, "False", "");
        free(outside);
        free(code);
        free(worker_tmp_path);
        free(inside);
    }
    unlink(host_file);
    free(cell_file);
    free(host_file);
    free(name);
}

int main(int argc, char **argv)
{
    h_watchdog(120);
    if (argc == 3 && strcmp(argv[1], "--host-then-die") == 0)
        return host_then_die(atoi(argv[2]));
    self_exe = "/proc/self/exe";
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        self_exe = exe;
    }

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_only_descriptors_0_to_3_are_open, h_setup_alive),
        cmocka_unit_test_setup(test_subprocess_is_refused, h_setup_alive),
        cmocka_unit_test_setup(test_os_system_does_not_run_the_command, h_setup_alive),
        cmocka_unit_test_setup(test_fork_is_refused, h_setup_alive),
        cmocka_unit_test_setup(test_multiprocessing_is_refused, h_setup_alive),
        cmocka_unit_test_setup(test_socket_is_refused, h_setup_alive),
        cmocka_unit_test_setup(test_unix_and_udp_sockets_are_refused, h_setup_alive),
        cmocka_unit_test_setup(test_host_environment_does_not_reach_the_worker, h_setup_alive),
        cmocka_unit_test_setup(test_worker_environ_seen_from_host_has_no_canary, h_setup_alive),
        cmocka_unit_test_setup(test_sandbox_reports_the_layers_this_kernel_has, h_setup_alive),
        cmocka_unit_test(test_worker_where_mounts_are_refused_goes_without_its_root),
        cmocka_unit_test_setup(test_worker_runs_without_root_or_capabilities, h_setup_alive),
        cmocka_unit_test_setup(test_warm_up_reads_nothing_a_cell_planted, h_setup_alive),
        cmocka_unit_test(test_root_host_needs_a_root_the_worker_can_pass),
        cmocka_unit_test(test_root_host_whose_namespace_maps_only_root_is_a_spawn_error),
        cmocka_unit_test_setup(test_cell_cannot_read_the_hosts_configuration, h_setup_alive),
        cmocka_unit_test_setup(test_cell_cannot_write_outside_its_directories, h_setup_alive),
        cmocka_unit_test_setup(test_cell_cannot_read_a_world_readable_file_outside, h_setup_alive),
        cmocka_unit_test_setup(test_cell_cannot_read_the_hosts_proc_entries, h_setup_alive),
        cmocka_unit_test_setup(test_own_proc_entries_survive_dentry_eviction, h_setup_alive),
        cmocka_unit_test_setup(test_cell_cannot_make_links_fifos_or_devices, h_setup_alive),
        cmocka_unit_test_setup(test_cell_works_in_its_workspace_and_tmpdir, h_setup_alive),
        cmocka_unit_test_setup(test_network_namespace_has_only_loopback, h_setup_alive),
        cmocka_unit_test_setup(test_namespaces_are_the_workers_own, h_setup_alive),
        cmocka_unit_test_setup(test_proc_shows_only_the_workers_pid_namespace, h_setup_alive),
        cmocka_unit_test_setup(test_command_line_does_not_name_the_host, h_setup_alive),
        cmocka_unit_test_setup(test_a_signal_between_cells_is_told_at_the_next_run, h_setup_alive),
        cmocka_unit_test_setup(test_every_thread_has_seccomp_and_no_new_privs, h_setup_alive),
        cmocka_unit_test_setup(test_threads_started_by_a_cell_are_locked_too, h_setup_alive),
        cmocka_unit_test_setup(test_worker_is_our_child_in_its_own_session, h_setup_alive),
        cmocka_unit_test_setup(test_cell_sees_its_parent_is_the_host, h_setup_alive),
        cmocka_unit_test_setup(test_refused_calls_fail_with_eperm_from_the_filter, h_setup_alive),
        cmocka_unit_test_setup(test_signals_reach_only_the_worker_itself, h_setup_alive),
        cmocka_unit_test_setup(test_dangerous_ioctl_and_fcntl_are_refused, h_setup_alive),
        cmocka_unit_test_setup(test_dumpable_cannot_be_turned_back_on, h_setup_alive),
        cmocka_unit_test_setup(test_resource_limits_cannot_be_raised, h_setup_alive),
        cmocka_unit_test_setup(test_host_memory_cannot_be_opened, h_setup_alive),
        cmocka_unit_test_setup(test_socketpair_and_asyncio_still_work, h_setup_alive),
        cmocka_unit_test(test_worker_dies_with_its_host),
        /* These kill the worker; the setup restarts it for the next. */
        cmocka_unit_test_setup(test_kill_listed_syscall_is_sandbox_violation, h_setup_alive),
        cmocka_unit_test_setup(test_ptrace_through_python_is_sandbox_violation, h_setup_alive),
        cmocka_unit_test_setup(test_io_uring_is_sandbox_violation, h_setup_alive),
        cmocka_unit_test_setup(test_i386_syscall_is_sandbox_violation, h_setup_alive),
        cmocka_unit_test_setup(test_x32_syscall_is_sandbox_violation, h_setup_alive),
        cmocka_unit_test_setup(test_blocked_actions_raise_messages_naming_the_policy, h_setup_alive),
        cmocka_unit_test_setup(test_kernel_refuses_with_the_audit_hook_bypassed, h_setup_alive),
        cmocka_unit_test_setup(test_audit_hook_leaves_libraries_alone, h_setup_alive),
        cmocka_unit_test_setup(test_violation_names_the_system_call, h_setup_alive),
        cmocka_unit_test_setup(test_cell_cannot_escape_a_violation_by_its_signal_handling, h_setup_alive),
        cmocka_unit_test_setup(test_mount_namespace_root_holds_only_what_python_needs, h_setup_alive),
        cmocka_unit_test_setup(test_host_files_do_not_exist_for_a_cell, h_setup_alive),
        cmocka_unit_test_setup(test_tmp_is_private_to_the_worker, h_setup_alive),
    };
    return cmocka_run_group_tests_name("sandbox", tests, group_setup, group_teardown);
}
