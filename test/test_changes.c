/*
 * What a run reports besides its text: the workspace files it created or
 * modified, the time and memory it used, and which of its parts were cut
 * (the CI_TRUNCATED_* mask). The group's session keeps 4096 bytes of each
 * stream.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define LIMIT 4096
#define MIB (1024ULL * 1024)

static ci_session *S;

static int group_setup(void **state)
{
    /* The timeout only catches a hang: a loaded machine took over the
     * default 30 s to make the 60000 files of one test. */
    return h_group_session(&S, &(struct h_limits){.output = LIMIT, .timeout_ms = 120000});
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/*
 * Runs @code on @s, asserts @status, and that the changed files are
 * exactly the @n names that follow, in that order; returns the result.
 */
static ci_result *expect_files_status(ci_session *s, const char *code, ci_status status,
                                      size_t n, ...)
{
    ci_result *r = h_run_status(s, code, status);
    va_list ap;
    int ok = ci_result_file_count(r) == n;
    va_start(ap, n);
    for (size_t i = 0; ok && i < n; i++) {
        const char *want = va_arg(ap, const char *);
        const char *got = ci_result_file_name(r, i);
        ok = got && strcmp(got, want) == 0;
    }
    va_end(ap);
    if (!ok) {
        h_dump(r);
        h_dump_rich(r);
        fail_msg("changed files differ from the %zu expected\n  cell: %s", n, code);
    }
    return r;
}

#define expect_files(s, code, ...) \
    ci_result_free(expect_files_status((s), (code), CI_STATUS_OK, __VA_ARGS__))

/* -------------------------------------------------------- changed files */

static void test_new_files_are_listed_sorted_then_nothing(void **state)
{
    char *cell = h_cell("changes_two_files");
    ci_result *r = expect_files_status(S, cell, CI_STATUS_OK, 2, "a.csv", "sub/b.txt");
    free(cell);
    assert_null(ci_result_file_name(r, 2));
    assert_false(ci_result_truncated(r) & CI_TRUNCATED_FILES);
    ci_result_free(r);
    /* Nothing written since the previous run's end: nothing listed. */
    expect_files(S, "1 + 1", 0);
    expect_files(S, "open('a.csv').read()", 0);
}

static void test_names_are_sorted_by_byte_value(void **state)
{
    char *cell = h_cell("changes_names_to_sort");
    expect_files(S, cell, 4, "Alpha", "mid.txt", "mid/x", "zeta");
    free(cell);
}

static void test_appended_file_is_listed(void **state)
{
    expect_files(S, "open('app.csv', 'w').write('h\\n')", 1, "app.csv");
    expect_files(S, "open('other.txt', 'w').write('o')", 1, "other.txt");
    expect_files(S, "open('app.csv', 'a').write('1\\n')", 1, "app.csv");
}

static void test_same_size_rewrite_right_after_a_run_is_listed(void **state)
{
    /* Back to back, a rewrite may fall in the same clock tick as the
     * previous write: size, inode and times may all look the same. */
    for (int i = 0; i < 20; i++) {
        expect_files(S, "open('same.txt', 'w').write('AAAA')", 1, "same.txt");
        expect_files(S, "open('same.txt', 'w').write('BBBB')", 1, "same.txt");
    }
}

static void test_rewrite_with_restored_mtime_is_listed(void **state)
{
    expect_files(S, "open('touchy.txt', 'w').write('1234')", 1, "touchy.txt");
    sleep_ms(50);
    char *cell = h_cell("changes_write_keeps_mtime");
    ci_result *r = expect_files_status(S, cell, CI_STATUS_OK, 1, "touchy.txt");
    free(cell);
    /* Only the change time tells. */
    h_assert_str(ci_result_value(r), "True");
    ci_result_free(r);
}

static void test_file_replaced_by_rename_is_listed(void **state)
{
    expect_files(S, "open('ren.txt', 'w').write('1234')", 1, "ren.txt");
    char *cell = h_cell("changes_replace_over_a_file");
    expect_files(S, cell, 1, "ren.txt");
    free(cell);
}

