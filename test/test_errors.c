/*
 * A cell that raises: status, exception name and message, a traceback
 * that shows the cell's frames and none of the worker's, and a session
 * that carries on.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    /* input() must fail at once; a hang would show as TIMEOUT, not a stall. */
    return h_group_session(&S, &(struct h_limits){.timeout_ms = 10000});
}

/* The worker's own frames and names must not show in a cell's traceback. */
static void assert_no_worker_frames(const char *tb)
{
    h_assert_not_contains(tb, "codeinterp");
    h_assert_not_contains(tb, "<frozen");
    h_assert_not_contains(tb, "<string>");
    h_assert_not_contains(tb, "runpy");
    h_assert_not_contains(tb, "interp.c");
    h_assert_not_contains(tb, "in _run");
    h_assert_not_contains(tb, "in run_cell");
    h_assert_not_contains(tb, "in _execute");
    h_assert_not_contains(tb, "in run\n");
    h_assert_not_contains(tb, "exec(");
}

static void assert_session_carries_on(void)
{
    h_expect(S, "after = 20\nafter + 1", "21", "");
}

static void test_zero_division_is_error_with_name_and_message(void **state)
{
    h_expect_error(S, "1/0", "ZeroDivisionError", "division by zero");
    assert_session_carries_on();
}

static void test_traceback_shows_cell_frame_and_line(void **state)
{
    ci_result *r = h_run_status(S, "a = 1\nb = 0\na/b", CI_STATUS_ERROR);
    const char *tb = ci_result_traceback(r);
    assert_non_null(tb);
    char *where = h_fmt("File \"<cell %d>\", line 3", ci_result_execution_count(r));
    h_assert_contains(tb, "Traceback (most recent call last):");
    h_assert_contains(tb, where);
    h_assert_contains(tb, "a/b");
    h_assert_contains(tb, "ZeroDivisionError: division by zero");
    free(where);
    ci_result_free(r);
}

static void test_traceback_has_no_worker_frames(void **state)
{
    ci_result *r = h_run_status(S, "1/0", CI_STATUS_ERROR);
    const char *tb = ci_result_traceback(r);
    assert_non_null(tb);
    h_assert_contains(tb, "1/0");
    assert_no_worker_frames(tb);
    /* Exactly one frame: the cell's. */
    const char *p = tb;
    int frames = 0;
    while ((p = strstr(p, "  File \"")) != NULL) {
        frames++;
        p++;
    }
    if (frames != 1)
        fail_msg("expected 1 frame, found %d in:\n%s", frames, tb);
    ci_result_free(r);
}

static void test_traceback_spans_cells(void **state)
{
    ci_result *r = h_run_status(S, "def boom():\n    x = 1\n    raise ValueError('inner')\n",
                                CI_STATUS_OK);
    int def_cell = ci_result_execution_count(r);
    ci_result_free(r);

    r = h_run_status(S, "y = 2\nboom()", CI_STATUS_ERROR);
    int call_cell = ci_result_execution_count(r);
    h_assert_str(ci_result_error_name(r), "ValueError");
    h_assert_str(ci_result_error_value(r), "inner");
    const char *tb = ci_result_traceback(r);
    char *outer = h_fmt("File \"<cell %d>\", line 2", call_cell);
    char *inner = h_fmt("File \"<cell %d>\", line 3, in boom", def_cell);
    h_assert_contains(tb, outer);
    h_assert_contains(tb, inner);
    h_assert_contains(tb, "boom()");
    h_assert_contains(tb, "raise ValueError('inner')");
    /* The outer frame comes first, as Python prints it. */
    assert_true(strstr(tb, outer) < strstr(tb, inner));
    assert_no_worker_frames(tb);
    free(outer);
    free(inner);
    ci_result_free(r);
}

static int ends_with(const char *s, const char *end)
{
    return s && strlen(s) >= strlen(end) && strcmp(s + strlen(s) - strlen(end), end) == 0;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* A failed lookup in pandas: the cell's line and the exception first,
 * pandas' frames folded (as a notebook's front end shows it). */
