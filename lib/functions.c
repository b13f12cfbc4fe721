/*
 * Host functions (ci_config_add_function): the names a cell may call, the
 * FUNCTIONS frame that gives them to a worker, the checks of a CALL from
 * the untrusted worker, and the reply the host's callback makes.
 *
 * A CALL's arguments are checked with jansson before the callback sees
 * them: valid JSON, UTF-8, no duplicate keys, the shape proto.h names.
 * The worker's own encoder never sends anything else, so a CALL that
 * fails a check was forged by a cell and ends the worker (run.c).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "errors.h"
#include "functions.h"
#include "proto.h"
#include "result.h"
#include "session.h"

/* Names a function may not take: Python 3.11's keywords and soft
 * keywords, its builtins, and what the runner adds to them or to the
 * cell's namespace. Sorted, for bsearch. Names that start with '_' are
 * refused apart (IPython's _, __, _N and _iN, and dunders). */
static const char *const reserved[] = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError", "BufferError",
    "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
    "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError",
    "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception", "ExceptionGroup", "False",
    "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "HostFunctionError", "IOError", "ImportError", "ImportWarning", "In",
    "IndentationError", "IndexError", "InterruptedError", "IsADirectoryError", "KeyError",
    "KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError", "NameError",
    "None", "NotADirectoryError", "NotImplemented", "NotImplementedError", "OSError", "Out",
    "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
    "SystemExit", "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError",
    "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError",
    "UnicodeWarning", "UserWarning", "ValueError", "Warning", "ZeroDivisionError", "abs",
    "aiter", "all", "and", "anext", "any", "as", "ascii", "assert", "async", "await", "bin",
    "bool", "break", "breakpoint", "bytearray", "bytes", "callable", "case", "chr", "class",
    "classmethod", "compile", "complex", "continue", "copyright", "credits", "def", "del",
    "delattr", "dict", "dir", "display", "divmod", "elif", "else", "enumerate", "eval",
    "except", "exec", "exit", "filter", "finally", "float", "for", "format", "from",
    "frozenset", "get_ipython", "getattr", "global", "globals", "hasattr", "hash", "help",
    "hex", "id", "if", "import", "in", "input", "int", "is", "isinstance", "issubclass",
    "iter", "lambda", "len", "license", "list", "locals", "map", "match", "max",
    "memoryview", "min", "next", "nonlocal", "not", "object", "oct", "open", "or", "ord",
    "pass", "pow", "print", "property", "quit", "raise", "range", "repr", "return",
    "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum",
    "super", "try", "tuple", "type", "vars", "while", "with", "yield", "zip",
};

static int compare_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 1 if the @len bytes at @p are an ASCII Python identifier. */
static int identifier(const char *p, size_t len)
{
    if (len == 0 || (p[0] >= '0' && p[0] <= '9'))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
              (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
            return 0;
    return 1;
}

/* 1 if @p (@len bytes) is identifiers joined by dots: an exception's
 * name as a host gives it ("ValueError", "requests.HTTPError"). */
static int dotted_name(const char *p, size_t len)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || p[i] == '.') {
            if (!identifier(p + start, i - start))
                return 0;
            start = i + 1;
        }
    return 1;
}

const struct ci_function *ci_function_find(const struct ci_config *cfg, const char *name,
                                           size_t len)
{
    for (size_t i = 0; i < cfg->function_count; i++)
        if (strlen(cfg->functions[i].name) == len &&
            memcmp(cfg->functions[i].name, name, len) == 0)
            return &cfg->functions[i];
    return NULL;
}

int ci_functions_copy(struct ci_config *dst, const struct ci_config *src)
{
    dst->functions = NULL;
    dst->function_count = 0;
    if (src->function_count == 0)
        return CI_OK;
    if (!(dst->functions = calloc(src->function_count, sizeof *dst->functions)))
        return CI_ENOMEM;
    for (size_t i = 0; i < src->function_count; i++) {
        const struct ci_function *f = &src->functions[i];
        struct ci_function *g = &dst->functions[i];
        *g = *f;
        g->name = ci_strdup(f->name);
        g->description = f->description ? ci_strdup(f->description) : NULL;
        dst->function_count = i + 1;
        if (!g->name || (f->description && !g->description))
            return CI_ENOMEM; /* the caller clears what was copied */
    }
    return CI_OK;
}

