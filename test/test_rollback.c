/*
 * Rollback (ci_config_set_rollback): after each kind of fatal cell the
 * session lives on with its state as the cell found it (a DataFrame's
 * checksum, a variable the cell set is gone), the files it wrote stay,
 * and cells that end otherwise are untouched. Without it, or without the
 * PID namespace it needs, the session dies as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "helpers.h"

static ci_session *S;

static const struct h_limits limits = {.timeout_ms = 1500, .grace_ms = 1000, .rollback = 1};

static int group_setup(void **state)
{
    (void)state;
    return h_group_session(&S, &limits);
}

/* Runs @code, which kills the worker, and checks it was rolled back with
 * the error @name, a message holding @says, and the count it had. */
static void expect_rolled_back(ci_session *s, const char *code, const char *name, const char *says)
{
    int pid = ci_session_pid(s);
    ci_result *r = h_run_status(s, code, CI_STATUS_KILLED);

    if (!ci_result_rolled_back(r))
        h_dump(r);
    assert_int_equal(ci_result_rolled_back(r), 1);
    assert_string_equal(ci_result_error_name(r), name);
    assert_non_null(strstr(ci_result_error_value(r), says));
    assert_non_null(strstr(ci_result_error_value(r), "rolled back to its state before the cell"));
    ci_result_free(r);
    /* Its checkpoint runs the cells now. */
    assert_int_equal(ci_session_rollback_active(s), 1);
    assert_true(ci_session_pid(s) > 0 && ci_session_pid(s) != pid);
}

/* Each kind of fatal cell: test/cells/rollback_fatal_<cell>.py. */
static const struct fatal {
    const char *kind, *cell, *name, *says;
} fatal[] = {
    {"the grace period ran out", "grace", "TimeoutError", "did not stop within 1000 ms"},
    {"a crash in C", "segfault", "WorkerDied", "SIGSEGV"},
    {"a sandbox violation", "ptrace", "SandboxViolation", "forbidden system call (ptrace)"},
    {"the memory limit in C code", "malloc", "WorkerDied", "SIGSEGV"},
    {"an extension's abort()", "abort", "WorkerDied", "SIGABRT"},
    {"os._exit()", "exit", "WorkerDied", "exited with status 3"},
};

static void test_each_fatal_cell_is_rolled_back_with_the_state_before_it(void **state)
{
    char *cell = h_cell("rollback_frame"), *prefix = h_cell("rollback_fatal_prefix");
    ci_result *r;

    (void)state;
    h_require_rollback(S);
    r = h_run_status(S, cell, CI_STATUS_OK);
    assert_string_equal(ci_result_value(r), "3499999499997");
    assert_int_equal(ci_result_rolled_back(r), 0);
    ci_result_free(r);
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) {
        char *name = h_fmt("rollback_fatal_%s", fatal[i].cell), *body = h_cell(name);
        char *code = h_fmt("fatal_index = %zu\n%s\n%s", i, prefix, body);
        char *check;
        int count = ci_result_execution_count(r = h_run(S, "1"));

        ci_result_free(r);
        print_message("  %s\n", fatal[i].kind);
        expect_rolled_back(S, code, fatal[i].name, fatal[i].says);
        /* The frame as it was, the cell's variable gone, its file kept
         * (copy on write is memory's only), the next count on. */
        check = h_fmt("frame_checksum() == checksum, 'lost' in globals(), "
                      "open('fatal_%zu.txt').read()",
                      i);
        r = h_run_status(S, check, CI_STATUS_OK);
        assert_string_equal(ci_result_value(r), "(True, False, 'written')");
        assert_int_equal(ci_result_execution_count(r), count + 2);
        ci_result_free(r);
        free(check);
        free(code);
        free(body);
        free(name);
    }
    free(prefix);
    free(cell);
}

static void test_cells_that_end_otherwise_are_not_rolled_back(void **state)
{
    ci_result *r;

    (void)state;
    h_require_rollback(S);
    h_expect(S, "kept = 1", NULL, "");
    r = h_run_status(S, "kept += 1\n1 / 0", CI_STATUS_ERROR);
    assert_int_equal(ci_result_rolled_back(r), 0);
    ci_result_free(r);
    /* A timeout the cell obeys is a cell's end like any other. */
    r = h_run_status(S, "kept += 1\nimport time; time.sleep(60)", CI_STATUS_TIMEOUT);
    assert_int_equal(ci_result_rolled_back(r), 0);
    ci_result_free(r);
    r = h_run_status(S, "kept", CI_STATUS_OK);
    assert_string_equal(ci_result_value(r), "3");
    assert_int_equal(ci_result_rolled_back(r), 0);
    ci_result_free(r);
}

static void test_the_generators_states_are_rolled_back_too(void **state)
{
    (void)state;
    h_require_rollback(S);
    h_expect_cell(S, "rollback_seed_generators", NULL, "");
    expect_rolled_back(S, "random.random(), np.random.rand()\nimport os; os._exit(1)",
                       "WorkerDied", "exited with status 1");
    /* The checkpoint's fork reseeds nothing: the next draws are the
     * seeds' first. */
    h_expect(S, "random.random() == random.Random(7).random(), "
             "np.random.rand() == np.random.RandomState(3).rand()",
             "(True, True)", "");
}

