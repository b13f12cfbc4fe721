/*
 * Limits: the run timeout, the grace period, the memory limit, and a
 * worker that dies. The group's session has small limits so the tests
 * that wait for them stay short.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

#define TIMEOUT_MS 1500
#define GRACE_MS 500
/* ci_run must return by timeout + grace (+100 ms promised); this margin
 * only catches hangs. */
#define DEADLINE_MS (TIMEOUT_MS + GRACE_MS + 1500)

static ci_session *S;

static int group_setup(void **state)
{
    struct h_limits lim = {
        .timeout_ms = TIMEOUT_MS, .grace_ms = GRACE_MS, .memory = 1ull << 30, .output = 4096};
    return h_group_session(&S, &lim);
}

/* Runs @code, asserts it ended with @want within the deadline. */
static ci_result *run_limited(const char *code, ci_status want)
{
    int64_t t0 = h_now_ms();
    ci_result *r = h_run_status(S, code, want);
    int64_t took = h_now_ms() - t0;
    if (took > DEADLINE_MS)
        fail_msg("ci_run took %lld ms, over timeout %d + grace %d + 1500", (long long)took,
                 TIMEOUT_MS, GRACE_MS);
    return r;
}

/* run_limited(), then asserts the error's name is @name. */
static void expect_limited(const char *code, ci_status want, const char *name)
{
    ci_result *r = run_limited(code, want);
    h_assert_str(ci_result_error_name(r), name);
    ci_result_free(r);
}

/* After a KILLED cell: the session is dead until restarted, then works
 * from count 1 with empty state. */
