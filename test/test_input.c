/*
 * input() and getpass.getpass() in a cell (ci_run_options.on_input), as
 * Jupyter's input_request: refused at once without a callback, answered
 * by one, bounded by the timeout while the callback runs, cut short by an
 * interrupt while the worker waits. The group's session gives an
 * interrupted cell 500 ms and has the default 30 s timeout.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define GRACE_MS 500
#define REPLY_MAX 1048576 /* proto.h's CI_INPUT_REPLY_MAX, the documented 1 MiB */

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, &(struct h_limits){.grace_ms = GRACE_MS});
}

/* ------------------------------------------------------------ the host */

/* What the host answers, and what its callbacks saw. */
struct host {
    const char *answers[4]; /* answer of call k (the last one past the end); NULL: none */
    size_t big;             /* if set, answer this many 'x' instead */
    int rc;                 /* what on_input returns */
    int sleep_ms;           /* how long on_input takes */
    ci_session *interrupt;  /* if set, on_input interrupts it first */
    int calls;
    char prompt[8192];      /* the last prompt */
    size_t prompt_len;
    int password;
    int wrong_thread;
    void *payload_seen;
    pthread_t thread;
    char out[4096];         /* stdout on_output got */
    size_t out_len;
    size_t out_at_ask;      /* out_len when on_input was called */
};

static struct host *host_new(const char *answer)
{
    struct host *h = calloc(1, sizeof *h);
    assert_non_null(h);
    h->answers[0] = answer;
    h->thread = pthread_self();
    h->password = -1;
    return h;
}

static int on_input(const char *prompt, int password, char **reply, void *payload)
{
    struct host *h = payload;
    int k = h->calls < 4 ? h->calls : 3;

    h->payload_seen = payload;
    if (!pthread_equal(pthread_self(), h->thread))
        h->wrong_thread = 1;
    h->calls++;
    h->prompt_len = strlen(prompt);
    snprintf(h->prompt, sizeof h->prompt, "%s", prompt);
    h->password = password;
    h->out_at_ask = h->out_len;
    if (*reply != NULL)
        h->wrong_thread = 2; /* the library must hand over NULL */
    if (h->interrupt)
        ci_session_interrupt(h->interrupt);
    if (h->sleep_ms)
        h_sleep_ms(h->sleep_ms);
    while (k > 0 && !h->answers[k])
        k--;
    if (h->big) {
        *reply = malloc(h->big + 1);
        assert_non_null(*reply);
        memset(*reply, 'x', h->big);
        (*reply)[h->big] = '\0';
    } else if (h->answers[k]) {
        *reply = strdup(h->answers[k]);
    }
    return h->rc;
}

static void on_output(int stream, const char *data, size_t len, void *payload)
{
    struct host *h = payload;
    if (stream == CI_STREAM_STDOUT && h->out_len + len <= sizeof h->out) {
        memcpy(h->out + h->out_len, data, len);
        h->out_len += len;
    }
}

/* Runs @code with @h as the host (NULL: no on_input) and @timeout_ms (0:
 * the session's); asserts the status. */
static ci_result *ask(const char *code, struct host *h, unsigned long timeout_ms, ci_status want)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    opts.timeout_ms = timeout_ms;
    if (h) {
        opts.on_input = on_input;
        opts.on_output = on_output;
        opts.payload = h;
    }
    return h_run_ex_status(S, code, &opts, want);
}

/* Neither a prompt nor an answer reached the cell's stdout: a front end
 * shows them, the cell's output does not. */
static void assert_nothing_printed(const ci_result *r)
{
    size_t len;
    ci_result_stdout(r, &len);
    assert_int_equal(len, 0);
}

static void assert_refused(const ci_result *r, const char *message)
{
    h_assert_str(ci_result_error_name(r), "StdinNotImplementedError");
    h_assert_contains(ci_result_error_value(r), message);
    assert_null(ci_result_value(r));
}

/* --------------------------------------------------- without on_input */

