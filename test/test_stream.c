/*
 * Output streamed while a cell runs (ci_run_stream), interrupting a cell
 * (ci_session_interrupt) from another thread or from the output callback,
 * and per-run options (ci_run_ex). The group's session keeps 4096 bytes of
 * each stream, gives an interrupted cell 500 ms, and has the default 30 s
 * timeout.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define LIMIT 4096
#define GRACE_MS 500

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, &(struct h_limits){.output = LIMIT, .grace_ms = GRACE_MS});
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ------------------------------------------------------ the recorder */

#define REC_CAP 65536

/* What an output callback saw. */
struct rec {
    char out[REC_CAP], err[REC_CAP];
    size_t out_len, err_len;
    int calls, bad_calls; /* bad: unknown stream, empty chunk or overflow */
    size_t out_chunks[64]; /* the first stdout chunks' lengths */
    int out_chunk_count;
    int64_t first_ms;     /* when the first stdout chunk came; 0: none */
    void *payload_seen;
    pthread_t thread;     /* the thread that called ci_run_stream */
    int wrong_thread;
    /* When set, the first stdout chunk calls ci_session_interrupt() on it
     * and keeps the return in interrupt_rc. */
    ci_session *interrupt;
    int interrupt_rc, interrupted;
    /* When set, every chunk tries a ci_run() on it, keeping the return. */
    ci_session *nested;
    int nested_rc;
    ci_result *nested_result;
};

static struct rec *rec_new(void)
{
    struct rec *rc = calloc(1, sizeof *rc);
    assert_non_null(rc);
    rc->thread = pthread_self();
    rc->nested_rc = 12345;
    return rc;
}

static void on_output(int stream, const char *data, size_t len, void *payload)
{
    struct rec *rc = payload;
    rc->payload_seen = payload;
    rc->calls++;
    if (!pthread_equal(pthread_self(), rc->thread))
        rc->wrong_thread = 1;
    if (len == 0 || data == NULL) {
        rc->bad_calls++;
        return;
    }
    if (stream == CI_STREAM_STDOUT) {
        if (rc->first_ms == 0)
            rc->first_ms = h_now_ms();
        if (rc->out_len + len > REC_CAP) {
            rc->bad_calls++;
            return;
        }
        memcpy(rc->out + rc->out_len, data, len);
        rc->out_len += len;
        if (rc->out_chunk_count < 64)
            rc->out_chunks[rc->out_chunk_count] = len;
        rc->out_chunk_count++;
        if (rc->interrupt && !rc->interrupted) {
            rc->interrupted = 1;
            rc->interrupt_rc = ci_session_interrupt(rc->interrupt);
        }
    } else if (stream == CI_STREAM_STDERR) {
        if (rc->err_len + len > REC_CAP) {
            rc->bad_calls++;
            return;
        }
        memcpy(rc->err + rc->err_len, data, len);
        rc->err_len += len;
    } else {
        rc->bad_calls++;
    }
    if (rc->nested && !rc->nested_result)
        rc->nested_rc = ci_run(rc->nested, "1", &rc->nested_result);
}

static ci_result *run_stream(ci_session *s, const char *code, struct rec *rc)
{
    ci_result *r = NULL;
    int ret = ci_run_stream(s, code, on_output, rc, &r);
    if (ret != CI_OK)
        fail_msg("ci_run_stream: %d (%s): %s\n  cell: %s", ret, ci_strerror(ret),
                 ci_session_errmsg(s), code);
    assert_non_null(r);
    return r;
}

static void assert_status(const ci_result *r, ci_status want)
{
    if (ci_result_status(r) != want) {
        h_dump(r);
        fail_msg("status %d, expected %d", (int)ci_result_status(r), (int)want);
    }
}

/* The chunks of each stream, put together, are the result's streams. */
static void assert_chunks_are_the_result(const struct rec *rc, const ci_result *r)
{
    size_t olen = 0, elen = 0;
    const char *o = ci_result_stdout(r, &olen);
    const char *e = ci_result_stderr(r, &elen);
    assert_int_equal(rc->bad_calls, 0);
    assert_int_equal(rc->wrong_thread, 0);
    if (rc->out_len != olen || memcmp(rc->out, o, olen) != 0)
        fail_msg("stdout chunks are %zu bytes \"%.200s\", the result %zu bytes \"%.200s\"",
                 rc->out_len, rc->out, olen, o);
    if (rc->err_len != elen || memcmp(rc->err, e, elen) != 0)
        fail_msg("stderr chunks are %zu bytes \"%.200s\", the result %zu bytes \"%.200s\"",
                 rc->err_len, rc->err, elen, e);
}

