/*
 * Host functions (ci_config_add_function): a cell calls a builtin, the
 * host's callback answers with JSON or an exception. The group's session
 * defines the functions below with call limits of 4 KiB each and gives an
 * interrupted cell 500 ms. This program is also its own fake worker
 * (argv[1] == "--parent", through $CODEINTERP_WORKER), which forges the
 * calls a hostile worker could send.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fake_worker.h"
#include "helpers.h"
#include "proto.h"

#define GRACE_MS 500
#define LIMIT 4096 /* the group's argument and result limits */

/* ------------------------------------------------------------ the host */

/* What the callbacks answer, and what they saw. */
static struct host {
    const char *json;     /* value()'s answer */
    int second;           /* value() answers again, with a ValueError */
    const char *ename;    /* fail()'s exception name */
    const char *message;  /* fail()'s message */
    size_t big;           /* big()'s answer: a string of this many bytes of JSON */
    int sleep_ms;         /* slow()'s nap */
    ci_session *interrupt; /* slow() interrupts it first, if set */
    int calls;
    int rc[2];            /* what the last call's ci_reply_* calls returned */
    char name[80];
    char args[LIMIT + 1]; /* the last call's arguments */
    size_t args_len;
    pthread_t thread;
    int wrong_thread;
    void *payload_seen;
} H;

static ci_session *S;

static void host(void *payload, const char *name, const char *args, size_t len, ci_reply *reply)
{
    struct host *h = payload;
    char *big;

    h->payload_seen = payload;
    if (!pthread_equal(pthread_self(), h->thread))
        h->wrong_thread = 1;
    h->calls++;
    snprintf(h->name, sizeof h->name, "%s", name);
    h->args_len = len;
    if (len < sizeof h->args)
        memcpy(h->args, args, len + 1); /* with the NUL after it */
    h->rc[0] = h->rc[1] = 99;
    if (!strcmp(name, "echo")) {
        h->rc[0] = ci_reply_json(reply, args, len);
    } else if (!strcmp(name, "value")) {
        h->rc[0] = ci_reply_json(reply, h->json, strlen(h->json));
        if (h->second)
            h->rc[1] = ci_reply_error(reply, "ValueError", "second");
    } else if (!strcmp(name, "fail")) {
        h->rc[0] = ci_reply_error(reply, h->ename, h->message);
    } else if (!strcmp(name, "slow")) {
        if (h->interrupt)
            ci_session_interrupt(h->interrupt);
        h_sleep_ms(h->sleep_ms);
        h->rc[0] = ci_reply_json(reply, "\"late\"", 6);
    } else if (!strcmp(name, "big")) {
        big = malloc(h->big + 1);
        assert_non_null(big);
        memset(big, 'x', h->big);
        big[0] = big[h->big - 1] = '"';
        h->rc[0] = ci_reply_json(reply, big, h->big);
        free(big);
    } /* silent: no answer */
}

static const char *const names[] = {"echo", "value", "fail", "slow", "big", "silent"};

static void add_functions(ci_config *cfg)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        assert_int_equal(ci_config_add_function(cfg, names[i],
                                                i == 0 ? "Returns its arguments.\n\n"
                                                         "echo(*args, **kwargs) -> dict"
                                                       : NULL,
                                                host, &H),
                         CI_OK);
}

static int group_setup(void **state)
{
    ci_config *cfg = h_config(&(struct h_limits){.grace_ms = GRACE_MS});
    int rc;

    H.thread = pthread_self();
    add_functions(cfg);
    assert_int_equal(ci_config_set_call_limits(cfg, LIMIT, LIMIT), CI_OK);
    rc = ci_session_new(&S, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_new: %s: %s\n", ci_strerror(rc), ci_session_errmsg(NULL));
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    ci_session_free(S);
    return 0;
}

/* A host that answers as its defaults say and has seen nothing. */
static void reset_host(void)
{
    struct host fresh = {.thread = pthread_self()};
    H = fresh;
}

static int setup(void **state)
{
    reset_host();
    h_ensure_alive(S);
    return 0;
}

static ci_result *run_with_timeout(const char *code, unsigned long timeout_ms, ci_status want)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    opts.timeout_ms = timeout_ms;
    return h_run_ex_status(S, code, &opts, want);
}

/* -------------------------------------------------------------- calls */