static void test_input_without_a_callback_raises_at_once(void **state)
{
    int64_t t0 = h_now_ms();
    ci_result *r = ask("x = input('n? ')", NULL, 0, CI_STATUS_ERROR);
    assert_true(h_now_ms() - t0 < 5000); /* not the 30 s timeout */
    h_assert_str(ci_result_error_value(r),
                 "input() cannot read from a keyboard in this sandbox: put the value in the "
                 "code instead (a host can answer input() in the cell's main thread through "
                 "ci_run_options.on_input)");
    assert_refused(r, "keyboard");
    h_assert_contains(ci_result_traceback(r), "StdinNotImplementedError");
    h_assert_contains(ci_result_traceback(r), "<cell ");
    assert_nothing_printed(r);
    ci_result_free(r);
    /* The exception is IPython's, as a kernel raises it. */
    h_expect_cell(S, "input_stdin_not_implemented", "True", "");
}

static void test_getpass_without_a_callback_raises_at_once(void **state)
{
    ci_result *r = ask("import getpass\ngetpass.getpass()", NULL, 0, CI_STATUS_ERROR);
    assert_refused(r, "getpass() cannot read from a keyboard in this sandbox");
    ci_result_free(r);
}

/* ------------------------------------------------------- with on_input */

static void test_the_answer_is_what_input_returns(void **state)
{
    struct host *h = host_new("42");
    ci_result *r = ask("int(input('n? ')) * 2", h, 0, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "84");
    assert_int_equal(h->calls, 1);
    assert_string_equal(h->prompt, "n? ");
    assert_int_equal(h->password, 0);
    assert_ptr_equal(h->payload_seen, h);
    assert_int_equal(h->wrong_thread, 0);
    assert_nothing_printed(r);
    ci_result_free(r);
    free(h);
}

static void test_getpass_asks_for_a_password(void **state)
{
    struct host *h = host_new("s3cret");
    ci_result *r = ask("import getpass\np = getpass.getpass()\nlen(p), p[::-1]", h, 0,
                       CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "(6, 'terc3s')");
    assert_int_equal(h->password, 1);
    assert_string_equal(h->prompt, "Password: ");
    assert_nothing_printed(r);
    ci_result_free(r);
    free(h);
}

static void test_several_inputs_in_one_cell(void **state)
{
    struct host *h = host_new("ab");
    h->answers[1] = "";
    h->answers[2] = "caf\xc3\xa9";
    ci_result *r = ask("[input(), input('2'), input(prompt=3)]", h, 0, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "['ab', '', 'café']");
    assert_int_equal(h->calls, 3);
    assert_string_equal(h->prompt, "3");
    ci_result_free(r);
    free(h);
}

static void test_output_before_the_prompt_comes_first(void **state)
{
    struct host *h = host_new("y");
    ci_result *r = ask("print('before')\nx = input('go? ')\nprint('after', x)", h, 0,
                       CI_STATUS_OK);
    assert_int_equal(h->out_at_ask, 7);
    assert_int_equal(h->out_len, 15);
    assert_memory_equal(h->out, "before\nafter y\n", 15);
    ci_result_free(r);
    free(h);
}

static void test_a_failing_callback_makes_input_raise(void **state)
{
    struct host *h = host_new("ignored");
    h->rc = -1;
    ci_result *r = ask("input('n? ')", h, 0, CI_STATUS_ERROR);
    assert_refused(r, "the host did not answer input(): put the value in the code instead");
    assert_int_equal(h->calls, 1);
    ci_result_free(r);
    /* 0 without an answer refuses too. */
    h->rc = 0;
    h->answers[0] = NULL;
    r = ask("input()", h, 0, CI_STATUS_ERROR);
    assert_refused(r, "the host did not answer input()");
    ci_result_free(r);
    free(h);
}

static void test_answers_over_the_cap_or_not_utf8_are_refused(void **state)
{
    struct host *h = host_new(NULL);
    h->big = REPLY_MAX;
    ci_result *r = ask("s = input()\nlen(s), set(s)", h, 0, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "(1048576, {'x'})");
    ci_result_free(r);
    h->big = REPLY_MAX + 1;
    r = ask("input()", h, 0, CI_STATUS_ERROR);
    assert_refused(r, "was not UTF-8 text of at most 1048576 bytes");
    ci_result_free(r);
    h->big = 0;
    h->answers[0] = "\xc0\xaf"; /* overlong '/' */
    r = ask("input()", h, 0, CI_STATUS_ERROR);
    assert_refused(r, "the host's answer to input() was not UTF-8 text");
    ci_result_free(r);
    free(h);
}

