/*
 * /proc as a way out: the worker's own environ must hold none of the
 * host's secrets, and in the end state the worker reaches no other
 * process's /proc entries (the host's environ, mem, fd/, maps, cmdline,
 * cwd, root, status; a sentinel process of the test's), nor the machine's
 * knobs under /proc/sys, nor the filesystem through its own
 * /proc/self/root, nor the machine's memory and load (sysinfo(2) and
 * /proc's files for them).
 */
#include <stdint.h>
#include <sys/syscall.h>

#include "attack.h"

static ci_session *S;
static char *dir;          /* test-owned, 0755 */
static char *canary;       /* 0644 in dir, held open by the host */
static int canary_fd = -1; /* inheritable */
static pid_t sentinel = -1;
static const char *argv_secret;

static int group_setup(void **state)
{
    a_plant_heap_secret();
    dir = a_tmpdir(0755);
    canary = a_canary(dir, "proc-canary", 0644);
    canary_fd = open(canary, O_RDONLY);
    if (canary_fd < 0)
        return -1;
    if ((sentinel = a_sentinel_start()) < 0)
        return -1;
    return a_group_session(&S, NULL);
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    a_free_heap_secret();
    a_sentinel_stop(&sentinel);
    close(canary_fd);
    h_rmtree(dir);
    free(canary);
    free(dir);
    return 0;
}

/*
 * What keeps a cell out of other processes' entries. The world-readable
 * ones (cmdline, status, the listing of /proc): Landlock, or a /proc of
 * the worker's own PID namespace, which has no other process. The
 * ptrace-guarded ones (environ, mem, fd/, maps, cwd, root): besides,
 * the kernel's ptrace access check, which refuses a worker of another uid
 * (a root host's) or of another user namespace, but not an unprivileged
 * host's worker that shares its user namespace (SECURITY.md, "Where a
 * kernel lacks a layer"). Without them (test/probe.c agrees) the test is
 * skipped.
 */
#define require_guard(ptrace) require_guard_(__func__, (ptrace))
static void require_guard_(const char *test, int ptrace)
{
    if (h_own_proc(S) || h_layers_of(S, CI_SANDBOX_LANDLOCK))
        return;
    if (ptrace && (geteuid() == 0 || (ci_session_sandbox(S) & CI_SANDBOX_USERNS)))
        return;
    h_skip_because_(test, "needs Landlock or a /proc of the worker's own PID namespace%s, which "
                          "this kernel or container refuses (probed)",
                    ptrace ? " or a uid or user namespace other than this unprivileged host's"
                           : "");
}

/* The attack: reading @path (Python f-string, `ppid` (the host's pid)
 * and `os` at hand) with @how (of `p`, giving bytes) must fail. */
static void attack_read(const char *path, const char *how)
{
    free(a_cell);
    a_cell = h_fmt("import os\nppid = HOST_PID\np = f'%s'\ndata = %s\nlen(data) >= 0", path,
                   how);
    a_stopped(S, a_cell, A_OSERR "|ProcessLookupError");
}

/* ------------------------------------------------------ the worker's own */

static void test_own_environ_holds_no_host_secret(void **state)
{
    char *env = a_py_pair(getenv(A_ENV_NAME)), *name = a_py_pair(A_ENV_NAME);
    char *cell = h_cells("has", "proc_own_environ");
    a_cell = h_fmt("ENV_PAIR = %s\nNAME_PAIR = %s\n%s", env, name, cell);
    free(cell);
    a_expect_value(S, a_cell, "[False, False, False, False]",
                   "the host's secret variable is in the worker's environment");
    free(env);
    free(name);
}

/* ----------------------------------------------------------- the host's */

static void test_host_environ(void **state)
{
    require_guard(1);
    attack_read("/proc/{ppid}/environ", "open(p, 'rb').read()");
}

static void test_host_environ_through_its_task_directory(void **state)
{
    require_guard(1);
    attack_read("/proc/{ppid}/task/{ppid}/environ", "open(p, 'rb').read()");
}

