/*
 * A session is a notebook: state kept between cells, the value of a
 * cell's last expression, execution counts, restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, NULL);
}

static void test_state_persists_across_cells(void **state)
{
    h_expect(S, "x = 5", NULL, "");
    h_expect(S, "def double(v):\n    return 2 * v\n", NULL, "");
    h_expect(S, "import math\ny = double(x) + 1", NULL, "");
    h_expect(S, "y, math.floor(2.5)", "(11, 2)", "");
}

static void test_value_is_repr_of_last_expression(void **state)
{
    h_expect(S, "x = 6 * 7\nx", "42", "");
    h_expect(S, "'abc'", "'abc'", "");
    h_expect(S, "[1, 'a', None, 2.5]", "[1, 'a', None, 2.5]", "");
    h_expect(S, "{'k': (1,)}", "{'k': (1,)}", "");
    /* repr, not str. */
    h_expect(S, "'a\\nb'", "'a\\nb'", "");
}

static void test_value_is_only_the_last_expression(void **state)
{
    h_expect(S, "1\n2\n3", "3", "");
    h_expect(S, "print('hi')\n7", "7", "hi\n");
}

static void test_multiline_last_expression(void **state)
{
    h_expect(S, "(1 +\n 2 +\n 3)", "6", "");
    h_expect(S, "[i * i\n for i in range(4)]", "[0, 1, 4, 9]", "");
}

static void test_trailing_semicolon_suppresses_value(void **state)
{
    h_expect(S, "42;", NULL, "");
    h_expect(S, "z = 1\nz + 1;", NULL, "");
    h_expect(S, "42;   ", NULL, "");
    h_expect(S, "42;\n\n", NULL, "");
}

static void test_trailing_semicolon_with_comment_suppresses_value(void **state)
{
    h_expect(S, "42;  # no value please", NULL, "");
    h_expect(S, "42; # one\n# two\n", NULL, "");
}

static void test_semicolon_in_string_or_comment_does_not_suppress(void **state)
{
    h_expect(S, "'a;'", "'a;'", "");
    h_expect(S, "43  # ends with ;", "43", "");
}

static void test_semicolon_suppressed_cell_still_runs(void **state)
{
    h_expect(S, "sc = 9; sc * 2;", NULL, "");
    h_expect(S, "sc", "9", "");
}

static void test_none_gives_null_value(void **state)
{
    h_expect(S, "None", NULL, "");
    h_expect(S, "print('p')", NULL, "p\n");
    h_expect(S, "[].append(1)", NULL, "");
}

static void test_statement_only_cell_gives_null_value(void **state)
{
    h_expect(S, "w = 3", NULL, "");
    h_expect(S, "def f():\n    return 1\n", NULL, "");
    h_expect(S, "for i in range(3):\n    i\n", NULL, "");
    h_expect(S, "", NULL, "");
    h_expect(S, "# just a comment\n", NULL, "");
}