static void test_a_pandas_traceback_shows_the_cell_and_the_error_in_15_lines(void **state)
{
    ci_result *r = h_run_status(S, "import pandas as pd\npd.DataFrame({'a':[1]})['b']",
                                CI_STATUS_ERROR);
    const char *tb = ci_result_traceback(r), *full = ci_result_traceback_full(r);
    char *cell = h_fmt("  File \"<cell %d>\", line 2, in <module>\n"
                       "    pd.DataFrame({'a':[1]})['b']\n",
                       ci_result_execution_count(r));
    h_assert_str(ci_result_error_name(r), "KeyError");
    h_assert_contains(tb, cell);
    h_assert_contains(tb, "frames in pandas/core/indexes/base.py");
    h_assert_contains(tb, "The above exception was the direct cause of the following exception:");
    assert_true(ends_with(tb, "\nKeyError: 'b'\n"));
    if (count_lines(tb) > 15)
        fail_msg("%d lines:\n%s", count_lines(tb), tb);
    assert_no_worker_frames(tb);
    /* The whole one has every frame, as Python prints it. */
    h_assert_contains(full, cell);
    h_assert_contains(full, "pandas/core/frame.py\", line");
    h_assert_not_contains(full, "    ... ");
    assert_true(count_lines(full) > count_lines(tb));
    assert_no_worker_frames(full);
    free(cell);
    ci_result_free(r);
}

/* The worker's standard library directory. */
static char *worker_stdlib(void)
{
    ci_result *r = h_run_status(S, "import os\nos.path.dirname(os.__file__)", CI_STATUS_OK);
    const char *v = ci_result_value(r);
    assert_non_null(v);
    char *s = h_fmt("%.*s", (int)strlen(v) - 2, v + 1);
    ci_result_free(r);
    return s;
}

/* urlopen raises 15 frames deep in the standard library, in two parts:
 * each keeps the cell's frames and the one that raised. */
static void test_library_frames_are_folded_in_each_part_of_a_chain(void **state)
{
    ci_result *r = h_run_status(S, "import urllib.request\n"
                                   "urllib.request.urlopen('http://example.com')",
                                CI_STATUS_ERROR);
    const char *tb = ci_result_traceback(r);
    char *stdlib = worker_stdlib();
    char *cell = h_fmt("  File \"<cell %d>\", line 2, in <module>\n"
                       "    urllib.request.urlopen('http://example.com')\n"
                       "    ... 5 frames in urllib/request.py ...\n"
                       "  File \"%s/urllib/request.py\", line ",
                       ci_result_execution_count(r), stdlib);
    h_assert_str(ci_result_error_name(r), "URLError");
    h_assert_contains(tb, "Traceback (most recent call last):\n"
                          "    ... 8 frames in urllib/request.py, http/client.py, socket.py ...\n"
                          "  File \"");
    h_assert_contains(tb, "socket.py\", line ");
    h_assert_contains(tb, "PermissionError: network access is disabled in this sandbox\n");
    h_assert_contains(tb, cell);
    h_assert_contains(tb, "urllib.error.URLError: <urlopen error network access is disabled in "
                          "this sandbox>\n");
    assert_no_worker_frames(tb);
    assert_no_worker_frames(ci_result_traceback_full(r));
    if (count_lines(tb) > 20)
        fail_msg("%d lines:\n%s", count_lines(tb), tb);
    free(cell);
    free(stdlib);
    ci_result_free(r);
}

static void test_a_traceback_with_nothing_to_fold_is_its_own_full_one(void **state)
{
    ci_result *r = h_run_status(S, "def g():\n    raise ValueError('x')\ng()", CI_STATUS_ERROR);
    assert_non_null(ci_result_traceback(r));
    assert_ptr_equal(ci_result_traceback_full(r), ci_result_traceback(r));
    ci_result_free(r);
    r = h_run_status(S, "'fine'", CI_STATUS_OK);
    assert_null(ci_result_traceback(r));
    assert_null(ci_result_traceback_full(r));
    ci_result_free(r);
}

static void test_syntax_error_is_error_and_runs_nothing(void **state)
{
    ci_result *r = h_run_status(S, "syn_ran = 1\nx = (", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "SyntaxError");
    h_assert_contains(ci_result_error_value(r), "was never closed");
    const char *tb = ci_result_traceback(r);
    if (tb) {
        char *where = h_fmt("File \"<cell %d>\", line 2", ci_result_execution_count(r));
        h_assert_contains(tb, where);
        assert_no_worker_frames(tb);
        free(where);
    }
    ci_result_free(r);

    h_expect_error(S, "syn_ran", "NameError", NULL);
    assert_session_carries_on();
}

static void test_indentation_error_is_reported(void **state)
{
    h_expect_error(S, "if True:\nx = 1", "IndentationError", NULL);
    assert_session_carries_on();
}

