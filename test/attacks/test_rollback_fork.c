/*
 * Rollback's fork, attacked from a cell: the worker's seccomp filter
 * sends every fork to the host, which lets through the checkpoint's alone.
 * A cell that asks for a process, from its main thread or another, with
 * glibc's fork() or clone(2) itself, gets EPERM; a thread that forks in
 * a loop while later cells' checkpoints are made never gets a child; the
 * listener the host approves with is in no cell's reach.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    static const struct h_limits limits = {.timeout_ms = 5000, .rollback = 1};

    (void)state;
    return h_group_session(&S, &limits);
}

static void test_no_cell_gets_a_process(void **state)
{
    (void)state;
    h_require_rollback(S);
    /* Six tries: three ways, from the main thread and from another. */
    h_expect_cell(S, "rollback_forks_refused", "(True, 6)", "");
    /* And the refusals cost the session nothing: it still rolls back. */
    h_expect(S, "kept = 'yes'", NULL, "");
    ci_result_free(h_run_status(S, "import os\nos._exit(1)", CI_STATUS_KILLED));
    h_expect(S, "kept", "'yes'", "");
}

static void test_a_thread_forking_while_checkpoints_are_made_gets_nothing(void **state)
{
    ci_result *r;

    (void)state;
    h_require_rollback(S);
    h_expect(S, "before = 'intact'", NULL, "");
    h_expect_cell(S, "rollback_fork_spinner", NULL, "");
    /* Each of these cells forks a checkpoint while the thread forks too. */
    for (int i = 0; i < 5; i++)
        h_expect(S, "import time; time.sleep(0.05)\nspin_forks['children']", "0", "");
    h_expect(S, "spin_stop.set()\nspin_forks['tries'] > 0, spin_forks['children']", "(True, 0)",
             "");
    /* The checkpoint was the main thread's fork, every time: a fatal cell
     * still rolls back, to a state with no spinning thread in it. */
    r = h_run_status(S, "import os\nos._exit(1)", CI_STATUS_KILLED);
    assert_int_equal(ci_result_rolled_back(r), 1);
    ci_result_free(r);
    h_expect(S, "import threading\nbefore, spin_forks['children'], threading.active_count()",
             "('intact', 0, 1)", "");
}

static void test_a_python_at_fork_hook_never_runs_in_the_worker(void **state)
{
    (void)state;
    h_require_rollback(S);
    h_expect_cell(S, "rollback_python_at_fork_hook", NULL, "");
    h_expect(S, "import os\nos.path.exists('at_fork_hook_ran')", "False", "");
    /* Nor in a checkpoint that takes over (it has no after_in_child). */
    ci_result_free(h_run_status(S, "import os\nos._exit(1)", CI_STATUS_KILLED));
    h_expect(S, "import os\nos.path.exists('at_fork_hook_ran')", "False", "");
}

static void test_a_fork_made_inside_the_checkpoints_ends_the_session(void **state)
{
    struct h_limits lim = {.timeout_ms = 5000, .rollback = 1};
    ci_session *s = h_session(&lim);
    ci_result *r;

    (void)state;
    h_require_rollback(s);
    /* The next RUN's checkpoint fork runs the handler on the main thread,
     * which forks first: the host sees two processes and ends it all. */
    h_expect_cell(s, "rollback_glibc_at_fork_fork", NULL, "");
    r = h_run_status(s, "1", CI_STATUS_KILLED);
    assert_string_equal(ci_result_error_name(r), "ProtocolError");
    assert_non_null(strstr(ci_result_error_value(r), "made a process of its own"));
    assert_int_equal(ci_result_rolled_back(r), 0);
    ci_result_free(r);
    assert_int_equal(ci_run(s, "1", &r), CI_EDEAD);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "1 + 1", "2", "");
    ci_session_free(s);
}

static void test_a_cell_that_forges_its_runs_gets_no_process_past_its_cell(void **state)
{
    struct h_limits lim = {.timeout_ms = 5000, .rollback = 1};
    ci_session *s = h_session(&lim);
    char *cell = h_cell("rollback_forged_run_loop"), *code = h_fmt("forge_count = 2\n%s", cell);
    ci_result *r;

    (void)state;
    h_require_rollback(s);
    h_expect(s, "x = 1", NULL, "");
    /* Its own cell answers with its forged value; the next cell is read
     * and answered by it, after its fork, refused: the host ends the
     * session. */
    h_expect(s, code, "'forged'", "");
    r = h_run_status(s, "x", CI_STATUS_KILLED);
    assert_string_equal(ci_result_error_name(r), "ProtocolError");
    assert_non_null(strstr(ci_result_error_value(r), "made a process of its own"));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(s), -1);
    ci_session_free(s);
    free(code);
    free(cell);
}

/* How many of @pid's descriptors are seccomp listeners, seen from the
 * host's /proc; -1 if they cannot be listed. */
static int listeners_of(int pid)
{
    char *dir = h_fmt("/proc/%d/fd", pid);
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d) {
        free(dir);
        return -1;
    }
    while ((e = readdir(d))) {
        char *path = h_fmt("%s/%s", dir, e->d_name), link[64];
        ssize_t len = readlink(path, link, sizeof link - 1);

        if (len > 0) {
            link[len] = '\0';
            n += strcmp(link, "anon_inode:seccomp notify") == 0;
        }
        free(path);
    }
    closedir(d);
    free(dir);
    return n;
}

static void test_the_listener_is_in_no_cells_reach(void **state)
{
    ci_session *s;
    ci_config *cfg = h_config(NULL);

    (void)state;
    h_require_rollback(S);
    /* The worker closed its own when its first frame came, before any
     * cell: none of its descriptors is a listener, nor its checkpoint's
     * once that has taken over. */
    h_expect(S, "1", "1", "");
    assert_int_equal(listeners_of(ci_session_pid(S)), 0);
    ci_result_free(h_run_status(S, "import os\nos._exit(1)", CI_STATUS_KILLED));
    h_expect(S, "1", "1", "");
    assert_int_equal(listeners_of(ci_session_pid(S)), 0);
    /* The host holds one for the session; a session without rollback
     * has none anywhere. */
    assert_int_equal(listeners_of(getpid()) >= 1, 1);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_expect(s, "1", "1", "");
    assert_int_equal(listeners_of(ci_session_pid(s)), 0);
    ci_session_free(s);
    ci_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_cell_gets_a_process),
        cmocka_unit_test(test_a_thread_forking_while_checkpoints_are_made_gets_nothing),
        cmocka_unit_test(test_the_listener_is_in_no_cells_reach),
        cmocka_unit_test(test_a_python_at_fork_hook_never_runs_in_the_worker),
        cmocka_unit_test(test_a_fork_made_inside_the_checkpoints_ends_the_session),
        cmocka_unit_test(test_a_cell_that_forges_its_runs_gets_no_process_past_its_cell),
    };

    h_watchdog(300);
    return cmocka_run_group_tests_name("rollback fork attacks", tests, group_setup,
                                       h_group_teardown);
}