/* ----------------------------------------------------------- streaming */

static void test_first_chunk_arrives_long_before_the_end(void **state)
{
    struct rec *rc = rec_new();
    char *cell = h_cell("stream_five_ticks");
    ci_result *r = run_stream(S, cell, rc);
    free(cell);
    int64_t end = h_now_ms();
    assert_status(r, CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    const char *want = "tick 0\ntick 1\ntick 2\ntick 3\ntick 4\n";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(o, want, len);
    assert_chunks_are_the_result(rc, r);
    assert_true(rc->first_ms > 0);
    /* The cell runs for 1.5 s after its first line. */
    if (end - rc->first_ms < 600)
        fail_msg("the first chunk came %lld ms before the end of the run",
                 (long long)(end - rc->first_ms));
    assert_true(rc->calls >= 3);
    ci_result_free(r);
    free(rc);
}

static void test_both_streams_arrive_tagged_and_exact(void **state)
{
    struct rec *rc = rec_new();
    char *cell = h_cell("stream_stdout_and_stderr_interleaved");
    ci_result *r = run_stream(S, cell, rc);
    free(cell);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "7");
    assert_int_equal(rc->out_len, 9);
    assert_memory_equal(rc->out, "o1\xff\0o2o3\n", 9);
    assert_int_equal(rc->err_len, 5);
    assert_memory_equal(rc->err, "e1e2\n", 5);
    assert_chunks_are_the_result(rc, r);
    ci_result_free(r);
    free(rc);
}

static void test_callback_gets_the_limit_then_one_note(void **state)
{
    struct rec *rc = rec_new();
    char *cell = h_cell("stream_long_line_then_stderr");
    ci_result *r = run_stream(S, cell, rc);
    free(cell);
    char note[400];
    int n;

    assert_status(r, CI_STATUS_OK);
    n = snprintf(note, sizeof note,
                 "\n[... stdout passed the output limit of 4 KiB: the rest is not streamed; "
                 "the result keeps its last 2 KiB and the whole output goes to "
                 ".outputs/cell-%d.stdout ...]\n",
                 ci_result_execution_count(r));
    assert_int_equal(rc->out_len, LIMIT + (size_t)n);
    for (size_t i = 0; i < LIMIT; i++)
        if (rc->out[i] != 'x')
            fail_msg("byte %zu streamed is %02x", i, (unsigned char)rc->out[i]);
    assert_memory_equal(rc->out + LIMIT, note, (size_t)n);
    assert_int_equal(rc->err_len, 1);
    int t = ci_result_truncated(r);
    assert_true(t & CI_TRUNCATED_STDOUT);
    assert_false(t & CI_TRUNCATED_STDERR);
    ci_result_free(r);
    free(rc);
}

static void test_chunks_end_at_line_breaks(void **state)
{
    struct rec *rc = rec_new();
    /* One write, a line and a half; the half waits, then its end. */
    char *cell = h_cell("stream_rows_in_pieces");
    ci_result *r = run_stream(S, cell, rc);
    free(cell);
    assert_status(r, CI_STATUS_OK);
    assert_chunks_are_the_result(rc, r);
    assert_memory_equal(rc->out, "row 0\nrow 1 rest\nrow 2\n", rc->out_len);
    /* The partial line went out on its own after its pause. */
    assert_int_equal(rc->out_chunk_count, 3);
    assert_int_equal(rc->out_chunks[0], 6);
    assert_int_equal(rc->out_chunks[1], 5);
    assert_int_equal(rc->out_chunks[2], 12);
    ci_result_free(r);
    free(rc);
}

