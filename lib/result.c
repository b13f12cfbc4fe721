/* The result of one run: decoding the worker's RESULT frame, and getters. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

char *ci_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

ci_result *ci_result_new(void)
{
    return calloc(1, sizeof(ci_result));
}

/* Strict UTF-8 (RFC 3629): no overlongs, no surrogates, nothing past
 * U+10FFFF, and no NUL, which would cut the C string short. */
static int utf8_text_valid(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = p[i], need, min;
        uint32_t cp;
        if (c == 0)
            return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            need = 1, min = 0x80, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            need = 2, min = 0x800, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            need = 3, min = 0x10000, cp = c & 0x07;
        else
            return 0;
        if (n - i <= need)
            return 0;
        for (unsigned k = 1; k <= need; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += need + 1;
    }
    return 1;
}

static char *text_copy(const unsigned char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

int ci_result_decode(ci_result *r, const unsigned char *p, size_t len, size_t field_cap,
                     uint32_t *outcome, uint32_t *count, const char **why)
{
    unsigned seen = 0;
    while (len > 0) {
        uint32_t tag, flen, word;
        char **slot = NULL;

        if (len < 8) {
            *why = "truncated field header";
            return CI_EPROTO;
        }
        memcpy(&tag, p, 4);
        memcpy(&flen, p + 4, 4);
        p += 8;
        len -= 8;
        if (flen > len) {
            *why = "field longer than its frame";
            return CI_EPROTO;
        }
        if (tag == 0 || tag > 31 || (seen & (1u << tag))) {
            *why = tag == 0 || tag > 31 ? "unknown field" : "repeated field";
            return CI_EPROTO;
        }
        seen |= 1u << tag;
        switch (tag) {
        case CI_FIELD_OUTCOME:
        case CI_FIELD_FLAGS:
        case CI_FIELD_COUNT:
            if (flen != 4) {
                *why = "integer field of the wrong size";
                return CI_EPROTO;
            }
            memcpy(&word, p, 4);
            if (tag == CI_FIELD_OUTCOME) {
                if (word > CI_OUTCOME_INTERRUPT) {
                    *why = "unknown outcome";
                    return CI_EPROTO;
                }
                *outcome = word;
            } else if (tag == CI_FIELD_COUNT) {
                *count = word;
            } else {
                if (word & ~CI_FLAG_TRUNCATED) {
                    *why = "unknown flag";
                    return CI_EPROTO;
                }
                if (word & CI_FLAG_TRUNCATED)
                    r->truncated = 1;
            }
            break;
        case CI_FIELD_VALUE:
            slot = &r->value;
            break;
        case CI_FIELD_ENAME:
            slot = &r->error_name;
            break;
        case CI_FIELD_EVALUE:
            slot = &r->error_value;
            break;
        case CI_FIELD_TRACEBACK:
            slot = &r->traceback;
            break;
        default:
            *why = "unknown field";
            return CI_EPROTO;
        }
        if (slot) {
            if (flen > field_cap) {
                *why = "text field over the output limit";
                return CI_EPROTO;
            }
            if (!utf8_text_valid(p, flen)) {
                *why = "text field is not UTF-8 without NUL";
                return CI_EPROTO;
            }
            if (!(*slot = text_copy(p, flen)))
                return CI_ENOMEM;
        }
        p += flen;
        len -= flen;
    }
    if (!(seen & (1u << CI_FIELD_OUTCOME))) {
        *why = "no outcome";
        return CI_EPROTO;
    }
    if (!(seen & (1u << CI_FIELD_COUNT))) {
        *why = "no execution count";
        return CI_EPROTO;
    }
    if (*outcome != CI_OUTCOME_OK && !r->error_name) {
        *why = "an error without a name";
        return CI_EPROTO;
    }
    return CI_OK;
}

CI_API void ci_result_free(ci_result *r)
{
    if (!r)
        return;
    free(r->out.data);
    free(r->err.data);
    free(r->value);
    free(r->error_name);
    free(r->error_value);
    free(r->traceback);
    free(r);
}

CI_API ci_status ci_result_status(const ci_result *r)
{
    return r ? r->status : CI_STATUS_KILLED;
}

static const char *stream(const struct ci_buf *b, size_t *len)
{
    if (len)
        *len = b->len;
    return b->data ? b->data : "";
}

CI_API const char *ci_result_stdout(const ci_result *r, size_t *len)
{
    if (!r) {
        if (len)
            *len = 0;
        return NULL;
    }
    return stream(&r->out, len);
}

CI_API const char *ci_result_stderr(const ci_result *r, size_t *len)
{
    if (!r) {
        if (len)
            *len = 0;
        return NULL;
    }
    return stream(&r->err, len);
}

CI_API int ci_result_truncated(const ci_result *r)
{
    return r ? r->truncated : 0;
}

CI_API const char *ci_result_value(const ci_result *r)
{
    return r ? r->value : NULL;
}

CI_API const char *ci_result_error_name(const ci_result *r)
{
    return r ? r->error_name : NULL;
}

CI_API const char *ci_result_error_value(const ci_result *r)
{
    return r ? r->error_value : NULL;
}

CI_API const char *ci_result_traceback(const ci_result *r)
{
    return r ? r->traceback : NULL;
}

CI_API int ci_result_execution_count(const ci_result *r)
{
    return r ? r->execution_count : 0;
}

CI_API void ci_free(void *p)
{
    free(p);
}