static void assert_dead_then_restarts(void)
{
    ci_result *r = (ci_result *)&r;
    assert_int_equal(ci_session_pid(S), -1);
    assert_true(strlen(ci_session_errmsg(S)) > 0);
    assert_int_equal(ci_run(S, "1", &r), CI_EDEAD);
    assert_null(r);

    assert_int_equal(ci_session_restart(S), CI_OK);
    assert_true(ci_session_pid(S) > 0);
    r = h_run_status(S, "'alive'", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'alive'");
    assert_int_equal(ci_result_execution_count(r), 1);
    ci_result_free(r);
}

/* ------------------------------------------------------------- rlimits */

/* The line of /proc/<pid>/limits that starts with @name, its soft and
 * hard values as text. */
static void proc_limit(int pid, const char *name, char *soft, char *hard)
{
    char *path = h_fmt("/proc/%d/limits", pid);
    char *text = h_read_file(path, NULL);
    if (!text)
        fail_msg("cannot read %s", path);
    const char *line = strstr(text, name);
    if (!line)
        fail_msg("no \"%s\" in %s", name, path);
    if (sscanf(line + strlen(name), " %63s %63s", soft, hard) != 2)
        fail_msg("cannot parse %s in %s", name, path);
    free(text);
    free(path);
}

static void test_worker_rlimits_are_the_configured_ones(void **state)
{
    char soft[64], hard[64];
    int pid = ci_session_pid(S);
    proc_limit(pid, "Max address space", soft, hard);
    assert_string_equal(soft, "1073741824");
    assert_string_equal(hard, "1073741824");
    proc_limit(pid, "Max core file size", soft, hard);
    assert_string_equal(soft, "0");
    assert_string_equal(hard, "0");
    /* The default file limit, 1 GiB. */
    proc_limit(pid, "Max file size", soft, hard);
    assert_string_equal(soft, "1073741824");
    assert_string_equal(hard, "1073741824");
    /* The default task limit, where the worker has its user namespace. */
    if (h_has_layer(S, CI_SANDBOX_TASK_LIMIT, "the task limit")) {
        proc_limit(pid, "Max processes", soft, hard);
        assert_string_equal(soft, "256");
        assert_string_equal(hard, "256");
    }
}

static void test_task_limit_is_the_configured_one(void **state)
{
    ci_config *cfg = h_config(NULL);
    ci_session *s;
    assert_int_equal(ci_config_set_task_limit(cfg, 40), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    if (h_has_layer(s, CI_SANDBOX_TASK_LIMIT, "the task limit")) {
        h_expect(s, "import resource\nresource.getrlimit(resource.RLIMIT_NPROC)", "(40, 40)",
                 NULL);
        /* The worker's own threads count: fewer than 40 start. */
        h_expect_cell(s, "limits_threads_until_refused", "True", NULL);
    }
    ci_session_free(s);
}

/* A seccomp filter on this process and its children refusing new user
 * namespaces, as a container may: unshare(2) and clone(2) with
 * CLONE_NEWUSER fail with EPERM, clone3(2) with ENOSYS (glibc falls back
 * to clone). 0, or -1 if this process may not install one. */
static int refuse_user_namespaces(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return h_seccomp_filter(f, sizeof f / sizeof *f);
}

/* In the forked host: a session, its worker without a user namespace,
 * has no task limit and says so, and runs a cell. 0 if so; else why on
 * stderr. No cmocka assertion here. */
static int session_without_user_namespace(int zygote)
{
    struct rlimit own;
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    ci_result *r = NULL;
    char want[64];
    int rc = 0;

    getrlimit(RLIMIT_NPROC, &own);
    if (own.rlim_cur == RLIM_INFINITY)
        snprintf(want, sizeof want, "True");
    else
        snprintf(want, sizeof want, "%llu", (unsigned long long)own.rlim_cur);
    if (!cfg || ci_config_set_zygote(cfg, zygote) != CI_OK || ci_session_new(&s, cfg) != CI_OK) {
        fprintf(stderr, "no session without user namespaces: %s\n", ci_session_errmsg(NULL));
        rc = 20;
    } else if (ci_session_sandbox(s) & (CI_SANDBOX_USERNS | CI_SANDBOX_TASK_LIMIT)) {
        fprintf(stderr, "without user namespaces the worker has 0x%x\n", ci_session_sandbox(s));
        rc = 21;
    } else if (ci_run(s, own.rlim_cur == RLIM_INFINITY
                             ? "import resource\nresource.getrlimit(resource.RLIMIT_NPROC)[0] == "
                               "resource.RLIM_INFINITY"
                             : "import resource\nresource.getrlimit(resource.RLIMIT_NPROC)[0]",
                      &r) != CI_OK ||
               ci_result_status(r) != CI_STATUS_OK || !ci_result_value(r) ||
               strcmp(ci_result_value(r), want) != 0) {
        fprintf(stderr, "without user namespaces the cell's RLIMIT_NPROC is %s, not %s\n",
                r && ci_result_value(r) ? ci_result_value(r) : ci_session_errmsg(s), want);
        rc = 22;
    }
    ci_result_free(r);
    ci_session_free(s);
    ci_config_free(cfg);
    return rc;
}

static void test_without_a_user_namespace_there_is_no_task_limit(void **state)
{
    /* The count would be of every process of the worker's uid: the
     * worker leaves RLIMIT_NPROC as it was and the bit clear. */
    for (int zygote = 0; zygote <= h_zygote_default(); zygote++)
        h_filtered_host(refuse_user_namespaces, session_without_user_namespace, zygote,
                        zygote ? "the zygote-forked worker without user namespaces"
                               : "the exec-started worker without user namespaces");
}

/* ------------------------------------------------------------- timeout */

static void test_busy_loop_times_out_and_state_survives(void **state)
{
    int pid = ci_session_pid(S);
    h_expect(S, "t_before = 41", NULL, "");
    char *cell = h_cell("limits_tick_then_loop");
    ci_result *r = run_limited(cell, CI_STATUS_TIMEOUT);
    free(cell);
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    assert_null(ci_result_value(r));
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 5);
    assert_string_equal(o, "tick\n");
    ci_result_free(r);

    assert_int_equal(ci_session_pid(S), pid);
    h_expect(S, "t_before + t_during", "42", "");
}

static void test_sleep_times_out(void **state)
{
    int pid = ci_session_pid(S);
    expect_limited("import time\ntime.sleep(100)", CI_STATUS_TIMEOUT, "TimeoutError");
    assert_int_equal(ci_session_pid(S), pid);
    h_expect(S, "'next'", "'next'", "");
}

static void test_timeout_is_per_run(void **state)
{
    ci_result *r = run_limited("import time\ntime.sleep(100)", CI_STATUS_TIMEOUT);
    ci_result_free(r);
    /* A fresh run has its whole timeout again. */
    h_expect(S, "import time\ntime.sleep(0.8)\n'slept'", "'slept'", "");
}

static void test_endless_output_times_out_with_capped_output(void **state)
{
    ci_result *r = run_limited("while True:\n    print('x' * 1000)", CI_STATUS_TIMEOUT);
    h_assert_cut(r, CI_STREAM_STDOUT, 4096);
    ci_result_free(r);
    h_expect(S, "'after flood'", "'after flood'", "");
}

/* --------------------------------------------------------------- grace */

static void test_cell_ignoring_sigint_is_killed_after_grace(void **state)
{
    char *cell = h_cell("limits_ignore_sigint");
    ci_result *r = run_limited(cell, CI_STATUS_KILLED);
    free(cell);
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    assert_non_null(ci_result_error_value(r));
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_dead_then_restarts();
}

static void test_cell_swallowing_keyboard_interrupt_is_killed_after_grace(void **state)
{
    char *cell = h_cell("limits_swallow_keyboard_interrupt");
    expect_limited(cell, CI_STATUS_KILLED, "TimeoutError");
    free(cell);
    assert_dead_then_restarts();
}

static void test_cell_stuck_in_c_code_is_killed_after_grace(void **state)
{
    /* Draining an endless iterator in C never returns to the eval loop,
     * so KeyboardInterrupt is never raised. (A catastrophic regex is no
     * such case: the regex engine of Python 3.11 checks for signals.) */
    expect_limited("import collections, itertools\n"
                   "collections.deque(itertools.count(), maxlen=0)",
                   CI_STATUS_KILLED, "TimeoutError");
    assert_dead_then_restarts();
}

static void test_flood_from_many_threads_is_killed_on_time(void **state)
{
    /* Sixteen threads keep both pipes full while the main thread ignores
     * the interrupt: reading their output must not hold the host past the
     * deadline. */
    char *cell = h_cell("limits_threads_ignoring_sigint");
    expect_limited(cell, CI_STATUS_KILLED, "TimeoutError");
    free(cell);
    assert_dead_then_restarts();
}

/* -------------------------------------------------------------- memory */

static void test_huge_bytearray_is_memory_error(void **state)
{
    int pid = ci_session_pid(S);
    h_expect(S, "mem_before = 'kept'", NULL, "");
    expect_limited("b = bytearray(2 * 1024**3)", CI_STATUS_MEMORY, "MemoryError");
    assert_int_equal(ci_session_pid(S), pid);
    h_expect(S, "mem_before, 'b' in globals()", "('kept', False)", "");
}

static void test_huge_numpy_array_is_memory_error(void **state)
{
    expect_limited("import numpy\na = numpy.ones((2**31,))", CI_STATUS_MEMORY, "MemoryError");
    h_expect(S, "import numpy\nint(numpy.ones((1000,)).sum())", "1000", "");
}

static void test_interruptible_regex_times_out(void **state)
{
    int pid = ci_session_pid(S);
    expect_limited("import re\nre.match('(a+)+$', 'a' * 40 + 'b')", CI_STATUS_TIMEOUT,
                   "TimeoutError");
    assert_int_equal(ci_session_pid(S), pid);
}

static void test_gradual_growth_is_memory_error_and_memory_comes_back(void **state)
{
    /* bytes(n) is calloc'ed: address space runs out without touching
     * (and paying for) a gigabyte of pages within the timeout. */
    char *cell = h_cell("limits_grow_until_no_address_space");
    expect_limited(cell, CI_STATUS_MEMORY, "MemoryError");
    free(cell);
    /* The chunks were the function's: they are freed, 100 MB fit again. */
    h_expect(S, "x = bytearray(100 * 1024 * 1024)\nlen(x)", "104857600", "");
    h_expect(S, "del x", NULL, "");
}

/* -------------------------------------------------------- worker death */

static void test_os_exit_kills_worker_and_names_the_code(void **state)
{
    ci_result *r = run_limited("import os\nos.write(1, b'bye')\nos._exit(7)", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    h_assert_contains(ci_result_error_value(r), "7");
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 3);
    assert_string_equal(o, "bye");
    ci_result_free(r);
    assert_dead_then_restarts();
}

static void test_segfault_kills_worker_and_names_the_signal(void **state)
{
    ci_result *r = run_limited("import ctypes\nctypes.string_at(0)", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    const char *v = ci_result_error_value(r);
    assert_non_null(v);
    if (!strstr(v, "SIGSEGV") && !strstr(v, "signal 11"))
        fail_msg("error value \"%s\" names neither SIGSEGV nor signal 11", v);
    ci_result_free(r);
    assert_dead_then_restarts();
}

static void test_sigkill_from_the_cell_kills_worker(void **state)
{
    ci_result *r = run_limited("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
                               CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    const char *v = ci_result_error_value(r);
    assert_non_null(v);
    if (!strstr(v, "SIGKILL") && !strstr(v, "signal 9"))
        fail_msg("error value \"%s\" names neither SIGKILL nor signal 9", v);
    ci_result_free(r);
    assert_dead_then_restarts();
}

static void test_cell_scribbling_on_the_channel_is_protocol_error(void **state)
{
    /* Descriptor 3 is the protocol's socket: a frame header of garbage. */
    char *cell = h_cell("limits_garbage_frame_header");
    expect_limited(cell, CI_STATUS_KILLED, "ProtocolError");
    free(cell);
    assert_dead_then_restarts();
}

static void test_cell_closing_the_channel_kills_the_worker(void **state)
{
    ci_result *r = run_limited("import os\nos.close(3)", CI_STATUS_KILLED);
    const char *name = ci_result_error_name(r);
    assert_non_null(name);
    if (strcmp(name, "WorkerDied") != 0 && strcmp(name, "ProtocolError") != 0)
        fail_msg("error name %s, expected WorkerDied or ProtocolError", name);
    ci_result_free(r);
    assert_dead_then_restarts();
}

static void test_cell_closing_its_stdout_leaves_the_session_usable(void **state)
{
    int pid = ci_session_pid(S);
    char *cell = h_cell("limits_stdout_closed");
    ci_result *r = run_limited(cell, CI_STATUS_OK);
    free(cell);
    size_t len = 0;
    assert_string_equal(ci_result_stdout(r, &len), "last words");
    assert_string_equal(ci_result_stderr(r, &len), "err still open");
    h_assert_str(ci_result_value(r), "'closed'");
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), pid);
    h_expect(S, "6 * 7", "42", "");
}

static void test_files_work_on_a_dead_session_and_survive_restart(void **state)
{
    ci_result *r = run_limited("open('before-death.txt', 'w').write('old')\nimport os\nos._exit(1)",
                               CI_STATUS_KILLED);
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), -1);

    assert_int_equal(ci_session_put_file(S, "while-dead.txt", "new", 3), CI_OK);
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(ci_session_get_file(S, "before-death.txt", &data, &len), CI_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(data, "old", 3);
    ci_free(data);

    assert_int_equal(ci_session_restart(S), CI_OK);
    h_expect(S, "open('before-death.txt').read() + open('while-dead.txt').read()", "'oldnew'",
             "");
}

