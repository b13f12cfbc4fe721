/*
 * The shared scenario (test/scenario/steps.json, docs/testing.md): one
 * session taken through the steps the Python, Go and Rust bindings' tests
 * take too. The expected values are the data file's; this program only
 * maps each step kind to the C API, and names the step that failed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "helpers.h"

/* The Makefile passes the file's absolute path, so that the program runs
 * from any directory. */
#ifndef CI_SCENARIO_FILE
#define CI_SCENARIO_FILE "test/scenario/steps.json"
#endif

/* The step being run, and its result, for the failure message. */
static size_t step_no;
static const char *step_kind, *step_name;
static const ci_result *step_result;

static void step_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void step_fail(const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (step_result)
        h_dump(step_result);
    fail_msg("scenario step %zu (%s, %s): %s", step_no, step_kind, step_name, msg);
    abort(); /* fail_msg does not return; this tells the compiler so */
}

static const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s)
        step_fail("the data has no string \"%s\"", key);
    return s;
}

/* Fails unless @got (NULL for none) is @want, a JSON string or null. */
static void check_string(const char *key, const json_t *want, const char *got)
{
    if (json_is_null(want)) {
        if (got)
            step_fail("%s is \"%s\", expected null", key, got);
        return;
    }
    if (!json_is_string(want))
        step_fail("the data's %s is neither a string nor null", key);
    if (!got || strcmp(got, json_string_value(want)) != 0)
        step_fail("%s is %s%s%s, expected \"%s\"", key, got ? "\"" : "", got ? got : "NULL",
                  got ? "\"" : "", json_string_value(want));
}

static void check_bytes(const char *what, const void *got, size_t len, const json_t *want)
{
    size_t want_len = json_string_length(want);
    if (len != want_len || memcmp(got, json_string_value(want), len) != 0)
        step_fail("%s is \"%.*s\" (%zu bytes), expected \"%s\" (%zu bytes)", what, (int)len,
                  (const char *)got, len, json_string_value(want), want_len);
}

/* Jupyter's name for output type @t, as the data file gives it. */
static const char *type_name(ci_output_type t)
{
    static const char *const names[] = {
        [CI_OUTPUT_DISPLAY_DATA] = "display_data",
        [CI_OUTPUT_EXECUTE_RESULT] = "execute_result",
        [CI_OUTPUT_UPDATE_DISPLAY_DATA] = "update_display_data",
        [CI_OUTPUT_CLEAR_OUTPUT] = "clear_output",
    };
    if ((size_t)t < sizeof names / sizeof *names && names[t])
        return names[t];
    return "unknown";
}

/* The bytes @hex spells; malloc'ed, *@len of them. */
static unsigned char *from_hex(const char *hex, size_t *len)
{
    size_t n = strlen(hex) / 2;
    unsigned char *out = malloc(n + 1);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        unsigned byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
            step_fail("bad prefix_hex \"%s\"", hex);
        out[i] = (unsigned char)byte;
    }
    *len = n;
    return out;
}

static void check_output(const ci_result *r, size_t i, const json_t *want)
{
    size_t len;
    const char *data = ci_result_output_data(r, i, &len);
    const char *mime = ci_result_output_mime(r, i), *type = type_name(ci_result_output_type(r, i));
    const json_t *v;
    char what[32];

    snprintf(what, sizeof what, "output %zu", i);
    if (strcmp(mime, text_of(want, "mime")) != 0 || strcmp(type, text_of(want, "type")) != 0)
        step_fail("output %zu is %s %s, expected %s %s", i, mime, type, text_of(want, "mime"),
                  text_of(want, "type"));
    if ((v = json_object_get(want, "text")))
        check_bytes(what, data, len, v);
    if ((v = json_object_get(want, "contains")) && !memmem(data, len, json_string_value(v),
                                                           json_string_length(v)))
        step_fail("output %zu does not contain \"%s\"", i, json_string_value(v));
    if ((v = json_object_get(want, "prefix_hex"))) {
        size_t n;
        unsigned char *prefix = from_hex(json_string_value(v), &n);
        if (len < n || memcmp(data, prefix, n) != 0)
            step_fail("output %zu does not start with the bytes %s", i, json_string_value(v));
        free(prefix);
    }
}

static void check_outputs(const ci_result *r, const json_t *want)
{
    size_t n = ci_result_output_count(r);
    if (n != json_array_size(want))
        step_fail("%zu outputs, expected %zu", n, json_array_size(want));
    for (size_t i = 0; i < n; i++)
        check_output(r, i, json_array_get(want, i));
}

static void check_files(const ci_result *r, const json_t *want)
{
    size_t n = ci_result_file_count(r);
    if (n != json_array_size(want))
        step_fail("%zu changed files (first \"%s\"), expected %zu", n,
                  n ? ci_result_file_name(r, 0) : "", json_array_size(want));
    for (size_t i = 0; i < n; i++)
        check_string("a changed file", json_array_get(want, i), ci_result_file_name(r, i));
}

