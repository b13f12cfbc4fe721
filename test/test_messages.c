/*
 * The messages a model reads when a cell reaches a limit or meets a
 * policy: the exception keeps its type, and its message names the limit
 * with the session's configured value, or the policy and the way out.
 * The group's session has limits of its own (768 MiB of memory, 3 MiB
 * files), so a message with the defaults' numbers would fail.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

#define MEMORY (768ull << 20)
#define FILE_LIMIT (3ull << 20)

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, &(struct h_limits){.timeout_ms = 20000, .memory = MEMORY,
                                                  .file = FILE_LIMIT});
}

static int ends_with(const char *s, const char *end)
{
    return s && strlen(s) >= strlen(end) && strcmp(s + strlen(s) - strlen(end), end) == 0;
}

/* Runs @code; asserts status @st, the error @name (or @alt, if not NULL),
 * exactly @message, and the traceback's last line "NAME: message".
 * Frees the result. */
static void expect_message(const char *code, ci_status st, const char *name, const char *alt,
                           const char *message)
{
    ci_result *r = h_run_status(S, code, st);
    const char *n = ci_result_error_name(r), *tb = ci_result_traceback(r);
    if (!n || (strcmp(n, name) != 0 && (!alt || strcmp(n, alt) != 0))) {
        h_dump(r);
        fail_msg("raised %s, expected %s", n ? n : "(null)", name);
    }
    h_assert_str(ci_result_error_value(r), message);
    char *last = h_fmt(": %s\n", message);
    if (!ends_with(tb, last))
        fail_msg("the traceback does not end with \"%s\":\n%s", last, tb);
    h_assert_contains(tb, "File \"<cell ");
    h_assert_not_contains(tb, "<codeinterp>");
    free(last);
    ci_result_free(r);
}

static void test_memory_error_names_the_memory_limit(void **state)
{
    expect_message("big = bytearray(3 * 1024**3)", CI_STATUS_MEMORY, "MemoryError", NULL,
                   "the cell reached the session's memory limit of 768 MiB");
    /* The cell itself still catches it as a MemoryError. */
    h_expect_cell(S, "messages_memory_error_caught", "('MemoryError', '')", "");
}

static void test_numpys_memory_error_keeps_its_words_after_ours(void **state)
{
    expect_message("import numpy as np\nnp.zeros((40000, 40000, 2))", CI_STATUS_MEMORY,
                   "MemoryError", NULL,
                   "the cell reached the session's memory limit of 768 MiB: Unable to allocate "
                   "23.8 GiB for an array with shape (40000, 40000, 2) and data type float64");
}

static void test_a_memory_error_of_the_cells_own_keeps_its_message(void **state)
{
    expect_message("raise MemoryError('cache full')", CI_STATUS_MEMORY, "MemoryError", NULL,
                   "cache full");
}

static void test_file_too_large_names_the_file_size_limit(void **state)
{
    expect_message("with open('big.bin', 'wb') as f:\n    f.write(b'x' * (4 * 1024 * 1024))",
                   CI_STATUS_ERROR, "OSError", NULL,
                   "the file reached the session's file size limit of 3 MiB");
    h_expect(S, "import os\nos.path.getsize('big.bin')", "3145728", "");
}

static void test_read_only_paths_give_the_write_policy(void **state)
{
    char *ws = h_worker_string(S, "import os\nos.getcwd()");
    char *tmpdir = h_worker_string(S, "import os\nos.environ['TMPDIR']");
    char *home = h_worker_string(S, "import os\nos.environ['HOME']");
    char *write = h_fmt("this sandbox can only write inside the session workspace (%s), "
                        "TMPDIR (%s) and HOME (%s)", ws, tmpdir, home);
    /* In the mount namespace / and /usr are read-only mounts (EROFS, an
     * OSError), as they are where the host's are (a container's
     * read-only root: the kernel says EROFS before it asks Landlock);
     * else Landlock refuses them (PermissionError), or without it the
     * modes of root's directories do. */
    int mntns = (ci_session_sandbox(S) & CI_SANDBOX_MNTNS) != 0;
    const char *etc = mntns || h_read_only("/etc") ? "OSError" : "PermissionError";
    const char *usr = mntns || h_read_only("/usr") ? "OSError" : "PermissionError";

    expect_message("open('/etc/x', 'w')", CI_STATUS_ERROR, etc, NULL, write);
    expect_message("open('/usr/x', 'w')", CI_STATUS_ERROR, usr, NULL, write);
    expect_message("import os\nos.mkdir('/usr/y')", CI_STATUS_ERROR, usr, NULL, write);
    /* /tmp is world-writable: only Landlock refuses it. */
    if (h_has_layer(S, CI_SANDBOX_LANDLOCK, "the refused write to /tmp"))
        expect_message("open('/tmp/x', 'w')", CI_STATUS_ERROR, "PermissionError", NULL, write);
    free(write);
    free(home);
    free(tmpdir);
    free(ws);
}

