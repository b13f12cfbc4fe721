/*
 * The worker's stdout and stderr: pipes read raw by the host, so writes at
 * the descriptor level (os.write, C extensions) are captured like print().
 *
 * Each stream keeps at most `cap` bytes per run, however much a cell
 * prints, and the worker never blocks on a full pipe. A stream that passes
 * the cap keeps its head and its tail, half the cap each, with one marker
 * line between them that says how many bytes and lines were left out and
 * where the whole stream is: the answer a model looks for is usually at
 * the end. The whole stream goes to a spill file in the workspace
 * (spill.c), up to its own cap.
 *
 * A streaming run's callback is given whole lines: a partial line waits
 * for its end, unless it reaches LINE_CHUNK_MAX bytes or waits
 * PARTIAL_LINE_MS (a progress bar printed with end=''), or the run ends.
 * Past the cap it gets one note and nothing more of that stream.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "errors.h"
#include "output.h"
#include "result.h"
#include "spill.h"

#define LINE_CHUNK_MAX 16384
#define PARTIAL_LINE_MS 5

static const char *const stream_names[2] = {"stdout", "stderr"};

void ci_drain_init(struct ci_drain *d, int out, int err, struct ci_buf *out_buf,
                   struct ci_buf *err_buf, size_t cap, int *truncated)
{
    memset(d, 0, sizeof *d);
    d->s[0].fd = out;
    d->s[1].fd = err;
    d->s[0].buf = out_buf;
    d->s[1].buf = err_buf;
    ci_spill_init(&d->s[0].spill);
    ci_spill_init(&d->s[1].spill);
    d->cap = cap;
    d->truncated = truncated;
    d->spill_dir = -1;
}

static int continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* The length of the longest prefix of @p[0..n) that does not end inside a
 * UTF-8 character (backs off at most 3 bytes; bytes that are not UTF-8
 * are cut anywhere). */
static size_t utf8_floor(const char *p, size_t n)
{
    size_t k = n, need;
    unsigned char lead;

    while (k > 0 && n - k < 3 && continuation((unsigned char)p[k - 1]))
        k--;
    if (k == 0)
        return n;
    lead = (unsigned char)p[k - 1];
    need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return need == 1 || n - (k - 1) >= need ? n : k - 1;
}

static unsigned long long count_lines(const char *p, size_t n)
{
    unsigned long long lines = 0;
    const char *end = p + n;
    while ((p = memchr(p, '\n', (size_t)(end - p)))) {
        lines++;
        p++;
    }
    return lines;
}

/* Passes the kept bytes up to @upto to the callback; what still waits
 * then waits from now. */
static void give(struct ci_drain *d, int i, size_t upto)
{
    struct ci_stream *st = &d->s[i];
    if (upto <= st->given)
        return;
    if (d->fn)
        d->fn(i == 0 ? CI_STREAM_STDOUT : CI_STREAM_STDERR, st->buf->data + st->given,
              upto - st->given, d->payload);
    st->given = upto;
    st->partial_since = 0;
}

/* Passes on the whole lines that wait, a line longer than LINE_CHUNK_MAX
 * in pieces of at most that (cut on character boundaries), and a partial
 * line once it is LINE_CHUNK_MAX long; a shorter one waits for its end or
 * for PARTIAL_LINE_MS. */
static void give_lines(struct ci_drain *d, int i)
{
    struct ci_stream *st = &d->s[i];
    const char *p = st->buf->data, *nl;
    size_t len = st->buf->len, at = st->given, end;

    for (; at < len; at = end) {
        nl = memchr(p + at, '\n', len - at);
        end = nl ? (size_t)(nl - p) + 1 : len;
        if (end - at <= LINE_CHUNK_MAX && nl)
            continue; /* a whole line, given with its neighbours */
        give(d, i, at); /* the whole lines before this long or partial one */
        while (end - st->given > LINE_CHUNK_MAX || (!nl && end - st->given == LINE_CHUNK_MAX))
            give(d, i, st->given + utf8_floor(p + st->given, LINE_CHUNK_MAX));
        if (!nl)
            break;
        give(d, i, end);
    }
    give(d, i, at < len ? st->given : len);
    if (len > st->given && !st->partial_since)
        st->partial_since = ci_now_ms();
}

int64_t ci_drain_partial_due(const struct ci_drain *d)
{
    int64_t due = INT64_MAX;
    for (int i = 0; i < 2; i++)
        if (d->s[i].partial_since && d->s[i].partial_since + PARTIAL_LINE_MS < due)
            due = d->s[i].partial_since + PARTIAL_LINE_MS;
    return due;
}

void ci_drain_give_partial(struct ci_drain *d, int64_t now)
{
    for (int i = 0; i < 2; i++)
        if (d->s[i].partial_since && now >= d->s[i].partial_since + PARTIAL_LINE_MS)
            give(d, i, d->s[i].buf->len);
}