static void test_ctrl_d_is_eof(void **state)
{
    struct host *h = host_new("\x04");
    ci_result *r = ask("input()", h, 0, CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "EOFError");
    ci_result_free(r);
    free(h);
}

static void test_prompt_is_cut_and_spelled_out(void **state)
{
    struct host *h = host_new("ok");
    /* 5000 two-byte characters: cut at 4096 bytes, on a boundary. */
    ci_result *r = ask("input('\\u00e9' * 5000)", h, 0, CI_STATUS_OK);
    assert_int_equal(h->prompt_len, 4096);
    assert_true(h_utf8_valid(h->prompt, h->prompt_len));
    ci_result_free(r);
    r = ask("input('a\\x00b\\udc80')", h, 0, CI_STATUS_OK);
    assert_string_equal(h->prompt, "a\\x00b\\udc80");
    ci_result_free(r);
    free(h);
}

/* Runs @code, which succeeds, with a host that must not be asked. */
static ci_result *ask_nobody(const char *code)
{
    struct host *h = host_new("never");
    ci_result *r = ask(code, h, 0, CI_STATUS_OK);
    assert_int_equal(h->calls, 0);
    free(h);
    return r;
}

/* As in Python: a cell that scripts its input() through sys.stdin reads
 * what it wrote there, prompt on stdout. */
static void test_a_stdin_the_cell_set_is_read(void **state)
{
    char *cell = h_cell("input_from_the_cells_own_stdin");
    ci_result *r = ask_nobody(cell);
    free(cell);
    h_assert_str(ci_result_value(r), "42");
    h_assert_str(ci_result_stdout(r, NULL), "n? ");
    ci_result_free(r);
}

static void test_input_in_another_thread_is_not_asked(void **state)
{
    char *cell = h_cell("input_in_another_thread");
    ci_result *r = ask_nobody(cell);
    free(cell);
    h_assert_contains(ci_result_value(r), "StdinNotImplementedError: input() cannot read");
    ci_result_free(r);
}

/* ------------------------------------------------- timeout, interrupt */