static void test_put_file_is_not_listed(void **state)
{
    assert_int_equal(ci_session_put_file(S, "put.txt", "put", 3), CI_OK);
    expect_files(S, "open('put.txt').read()", 0);

    assert_int_equal(ci_session_put_file(S, "put2.txt", "p2", 2), CI_OK);
    expect_files(S, "open('w.txt', 'w').write('w')", 1, "w.txt");
    /* A cell that modifies a put file lists it. */
    expect_files(S, "open('put2.txt', 'a').write('more')", 1, "put2.txt");

    /* put_file over a file a cell wrote. */
    expect_files(S, "open('pw.txt', 'w').write('cell')", 1, "pw.txt");
    assert_int_equal(ci_session_put_file(S, "pw.txt", "host!", 5), CI_OK);
    expect_files(S, "open('pw.txt').read()", 0);
}

static void test_deleted_files_are_not_listed(void **state)
{
    expect_files(S, "import os\nopen('brief.txt', 'w').write('b')\nos.remove('brief.txt')", 0);
    expect_files(S, "open('del.txt', 'w').write('d')", 1, "del.txt");
    expect_files(S, "import os\nos.remove('del.txt')", 0);
}

static void test_directories_alone_are_not_listed(void **state)
{
    expect_files(S, "import os\nos.makedirs('only_dir/sub', exist_ok=True)", 0);
}

static void test_writes_outside_the_workspace_are_not_listed(void **state)
{
    char *cell = h_cell("changes_tmpdir_home_and_workspace");
    expect_files(S, cell, 1, "ws.txt");
    free(cell);
    cell = h_cell("changes_tmpdir_and_home_only");
    expect_files(S, cell, 0);
    free(cell);
}

static void test_non_utf8_name_is_listed_raw(void **state)
{
    expect_files(S, "open(b'\\xffraw.bin', 'wb').write(b'x')", 1, "\xffraw.bin");
}

static void test_file_written_by_an_earlier_cells_thread_is_listed(void **state)
{
    char *cell = h_cell("changes_thread_writes_later");
    expect_files(S, cell, 0);
    free(cell);
    /* Between cells the worker is stopped: the thread writes while the
     * next cell runs, which lists the file. */
    sleep_ms(1000);
    expect_files(S, "import time\ntime.sleep(0.5)\n'x'", 1, "late.txt");
}

static void test_killed_worker_lists_nothing(void **state)
{
    ci_result *r = h_run_status(S,
                                "open('k.txt', 'w').write('k')\n"
                                "import os\nos._exit(1)",
                                CI_STATUS_KILLED);
    assert_int_equal(ci_result_file_count(r), 0);
    assert_null(ci_result_file_name(r, 0));
    /* The worker died during the run: no CPU time or peak to report. */
    assert_int_equal(ci_result_cpu_time_us(r), 0);
    assert_int_equal(ci_result_peak_memory(r), 0);
    ci_result_free(r);
    /* After a restart, the first run lists what it writes only. */
    assert_int_equal(ci_session_restart(S), CI_OK);
    expect_files(S, "open('k.txt').read()", 0);
    expect_files(S, "open('k2.txt', 'w').write('k')", 1, "k2.txt");
}

/* Removes the deep tree from the host side even when the test failed half
 * way: left in place, it would make every later run's list incomplete. */
static int remove_deep(void **state)
{
    const char *ws = ci_session_workspace(S);
    if (ws) {
        char *deep = h_fmt("%s/deep", ws);
        h_rmtree(deep);
        free(deep);
    }
    return 0;
}

struct small_stack_run {
    const char *code;
    ci_result *r;
    int rc;
};

static void *small_stack_main(void *arg)
{
    struct small_stack_run *run = arg;
    run->rc = ci_run(S, run->code, &run->r);
    return NULL;
}

static void test_deep_scan_fits_a_small_thread_stack(void **state)
{
    /* musl gives threads 128 KiB: a run, and its scan 31 levels deep,
     * must fit. */
    char *cell = h_cell("changes_narrow_deep_path");
    struct small_stack_run run = {cell, NULL, 0};
    pthread_attr_t attr;
    pthread_t t;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, 128 * 1024), 0);
    assert_int_equal(pthread_create(&t, &attr, small_stack_main, &run), 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    assert_int_equal(run.rc, CI_OK);
    h_assert_str(ci_result_value(run.r), "'ok'");
    assert_int_equal(ci_result_file_count(run.r), 1);
    ci_result_free(run.r);
    free(cell);
    h_expect(S, "import shutil\nshutil.rmtree('narrow')", NULL, "");
}

