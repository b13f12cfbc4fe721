/*
 * run_python: runs a cell, streams its output while it runs (stream.c),
 * and turns its result into MCP content: one text item with
 * labelled sections, then for each image (a figure) a text item saying
 * what it is and the image, and for each HTML form sent a text item.
 * The text format (codeinterp-mcp(1) documents it; the tests rely on it):
 *
 *     [note] ...             the worker had died before this call
 *     [stdout] / [stderr]    what the cell printed: of more than
 *                            --max-output-chars, its head and tail with
 *                            "[... N characters (M lines) left out ...]"
 *                            between them (cut.c); "[stdout cut: ...]"
 *                            follows when the output limit cut it and
 *                            the library's text does not say so itself
 *     [display N] ...        a display() without a richer form; or a
 *                            line saying which attachment it became, or
 *                            that it was left out (--max-result-bytes);
 *                            as the run left it (see fold_outputs)
 *     [value]                repr of the final expression
 *     [error]                the traceback ("Name: message" at its end)
 *     [timeout] / [memory] / [interrupted] / [killed]   what stopped it
 *                            (and, after [killed], whether the session
 *                            was restarted or, --rollback, rolled back)
 *     [files changed]        workspace files written, one a line (odd
 *                            names JSON-quoted, see buf_add_name)
 *     [no output]            when there is none of the above
 * Every section header is alone on its line; the content follows it. A
 * section cut to fit --max-result-bytes is followed by "[NAME cut after
 * ...]"; stdout and stderr are cut as above instead, shorter.
 */
#include "mcp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- run */

int cell_begin(int cancellable)
{
    int stop;
    pthread_mutex_lock(&srv.lock);
    stop = srv.shutdown || (cancellable && srv.cancelled);
    srv.running_cell = stop ? CELL_NONE : cancellable ? CELL_CANCELLABLE : CELL_UNTIL_SHUTDOWN;
    pthread_mutex_unlock(&srv.lock);
    return !stop;
}

void cell_end(void)
{
    pthread_mutex_lock(&srv.lock);
    srv.running_cell = CELL_NONE;
    srv.interrupt_pending = 0;
    pthread_mutex_unlock(&srv.lock);
}

int run_cell(const char *code, const ci_run_options *opts, int cancellable, ci_result **out)
{
    int rc;
    *out = NULL;
    if (!cell_begin(cancellable))
        return CI_OK;
    rc = ci_run_ex(srv.session, code, opts, out);
    cell_end();
    return rc;
}

/* ------------------------------------------------------------- results */

/* What a result must fit in is known (--max-result-bytes, less the
 * envelope), and so is what each part of it costs once serialized:
 * json_text_cost() for text, 4/3 for base64. So the result is built
 * twice: first to measure, with every attachment left out and no section
 * cut; then for real, with the sections cut to a common cap so that the
 * text fits, and then the attachments that fit in what is left, in
 * order. Each section cut, or attachment left out, says so in the text. */

/* What the line saying a section was cut, and the newline after the cut,
 * may take. */
#define CUT_NOTE_COST 256
/* An image item around its base64 data and MIME type. */
#define IMAGE_ITEM_COST (sizeof "{\"type\":\"image\",\"data\":\"\",\"mimeType\":\"\"}" - 1)

/* A message shown in the result. */
struct shown {
    size_t at;  /* where: a display_data, the execute_result, or an update of no display here */
    size_t src; /* what: the message whose outputs are shown there, @at or its latest update */
};

struct fmt {
    const ci_result *r;
    const size_t *first;       /* the first output of each message, then the count */
    const struct shown *shown; /* what is shown, in order (fold_outputs) */
    size_t nshown;
    struct buf b;              /* the text */
    int measuring;             /* the first pass */
    /* Measuring: */
    size_t *bodies;            /* each section's body's cost */
    size_t nbodies, bodies_cap;
    size_t *attach_cost;       /* per output, the cost of its attachment; 0: none */
    /* Building: */
    json_t *items;             /* the attachments */
    const unsigned char *keep; /* per output: attached, or left out */
    size_t body_cap;           /* the cost a section's body may take */
};