static void test_progress_without_line_breaks_still_streams(void **state)
{
    struct rec *rc = rec_new();
    ci_result *r = run_stream(S,
                              "import time\n"
                              "for i in range(4):\n"
                              "    print(i, end='', flush=True); time.sleep(0.1)\n",
                              rc);
    assert_status(r, CI_STATUS_OK);
    assert_chunks_are_the_result(rc, r);
    assert_int_equal(rc->out_chunk_count, 4);
    assert_memory_equal(rc->out, "0123", 4);
    ci_result_free(r);
    free(rc);
}

static void test_a_long_line_in_two_writes_still_comes_in_pieces(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.output = 1 << 20});
    struct rec *rc = rec_new();
    ci_result *r = run_stream(s, "import os\nos.write(1, b'z' * 16000)\nos.write(1, b'z' * 16000 + b'\\n')",
                              rc);
    assert_status(r, CI_STATUS_OK);
    assert_chunks_are_the_result(rc, r);
    assert_int_equal(rc->out_len, 32001);
    for (int i = 0; i < rc->out_chunk_count && i < 64; i++)
        if (rc->out_chunks[i] > 16384)
            fail_msg("chunk %d of %zu bytes", i, rc->out_chunks[i]);
    assert_true(rc->out_chunk_count >= 2);
    ci_result_free(r);
    ci_session_free(s);
    free(rc);
}

static void test_the_chunk_before_the_note_ends_on_a_character(void **state)
{
    struct rec *rc = rec_new();
    /* 9000 bytes of three-byte characters: the limit, 4096, falls inside
     * one; 4095 bytes are streamed, then the note. */
    ci_result *r = run_stream(S, "import os\nos.write(1, ('\\u20ac' * 3000).encode())", rc);
    assert_status(r, CI_STATUS_OK);
    assert_true(rc->out_len > 4095);
    assert_true(h_utf8_valid(rc->out, 4095));
    assert_memory_equal(rc->out + 4095, "\n[... stdout passed the output limit", 36);
    ci_result_free(r);
    free(rc);
}

static void test_a_long_line_comes_in_whole_characters(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.output = 1 << 20});
    struct rec *rc = rec_new();
    /* 40000 bytes of three-byte characters, written at once. */
    ci_result *r = run_stream(s, "import sys\nsys.stdout.write('\\u20ac' * 13333 + '\\n')", rc);
    assert_status(r, CI_STATUS_OK);
    assert_chunks_are_the_result(rc, r);
    assert_int_equal(rc->out_len, 40000);
    assert_int_equal(rc->out_chunk_count, 3);
    assert_int_equal(rc->out_chunks[0], 16383); /* 16384 would split a character */
    assert_int_equal(rc->out_chunks[1], 16383);
    assert_int_equal(rc->out_chunks[2], 40000 - 2 * 16383);
    ci_result_free(r);
    ci_session_free(s);
    free(rc);
}

static void test_callback_gets_its_payload_on_the_calling_thread(void **state)
{
    struct rec *rc = rec_new();
    ci_result *r = run_stream(S, "print('p')", rc);
    assert_status(r, CI_STATUS_OK);
    assert_true(rc->calls >= 1);
    assert_ptr_equal(rc->payload_seen, rc);
    assert_int_equal(rc->wrong_thread, 0);
    assert_chunks_are_the_result(rc, r);
    ci_result_free(r);
    free(rc);
}

static void test_cell_without_output_makes_no_call(void **state)
{
    struct rec *rc = rec_new();
    ci_result *r = run_stream(S, "x_quiet = 1\nx_quiet + 1", rc);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "2");
    assert_int_equal(rc->calls, 0);
    ci_result_free(r);
    free(rc);
}

static void test_null_callback_is_ci_run(void **state)
{
    ci_result *r = NULL;
    assert_int_equal(ci_run_stream(S, "print('n')\n3", NULL, NULL, &r), CI_OK);
    assert_non_null(r);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "3");
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(o, "n\n", 2);
    ci_result_free(r);
}

static void test_stream_refuses_null_arguments(void **state)
{
    ci_result *r = (ci_result *)1;
    assert_int_equal(ci_run_stream(NULL, "1", on_output, NULL, &r), CI_EINVAL);
    assert_null(r);
    r = (ci_result *)1;
    assert_int_equal(ci_run_stream(S, NULL, on_output, NULL, &r), CI_EINVAL);
    assert_null(r);
    assert_int_equal(ci_run_stream(S, "1", on_output, NULL, NULL), CI_EINVAL);
    h_expect(S, "'fine'", "'fine'", "");
}

