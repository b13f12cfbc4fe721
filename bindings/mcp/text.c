/*
 * Encodings the tools need: base64 both ways, UTF-8 checks (jansson
 * takes only valid UTF-8, and a cell may print anything), MIME types by
 * file extension, file: URIs, and a growable text buffer.
 */
#include "mcp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* -------------------------------------------------------------- buffer */

void buf_add(struct buf *b, const char *data, size_t len)
{
    if (b->failed)
        return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *bigger = realloc(b->data, cap);
        if (!bigger) {
            b->failed = 1;
            return;
        }
        b->data = bigger;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        buf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_add(b, big, (size_t)n);
    free(big);
}

/* -------------------------------------------------------------- base64 */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len, size_t *out_len)
{
    const unsigned char *p = data;
    size_t n = (len + 2) / 3 * 4, o = 0;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned long v = (unsigned long)p[i] << 16;
        if (i + 1 < len)
            v |= (unsigned long)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        out[o++] = i + 1 < len ? b64_alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

/* The value of a base64 digit, standard or URL-safe alphabet; -1 if none. */
static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decodes base64, skipping white space; padding is optional but, when
 * there, must complete the last group and end the text. Returns 0, -1 for
 * invalid text (*@out NULL), -2 when memory is exhausted. */
int base64_decode(const char *text, size_t len, void **out, size_t *out_len)
{
    unsigned char *data = malloc(len / 4 * 3 + 3);
    size_t o = 0, digits = 0, pads = 0;
    unsigned long acc = 0;
    *out = NULL;
    *out_len = 0;
    if (!data)
        return -2;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        int v = b64_value(c);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            continue;
        if (c == '=' && digits % 4 >= 2 && pads < 2) {
            pads++;
            continue;
        }
        if (v < 0 || pads > 0)
            goto invalid; /* a stray character, or a digit after padding */
        acc = acc << 6 | (unsigned long)v;
        if (++digits % 4 == 0) {
            data[o++] = (unsigned char)(acc >> 16);
            data[o++] = (unsigned char)(acc >> 8);
            data[o++] = (unsigned char)acc;
            acc = 0;
        }
    }
    switch (digits % 4) {
    case 1:
        goto invalid;
    case 2:
        if (pads != 0 && pads != 2)
            goto invalid;
        data[o++] = (unsigned char)(acc >> 4);
        break;
    case 3:
        if (pads > 1)
            goto invalid;
        data[o++] = (unsigned char)(acc >> 10);
        data[o++] = (unsigned char)(acc >> 2);
        break;
    default:
        if (pads)
            goto invalid;
    }
    *out = data;
    *out_len = o;
    return 0;
invalid:
    free(data);
    return -1;
}

/* --------------------------------------------------------------- UTF-8 */

/* The length of the valid UTF-8 sequence at @p (1 to 4), or 0 if the
 * bytes there start none. When the @n bytes end before the sequence does,
 * every byte being right so far, *@partial is set (and 0 returned). */
static size_t utf8_seq(const unsigned char *p, size_t n, int *partial)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xBF;
    size_t need;
    *partial = 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    for (size_t i = 1; i < need; i++) {
        if (i == n) {
            *partial = 1;
            return 0;
        }
        if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xBF))
            return 0;
    }
    return need;
}

int utf8_valid(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    int partial;
    for (size_t i = 0, k; i < len; i += k)
        if ((k = utf8_seq(p + i, len - i, &partial)) == 0)
            return 0;
    return 1;
}

size_t utf8_complete_prefix(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    int partial;
    /* Only the last three bytes can start an unfinished sequence. */
    for (size_t back = 1; back <= 3 && back <= len; back++)
        if (p[len - back] >= 0xC0) {
            utf8_seq(p + len - back, back, &partial);
            return partial ? len - back : len;
        }
    return len;
}

json_t *json_text(const char *data, size_t len)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    const unsigned char *p = (const unsigned char *)data;
    struct buf b = {0};
    int partial;
    if (utf8_valid(data, len))
        return json_stringn_nocheck(data, len);
    for (size_t i = 0, k; i < len; i += k ? k : 1) {
        k = utf8_seq(p + i, len - i, &partial);
        if (k)
            buf_add(&b, data + i, k);
        else
            buf_add(&b, replacement, 3);
    }
    json_t *s = b.failed ? NULL : json_stringn_nocheck(b.data ? b.data : "", b.len);
    free(b.data);
    return s;
}

/* The bytes jansson's dump writes for the character of @k bytes at @p
 * (k == 0: an invalid byte, which json_text() makes U+FFFD). */
static size_t char_cost(const unsigned char *p, size_t k)
{
    if (k == 0)
        return 3;
    if (k > 1)
        return k;
    switch (*p) {
    case '"': case '\\': case '\b': case '\f': case '\n': case '\r': case '\t':
        return 2;
    default:
        return *p < 0x20 ? 6 : 1; /* \u00XX */
    }
}

