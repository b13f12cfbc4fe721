/*
 * Raw system calls through ctypes, aimed at the host process or at the
 * kernel's soft spots: ptrace, cross-process memory, io_uring, namespaces,
 * bpf, perf, keys, file handles, mounts, terminal injection, x32 numbers,
 * stealing descriptors, credentials, and the host's priority and limits.
 * Each is checked where it would land: the host's tracer, memory, terminal,
 * files, mounts, priority and limits.
 */
#include <pty.h>
#include <stdint.h>
#include <sys/resource.h>
#include <termios.h>

#include "attack.h"

static ci_session *S;
static char *dir;          /* test-owned, 0755 */
static char *canary;       /* 0644 in it */
static int canary_fd = -1; /* held open by the host, inheritable */
static int pty_master = -1, pty_slave = -1;
static char pty_name[64];

static int group_setup(void **state)
{
    a_plant_heap_secret();
    dir = a_tmpdir(0755);
    char text[64];
    a_secret_text(text, sizeof text, "syscalls-canary-", 8);
    canary = a_canary(dir, text, 0644);
    canary_fd = open(canary, O_RDONLY); /* inheritable on purpose */
    /* A terminal of the test's own, its slave side in raw mode so any byte
     * pushed into its input shows at once; anyone may open it. */
    pty_master = posix_openpt(O_RDWR | O_NOCTTY);
    if (canary_fd < 0 || pty_master < 0 || grantpt(pty_master) || unlockpt(pty_master) ||
        ptsname_r(pty_master, pty_name, sizeof pty_name))
        return -1;
    pty_slave = open(pty_name, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    struct termios t;
    if (pty_slave < 0 || tcgetattr(pty_slave, &t) != 0)
        return -1;
    cfmakeraw(&t);
    if (tcsetattr(pty_slave, TCSANOW, &t) != 0 || chmod(pty_name, 0666) != 0)
        return -1;
    return a_group_session(&S, NULL);
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    a_free_heap_secret();
    close(canary_fd);
    close(pty_slave);
    close(pty_master);
    h_rmtree(dir);
    free(canary);
    free(dir);
    return 0;
}

/* ------------------------------------------------------ the host process */

static void test_ptrace_attach_to_the_host(void **state)
{
    a_cell = h_cell_then("sc", "sc(101, 16, HOST_PID, 0, 0)"); /* PTRACE_ATTACH */
    a_stopped(S, a_cell, A_OSERR);
    assert_int_equal(a_self_status("TracerPid"), 0);
}

static void test_ptrace_seize_of_the_host(void **state)
{
    a_cell = h_cell_then("sc", "sc(101, 0x4206, HOST_PID, 0, 0)"); /* SEIZE */
    a_stopped(S, a_cell, A_OSERR);
    assert_int_equal(a_self_status("TracerPid"), 0);
}

/* @first, a line HEAP_ADDR = <the host's heap secret's address>, the
 * cell syscalls_host_heap_iovecs (local and remote iovecs over it), then
 * @tail; malloc'ed. */
static char *heap_cell(const char *first, const char *tail)
{
    char *iov = h_cell("syscalls_host_heap_iovecs");
    char *code = h_fmt("%s\nHEAP_ADDR = %llu\n%s\n%s", first,
                       (unsigned long long)(uintptr_t)a_heap_secret, iov, tail);
    free(iov);
    return code;
}

static void test_process_vm_readv_of_the_host_heap(void **state)
{
    char *first = h_cells("sc", "has"), *pair = a_py_pair(a_heap_secret_copy);
    char *tail = h_fmt("n = sc(310, HOST_PID, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)\n"
                       "has(buf.raw, %s)",
                       pair);
    a_cell = heap_cell(first, tail);
    a_stopped(S, a_cell, A_OSERR);
    free(tail);
    free(first);
    free(pair);
}

static void test_process_vm_writev_into_the_host_heap(void **state)
{
    char *first = h_cell("sc");
    a_cell = heap_cell(first,
                       "ctypes.memset(buf, 0x41, 64)\n"
                       "sc(311, HOST_PID, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)");
    a_stopped(S, a_cell, A_OSERR);
    a_assert_heap_secret_intact();
    free(first);
}

static void test_pidfd_getfd_steals_a_host_descriptor(void **state)
{
    /* pidfd_open(host) then pidfd_getfd(its canary descriptor): a copy of
     * a descriptor the host never meant to share. */
    int watch = a_watch(canary);
    char *cell = h_cells("sc", "syscalls_pidfd_getfd");
    a_cell = h_fmt("CANARY_FD = %d\n%s", canary_fd, cell);
    free(cell);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_untouched(watch, canary);
}

static void test_setpriority_of_the_host(void **state)
{
    errno = 0;
    int before = getpriority(PRIO_PROCESS, 0);
    assert_int_equal(errno, 0);
    a_stopped(S, "import os\nos.setpriority(os.PRIO_PROCESS, HOST_PID, 19)", A_OSERR);
    assert_int_equal(getpriority(PRIO_PROCESS, 0), before);
}

static void test_prlimit_of_the_host(void **state)
{
    struct rlimit before, after;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
    a_stopped(S, "import os, resource\n"
                 "resource.prlimit(HOST_PID, resource.RLIMIT_NOFILE, (4, 4))",
              A_OSERR);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &after), 0);
    assert_int_equal(after.rlim_cur, before.rlim_cur);
    assert_int_equal(after.rlim_max, before.rlim_max);
}