void ci_functions_clear(struct ci_config *cfg)
{
    for (size_t i = 0; i < cfg->function_count; i++) {
        free(cfg->functions[i].name);
        free(cfg->functions[i].description);
    }
    free(cfg->functions);
    cfg->functions = NULL;
    cfg->function_count = 0;
}

CI_API int ci_config_add_function(ci_config *cfg, const char *name, const char *description,
                                  ci_function_fn fn, void *payload)
{
    struct ci_function *grown, f = {NULL, NULL, fn, payload};
    size_t len;

    ci_err_clear(ci_thread_err());
    if (!cfg || !name || !fn) {
        return ci_err_set(ci_thread_err(), CI_EINVAL, "%s is NULL",
                          !cfg ? "cfg" : !name ? "name" : "fn");
    }
    len = strlen(name);
    if (len > CI_FUNCTION_NAME_MAX || !identifier(name, len)) {
        return ci_err_set(ci_thread_err(), CI_EINVAL,
                          "a host function's name must be an ASCII Python identifier of "
                          "at most %u bytes, not '%.80s'",
                          CI_FUNCTION_NAME_MAX, name);
    }
    if (name[0] == '_' || bsearch(&name, reserved, sizeof reserved / sizeof *reserved,
                                  sizeof *reserved, compare_name)) {
        return ci_err_set(ci_thread_err(), CI_EINVAL,
                          "'%s' is a Python keyword or builtin, or starts with '_': a cell "
                          "needs it as it is",
                          name);
    }
    if (ci_function_find(cfg, name, len)) {
        return ci_err_set(ci_thread_err(), CI_EINVAL,
                          "a host function named '%s' is already defined", name);
    }
    if (cfg->function_count >= CI_FUNCTIONS_MAX) {
        return ci_err_set(ci_thread_err(), CI_ETOOBIG, "a session has at most %u host functions",
                          CI_FUNCTIONS_MAX);
    }
    if (description) {
        size_t dlen = strlen(description);
        if (dlen > CI_FUNCTION_DOC_MAX) {
            return ci_err_set(ci_thread_err(), CI_ETOOBIG,
                              "the description of '%s' is %zu bytes, over %u", name, dlen,
                              CI_FUNCTION_DOC_MAX);
        }
        if (!ci_utf8_valid((const unsigned char *)description, dlen)) {
            return ci_err_set(ci_thread_err(), CI_EINVAL, "the description of '%s' is not UTF-8",
                              name);
        }
    }
    grown = realloc(cfg->functions, (cfg->function_count + 1) * sizeof *grown);
    if (!grown)
        return CI_ENOMEM;
    cfg->functions = grown;
    f.name = ci_strdup(name);
    f.description = description && description[0] ? ci_strdup(description) : NULL;
    if (!f.name || (description && description[0] && !f.description)) {
        free(f.name);
        free(f.description);
        return CI_ENOMEM;
    }
    cfg->functions[cfg->function_count++] = f;
    return CI_OK;
}

CI_API int ci_config_set_call_limits(ci_config *cfg, size_t args_bytes, size_t result_bytes)
{
    if (!cfg || args_bytes < CI_CALL_LIMIT_MIN || args_bytes > CI_CALL_LIMIT_MAX ||
        result_bytes < CI_CALL_LIMIT_MIN || result_bytes > CI_CALL_LIMIT_MAX)
        return CI_EINVAL;
    cfg->call_args_limit = args_bytes;
    cfg->call_result_limit = result_bytes;
    return CI_OK;
}

/* ------------------------------------------------------------ frames */

static unsigned char *put_u32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
    return p + sizeof v;
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

