/*
 * The reader thread: reads stdin while cells run, so that ping is
 * answered and a cancellation reaches the running cell at once. It checks
 * each message against JSON-RPC 2.0, answers the methods that need no
 * session itself, and queues tools/call requests for the main thread in
 * a queue bounded in requests and in bytes. It never exits on bad input:
 * only EOF, a read error or shutdown end it.
 */
#include "mcp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The protocol revisions we speak, newest first. */
static const char *const protocol_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                "2024-11-05"};

static const char instructions[] =
    "Runs Python 3.11 in a sandboxed, stateful session, like one Jupyter notebook: variables, "
    "imports and functions persist from one run_python call to the next. numpy, pandas and "
    "matplotlib are installed (the operator may allow only a signed list of packages: an "
    "import it refuses says so); there is no network (but for the URLs run_python's description "
    "may list) and no pip (but where run_python's description says %pip install works). The "
    "working directory is the "
    "session's workspace: upload_file puts files there, list_files and download_file read it, "
    "and reset starts a fresh interpreter over the same files. A matplotlib figure left open "
    "comes back as an image. Cells are IPython's, as in a notebook (%time, %who, top-level "
    "await); !shell commands do not run.";

static const char *const level_names[] = {"debug", "info", "notice", "warning",
                                          "error", "critical", "alert", "emergency"};

/* Whether @v is the string @s, NUL bytes and all: "tools/call\u0000x" is
 * not "tools/call". */
static int string_is(const json_t *v, const char *s)
{
    size_t n = strlen(s);
    return json_is_string(v) && json_string_length(v) == n && memcmp(json_string_value(v), s, n) == 0;
}

/* ------------------------------------------------------------- shutdown */

/* Asks the running cell to stop; retried by the reader's poll until the
 * library takes it (a cell not yet started cannot be interrupted). */
void try_interrupt(void)
{
    int stoppable = srv.running_cell == CELL_CANCELLABLE ||
                    (srv.running_cell == CELL_UNTIL_SHUTDOWN && srv.shutdown);
    if (srv.interrupt_pending && stoppable && srv.session && ci_session_interrupt(srv.session) == 1)
        srv.interrupt_pending = 0;
}

void request_shutdown(const char *why)
{
    pthread_mutex_lock(&srv.lock);
    if (!srv.shutdown) {
        fprintf(stderr, MCP_SERVER_NAME ": %s: shutting down\n", why);
        srv.shutdown = 1;
        srv.interrupt_pending = 1;
        try_interrupt();
        pthread_cond_broadcast(&srv.wake);
    }
    pthread_mutex_unlock(&srv.lock);
}

/* End of input: the calls received still run and are answered (a
 * client that closed stdin but still reads stdout gets its results),
 * unless stdout is closed too. */
static void input_ended(void)
{
    struct pollfd p = {.fd = STDOUT_FILENO, .events = POLLOUT};
    if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP))) {
        request_shutdown("end of input, and stdout is closed");
        return;
    }
    fprintf(stderr, MCP_SERVER_NAME ": end of input: answering the calls received, then stopping\n");
    pthread_mutex_lock(&srv.lock);
    srv.input_done = 1;
    pthread_cond_broadcast(&srv.wake);
    pthread_mutex_unlock(&srv.lock);
}

/* ---------------------------------------------------------------- queue */

struct job *queue_take(void)
{
    static struct job taken;
    struct job *j = NULL;
    pthread_mutex_lock(&srv.lock);
    while (!srv.shutdown && !srv.input_done && srv.queue_len == 0)
        pthread_cond_wait(&srv.wake, &srv.lock);
    if (!srv.shutdown && srv.queue_len > 0) {
        taken = srv.queue[srv.queue_head];
        srv.queue_head = (srv.queue_head + 1) % MCP_QUEUE_MAX;
        srv.queue_len--;
        srv.queue_bytes -= taken.bytes;
        /* From now on a cancellation finds it as the running call. */
        srv.running_id = json_incref(taken.id);
        srv.cancelled = 0;
        j = &taken;
    }
    pthread_mutex_unlock(&srv.lock);
    return j;
}

/* Queues a tools/call, its @line of @bytes as read; answers it with an
 * error when the queue is full. */
static void queue_put(const char *line, size_t bytes, const json_t *id)
{
    int full;
    char *copy = malloc(bytes + 1);
    if (!copy) {
        mcp_send_error(id, RPC_INTERNAL_ERROR, "out of memory");
        return;
    }
    memcpy(copy, line, bytes);
    copy[bytes] = '\0';
    pthread_mutex_lock(&srv.lock);
    /* Waiting requests may hold up to two maximal messages' worth. */
    full = srv.queue_len == MCP_QUEUE_MAX || srv.queue_bytes + bytes > 2 * srv.max_message;
    if (!full) {
        struct job *j = &srv.queue[(srv.queue_head + srv.queue_len) % MCP_QUEUE_MAX];
        j->line = copy;
        j->id = json_incref((json_t *)id);
        j->bytes = bytes;
        copy = NULL;
        srv.queue_len++;
        srv.queue_bytes += bytes;
        pthread_cond_signal(&srv.wake);
    }
    pthread_mutex_unlock(&srv.lock);
    free(copy);
    if (full)
        mcp_send_error(id, RPC_SERVER_BUSY,
                       "server busy: too many tools/call requests are waiting; "
                       "wait for a result before sending more");
}

