/*
 * The head and tail of long output. Everything a tool result holds lands
 * in a model's context window, so a result shows at most
 * --max-output-chars characters (Unicode code points; an invalid byte is
 * one) of a cell's stdout and stderr together. Of a longer stream it
 * shows the first half and the last, each cut at a line break when one
 * is near, with one line between them:
 *
 *     [... 181,234 characters (19,874 lines) left out of this tool result; the
 *     whole output is in .outputs/cell-12.stdout: read it with open() in the next cell ...]
 *
 * (one line; the part after ";" only when the library kept the whole
 * stream in a file of the workspace). When the library cut the stream
 * itself (its output limit), its text already holds a line of its own,
 * "[... N bytes (M lines) left out: stdout passed the output limit of 1
 * MiB; the whole output is in NAME ...]", whose place and counts
 * ci_result_cut() gives: a cut here takes that line out with what it
 * leaves out, and its line counts the two cuts together, in bytes, the
 * unit the library counted in.
 */
#include "mcp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts characters and their JSON cost in @s. */
static void measure(const char *s, size_t len, size_t *chars, size_t *cost)
{
    size_t k, c;
    *chars = *cost = 0;
    for (size_t i = 0; i < len; i += k) {
        k = utf8_next(s + i, len - i, &c);
        ++*chars;
        *cost += c;
    }
}

size_t text_chars(const char *s, size_t len)
{
    size_t chars, cost;
    measure(s, len, &chars, &cost);
    return chars;
}

void cut_text(const char *s, size_t len, size_t max_chars, size_t max_cost, const ci_result *r,
              int stream, struct cut *c)
{
    size_t chars, cost, k, kc, used_chars = 0, used_cost = 0, h = 0, t = 0;
    size_t head_chars = max_chars / 2, head_cost = max_cost / 2;
    size_t at = 0, end = 0;
    ci_uint64 lib_bytes = 0, lib_lines = 0;
    const char *nl;

    *c = (struct cut){.head = len, .tail = len};
    /* The library's own marker, where the library says it is: a line of
     * the same words that the cell printed is the cell's text. */
    c->library = r && ci_result_cut(r, stream, &at, &end, &lib_bytes, &lib_lines) &&
                 at <= len && end <= len - at;
    end += at;
    measure(s, len, &chars, &cost);
    if (chars <= max_chars && cost <= max_cost)
        return;
    /* The head: up to half of each budget; the tail: the rest. The two
     * cannot overlap, or the whole would have fitted. */
    for (; h < len; h += k) {
        k = utf8_next(s + h, len - h, &kc);
        if (used_chars + 1 > head_chars || used_cost + kc > head_cost)
            break;
        used_chars++;
        used_cost += kc;
    }
    for (; t < len && (chars > max_chars - head_chars || cost > max_cost - head_cost); t += k) {
        k = utf8_next(s + t, len - t, &kc);
        chars--;
        cost -= kc;
    }
    /* At a line break when one is within a quarter of the part. */
    if (h > 0 && s[h - 1] != '\n' && (nl = memrchr(s, '\n', h)) && h - (size_t)(nl + 1 - s) <= h / 4)
        h = (size_t)(nl + 1 - s);
    if (t > 0 && s[t - 1] != '\n' && (nl = memchr(s + t, '\n', len - t)) &&
        (size_t)(nl + 1 - (s + t)) <= (len - t) / 4)
        t = (size_t)(nl + 1 - s);
    c->head = h;
    c->tail = t;
    for (size_t i = h; i < t; i += k) {
        k = utf8_next(s + i, t - i, &kc);
        c->left++;
        c->lines += s[i] == '\n';
    }
    if (c->library) {
        c->head = h < at ? h : at;
        c->tail = t > end ? t : end;
        c->bytes = 1;
        c->left = (c->tail - c->head) - (end - at) + lib_bytes;
        c->lines = lib_lines;
        for (size_t i = c->head; i < c->tail; i++)
            c->lines += s[i] == '\n' && (i < at || i >= end);
    }
}

void cut_write(struct buf *b, const char *s, size_t len, const struct cut *c, const char *spill,
               int whole)
{
    char left[32], lines[32];
    buf_add(b, s, c->head);
    if (c->head == len)
        return;
    if (c->head > 0 && s[c->head - 1] != '\n')
        buf_add(b, "\n", 1);
    fmt_count(left, c->left);
    fmt_count(lines, c->lines);
    if (c->lines == 0)
        buf_printf(b, "[... %s %s of one line", left, c->bytes ? "bytes" : "characters");
    else
        buf_printf(b, "[... %s %s (%s line%s)", left, c->bytes ? "bytes" : "characters", lines,
                   c->lines == 1 ? "" : "s");
    buf_printf(b, " left out of this tool result");
    if (c->worker_cut)
        buf_printf(b, ", of a text the output limit had cut in the middle already");
    if (spill && whole)
        buf_printf(b, "; the whole output is in %s: read it with open() in the next cell", spill);
    else if (spill)
        buf_printf(b, "; its beginning, as far as the spill limit, is in %s: read it with open() "
                   "in the next cell", spill);
    buf_printf(b, " ...]\n");
    buf_add(b, s + c->tail, len - c->tail);
}

void split_budget(size_t budget, size_t out_chars, size_t err_chars, size_t *out_cap,
                  size_t *err_cap)
{
    if (budget == 0 || out_chars + err_chars <= budget) {
        *out_cap = *err_cap = SIZE_MAX;
    } else if (out_chars < budget / 2) {
        *out_cap = SIZE_MAX;
        *err_cap = budget - out_chars;
    } else if (err_chars < budget / 2) {
        *out_cap = budget - err_chars;
        *err_cap = SIZE_MAX;
    } else {
        *out_cap = budget / 2;
        *err_cap = budget - budget / 2;
    }
}
