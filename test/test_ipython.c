/*
 * Cells as a Jupyter kernel runs them, through the real worker: IPython's
 * syntax and magics, what the sandbox refuses and how it says so,
 * IPython.display's messages, the history, top-level await, input().
 * test/python/test_shell.py tests the same layer outside a worker, in
 * more detail; test/jupyter/ compares it with ipykernel.
 */
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, NULL);
}

/* Asserts that @text matches the extended regular expression @re. */
static void assert_matches(const char *text, const char *re)
{
    regex_t rx;
    assert_int_equal(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
    int rc = regexec(&rx, text ? text : "", 0, NULL, 0);
    regfree(&rx);
    if (rc != 0)
        fail_msg("\"%s\" does not match /%s/", text ? text : "(null)", re);
}

static void test_a_magic_first_and_a_figure_in_the_same_cell(void **state)
{
    ci_result *r = h_run_status(S,
                                "%matplotlib inline\n"
                                "import matplotlib.pyplot as plt\n"
                                "plt.plot([1, 3, 2]);",
                                CI_STATUS_OK);
    uint32_t w = 0, h = 0;
    h_png_size(r, h_find_mime(r, "image/png", 0), &w, &h);
    assert_true(w > 100 && h > 100);
    assert_int_equal(ci_result_output_type(r, 0), CI_OUTPUT_DISPLAY_DATA);
    ci_result_free(r);
}

static void test_timeit_and_time_print_as_ipython(void **state)
{
    ci_result *r = h_run_status(S, "%timeit -n 20 -r 3 sum(range(100))", CI_STATUS_OK);
    /* IPython prints 3 significant digits with %g: 999.6 ns is "1e+03 ns". */
    assert_matches(ci_result_stdout(r, NULL),
                   "^[0-9.]+(e\\+0[0-9])? (ns|µs|ms) ± [0-9.]+(e\\+0[0-9])? (ns|µs|ms) per loop "
                   "\\(mean ± std\\. dev\\. of 3 runs, 20 loops each\\)\n$");
    ci_result_free(r);
    r = h_run_status(S, "%%time\nx = sum(range(10))\n", CI_STATUS_OK);
    assert_matches(ci_result_stdout(r, NULL), "^CPU times: user .*\nWall time: .*\n$");
    ci_result_free(r);
}

static void test_shell_commands_and_installs_name_the_policy(void **state)
{
    static const char *const shell[] = {"!ls", "files = !ls", "%%bash\nls\n", "%system ls"};
    for (size_t i = 0; i < sizeof shell / sizeof *shell; i++) {
        ci_result *r = h_run_status(S, shell[i], CI_STATUS_ERROR);
        h_assert_str(ci_result_error_name(r), "PermissionError");
        h_assert_contains(ci_result_error_value(r),
                          "shell commands are disabled in this sandbox (no new processes); "
                          "use Python instead: os.listdir, pathlib, shutil, open");
        ci_result_free(r);
    }
    ci_result *r = h_run_status(S, "%conda install seaborn", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "PermissionError");
    h_assert_contains(ci_result_error_value(r), "installing packages is disabled in this sandbox");
    assert_matches(ci_result_error_value(r), "these are installed: .*numpy [0-9]");
    ci_result_free(r);
    /* %pip is pip's, from a wheelhouse this session lacks: printed, as pip
     * prints its errors, and the cell goes on. */
    r = h_run_status(S, "%pip install ci-absent", CI_STATUS_OK);
    h_assert_contains(ci_result_stderr(r, NULL),
                      "package installation is not enabled in this session (no wheelhouse)");
    assert_matches(ci_result_stderr(r, NULL), "these are installed: .*numpy [0-9]");
    ci_result_free(r);
}

static void test_an_unknown_magic_is_a_usage_error(void **state)
{
    ci_result *r = h_run_status(S, "%nosuchmagic", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "UsageError");
    h_assert_str(ci_result_error_value(r), "Line magic function `%nosuchmagic` not found.");
    ci_result_free(r);
}

static void test_ipython_display_of_a_frame_is_html(void **state)
{
    ci_result *r = h_run_status(S,
                                "from IPython.display import display\n"
                                "import pandas as pd\n"
                                "display(pd.DataFrame({'a': [1, 2]}))",
                                CI_STATUS_OK);
    size_t i = h_find_mime(r, "text/html", 0);
    assert_int_equal(ci_result_output_type(r, i), CI_OUTPUT_DISPLAY_DATA);
    h_assert_contains((const char *)ci_result_output_data(r, i, NULL), "<table");
    ci_result_free(r);
}

static void test_a_display_handle_update_names_its_display(void **state)
{
    ci_result *r = h_run_status(S,
                                "from IPython.display import display, clear_output\n"
                                "h = display('first', display_id=True)\n"
                                "h.update('second')\n"
                                "clear_output(wait=True)",
                                CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 3);
    h_assert_output(r, 0, "text/plain", "'first'", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/plain", "'second'", CI_OUTPUT_UPDATE_DISPLAY_DATA, 1);
    const char *id = ci_result_output_display_id(r, 0);
    assert_non_null(id);
    assert_int_equal(strlen(id), 32);
    h_assert_str(ci_result_output_display_id(r, 1), id);
    assert_int_equal(ci_result_output_type(r, 2), CI_OUTPUT_CLEAR_OUTPUT);
    assert_int_equal(ci_result_output_wait(r, 2), 1);
    h_assert_str(ci_result_output_mime(r, 2), "");
    ci_result_free(r);
}

static void test_top_level_await_keeps_a_task_across_cells(void **state)
{
    h_expect(S,
             "import asyncio\n"
             "async def later():\n"
             "    await asyncio.sleep(0.01)\n"
             "    return 42\n"
             "task = asyncio.ensure_future(later())\n"
             "await asyncio.sleep(0)",
             NULL, "");
    h_expect(S, "await task", "42", "");
}

static void test_history_as_ipython_keeps_it(void **state)
{
    ci_session *s = h_session(NULL);
    h_expect(s, "6 * 7", "42", "");
    h_expect(s, "'b'", "'b'", "");
    h_expect(s, "_, __, Out[1], _1, In[1], _i1, _i", "('b', 42, 42, 42, '6 * 7', '6 * 7', \"'b'\")",
             "");
    ci_session_free(s);
}

static void test_input_without_a_host_fails_at_once(void **state)
{
    ci_result *r = h_run_status(S, "input('name? ')", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "StdinNotImplementedError");
    h_assert_contains(ci_result_error_value(r), "cannot read from a keyboard in this sandbox");
    ci_result_free(r);
}

static void test_pandas_sees_a_kernel(void **state)
{
    h_expect(S,
             "import pandas as pd\n"
             "pd.get_option('display.max_columns'), pd.get_option('display.width')",
             "(20, 80)", "");
}

static void test_ipythons_directory_is_the_sessions(void **state)
{
    /* Not the zygote's warm-up HOME, which is gone: %load_ext puts its
     * extensions directory first on sys.path while it imports. */
    h_expect(S,
             "import os\n"
             "ip = get_ipython()\n"
             "(ip.ipython_dir == os.environ['HOME'] + '/.ipython',\n"
             " ip.extension_manager.ipython_extension_dir.startswith(os.environ['HOME'] + '/'),\n"
             " ip.profile_dir)",
             "(True, True, None)", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_magic_first_and_a_figure_in_the_same_cell),
        cmocka_unit_test(test_timeit_and_time_print_as_ipython),
        cmocka_unit_test(test_shell_commands_and_installs_name_the_policy),
        cmocka_unit_test(test_an_unknown_magic_is_a_usage_error),
        cmocka_unit_test(test_ipython_display_of_a_frame_is_html),
        cmocka_unit_test(test_a_display_handle_update_names_its_display),
        cmocka_unit_test(test_top_level_await_keeps_a_task_across_cells),
        cmocka_unit_test(test_history_as_ipython_keeps_it),
        cmocka_unit_test(test_input_without_a_host_fails_at_once),
        cmocka_unit_test(test_pandas_sees_a_kernel),
        cmocka_unit_test(test_ipythons_directory_is_the_sessions),
    };
    return cmocka_run_group_tests_name("ipython", tests, group_setup, h_group_teardown);
}
