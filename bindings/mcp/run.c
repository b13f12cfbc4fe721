/*
 * run_python: runs a cell, streams its output while it runs (stream.c),
 * and turns its result into MCP content: one text item with
 * labelled sections, then an item for each figure (image) and HTML table.
 * The text format (README and the tests rely on it):
 *
 *     [note] ...             the worker had died before this call
 *     [stdout] / [stderr]    what the cell printed; "[stdout cut: ...]"
 *                            follows when the output limit cut it
 *     [display N] ...        a display() without a richer form; or a
 *                            line saying which attachment it became
 *     [value]                repr of the final expression
 *     [error]                the traceback ("Name: message" at its end)
 *     [timeout] / [memory] / [interrupted] / [killed]   what stopped it
 *     [files changed]        workspace files written, one a line
 *     [no output]            when there is none of the above
 * Every section header is alone on its line; the content follows it.
 */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- run */

int run_cell(const char *code, const ci_run_options *opts, int cancellable, ci_result **out)
{
    int stop, rc;
    *out = NULL;
    pthread_mutex_lock(&srv.lock);
    stop = srv.shutdown || (cancellable && srv.cancelled);
    srv.running_cell = stop ? CELL_NONE : cancellable ? CELL_CANCELLABLE : CELL_UNTIL_SHUTDOWN;
    pthread_mutex_unlock(&srv.lock);
    if (stop)
        return CI_OK;
    rc = ci_run_ex(srv.session, code, opts, out);
    pthread_mutex_lock(&srv.lock);
    srv.running_cell = CELL_NONE;
    srv.interrupt_pending = 0;
    pthread_mutex_unlock(&srv.lock);
    return rc;
}

/* ------------------------------------------------------------- results */

/* @len bytes of text, ending in a newline. */
static void add_text(struct buf *b, const char *text, size_t len)
{
    buf_add(b, text, len);
    if (len > 0 && text[len - 1] != '\n')
        buf_add(b, "\n", 1);
}

/* "[label]" alone on a line, then the text. */
static void section(struct buf *b, const char *label, const char *text, size_t len)
{
    buf_printf(b, "[%s]\n", label);
    add_text(b, text, len);
}

static int is_image(const char *mime)
{
    return strcmp(mime, "image/png") == 0 || strcmp(mime, "image/jpeg") == 0 ||
           strcmp(mime, "image/gif") == 0 || strcmp(mime, "image/webp") == 0;
}