/* notifications/cancelled: interrupts the running call, or drops a
 * queued one (MCP: a cancelled request need not be answered). */
static void cancel(const json_t *params)
{
    const json_t *rid = json_object_get(params, "requestId");
    if (!rid)
        return;
    pthread_mutex_lock(&srv.lock);
    if (srv.running_id && json_equal(srv.running_id, rid)) {
        srv.cancelled = 1;
        srv.interrupt_pending = 1;
        try_interrupt();
    } else {
        for (size_t i = 0; i < srv.queue_len; i++) {
            struct job *j = &srv.queue[(srv.queue_head + i) % MCP_QUEUE_MAX];
            if (!json_equal(j->id, rid))
                continue;
            free(j->line);
            json_decref(j->id);
            srv.queue_bytes -= j->bytes;
            for (size_t k = i; k + 1 < srv.queue_len; k++)
                srv.queue[(srv.queue_head + k) % MCP_QUEUE_MAX] =
                    srv.queue[(srv.queue_head + k + 1) % MCP_QUEUE_MAX];
            srv.queue_len--;
            break;
        }
    }
    pthread_mutex_unlock(&srv.lock);
}

/* ------------------------------------------------------------- methods */

static json_t *initialize(const json_t *params)
{
    const json_t *asked = json_object_get(params, "protocolVersion");
    const char *version = protocol_versions[0];
    for (size_t i = 0; i < sizeof protocol_versions / sizeof *protocol_versions; i++)
        if (string_is(asked, protocol_versions[i]))
            version = protocol_versions[i];
    return json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
                     version, "capabilities", "tools", "listChanged", 0, "logging",
                     "serverInfo", "name", MCP_SERVER_NAME, "title", "codeinterp", "version",
                     ci_version(), "instructions", instructions);
}

/* logging/setLevel: NULL for an unknown level. */
static json_t *set_level(const json_t *params)
{
    const json_t *level = json_object_get(params, "level");
    for (int i = 0; i <= MCP_LOG_EMERGENCY; i++) {
        if (string_is(level, level_names[i])) {
            pthread_mutex_lock(&srv.lock);
            srv.log_level = i;
            pthread_mutex_unlock(&srv.lock);
            return json_object();
        }
    }
    return NULL;
}

/* tools/call, checked as far as can be before it waits in the queue. */
static void tools_call(const char *line, size_t len, const json_t *id, const json_t *params)
{
    const json_t *name = json_object_get(params, "name");
    const json_t *args = json_object_get(params, "arguments");
    const json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
    const char *tool = json_string_value(name);
    char text[300];
    if (!tool) {
        mcp_send_error(id, RPC_INVALID_PARAMS, "tools/call: params.name must be a string");
    } else if (strlen(tool) != json_string_length(name) || !tool_known(tool)) {
        snprintf(text, sizeof text, "tools/call: unknown tool \"%.100s\"", tool);
        mcp_send_error(id, RPC_INVALID_PARAMS, text);
    } else if (args && !json_is_object(args)) {
        mcp_send_error(id, RPC_INVALID_PARAMS, "tools/call: params.arguments must be an object");
    } else if (args && !tool_args_known(tool, args, text, sizeof text)) {
        mcp_send_error(id, RPC_INVALID_PARAMS, text);
    } else if (json_is_string(token) && json_string_length(token) > MCP_MAX_ID) {
        snprintf(text, sizeof text, "tools/call: params._meta.progressToken takes at most %d "
                 "bytes", MCP_MAX_ID);
        mcp_send_error(id, RPC_INVALID_PARAMS, text);
    } else {
        queue_put(line, len, id);
    }
}

/* A request (it has an id) whose envelope is valid; @line is its text. */
static void request(const char *line, size_t len, const json_t *id, const json_t *method,
                    const json_t *params)
{
    if (params && !json_is_object(params)) {
        mcp_send_error(id, RPC_INVALID_PARAMS, "params must be an object");
    } else if (string_is(method, "ping")) {
        mcp_send_result(id, json_object());
    } else if (string_is(method, "initialize")) {
        if (!json_is_string(json_object_get(params, "protocolVersion")))
            mcp_send_error(id, RPC_INVALID_PARAMS, "initialize: params.protocolVersion must be a string");
        else
            mcp_send_result(id, initialize(params));
    } else if (string_is(method, "tools/list")) {
        mcp_send_result(id, json_pack("{s:o}", "tools", tools_list()));
    } else if (string_is(method, "logging/setLevel")) {
        json_t *ok = set_level(params);
        if (ok)
            mcp_send_result(id, ok);
        else
            mcp_send_error(id, RPC_INVALID_PARAMS, "logging/setLevel: params.level must be one of "
                           "debug, info, notice, warning, error, critical, alert, emergency");
    } else if (string_is(method, "tools/call")) {
        tools_call(line, len, id, params);
    } else {
        char text[200];
        snprintf(text, sizeof text, "method not found: %.100s", json_string_value(method));
        mcp_send_error(id, RPC_METHOD_NOT_FOUND, text);
    }
}