static void test_huge_workspace_is_scanned_within_a_budget(void **state)
{
    /* 60000 files: the host stops looking after 50 ms a scan rather than
     * make each run wait on them, and says the list is incomplete. */
    char *cell = h_cell("changes_sixty_thousand_files");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    ci_result_free(r);
    int64_t t0 = h_now_ms();
    r = h_run_status(S, "1", CI_STATUS_OK);
    assert_true(h_now_ms() - t0 < 2000);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_FILES);
    ci_result_free(r);
    r = h_run_status(S, "import shutil\nshutil.rmtree('many')", CI_STATUS_OK);
    ci_result_free(r);
    r = h_run_status(S, "1", CI_STATUS_OK);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_deep_tree_makes_the_list_incomplete(void **state)
{
    /* 40 directories under the workspace: past the 32 the host looks at. */
    char *cell = h_cell("changes_forty_levels_deep");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_FILES);
    int found_shallow = 0;
    for (size_t i = 0; i < ci_result_file_count(r); i++) {
        const char *n = ci_result_file_name(r, i);
        assert_non_null(n);
        h_assert_not_contains(n, "bottom.txt");
        found_shallow |= !strcmp(n, "shallow.txt");
    }
    assert_true(found_shallow);
    ci_result_free(r);

    r = h_run_status(S, "import shutil\nshutil.rmtree('deep')", CI_STATUS_OK);
    assert_int_equal(ci_result_file_count(r), 0);
    ci_result_free(r);
    r = expect_files_status(S, "1", CI_STATUS_OK, 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);

    /* Ten levels are within reach. */
    cell = h_cell("changes_ten_levels_deep");
    r = expect_files_status(S, cell, CI_STATUS_OK, 1, "ten/d/d/d/d/d/d/d/d/d/f");
    free(cell);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_file_getters_on_null_and_out_of_range(void **state)
{
    assert_int_equal(ci_result_file_count(NULL), 0);
    assert_null(ci_result_file_name(NULL, 0));
    ci_result *r = expect_files_status(S, "open('g1.txt', 'w').write('g')", CI_STATUS_OK, 1,
                                       "g1.txt");
    assert_null(ci_result_file_name(r, 1));
    assert_null(ci_result_file_name(r, (size_t)-1));
    ci_result_free(r);
}

/* ------------------------------------------------------------ resources */

static void test_sleep_takes_wall_time_not_cpu_time(void **state)
{
    ci_result *r = h_run_status(S, "import time; time.sleep(0.2)", CI_STATUS_OK);
    unsigned long long wall = ci_result_wall_time_us(r), cpu = ci_result_cpu_time_us(r);
    if (wall < 200000 || wall > 10000000 || cpu >= wall) {
        h_dump_rich(r);
        fail_msg("wall %llu us, cpu %llu us for a 0.2 s sleep", wall, cpu);
    }
    ci_result_free(r);
}

static void test_busy_loop_takes_cpu_time(void **state)
{
    /* Spins until the process has used 0.3 s of CPU, not of wall time:
     * on a loaded machine a 0.3 s wall-clock loop may get far less. */
    ci_result *r = h_run_status(S,
                                "import time\nt=time.process_time()\n"
                                "while time.process_time()-t<0.3: pass",
                                CI_STATUS_OK);
    unsigned long long wall = ci_result_wall_time_us(r), cpu = ci_result_cpu_time_us(r);
    if (cpu < 250000 || wall < 250000 || cpu > 30000000) {
        h_dump_rich(r);
        fail_msg("wall %llu us, cpu %llu us for a 0.3 s busy loop", wall, cpu);
    }
    ci_result_free(r);
}

static void test_cpu_time_counts_every_thread(void **state)
{
    char *cell = h_cell("changes_thread_spins");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    unsigned long long cpu = ci_result_cpu_time_us(r);
    if (cpu < 250000) {
        h_dump_rich(r);
        fail_msg("cpu %llu us for a thread that used 0.3 s of CPU", cpu);
    }
    ci_result_free(r);
}

static void test_peak_memory_is_per_run(void **state)
{
    ci_result *r = h_run_status(S, "b = bytearray(300*1024*1024); del b", CI_STATUS_OK);
    unsigned long long big = ci_result_peak_memory(r);
    if (big < 300 * MIB || big > 2048 * MIB) {
        h_dump_rich(r);
        fail_msg("peak %llu bytes for a cell that held 300 MiB", big);
    }
    ci_result_free(r);

    r = h_run_status(S, "1 + 1", CI_STATUS_OK);
    unsigned long long small = ci_result_peak_memory(r);
    /* The interpreter with its libraries is resident, whatever the cell. */
    assert_true(small > 10 * MIB);
    ci_result_free(r);
    /* Only a root host can reset the peak (/proc/PID/clear_refs). */
    if (geteuid() != 0)
        h_skip_because("resetting the worker's peak (/proc/PID/clear_refs) needs root");
    if (small >= 300 * MIB)
        fail_msg("peak %llu bytes for a trivial cell after a 300 MiB one: not reset", small);
}