/* The width and height a PNG's IHDR chunk gives; 0 if it is not one. */
static int png_size(const unsigned char *p, size_t len, unsigned long *w, unsigned long *h)
{
    if (len < 24 || memcmp(p, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(p + 12, "IHDR", 4) != 0)
        return 0;
    *w = (unsigned long)p[16] << 24 | (unsigned long)p[17] << 16 | (unsigned long)p[18] << 8 | p[19];
    *h = (unsigned long)p[20] << 24 | (unsigned long)p[21] << 16 | (unsigned long)p[22] << 8 | p[23];
    return 1;
}

/* Adds an attachment (image, or labelled text) to @items and a line
 * naming it to @b. Output @i is of message @label. */
static void attach(const ci_result *r, size_t i, const char *label, struct buf *b, json_t *items)
{
    size_t len;
    const unsigned char *data = ci_result_output_data(r, i, &len);
    const char *mime = ci_result_output_mime(r, i);
    unsigned long w, h;
    if (is_image(mime)) {
        char *b64 = base64_encode(data, len, NULL);
        json_array_append_new(items, json_pack("{s:s, s:s?, s:s}", "type", "image", "data", b64,
                                               "mimeType", mime));
        free(b64);
        if (png_size(data, len, &w, &h))
            buf_printf(b, "[%s: %s, %lux%lu, attached as an image]\n", label, mime, w, h);
        else
            buf_printf(b, "[%s: %s, attached as an image]\n", label, mime);
    } else {
        struct buf t = {0};
        buf_printf(&t, "[%s of %s]\n", mime, label);
        buf_add(&t, (const char *)data, len);
        json_array_append_new(items, json_pack("{s:s, s:o}", "type", "text", "text",
                                               json_text(t.data, t.len)));
        free(t.data);
        buf_printf(b, "[%s: %s, attached as text]\n", label, mime);
    }
}

/* The rich outputs, message by message: every image and HTML form is
 * attached; a message with neither shows its richest form, text/plain in
 * the text itself. */
static void outputs(const ci_result *r, struct buf *b, json_t *items)
{
    size_t n = ci_result_output_count(r);
    for (size_t first = 0, end; first < n; first = end) {
        size_t msg = ci_result_output_message(r, first);
        int shown = 0;
        char label[64];
        for (end = first; end < n && ci_result_output_message(r, end) == msg; end++)
            ;
        if (ci_result_output_type(r, first) == CI_OUTPUT_EXECUTE_RESULT)
            snprintf(label, sizeof label, "the value");
        else
            snprintf(label, sizeof label, "display %zu", msg + 1);
        for (size_t i = first; i < end; i++) {
            const char *mime = ci_result_output_mime(r, i);
            if (is_image(mime) || strcmp(mime, "text/html") == 0) {
                attach(r, i, label, b, items);
                shown = 1;
            }
        }
        if (shown)
            continue;
        const char *mime = ci_result_output_mime(r, first);
        size_t len;
        const char *data = ci_result_output_data(r, first, &len);
        if (strcmp(mime, "text/plain") == 0) {
            section(b, label, data, len);
        } else if (mime_is_text(mime)) {
            attach(r, first, label, b, items);
        } else {
            buf_printf(b, "[%s: %s, %zu bytes, not shown]\n", label, mime, len);
        }
    }
}

/* What stopped the cell, and what became of the session. @restart is
 * NULL, or how the restart after a killed worker went. */
static void status_note(const ci_result *r, unsigned long timeout_ms, const char *restart,
                        struct buf *b)
{
    const char *name = ci_result_error_name(r), *value = ci_result_error_value(r);
    switch (ci_result_status(r)) {
    case CI_STATUS_OK:
    case CI_STATUS_ERROR:
        break;
    case CI_STATUS_TIMEOUT:
        buf_printf(b, "[timeout]\nThe cell ran past its limit of %lu ms and was interrupted. "
                   "The session and its variables are kept.\n", timeout_ms);
        break;
    case CI_STATUS_MEMORY:
        buf_printf(b, "[memory]\nThe cell reached the session's memory limit (MemoryError). "
                   "The session and its variables are kept.\n");
        break;
    case CI_STATUS_INTERRUPTED: /* by a shutdown: a cancelled call gets no answer */
        buf_printf(b, "[interrupted]\nThe server is stopping; the cell was interrupted.\n");
        break;
    case CI_STATUS_KILLED:
        buf_printf(b, "[killed]\nThe Python process died (%s: %s). %s\n", name ? name : "?",
                   value ? value : "", restart);
        break;
    }
}

/* The tool result of a run. */
static json_t *format_result(const ci_result *r, unsigned long timeout_ms, const char *note,
                             const char *restart)
{
    struct buf b = {0};
    json_t *items = json_array();
    int cut = ci_result_truncated(r);
    size_t len;
    const char *text;

    if (note)
        section(&b, "note", note, strlen(note));
    if ((text = ci_result_stdout(r, &len)) && len > 0)
        section(&b, "stdout", text, len);
    if (cut & CI_TRUNCATED_STDOUT)
        buf_printf(&b, "[stdout cut: over the output limit of %zu bytes]\n", srv.output_limit);
    if ((text = ci_result_stderr(r, &len)) && len > 0)
        section(&b, "stderr", text, len);
    if (cut & CI_TRUNCATED_STDERR)
        buf_printf(&b, "[stderr cut: over the output limit of %zu bytes]\n", srv.output_limit);
    outputs(r, &b, items);
    if (ci_result_outputs_omitted(r))
        buf_printf(&b, "[%zu rich outputs left out: over the display limits]\n",
                   ci_result_outputs_omitted(r));
    if ((text = ci_result_value(r)))
        section(&b, "value", text, strlen(text));
    if (ci_result_status(r) != CI_STATUS_KILLED && ci_result_error_name(r)) {
        if ((text = ci_result_traceback(r))) {
            section(&b, "error", text, strlen(text));
        } else {
            buf_printf(&b, "[error]\n%s: ", ci_result_error_name(r));
            text = ci_result_error_value(r);
            add_text(&b, text ? text : "", text ? strlen(text) : 0);
        }
    }
    if (cut & CI_TRUNCATED_TEXT)
        buf_printf(&b, "[the value, error message or traceback was cut at %zu bytes]\n",
                   srv.output_limit);
    status_note(r, timeout_ms, restart, &b);
    for (size_t i = 0; i < ci_result_file_count(r); i++) {
        if (i == 0)
            buf_printf(&b, "[files changed]\n");
        buf_printf(&b, "%s\n", ci_result_file_name(r, i));
    }
    if (cut & CI_TRUNCATED_FILES)
        buf_printf(&b, "[the list of changed files is incomplete]\n");
    if (b.len == 0)
        buf_printf(&b, "[no output]\n");

    json_t *result = NULL;
    if (!b.failed && items && json_array_insert_new(items, 0, text_content(b.data)) == 0)
        result = json_pack("{s:o, s:b}", "content", items, "isError",
                           ci_result_status(r) != CI_STATUS_OK);
    else
        json_decref(items);
    free(b.data);
    return result;
}

json_t *run_python(json_t *args, const json_t *progress_token)
{
    static const char died[] = "The Python process had died since the last call and was "
                               "restarted: earlier variables and imports are gone; files in "
                               "the working directory are kept.";
    const json_t *code = json_object_get(args, "code");
    const json_t *timeout = json_object_get(args, "timeout_ms");
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    char why[1024], restart[1200] = "";
    const char *note = NULL;
    ci_result *r;
    int rc;

    if (!json_is_string(code) || strlen(json_string_value(code)) != json_string_length(code))
        return tool_error("run_python: \"code\" must be a string of Python source (without NUL "
                          "characters)");
    if (timeout && !json_is_null(timeout)) {
        json_int_t ms = json_integer_value(timeout);
        if (!json_is_integer(timeout) || ms < 1 || ms > 86400000)
            return tool_error("run_python: \"timeout_ms\" must be an integer from 1 to 86400000");
        opts.timeout_ms = (unsigned long)ms;
    }
    opts.on_output = stream_output;

    rc = session_ensure(1, why, sizeof why);
    if (rc < 0)
        return tool_error("run_python: %s", why);
    if (rc == 1)
        note = died;
    stream_begin(progress_token);
    rc = run_cell(json_string_value(code), &opts, 1, &r);
    if (rc == CI_EDEAD) { /* it died just now, between our check and the run */
        if (session_restart(why, sizeof why) < 0) {
            stream_end();
            return tool_error("run_python: %s", why);
        }
        note = died;
        rc = run_cell(json_string_value(code), &opts, 1, &r);
    }
    stream_end();
    if (rc != CI_OK)
        return tool_error("run_python: %s: %s", ci_strerror(rc), ci_session_errmsg(srv.session));
    if (!r)
        return tool_error("run_python: the call was cancelled before the cell started");

    pthread_mutex_lock(&srv.lock);
    int stopping = srv.shutdown;
    pthread_mutex_unlock(&srv.lock);
    if (ci_result_status(r) == CI_STATUS_KILLED && !stopping) {
        if (session_restart(why, sizeof why) == 0)
            snprintf(restart, sizeof restart, "A fresh interpreter was started: every variable "
                     "and import is gone; files in the working directory are kept.");
        else
            snprintf(restart, sizeof restart, "%s; the next call will try again.", why);
    }
    json_t *result = format_result(r, opts.timeout_ms ? opts.timeout_ms : srv.timeout_ms, note,
                                   restart);
    ci_result_free(r);
    return result;
}