/* Whether @line holds more than MCP_MAX_VALUES JSON values, counted
 * without parsing: every array or object, and every comma outside a
 * string, starts one. */
static int too_many_values(const char *line, size_t len)
{
    size_t values = 1;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char c = line[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if ((c == ',' || c == '[' || c == '{') && ++values > MCP_MAX_VALUES) {
            return 1;
        }
    }
    return 0;
}

/* One input line, as read: a message, or garbage to answer for. */
static void message(const char *line, size_t len)
{
    json_error_t err;
    json_t *msg;
    const json_t *id, *method, *params;
    char text[300];

    if (len == strspn(line, " \t\r")) /* a blank line is no message */
        return;
    if (too_many_values(line, len)) {
        snprintf(text, sizeof text, "invalid request: a message holds at most %d JSON values "
                 "(arrays, objects and their elements); it was discarded", MCP_MAX_VALUES);
        mcp_send_error(NULL, RPC_INVALID_REQUEST, text);
        return;
    }
    msg = json_loadb(line, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!msg) {
        snprintf(text, sizeof text, "parse error: %s (line 1, column %d)", err.text, err.column);
        mcp_send_error(NULL, RPC_PARSE_ERROR, text);
        return;
    }
    if (!json_is_object(msg)) {
        mcp_send_error(NULL, RPC_INVALID_REQUEST, json_is_array(msg)
                       ? "invalid request: batches (JSON arrays) are not supported"
                       : "invalid request: a message is a JSON object");
        json_decref(msg);
        return;
    }
    id = json_object_get(msg, "id");
    method = json_object_get(msg, "method");
    params = json_object_get(msg, "params");
    if (id && !json_is_string(id) && !json_is_integer(id)) {
        mcp_send_error(NULL, RPC_INVALID_REQUEST, "invalid request: id must be a string or an integer");
    } else if (json_is_string(id) && json_string_length(id) > MCP_MAX_ID) {
        /* Every answer repeats the id: it must stay small. */
        snprintf(text, sizeof text, "invalid request: a string id takes at most %d bytes",
                 MCP_MAX_ID);
        mcp_send_error(NULL, RPC_INVALID_REQUEST, text);
    } else if (!string_is(json_object_get(msg, "jsonrpc"), "2.0")) {
        mcp_send_error(id, RPC_INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"");
    } else if (!method && id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
        /* A response: we send no requests, so there is nothing to match. */
    } else if (!json_is_string(method)) {
        mcp_send_error(id, RPC_INVALID_REQUEST, "invalid request: \"method\" must be a string");
    } else if (id) {
        request(line, len, id, method, params);
    } else if (string_is(method, "notifications/cancelled")) {
        cancel(params);
    } /* other notifications (initialized...) need nothing, and never an answer */
    json_decref(msg);
}

/* Reads until EOF or shutdown. While an interrupt waits for its cell to
 * start, polls stdin with a short timeout to retry it; after a shutdown,
 * keeps retrying until the running cell has taken it. */
void *reader_main(void *unused)
{
    struct line_reader *lr = line_reader_new(STDIN_FILENO, srv.max_message);
    (void)unused;
    if (!lr) {
        request_shutdown("out of memory");
        return NULL;
    }
    for (;;) {
        char *line;
        size_t len;
        int rc, pending;

        pthread_mutex_lock(&srv.lock);
        try_interrupt();
        pending = srv.interrupt_pending;
        rc = srv.shutdown;
        pthread_mutex_unlock(&srv.lock);
        if (rc)
            break;
        if (pending && !line_reader_buffered(lr)) {
            struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
            if (poll(&p, 1, 10) == 0)
                continue;
        }
        rc = line_reader_next(lr, &line, &len);
        if (rc == 0)
            input_ended();
        if (rc < 0)
            request_shutdown(strerror(errno));
        if (rc <= 0)
            break;
        if (line) {
            message(line, len);
        } else {
            char text[160];
            snprintf(text, sizeof text, "invalid request: message of %zu bytes or more is over "
                     "the limit of %zu bytes (--max-message-bytes); it was discarded",
                     len, srv.max_message);
            mcp_send_error(NULL, RPC_INVALID_REQUEST, text);
        }
    }
    line_reader_free(lr);
    /* The main thread may still wait for the running cell to give way. */
    for (;;) {
        pthread_mutex_lock(&srv.lock);
        try_interrupt();
        int pending = srv.interrupt_pending && srv.running_id;
        pthread_mutex_unlock(&srv.lock);
        if (!pending)
            break;
        poll(NULL, 0, 10);
    }
    return NULL;
}

/* Whether a log notification of @level passes logging/setLevel. */
int log_enabled(int level)
{
    pthread_mutex_lock(&srv.lock);
    int on = level >= srv.log_level;
    pthread_mutex_unlock(&srv.lock);
    return on;
}
