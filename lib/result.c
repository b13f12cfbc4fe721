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
int ci_utf8_valid(const unsigned char *p, size_t n)
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

size_t ci_result_frame_cap(const struct ci_config *cfg)
{
    /* Four text fields, the outputs' data and their headers, and room for
     * the small fields. */
    return 4 * cfg->output_limit + cfg->display_run_limit +
           (size_t)CI_MAX_OUTPUTS * (16 + CI_MIME_MAX) + 4096;
}

/* A MIME type as RFC 6838 names them: type "/" subtype, each of
 * restricted-name characters (letters, digits, !#$&^_.+-), in lower case
 * (the worker folds them), so a consumer can compare them bytewise. */
static int mime_valid(const unsigned char *p, size_t n)
{
    size_t slash = 0, i;

    if (n == 0 || n > CI_MIME_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == '/') {
            if (slash || i == 0 || i == n - 1)
                return 0;
            slash = i;
        } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                     (c && strchr("!#$&^_.+-", c)))) {
            return 0;
        }
    }
    return slash != 0;
}

static unsigned char *bytes_copy(const unsigned char *p, size_t n)
{
    return (unsigned char *)text_copy(p, n);
}

/* The OUTPUTS field (proto.h). */
static int decode_outputs(ci_result *r, const unsigned char *p, size_t len,
                          const struct ci_config *cfg, const char **why)
{
    size_t total = 0, n = 0, off;
    uint32_t last_message = 0;

    /* Count and check first, so the array is allocated once. */
    for (off = 0; off < len; n++) {
        uint32_t h[4];
        if (len - off < sizeof h) {
            *why = "truncated output header";
            return CI_EPROTO;
        }
        memcpy(h, p + off, sizeof h);
        off += sizeof h;
        if (n == CI_MAX_OUTPUTS) {
            *why = "more outputs than CI_MAX_OUTPUTS";
            return CI_EPROTO;
        }
        if (h[0] != CI_OUTPUT_DISPLAY_DATA && h[0] != CI_OUTPUT_EXECUTE_RESULT) {
            *why = "unknown output type";
            return CI_EPROTO;
        }
        if (n == 0 ? h[1] != 0 : (h[1] != last_message && h[1] != last_message + 1)) {
            *why = "output message numbers out of sequence";
            return CI_EPROTO;
        }
        last_message = h[1];
        if (h[2] > len - off || !mime_valid(p + off, h[2])) {
            *why = "malformed output MIME type";
            return CI_EPROTO;
        }
        if (h[3] > len - off - h[2]) {
            *why = "output longer than its field";
            return CI_EPROTO;
        }
        if (h[3] > cfg->display_output_limit || h[3] > cfg->display_run_limit - total) {
            *why = "output over the display limits";
            return CI_EPROTO;
        }
        total += h[3];
        if (ci_mime_is_text((const char *)p + off, h[2]) &&
            !ci_utf8_valid(p + off + h[2], h[3])) {
            *why = "text output is not UTF-8 without NUL";
            return CI_EPROTO;
        }
        off += (size_t)h[2] + h[3];
    }
    if (!(r->outputs = calloc(n ? n : 1, sizeof *r->outputs)))
        return CI_ENOMEM;
    for (off = 0; r->output_count < n; r->output_count++) {
        struct ci_output *o = &r->outputs[r->output_count];
        uint32_t h[4];
        memcpy(h, p + off, sizeof h);
        off += sizeof h;
        o->type = h[0];
        o->message = h[1];
        o->len = h[3];
        o->mime = text_copy(p + off, h[2]);
        o->data = bytes_copy(p + off + h[2], h[3]);
        if (!o->mime || !o->data) {
            r->output_count++; /* so ci_result_free frees this one too */
            return CI_ENOMEM;
        }
        off += (size_t)h[2] + h[3];
    }
    return CI_OK;
}

int ci_result_decode(ci_result *r, const unsigned char *p, size_t len,
                     const struct ci_config *cfg, uint32_t *outcome, uint32_t *count,
                     const char **why)
{
    size_t field_cap = cfg->output_limit;
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
        case CI_FIELD_OMITTED:
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
            } else if (tag == CI_FIELD_OMITTED) {
                r->outputs_omitted = word;
                if (word)
                    r->truncated |= CI_TRUNCATED_OUTPUTS;
            } else {
                if (word & ~CI_FLAG_TRUNCATED) {
                    *why = "unknown flag";
                    return CI_EPROTO;
                }
                if (word & CI_FLAG_TRUNCATED)
                    r->truncated |= CI_TRUNCATED_TEXT;
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
        case CI_FIELD_OUTPUTS: {
            int rc = decode_outputs(r, p, flen, cfg, why);
            if (rc != CI_OK)
                return rc;
            break;
        }
        default:
            *why = "unknown field";
            return CI_EPROTO;
        }
        if (slot) {
            if (flen > field_cap) {
                *why = "text field over the output limit";
                return CI_EPROTO;
            }
            if (!ci_utf8_valid(p, flen)) {
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

void ci_result_drop_outputs(ci_result *r)
{
    for (size_t i = 0; i < r->output_count; i++) {
        free(r->outputs[i].mime);
        free(r->outputs[i].data);
    }
    free(r->outputs);
    r->outputs = NULL;
    r->output_count = 0;
    r->outputs_omitted = 0;
    r->truncated &= ~CI_TRUNCATED_OUTPUTS;
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
    ci_result_drop_outputs(r);
    for (size_t i = 0; i < r->file_count; i++)
        free(r->files[i]);
    free(r->files);
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

CI_API size_t ci_result_output_count(const ci_result *r)
{
    return r ? r->output_count : 0;
}

static const struct ci_output *output_at(const ci_result *r, size_t i)
{
    return r && i < r->output_count ? &r->outputs[i] : NULL;
}

CI_API const char *ci_result_output_mime(const ci_result *r, size_t i)
{
    const struct ci_output *o = output_at(r, i);
    return o ? o->mime : NULL;
}

CI_API const void *ci_result_output_data(const ci_result *r, size_t i, size_t *len)
{
    const struct ci_output *o = output_at(r, i);
    if (len)
        *len = o ? o->len : 0;
    return o ? o->data : NULL;
}

CI_API ci_output_type ci_result_output_type(const ci_result *r, size_t i)
{
    const struct ci_output *o = output_at(r, i);
    return o ? (ci_output_type)o->type : (ci_output_type)0;
}

CI_API size_t ci_result_output_message(const ci_result *r, size_t i)
{
    const struct ci_output *o = output_at(r, i);
    return o ? o->message : 0;
}

CI_API size_t ci_result_outputs_omitted(const ci_result *r)
{
    return r ? r->outputs_omitted : 0;
}

CI_API size_t ci_result_file_count(const ci_result *r)
{
    return r ? r->file_count : 0;
}

CI_API const char *ci_result_file_name(const ci_result *r, size_t i)
{
    return r && i < r->file_count ? r->files[i] : NULL;
}

CI_API unsigned long long ci_result_wall_time_us(const ci_result *r)
{
    return r ? r->wall_us : 0;
}

CI_API unsigned long long ci_result_cpu_time_us(const ci_result *r)
{
    return r ? r->cpu_us : 0;
}

CI_API unsigned long long ci_result_peak_memory(const ci_result *r)
{
    return r ? r->peak_memory : 0;
}

CI_API void ci_free(void *p)
{
    free(p);
}