/* ------------------------------------------------------- the worker itself */

/* The owner of /proc/@pid/environ: root's while the process is not
 * dumpable, the process's own uid once it is. */
static uid_t proc_owner(int pid)
{
    char *p = h_fmt("/proc/%d/environ", pid);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    free(p);
    return st.st_uid;
}

static void test_prctl_set_dumpable_again(void **state)
{
    int pid = ci_session_pid(S);
    uid_t before = proc_owner(pid);
    a_cell = h_cell_then("sc", "sc(157, 4, 1, 0, 0, 0)"); /* PR_SET_DUMPABLE */
    a_stopped(S, a_cell, A_OSERR);
    if (ci_session_pid(S) == pid)
        assert_int_equal(proc_owner(pid), before);
}

/* The Uid: and Gid: lines of /proc/@pid/status. */
static char *creds(int pid)
{
    char *p = h_fmt("/proc/%d/status", pid);
    char *st = h_read_file(p, NULL);
    assert_non_null(st);
    char *u = strstr(st, "\nUid:"), *g = strstr(st, "\nGroups:");
    assert_true(u && g && g > u);
    char *out = h_fmt("%.*s", (int)(g - u), u);
    free(st);
    free(p);
    return out;
}

static void test_credentials_cannot_change(void **state)
{
    int pid = ci_session_pid(S);
    char *before = creds(pid);
    a_cell = h_cell("syscalls_credentials_to_root");
    a_stopped(S, a_cell, A_OSERR);
    if (ci_session_pid(S) == pid) {
        char *after = creds(pid);
        assert_string_equal(after, before);
        free(after);
    }
    free(before);
}

/* -------------------------------------------------- the kernel's soft spots */

static void test_io_uring_setup(void **state)
{
    a_cell = h_cell_then("sc", "params = (ctypes.c_uint8 * 120)()\n"
                               "sc(425, 8, ctypes.byref(params))");
    a_stopped(S, a_cell, A_OSERR);
}

static void test_unshare_user_and_mount_namespaces(void **state)
{
    a_cell = h_cell_then("sc", "sc(272, 0x10000000 | 0x00020000)");
    a_stopped(S, a_cell, A_OSERR);
}

static void test_setns_into_the_hosts_namespace(void **state)
{
    /* The host's mount namespace if the cell can open it, else its own. */
    a_cell = h_cells("sc", "syscalls_setns_into_the_hosts_namespace");
    a_stopped(S, a_cell, A_OSERR);
}

static void test_bpf_map_create(void **state)
{
    /* BPF_MAP_CREATE of an array map: 4-byte keys and values, 1 entry. */
    a_cell = h_cell_then("sc", "attr = (ctypes.c_uint32 * 32)(2, 4, 4, 1)\n"
                               "sc(321, 0, ctypes.byref(attr), ctypes.sizeof(attr))");
    a_stopped(S, a_cell, A_OSERR);
}

static void test_perf_event_open(void **state)
{
    /* A software cpu-clock counter on the host process. */
    a_cell = h_cells("sc", "syscalls_perf_event_open");
    a_stopped(S, a_cell, A_OSERR);
}

static void test_keyctl_reads_the_session_keyring(void **state)
{
    a_cell = h_cell_then("sc", "sc(250, 0, -3, 0)"); /* GET_KEYRING_ID, session */
    a_stopped(S, a_cell, A_OSERR);
}

static void test_open_by_handle_at_shocker(void **state)
{
    /* The Docker "shocker" escape: a file handle opened anywhere on the
     * filesystem, outside any path check. */
    a_cell = h_cells("sc", "syscalls_open_by_handle_at_shocker");
    a_stopped(S, a_cell, A_OSERR);
}