static void test_a_call_passes_args_and_kwargs_as_json(void **state)
{
    h_expect(S, "r = echo(1, 'x', region='EMEA', n=None)\nr",
             "{'args': [1, 'x'], 'kwargs': {'region': 'EMEA', 'n': None}}", "");
    assert_int_equal(H.calls, 1);
    assert_string_equal(H.name, "echo");
    assert_string_equal(H.args, "{\"args\":[1,\"x\"],\"kwargs\":{\"region\":\"EMEA\",\"n\":null}}");
    assert_int_equal(H.args_len, strlen(H.args));
    assert_ptr_equal(H.payload_seen, &H);
    assert_int_equal(H.wrong_thread, 0);
    assert_int_equal(H.rc[0], CI_OK);
    /* No arguments at all, and UTF-8 as it is. */
    h_expect(S, "echo()", "{'args': [], 'kwargs': {}}", "");
    assert_string_equal(H.args, "{\"args\":[],\"kwargs\":{}}");
    h_expect(S, "echo('caf\\u00e9', '\\x00')['args']", "['café', '\\x00']", "");
    assert_string_equal(H.args, "{\"args\":[\"caf\xc3\xa9\",\"\\u0000\"],\"kwargs\":{}}");
}

static void test_the_value_types_round_trip(void **state)
{
    h_expect_cell(S, "functions_json_round_trip",
                  "(['dict', 'int', 'int', 'float', 'float', 'str', 'list', 'dict'], True, "
                  "[1, 2], {})",
                  "");
    H.json = "{\"a\":[1,2.5,\"s\",true,false,null],\"b\":{\"c\":{}},\"n\":-9223372036854775808}";
    h_expect(S, "v = value()\nv, [type(x).__name__ for x in v['a']]",
             "({'a': [1, 2.5, 's', True, False, None], 'b': {'c': {}}, 'n': -9223372036854775808}, "
             "['int', 'float', 'str', 'bool', 'bool', 'NoneType'])",
             "");
    /* Any JSON value, not only an object; a second answer is refused. */
    H.second = 1;
    H.json = " \"only a string\" ";
    h_expect(S, "value()", "'only a string'", "");
    H.json = "null";
    h_expect(S, "value() is None", "True", "");
    assert_int_equal(H.rc[0], CI_OK);
    assert_int_equal(H.rc[1], CI_EINVAL);
}

static void test_a_builtin_exception_name_raises_that_exception(void **state)
{
    H.ename = "KeyError";
    H.message = "no region EMEA";
    h_expect_error(S, "fail()", "KeyError", "'no region EMEA'");
    assert_int_equal(H.rc[0], CI_OK);
    H.ename = "PermissionError";
    H.message = "caf\xc3\xa9 is closed";
    h_expect_cell(S, "functions_error_args", "('café is closed',)", "");
    H.message = NULL;
    h_expect_error(S, "fail()", "PermissionError", "");
}

static void test_other_exception_names_raise_host_function_error(void **state)
{
    H.ename = "requests.HTTPError";
    H.message = "503 from the warehouse";
    h_expect_error(S, "fail()", "HostFunctionError",
                   "fail() raised requests.HTTPError: 503 from the warehouse");
    h_expect_cell(S, "functions_host_function_error",
                  "(('fail', 'requests.HTTPError', '503 from the warehouse'), True, True)",
                  "");
    /* A builtin that is no Exception is not raised as itself. */
    H.ename = "KeyboardInterrupt";
    h_expect_error(S, "fail()", "HostFunctionError",
                   "fail() raised KeyboardInterrupt: 503 from the warehouse");
    H.ename = "print";
    h_expect_error(S, "fail()", "HostFunctionError", NULL);
}

static void test_refused_exception_names_and_messages(void **state)
{
    static const char *const bad[] = {"", "1x", "a..b", ".a", "a.", "a b", "Ex\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        H.ename = bad[i];
        H.message = "m";
        h_expect_error(S, "fail()", "HostFunctionError", "the host function fail() gave no answer");
        assert_int_equal(H.rc[0], CI_EINVAL);
    }
    H.ename = "ValueError";
    H.message = "\xc0\xaf";
    h_expect_error(S, "fail()", "HostFunctionError", "the host function fail() gave no answer");
    assert_int_equal(H.rc[0], CI_EINVAL);
    char *long_name = malloc(130);
    assert_non_null(long_name);
    memset(long_name, 'E', 129);
    long_name[129] = '\0';
    H.ename = long_name;
    h_expect_error(S, "fail()", "HostFunctionError", NULL);
    assert_int_equal(H.rc[0], CI_EINVAL);
    free(long_name);
    assert_int_equal(ci_reply_json(NULL, "1", 1), CI_EINVAL);
    assert_int_equal(ci_reply_error(NULL, "ValueError", "x"), CI_EINVAL);
}