static void test_the_timeout_bounds_a_callback_that_sleeps_past_it(void **state)
{
    struct host *h = host_new("late");
    h->sleep_ms = 1200;
    int64_t t0 = h_now_ms();
    ci_result *r = ask("x = 'before'\nx = input('slow? ')", h, 500, CI_STATUS_TIMEOUT);
    int64_t took = h_now_ms() - t0;
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    /* The callback's 1.2 s, then the cell stops at once. */
    if (took < 1200 || took > 1200 + GRACE_MS)
        fail_msg("the run took %lld ms", (long long)took);
    assert_int_equal(h->calls, 1);
    ci_result_free(r);
    /* The late answer was dropped; the session and its state live on, and
     * the next input() gets its own answer. */
    h_expect(S, "x", "'before'", "");
    h->sleep_ms = 0;
    h->answers[0] = "next";
    r = ask("input()", h, 0, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'next'");
    ci_result_free(r);
    free(h);
}

static void test_an_interrupt_stops_a_cell_waiting_for_its_answer(void **state)
{
    struct host *h = host_new("too late");
    struct h_interrupter in;
    h->sleep_ms = 400;
    h_interrupt_later(&in, S, 100);
    ci_result *r = ask("y = 0\ny = input('wait? ')", h, 0, CI_STATUS_INTERRUPTED);
    assert_int_equal(h_interrupter_join(&in), 1);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    assert_int_equal(h->calls, 1);
    ci_result_free(r);
    h_expect(S, "y", "0", ""); /* input() never returned */
    free(h);
}

static void test_an_interrupt_from_the_callback_drops_its_answer(void **state)
{
    struct host *h = host_new("dropped");
    h->interrupt = S;
    /* The cell catches the interrupt and asks again: once interrupted, the
     * host is not asked again. */
    char *cell = h_cell("input_asks_again_after_an_interrupt");
    ci_result *r = ask(cell, h, 0, CI_STATUS_INTERRUPTED);
    free(cell);
    assert_int_equal(h->calls, 1);
    ci_result_free(r);
    h_expect(S, "got", "['interrupted', 'input() was not answered: the cell is being interrupted']",
             "");
    free(h);
}

/* The cell's own SIGINT, while the host still thinks: the worker gives
 * up on the request, and drops the late answer before it asks again. */
static void test_a_request_the_cell_gave_up_on_is_not_answered_twice(void **state)
{
    struct host *h = host_new("first");
    h->answers[1] = "second";
    h->sleep_ms = 300;
    /* (The process's SIGINT goes to the main thread, which waits for it
     * unblocked; signal.pthread_kill() from another thread fails in a
     * zygote's child, whose glibc keeps the zygote's thread id.) */
    char *cell = h_cell("input_sigint_from_a_thread_while_asked");
    ci_result *r = ask(cell, h, 0, CI_STATUS_OK);
    free(cell);
    h_assert_str(ci_result_value(r), "('gave up', 'second')");
    assert_int_equal(h->calls, 2);
    ci_result_free(r);
    /* Given up on in one cell, answered after it ended: the next cell is
     * still read as a cell. */
    h->calls = 0;
    h->answers[1] = NULL;
    r = ask("threading.Timer(0.1, sigint).start()\ninput()", h, 0, CI_STATUS_ERROR);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    ci_result_free(r);
    h->sleep_ms = 0;
    h->answers[0] = "third";
    r = ask("input()", h, 0, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'third'");
    ci_result_free(r);
    free(h);
}

/* ------------------------------------------------------------ options */

static void test_version_1_options_take_no_input(void **state)
{
    /* A program built with the version 1 header: a struct without
     * on_input, whose init must not write past it. */
    struct {
        ci_run_options v1;
        unsigned char guard[64];
    } o;
    memset(&o, 0xAB, sizeof o);
    assert_int_equal(ci_run_options_init(&o.v1, 1), CI_OK);
    for (size_t i = offsetof(ci_run_options, on_input); i < sizeof o.v1; i++)
        assert_int_equal(((unsigned char *)&o.v1)[i], 0xAB);
    ci_result *r = NULL;
    assert_int_equal(ci_run_ex(S, "input()", &o.v1, &r), CI_OK);
    h_assert_str(ci_result_error_name(r), "StdinNotImplementedError");
    ci_result_free(r);
    ci_run_options v2;
    assert_int_equal(ci_run_options_init(&v2, 2), CI_OK);
    assert_null(v2.on_input);
    assert_int_equal(CI_RUN_OPTIONS_VERSION, 2);
}

int main(void)
{
    h_watchdog(110);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_input_without_a_callback_raises_at_once, h_setup_alive),
        cmocka_unit_test_setup(test_getpass_without_a_callback_raises_at_once, h_setup_alive),
        cmocka_unit_test_setup(test_the_answer_is_what_input_returns, h_setup_alive),
        cmocka_unit_test_setup(test_getpass_asks_for_a_password, h_setup_alive),
        cmocka_unit_test_setup(test_several_inputs_in_one_cell, h_setup_alive),
        cmocka_unit_test_setup(test_output_before_the_prompt_comes_first, h_setup_alive),
        cmocka_unit_test_setup(test_a_failing_callback_makes_input_raise, h_setup_alive),
        cmocka_unit_test_setup(test_answers_over_the_cap_or_not_utf8_are_refused, h_setup_alive),
        cmocka_unit_test_setup(test_ctrl_d_is_eof, h_setup_alive),
        cmocka_unit_test_setup(test_prompt_is_cut_and_spelled_out, h_setup_alive),
        cmocka_unit_test_setup(test_a_stdin_the_cell_set_is_read, h_setup_alive),
        cmocka_unit_test_setup(test_input_in_another_thread_is_not_asked, h_setup_alive),
        cmocka_unit_test_setup(test_the_timeout_bounds_a_callback_that_sleeps_past_it,
                               h_setup_alive),
        cmocka_unit_test_setup(test_an_interrupt_stops_a_cell_waiting_for_its_answer,
                               h_setup_alive),
        cmocka_unit_test_setup(test_an_interrupt_from_the_callback_drops_its_answer,
                               h_setup_alive),
        cmocka_unit_test_setup(test_a_request_the_cell_gave_up_on_is_not_answered_twice,
                               h_setup_alive),
        cmocka_unit_test_setup(test_version_1_options_take_no_input, h_setup_alive),
    };
    return cmocka_run_group_tests_name("input", tests, group_setup, h_group_teardown);
}
