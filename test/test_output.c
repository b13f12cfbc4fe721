/*
 * What a cell writes to descriptors 1 and 2, from Python or from C, and
 * the output cap. The group's session keeps 4096 bytes of each stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "helpers.h"

#define LIMIT 4096

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, &(struct h_limits){.output = LIMIT});
}

static void assert_stream(const char *got, size_t got_len, const void *want, size_t want_len)
{
    if (got_len != want_len || memcmp(got, want, want_len) != 0)
        fail_msg("stream is %zu bytes \"%.200s\", expected %zu bytes \"%.200s\"", got_len,
                 got, want_len, (const char *)want);
}

static void expect_streams(const char *code, const char *out, const char *err)
{
    ci_result *r = h_run_status(S, code, CI_STATUS_OK);
    size_t olen = 0, elen = 0;
    const char *o = ci_result_stdout(r, &olen);
    const char *e = ci_result_stderr(r, &elen);
    assert_stream(o, olen, out, strlen(out));
    assert_stream(e, elen, err, strlen(err));
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_stdout_and_stderr_are_separate(void **state)
{
    expect_streams("import sys\nprint('out')\nprint('err', file=sys.stderr)\nprint('out2')",
                   "out\nout2\n", "err\n");
}

static void test_print_without_newline_is_flushed_at_cell_end(void **state)
{
    expect_streams("import sys\nprint('no newline', end='')\nsys.stderr.write('e')",
                   "no newline", "e");
}

static void test_os_write_to_fd_1_and_2_is_captured(void **state)
{
    expect_streams("import os\nos.write(1, b'raw')\nos.write(2, b'eraw');", "raw", "eraw");
}

static void test_python_and_fd_writes_keep_their_order(void **state)
{
    expect_streams("import os\nprint('a')\nos.write(1, b'b\\n')\nprint('c')", "a\nb\nc\n", "");
}

static void test_c_level_printf_is_captured(void **state)
{
    expect_streams("import ctypes\nlibc = ctypes.CDLL(None)\n"
                   "libc.printf(b'from C %d\\n', 42)\nlibc.fflush(None);",
                   "from C 42\n", "");
}

static void test_c_level_write_to_stderr_is_captured(void **state)
{
    expect_streams("import ctypes\nlibc = ctypes.CDLL(None)\n"
                   "libc.write(2, b'c-err', 5);",
                   "", "c-err");
}

static void test_output_does_not_carry_over_to_next_cell(void **state)
{
    expect_streams("print('first')", "first\n", "");
    expect_streams("pass", "", "");
}

static void test_output_of_a_failing_cell_is_kept(void **state)
{
    ci_result *r = h_run_status(S, "import sys\nprint('before')\nprint('e1', file=sys.stderr)\n1/0",
                                CI_STATUS_ERROR);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_stream(o, len, "before\n", 7);
    o = ci_result_stderr(r, &len);
    /* The traceback goes to the result, not to the cell's stderr. */
    assert_stream(o, len, "e1\n", 3);
    ci_result_free(r);
}