static void test_no_answer_or_broken_json_is_an_error_the_cell_sees(void **state)
{
    h_expect_error(S, "silent()", "HostFunctionError", "the host function silent() gave no answer");
    h_expect_cell(S, "functions_silent_is_host_function_error", "('silent', None)", "");
    H.json = "{\"a\": [1, 2}";
    h_expect_error(S, "value()", "HostFunctionError", "the host's answer to value() was not JSON");
    assert_int_equal(H.rc[0], CI_EINVAL);
    h_assert_contains(ci_session_errmsg(S), "not JSON");
    /* The refusal left it unanswered: another answer stands. */
    H.second = 1;
    h_expect_error(S, "value()", "ValueError", "second");
    assert_int_equal(H.rc[1], CI_OK);
    H.second = 0;
    /* NaN is not JSON either, nor two values, nor nothing. */
    static const char *const bad[] = {"NaN", "1 2", "", "[1,]", "{\"a\":1,}", "\"\xc0\xaf\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        H.json = bad[i];
        h_expect_error(S, "value()", "HostFunctionError", NULL);
        assert_int_equal(H.rc[0], CI_EINVAL);
    }
}

static void test_help_shows_the_description(void **state)
{
    ci_result *r = h_run_status(S, "help(echo)", CI_STATUS_OK);
    h_assert_contains(ci_result_stdout(r, NULL), "echo(*args, **kwargs)\n"
                                                 "    Returns its arguments.\n"
                                                 "    \n"
                                                 "    echo(*args, **kwargs) -> dict");
    h_assert_contains(ci_result_stdout(r, NULL), "in module codeinterp_host");
    ci_result_free(r);
    h_expect(S, "echo.__doc__.splitlines()[0], value.__doc__, echo.__name__",
             "('Returns its arguments.', None, 'echo')", "");
}

static void test_functions_import_from_codeinterp_host(void **state)
{
    h_expect_cell(S, "functions_module_codeinterp_host",
                  "(True, ['HostFunctionError', 'big', 'echo', 'fail', 'silent', 'slow', 'value'], "
                  "[7])",
                  "");
    /* A cell's own name shadows the builtin, as any builtin's would. */
    h_expect(S, "echo = 5\necho", "5", "");
    h_expect(S, "del echo\necho(1)['args']", "[1]", "");
}

static void test_calls_from_threads_are_serialized(void **state)
{
    /* Eight threads, fifty calls each, each call answered with its own
     * arguments: a reply read by the wrong thread would show. */
    h_expect_cell(S, "functions_threads_call_at_once", "[]", "");
    assert_int_equal(H.calls, 400);
    assert_int_equal(H.wrong_thread, 0);
    /* With input() in the main thread meanwhile (no on_input: it raises
     * at once, but after its turn at the channel). */
    h_expect_cell(S, "functions_input_while_a_thread_calls", "('StdinNotImplementedError', [])",
                  "");
}

static void test_a_thread_left_running_calls_only_while_a_later_cell_runs(void **state)
{
    /* A thread the cell left running calls while the next cell runs (the
     * cell lets it go), and is answered. Between cells the worker is
     * stopped, so such a thread makes no call then. */
    h_expect_cell(S, "functions_thread_calls_after_the_cell", NULL, "");
    h_sleep_ms(300);
    H.calls = 0;
    /* Up to 10 s for a loaded machine to run the thread: a hang bound. */
    h_expect_cell(S, "functions_let_the_thread_go", "['answered']", "");
    assert_int_equal(H.calls, 1);
}

/* ------------------------------------------------- timeout, interrupt */

static void test_a_callback_that_blocks_past_the_timeout(void **state)
{
    H.sleep_ms = 1200;
    int64_t t0 = h_now_ms();
    ci_result *r = run_with_timeout("x = 'before'\nx = slow()", 500, CI_STATUS_TIMEOUT);
    int64_t took = h_now_ms() - t0;
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    if (took < 1200 || took > 1200 + GRACE_MS)
        fail_msg("the run took %lld ms", (long long)took);
    ci_result_free(r);
    assert_int_equal(H.calls, 1);
    /* The late answer was dropped; the session and its state live on. */
    h_expect(S, "x", "'before'", "");
    H.sleep_ms = 0;
    h_expect(S, "slow()", "'late'", "");
}