static void test_restart_of_a_dead_session_twice(void **state)
{
    expect_limited("import os\nos._exit(0)", CI_STATUS_KILLED, "WorkerDied");
    assert_int_equal(ci_session_restart(S), CI_OK);
    int pid = ci_session_pid(S);
    assert_int_equal(ci_session_restart(S), CI_OK);
    assert_true(ci_session_pid(S) > 0);
    assert_int_not_equal(ci_session_pid(S), pid);
    /* The replaced worker is gone. */
    assert_int_equal(kill(pid, 0), -1);
    h_expect(S, "'twice'", "'twice'", "");
}

int main(void)
{
    h_watchdog(150);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_worker_rlimits_are_the_configured_ones, h_setup_alive),
        cmocka_unit_test(test_task_limit_is_the_configured_one),
        cmocka_unit_test(test_without_a_user_namespace_there_is_no_task_limit),
        cmocka_unit_test_setup(test_busy_loop_times_out_and_state_survives, h_setup_alive),
        cmocka_unit_test_setup(test_sleep_times_out, h_setup_alive),
        cmocka_unit_test_setup(test_timeout_is_per_run, h_setup_alive),
        cmocka_unit_test_setup(test_endless_output_times_out_with_capped_output, h_setup_alive),
        cmocka_unit_test_setup(test_cell_ignoring_sigint_is_killed_after_grace, h_setup_alive),
        cmocka_unit_test_setup(test_cell_swallowing_keyboard_interrupt_is_killed_after_grace,
                               h_setup_alive),
        cmocka_unit_test_setup(test_cell_stuck_in_c_code_is_killed_after_grace, h_setup_alive),
        cmocka_unit_test_setup(test_flood_from_many_threads_is_killed_on_time, h_setup_alive),
        cmocka_unit_test_setup(test_interruptible_regex_times_out, h_setup_alive),
        cmocka_unit_test_setup(test_huge_bytearray_is_memory_error, h_setup_alive),
        cmocka_unit_test_setup(test_huge_numpy_array_is_memory_error, h_setup_alive),
        cmocka_unit_test_setup(test_gradual_growth_is_memory_error_and_memory_comes_back,
                               h_setup_alive),
        cmocka_unit_test_setup(test_os_exit_kills_worker_and_names_the_code, h_setup_alive),
        cmocka_unit_test_setup(test_segfault_kills_worker_and_names_the_signal, h_setup_alive),
        cmocka_unit_test_setup(test_sigkill_from_the_cell_kills_worker, h_setup_alive),
        cmocka_unit_test_setup(test_cell_scribbling_on_the_channel_is_protocol_error,
                               h_setup_alive),
        cmocka_unit_test_setup(test_cell_closing_the_channel_kills_the_worker, h_setup_alive),
        cmocka_unit_test_setup(test_cell_closing_its_stdout_leaves_the_session_usable,
                               h_setup_alive),
        cmocka_unit_test_setup(test_files_work_on_a_dead_session_and_survive_restart,
                               h_setup_alive),
        cmocka_unit_test_setup(test_restart_of_a_dead_session_twice, h_setup_alive),
    };
    return cmocka_run_group_tests_name("limits", tests, group_setup, h_group_teardown);
}
