/*
 * The host against a hostile worker. This program is its own fake worker:
 * started as codeinterp-worker (argv[1] == "--parent", through
 * $CODEINTERP_WORKER), it speaks the protocol badly in the way the cell's
 * source names. Each case checks that the host gives a clear status within
 * the run's deadline, keeps its memory bounded, and can restart.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>

#include "helpers.h"
#include "proto.h"

/* ------------------------------------------------------------ the fake */

static void put(const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(CI_FD_CHANNEL, c, n);
        if (k <= 0)
            _exit(99);
        c += k;
        n -= (size_t)k;
    }
}

static void frame(uint32_t type, const void *payload, uint32_t len)
{
    struct ci_frame_header h = {type, len};
    put(&h, sizeof h);
    put(payload, len);
}

/* Appends a field to @buf at @at; returns the new end. */
static size_t field(unsigned char *buf, size_t at, uint32_t tag, const void *p, uint32_t len)
{
    memcpy(buf + at, &tag, 4);
    memcpy(buf + at + 4, &len, 4);
    memcpy(buf + at + 8, p, len);
    return at + 8 + len;
}

/* Reads exactly @n bytes: the host sends a frame's parts with separate
 * send() calls, so one read() may return only the first of them. */
static int get(void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t k = read(CI_FD_CHANNEL, c, n);
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static uint32_t run_count; /* the execution count of the RUN being answered */

/* The two fields every RESULT needs: the echoed count and the outcome. */
static size_t outcome(unsigned char *buf, size_t at, uint32_t o)
{
    at = field(buf, at, CI_FIELD_COUNT, &run_count, 4);
    return field(buf, at, CI_FIELD_OUTCOME, &o, 4);
}

static int fake_worker(void)
{
    static unsigned char buf[1 << 16];
    char cwd[PATH_MAX], code[256];
    struct ci_frame_header h;
    uint32_t ready[2] = {CI_PROTO_VERSION, CI_LAYER_ALL};
    size_t n;

    signal(SIGINT, SIG_IGN); /* a worker that ignores interrupts */
    if (getcwd(cwd, sizeof cwd) && strstr(cwd, "bad-ready")) {
        frame(CI_FRAME_RESULT, ready, sizeof ready);
        pause();
    }
    if (getcwd(cwd, sizeof cwd) && strstr(cwd, "silent-start"))
        pause();
    if (getcwd(cwd, sizeof cwd) && strstr(cwd, "no-layers"))
        ready[1] = CI_LAYER_RLIMITS;
    frame(CI_FRAME_READY, ready, sizeof ready);
    for (;;) {
        if (get(&h, sizeof h) < 0 || h.len < 4 || h.len - 4 >= sizeof code)
            _exit(98);
        if (get(buf, h.len) < 0)
            _exit(98);
        memcpy(&run_count, buf, 4);
        memcpy(code, buf + 4, h.len - 4);
        code[h.len - 4] = '\0';

        if (!strcmp(code, "good")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = field(buf, n, CI_FIELD_VALUE, "42", 2);
            if (write(1, "out", 3) != 3 || write(2, "err", 3) != 3)
                _exit(97);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "huge-length")) {
            struct ci_frame_header big = {CI_FRAME_RESULT, 0xFFFFFFF0u};
            put(&big, sizeof big);
            pause();
        } else if (!strcmp(code, "field-past-frame")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            uint32_t tag = CI_FIELD_VALUE, len = 1000;
            memcpy(buf + n, &tag, 4);
            memcpy(buf + n + 4, &len, 4);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n + 8 + 10);
        } else if (!strcmp(code, "bad-utf8")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = field(buf, n, CI_FIELD_VALUE, "\xc0\xaf", 2); /* overlong '/' */
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "nul-in-text")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = field(buf, n, CI_FIELD_VALUE, "a\0b", 3);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "unknown-tag")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = field(buf, n, 29, "x", 1);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "repeated-field")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = outcome(buf, n, CI_OUTCOME_OK);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "no-outcome")) {
            n = field(buf, 0, CI_FIELD_COUNT, &run_count, 4);
            n = field(buf, n, CI_FIELD_VALUE, "1", 1);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "no-count")) {
            uint32_t ok = CI_OUTCOME_OK;
            n = field(buf, 0, CI_FIELD_OUTCOME, &ok, 4);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "answer-twice")) {
            /* A forged early answer, then the real one: the second lands
             * while the host waits for the next cell. */
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = field(buf, n, CI_FIELD_VALUE, "1", 1);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "bad-outcome")) {
            n = outcome(buf, 0, 77);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "error-without-name")) {
            n = outcome(buf, 0, CI_OUTCOME_ERROR);
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "wrong-type")) {
            frame(CI_FRAME_READY, ready, sizeof ready);
        } else if (!strcmp(code, "over-output-limit")) {
            static unsigned char big[8192];
            memset(big, 'v', sizeof big);
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = field(buf, n, CI_FIELD_VALUE, big, sizeof big); /* limit is 4096 */
            frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "half-frame-then-stall")) {
            put(&(struct ci_frame_header){CI_FRAME_RESULT, 100}, sizeof h);
            put("abc", 3);
            pause();
        } else if (!strncmp(code, "violation-", 10)) {
            /* u32 syscall number, then its name */
            uint32_t nr = !strcmp(code, "violation-unknown-number") ? 100000 : 101;
            const char *name = !strcmp(code, "violation-bad-name") ? "pt race" : "ptrace";
            size_t len = 4 + strlen(name);
            memcpy(buf, &nr, 4);
            memcpy(buf + 4, name, strlen(name));
            if (!strcmp(code, "violation-wrong-length"))
                len = 3;
            else if (!strcmp(code, "violation-too-long"))
                memset(buf + 4, 'a', len = 4 + 64);
            frame(CI_FRAME_VIOLATION, buf, (uint32_t)len);
            if (!strcmp(code, "violation-then-result")) {
                n = outcome(buf, 0, CI_OUTCOME_OK);
                frame(CI_FRAME_RESULT, buf, (uint32_t)n);
            }
            if (!strcmp(code, "violation-then-sigsys")) {
                struct rlimit no_core = {0, 0};
                setrlimit(RLIMIT_CORE, &no_core);
                signal(SIGSYS, SIG_DFL);
                raise(SIGSYS);
            }
            pause();
        } else if (!strcmp(code, "stall")) {
            pause();
        } else if (!strcmp(code, "flood")) {
            memset(buf, 'x', sizeof buf);
            for (;;)
                if (write(1, buf, sizeof buf) < 0)
                    _exit(96);
        } else if (!strcmp(code, "exit-5")) {
            _exit(5);
        } else if (!strcmp(code, "close-channel-and-live")) {
            close(CI_FD_CHANNEL);
            pause();
        } else {
            _exit(95);
        }
    }
}