static void test_host_mem_at_its_heap_secret(void **state)
{
    require_guard(1);
    char *pair = a_py_pair(a_heap_secret_copy);
    char *cell = h_cells("has", "proc_host_mem_at_its_heap_secret");
    a_cell = h_fmt("HEAP_ADDR = %llu\nHEAP_PAIR = %s\n%s",
                   (unsigned long long)(uintptr_t)a_heap_secret, pair, cell);
    free(cell);
    a_stopped(S, a_cell, A_OSERR);
    free(pair);
}

static void test_host_mem_write(void **state)
{
    require_guard(1);
    a_cell = h_fmt("import os\n"
                   "fd = os.open(f'/proc/{HOST_PID}/mem', os.O_WRONLY)\n"
                   "os.pwrite(fd, b'PWNED', %llu)",
                   (unsigned long long)(uintptr_t)a_heap_secret);
    a_stopped(S, a_cell, A_OSERR);
    a_assert_heap_secret_intact();
}

static void test_host_fd_directory_listing(void **state)
{
    require_guard(1);
    attack_read("/proc/{ppid}/fd", "repr(os.listdir(p)).encode()");
}

static void test_host_descriptor_reopened_through_proc(void **state)
{
    require_guard(1);
    /* The host holds a canary open: /proc/<host>/fd/N would reopen it. */
    int watch = a_watch(canary);
    char *path = h_fmt("/proc/{ppid}/fd/%d", canary_fd);
    attack_read(path, "open(p, 'rb').read()");
    a_assert_untouched(watch, canary);
    free(path);
}

static void test_host_maps(void **state)
{
    require_guard(1);
    attack_read("/proc/{ppid}/maps", "open(p, 'rb').read()");
}

static void test_host_cmdline(void **state)
{
    require_guard(0);
    char *pair = a_py_pair(argv_secret);
    char *tail = h_fmt("import os\nhas(open(f'/proc/{HOST_PID}/cmdline', 'rb').read(), %s)", pair);
    a_cell = h_cell_then("has", tail);
    free(tail);
    a_stopped(S, a_cell, A_OSERR);
    free(pair);
}

static void test_host_status(void **state)
{
    require_guard(0);
    attack_read("/proc/{ppid}/status", "open(p, 'rb').read()");
}

static void test_host_cwd_and_root(void **state)
{
    require_guard(1);
    /* The host's working directory, and / as the host sees it. */
    attack_read("/proc/{ppid}/cwd", "repr(os.listdir(p)).encode()");
    attack_read("/proc/{ppid}/root/etc", "repr(os.listdir(p)).encode()");
}

/* ---------------------------------------------------- other processes */

static void test_sentinel_process_cmdline(void **state)
{
    require_guard(0);
    char *path = h_fmt("/proc/%d/cmdline", (int)sentinel);
    attack_read(path, "open(p, 'rb').read()");
    free(path);
}

static void test_proc_listing_shows_no_other_process(void **state)
{
    require_guard(0);
    /* Refused, or (in a pid namespace) only the worker itself. */
    ci_result *r = h_run(S, "import os\n"
                            "len([p for p in os.listdir('/proc') "
                            "if p.isdigit() and int(p) != os.getpid()])");
    ci_status st = ci_result_status(r);
    const char *v = ci_result_value(r), *n = ci_result_error_name(r);
    if (st == CI_STATUS_OK && v && strcmp(v, "0") == 0) {
        ci_result_free(r);
        return;
    }
    if (st == CI_STATUS_ERROR && n && a_name_in(n, A_OSERR)) {
        ci_result_free(r);
        h_expect(S, "'still here'", "'still here'", NULL);
        return;
    }
    h_dump(r);
    fail_msg("ATTACK SUCCEEDED: the cell sees %s other processes in /proc", v ? v : "?");
}

/* ----------------------------------------------------- the machine's */

/* Opens the kernel knob @path for writing, never writes: a write would
 * change the whole machine. */
#define attack_knob(path) attack_knob_(__func__, (path))
static void attack_knob_(const char *test, const char *path)
{
    if (access(path, F_OK) != 0) /* nothing to attack */
        h_skip_because_(test, "this kernel has no %s", path);
    /* Root's, 0644: the modes refuse the worker's uid, unless that uid
     * is root's outside (a bubblewrap root whose one uid maps to it);
     * then Landlock, or the mount namespace's read-only proc of its own. */
    if (h_open_by_the_workers_uid(path, O_WRONLY) && !h_own_proc(S))
        h_require_layer_(test, S, CI_SANDBOX_LANDLOCK);
    free(a_cell);
    a_cell = h_fmt("import os\nos.close(os.open('%s', os.O_WRONLY))", path);
    a_stopped(S, a_cell, A_OSERR);
}

