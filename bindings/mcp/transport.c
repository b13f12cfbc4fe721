/*
 * The stdio transport: newline-delimited JSON-RPC messages in on stdin,
 * out on stdout. Input lines are capped (srv.max_message): a longer line
 * is read and thrown away up to its newline, never held whole. Output
 * goes out whole lines at a time under one lock, so the reader thread's
 * answers and the main thread's results and notifications never mix.
 */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ in */

#define READ_CHUNK 65536
/* A line buffer grown past this is given back after its line. */
#define KEEP_BUFFER (1u << 20)

struct line_reader {
    int fd;
    size_t max;             /* the cap on a line, newline excluded */
    char chunk[READ_CHUNK]; /* bytes read and not yet consumed */
    size_t pos, end;
    char *line;             /* the line being assembled */
    size_t len, cap;
    int skipping;           /* inside a line over the cap */
};

struct line_reader *line_reader_new(int fd, size_t max_line)
{
    struct line_reader *lr = calloc(1, sizeof *lr);
    if (lr) {
        lr->fd = fd;
        lr->max = max_line;
    }
    return lr;
}

void line_reader_free(struct line_reader *lr)
{
    if (lr)
        free(lr->line);
    free(lr);
}

int line_reader_buffered(const struct line_reader *lr)
{
    return lr->pos < lr->end;
}

/* Appends @n bytes to the line; the caller has checked the cap. */
static int line_add(struct line_reader *lr, const char *p, size_t n)
{
    if (lr->len + n + 1 > lr->cap) {
        size_t cap = lr->cap ? lr->cap : 4096;
        while (cap < lr->len + n + 1)
            cap *= 2;
        if (cap > lr->max + 1)
            cap = lr->max + 1;
        char *bigger = realloc(lr->line, cap);
        if (!bigger)
            return -1;
        lr->line = bigger;
        lr->cap = cap;
    }
    memcpy(lr->line + lr->len, p, n);
    lr->len += n;
    return 0;
}

int line_reader_next(struct line_reader *lr, char **line, size_t *len)
{
    if (lr->cap > KEEP_BUFFER) { /* the last line was a big one */
        free(lr->line);
        lr->line = NULL;
        lr->cap = 0;
    }
    lr->len = 0;
    for (;;) {
        if (lr->pos == lr->end) {
            ssize_t n = read(lr->fd, lr->chunk, sizeof lr->chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return -1;
            if (n == 0) { /* EOF: a last line without its newline still counts */
                if (lr->skipping || lr->len == 0)
                    return 0;
                break;
            }
            lr->pos = 0;
            lr->end = (size_t)n;
        }
        const char *start = lr->chunk + lr->pos;
        size_t avail = lr->end - lr->pos;
        const char *nl = memchr(start, '\n', avail);
        size_t piece = nl ? (size_t)(nl - start) : avail;
        lr->pos += piece + (nl != NULL);
        if (lr->skipping) {
            lr->skipping = !nl;
            continue;
        }
        if (piece > lr->max - lr->len || line_add(lr, start, piece) < 0) {
            /* Over the cap (or out of memory): report the line now, skip
             * the rest of it as it comes. */
            *line = NULL;
            *len = lr->len + piece;
            lr->skipping = !nl;
            lr->len = 0;
            return 1;
        }
        if (nl)
            break;
    }
    if (line_add(lr, "", 0) < 0) { /* room for the NUL */
        *line = NULL;
        *len = lr->len;
        return 1;
    }
    if (lr->len > 0 && lr->line[lr->len - 1] == '\r') /* tolerate CRLF */
        lr->len--;
    lr->line[lr->len] = '\0';
    *line = lr->line;
    *len = lr->len;
    return 1;
}

/* ----------------------------------------------------------------- out */

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static char out_buf[READ_CHUNK];
static size_t out_len;
static int out_broken; /* a write failed: the client is gone */

static int write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDOUT_FILENO, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* jansson hands over a message in many small pieces: gather them. */
static int out_piece(const char *p, size_t n, void *unused)
{
    (void)unused;
    if (out_len + n > sizeof out_buf) {
        if (write_all(out_buf, out_len) < 0)
            return -1;
        out_len = 0;
        if (n > sizeof out_buf)
            return write_all(p, n);
    }
    memcpy(out_buf + out_len, p, n);
    out_len += n;
    return 0;
}

/* A message over srv.max_result (the tools keep theirs under it; this is
 * the last guard): a result becomes an error that says so, anything else
 * is dropped. NULL when nothing is to be sent instead. */
static json_t *oversized(json_t *msg, size_t size)
{
    const json_t *id = json_object_get(msg, "id");
    json_t *instead = NULL;
    char text[200];
    fprintf(stderr, MCP_SERVER_NAME ": a message of %zu bytes is over --max-result-bytes (%zu); "
            "it was not sent\n", size, srv.max_result);
    if (id && json_object_get(msg, "result")) { /* an id is short: MCP_MAX_ID */
        snprintf(text, sizeof text, "internal error: the result would take %zu bytes, over the "
                 "limit of %zu (--max-result-bytes); it was not sent", size, srv.max_result);
        instead = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error",
                            "code", RPC_INTERNAL_ERROR, "message", text);
    }
    json_decref(msg);
    return instead;
}

int mcp_send(json_t *msg)
{
    int rc = -1, broke = 0;
    size_t size;
    if (!msg) {
        fprintf(stderr, MCP_SERVER_NAME ": out of memory; a message was not sent\n");
        return -1;
    }
    /* The line and its newline. */
    if ((size = json_cost(msg) + 1) > srv.max_result && !(msg = oversized(msg, size)))
        return 0;
    pthread_mutex_lock(&out_lock);
    if (!out_broken) {
        /* JSON_COMPACT writes no newline; strings escape theirs. */
        out_len = 0;
        rc = json_dump_callback(msg, out_piece, NULL, JSON_COMPACT);
        if (rc == 0)
            rc = out_piece("\n", 1, NULL);
        if (rc == 0)
            rc = write_all(out_buf, out_len);
        broke = out_broken = rc != 0;
    }
    pthread_mutex_unlock(&out_lock);
    json_decref(msg);
    if (broke)
        request_shutdown("cannot write to stdout");
    return rc;
}

void mcp_send_result(const json_t *id, json_t *result)
{
    if (!result) {
        mcp_send_error(id, RPC_INTERNAL_ERROR, "out of memory");
        return;
    }
    mcp_send(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

void mcp_send_error(const json_t *id, int code, const char *message)
{
    /* The message may quote the input, which need not be valid UTF-8. */
    mcp_send(json_pack("{s:s, s:O, s:{s:i, s:o}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                       "error", "code", code, "message", json_text(message, strlen(message))));
}

void mcp_send_notification(const char *method, json_t *params)
{
    mcp_send(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params));
}