/* ------------------------------------------------------------ the tests */

static char self_path[PATH_MAX];

static int use_fake(void **state)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    assert_true(n > 0);
    self_path[n] = '\0';
    return setenv("CODEINTERP_WORKER", self_path, 1);
}

static int unuse_fake(void **state)
{
    return unsetenv("CODEINTERP_WORKER");
}

static const struct h_limits fast = {.timeout_ms = 800, .grace_ms = 300, .output = 4096};

/* Runs @mode on a fresh fake session; asserts KILLED with @name, within
 * the deadline, and that the session restarts and works. */
static void expect_killed(const char *mode, const char *name, const char *why)
{
    ci_session *s = h_session(&fast);
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run(s, mode, &r), CI_OK);
    assert_true(h_now_ms() - t0 <= 800 + 300 + 1000);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), name);
    if (why)
        h_assert_contains(ci_result_error_value(r), why);
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(s), -1);
    assert_int_equal(ci_run(s, "good", &r), CI_EDEAD);
    assert_null(r);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "good", "42", "out");
    ci_session_free(s);
}

static void test_well_formed_result_is_taken_as_sent(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = h_run_status(s, "good", CI_STATUS_OK);
    size_t len;
    h_assert_str(ci_result_value(r), "42");
    assert_string_equal(ci_result_stdout(r, &len), "out");
    assert_int_equal(len, 3);
    assert_string_equal(ci_result_stderr(r, &len), "err");
    assert_int_equal(ci_result_execution_count(r), 1);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_frame_length_over_cap_is_refused_before_allocating(void **state)
{
    expect_killed("huge-length", "ProtocolError", "size limit");
}

static void test_field_longer_than_frame_is_refused(void **state)
{
    expect_killed("field-past-frame", "ProtocolError", "field longer than its frame");
}

static void test_invalid_utf8_is_refused(void **state)
{
    expect_killed("bad-utf8", "ProtocolError", "UTF-8");
}

static void test_nul_in_text_is_refused(void **state)
{
    expect_killed("nul-in-text", "ProtocolError", "UTF-8 without NUL");
}

static void test_unknown_and_repeated_fields_are_refused(void **state)
{
    expect_killed("unknown-tag", "ProtocolError", "unknown field");
    expect_killed("repeated-field", "ProtocolError", "repeated field");
}

static void test_missing_or_bad_outcome_is_refused(void **state)
{
    expect_killed("no-outcome", "ProtocolError", "no outcome");
    expect_killed("bad-outcome", "ProtocolError", "unknown outcome");
    expect_killed("error-without-name", "ProtocolError", "without a name");
}

static void test_missing_execution_count_is_refused(void **state)
{
    expect_killed("no-count", "ProtocolError", "no execution count");
}

static void test_answer_for_another_cell_is_refused(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = h_run_status(s, "answer-twice", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "1");
    ci_result_free(r);
    /* The second answer to cell 1 must not pass for cell 2's: it is
     * seen waiting before cell 2 is sent or, if it is still in flight
     * then, by its count. */
    r = h_run_status(s, "good", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "ProtocolError");
    if (!strstr(ci_result_error_value(r), "while no cell was running"))
        h_assert_contains(ci_result_error_value(r), "a result for another cell");
    assert_int_equal(ci_result_execution_count(r), 2);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_bogus_violation_frames_are_refused(void **state)
{
    expect_killed("violation-wrong-length", "ProtocolError", "violation report of the wrong length");
    expect_killed("violation-too-long", "ProtocolError", "violation report of the wrong length");
    expect_killed("violation-unknown-number", "ProtocolError", "unknown system call");
    expect_killed("violation-bad-name", "ProtocolError", "malformed name");
    expect_killed("violation-then-result", "ProtocolError", "a result after a violation report");
}

/* The frame names the call only once the worker dies by SIGSYS. */
static void test_violation_frame_names_the_call_of_a_sigsys_death(void **state)
{
    expect_killed("violation-then-sigsys", "SandboxViolation",
                  "the cell made a forbidden system call (ptrace); the worker was killed");
}

/* A violation report is no result: a worker that sends one and lives on
 * is killed at the deadline, and the call is not named. */
static void test_violation_frame_alone_is_not_a_result(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = NULL;
    assert_int_equal(ci_run(s, "violation-then-live", &r), CI_OK);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "Timeout");
    h_assert_not_contains(ci_result_error_value(r), "ptrace");
    ci_result_free(r);
    ci_session_free(s);
}

static void test_unexpected_frame_type_is_refused(void **state)
{
    expect_killed("wrong-type", "ProtocolError", "unexpected frame type");
}

static void test_text_over_output_limit_is_refused(void **state)
{
    expect_killed("over-output-limit", "ProtocolError", "over the output limit");
}

static void test_half_a_frame_then_silence_is_killed_at_the_deadline(void **state)
{
    expect_killed("half-frame-then-stall", "Timeout", "did not stop within 300 ms");
}

static void test_silent_worker_ignoring_sigint_is_killed_at_the_deadline(void **state)
{
    expect_killed("stall", "Timeout", "800 ms timeout");
}

static void test_endless_output_is_capped_and_killed(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = NULL;
    size_t len;
    assert_int_equal(ci_run(s, "flood", &r), CI_OK);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "Timeout");
    ci_result_stdout(r, &len);
    assert_int_equal(len, 4096);
    assert_true(ci_result_truncated(r));
    ci_result_free(r);
    ci_session_free(s);
}