static void test_run_from_the_callback_is_busy(void **state)
{
    struct rec *rc = rec_new();
    rc->nested = S;
    ci_result *r = run_stream(S, "print('a')\n'outer'", rc);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'outer'");
    assert_int_equal(rc->nested_rc, CI_EBUSY);
    assert_null(rc->nested_result);
    ci_result_free(r);
    free(rc);
    h_expect(S, "'after'", "'after'", "");
}

/* ----------------------------------------------------------- interrupt */

struct interrupter {
    ci_session *s;
    int delay_ms;
    int rc;
    int64_t at_ms;
};

static void *interrupter_main(void *arg)
{
    struct interrupter *it = arg;
    sleep_ms(it->delay_ms);
    it->at_ms = h_now_ms();
    it->rc = ci_session_interrupt(it->s);
    return NULL;
}

/* Runs @code while another thread interrupts it after @delay_ms; asserts
 * the interrupt found the cell running and the run returned in time. */
static ci_result *run_interrupted(ci_session *s, const char *code, int delay_ms)
{
    struct interrupter it = {s, delay_ms, 12345, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, interrupter_main, &it), 0);
    ci_result *r = h_run(s, code);
    int64_t end = h_now_ms();
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(it.rc, 1);
    if (end - it.at_ms > GRACE_MS + 3000) {
        h_dump(r);
        fail_msg("the run ended %lld ms after the interrupt", (long long)(end - it.at_ms));
    }
    return r;
}

static void test_interrupt_from_another_thread_keeps_state(void **state)
{
    ci_result *r = run_interrupted(S, "x = 41\nprint('looping', flush=True)\nwhile True: pass",
                                   500);
    assert_status(r, CI_STATUS_INTERRUPTED);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    assert_null(ci_result_value(r));
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 8);
    assert_memory_equal(o, "looping\n", 8);
    assert_true(ci_session_pid(S) > 0);
    ci_result_free(r);
    h_expect(S, "x + 1", "42", "");
    /* No interrupt is left over for a later cell. */
    h_expect(S, "import time\ntime.sleep(0.3)\n'late'", "'late'", "");
}

static void test_interrupt_wakes_a_sleeping_cell(void **state)
{
    int64_t t0 = h_now_ms();
    ci_result *r = run_interrupted(S, "import time\ntime.sleep(20)", 300);
    assert_status(r, CI_STATUS_INTERRUPTED);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    assert_true(h_now_ms() - t0 < 5000);
    ci_result_free(r);
    h_expect(S, "'awake'", "'awake'", "");
}

/* Interrupts @s as soon as a run is in progress, however early. */
static void *eager_interrupter_main(void *arg)
{
    struct interrupter *it = arg;
    int64_t end = h_now_ms() + 20000;
    while ((it->rc = ci_session_interrupt(it->s)) != 1 && h_now_ms() < end)
        sched_yield(); /* valgrind runs one thread at a time */
    it->at_ms = h_now_ms();
    return NULL;
}

static void test_early_interrupt_after_an_interrupted_cell_is_kept(void **state)
{
    /* The cell before was interrupted; this one is interrupted the moment
     * its run starts, while the worker still reads its 4 MB of source: the
     * interrupt must stop this cell, not be taken for the last one's. */
    ci_result *r = run_interrupted(S, "import time\ntime.sleep(20)", 300);
    assert_status(r, CI_STATUS_INTERRUPTED);
    ci_result_free(r);

    size_t pad = 4u << 20;
    char *code = malloc(pad + 64);
    assert_non_null(code);
    h_expect(S, "y = 1\ny", "1", "");
    strcpy(code, "#");
    memset(code + 1, 'a', pad);
    strcpy(code + 1 + pad, "\nimport time\ntime.sleep(20)");
    struct interrupter it = {.s = S};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, eager_interrupter_main, &it), 0);
    int64_t t0 = h_now_ms();
    int rc = ci_run(S, code, &r);
    pthread_join(t, NULL);
    free(code);
    assert_int_equal(rc, CI_OK);
    assert_int_equal(it.rc, 1);
    assert_status(r, CI_STATUS_INTERRUPTED);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    assert_true(h_now_ms() - t0 < 10000);
    ci_result_free(r);
    h_expect(S, "y", "1", "");
}