static void test_utf8_output_arrives_as_utf8_bytes(void **state)
{
    ci_result *r = h_run_status(S, "print('\xe2\x9c\x93')", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(o, "\xe2\x9c\x93\n", 4);
    ci_result_free(r);
}

static void test_utf8_value(void **state)
{
    h_expect(S, "'\xc3\xa9t\xc3\xa9 \xe2\x9c\x93'", "'\xc3\xa9t\xc3\xa9 \xe2\x9c\x93'", "");
    h_expect(S, "len('\xe2\x9c\x93')", "1", "");
}

static void test_two_sessions_are_independent(void **state)
{
    ci_session *other = h_session(NULL);
    h_expect(S, "only_in_S = 1", NULL, "");
    h_expect(other, "only_in_other = 2", NULL, "");

    h_expect_error(other, "only_in_S", "NameError", "name 'only_in_S' is not defined");
    h_expect_error(S, "only_in_other", "NameError", NULL);

    assert_int_not_equal(ci_session_pid(S), ci_session_pid(other));
    assert_string_not_equal(ci_session_workspace(S), ci_session_workspace(other));
    ci_session_free(other);
    h_expect(S, "only_in_S", "1", "");
}

static int count_of(ci_session *s, const char *code, ci_status want)
{
    ci_result *r = h_run_status(s, code, want);
    int n = ci_result_execution_count(r);
    ci_result_free(r);
    return n;
}

static void test_execution_count_counts_from_1(void **state)
{
    ci_session *s = h_session(NULL);
    assert_int_equal(count_of(s, "a = 1", CI_STATUS_OK), 1);
    assert_int_equal(count_of(s, "a", CI_STATUS_OK), 2);
    assert_int_equal(count_of(s, "a + 1", CI_STATUS_OK), 3);
    /* A failing cell has its number too, as in Jupyter. */
    assert_int_equal(count_of(s, "1/0", CI_STATUS_ERROR), 4);
    assert_int_equal(count_of(s, "a", CI_STATUS_OK), 5);
    ci_session_free(s);
}

static void test_restart_resets_count_and_state_but_keeps_files(void **state)
{
    ci_session *s = h_session(NULL);
    h_expect(s, "kept_var = 1", NULL, "");
    h_expect(s, "open('kept.txt', 'w').write('file survives')", "13", "");
    assert_int_equal(ci_session_put_file(s, "put.bin", "p\0q", 3), CI_OK);
    int pid = ci_session_pid(s);
    const char *ws_before = ci_session_workspace(s);
    char *ws = strdup(ws_before);

    assert_int_equal(ci_session_restart(s), CI_OK);
    assert_true(ci_session_pid(s) > 0);
    assert_int_not_equal(ci_session_pid(s), pid);
    assert_string_equal(ci_session_workspace(s), ws);

    ci_result *r = h_run_status(s, "kept_var", CI_STATUS_ERROR);
    assert_int_equal(ci_result_execution_count(r), 1);
    h_assert_str(ci_result_error_name(r), "NameError");
    ci_result_free(r);

    r = h_run_status(s, "open('kept.txt').read(), open('put.bin', 'rb').read()",
                     CI_STATUS_OK);
    assert_int_equal(ci_result_execution_count(r), 2);
    h_assert_str(ci_result_value(r), "('file survives', b'p\\x00q')");
    ci_result_free(r);
    free(ws);
    ci_session_free(s);
}

static void test_restart_clears_imported_modules_state(void **state)
{
    ci_session *s = h_session(NULL);
    h_expect(s, "import json\njson.marker = 'set'", NULL, "");
    h_expect(s, "json.marker", "'set'", "");
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "import json\nhasattr(json, 'marker')", "False", "");
    ci_session_free(s);
}

static void test_preloaded_libraries_import(void **state)
{
    h_expect(S,
             "import numpy as np, pandas as pd, matplotlib\n"
             "int(np.arange(5).sum()), int(pd.DataFrame({'a': [1, 2]})['a'].sum())",
             "(10, 3)", "");
}

static void test_matplotlib_saves_a_png_in_the_workspace(void **state)
{
    h_expect_cell(S, "state_savefig_plot_png", "b'\\x89PNG\\r\\n\\x1a\\n'", "");
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(ci_session_get_file(S, "plot.png", &data, &len), CI_OK);
    assert_true(len > 8);
    assert_memory_equal(data, "\x89PNG\r\n\x1a\n", 8);
    ci_free(data);
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_persists_across_cells),
        cmocka_unit_test(test_value_is_repr_of_last_expression),
        cmocka_unit_test(test_value_is_only_the_last_expression),
        cmocka_unit_test(test_multiline_last_expression),
        cmocka_unit_test(test_trailing_semicolon_suppresses_value),
        cmocka_unit_test(test_trailing_semicolon_with_comment_suppresses_value),
        cmocka_unit_test(test_semicolon_in_string_or_comment_does_not_suppress),
        cmocka_unit_test(test_semicolon_suppressed_cell_still_runs),
        cmocka_unit_test(test_none_gives_null_value),
        cmocka_unit_test(test_statement_only_cell_gives_null_value),
        cmocka_unit_test(test_utf8_output_arrives_as_utf8_bytes),
        cmocka_unit_test(test_utf8_value),
        cmocka_unit_test(test_two_sessions_are_independent),
        cmocka_unit_test(test_execution_count_counts_from_1),
        cmocka_unit_test(test_restart_resets_count_and_state_but_keeps_files),
        cmocka_unit_test(test_restart_clears_imported_modules_state),
        cmocka_unit_test(test_preloaded_libraries_import),
        cmocka_unit_test(test_matplotlib_saves_a_png_in_the_workspace),
    };
    return cmocka_run_group_tests_name("state", tests, group_setup, h_group_teardown);
}