static void test_an_interrupt_while_in_a_call(void **state)
{
    struct h_interrupter in;
    H.sleep_ms = 400;
    h_interrupt_later(&in, S, 100);
    ci_result *r = run_with_timeout("y = 0\ny = slow()", 0, CI_STATUS_INTERRUPTED);
    assert_int_equal(h_interrupter_join(&in), 1);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    ci_result_free(r);
    h_expect(S, "y", "0", "");
    /* Interrupted from the callback itself: the cell catches it, and its
     * next call is not made. */
    H.sleep_ms = 0;
    H.interrupt = S;
    H.calls = 0;
    char *cell = h_cell("functions_interrupt_during_a_call");
    r = run_with_timeout(cell, 0, CI_STATUS_INTERRUPTED);
    free(cell);
    ci_result_free(r);
    assert_int_equal(H.calls, 1);
    h_expect(S, "got", "['interrupted', 'echo() was not answered: the cell is being interrupted']",
             "");
}

/* The cell's own SIGINT while the host still thinks: the worker gives up
 * on the call and drops the late reply before the next request. */
static void test_a_call_given_up_on_is_not_answered_twice(void **state)
{
    H.sleep_ms = 300;
    h_expect_cell(S, "functions_sigint_during_a_call", "('gave up', [2])", "");
    assert_int_equal(H.calls, 2);
}

/* --------------------------------------------------------------- caps */

static void test_arguments_over_the_limit_raise_before_the_host_is_asked(void **state)
{
    /* {"args":["x..."],"kwargs":{}}: 25 bytes around the string. */
    h_expect(S, "len(echo('x' * (4096 - 25))['args'][0])", "4071", "");
    assert_int_equal(H.args_len, LIMIT);
    H.calls = 0;
    h_expect_error(S, "echo('x' * (4096 - 24))", "ValueError",
                   "the arguments of echo() are 4097 bytes of JSON, over the host's limit of "
                   "4 KiB");
    h_expect_error(S, "echo('\\u00e9' * 3000)", "ValueError",
                   "the arguments of echo() are 6025 bytes of JSON, over the host's limit of "
                   "4 KiB");
    assert_int_equal(H.calls, 0);
}

static void test_a_value_over_the_limit_is_refused(void **state)
{
    H.big = LIMIT;
    h_expect(S, "len(big())", "4094", "");
    assert_int_equal(H.rc[0], CI_OK);
    H.big = LIMIT + 1;
    h_expect_error(S, "big()", "HostFunctionError",
                   "the host's answer to big() is 4097 bytes of JSON, over the result limit of 4 KiB");
    assert_int_equal(H.rc[0], CI_ETOOBIG);
}

static void test_arguments_that_are_not_json_raise_type_error(void **state)
{
    static const char *const cells[][2] = {
        {"echo(float('nan'))", "echo() argument 1: the float nan is not JSON"},
        {"echo(x=float('-inf'))", "echo() argument 'x': the float -inf is not JSON"},
        {"echo(b'raw')", "echo() argument 1: a value of type bytes is not JSON"},
        {"import pandas as pd\necho(pd.DataFrame({'a': [1]}))",
         "echo() argument 1: a value of type DataFrame is not JSON"},
        {"import numpy as np\necho([1, np.int64(2)])",
         "echo() argument 1[1]: a value of type int64 is not JSON"},
        {"echo({1, 2})", "echo() argument 1: a value of type set is not JSON"},
        {"echo({'a': {3: 'x'}})", "echo() argument 1['a'] key 3: a key of type int is not JSON"},
        {"echo(2**64)", "echo() argument 1: the int 18446744073709551616 (over 64 bits) is not JSON"},
        {"echo('\\udc80')", "echo() argument 1: a str with a lone surrogate is not JSON"},
    };
    for (size_t i = 0; i < sizeof cells / sizeof *cells; i++) {
        ci_result *r = h_run_status(S, cells[i][0], CI_STATUS_ERROR);
        h_assert_str(ci_result_error_name(r), "TypeError");
        h_assert_contains(ci_result_error_value(r), cells[i][1]);
        h_assert_contains(ci_result_error_value(r),
                          "a host function takes None, bool, int (of at most 64 bits), float "
                          "(finite), str, and list, tuple or dict (with str keys) of those");
        ci_result_free(r);
    }
    h_expect_error(S, "a = []\na.append(a)\necho(a)", "ValueError",
                   NULL); /* nested deeper than 512 levels (or holds itself) */
    assert_int_equal(H.calls, 0);
}

/* -------------------------------------------------------- definitions */

static void noop(void *payload, const char *name, const char *args, size_t len, ci_reply *reply)
{
}