static void test_interrupt_of_a_dead_workers_run_spares_the_next(void **state)
{
    /* The cell closes the channel and sleeps: the host gives its worker
     * 250 ms to exit before it kills it, and an interrupt asked meanwhile
     * must not stop the first cell of the restarted worker, also
     * numbered 1. */
    ci_session *s = h_session(&(struct h_limits){.timeout_ms = 1500, .grace_ms = 500});
    struct interrupter it = {.s = s, .delay_ms = 100};
    pthread_t t;
    ci_result *r;
    assert_int_equal(pthread_create(&t, NULL, interrupter_main, &it), 0);
    char *cell = h_cell("stream_channel_shut_while_interrupted");
    assert_int_equal(ci_run(s, cell, &r), CI_OK);
    free(cell);
    pthread_join(t, NULL);
    assert_int_equal(it.rc, 1);
    assert_status(r, CI_STATUS_KILLED);
    ci_result_free(r);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "import time\ntime.sleep(0.5)\n'done'", "'done'", "");
    ci_session_free(s);
}

static void test_closed_channel_ends_the_run_at_once(void **state)
{
    /* A worker that closes its channel can never answer: the run ends
     * within moments, not at the 30 s timeout. */
    ci_session *s = h_session(NULL);
    int64_t t0 = h_now_ms();
    char *cell = h_cell("stream_channel_shut_then_sleep");
    ci_result *r = h_run_status(s, cell, CI_STATUS_KILLED);
    free(cell);
    assert_true(h_now_ms() - t0 < 5000);
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    h_assert_contains(ci_result_error_value(r), "closed its protocol channel");
    ci_result_free(r);
    assert_int_equal(ci_session_pid(s), -1);
    ci_session_free(s);
}

static void test_interrupt_when_idle_does_nothing(void **state)
{
    assert_int_equal(ci_session_interrupt(S), 0);
    assert_int_equal(ci_session_interrupt(S), 0);
    h_expect(S, "import time; time.sleep(0.2); 5", "5", "");
    /* Nor right after a run ended. */
    h_expect(S, "6", "6", "");
    assert_int_equal(ci_session_interrupt(S), 0);
    h_expect(S, "import time; time.sleep(0.2); 7", "7", "");
}

static void test_interrupt_null_is_einval(void **state)
{
    assert_int_equal(ci_session_interrupt(NULL), CI_EINVAL);
}

static void test_interrupt_ignored_is_killed_after_the_grace(void **state)
{
    ci_result *r = run_interrupted(S,
                                   "import signal\n"
                                   "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                   "while True: pass",
                                   300);
    assert_status(r, CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    assert_non_null(ci_result_error_value(r));
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), -1);
    /* Nothing is running: an interrupt now finds no cell. */
    assert_int_equal(ci_session_interrupt(S), 0);
    assert_int_equal(ci_session_restart(S), CI_OK);
    h_expect(S, "1 + 1", "2", "");
}

static void test_interrupt_from_the_output_callback(void **state)
{
    struct rec *rc = rec_new();
    rc->interrupt = S;
    int64_t t0 = h_now_ms();
    char *cell = h_cell("stream_go_then_loop");
    ci_result *r = run_stream(S, cell, rc);
    free(cell);
    assert_true(h_now_ms() - t0 < GRACE_MS + 5000);
    assert_status(r, CI_STATUS_INTERRUPTED);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    assert_int_equal(rc->interrupted, 1);
    assert_int_equal(rc->interrupt_rc, 1);
    /* The interrupt may land between print's two writes ("go", "\n"). */
    assert_true(rc->out_len >= 2);
    assert_memory_equal(rc->out, "go", 2);
    assert_chunks_are_the_result(rc, r);
    ci_result_free(r);
    free(rc);
    h_expect(S, "'next'", "'next'", "");
}

/* ----------------------------------------------------------- ci_run_ex */