/* @len bytes of text, ending in a newline. */
static void add_text(struct buf *b, const char *text, size_t len)
{
    buf_add(b, text, len);
    if (len > 0 && text[len - 1] != '\n')
        buf_add(b, "\n", 1);
}

/* Measuring, notes the cost of a section's body; 0, or -1 (out of
 * memory: the text is marked failed). */
static int measure_body(struct fmt *f, size_t cost)
{
    if (!f->measuring)
        return 0;
    if (f->nbodies == f->bodies_cap) {
        size_t cap = f->bodies_cap ? 2 * f->bodies_cap : 16;
        size_t *more = realloc(f->bodies, cap * sizeof *more);
        if (!more) {
            f->b.failed = 1;
            return -1;
        }
        f->bodies = more;
        f->bodies_cap = cap;
    }
    f->bodies[f->nbodies++] = cost;
    return 0;
}

/* Whether a body of @cost is cut to the cap: only if that saves more than
 * the line saying so takes. */
static int body_cut(const struct fmt *f, size_t cost)
{
    return cost > f->body_cap && cost - f->body_cap > CUT_NOTE_COST;
}

/* "[label]" alone on a line, then the text: its body, cut to the cap. */
static void section(struct fmt *f, const char *label, const char *text, size_t len)
{
    size_t cost = json_text_cost(text, len) - 2;
    buf_printf(&f->b, "[%s]\n", label);
    if (measure_body(f, cost) < 0)
        return;
    if (!body_cut(f, cost)) {
        add_text(&f->b, text, len);
    } else {
        size_t kept = json_text_fit(text, len, f->body_cap + 2);
        add_text(&f->b, text, kept);
        buf_printf(&f->b, "[%s cut after %zu of its %zu bytes: the result would exceed "
                   "--max-result-bytes]\n", label, kept, len);
    }
}

/* A stream's section (@stream CI_STREAM_*; 0 for the value or the error):
 * its text or, of one longer than @chars characters, its head and tail
 * with a line between them saying what was left out (cut.c); and the
 * same cut, shorter, when the body must fit the cap. Returns whether the
 * text holds the library's own cut of a stream. */
