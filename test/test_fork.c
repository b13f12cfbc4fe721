/*
 * ci_session_fork: a branch has the parent's state and files, and what
 * either does afterwards the other never sees; branches are freed and
 * restarted on their own, in any order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    (void)state;
    return h_group_session(&S, NULL);
}

static ci_session *fork_of(ci_session *s)
{
    ci_session *b = NULL;
    int rc = ci_session_fork(s, &b);

    if (rc != CI_OK)
        fprintf(stderr, "fork: %s\n", ci_session_errmsg(s));
    assert_int_equal(rc, CI_OK);
    assert_non_null(b);
    return b;
}

static void test_a_branch_has_the_parents_state_and_files(void **state)
{
    char *cell = h_cell("fork_state");
    ci_session *b;

    (void)state;
    h_expect(S, cell, NULL, "");
    b = fork_of(S);
    h_expect(b, "twice(base), plus_base(1), counter.bump(), int(table.v.sum()), "
             "open('shared.txt').read()",
             "(20, 11, 2, 4999950000, 'parent')", "");
    /* An iterator of the built-ins goes on where it was; a generator is
     * not carried by today's copy, and is named. */
    h_expect(b, "next(steps)", "1", "");
    assert_non_null(strstr(ci_session_left_out(b), "squares: a generator in flight\n"));
    h_expect(b, "'squares' in globals()", "False", "");
    assert_string_equal(ci_session_left_out(S), "");
    assert_int_equal(ci_session_sandbox(b), ci_session_sandbox(S));
    assert_true(ci_session_pid(b) != ci_session_pid(S));
    assert_true(strcmp(ci_session_workspace(b), ci_session_workspace(S)) != 0);

    /* Each its own way: variables, objects and files. */
    h_expect(b, "base = 1000; open('shared.txt', 'w').write('branch'); "
             "open('only_b.txt', 'w').write('b');",
             NULL, "");
    h_expect(S, "import os; base, counter.n, plus_base(1), open('shared.txt').read(), "
             "os.path.exists('only_b.txt')",
             "(10, 1, 11, 'parent', False)", "");
    h_expect(S, "base = -5; open('only_s.txt', 'w').write('s');", NULL, "");
    h_expect(b, "import os; base, plus_base(1), os.path.exists('only_s.txt')",
             "(1000, 1001, False)", "");
    ci_session_free(b);
    h_expect(S, "base, next(steps), next(squares)", "(-5, 1, 1)", "");
    free(cell);
}

static void test_sixteen_branches_each_with_its_own_result(void **state)
{
    ci_session *b[16];

    (void)state;
    h_expect(S, "seed_value = 7\nimport random\nrandom.seed(seed_value)", NULL, "");
    for (int i = 0; i < 16; i++)
        b[i] = fork_of(S);
    for (int i = 0; i < 16; i++) {
        char code[96];

        snprintf(code, sizeof code, "mine = seed_value * %d; open('mine.txt', 'w').write(str(mine));", i);
        h_expect(b[i], code, NULL, "");
    }
    for (int i = 0; i < 16; i++) {
        char want[64];

        snprintf(want, sizeof want, "(%d, '%d')", 7 * i, 7 * i);
        h_expect(b[i], "mine, open('mine.txt').read()", want, "");
    }
    /* The generators go on from the same state in every branch. */
    {
        ci_result *r0 = h_run_status(b[0], "random.random()", CI_STATUS_OK);
        ci_result *r1 = h_run_status(b[15], "random.random()", CI_STATUS_OK);

        assert_string_equal(ci_result_value(r0), ci_result_value(r1));
        ci_result_free(r0);
        ci_result_free(r1);
    }
    for (int i = 0; i < 16; i++)
        ci_session_free(b[i]);
    h_expect(S, "'mine' in globals()", "False", "");
}

static void test_the_parent_freed_first_and_restarts_on_their_own(void **state)
{
    ci_session *p = h_session(NULL), *b, *c;

    (void)state;
    h_expect(p, "kept = 'from the parent'", NULL, "");
    b = fork_of(p);
    c = fork_of(b);
    ci_session_free(p);
    h_expect(b, "kept", "'from the parent'", "");
    assert_int_equal(ci_session_restart(b), CI_OK);
    assert_string_equal(ci_session_left_out(b), "");
    h_expect_error(b, "kept", "NameError", NULL);
    h_expect(c, "kept", "'from the parent'", "");
    ci_session_free(c);
    ci_session_free(b);
}

static void test_a_fork_during_a_run_or_of_a_dead_session_is_refused(void **state)
{
    struct h_runner run;
    ci_session *b = (ci_session *)1, *d = h_session(NULL);

    (void)state;
    h_run_later(&run, S, "import time; time.sleep(1.5)");
    h_sleep_ms(400);
    assert_int_equal(ci_session_fork(S, &b), CI_EBUSY);
    assert_null(b);
    assert_int_equal(h_runner_join(&run), CI_OK);
    ci_result_free(h_run_status(d, "import os; os._exit(1)", CI_STATUS_KILLED));
    b = (ci_session *)1;
    assert_int_equal(ci_session_fork(d, &b), CI_EDEAD);
    assert_null(b);
    assert_int_equal(ci_session_fork(NULL, &b), CI_EINVAL);
    assert_int_equal(ci_session_fork(S, NULL), CI_EINVAL);
    assert_string_equal(ci_session_left_out(NULL), "");
    ci_session_free(d);
}

static void test_a_branch_that_cannot_be_copied_leaves_the_parent_as_it_was(void **state)
{
    struct h_limits lim = {.timeout_ms = 1000};
    ci_session *p = h_session(&lim), *b = (ci_session *)1;

    (void)state;
    char *cell = h_cell("snapshot_slow_to_pickle");

    h_expect(p, cell, NULL, "");
    free(cell);
    assert_int_equal(ci_session_fork(p, &b), CI_EIO);
    assert_null(b);
    assert_non_null(strstr(ci_session_errmsg(p), "ran past the session's timeout of 1000 ms"));
    h_expect(p, "kept", "42", "");
    ci_session_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_branch_has_the_parents_state_and_files, h_setup_alive),
        cmocka_unit_test_setup(test_sixteen_branches_each_with_its_own_result, h_setup_alive),
        cmocka_unit_test(test_the_parent_freed_first_and_restarts_on_their_own),
        cmocka_unit_test_setup(test_a_fork_during_a_run_or_of_a_dead_session_is_refused,
                               h_setup_alive),
        cmocka_unit_test(test_a_branch_that_cannot_be_copied_leaves_the_parent_as_it_was),
    };

    h_watchdog(600);
    return cmocka_run_group_tests_name("fork", tests, group_setup, h_group_teardown);
}