/* The tail: a ring of the last tail_cap bytes. */
static size_t tail_cap(const struct ci_drain *d)
{
    return d->cap - d->cap / 2;
}

static void tail_push(struct ci_drain *d, struct ci_stream *st, const char *p, size_t n)
{
    size_t cap = tail_cap(d), first;

    if (n >= cap) {
        memcpy(st->tail, p + n - cap, cap);
        st->tail_len = cap;
        st->tail_end = 0;
        return;
    }
    first = cap - st->tail_end < n ? cap - st->tail_end : n;
    memcpy(st->tail + st->tail_end, p, first);
    memcpy(st->tail, p + first, n - first);
    st->tail_end = (st->tail_end + n) % cap;
    st->tail_len = st->tail_len + n < cap ? st->tail_len + n : cap;
}

/* The name the stream's spill file will have. */
static void spill_name(const struct ci_drain *d, int i, char *name, size_t size)
{
    snprintf(name, size, ".outputs/cell-%d.%s", d->count, stream_names[i]);
}

/* The stream passes the cap: from now on the buffer holds the head, the
 * ring the tail, and the spill file everything. */
static int start_cut(struct ci_drain *d, int i)
{
    struct ci_stream *st = &d->s[i];
    struct ci_buf *b = st->buf;
    size_t head = d->cap / 2;
    char note[320], limit[32], keeps[32], where[96];

    if (!(st->tail = malloc(tail_cap(d))))
        return -1;
    st->cut = 1;
    st->partial_since = 0; /* nothing more of it is streamed */
    if (d->truncated)
        *d->truncated |= i == 0 ? CI_TRUNCATED_STDOUT : CI_TRUNCATED_STDERR;
    if (d->spill_dir >= 0 && d->spill_cap && ci_spill_begin(&st->spill, d->spill_dir) == 0)
        ci_spill_write(&st->spill, b->data, b->len, d->spill_cap);
    if (d->fn) {
        /* Whole characters: the rest of one cut here is not streamed. */
        give(d, i, st->given + utf8_floor(b->data + st->given, b->len - st->given));
        ci_format_size(limit, sizeof limit, d->cap);
        ci_format_size(keeps, sizeof keeps, tail_cap(d));
        if (st->spill.fd >= 0)
            spill_name(d, i, where, sizeof where);
        snprintf(note, sizeof note,
                 "%s[... %s passed the output limit of %s: the rest is not streamed; the "
                 "result keeps its last %s%s%s ...]\n",
                 b->len && b->data[b->len - 1] != '\n' ? "\n" : "", stream_names[i], limit,
                 keeps, st->spill.fd >= 0 ? " and the whole output goes to " : "",
                 st->spill.fd >= 0 ? where : "");
        d->fn(i == 0 ? CI_STREAM_STDOUT : CI_STREAM_STDERR, note, strlen(note), d->payload);
    }
    if (b->len > head)
        tail_push(d, st, b->data + head, b->len - head);
    if (b->data) {
        b->len = b->len < head ? b->len : head;
        b->data[b->len] = '\0';
    }
    return 0;
}

static int keep(struct ci_drain *d, int i, const char *chunk, size_t n)
{
    struct ci_stream *st = &d->s[i];
    struct ci_buf *b = st->buf;
    char *grown;

    st->total += n;
    st->lines += count_lines(chunk, n);
    if (!b)
        return 0;
    if (!st->cut) {
        size_t take = n < d->cap - b->len ? n : d->cap - b->len;
        if (take) {
            if (!(grown = realloc(b->data, b->len + take + 1)))
                return -1;
            memcpy(grown + b->len, chunk, take);
            b->len += take;
            grown[b->len] = '\0';
            b->data = grown;
        }
        if (take == n) {
            if (d->fn)
                give_lines(d, i);
            return 0;
        }
        if (start_cut(d, i) < 0)
            return -1;
        chunk += take;
        n -= take;
    }
    ci_spill_write(&st->spill, chunk, n, d->spill_cap);
    tail_push(d, st, chunk, n);
    return 0;
}