static int stream_section(struct fmt *f, const char *label, int stream, const char *text,
                          size_t len, size_t chars)
{
    int whole = 0;
    const char *spill = ci_result_spill_file(f->r, stream, &whole);
    struct buf shown = {0};
    struct cut c;
    buf_printf(&f->b, "[%s]\n", label);
    cut_text(text, len, chars, SIZE_MAX, f->r, stream, &c);
    c.worker_cut = !stream && (ci_result_truncated(f->r) & CI_TRUNCATED_TEXT);
    size_t cost;
    if (c.head == len) {
        cost = json_text_cost(text, len) - 2;
    } else {
        cut_write(&shown, text, len, &c, spill, whole);
        cost = json_text_cost(shown.data, shown.len) - 2;
    }
    if (measure_body(f, cost) == 0 && body_cut(f, cost)) {
        cut_text(text, len, chars, f->body_cap, f->r, stream, &c);
        c.worker_cut = !stream && (ci_result_truncated(f->r) & CI_TRUNCATED_TEXT);
        shown.len = 0;
        cut_write(&shown, text, len, &c, spill, whole);
    }
    f->b.failed |= shown.failed;
    if (shown.len > 0)
        add_text(&f->b, shown.data, shown.len);
    else
        add_text(&f->b, text, len);
    free(shown.data);
    return c.library;
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

/* A message's text form: its text/plain, or for the value its [value]. */
struct plain {
    const char *text; /* NULL: none */
    size_t len;
};

/* Whether @p is no more than a default repr, "<IPython.core.display.HTML
 * object>" or "<x.Y object at 0x7f...>", which says nothing HTML would. */
static int default_repr(const struct plain *p)
{
    static const char object[] = " object>";
    const size_t n = p->len, o = sizeof object - 1;
    return n > o && p->text[0] == '<' && !memchr(p->text, '\n', n) &&
           (memcmp(p->text + n - o, object, o) == 0 || memmem(p->text, n, " object at 0x", 13));
}

/* The line that goes with an image, next to it, for a model that cannot
 * see it: what it is, its size, and what drew it if its text form says. */
static void image_note(struct buf *b, const char *label, const char *mime,
                       const unsigned char *data, size_t len, const struct plain *plain)
{
    char bytes[32];
    unsigned long w, h;
    buf_printf(b, "[image of %s: %s", label, mime);
    if (png_size(data, len, &w, &h))
        buf_printf(b, ", %lux%lu pixels", w, h);
    buf_printf(b, ", %s bytes", fmt_count(bytes, len));
    if (plain->text && plain->len <= 200 && !memchr(plain->text, '\n', plain->len)) {
        int figure = plain->len > 13 && memcmp(plain->text, "<Figure size ", 13) == 0;
        buf_printf(b, ", %s", figure ? "drawn by matplotlib: " : "its text form: ");
        buf_add(b, plain->text, plain->len);
    }
    buf_add(b, "]", 1);
}

/* Adds an attachment (image, or labelled text) to the items and a line
 * naming it to the text, or, left out, a line saying so. Output @i is of
 * message @label, whose text form is @plain. An image comes after a text
 * item saying what it is (image_note). */
static void attach(struct fmt *f, size_t i, const char *label, const struct plain *plain)
{
    static const char left_out[] = "left out: the result would exceed --max-result-bytes";
    size_t len;
    const unsigned char *data = ci_result_output_data(f->r, i, &len);
    const char *mime = ci_result_output_mime(f->r, i);
    int keep = !f->measuring && f->keep[i];
    char header[256];
    unsigned long w, h;
    if (is_image(mime)) {
        struct buf note = {0};
        image_note(&note, label, mime, data, len, plain);
        if (f->measuring) /* the note's item, its comma, the image's */
            f->attach_cost[i] = TEXT_ITEM_COST(json_text_cost(note.data, note.len)) + 1 +
                                IMAGE_ITEM_COST + (len + 2) / 3 * 4 + json_text_cost(mime, strlen(mime)) - 2;
        if (keep) {
            char *b64 = base64_encode(data, len, NULL);
            json_array_append_new(f->items, note.failed ? NULL : text_content(note.data, note.len));
            json_array_append_new(f->items, json_pack("{s:s, s:s?, s:s}", "type", "image", "data",
                                                      b64, "mimeType", mime));
            free(b64);
        }
        f->b.failed |= note.failed;
        free(note.data);
        if (png_size(data, len, &w, &h))
            buf_printf(&f->b, "[%s: %s, %lux%lu, %s]\n", label, mime, w, h,
                       keep ? "attached as an image" : left_out);
        else
            buf_printf(&f->b, "[%s: %s, %s]\n", label, mime, keep ? "attached as an image" : left_out);
    } else {
        int n = snprintf(header, sizeof header, "[%s of %s]\n", mime, label);
        size_t hlen = n < 0 ? 0 : (size_t)n < sizeof header ? (size_t)n : sizeof header - 1;
        if (f->measuring)
            f->attach_cost[i] = TEXT_ITEM_COST(json_text_cost(header, hlen) +
                                               json_text_cost((const char *)data, len) - 2);
        if (keep) {
            struct buf t = {0};
            buf_add(&t, header, hlen);
            buf_add(&t, (const char *)data, len);
            json_array_append_new(f->items, t.failed ? NULL : text_content(t.data, t.len));
            free(t.data);
        }
        buf_printf(&f->b, "[%s: %s, %s]\n", label, mime, keep ? "attached as text" : left_out);
    }
}

/* What a notebook shows once the run is over, in @shown; returns how many
 * there are. @first gets each message's first output, then the count.
 * An update_display_data shows its outputs in place of those of every
 * display with its display id shown so far or, when there is none, on
 * its own (it updates a display of an earlier call); a clear_output drops
 * every display shown so far, or with wait when the next one comes. */
static size_t fold_outputs(const ci_result *r, size_t *first, struct shown *shown)
{
    size_t n = ci_result_output_count(r), messages = 0, count = 0;
    int pending = 0;

    for (size_t i = 0; i < n; i++)
        if (i == 0 || ci_result_output_message(r, i) != ci_result_output_message(r, i - 1))
            first[messages++] = i;
    first[messages] = n;
    for (size_t m = 0; m < messages; m++) {
        ci_output_type type = ci_result_output_type(r, first[m]);
        const char *id = ci_result_output_display_id(r, first[m]);
        int updated = 0;
        if (type == CI_OUTPUT_CLEAR_OUTPUT) {
            pending = ci_result_output_wait(r, first[m]);
            count = pending ? count : 0;
            continue;
        }
        for (size_t k = 0; type == CI_OUTPUT_UPDATE_DISPLAY_DATA && k < count; k++) {
            const char *shown_id = ci_result_output_display_id(r, first[shown[k].at]);
            if (shown_id && strcmp(shown_id, id) == 0) {
                shown[k].src = m;
                updated = 1;
            }
        }
        if (updated)
            continue;
        if (pending)
            count = pending = 0;
        shown[count++] = (struct shown){m, m};
    }
    return count;
}

/* The text form of the message whose outputs are [@first, @end). */
static struct plain plain_of(const struct fmt *f, size_t first, size_t end)
{
    struct plain p = {ci_result_value(f->r), 0};
    if (ci_result_output_type(f->r, first) == CI_OUTPUT_EXECUTE_RESULT && p.text) {
        p.len = strlen(p.text);
        return p;
    }
    p.text = NULL;
    for (size_t i = first; i < end && !p.text; i++)
        if (strcmp(ci_result_output_mime(f->r, i), "text/plain") == 0)
            p.text = (const char *)ci_result_output_data(f->r, i, &p.len);
    return p;
}

/* The rich outputs as fold_outputs left them, message by message: every
 * image is attached, and every HTML form of a message without a text form
 * (or with --html); a message with neither shows its richest other form,
 * text/plain in the text itself, and the value's text is its [value].
 * Two displays an update gave the same outputs show them once. */
static void outputs(struct fmt *f)
{
    const ci_result *r = f->r;
    size_t displays = 0;
    for (size_t e = 0; e < f->nshown; e++) {
        size_t src = f->shown[e].src, first = f->first[src], end = f->first[src + 1];
        size_t same = 0;
        int shown = 0;
        char label[64];
        if (ci_result_output_type(r, f->first[f->shown[e].at]) == CI_OUTPUT_EXECUTE_RESULT)
            snprintf(label, sizeof label, "the value");
        else
            snprintf(label, sizeof label, "display %zu", ++displays);
        for (size_t k = 0, d = 0; src != f->shown[e].at && k < e && !same; k++) {
            d += ci_result_output_type(r, f->first[f->shown[k].at]) != CI_OUTPUT_EXECUTE_RESULT;
            same = f->shown[k].src == src ? d : 0;
        }
        if (same) {
            buf_printf(&f->b, "[%s: the same as display %zu]\n", label, same);
            continue;
        }
        struct plain plain = plain_of(f, first, end);
        int html = srv.html || !plain.text || default_repr(&plain);
        size_t richest = end;
        for (size_t i = first; i < end; i++) {
            const char *mime = ci_result_output_mime(r, i);
            int is_html = strcmp(mime, "text/html") == 0;
            if (is_image(mime) || (is_html && html)) {
                attach(f, i, label, &plain);
                shown = 1;
            } else if (!is_html && richest == end) {
                richest = i;
            }
        }
        if (shown || richest == end) /* nothing, or HTML the value's text stands for */
            continue;
        const char *mime = ci_result_output_mime(r, richest);
        size_t len;
        const char *data = ci_result_output_data(r, richest, &len);
        if (strcmp(mime, "text/plain") == 0) {
            section(f, label, data, len);
        } else if (mime_is_text(mime)) {
            attach(f, richest, label, &plain);
        } else {
            buf_printf(&f->b, "[%s: %s, %zu bytes, not shown]\n", label, mime, len);
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

/* The text of a run, and in the building pass its attachments. */
static void format_text(struct fmt *f, unsigned long timeout_ms, const char *note,
                        const char *restart)
{
    const ci_result *r = f->r;
    struct buf *b = &f->b;
    int cut = ci_result_truncated(r);
    size_t out_len, err_len, out_chars, err_chars;
    const char *text, *out = ci_result_stdout(r, &out_len), *err = ci_result_stderr(r, &err_len);

    out_len = out ? out_len : 0;
    err_len = err ? err_len : 0;
    split_budget(srv.max_output_chars, text_chars(out, out_len), text_chars(err, err_len),
                 &out_chars, &err_chars);
    if (note)
        section(f, "note", note, strlen(note));
    /* A library that says in the text where it cut needs no line after. */
    if (!(out_len > 0 && stream_section(f, "stdout", CI_STREAM_STDOUT, out, out_len, out_chars)) &&
        (cut & CI_TRUNCATED_STDOUT))
        buf_printf(b, "[stdout cut: over the output limit of %zu bytes]\n", srv.output_limit);
    if (!(err_len > 0 && stream_section(f, "stderr", CI_STREAM_STDERR, err, err_len, err_chars)) &&
        (cut & CI_TRUNCATED_STDERR))
        buf_printf(b, "[stderr cut: over the output limit of %zu bytes]\n", srv.output_limit);
    outputs(f);
    if (ci_result_outputs_omitted(r))
        buf_printf(b, "[%zu rich outputs left out: over the display limits]\n",
                   ci_result_outputs_omitted(r));
    /* The value and the error get half the budget each, as cut. */
    size_t half = srv.max_output_chars ? srv.max_output_chars / 2 : SIZE_MAX;
    if ((text = ci_result_value(r)))
        stream_section(f, "value", 0, text, strlen(text), half);
    if (ci_result_status(r) != CI_STATUS_KILLED && ci_result_error_name(r)) {
        if ((text = ci_result_traceback(r))) {
            stream_section(f, "error", 0, text, strlen(text), half);
        } else {
            struct buf e = {0};
            text = ci_result_error_value(r);
            buf_printf(&e, "%s: %s", ci_result_error_name(r), text ? text : "");
            section(f, "error", e.data ? e.data : "", e.len);
            free(e.data);
        }
    }
    status_note(r, timeout_ms, restart, b);
    if (ci_result_file_count(r) > 0) {
        struct buf names = {0};
        for (size_t i = 0; i < ci_result_file_count(r); i++) {
            buf_add_name(&names, ci_result_file_name(r, i));
            buf_add(&names, "\n", 1);
        }
        b->failed |= names.failed;
        section(f, "files changed", names.data ? names.data : "", names.len);
        free(names.data);
    }
    if (cut & CI_TRUNCATED_FILES)
        buf_printf(b, "[the list of changed files is incomplete]\n");
    if (b->len == 0)
        buf_printf(b, "[no output]\n");
}

/* What the text takes when the bodies are cut to @cap: the rest of the
 * text (@fixed), and each body, or its cut and a note saying so (only
 * where that is shorter). */
static size_t text_cost_at(const struct fmt *f, size_t fixed, size_t cap)
{
    size_t total = fixed;
    for (size_t i = 0; i < f->nbodies; i++)
        total += f->bodies[i] <= cap + CUT_NOTE_COST ? f->bodies[i] : cap + CUT_NOTE_COST;
    return total;
}

/* The largest cap on a body's cost that lets the text take at most
 * @room; SIZE_MAX if none is needed, 0 if even that is too much. */
static size_t body_cap_for(const struct fmt *f, size_t fixed, size_t room)
{
    size_t lo = 0, hi = 0;
    for (size_t i = 0; i < f->nbodies; i++)
        hi = f->bodies[i] > hi ? f->bodies[i] : hi;
    if (text_cost_at(f, fixed, hi) <= room)
        return SIZE_MAX;
    if (hi-- == 0)
        return 0;
    while (lo < hi) { /* lo fits, or is 0; what is over hi does not fit */
        size_t mid = lo + (hi - lo + 1) / 2;
        if (text_cost_at(f, fixed, mid) <= room)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The tool result of a run, in at most @budget bytes of content. */
static json_t *format_result(const ci_result *r, unsigned long timeout_ms, const char *note,
                             const char *restart, size_t budget)
{
    size_t n = ci_result_output_count(r);
    struct fmt f = {.r = r, .measuring = 1, .body_cap = SIZE_MAX};
    unsigned char *keep = calloc(n + 1, 1);
    size_t *first = calloc(n + 1, sizeof *first);
    struct shown *shown = calloc(n + 1, sizeof *shown);
    json_t *result = NULL;

    /* Measure: every attachment left out, no body cut. */
    f.attach_cost = calloc(n + 1, sizeof *f.attach_cost);
    if (keep && f.attach_cost && first && shown) {
        f.first = first;
        f.shown = shown;
        f.nshown = fold_outputs(r, first, shown);
        format_text(&f, timeout_ms, note, restart);
    }
    if (!keep || !f.attach_cost || !first || !shown || f.b.failed)
        goto out;
    size_t text_cost = json_text_cost(f.b.data, f.b.len), bodies = 0;
    for (size_t i = 0; i < f.nbodies; i++)
        bodies += f.bodies[i];
    size_t fixed = text_cost - bodies;
    size_t text_room = budget > TEXT_ITEM_COST(0) ? budget - TEXT_ITEM_COST(0) : 0;
    size_t cap = body_cap_for(&f, fixed, text_room);
    text_cost = cap == SIZE_MAX ? text_cost : text_cost_at(&f, fixed, cap);

    /* The attachments that fit in what is left, in order. */
    size_t left = budget > TEXT_ITEM_COST(text_cost) ? budget - TEXT_ITEM_COST(text_cost) : 0;
    size_t attached = 0;
    for (size_t i = 0; i < n; i++) {
        if (f.attach_cost[i] && f.attach_cost[i] + 1 <= left) { /* and its comma */
            keep[i] = 1;
            left -= f.attach_cost[i] + 1;
            attached += f.attach_cost[i] + 1;
        }
    }

    /* Build. */
    free(f.b.data);
    f = (struct fmt){.r = r, .first = first, .shown = shown, .nshown = f.nshown,
                     .items = json_array(), .keep = keep, .body_cap = cap, .bodies = f.bodies,
                     .attach_cost = f.attach_cost};
    if (!f.items)
        goto out;
    format_text(&f, timeout_ms, note, restart);
    /* Lines that are not sections (one for each of thousands of outputs)
     * can still be too many: then the text is cut where it must be. */
    text_room = budget > TEXT_ITEM_COST(0) + attached ? budget - TEXT_ITEM_COST(0) - attached : 0;
    if (!f.b.failed && json_text_cost(f.b.data, f.b.len) > text_room) {
        static const char cut_note[] = "[the text was cut here: the result would exceed "
                                       "--max-result-bytes]\n";
        size_t note_cost = json_text_cost(cut_note, sizeof cut_note - 1) - 2;
        size_t kept = json_text_fit(f.b.data, f.b.len, text_room > note_cost ? text_room - note_cost : 0);
        const char *nl = memrchr(f.b.data, '\n', kept); /* at the end of a line */
        f.b.len = nl ? (size_t)(nl - f.b.data) + 1 : kept;
        buf_add(&f.b, cut_note, sizeof cut_note - 1);
    }
    if (!f.b.failed && json_array_insert_new(f.items, 0, text_content(f.b.data, f.b.len)) == 0)
        result = json_pack("{s:O, s:b}", "content", f.items, "isError",
                           ci_result_status(r) != CI_STATUS_OK);
out:
    json_decref(f.items);
    free(f.b.data);
    free(f.bodies);
    free(f.attach_cost);
    free(keep);
    free(first);
    free(shown);
    return result;
}

json_t *run_python(json_t *args, const json_t *progress_token, size_t budget)
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
    if (ci_result_rolled_back(r)) { /* --rollback: the session lives on, as before the cell */
        snprintf(restart, sizeof restart, "Its variables and imports are as they were before "
                 "this cell; files the cell wrote are kept as it left them.");
    } else if (ci_result_status(r) == CI_STATUS_KILLED && !stopping) {
        if (session_restart(why, sizeof why) == 0)
            snprintf(restart, sizeof restart, "A fresh interpreter was started: every variable "
                     "and import is gone; files in the working directory are kept.");
        else
            snprintf(restart, sizeof restart, "%s; the next call will try again.", why);
    }
    json_t *result = format_result(r, opts.timeout_ms ? opts.timeout_ms : srv.timeout_ms, note,
                                   restart, budget);
    ci_result_free(r);
    return result;
}