static const char pool[] =
    "creating processes is disabled in this sandbox, and so are multiprocessing and "
    "ProcessPoolExecutor (multiprocessing's ThreadPool, Queue and Lock too, for want of "
    "shared semaphores); use threads instead: concurrent.futures.ThreadPoolExecutor or "
    "threading.Thread";

static void test_multiprocessing_gives_the_process_policy_and_threads(void **state)
{
    /* A named semaphore in /dev/shm, which the mount namespace lacks and
     * Landlock refuses. */
    expect_message("import multiprocessing\nmultiprocessing.Pool()", CI_STATUS_ERROR,
                   "FileNotFoundError", "PermissionError", pool);
    expect_message("import concurrent.futures as cf\n"
                   "with cf.ProcessPoolExecutor() as ex:\n    ex.submit(print, 1).result()",
                   CI_STATUS_ERROR, "FileNotFoundError", "PermissionError", pool);
    expect_message("import multiprocessing\nmultiprocessing.Process(target=print).start()",
                   CI_STATUS_ERROR, "PermissionError", NULL, pool);
    /* The way out works. */
    h_expect(S, "import concurrent.futures as cf\n"
                "with cf.ThreadPoolExecutor(2) as ex:\n    done = list(ex.map(abs, [-1, 2]))\ndone",
             "[1, 2]", "");
}

static void test_a_timeout_still_reads_as_keyboard_interrupt(void **state)
{
    /* Interrupted in pure-Python library frames, which are folded. */
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    ci_result *r = NULL;
    opts.timeout_ms = 1500;
    assert_int_equal(ci_run_ex(S, "import statistics\nstatistics.mean(range(10**9))", &opts, &r),
                     CI_OK);
    if (ci_result_status(r) != CI_STATUS_TIMEOUT) {
        h_dump(r);
        fail_msg("status %s", h_status_name(ci_result_status(r)));
    }
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    const char *tb = ci_result_traceback(r);
    char *cell = h_fmt("  File \"<cell %d>\", line 2, in <module>\n"
                       "    statistics.mean(range(10**9))\n",
                       ci_result_execution_count(r));
    h_assert_contains(tb, cell);
    h_assert_contains(tb, " in statistics.py");
    if (!ends_with(tb, "\nKeyboardInterrupt\n"))
        fail_msg("the traceback does not end with KeyboardInterrupt:\n%s", tb);
    h_assert_contains(ci_result_traceback_full(r), "statistics.py\", line");
    free(cell);
    ci_result_free(r);
    h_expect(S, "'after'", "'after'", "");
}

int main(void)
{
    h_watchdog(180);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_memory_error_names_the_memory_limit, h_setup_alive),
        cmocka_unit_test_setup(test_numpys_memory_error_keeps_its_words_after_ours, h_setup_alive),
        cmocka_unit_test_setup(test_a_memory_error_of_the_cells_own_keeps_its_message,
                               h_setup_alive),
        cmocka_unit_test_setup(test_file_too_large_names_the_file_size_limit, h_setup_alive),
        cmocka_unit_test_setup(test_read_only_paths_give_the_write_policy, h_setup_alive),
        cmocka_unit_test_setup(test_multiprocessing_gives_the_process_policy_and_threads,
                               h_setup_alive),
        cmocka_unit_test_setup(test_a_timeout_still_reads_as_keyboard_interrupt, h_setup_alive),
    };
    return cmocka_run_group_tests_name("messages", tests, group_setup, h_group_teardown);
}