static void test_names_and_descriptions_are_checked(void **state)
{
    ci_config *cfg = ci_config_new();
    char name[80], *doc;
    assert_non_null(cfg);
    static const char *const bad[] = {"", "1abc", "a-b", "a b", "caf\xc3\xa9", "_private",
                                      "__import__", "_", "class", "match", "None", "print",
                                      "display", "get_ipython", "In", "Out", "HostFunctionError",
                                      "ValueError", "exit"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (ci_config_add_function(cfg, bad[i], NULL, noop, NULL) != CI_EINVAL)
            fail_msg("'%s' was not refused", bad[i]);
    /* Every builtin of the worker's Python, as the worker itself lists them. */
    char *builtins = h_worker_string(S, "' '.join(n for n in dir(__import__('builtins')) "
                                        "if n.isidentifier() and n not in "
                                        "__import__('codeinterp_host').__all__)");
    for (char *tok = strtok(builtins, " "); tok; tok = strtok(NULL, " "))
        if (ci_config_add_function(cfg, tok, NULL, noop, NULL) != CI_EINVAL)
            fail_msg("the builtin '%s' was not refused", tok);
    free(builtins);
    memset(name, 'a', 64);
    name[64] = '\0';
    assert_int_equal(ci_config_add_function(cfg, name, NULL, noop, NULL), CI_OK);
    name[64] = 'a';
    name[65] = '\0';
    assert_int_equal(ci_config_add_function(cfg, name, NULL, noop, NULL), CI_EINVAL);
    h_assert_contains(ci_session_errmsg(NULL), "at most 64 bytes");
    assert_int_equal(ci_config_add_function(cfg, "tool", NULL, noop, NULL), CI_OK);
    assert_int_equal(ci_config_add_function(cfg, "tool", NULL, noop, NULL), CI_EINVAL);
    h_assert_contains(ci_session_errmsg(NULL), "already defined");
    assert_int_equal(ci_config_add_function(cfg, "t2", NULL, NULL, NULL), CI_EINVAL);
    assert_int_equal(ci_config_add_function(NULL, "t2", NULL, noop, NULL), CI_EINVAL);
    assert_int_equal(ci_config_add_function(cfg, NULL, NULL, noop, NULL), CI_EINVAL);
    assert_int_equal(ci_config_add_function(cfg, "t2", "\xc0\xaf", noop, NULL), CI_EINVAL);
    doc = malloc(65538);
    assert_non_null(doc);
    memset(doc, 'd', 65537);
    doc[65537] = '\0';
    assert_int_equal(ci_config_add_function(cfg, "t2", doc, noop, NULL), CI_ETOOBIG);
    doc[65536] = '\0';
    assert_int_equal(ci_config_add_function(cfg, "t2", doc, noop, NULL), CI_OK);
    free(doc);
    for (int i = 3; i < 256; i++) {
        snprintf(name, sizeof name, "f%d", i);
        assert_int_equal(ci_config_add_function(cfg, name, NULL, noop, NULL), CI_OK);
    }
    assert_int_equal(ci_config_add_function(cfg, "one_more", NULL, noop, NULL), CI_ETOOBIG);
    h_assert_contains(ci_session_errmsg(NULL), "at most 256");
    /* The limits' bounds. */
    assert_int_equal(ci_config_set_call_limits(cfg, 1023, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_call_limits(cfg, 4096, 64 * 1024 * 1024 + 1), CI_EINVAL);
    assert_int_equal(ci_config_set_call_limits(NULL, 4096, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_call_limits(cfg, 1024, 64 * 1024 * 1024), CI_OK);
    ci_config_free(cfg);
}

/* 256 functions, the longest names and descriptions: the FUNCTIONS
 * frame at its largest, after a restart and by exec too. */
static void test_functions_survive_a_restart_with_or_without_the_zygote(void **state)
{
    for (int zygote = 1; zygote >= 0; zygote--) {
        ci_config *cfg = h_config(NULL);
        ci_session *s;
        char name[80], *doc = malloc(65537);
        assert_non_null(doc);
        memset(doc, 'd', 65536);
        doc[65536] = '\0';
        H.json = "[\"ok\"]";
        for (int i = 0; i < 255; i++) {
            snprintf(name, sizeof name, "f%03d_%059d", i, 0);
            assert_int_equal(ci_config_add_function(cfg, name, doc, noop, &H), CI_OK);
        }
        free(doc);
        assert_int_equal(ci_config_add_function(cfg, "value", NULL, host, &H), CI_OK);
        assert_int_equal(ci_config_set_zygote(cfg, zygote), CI_OK);
        assert_int_equal(ci_session_new(&s, cfg), CI_OK);
        ci_config_free(cfg); /* the session keeps its own copy */
        h_expect(s, "value(), len(f254_00000000000000000000000000000000000000000000000000000000000.__doc__)",
                 "(['ok'], 65536)", "");
        assert_int_equal(ci_session_restart(s), CI_OK);
        h_expect(s, "import codeinterp_host\nvalue(), len(codeinterp_host.__all__)", "(['ok'], 257)", "");
        ci_session_free(s);
    }
}

static void test_a_session_without_functions_has_none(void **state)
{
    ci_session *s = h_session(NULL);
    h_expect_error(s, "import codeinterp_host", "ModuleNotFoundError", NULL);
    h_expect_error(s, "HostFunctionError", "NameError", NULL);
    ci_session_free(s);
}

/* ------------------------------------------------------- the fake worker */

static struct {
    uint32_t count, args_limit, result_limit;
    char names[256];
} seen; /* the FUNCTIONS frame the fake got */

/* Reads frames until a RUN; takes a FUNCTIONS frame on the way. */
static void fake_get_run(uint32_t *count, char *code, size_t size)
{
    static unsigned char buf[1 << 20];
    struct ci_frame_header h;
    uint32_t head[2];

    for (;;) {
        if (fw_get(&h, sizeof h) < 0)
            _exit(98);
        if (h.type != CI_FRAME_FUNCTIONS)
            break;
        if (h.len > sizeof buf || fw_get(buf, h.len) < 0)
            _exit(98);
        memcpy(&seen, buf, 12);
        seen.names[0] = '\0';
        for (size_t at = 12, i = 0; i < seen.count && at + 8 <= h.len; i++) {
            uint32_t nd[2];
            memcpy(nd, buf + at, 8);
            snprintf(seen.names + strlen(seen.names), sizeof seen.names - strlen(seen.names),
                     "%s%.*s:%u", i ? "," : "", (int)nd[0], (const char *)buf + at + 8,
                     (unsigned)nd[1]);
            at += 8 + nd[0] + nd[1];
        }
    }
    if (h.type != CI_FRAME_RUN || h.len < sizeof head || h.len - sizeof head >= size ||
        fw_get(head, sizeof head) < 0 || fw_get(code, h.len - sizeof head) < 0)
        _exit(98);
    *count = head[0];
    code[h.len - sizeof head] = '\0';
}

static void fake_result(uint32_t count, const char *value)
{
    static unsigned char res[1 << 16];
    uint32_t ok = CI_OUTCOME_OK;
    size_t n = fw_field(res, 0, CI_FIELD_COUNT, &count, 4);
    n = fw_field(res, n, CI_FIELD_OUTCOME, &ok, 4);
    n = fw_field(res, n, CI_FIELD_VALUE, value, (uint32_t)strlen(value));
    fw_frame(CI_FRAME_RESULT, res, (uint32_t)n);
}

/* Writes a CALL of @name with @json (in one write when @twice, two). */
static void fake_call(const char *name, const char *json, int twice)
{
    static unsigned char buf[2 * 4096];
    uint32_t nl = (uint32_t)strlen(name), h[2] = {CI_FRAME_CALL, 0};
    size_t n;

    h[1] = 4 + nl + (uint32_t)strlen(json);
    memcpy(buf, h, 8);
    memcpy(buf + 8, &nl, 4);
    memcpy(buf + 12, name, nl);
    memcpy(buf + 12 + nl, json, strlen(json));
    n = 8 + h[1];
    if (twice) {
        memcpy(buf + n, buf, n);
        n *= 2;
    }
    fw_put(buf, n);
}

/* Reads a CALL_REPLY: its status and what follows, as text. */
static int fake_reply(uint32_t *status, char *text, size_t size)
{
    struct ci_frame_header h;
    if (fw_get(&h, sizeof h) < 0 || h.type != CI_FRAME_CALL_REPLY || h.len < 4 ||
        h.len - 4 >= size || fw_get(status, 4) < 0 || fw_get(text, h.len - 4) < 0)
        return -1;
    text[h.len - 4] = '\0';
    return 0;
}

static int fake_worker(void)
{
    static const char ok_args[] = "{\"args\":[1],\"kwargs\":{}}";
    uint32_t ready[3] = {CI_PROTO_VERSION, CI_LAYER_ALL, CI_READY_NO_LISTENER}, count, status;
    char code[256], text[4096], value[4200];

    signal(SIGINT, SIG_IGN); /* a worker that ignores interrupts */
    fw_frame(CI_FRAME_READY, ready, sizeof ready);
    for (;;) {
        fake_get_run(&count, code, sizeof code);
        if (!strcmp(code, "functions-seen")) {
            snprintf(value, sizeof value, "%u %u %u %s", (unsigned)seen.count,
                     (unsigned)seen.args_limit, (unsigned)seen.result_limit, seen.names);
            fake_result(count, value);
            continue;
        }
        if (!strcmp(code, "call-good") || !strcmp(code, "call-fail")) {
            fake_call(!strcmp(code, "call-good") ? "echo" : "fail", ok_args, 0);
            if (fake_reply(&status, text, sizeof text) < 0)
                _exit(97);
            snprintf(value, sizeof value, "status=%u %s", (unsigned)status,
                     status == CI_CALL_RAISED ? text + 4 : text);
            fake_result(count, value);
            continue;
        }
        if (!strcmp(code, "call-flood")) { /* calls, answered or not, until killed */
            for (;;) {
                fake_call("echo", ok_args, 0);
                if (fake_reply(&status, text, sizeof text) < 0)
                    pause();
            }
        }
        if (!strcmp(code, "call-over-cap")) {
            uint32_t h[2] = {CI_FRAME_CALL, 4 + CI_FUNCTION_NAME_MAX + LIMIT + 1};
            fw_put(h, sizeof h);
            pause();
        }
        if (!strcmp(code, "call-undefined"))
            fake_call("nope", ok_args, 0);
        else if (!strcmp(code, "call-bad-name"))
            fake_call("e-cho", ok_args, 0);
        else if (!strcmp(code, "call-empty-name"))
            fake_call("", ok_args, 0);
        else if (!strcmp(code, "call-bad-json"))
            fake_call("echo", "{\"args\":[1,", 0);
        else if (!strcmp(code, "call-bad-utf8"))
            fake_call("echo", "{\"args\":[\"\xc0\xaf\"],\"kwargs\":{}}", 0);
        else if (!strcmp(code, "call-bad-shape"))
            fake_call("echo", "{\"args\":{},\"kwargs\":{}}", 0);
        else if (!strcmp(code, "call-extra-member"))
            fake_call("echo", "{\"args\":[],\"kwargs\":{},\"x\":1}", 0);
        else if (!strcmp(code, "call-duplicate-key"))
            fake_call("echo", "{\"args\":[],\"kwargs\":{},\"args\":[]}", 0);
        else if (!strcmp(code, "call-two-values"))
            fake_call("echo", "{\"args\":[],\"kwargs\":{}} 1", 0);
        else if (!strcmp(code, "call-twice"))
            fake_call("echo", ok_args, 1);
        else if (!strcmp(code, "call-reply-from-worker"))
            fw_frame(CI_FRAME_CALL_REPLY, "\0\0\0\0" "1", 5);
        else if (!strcmp(code, "functions-from-worker"))
            fw_frame(CI_FRAME_FUNCTIONS, "\0\0\0\0", 4);
        else
            _exit(95);
        pause(); /* killed, as a broken call should be */
    }
}

static char self_path[PATH_MAX];

static int use_fake(void **state)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    assert_true(n > 0);
    self_path[n] = '\0';
    reset_host();
    return setenv("CODEINTERP_WORKER", self_path, 1);
}

static int unuse_fake(void **state)
{
    return unsetenv("CODEINTERP_WORKER");
}

/* A session of the fake with the group's functions and limits, a 800 ms
 * timeout and a 300 ms grace period. */
static ci_session *fake_session(void)
{
    ci_config *cfg = h_config(&(struct h_limits){.timeout_ms = 800, .grace_ms = 300});
    ci_session *s;
    add_functions(cfg);
    assert_int_equal(ci_config_set_call_limits(cfg, LIMIT, 2 * LIMIT), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    return s;
}

static void test_the_fake_gets_the_functions_and_their_limits(void **state)
{
    ci_session *s = fake_session();
    h_expect(s, "functions-seen", "6 4096 8192 echo:53,value:0,fail:0,slow:0,big:0,silent:0", NULL);
    /* A well-formed call is answered as its callback said. */
    h_expect(s, "call-good", "status=0 {\"args\":[1],\"kwargs\":{}}", NULL);
    assert_string_equal(H.args, "{\"args\":[1],\"kwargs\":{}}");
    H.ename = "LookupError";
    H.message = "gone";
    h_expect(s, "call-fail", "status=1 LookupErrorgone", NULL);
    ci_session_free(s);
}

static void test_forged_calls_are_refused_and_the_session_restarts(void **state)
{
    static const char *const cases[][2] = {
        {"call-undefined", "a call of a function the host never defined"},
        {"call-bad-name", "a call whose name is not an identifier"},
        {"call-empty-name", "a call whose name has the wrong length"},
        {"call-bad-json", "a call whose arguments are not JSON"},
        {"call-bad-utf8", "a call whose arguments are not JSON"},
        {"call-two-values", "a call whose arguments are not JSON"},
        {"call-duplicate-key", "a call whose arguments are not JSON"},
        {"call-bad-shape", "a call whose arguments are not {\"args\": [...], \"kwargs\": {...}}"},
        {"call-extra-member", "a call whose arguments are not {\"args\": [...], \"kwargs\": {...}}"},
        {"call-twice", "a second request before the reply to a call"},
        {"call-over-cap", "a frame over the size limit"},
        {"call-reply-from-worker", "unexpected frame type"},
        {"functions-from-worker", "unexpected frame type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ci_session *s = fake_session();
        ci_result *r = NULL;
        int64_t t0 = h_now_ms();
        H.calls = 0;
        assert_int_equal(ci_run(s, cases[i][0], &r), CI_OK);
        assert_true(h_now_ms() - t0 <= 800 + 300 + 1000);
        if (ci_result_status(r) != CI_STATUS_KILLED)
            fail_msg("%s: status %s", cases[i][0], h_status_name(ci_result_status(r)));
        h_assert_str(ci_result_error_name(r), "ProtocolError");
        h_assert_contains(ci_result_error_value(r), cases[i][1]);
        ci_result_free(r);
        /* Only the well-formed second call reached a callback. */
        assert_int_equal(H.calls, !strcmp(cases[i][0], "call-twice"));
        assert_int_equal(ci_session_restart(s), CI_OK);
        h_expect(s, "call-good", "status=0 {\"args\":[1],\"kwargs\":{}}", NULL);
        ci_session_free(s);
    }
}

static void test_a_flood_of_calls_ends_at_the_deadline(void **state)
{
    ci_session *s = fake_session();
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run(s, "call-flood", &r), CI_OK);
    int64_t took = h_now_ms() - t0;
    if (took < 800 + 300 || took > 800 + 300 + 1000)
        fail_msg("the flood took %lld ms", (long long)took);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    ci_result_free(r);
    /* Each answered until the timeout, none after. */
    assert_true(H.calls > 10);
    int calls = H.calls;
    assert_int_equal(ci_session_restart(s), CI_OK);
    assert_int_equal(H.calls, calls);
    ci_session_free(s);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--parent"))
        return fake_worker();
    h_watchdog(170);
#define T(f) cmocka_unit_test_setup(f, setup)
#define FAKE(f) cmocka_unit_test_setup_teardown(f, use_fake, unuse_fake)
    const struct CMUnitTest tests[] = {
        T(test_a_call_passes_args_and_kwargs_as_json),
        T(test_the_value_types_round_trip),
        T(test_a_builtin_exception_name_raises_that_exception),
        T(test_other_exception_names_raise_host_function_error),
        T(test_refused_exception_names_and_messages),
        T(test_no_answer_or_broken_json_is_an_error_the_cell_sees),
        T(test_help_shows_the_description),
        T(test_functions_import_from_codeinterp_host),
        T(test_calls_from_threads_are_serialized),
        T(test_a_thread_left_running_calls_only_while_a_later_cell_runs),
        T(test_a_callback_that_blocks_past_the_timeout),
        T(test_an_interrupt_while_in_a_call),
        T(test_a_call_given_up_on_is_not_answered_twice),
        T(test_arguments_over_the_limit_raise_before_the_host_is_asked),
        T(test_a_value_over_the_limit_is_refused),
        T(test_arguments_that_are_not_json_raise_type_error),
        T(test_names_and_descriptions_are_checked),
        T(test_functions_survive_a_restart_with_or_without_the_zygote),
        T(test_a_session_without_functions_has_none),
        FAKE(test_the_fake_gets_the_functions_and_their_limits),
        FAKE(test_forged_calls_are_refused_and_the_session_restarts),
        FAKE(test_a_flood_of_calls_ends_at_the_deadline),
    };
    return cmocka_run_group_tests_name("functions", tests, group_setup, group_teardown);
}
