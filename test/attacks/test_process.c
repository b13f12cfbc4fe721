/*
 * Attacks that start a new process, in every way Python and libc offer.
 * Each new program would leave a marker file in the workspace; the host
 * looks for the marker and for any process in the worker's session or
 * with the worker as parent.
 */
#include "attack.h"

static ci_session *S;

static int group_setup(void **state)
{
    return a_group_session(&S, &(struct h_limits){.timeout_ms = 10000, .grace_ms = 500});
}

/* Runs @code, which must be stopped with an error in @names (or a
 * SandboxViolation); asserts no process and no @marker came of it. */
static void attack(const char *code, const char *names, const char *marker)
{
    int pid = ci_session_pid(S);
    a_stopped(S, code, names);
    a_assert_no_process(S, pid, marker);
}

static void test_os_system_runs_nothing(void **state)
{
    int pid = ci_session_pid(S);
    /* os.system reports a failed start as a status, not an exception. */
    a_expect_value(S,
                   "import os\nrc = os.system('touch ran_system')\n"
                   "rc != 0, os.WIFEXITED(rc) and os.WEXITSTATUS(rc) == 0",
                   "(True, False)", "os.system ran its command");
    a_assert_no_process(S, pid, "ran_system");
}

static void test_subprocess_run_argv(void **state)
{
    attack("import subprocess\nsubprocess.run(['/usr/bin/touch', 'ran_subprocess'])", A_OSERR,
           "ran_subprocess");
}

static void test_subprocess_popen_shell(void **state)
{
    attack("import subprocess\n"
           "subprocess.Popen('touch ran_shell', shell=True, close_fds=False).wait()",
           A_OSERR, "ran_shell");
}

static void test_os_popen(void **state)
{
    attack("import os\nos.popen('touch ran_popen').read()", A_OSERR, "ran_popen");
}

static void test_os_execv_replaces_nothing(void **state)
{
    /* Were it to work the worker itself would become touch: the status
     * would be KILLED WorkerDied, which a_stopped() refuses. */
    attack("import os\nos.execv('/usr/bin/touch', ['touch', 'ran_execv'])", A_OSERR,
           "ran_execv");
}

static void test_os_execve_of_a_shell(void **state)
{
    attack("import os\nos.execve('/bin/sh', ['sh', '-c', 'touch ran_execve'], {'PATH': '/bin'})",
           A_OSERR, "ran_execve");
}

static void test_execveat_of_an_open_binary(void **state)
{
    /* execveat(fd, "", argv, envp, AT_EMPTY_PATH): exec by descriptor. */
    a_cell = h_cells("sc", "process_execveat_of_an_open_binary");
    attack(a_cell, A_OSERR, "ran_execveat");
}

static void test_os_fork(void **state)
{
    a_cell = h_cell("process_os_fork");
    attack(a_cell, A_OSERR, "ran_fork");
}

static void test_os_forkpty(void **state)
{
    a_cell = h_cell("process_os_forkpty");
    attack(a_cell, A_OSERR, "ran_forkpty");
}

static void test_pty_fork(void **state)
{
    a_cell = h_cell("process_pty_fork");
    attack(a_cell, A_OSERR, "ran_ptyfork");
}

static void test_os_posix_spawn(void **state)
{
    attack("import os\nos.posix_spawn('/usr/bin/touch', ['touch', 'ran_posix_spawn'], {})",
           A_OSERR, "ran_posix_spawn");
}

static void test_os_spawnlp_searches_path(void **state)
{
    attack("import os\nos.spawnlp(os.P_WAIT, 'touch', 'touch', 'ran_spawnlp')", A_OSERR,
           "ran_spawnlp");
}

static void test_multiprocessing_process(void **state)
{
    a_cell = h_cell("process_multiprocessing_process");
    attack(a_cell, A_OSERR, "ran_mp");
}

static void test_multiprocessing_spawn_pool(void **state)
{
    attack("import multiprocessing\n"
           "with multiprocessing.get_context('spawn').Pool(1) as pool:\n"
           "    pool.apply(print)",
           A_OSERR, NULL);
}

static void test_process_pool_executor(void **state)
{
    attack("import concurrent.futures as cf\n"
           "with cf.ProcessPoolExecutor(1) as ex:\n    ex.submit(print).result()",
           A_OSERR "|BrokenProcessPool", NULL);
}

static void test_raw_fork_syscall(void **state)
{
    a_cell = h_cells("sc", "process_raw_fork_syscall");
    attack(a_cell, A_OSERR, "ran_rawfork");
}

static void test_raw_vfork_syscall(void **state)
{
    /* A vfork child borrows the parent's memory: it only leaves the
     * marker and exits. */
    a_cell = h_cells("sc", "process_raw_vfork_syscall");
    attack(a_cell, A_OSERR, "ran_vfork");
}

static void test_raw_clone_as_fork(void **state)
{
    /* clone(SIGCHLD, no stack): a fork under another name. */
    a_cell = h_cells("sc", "process_raw_clone_as_fork");
    attack(a_cell, A_OSERR, "ran_clone");
}

static void test_raw_clone_vm_without_thread(void **state)
{
    /* What posix_spawn does: CLONE_VM | CLONE_VFORK, a process sharing
     * memory but not a thread. */
    a_cell = h_cells("sc", "process_raw_clone_vm_without_thread");
    attack(a_cell, A_OSERR, "ran_clonevm");
}

static void test_raw_clone3(void **state)
{
    /* struct clone_args with only exit_signal = SIGCHLD: a fork. */
    a_cell = h_cells("sc", "process_raw_clone3");
    attack(a_cell, A_OSERR, "ran_clone3");
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    const struct CMUnitTest tests[] = {
        A_TEST(test_os_system_runs_nothing),
        A_TEST(test_subprocess_run_argv),
        A_TEST(test_subprocess_popen_shell),
        A_TEST(test_os_popen),
        A_TEST(test_os_execv_replaces_nothing),
        A_TEST(test_os_execve_of_a_shell),
        A_TEST(test_execveat_of_an_open_binary),
        A_TEST(test_os_fork),
        A_TEST(test_os_forkpty),
        A_TEST(test_pty_fork),
        A_TEST(test_os_posix_spawn),
        A_TEST(test_os_spawnlp_searches_path),
        A_TEST(test_multiprocessing_process),
        A_TEST(test_multiprocessing_spawn_pool),
        A_TEST(test_process_pool_executor),
        A_TEST(test_raw_fork_syscall),
        A_TEST(test_raw_vfork_syscall),
        A_TEST(test_raw_clone_as_fork),
        A_TEST(test_raw_clone_vm_without_thread),
        A_TEST(test_raw_clone3),
    };
    return cmocka_run_group_tests_name("attacks: process creation", tests, group_setup,
                                       h_group_teardown);
}