static void test_system_exit_is_error_and_worker_survives(void **state)
{
    int pid = ci_session_pid(S);
    h_expect_error(S, "raise SystemExit(3)", "SystemExit", "3");
    h_expect_error(S, "import sys\nsys.exit('bye')", "SystemExit", "bye");

    assert_int_equal(ci_session_pid(S), pid);
    assert_session_carries_on();
}

static void test_keyboard_interrupt_raised_by_cell_is_error(void **state)
{
    h_expect_error(S, "raise KeyboardInterrupt", "KeyboardInterrupt", NULL);
    assert_session_carries_on();
}

static void test_input_raises_stdin_not_implemented_at_once(void **state)
{
    int64_t t0 = h_now_ms();
    ci_result *r = h_run_status(S, "input('name? ')", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "StdinNotImplementedError"); /* test_input.c: more */
    assert_true(h_now_ms() - t0 < 8000);
    ci_result_free(r);

    r = h_run_status(S, "import sys\nsys.stdin.read()", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "''");
    ci_result_free(r);
    assert_session_carries_on();
}

/* Exceptions whose own methods raise while the runner reports them: the
 * cell's fate is still reported, named from its type, and the worker and
 * the next cell are not touched. */
static void test_hostile_exceptions_are_reported_and_the_worker_lives(void **state)
{
    ci_result *r;
    char *cell;

    /* str() raises a KeyboardInterrupt of a non-ASCII, long name. */
    cell = h_cell("errors_str_raises_long_keyboard_interrupt");
    r = h_run_status(S, cell, CI_STATUS_MEMORY);
    h_assert_str(ci_result_error_name(r), "MemoryError");
    ci_result_free(r);
    free(cell);
    /* A metaclass that refuses __qualname__, and a __class__ that raises. */
    cell = h_cell("errors_metaclass_refuses_qualname");
    h_expect_error(S, cell, "X", "x");
    free(cell);
    cell = h_cell("errors_class_property_raises");
    h_expect_error(S, cell, "P", "p");
    free(cell);
    /* A display before such an exception is this cell's, not the next's. */
    cell = h_cell("errors_display_then_str_raises");
    r = h_run_status(S, cell, CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "Q");
    assert_int_equal(ci_result_output_count(r), 1);
    ci_result_free(r);
    free(cell);
    r = h_run_status(S, "1 + 1", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "2");
    assert_int_equal(ci_result_output_count(r), 0);
    ci_result_free(r);
    assert_session_carries_on();
}

static void test_earlier_state_survives_an_error(void **state)
{
    h_expect(S, "kept = [1, 2]", NULL, "");
    h_expect_error(S, "kept.append(3)\nraise RuntimeError('x')\nkept.append(4)", "RuntimeError",
                   NULL);
    h_expect(S, "kept", "[1, 2, 3]", "");
}

static void test_custom_exception_class_name(void **state)
{
    h_expect_error(S, "class MyErr(Exception):\n    pass\nraise MyErr('custom', 2)", "MyErr",
                   "('custom', 2)");
}

static void test_exception_whose_str_fails_is_still_reported(void **state)
{
    char *cell = h_cell("errors_str_raises");
    h_expect_error(S, cell, "BadStr", NULL);
    free(cell);
    assert_session_carries_on();
}

static void test_lone_surrogate_in_message_gives_valid_utf8(void **state)
{
    ci_result *r = h_run_status(S, "raise ValueError('bad \\udcff end')", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "ValueError");
    const char *v = ci_result_error_value(r);
    assert_non_null(v);
    assert_true(h_utf8_valid(v, strlen(v)));
    h_assert_contains(v, "bad ");
    const char *tb = ci_result_traceback(r);
    if (tb)
        assert_true(h_utf8_valid(tb, strlen(tb)));
    ci_result_free(r);
    assert_session_carries_on();
}

static void test_lone_surrogate_in_repr_gives_valid_utf8(void **state)
{
    char *cell = h_cell("errors_lone_surrogate_repr");
    ci_result *r = h_run(S, cell);
    free(cell);
    /* Either the repr comes back as valid UTF-8 (the surrogate replaced)
     * or the cell fails cleanly; the worker must not die of it. */
    ci_status st = ci_result_status(r);
    if (st == CI_STATUS_OK) {
        const char *v = ci_result_value(r);
        assert_non_null(v);
        assert_true(h_utf8_valid(v, strlen(v)));
        assert_int_equal(v[0], 'r');
    } else if (st != CI_STATUS_ERROR) {
        h_dump(r);
        fail_msg("status %s", h_status_name(st));
    }
    ci_result_free(r);
    assert_session_carries_on();
}