int ci_functions_frame(const struct ci_config *cfg, unsigned char **out, size_t *len)
{
    size_t n = 12;
    unsigned char *p;

    for (size_t i = 0; i < cfg->function_count; i++)
        n += 8 + strlen(cfg->functions[i].name) +
             (cfg->functions[i].description ? strlen(cfg->functions[i].description) : 0);
    if (!(*out = p = malloc(n)))
        return CI_ENOMEM;
    p = put_u32(p, (uint32_t)cfg->function_count);
    p = put_u32(p, (uint32_t)cfg->call_args_limit);
    p = put_u32(p, (uint32_t)cfg->call_result_limit);
    for (size_t i = 0; i < cfg->function_count; i++) {
        const char *name = cfg->functions[i].name, *doc = cfg->functions[i].description;
        size_t nl = strlen(name), dl = doc ? strlen(doc) : 0;
        p = put_u32(p, (uint32_t)nl);
        p = put_u32(p, (uint32_t)dl);
        memcpy(p, name, nl);
        memcpy(p + nl, doc ? doc : "", dl);
        p += nl + dl;
    }
    *len = n;
    return CI_OK;
}

size_t ci_call_frame_cap(const struct ci_config *cfg)
{
    return sizeof(uint32_t) + CI_FUNCTION_NAME_MAX + cfg->call_args_limit;
}

/* 1 if @doc is {"args": [...], "kwargs": {...}} and nothing else. */
static int call_shape(const json_t *doc)
{
    return json_is_object(doc) && json_object_size(doc) == 2 &&
           json_is_array(json_object_get(doc, "args")) &&
           json_is_object(json_object_get(doc, "kwargs"));
}