static void test_exit_status_is_reported(void **state)
{
    expect_killed("exit-5", "WorkerDied", "exited with status 5");
}

static void test_worker_closing_its_channel_is_dead(void **state)
{
    expect_killed("close-channel-and-live", "WorkerDied", NULL);
}

static void test_bad_ready_fails_session_new_with_eproto(void **state)
{
    char *root = h_tmpdir(), *dir = h_fmt("%s/bad-ready", root);
    ci_config *cfg = ci_config_new();
    ci_session *s = (ci_session *)1;
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(ci_config_set_workspace_root(cfg, dir), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_EPROTO);
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL), "READY");
    ci_config_free(cfg);
    h_rmtree(root);
    free(dir);
    free(root);
}

static void test_missing_required_layer_fails_session_new(void **state)
{
    char *root = h_tmpdir(), *dir = h_fmt("%s/no-layers", root);
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(ci_config_set_workspace_root(cfg, dir), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_ESANDBOX);
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL), "required sandbox layer is not available: seccomp");
    /* Asking for less lets the same worker through. */
    assert_int_equal(ci_config_require_sandbox(cfg, CI_SANDBOX_RLIMITS), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    assert_int_equal(ci_session_sandbox(s), CI_SANDBOX_RLIMITS);
    ci_session_free(s);
    assert_int_equal(rmdir(dir), 0); /* nothing left behind */
    ci_config_free(cfg);
    h_rmtree(root);
    free(dir);
    free(root);
}