static void test_resources_of_null_are_zero(void **state)
{
    assert_int_equal(ci_result_wall_time_us(NULL), 0);
    assert_int_equal(ci_result_cpu_time_us(NULL), 0);
    assert_int_equal(ci_result_peak_memory(NULL), 0);
}

/* ------------------------------------------------------- truncated mask */

static void expect_mask(const char *code, ci_status status, int mask)
{
    ci_result *r = h_run_status(S, code, status);
    if (ci_result_truncated(r) != mask) {
        h_dump(r);
        fail_msg("truncated mask 0x%x, expected 0x%x\n  cell: %s", ci_result_truncated(r), mask,
                 code);
    }
    ci_result_free(r);
}

static void test_truncated_mask_names_what_was_cut(void **state)
{
    expect_mask("print('o' * 10000)", CI_STATUS_OK, CI_TRUNCATED_STDOUT);
    expect_mask("import sys\nsys.stderr.write('e' * 10000);", CI_STATUS_OK, CI_TRUNCATED_STDERR);
    expect_mask("import sys\nprint('o' * 10000)\nsys.stderr.write('e' * 10000);", CI_STATUS_OK,
                CI_TRUNCATED_STDOUT | CI_TRUNCATED_STDERR);
    expect_mask("'v' * 10000", CI_STATUS_OK, CI_TRUNCATED_TEXT);
    expect_mask("raise ValueError('m' * 10000)", CI_STATUS_ERROR, CI_TRUNCATED_TEXT);
    expect_mask("print('o' * 10)\n'v' * 10", CI_STATUS_OK, 0);
    assert_int_equal(ci_result_truncated(NULL), 0);
}

int main(void)
{
    h_watchdog(110);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_new_files_are_listed_sorted_then_nothing, h_setup_alive),
        cmocka_unit_test_setup(test_names_are_sorted_by_byte_value, h_setup_alive),
        cmocka_unit_test_setup(test_appended_file_is_listed, h_setup_alive),
        cmocka_unit_test_setup(test_same_size_rewrite_right_after_a_run_is_listed, h_setup_alive),
        cmocka_unit_test_setup(test_rewrite_with_restored_mtime_is_listed, h_setup_alive),
        cmocka_unit_test_setup(test_file_replaced_by_rename_is_listed, h_setup_alive),
        cmocka_unit_test_setup(test_put_file_is_not_listed, h_setup_alive),
        cmocka_unit_test_setup(test_deleted_files_are_not_listed, h_setup_alive),
        cmocka_unit_test_setup(test_directories_alone_are_not_listed, h_setup_alive),
        cmocka_unit_test_setup(test_writes_outside_the_workspace_are_not_listed, h_setup_alive),
        cmocka_unit_test_setup(test_non_utf8_name_is_listed_raw, h_setup_alive),
        cmocka_unit_test_setup(test_file_written_by_an_earlier_cells_thread_is_listed,
                               h_setup_alive),
        cmocka_unit_test_setup(test_killed_worker_lists_nothing, h_setup_alive),
        cmocka_unit_test_setup_teardown(test_deep_tree_makes_the_list_incomplete, h_setup_alive,
                                        remove_deep),
        cmocka_unit_test_setup(test_deep_scan_fits_a_small_thread_stack, h_setup_alive),
        cmocka_unit_test_setup(test_huge_workspace_is_scanned_within_a_budget, h_setup_alive),
        cmocka_unit_test_setup(test_file_getters_on_null_and_out_of_range, h_setup_alive),
        cmocka_unit_test_setup(test_sleep_takes_wall_time_not_cpu_time, h_setup_alive),
        cmocka_unit_test_setup(test_busy_loop_takes_cpu_time, h_setup_alive),
        cmocka_unit_test_setup(test_cpu_time_counts_every_thread, h_setup_alive),
        cmocka_unit_test_setup(test_peak_memory_is_per_run, h_setup_alive),
        cmocka_unit_test(test_resources_of_null_are_zero),
        cmocka_unit_test_setup(test_truncated_mask_names_what_was_cut, h_setup_alive),
    };
    return cmocka_run_group_tests_name("changes", tests, group_setup, h_group_teardown);
}