static void test_exception_in_repr_is_shown_and_the_cell_succeeds(void **state)
{
    /* As IPython's display hook: the representation that raised is left
     * out and its traceback goes to stderr; the cell itself succeeded. */
    char *cell = h_cell("errors_repr_raises");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_null(ci_result_value(r));
    h_assert_contains(ci_result_stderr(r, NULL), "raise RuntimeError('bad repr')");
    h_assert_contains(ci_result_stderr(r, NULL), "RuntimeError: bad repr\n");
    assert_int_equal(ci_result_output_count(r), 0);
    ci_result_free(r);
    assert_session_carries_on();
}

static void test_deep_recursion_is_recursion_error(void **state)
{
    ci_result *r = h_run_status(S, "def f(n):\n    return f(n + 1)\nf(0)", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "RecursionError");
    h_assert_contains(ci_result_error_value(r), "maximum recursion depth exceeded");
    ci_result_free(r);
    assert_session_carries_on();
}

static void test_chained_exception_is_named_by_the_last(void **state)
{
    char *cell = h_cell("errors_chained");
    ci_result *r = h_run_status(S, cell, CI_STATUS_ERROR);
    free(cell);
    h_assert_str(ci_result_error_name(r), "TypeError");
    h_assert_str(ci_result_error_value(r), "second");
    const char *tb = ci_result_traceback(r);
    h_assert_contains(tb, "KeyError: 'k'");
    h_assert_contains(tb, "During handling of the above exception, another exception occurred:");
    assert_no_worker_frames(tb);
    ci_result_free(r);
}

static void test_stderr_stays_clean_of_the_traceback(void **state)
{
    ci_result *r = h_run_status(S, "1/0", CI_STATUS_ERROR);
    size_t len = 99;
    ci_result_stderr(r, &len);
    assert_int_equal(len, 0);
    ci_result_stdout(r, &len);
    assert_int_equal(len, 0);
    ci_result_free(r);
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_zero_division_is_error_with_name_and_message, h_setup_alive),
        cmocka_unit_test_setup(test_traceback_shows_cell_frame_and_line, h_setup_alive),
        cmocka_unit_test_setup(test_traceback_has_no_worker_frames, h_setup_alive),
        cmocka_unit_test_setup(test_traceback_spans_cells, h_setup_alive),
        cmocka_unit_test_setup(test_a_pandas_traceback_shows_the_cell_and_the_error_in_15_lines,
                               h_setup_alive),
        cmocka_unit_test_setup(test_library_frames_are_folded_in_each_part_of_a_chain,
                               h_setup_alive),
        cmocka_unit_test_setup(test_a_traceback_with_nothing_to_fold_is_its_own_full_one,
                               h_setup_alive),
        cmocka_unit_test_setup(test_syntax_error_is_error_and_runs_nothing, h_setup_alive),
        cmocka_unit_test_setup(test_indentation_error_is_reported, h_setup_alive),
        cmocka_unit_test_setup(test_system_exit_is_error_and_worker_survives, h_setup_alive),
        cmocka_unit_test_setup(test_keyboard_interrupt_raised_by_cell_is_error, h_setup_alive),
        cmocka_unit_test_setup(test_input_raises_stdin_not_implemented_at_once, h_setup_alive),
        cmocka_unit_test_setup(test_earlier_state_survives_an_error, h_setup_alive),
        cmocka_unit_test_setup(test_custom_exception_class_name, h_setup_alive),
        cmocka_unit_test_setup(test_exception_whose_str_fails_is_still_reported, h_setup_alive),
        cmocka_unit_test_setup(test_lone_surrogate_in_message_gives_valid_utf8, h_setup_alive),
        cmocka_unit_test_setup(test_lone_surrogate_in_repr_gives_valid_utf8, h_setup_alive),
        cmocka_unit_test_setup(test_exception_in_repr_is_shown_and_the_cell_succeeds, h_setup_alive),
        cmocka_unit_test_setup(test_deep_recursion_is_recursion_error, h_setup_alive),
        cmocka_unit_test_setup(test_chained_exception_is_named_by_the_last, h_setup_alive),
        cmocka_unit_test_setup(test_stderr_stays_clean_of_the_traceback, h_setup_alive),
        cmocka_unit_test_setup(test_hostile_exceptions_are_reported_and_the_worker_lives,
                               h_setup_alive),
    };
    return cmocka_run_group_tests_name("errors", tests, group_setup, h_group_teardown);
}