static void test_silent_start_fails_at_the_startup_timeout(void **state)
{
    char *root = h_tmpdir(), *dir = h_fmt("%s/silent-start", root);
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    int64_t t0;
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(ci_config_set_workspace_root(cfg, dir), CI_OK);
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 500), CI_OK);
    t0 = h_now_ms();
    assert_int_equal(ci_session_new(&s, cfg), CI_ESPAWN);
    assert_true(h_now_ms() - t0 < 500 + 3000);
    h_assert_contains(ci_session_errmsg(NULL), "startup timeout");
    /* Nothing is left behind under the root. */
    assert_int_equal(rmdir(dir), 0);
    ci_config_free(cfg);
    h_rmtree(root);
    free(dir);
    free(root);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--parent"))
        return fake_worker();

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_well_formed_result_is_taken_as_sent),
        cmocka_unit_test(test_frame_length_over_cap_is_refused_before_allocating),
        cmocka_unit_test(test_field_longer_than_frame_is_refused),
        cmocka_unit_test(test_invalid_utf8_is_refused),
        cmocka_unit_test(test_nul_in_text_is_refused),
        cmocka_unit_test(test_unknown_and_repeated_fields_are_refused),
        cmocka_unit_test(test_missing_or_bad_outcome_is_refused),
        cmocka_unit_test(test_missing_execution_count_is_refused),
        cmocka_unit_test(test_answer_for_another_cell_is_refused),
        cmocka_unit_test(test_unexpected_frame_type_is_refused),
        cmocka_unit_test(test_bogus_violation_frames_are_refused),
        cmocka_unit_test(test_violation_frame_names_the_call_of_a_sigsys_death),
        cmocka_unit_test(test_violation_frame_alone_is_not_a_result),
        cmocka_unit_test(test_text_over_output_limit_is_refused),
        cmocka_unit_test(test_half_a_frame_then_silence_is_killed_at_the_deadline),
        cmocka_unit_test(test_silent_worker_ignoring_sigint_is_killed_at_the_deadline),
        cmocka_unit_test(test_endless_output_is_capped_and_killed),
        cmocka_unit_test(test_exit_status_is_reported),
        cmocka_unit_test(test_worker_closing_its_channel_is_dead),
        cmocka_unit_test(test_bad_ready_fails_session_new_with_eproto),
        cmocka_unit_test(test_missing_required_layer_fails_session_new),
        cmocka_unit_test(test_silent_start_fails_at_the_startup_timeout),
    };
    return cmocka_run_group_tests(tests, use_fake, unuse_fake);
}