int ci_call_parse(const unsigned char *p, size_t len, const struct ci_config *cfg,
                  const struct ci_function **fn, size_t *args_at, const char **why)
{
    json_error_t err;
    json_t *doc;
    uint32_t nl;

    if (len < sizeof nl || (nl = get_u32(p)) == 0 || nl > CI_FUNCTION_NAME_MAX ||
        nl > len - sizeof nl) {
        *why = "a call whose name has the wrong length";
        return -1;
    }
    if (!identifier((const char *)p + sizeof nl, nl)) {
        *why = "a call whose name is not an identifier";
        return -1;
    }
    if (!(*fn = ci_function_find(cfg, (const char *)p + sizeof nl, nl))) {
        *why = "a call of a function the host never defined";
        return -1;
    }
    *args_at = sizeof nl + nl;
    if (len - *args_at > cfg->call_args_limit) {
        *why = "a call whose arguments are over the argument limit";
        return -1;
    }
    /* JSON has no raw NUL (RFC 8259), but jansson 2.14 skips one between
     * tokens, and the callback is promised checked JSON. */
    if (memchr(p + *args_at, '\0', len - *args_at)) {
        *why = "a call whose arguments are not JSON";
        return -1;
    }
    doc = json_loadb((const char *)p + *args_at, len - *args_at,
                     JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
    if (!doc) {
        *why = json_error_code(&err) == json_error_out_of_memory
                   ? "a call whose arguments the host had no memory to check"
                   : "a call whose arguments are not JSON";
        return -1;
    }
    if (!call_shape(doc)) {
        json_decref(doc);
        *why = "a call whose arguments are not {\"args\": [...], \"kwargs\": {...}}";
        return -1;
    }
    json_decref(doc);
    return 0;
}

/* ------------------------------------------------------------ replies */

/* What the cell gets when the callback gave no answer it could pass on:
 * the first refusal, or that it gave none. */
static void refused(ci_reply *reply, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refused(ci_reply *reply, const char *fmt, ...)
{
    va_list ap;
    if (reply->failure[0])
        return;
    va_start(ap, fmt);
    vsnprintf(reply->failure, sizeof reply->failure, fmt, ap);
    va_end(ap);
}

/* CI_OK if @reply may take an answer, and its argument @arg, named @what,
 * is given; else CI_EINVAL. */
static int reply_check(ci_reply *reply, const void *arg, const char *what)
{
    if (!reply)
        return CI_EINVAL;
    if (!arg) {
        return ci_err_set(&reply->s->err, CI_EINVAL, "%s is NULL", what);
    }
    if (reply->answered) {
        return ci_err_set(&reply->s->err, CI_EINVAL, "%s() was answered already", reply->function);
    }
    return CI_OK;
}

CI_API int ci_reply_json(ci_reply *reply, const char *json, size_t len)
{
    json_error_t err;
    json_t *doc;
    char limit[32];

    if (reply_check(reply, json, "json") != CI_OK)
        return CI_EINVAL;
    if (len > reply->result_limit) {
        ci_format_size(limit, sizeof limit, reply->result_limit);
        ci_err_set(&reply->s->err, CI_ETOOBIG,
                   "the answer of %s() is %zu bytes of JSON, over the result "
                   "limit of %s",
                   reply->function, len, limit);
        refused(reply, "the host's answer to %s() is %zu bytes of JSON, over the result "
                "limit of %s", reply->function, len, limit);
        return CI_ETOOBIG;
    }
    doc = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!doc) {
        if (json_error_code(&err) == json_error_out_of_memory)
            return CI_ENOMEM;
        ci_err_set(&reply->s->err, CI_EINVAL, "the answer of %s() is not JSON: %s (at byte %d)",
                   reply->function, err.text, err.position);
        refused(reply, "the host's answer to %s() was not JSON", reply->function);
        return CI_EINVAL;
    }
    json_decref(doc);
    if (!(reply->data = malloc(len ? len : 1)))
        return CI_ENOMEM;
    memcpy(reply->data, json, len);
    reply->len = len;
    reply->status = CI_CALL_RETURNED;
    reply->answered = 1;
    return CI_OK;
}

CI_API int ci_reply_error(ci_reply *reply, const char *exception_name, const char *message)
{
    size_t nl, ml;
    unsigned char *p;

    if (reply_check(reply, exception_name, "exception_name") != CI_OK)
        return CI_EINVAL;
    message = message ? message : "";
    nl = strlen(exception_name);
    ml = strlen(message);
    if (nl > CI_CALL_ENAME_MAX || !dotted_name(exception_name, nl)) {
        return ci_err_set(&reply->s->err, CI_EINVAL,
                          "the exception name must be identifiers joined by dots, at "
                          "most %u bytes, not '%.80s'",
                          CI_CALL_ENAME_MAX, exception_name);
    }
    if (ml > CI_CALL_MESSAGE_MAX) {
        return ci_err_set(&reply->s->err, CI_ETOOBIG, "the exception message is %zu bytes, over %u",
                          ml, CI_CALL_MESSAGE_MAX);
    }
    if (!ci_utf8_valid((const unsigned char *)message, ml)) {
        return ci_err_set(&reply->s->err, CI_EINVAL, "the exception message is not UTF-8");
    }
    if (!(reply->data = malloc(sizeof(uint32_t) + nl + ml)))
        return CI_ENOMEM;
    p = put_u32((unsigned char *)reply->data, (uint32_t)nl);
    memcpy(p, exception_name, nl);
    memcpy(p + nl, message, ml);
    reply->len = sizeof(uint32_t) + nl + ml;
    reply->status = CI_CALL_RAISED;
    reply->answered = 1;
    return CI_OK;
}

void ci_reply_init(ci_reply *reply, ci_session *s, const char *function)
{
    memset(reply, 0, sizeof *reply);
    reply->s = s;
    reply->function = function;
    reply->result_limit = s->cfg.call_result_limit;
}

void ci_reply_finish(ci_reply *reply)
{
    if (reply->answered)
        return;
    refused(reply, "the host function %s() gave no answer", reply->function);
    reply->status = CI_CALL_FAILED;
    reply->data = ci_strdup(reply->failure);
    reply->len = reply->data ? strlen(reply->data) : 0;
}

void ci_reply_clear(ci_reply *reply)
{
    free(reply->data);
    reply->data = NULL;
    reply->len = 0;
}