static void test_run_ex_timeout_overrides_the_sessions(void **state)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    opts.timeout_ms = 300;
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run_ex(S, "y_kept = 3\nwhile True: pass", &opts, &r), CI_OK);
    int64_t took = h_now_ms() - t0;
    assert_non_null(r);
    assert_status(r, CI_STATUS_TIMEOUT);
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    assert_true(took >= 250);
    if (took > 300 + GRACE_MS + 3000)
        fail_msg("a 300 ms timeout took %lld ms", (long long)took);
    ci_result_free(r);
    h_expect(S, "y_kept", "3", "");
    /* The next run without options has the session's 30 s again. */
    h_expect(S, "import time\ntime.sleep(1)\n'slept'", "'slept'", "");
    /* And so does a run with a timeout of 0. */
    opts.timeout_ms = 0;
    assert_int_equal(ci_run_ex(S, "import time\ntime.sleep(0.5)\n'zero'", &opts, &r), CI_OK);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'zero'");
    ci_result_free(r);
}

static void test_run_ex_longer_timeout_than_the_sessions(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.timeout_ms = 300});
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    opts.timeout_ms = 5000;
    ci_result *r = NULL;
    assert_int_equal(ci_run_ex(s, "import time\ntime.sleep(0.8)\n'long'", &opts, &r), CI_OK);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'long'");
    ci_result_free(r);
    r = h_run_status(s, "import time\ntime.sleep(0.8)\n'short'", CI_STATUS_TIMEOUT);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_run_options_init(void **state)
{
    ci_run_options opts;
    memset(&opts, 0xA5, sizeof opts);
    assert_int_equal(ci_run_options_init(&opts, CI_RUN_OPTIONS_VERSION), CI_OK);
    assert_int_equal(opts.version, CI_RUN_OPTIONS_VERSION);
    assert_int_equal(opts.timeout_ms, 0);
    assert_true(opts.on_output == NULL);
    assert_null(opts.payload);
    assert_int_equal(ci_run_options_init(&opts, 1), CI_OK);
    assert_int_equal(ci_run_options_init(&opts, 0), CI_EINVAL);
    assert_int_equal(ci_run_options_init(&opts, 99), CI_EINVAL);
    assert_int_equal(ci_run_options_init(&opts, CI_RUN_OPTIONS_VERSION + 1), CI_EINVAL);
    assert_int_equal(ci_run_options_init(NULL, CI_RUN_OPTIONS_VERSION), CI_EINVAL);
}

static void test_run_options_init_macro(void **state)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    assert_int_equal(opts.version, CI_RUN_OPTIONS_VERSION);
    assert_int_equal(opts.timeout_ms, 0);
    assert_true(opts.on_output == NULL);
    assert_null(opts.payload);
    ci_result *r = NULL;
    assert_int_equal(ci_run_ex(S, "print('m')\n8", &opts, &r), CI_OK);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "8");
    ci_result_free(r);
}

static void test_run_ex_with_null_options_is_ci_run(void **state)
{
    ci_result *r = NULL;
    assert_int_equal(ci_run_ex(S, "print('q')\n9", NULL, &r), CI_OK);
    assert_non_null(r);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "9");
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(o, "q\n", 2);
    ci_result_free(r);
}

static void test_run_ex_refuses_bad_options(void **state)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    ci_result *r = (ci_result *)1;
    opts.timeout_ms = 86400001;
    assert_int_equal(ci_run_ex(S, "1", &opts, &r), CI_EINVAL);
    assert_null(r);

    opts.timeout_ms = 0;
    opts.version = 0;
    r = (ci_result *)1;
    assert_int_equal(ci_run_ex(S, "1", &opts, &r), CI_EINVAL);
    assert_null(r);
    opts.version = CI_RUN_OPTIONS_VERSION + 1;
    assert_int_equal(ci_run_ex(S, "1", &opts, &r), CI_EINVAL);
    assert_null(r);

    opts.version = CI_RUN_OPTIONS_VERSION;
    assert_int_equal(ci_run_ex(NULL, "1", &opts, &r), CI_EINVAL);
    assert_int_equal(ci_run_ex(S, NULL, &opts, &r), CI_EINVAL);
    assert_int_equal(ci_run_ex(S, "1", &opts, NULL), CI_EINVAL);

    /* The largest timeout is accepted, and the session still works. */
    opts.timeout_ms = 86400000;
    assert_int_equal(ci_run_ex(S, "'max'", &opts, &r), CI_OK);
    assert_status(r, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'max'");
    ci_result_free(r);
}