/* 1 if the host's mount table has a mount point ending in @tail. */
static int host_has_mount(const char *tail)
{
    char *mi = h_read_file("/proc/self/mountinfo", NULL);
    int found = mi && strstr(mi, tail) != NULL;
    free(mi);
    return found;
}

static void test_mount_tmpfs_over_the_workspace(void **state)
{
    char *name = h_fmt("ci-attack-mnt-%d", (int)getpid());
    char *tail = h_fmt("os.makedirs('%s', exist_ok=True)\n"
                       "sc(165, ctypes.c_char_p(b'none'), "
                       "ctypes.c_char_p(os.path.abspath('%s').encode()), "
                       "ctypes.c_char_p(b'tmpfs'), 0, 0)",
                       name, name);
    a_cell = h_cell_then("sc", tail);
    free(tail);
    a_stopped(S, a_cell, A_OSERR);
    if (host_has_mount(name))
        fail_msg("ATTACK SUCCEEDED: a tmpfs is mounted at %s in the host's namespace", name);
    free(name);
}

static void test_chroot_escape(void **state)
{
    a_cell = h_cell_then("sc", "os.makedirs('jail', exist_ok=True)\nos.chroot('jail')");
    a_stopped(S, a_cell, A_OSERR);
}

static void test_x32_openat_of_the_canary(void **state)
{
    /* openat by its x32 number: the filter must not take it for another
     * architecture's harmless call. */
    int watch = a_watch(canary);
    char *lit = a_pystr(canary);
    char *tail = h_fmt("fd = sc(0x40000000 | 257, -100, ctypes.c_char_p(%s.encode()), 0)\n"
                       "os.read(fd, 100)[:0]",
                       lit);
    a_cell = h_cell_then("sc", tail);
    free(tail);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_untouched(watch, canary);
    free(lit);
}

/* -------------------------------------------------------------- terminal */

/* Asserts nothing was pushed into the test's terminal. */
static void assert_no_terminal_input(void)
{
    char c;
    ssize_t n = read(pty_slave, &c, 1);
    if (n > 0)
        fail_msg("ATTACK SUCCEEDED: the cell typed 0x%02x into the test's terminal",
                 (unsigned char)c);
    assert_true(n < 0 && errno == EAGAIN);
}

static void test_tiocsti_into_a_terminal(void **state)
{
    char *lit = a_pystr(pty_name);
    a_cell = h_fmt("import fcntl, os, termios\n"
                   "fd = os.open(%s, os.O_RDWR | os.O_NOCTTY)\n"
                   "fcntl.ioctl(fd, termios.TIOCSTI, b'x')",
                   lit);
    a_stopped(S, a_cell, A_OSERR);
    assert_no_terminal_input();
    free(lit);
}

static void test_tiocsti_with_high_bits_set(void **state)
{
    /* The kernel reads the request's low 32 bits only. */
    char *lit = a_pystr(pty_name);
    char *cell = h_cells("sc", "syscalls_tiocsti_with_high_bits_set");
    a_cell = h_fmt("PTY = %s\n%s", lit, cell);
    free(cell);
    a_stopped(S, a_cell, A_OSERR);
    assert_no_terminal_input();
    free(lit);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    const struct CMUnitTest tests[] = {
        A_TEST(test_prctl_set_dumpable_again),
        A_TEST(test_credentials_cannot_change),
        A_TEST(test_setpriority_of_the_host),
        A_TEST(test_prlimit_of_the_host),
        A_TEST(test_pidfd_getfd_steals_a_host_descriptor),
        A_TEST(test_tiocsti_into_a_terminal),
        A_TEST(test_tiocsti_with_high_bits_set),
        A_TEST(test_ptrace_attach_to_the_host),
        A_TEST(test_ptrace_seize_of_the_host),
        A_TEST(test_process_vm_readv_of_the_host_heap),
        A_TEST(test_process_vm_writev_into_the_host_heap),
        A_TEST(test_io_uring_setup),
        A_TEST(test_unshare_user_and_mount_namespaces),
        A_TEST(test_setns_into_the_hosts_namespace),
        A_TEST(test_bpf_map_create),
        A_TEST(test_perf_event_open),
        A_TEST(test_keyctl_reads_the_session_keyring),
        A_TEST(test_open_by_handle_at_shocker),
        A_TEST(test_mount_tmpfs_over_the_workspace),
        A_TEST(test_chroot_escape),
        A_TEST(test_x32_openat_of_the_canary),
    };
    return cmocka_run_group_tests_name("attacks: raw system calls", tests, group_setup,
                                       group_teardown);
}