static void check_traceback(const ci_result *r, const json_t *want)
{
    const char *tb = ci_result_traceback(r);
    size_t i;
    json_t *part;
    json_array_foreach(want, i, part) {
        if (!tb || !strstr(tb, json_string_value(part)))
            step_fail("the traceback does not contain \"%s\":\n%s", json_string_value(part),
                      tb ? tb : "(none)");
    }
}

static void check_key(const ci_result *r, const char *key, const json_t *want)
{
    size_t len;
    const char *out;
    if (strcmp(key, "status") == 0)
        check_string(key, want, ci_status_name(ci_result_status(r)));
    else if (strcmp(key, "execution_count") == 0) {
        if (ci_result_execution_count(r) != json_integer_value(want))
            step_fail("execution_count is %d, expected %lld", ci_result_execution_count(r),
                      (long long)json_integer_value(want));
    } else if (strcmp(key, "stdout") == 0) {
        out = ci_result_stdout(r, &len);
        check_bytes("stdout", out, len, want);
    } else if (strcmp(key, "value") == 0)
        check_string(key, want, ci_result_value(r));
    else if (strcmp(key, "error_name") == 0)
        check_string(key, want, ci_result_error_name(r));
    else if (strcmp(key, "error_value") == 0)
        check_string(key, want, ci_result_error_value(r));
    else if (strcmp(key, "traceback_contains") == 0)
        check_traceback(r, want);
    else if (strcmp(key, "outputs") == 0)
        check_outputs(r, want);
    else if (strcmp(key, "files") == 0)
        check_files(r, want);
    else
        step_fail("unknown expect key \"%s\"", key);
}

static void run_step(ci_session *s, const json_t *step)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    ci_result *r = NULL;
    const char *key;
    json_t *want;

    opts.timeout_ms = (unsigned long)json_integer_value(json_object_get(step, "timeout_ms"));
    int rc = ci_run_ex(s, text_of(step, "code"), &opts, &r);
    if (rc != CI_OK)
        step_fail("ci_run_ex: %s: %s", ci_strerror(rc), ci_session_errmsg(s));
    step_result = r;
    json_object_foreach(json_object_get(step, "expect"), key, want)
        check_key(r, key, want);
    step_result = NULL;
    ci_result_free(r);
}

static void file_step(ci_session *s, const json_t *step, int put)
{
    const char *name = text_of(step, "name");
    const json_t *text = json_object_get(step, "text");
    void *data;
    size_t len;
    int rc = put ? ci_session_put_file(s, name, json_string_value(text), json_string_length(text))
                 : ci_session_get_file(s, name, &data, &len);
    if (rc != CI_OK)
        step_fail("%s(\"%s\"): %s: %s", put ? "put_file" : "get_file", name, ci_strerror(rc),
                  ci_session_errmsg(s));
    if (!put) {
        check_bytes(name, data, len, text);
        ci_free(data);
    }
}

/* Runs @step on *@s; a "close" step frees the session and sets *@s NULL. */
static void do_step(ci_session **s, const json_t *step)
{
    if (!*s)
        step_fail("the session is closed");
    else if (strcmp(step_kind, "close") == 0) {
        ci_session_free(*s);
        *s = NULL;
    } else if (strcmp(step_kind, "put_file") == 0 || strcmp(step_kind, "get_file") == 0)
        file_step(*s, step, step_kind[0] == 'p');
    else if (strcmp(step_kind, "run") == 0)
        run_step(*s, step);
    else if (strcmp(step_kind, "restart") == 0) {
        int rc = ci_session_restart(*s);
        if (rc != CI_OK)
            step_fail("ci_session_restart: %s: %s", ci_strerror(rc), ci_session_errmsg(*s));
    } else
        step_fail("unknown step kind \"%s\"", step_kind);
}

static void test_scenario(void **state)
{
    json_error_t err;
    json_t *scenario = json_load_file(CI_SCENARIO_FILE, 0, &err), *step;
    size_t i;
    if (!scenario)
        fail_msg("%s:%d: %s", CI_SCENARIO_FILE, err.line, err.text);
    json_int_t timeout = json_integer_value(json_object_get(json_object_get(scenario, "session"),
                                                            "timeout_ms"));
    ci_session *s = h_session(&(struct h_limits){.timeout_ms = (unsigned long)timeout});
    json_array_foreach(json_object_get(scenario, "steps"), i, step) {
        step_no = i + 1;
        step_kind = step_name = "?";
        step_kind = text_of(step, "kind");
        step_name = text_of(step, "step");
        do_step(&s, step);
    }
    ci_session_free(s);
    json_decref(scenario);
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario),
    };
    return cmocka_run_group_tests_name("scenario", tests, NULL, NULL);
}
