/*
 * codeinterp-audit: checks an audit log (ci_config_set_audit_log; the
 * schema is docs/audit-log.md, the command man/man1/codeinterp-audit.1).
 *
 *   verify [--last SHA256] FILE   exit 0 if intact; 1 naming the first
 *                                 broken line and why; 2 for a usage or
 *                                 read error
 *
 * A line is broken when it is not a whole line (no newline: truncated),
 * not a JSON object with the log's members, out of sequence (a line
 * removed before it, or lines moved), or when the next line's prev is not
 * its SHA-256 (it was edited). The last line has no successor to vouch
 * for it: --last gives its hash, as a host kept it from its event
 * callback or an earlier verify, to catch an edit of it, or lines cut
 * from the end.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "audit.h"

static const char *file;

/* Says what broke at @line; 1. */
__attribute__((format(printf, 2, 3))) static int broken(unsigned long long line,
                                                        const char *fmt, ...)
{
    va_list ap;

    printf("%s:%llu: ", file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    return 1;
}

/* The next line of @f into *@buf (without its newline), at most
 * CI_AUDIT_LINE_MAX bytes: 1 with *@whole 0 if it had no newline; 0 at
 * the end; -1 on an error (errno) or a line over the cap (E2BIG). */
static int next_line(FILE *f, char **buf, size_t *cap, size_t *len, int *whole)
{
    int c;

    *len = 0;
    *whole = 0;
    while ((c = getc_unlocked(f)) != EOF) {
        if (c == '\n') {
            *whole = 1;
            break;
        }
        if (*len >= CI_AUDIT_LINE_MAX) {
            errno = E2BIG;
            return -1;
        }
        if (*len + 1 >= *cap) {
            size_t n = *cap ? *cap * 2 : 4096;
            char *p;
            if (!(p = realloc(*buf, n)))
                return -1;
            *buf = p;
            *cap = n;
        }
        (*buf)[(*len)++] = (char)c;
    }
    if (ferror(f))
        return -1;
    if (c == EOF && *len == 0)
        return 0;
    (*buf)[*len] = '\0';
    return 1;
}

static void hash_hex(const char *p, size_t n, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)p, n);
    sodium_bin2hex(out, 65, h, sizeof h);
}

/* 0 if line @n (@p, @len bytes) is an event whose seq follows @seq and
 * whose prev is @prev; else 1, said. */
static int check_line(unsigned long long n, const char *p, size_t len,
                      unsigned long long *seq, const char *prev)
{
    static const char *const members[] = {"time", "session", "event"};
    json_error_t e;
    json_t *doc = json_loadb(p, len, JSON_REJECT_DUPLICATES, &e);
    json_t *s = json_object_get(doc, "seq");
    const char *got_prev = json_string_value(json_object_get(doc, "prev"));
    char was[32], now[32];
    size_t i;
    int rc = 1;

    if (!json_is_object(doc)) {
        rc = broken(n, "not a JSON object (%s): edited or damaged", doc ? "another JSON value" : e.text);
        goto out;
    }
    if (strncmp(p, "{\"seq\":", 7) != 0 || !json_is_integer(s) || json_integer_value(s) < 1 ||
        !got_prev) {
        rc = broken(n, "not an audit event (its seq and prev do not lead): edited");
        goto out;
    }
    for (i = 0; i < sizeof members / sizeof *members; i++)
        if (!json_is_string(json_object_get(doc, members[i]))) {
            rc = broken(n, "not an audit event (no %s): edited", members[i]);
            goto out;
        }
    snprintf(was, sizeof was, "%llu", *seq);
    snprintf(now, sizeof now, "%lld", (long long)json_integer_value(s));
    if ((unsigned long long)json_integer_value(s) != *seq + 1) {
        if (*seq == 0)
            rc = broken(n, "seq %s, not 1: lines were removed from the start of the log",
                        now);
        else if ((unsigned long long)json_integer_value(s) > *seq + 1)
            rc = broken(n, "seq %s after seq %s: a line before it was removed, or lines "
                        "were moved", now, was);
        else
            rc = broken(n, "seq %s after seq %s: lines were moved or repeated", now, was);
        goto out;
    }
    if (strcmp(got_prev, prev) != 0) {
        if (n == 1)
            rc = broken(n, "its prev is not the first line's (64 zeros): edited");
        else /* this line is intact as far as can be seen: the one before is not */
            rc = broken(n - 1, "edited: its SHA-256 is not the prev of the line after it");
        goto out;
    }
    *seq += 1;
    rc = 0;
out:
    json_decref(doc);
    return rc;
}

static int verify(const char *last)
{
    FILE *f = fopen(file, "r");
    char *buf = NULL, prev[65] = CI_AUDIT_FIRST_PREV;
    size_t cap = 0, len;
    unsigned long long n = 0, seq = 0;
    int whole, got, rc = 0;

    if (!f) {
        fprintf(stderr, "codeinterp-audit: %s: %s\n", file, strerror(errno));
        return 2;
    }
    while (rc == 0 && (got = next_line(f, &buf, &cap, &len, &whole)) == 1) {
        n++;
        if (!whole)
            rc = broken(n, "incomplete (no newline at its end): the log was cut short");
        else
            rc = check_line(n, buf, len, &seq, prev);
        hash_hex(buf, len, prev);
    }
    if (rc == 0 && got < 0) {
        fprintf(stderr, "codeinterp-audit: %s: line %llu: %s\n", file, n + 1,
                errno == E2BIG ? "over the longest line an audit log holds" : strerror(errno));
        rc = 2;
    }
    if (rc == 0 && last && strcmp(last, prev) != 0)
        rc = broken(n, "its SHA-256 is not the one given with --last: it was edited, or "
                    "the lines after it removed");
    if (rc == 0)
        printf("%s: intact: %llu lines; the last line's SHA-256 is %s\n", file, n,
               n ? prev : "(none)");
    free(buf);
    fclose(f);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: codeinterp-audit verify [--last SHA256] FILE\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *last = NULL;
    int i = 2;

    if (argc < 3 || strcmp(argv[1], "verify") != 0)
        return usage();
    if (strcmp(argv[i], "--last") == 0) {
        if (argc != 5 || strlen(argv[3]) != 64)
            return usage();
        last = argv[3];
        i = 4;
    }
    if (argc != i + 1)
        return usage();
    file = argv[i];
    return verify(last);
}