static void test_core_pattern_opened_for_writing(void **state)
{
    /* The program the kernel runs, as root, on every crash. */
    attack_knob("/proc/sys/kernel/core_pattern");
}

static void test_hostname_opened_for_writing(void **state)
{
    attack_knob("/proc/sys/kernel/hostname");
}

static void test_own_root_link_to_etc_passwd(void **state)
{
    /* The worker's own /proc entry is open to it; its root link must not
     * lead where paths cannot: to what Landlock refuses, or the mount
     * namespace leaves out. */
    h_require_layer(S, CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS);
    attack_read("/proc/self/root/etc/passwd", "open(p, 'rb').read()");
}

static void test_own_cwd_link_up_to_the_workspace_root(void **state)
{
    /* Landlock refuses the listing; without it, in the worker's mount
     * namespace, the workspace root holds its own session alone. */
    h_require_layer(S, CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS);
    if (h_has_layer(S, CI_SANDBOX_LANDLOCK, "the refused listing")) {
        attack_read("/proc/self/cwd/../..", "repr(os.listdir(p)).encode()");
        return;
    }
    const char *ws = ci_session_workspace(S);
    const char *end = ws + strlen(ws) - strlen("/workspace"), *start = end;
    while (start > ws && start[-1] != '/')
        start--;
    char *want = h_fmt("['%.*s']", (int)(end - start), start);
    a_expect_value(S, "import os\nos.listdir('/proc/self/cwd/../..')", want,
                   "the workspace root shows another session");
    free(want);
}

/* The machine's free memory, process count and load, which change with
 * what other sessions do (two sessions could signal each other through
 * them): sysinfo(2) is refused, and so are the /proc files that tell the
 * same. The figures glibc derives from sysinfo answer the session's own
 * memory limit, and sorting, which sizes its buffer by them, still works. */
static void test_machine_memory_and_load_through_sysinfo(void **state)
{
    char *cell = h_cells("sc", "proc_sysinfo");
    a_cell = h_fmt("SYS_SYSINFO = %d\n%s", SYS_sysinfo, cell);
    free(cell);
    a_stopped(S, a_cell, "PermissionError");
    char *cell1 = h_cell("proc_machine_figures_readable");
    a_expect_value(S, cell1, "[]", "the machine's figures in /proc were read");
    /* The default memory limit, 2 GiB, in pages. */
    char *cell2 = h_cell("proc_own_memory_figures_and_sorting");
    a_expect_value(S, cell2, "(True, True, True, True, True, True)",
                   "the session's own memory figures or sorting");
    free(cell2);
    free(cell1);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    argv_secret = a_argv_secret(argc, argv);
    const struct CMUnitTest tests[] = {
        A_TEST(test_own_environ_holds_no_host_secret),
        A_TEST(test_host_environ),
        A_TEST(test_host_environ_through_its_task_directory),
        A_TEST(test_host_mem_at_its_heap_secret),
        A_TEST(test_host_mem_write),
        A_TEST(test_host_fd_directory_listing),
        A_TEST(test_host_descriptor_reopened_through_proc),
        A_TEST(test_host_maps),
        A_TEST(test_host_cmdline),
        A_TEST(test_host_status),
        A_TEST(test_host_cwd_and_root),
        A_TEST(test_sentinel_process_cmdline),
        A_TEST(test_proc_listing_shows_no_other_process),
        A_TEST(test_core_pattern_opened_for_writing),
        A_TEST(test_hostname_opened_for_writing),
        A_TEST(test_own_root_link_to_etc_passwd),
        A_TEST(test_own_cwd_link_up_to_the_workspace_root),
        A_TEST(test_machine_memory_and_load_through_sysinfo),
    };
    return cmocka_run_group_tests_name("attacks: /proc", tests, group_setup, group_teardown);
}