static void test_run_ex_streams_to_on_output(void **state)
{
    struct rec *rc = rec_new();
    ci_run_options opts;
    assert_int_equal(ci_run_options_init(&opts, CI_RUN_OPTIONS_VERSION), CI_OK);
    opts.on_output = on_output;
    opts.payload = rc;
    ci_result *r = NULL;
    assert_int_equal(ci_run_ex(S, "import sys\nprint('so')\nprint('se', file=sys.stderr)", &opts,
                               &r),
                     CI_OK);
    assert_status(r, CI_STATUS_OK);
    assert_ptr_equal(rc->payload_seen, rc);
    assert_int_equal(rc->out_len, 3);
    assert_memory_equal(rc->out, "so\n", 3);
    assert_int_equal(rc->err_len, 3);
    assert_memory_equal(rc->err, "se\n", 3);
    assert_chunks_are_the_result(rc, r);
    ci_result_free(r);
    free(rc);
}

int main(void)
{
    h_watchdog(110);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_first_chunk_arrives_long_before_the_end, h_setup_alive),
        cmocka_unit_test_setup(test_both_streams_arrive_tagged_and_exact, h_setup_alive),
        cmocka_unit_test_setup(test_callback_gets_the_limit_then_one_note, h_setup_alive),
        cmocka_unit_test_setup(test_chunks_end_at_line_breaks, h_setup_alive),
        cmocka_unit_test_setup(test_progress_without_line_breaks_still_streams, h_setup_alive),
        cmocka_unit_test(test_a_long_line_comes_in_whole_characters),
        cmocka_unit_test(test_a_long_line_in_two_writes_still_comes_in_pieces),
        cmocka_unit_test_setup(test_the_chunk_before_the_note_ends_on_a_character, h_setup_alive),
        cmocka_unit_test_setup(test_callback_gets_its_payload_on_the_calling_thread,
                               h_setup_alive),
        cmocka_unit_test_setup(test_cell_without_output_makes_no_call, h_setup_alive),
        cmocka_unit_test_setup(test_null_callback_is_ci_run, h_setup_alive),
        cmocka_unit_test_setup(test_stream_refuses_null_arguments, h_setup_alive),
        cmocka_unit_test_setup(test_run_from_the_callback_is_busy, h_setup_alive),
        cmocka_unit_test_setup(test_interrupt_from_another_thread_keeps_state, h_setup_alive),
        cmocka_unit_test_setup(test_interrupt_wakes_a_sleeping_cell, h_setup_alive),
        cmocka_unit_test_setup(test_early_interrupt_after_an_interrupted_cell_is_kept, h_setup_alive),
        cmocka_unit_test(test_interrupt_of_a_dead_workers_run_spares_the_next),
        cmocka_unit_test(test_closed_channel_ends_the_run_at_once),
        cmocka_unit_test_setup(test_interrupt_when_idle_does_nothing, h_setup_alive),
        cmocka_unit_test(test_interrupt_null_is_einval),
        cmocka_unit_test_setup(test_interrupt_ignored_is_killed_after_the_grace, h_setup_alive),
        cmocka_unit_test_setup(test_interrupt_from_the_output_callback, h_setup_alive),
        cmocka_unit_test_setup(test_run_ex_timeout_overrides_the_sessions, h_setup_alive),
        cmocka_unit_test(test_run_ex_longer_timeout_than_the_sessions),
        cmocka_unit_test(test_run_options_init),
        cmocka_unit_test_setup(test_run_options_init_macro, h_setup_alive),
        cmocka_unit_test_setup(test_run_ex_with_null_options_is_ci_run, h_setup_alive),
        cmocka_unit_test_setup(test_run_ex_refuses_bad_options, h_setup_alive),
        cmocka_unit_test_setup(test_run_ex_streams_to_on_output, h_setup_alive),
    };
    return cmocka_run_group_tests_name("stream", tests, group_setup, h_group_teardown);
}