size_t utf8_next(const char *data, size_t len, size_t *cost)
{
    const unsigned char *p = (const unsigned char *)data;
    int partial;
    size_t k = utf8_seq(p, len, &partial);
    *cost = char_cost(p, k);
    return k ? k : 1;
}

size_t json_text_fit(const char *data, size_t len, size_t cost)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t used = 2, i = 0, k; /* the quotes */
    int partial;
    if (cost < used)
        return 0;
    for (; i < len; i += k ? k : 1) {
        k = utf8_seq(p + i, len - i, &partial);
        size_t c = char_cost(p + i, k);
        if (c > cost - used)
            break;
        used += c;
    }
    return i;
}

size_t json_text_cost(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t used = 2, k;
    int partial;
    for (size_t i = 0; i < len; i += k ? k : 1) {
        k = utf8_seq(p + i, len - i, &partial);
        used += char_cost(p + i, k);
    }
    return used;
}

size_t json_cost(const json_t *v)
{
    /* Without a buffer, json_dumpb only counts. */
    return json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
}

const char *fmt_count(char out[32], unsigned long long n)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%llu", n), o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    return out;
}

const char *fmt_size(char out[32], unsigned long long bytes)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, 32, "%llu %s", bytes, units[u]);
    return out;
}

void buf_add_name(struct buf *b, const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    int quote = *p == '"';
    for (; *p && !quote; p++)
        quote = *p < 0x20 || *p == 0x7f;
    if (!quote) {
        buf_add(b, name, strlen(name));
    } else {
        buf_add(b, "\"", 1);
        for (p = (const unsigned char *)name; *p; p++) {
            const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n"
                              : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" : NULL;
            if (esc)
                buf_add(b, esc, 2);
            else if (*p < 0x20 || *p == 0x7f)
                buf_printf(b, "\\u%04x", *p);
            else
                buf_add(b, (const char *)p, 1);
        }
        buf_add(b, "\"", 1);
    }
}

/* --------------------------------------------------------- MIME, URIs */

static const struct {
    const char *ext, *mime;
} mime_types[] = {
    {"csv", "text/csv"}, {"tsv", "text/tab-separated-values"}, {"txt", "text/plain"},
    {"log", "text/plain"}, {"md", "text/markdown"}, {"html", "text/html"},
    {"htm", "text/html"}, {"css", "text/css"}, {"py", "text/x-python"},
    {"js", "text/javascript"}, {"json", "application/json"},
    {"geojson", "application/geo+json"}, {"xml", "application/xml"},
    {"yaml", "application/yaml"}, {"yml", "application/yaml"}, {"toml", "application/toml"},
    {"svg", "image/svg+xml"}, {"png", "image/png"}, {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"}, {"gif", "image/gif"}, {"webp", "image/webp"},
    {"bmp", "image/bmp"}, {"pdf", "application/pdf"}, {"zip", "application/zip"},
    {"gz", "application/gzip"}, {"parquet", "application/vnd.apache.parquet"},
    {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {"xls", "application/vnd.ms-excel"}, {"ipynb", "application/x-ipynb+json"},
};

const char *mime_type_of(const char *name)
{
    const char *base = strrchr(name, '/');
    const char *dot = strrchr(base ? base + 1 : name, '.');
    for (size_t i = 0; dot && i < sizeof mime_types / sizeof *mime_types; i++)
        if (strcasecmp(dot + 1, mime_types[i].ext) == 0)
            return mime_types[i].mime;
    return "application/octet-stream";
}

/* Text types, as the library counts them: text/..., application/json,
 * and types ending in +json or +xml; also XML, YAML and TOML. */
int mime_is_text(const char *mime)
{
    size_t n = strlen(mime);
    return strncmp(mime, "text/", 5) == 0 || strcmp(mime, "application/json") == 0 ||
           strcmp(mime, "application/xml") == 0 || strcmp(mime, "application/yaml") == 0 ||
           strcmp(mime, "application/toml") == 0 ||
           (n > 5 && (strcmp(mime + n - 5, "+json") == 0 || strcmp(mime + n - 4, "+xml") == 0));
}

/* "file://" and the path @dir/@name, percent-encoded (RFC 3986: all but
 * unreserved characters and "/"). */
char *file_uri(const char *dir, const char *name)
{
    struct buf b = {0};
    buf_add(&b, "file://", 7);
    for (int part = 0; part < 2; part++) {
        const unsigned char *p = (const unsigned char *)(part ? name : dir);
        if (part)
            buf_add(&b, "/", 1);
        for (; *p; p++) {
            if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
                buf_add(&b, (const char *)p, 1);
            else
                buf_printf(&b, "%%%02X", *p);
        }
    }
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