static void test_non_utf8_bytes_arrive_exactly(void **state)
{
    ci_result *r = h_run_status(S, "import os\nos.write(1, b'\\xff\\xfe\\x00abc')\n"
                                   "os.write(2, b'\\x00\\x80');",
                                CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_stream(o, len, "\xff\xfe\0abc", 6);
    assert_int_equal(o[6], '\0');
    o = ci_result_stderr(r, &len);
    assert_stream(o, len, "\0\x80", 2);
    ci_result_free(r);
}

static void test_small_output_is_not_truncated(void **state)
{
    ci_result *r = h_run_status(S, "print('x' * 100)", CI_STATUS_OK);
    size_t len = 0;
    ci_result_stdout(r, &len);
    assert_int_equal(len, 101);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_output_exactly_at_limit_is_not_truncated(void **state)
{
    ci_result *r = h_run_status(S, "import sys\nsys.stdout.write('q' * 4096);", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, LIMIT);
    assert_int_equal(o[0], 'q');
    assert_int_equal(o[LIMIT - 1], 'q');
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static int all_bytes_are(const char *p, size_t len, char c)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != c)
            return 0;
    return 1;
}

/* A stream of @c's cut at the limit: its head and tail, LIMIT / 2 bytes
 * each (the tail may end with the stream's line break), and one marker
 * line between them (test_cut.c reads the marker). */
static void assert_cut_stream(const char *p, size_t len, char c)
{
    const char *marker = p + LIMIT / 2, *tail;
    assert_true(len > LIMIT && len < LIMIT + 400);
    assert_true(all_bytes_are(p, LIMIT / 2, c));
    assert_memory_equal(marker, "\n[... ", 6);
    tail = strchr(marker + 1, '\n') + 1;
    assert_int_equal(p + len - tail, LIMIT / 2);
    assert_true(all_bytes_are(tail, LIMIT / 2 - 1, c));
    assert_true(tail[LIMIT / 2 - 1] == c || tail[LIMIT / 2 - 1] == '\n');
}

static void test_megabyte_of_stdout_is_cut_at_limit(void **state)
{
    ci_result *r = h_run_status(S, "print('x' * 1000000)", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_cut_stream(o, len, 'x');
    assert_int_equal(o[len], '\0');
    assert_int_not_equal(ci_result_truncated(r), 0);
    o = ci_result_stderr(r, &len);
    assert_int_equal(len, 0);
    ci_result_free(r);
}

static void test_stderr_is_capped_separately(void **state)
{
    ci_result *r = h_run_status(S, "import sys\nsys.stderr.write('e' * 1000000)\nprint('small');",
                                CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stderr(r, &len);
    assert_cut_stream(o, len, 'e');
    o = ci_result_stdout(r, &len);
    assert_stream(o, len, "small\n", 6);
    assert_int_not_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static long max_rss_kib(void)
{
    struct rusage ru;
    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

static void test_200_mb_of_output_is_not_buffered_by_the_host(void **state)
{
    long before = max_rss_kib();
    char *cell = h_cell("output_200_mb");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_cut_stream(o, len, 'y');
    assert_int_not_equal(ci_result_truncated(r), 0);
    h_assert_str(ci_result_value(r), "'done'");
    ci_result_free(r);
    long grew = max_rss_kib() - before;
    if (grew > 64 * 1024)
        fail_msg("the host's peak RSS grew by %ld KiB while the cell wrote 200 MB", grew);
}

static void test_both_streams_flooded_at_once_do_not_deadlock(void **state)
{
    char *cell = h_cell("output_both_streams_flooded");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_cut_stream(o, len, 'o');
    o = ci_result_stderr(r, &len);
    assert_cut_stream(o, len, 'e');
    h_assert_str(ci_result_value(r), "'ok'");
    ci_result_free(r);
}

/* A text the worker cut: its head and its tail (LIMIT / 2 - 160 bytes
 * each, as lib/worker/outputs.py cuts), of @c after the first @skip
 * bytes and before the last @skip, and between them the line that counts
 * what was left out of @total bytes. */
static void assert_cut_text(const char *v, char c, size_t skip, size_t total, const char *what)
{
    size_t half = (LIMIT - 320) / 2, n = strlen(v);
    char want[200];
    assert_true(n <= LIMIT);
    assert_true(all_bytes_are(v + skip, half - skip, c));
    snprintf(want, sizeof want,
             "\n[... %zu bytes (0 lines) left out: %s passed the output limit of 4 KiB ...]\n",
             total - 2 * half, what);
    assert_memory_equal(v + half, want, strlen(want));
    assert_int_equal(n, 2 * half + strlen(want));
    assert_true(all_bytes_are(v + n - half, half - skip, c));
}

static void test_long_repr_value_is_cut_at_limit_and_flagged(void **state)
{
    ci_result *r = h_run_status(S, "'z' * 10000", CI_STATUS_OK);
    const char *v = ci_result_value(r);
    assert_non_null(v);
    assert_int_equal(v[0], '\'');
    assert_cut_text(v, 'z', 1, 10002, "the value");
    assert_int_equal(v[strlen(v) - 1], '\'');
    assert_int_not_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_long_utf8_value_is_cut_on_a_character_boundary(void **state)
{
    /* 'é' is 2 bytes: the repr is 1 + 2*5000 + 1 bytes, its head and its
     * tail cut on a character boundary each. */
    ci_result *r = h_run_status(S, "'\xc3\xa9' * 5000", CI_STATUS_OK);
    const char *v = ci_result_value(r);
    assert_non_null(v);
    size_t n = strlen(v);
    assert_true(n <= LIMIT);
    assert_true(h_utf8_valid(v, n));
    h_assert_contains(v, " left out: the value passed the output limit of 4 KiB ...]\n");
    assert_int_not_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_value_under_limit_is_not_flagged(void **state)
{
    ci_result *r = h_run_status(S, "'z' * 4000", CI_STATUS_OK);
    assert_int_equal(strlen(ci_result_value(r)), 4002);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_long_error_message_is_cut_and_flagged(void **state)
{
    ci_result *r = h_run_status(S, "raise ValueError('m' * 10000)", CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "ValueError");
    const char *v = ci_result_error_value(r);
    assert_non_null(v);
    assert_cut_text(v, 'm', 0, 10000, "the error message");
    const char *tb = ci_result_traceback(r);
    assert_non_null(tb);
    assert_true(strlen(tb) <= LIMIT);
    assert_int_not_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_output_from_a_cell_thread_is_captured(void **state)
{
    expect_streams("import threading\n"
                   "t = threading.Thread(target=lambda: print('from thread'))\n"
                   "t.start(); t.join()",
                   "from thread\n", "");
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_stdout_and_stderr_are_separate, h_setup_alive),
        cmocka_unit_test_setup(test_print_without_newline_is_flushed_at_cell_end, h_setup_alive),
        cmocka_unit_test_setup(test_os_write_to_fd_1_and_2_is_captured, h_setup_alive),
        cmocka_unit_test_setup(test_python_and_fd_writes_keep_their_order, h_setup_alive),
        cmocka_unit_test_setup(test_c_level_printf_is_captured, h_setup_alive),
        cmocka_unit_test_setup(test_c_level_write_to_stderr_is_captured, h_setup_alive),
        cmocka_unit_test_setup(test_output_does_not_carry_over_to_next_cell, h_setup_alive),
        cmocka_unit_test_setup(test_output_of_a_failing_cell_is_kept, h_setup_alive),
        cmocka_unit_test_setup(test_non_utf8_bytes_arrive_exactly, h_setup_alive),
        cmocka_unit_test_setup(test_small_output_is_not_truncated, h_setup_alive),
        cmocka_unit_test_setup(test_output_exactly_at_limit_is_not_truncated, h_setup_alive),
        cmocka_unit_test_setup(test_megabyte_of_stdout_is_cut_at_limit, h_setup_alive),
        cmocka_unit_test_setup(test_stderr_is_capped_separately, h_setup_alive),
        cmocka_unit_test_setup(test_200_mb_of_output_is_not_buffered_by_the_host, h_setup_alive),
        cmocka_unit_test_setup(test_both_streams_flooded_at_once_do_not_deadlock, h_setup_alive),
        cmocka_unit_test_setup(test_long_repr_value_is_cut_at_limit_and_flagged, h_setup_alive),
        cmocka_unit_test_setup(test_long_utf8_value_is_cut_on_a_character_boundary, h_setup_alive),
        cmocka_unit_test_setup(test_value_under_limit_is_not_flagged, h_setup_alive),
        cmocka_unit_test_setup(test_long_error_message_is_cut_and_flagged, h_setup_alive),
        cmocka_unit_test_setup(test_output_from_a_cell_thread_is_captured, h_setup_alive),
    };
    return cmocka_run_group_tests_name("output", tests, group_setup, h_group_teardown);
}
