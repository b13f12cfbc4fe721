/*
 * CPU: a thread a cell leaves spinning uses no CPU between cells (the
 * worker is stopped), and runs on in later cells; the lifetime CPU limit
 * (ci_config_set_cpu_limit) ends a session that spends it, with its own
 * cause. CPU time is read from the host, never from the worker.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "helpers.h"

/* Two threads that spin for the rest of the worker's life, counting. */
static const char spinners[] = "import threading\n"
                               "spins = [0, 0]\n"
                               "def spin(i):\n"
                               "    while True:\n"
                               "        spins[i] += 1\n"
                               "for i in range(2):\n"
                               "    threading.Thread(target=spin, args=(i,), daemon=True).start()\n";

/* What a worker may use between cells: the end of its last system call
 * after the result, before SIGSTOP lands. Measured: 0 ms. */
#define BETWEEN_CELLS_ALLOWANCE_MS 20

/* The CPU time of process @pid, all its threads, in ms, read by the host. */
static long long cpu_ms(int pid)
{
    clockid_t clock;
    struct timespec ts;

    if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0)
        fail_msg("cannot read the CPU clock of worker %d", pid);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits, at most 5 s (a hang bound), for @pid to be stopped ('T'). */
static void assert_stopped(int pid)
{
    char st = '?';
    int ppid, sid;

    for (int64_t end = h_now_ms() + 5000; h_now_ms() < end; h_sleep_ms(5))
        if (h_proc_stat(pid, &st, &ppid, &sid) && st == 'T')
            return;
    fail_msg("worker %d is in state %c between cells, not stopped (T)", pid, st);
}

/* A session whose worker is forked from the zygote (@zygote 1) or started
 * by exec, with a CPU limit of @cpu_s seconds (0: none) and a timeout
 * far beyond it. */
static ci_session *session_of(int zygote, unsigned long cpu_s)
{
    ci_config *cfg = h_config(&(struct h_limits){.timeout_ms = 60000});
    ci_session *s = NULL;
    int rc;

    assert_int_equal(ci_config_set_zygote(cfg, zygote), CI_OK);
    assert_int_equal(ci_config_set_cpu_limit(cfg, cpu_s), CI_OK);
    rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %d: %s", rc, ci_session_errmsg(NULL));
    return s;
}

/* Both ways a worker starts: forked from the zygote (the init of its own
 * PID namespace where the kernel allows one) and by exec. */
static void test_spinning_threads_use_no_cpu_between_cells(void **state)
{
    ci_session *s[2] = {session_of(1, 0), session_of(0, 0)};
    long long before[2], after[2];
    int pid[2];
    ci_result *r;

    for (int i = 0; i < 2; i++) {
        r = h_run_status(s[i], spinners, CI_STATUS_OK);
        ci_result_free(r);
        pid[i] = ci_session_pid(s[i]);
        assert_true(pid[i] > 0);
        assert_stopped(pid[i]);
        before[i] = cpu_ms(pid[i]);
    }
    h_sleep_ms(1000);
    for (int i = 0; i < 2; i++) {
        after[i] = cpu_ms(pid[i]);
        fprintf(stderr, "session %d (%s): %lld ms of CPU in 1 s between cells\n", i,
                i ? "exec" : "zygote", after[i] - before[i]);
        if (after[i] - before[i] > BETWEEN_CELLS_ALLOWANCE_MS)
            fail_msg("worker %d used %lld ms of CPU between cells", pid[i],
                     after[i] - before[i]);
    }
    /* They run on while a cell runs: the counts grow, and so does the
     * worker's CPU time, by more than the sleeping main thread uses. */
    for (int i = 0; i < 2; i++) {
        r = h_run_status(s[i], "import time\na = sum(spins)\ntime.sleep(0.5)\nsum(spins) > a",
                         CI_STATUS_OK);
        h_assert_str(ci_result_value(r), "True");
        if (ci_result_cpu_time_us(r) < 10000)
            fail_msg("the spinning threads used %llu us of CPU in a 0.5 s cell",
                     (unsigned long long)ci_result_cpu_time_us(r));
        ci_result_free(r);
        assert_stopped(pid[i]);
    }
    /* A stopped worker still restarts, and is freed. */
    assert_int_equal(ci_session_restart(s[0]), CI_OK);
    h_expect(s[0], "1 + 1", "2", NULL);
    assert_int_equal(h_wait_reaped(pid[0], 5000), 1);
    ci_session_free(s[0]);
    ci_session_free(s[1]);
    assert_int_equal(h_wait_reaped(pid[1], 5000), 1);
}

/* @r was ended by the CPU limit, well before its 60 s timeout. */
static void assert_cpu_limited(ci_result *r)
{
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "CPULimitExceeded");
    h_assert_contains(ci_result_error_value(r), "CPU time limit");
}

static void test_cpu_limit_ends_a_spinning_cell(void **state)
{
    ci_session *s = session_of(1, 1);
    ci_result *r;

    h_expect(s, "1 + 1", "2", NULL);
    r = h_run(s, "while True:\n    pass\n");
    assert_cpu_limited(r);
    if (ci_result_wall_time_us(r) > 30000000)
        fail_msg("the 1 s CPU limit took %llu us of wall time",
                 (unsigned long long)ci_result_wall_time_us(r));
    ci_result_free(r);
    /* A restart gets the budget anew. */
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "1 + 1", "2", NULL);
    ci_session_free(s);
}

/* Every thread counts: the main thread sleeps, a thread an earlier cell
 * left spends the budget. */
static void test_cpu_limit_counts_threads_left_running(void **state)
{
    ci_session *s = session_of(1, 1);
    ci_result *r;

    r = h_run_status(s, spinners, CI_STATUS_OK);
    ci_result_free(r);
    r = h_run(s, "import time\ntime.sleep(50)\n");
    assert_cpu_limited(r);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_cpu_limit_bounds(void **state)
{
    ci_config *cfg = ci_config_new();

    assert_non_null(cfg);
    assert_int_equal(ci_config_set_cpu_limit(NULL, 1), CI_EINVAL);
    assert_int_equal(ci_config_set_cpu_limit(cfg, 31536001), CI_EINVAL);
    assert_int_equal(ci_config_set_cpu_limit(cfg, 31536000), CI_OK);
    assert_int_equal(ci_config_set_cpu_limit(cfg, 0), CI_OK);
    ci_config_free(cfg);
}

int main(void)
{
    h_watchdog(240);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_limit_bounds),
        cmocka_unit_test(test_spinning_threads_use_no_cpu_between_cells),
        cmocka_unit_test(test_cpu_limit_ends_a_spinning_cell),
        cmocka_unit_test(test_cpu_limit_counts_threads_left_running),
    };
    return cmocka_run_group_tests_name("cpu", tests, NULL, NULL);
}