int ci_drain_one(struct ci_drain *d, int i)
{
    char chunk[16384]; /* small: hosts may call ci_run on small thread stacks */
    /* At most 1 MiB a call, more than a pipe holds (the worker cannot
     * grow its pipes: F_SETPIPE_SZ is not in its seccomp policy), so one
     * call still empties a pipe its writer has stopped filling, while a
     * cell that floods it cannot keep the host here past its deadlines. */
    for (int reads = 0; reads < 64; reads++) {
        ssize_t n;
        if (d->s[i].fd < 0)
            return 1;
        n = read(d->s[i].fd, chunk, sizeof chunk);
        if (n > 0) {
            if (keep(d, i, chunk, (size_t)n) < 0)
                return -1;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        /* EOF or a hard error: the write end is gone. The descriptor
         * itself belongs to the worker record and is closed there. */
        d->s[i].fd = -1;
        return 1;
    }
    return 0;
}

int ci_drain_pipes(struct ci_drain *d)
{
    int i;
    for (i = 0; i < 2; i++)
        if (ci_drain_one(d, i) < 0)
            return -1;
    return 0;
}

/* Says where the whole of the cut stream @i is, or why it is not kept. */
static void whereabouts(const struct ci_drain *d, int i, const char *name, char *out,
                        size_t size)
{
    const struct ci_spill *sp = &d->s[i].spill;
    char first[32];

    if (name && sp->full) {
        ci_format_size(first, sizeof first, d->spill_cap);
        snprintf(out, size, "its first %s are in %s", first, name);
    } else if (name) {
        snprintf(out, size, "the whole output is in %s", name);
    } else if (d->spill_dir < 0 || !d->spill_cap) {
        snprintf(out, size, "the rest was not kept");
    } else if (sp->slow) {
        snprintf(out, size, "the whole output could not be kept (writing it took over %d ms)",
                 CI_SPILL_MS);
    } else {
        snprintf(out, size, "the whole output could not be kept (%s)", strerror(sp->err));
    }
}

/* Joins head, marker line and tail into the stream's buffer; @cut (may
 * be NULL) gets where the marker is. */
static int assemble(struct ci_drain *d, int i, const char *name, struct ci_cut *cut)
{
    struct ci_stream *st = &d->s[i];
    struct ci_buf *b = st->buf;
    size_t cap = tail_cap(d), h = b->len, t0 = 0, tn, start;
    char marker[400], limit[32], where[160], *tail, *joined;
    unsigned long long bytes, lines;
    const char *nl;
    int n;

    /* The ring, in order. */
    if (!(tail = malloc(st->tail_len + 1)))
        return -1;
    start = (st->tail_end + cap - st->tail_len) % cap;
    tn = cap - start < st->tail_len ? cap - start : st->tail_len;
    memcpy(tail, st->tail + start, tn);
    memcpy(tail + tn, st->tail, st->tail_len - tn);
    tn = st->tail_len;
    /* Whole lines where a line break is near, else whole characters. */
    nl = h ? memrchr(b->data, '\n', h) : NULL;
    h = nl && (size_t)(nl - b->data) + 1 >= h - h / 4 ? (size_t)(nl - b->data) + 1
                                                      : utf8_floor(b->data, h);
    nl = memchr(tail, '\n', tn);
    if (nl && (size_t)(nl - tail) + 1 <= tn / 4)
        t0 = (size_t)(nl - tail) + 1;
    else
        while (t0 < tn && t0 < 3 && continuation((unsigned char)tail[t0]))
            t0++;
    bytes = st->total - h - (tn - t0);
    lines = st->lines - count_lines(b->data, h) - count_lines(tail + t0, tn - t0);
    ci_format_size(limit, sizeof limit, d->cap);
    whereabouts(d, i, name, where, sizeof where);
    n = snprintf(marker, sizeof marker,
                 "%s[... %llu byte%s (%llu line%s) left out: %s passed the output limit of "
                 "%s; %s ...]\n",
                 h && b->data[h - 1] != '\n' ? "\n" : "", bytes, bytes == 1 ? "" : "s",
                 lines, lines == 1 ? "" : "s", stream_names[i], limit, where);
    if (n < 0 || (size_t)n >= sizeof marker)
        n = (int)strlen(marker);
    if (!(joined = malloc(h + (size_t)n + (tn - t0) + 1))) {
        free(tail);
        return -1;
    }
    memcpy(joined, b->data, h);
    memcpy(joined + h, marker, (size_t)n);
    memcpy(joined + h + n, tail + t0, tn - t0);
    b->len = h + (size_t)n + (tn - t0);
    joined[b->len] = '\0';
    if (cut)
        *cut = (struct ci_cut){h, (size_t)n, bytes, lines};
    free(b->data);
    b->data = joined;
    free(tail);
    return 0;
}

void ci_drain_finish(struct ci_drain *d, ci_result *r)
{
    for (int i = 0; i < 2; i++) {
        struct ci_stream *st = &d->s[i];
        char name[CI_SPILL_NAME_MAX + 16];
        int kept;

        if (st->buf && !st->cut)
            give(d, i, st->buf->len);
        if (!st->cut)
            continue;
        kept = ci_spill_end(&st->spill, d->session, d->count,
                            i == 0 ? CI_STREAM_STDOUT : CI_STREAM_STDERR, name, sizeof name) == 0;
        if (kept && r && !(r->spill_files[i] = ci_strdup(name)))
            kept = 0; /* out of memory: the file is there, the result cannot say so */
        if (kept && r)
            r->spill_partial[i] = st->spill.full;
        /* Out of memory here leaves the head alone, still marked cut. */
        assemble(d, i, kept ? name : NULL, r ? &r->cuts[i] : NULL);
        free(st->tail);
        st->tail = NULL;
        st->cut = 0;
    }
}