static void test_a_killed_cells_file_stays_as_it_left_it(void **state)
{
    char *path;
    char *text;

    (void)state;
    h_require_rollback(S);
    expect_rolled_back(S, "open('left.txt', 'w').write('written before the end')\n"
                          "import os\nos._exit(1)",
                       "WorkerDied", "exited with status 1");
    path = h_fmt("%s/left.txt", ci_session_workspace(S));
    text = h_read_file(path, NULL);
    assert_string_equal(text, "written before the end");
    free(text);
    free(path);
}

static void test_restart_and_free_after_rollbacks(void **state)
{
    ci_session *s;
    ci_config *cfg = h_config(&limits);

    (void)state;
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_require_rollback(s);
    h_expect(s, "n = 7", NULL, "");
    for (int i = 0; i < 3; i++)
        expect_rolled_back(s, "n = 0; import os; os._exit(2)", "WorkerDied", "status 2");
    h_expect(s, "n", "7", "");
    assert_int_equal(ci_session_restart(s), CI_OK);
    assert_int_equal(ci_session_rollback_active(s), 1);
    h_expect(s, "n = 8", NULL, "");
    expect_rolled_back(s, "import os\nos._exit(2)", "WorkerDied", "status 2");
    h_expect(s, "n", "8", "");
    ci_session_free(s);
    ci_config_free(cfg);
}

static void test_the_cpu_budget_is_the_sessions_across_rollbacks(void **state)
{
    ci_config *cfg = h_config(&limits);
    ci_session *s;
    ci_result *r;
    char *budget, *before, *burn;

    (void)state;
    assert_int_equal(ci_config_set_cpu_limit(cfg, 4), CI_OK);
    assert_int_equal(ci_config_set_timeout_ms(cfg, 20000), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_require_rollback(s);
    h_expect_cell(s, "rollback_cpu_budget_before", "True", "");
    /* A second and a half of CPU, then a fatal end: the checkpoint gets
     * what is left (whole seconds, the used ones rounded up), not a new
     * budget. */
    burn = h_cell("rollback_cpu_burn_then_exit");
    expect_rolled_back(s, burn, "WorkerDied", "exited with status 1");
    free(burn);
    h_expect_cell(s, "rollback_cpu_budget_after", "(True, True)", "");
    /* The filter lets a worker set its RLIMIT_CPU for that; the kernel
     * lets it lower it, never raise it back. */
    h_expect_error(s, "resource.setrlimit(resource.RLIMIT_CPU, (before, before))", "ValueError",
                   "not allowed to raise maximum limit");
    /* And its end by the limit is the session's end, named with the
     * session's budget. */
    before = h_worker_string(s, "str(before)");
    budget = h_fmt("(%s s of CPU time in all", before);
    free(before);
    r = h_run_status(s, "while True:\n    pass", CI_STATUS_KILLED);
    assert_string_equal(ci_result_error_name(r), "CPULimitExceeded");
    if (!strstr(ci_result_error_value(r), budget))
        h_dump(r);
    assert_non_null(strstr(ci_result_error_value(r), budget));
    free(budget);
    assert_int_equal(ci_result_rolled_back(r), 0);
    ci_result_free(r);
    ci_session_free(s);
    ci_config_free(cfg);
}

static void test_without_rollback_the_session_dies(void **state)
{
    struct h_limits off = limits;
    ci_config *cfg;
    ci_session *s;
    ci_result *r;

    (void)state;
    off.rollback = 0;
    cfg = h_config(&off);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    assert_int_equal(ci_session_rollback_active(s), 0);
    h_expect(s, "n = 7", NULL, "");
    r = h_run_status(s, "import os\nos._exit(2)", CI_STATUS_KILLED);
    assert_int_equal(ci_result_rolled_back(r), 0);
    assert_null(strstr(ci_result_error_value(r), "rolled back"));
    ci_result_free(r);
    assert_int_equal(ci_run(s, "n", &r), CI_EDEAD);
    assert_null(r);
    ci_session_free(s);
    ci_config_free(cfg);
}

static void test_the_setting_checks_its_arguments(void **state)
{
    ci_config *cfg = ci_config_new();

    (void)state;
    assert_int_equal(ci_config_set_rollback(NULL, 1), CI_EINVAL);
    assert_int_equal(ci_config_set_rollback(cfg, 2), CI_EINVAL);
    assert_int_equal(ci_config_set_rollback(cfg, -1), CI_EINVAL);
    assert_int_equal(ci_config_set_rollback(cfg, 0), CI_OK);
    assert_int_equal(ci_result_rolled_back(NULL), 0);
    assert_int_equal(ci_session_rollback_active(NULL), 0);
    ci_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_fatal_cell_is_rolled_back_with_the_state_before_it),
        cmocka_unit_test(test_cells_that_end_otherwise_are_not_rolled_back),
        cmocka_unit_test(test_the_generators_states_are_rolled_back_too),
        cmocka_unit_test(test_a_killed_cells_file_stays_as_it_left_it),
        cmocka_unit_test(test_restart_and_free_after_rollbacks),
        cmocka_unit_test(test_the_cpu_budget_is_the_sessions_across_rollbacks),
        cmocka_unit_test(test_without_rollback_the_session_dies),
        cmocka_unit_test(test_the_setting_checks_its_arguments),
    };

    h_watchdog(600);
    return cmocka_run_group_tests_name("rollback", tests, group_setup, h_group_teardown);
}
