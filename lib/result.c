/* The result of one run: decoding the worker's RESULT frame, and getters. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "proto.h"
#include "result.h"

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

size_t ci_result_frame_cap(const struct ci_config *cfg, size_t state_cap)
{
    /* Five text fields, the outputs with their headers, MIME types and
     * display ids, the refusals, and room for the small fields. */
    size_t cap = 5 * cfg->output_limit + (size_t)CI_OUTPUTS_MAX(cfg->display_run_limit) +
                 CI_REFUSALS_FIELD_MAX + 4096;
    return state_cap ? cap + state_cap + CI_PACKAGES_MAX + CI_LEFT_OUT_MAX : cap;
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

/* One output of the OUTPUTS field: its header, as proto.h lays it out,
 * and where its MIME type, data and display id are. */
struct output_view {
    struct {
        uint32_t type, message, flags, id_len, mime_len, len;
    } h;
    const unsigned char *mime, *data, *id;
};
_Static_assert(sizeof(((struct output_view *)0)->h) == CI_OUTPUT_HEADER_SIZE,
               "the output header is six u32");

/* Reads the output at *@off of the @len bytes at @p into @o and moves
 * *@off past it. NULL, or why it runs past the field. */
static const char *output_next(const unsigned char *p, size_t len, size_t *off,
                               struct output_view *o)
{
    size_t rest;

    if (len - *off < sizeof o->h)
        return "truncated output header";
    memcpy(&o->h, p + *off, sizeof o->h);
    *off += sizeof o->h;
    rest = len - *off;
    if (o->h.mime_len > rest || o->h.len > rest - o->h.mime_len ||
        o->h.id_len > rest - o->h.mime_len - o->h.len)
        return "output longer than its field";
    o->mime = p + *off;
    o->data = o->mime + o->h.mime_len;
    o->id = o->data + o->h.len;
    *off += (size_t)o->h.mime_len + o->h.len + o->h.id_len;
    return NULL;
}

/* Why output @o breaks proto.h's rules after @prev (NULL for the first
 * output) and @total bytes of data before it; NULL if it keeps them. */
static const char *output_fault(const struct output_view *o, const struct output_view *prev,
                                size_t total, const struct ci_config *cfg)
{
    uint32_t type = o->h.type;
    int clear = type == CI_OUTPUT_CLEAR_OUTPUT, same = prev && o->h.message == prev->h.message;

    if (type < CI_OUTPUT_DISPLAY_DATA || type > CI_OUTPUT_CLEAR_OUTPUT)
        return "unknown output type";
    if (prev ? !same && o->h.message != prev->h.message + 1 : o->h.message != 0)
        return "output message numbers out of sequence";
    if (same && clear)
        return "a clear_output of more than one output";
    if (same && (type != prev->h.type || o->h.flags != prev->h.flags ||
                 o->h.id_len != prev->h.id_len || memcmp(o->id, prev->id, o->h.id_len) != 0))
        return "outputs of one message differ in type, flags or display id";
    if (o->h.flags & ~(clear ? CI_OUTPUT_FLAG_WAIT : 0u))
        return "output flags other than the wait of a clear_output";
    if (o->h.id_len > CI_DISPLAY_ID_MAX)
        return "display id longer than CI_DISPLAY_ID_MAX";
    if (type == CI_OUTPUT_UPDATE_DISPLAY_DATA && o->h.id_len == 0)
        return "update_display_data without a display id";
    if ((clear || type == CI_OUTPUT_EXECUTE_RESULT) && o->h.id_len != 0)
        return "a display id on an execute_result or clear_output";
    if (!ci_utf8_valid(o->id, o->h.id_len))
        return "display id is not UTF-8 without NUL";
    if (clear ? o->h.mime_len != 0 || o->h.len != 0 : !mime_valid(o->mime, o->h.mime_len))
        return clear ? "clear_output with a MIME type or data" : "malformed output MIME type";
    if (o->h.len > cfg->display_output_limit || o->h.len > cfg->display_run_limit - total)
        return "output over the display limits";
    if (ci_mime_is_text((const char *)o->mime, o->h.mime_len) &&
        !ci_utf8_valid(o->data, o->h.len))
        return "text output is not UTF-8 without NUL";
    return NULL;
}

/* The OUTPUTS field (proto.h). */
static int decode_outputs(ci_result *r, const unsigned char *p, size_t len,
                          const struct ci_config *cfg, const char **why)
{
    struct output_view o, prev;
    size_t total = 0, n = 0, off;

    /* Count and check first, so the array is allocated once. */
    for (off = 0; off < len; n++) {
        const char *bad = n == CI_MAX_OUTPUTS ? "more outputs than CI_MAX_OUTPUTS"
                                              : output_next(p, len, &off, &o);
        if (bad || (bad = output_fault(&o, n ? &prev : NULL, total, cfg))) {
            *why = bad;
            return CI_EPROTO;
        }
        total += o.h.len;
        prev = o;
    }
    if (!(r->outputs = calloc(n ? n : 1, sizeof *r->outputs)))
        return CI_ENOMEM;
    for (off = 0; r->output_count < n; r->output_count++) {
        struct ci_output *out = &r->outputs[r->output_count];
        output_next(p, len, &off, &o);
        out->type = o.h.type;
        out->message = o.h.message;
        out->flags = o.h.flags;
        out->len = o.h.len;
        out->mime = text_copy(o.mime, o.h.mime_len);
        out->data = bytes_copy(o.data, o.h.len);
        out->display_id = o.h.id_len ? text_copy(o.id, o.h.id_len) : NULL;
        if (!out->mime || !out->data || (o.h.id_len && !out->display_id)) {
            r->output_count++; /* so ci_result_free frees this one too */
            return CI_ENOMEM;
        }
    }
    return CI_OK;
}

/* The next field's header off *@p: its tag and length, the tag one not
 * seen before (@seen), the length within the frame. CI_OK or CI_EPROTO. */
static int field_header(const unsigned char **p, size_t *len, unsigned *seen, uint32_t *tag,
                        uint32_t *flen, const char **why)
{
    if (*len < 8) {
        *why = "truncated field header";
        return CI_EPROTO;
    }
    memcpy(tag, *p, 4);
    memcpy(flen, *p + 4, 4);
    *p += 8;
    *len -= 8;
    if (*flen > *len) {
        *why = "field longer than its frame";
        return CI_EPROTO;
    }
    if (*tag == 0 || *tag > 31 || (*seen & (1u << *tag))) {
        *why = *tag == 0 || *tag > 31 ? "unknown field" : "repeated field";
        return CI_EPROTO;
    }
    *seen |= 1u << *tag;
    return CI_OK;
}

static int is_word_field(uint32_t tag)
{
    return tag == CI_FIELD_OUTCOME || tag == CI_FIELD_FLAGS || tag == CI_FIELD_COUNT ||
           tag == CI_FIELD_OMITTED;
}

/* One of the u32 fields (is_word_field), into @r, *@outcome or *@count. */
static int decode_word(ci_result *r, uint32_t tag, const unsigned char *p, uint32_t flen,
                       uint32_t *outcome, uint32_t *count, const char **why)
{
    uint32_t word;

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
    return CI_OK;
}

/* Where @r keeps the text field @tag, or NULL if it is not one. */
static char **text_slot(ci_result *r, uint32_t tag)
{
    switch (tag) {
    case CI_FIELD_VALUE:
        return &r->value;
    case CI_FIELD_ENAME:
        return &r->error_name;
    case CI_FIELD_EVALUE:
        return &r->error_value;
    case CI_FIELD_TRACEBACK:
        return &r->traceback;
    case CI_FIELD_TRACEBACK_FULL:
        return &r->traceback_full;
    }
    return NULL;
}

/* A text field, at most @cap bytes of UTF-8 without NUL, into *@slot. */
static int decode_text(char **slot, const unsigned char *p, uint32_t flen, size_t cap,
                       const char **why)
{
    if (flen > cap) {
        *why = "text field over the output limit";
        return CI_EPROTO;
    }
    if (!ci_utf8_valid(p, flen)) {
        *why = "text field is not UTF-8 without NUL";
        return CI_EPROTO;
    }
    if (!(*slot = text_copy(p, flen)))
        return CI_ENOMEM;
    return CI_OK;
}

/* The REFUSALS field (lib/proto.h) into @r. */
static int decode_refusals(ci_result *r, const unsigned char *p, uint32_t flen, const char **why)
{
    struct ci_refusal *list;
    size_t n = 0;

    *why = "malformed refusals";
    if (flen < 4 || flen > CI_REFUSALS_FIELD_MAX)
        return CI_EPROTO;
    if (!(list = calloc(CI_REFUSALS_MAX, sizeof *list)))
        return CI_ENOMEM;
    r->refusals = list;
    memcpy(&r->refusals_left_out, p, 4);
    p += 4;
    flen -= 4;
    while (flen > 0) {
        uint32_t head[3];

        if (n == CI_REFUSALS_MAX || flen < sizeof head)
            return CI_EPROTO;
        memcpy(head, p, sizeof head);
        p += sizeof head;
        flen -= sizeof head;
        if (head[0] < CI_REFUSAL_NETWORK || head[0] > CI_REFUSAL_MODE || head[1] == 0 ||
            head[2] == 0 || head[2] > CI_REFUSAL_DETAIL_MAX || head[2] > flen ||
            !ci_utf8_valid(p, head[2]))
            return CI_EPROTO;
        list[n] = (struct ci_refusal){head[0], head[1], text_copy(p, head[2])};
        if (!list[n].detail)
            return CI_ENOMEM;
        r->refusal_count = ++n;
        p += head[2];
        flen -= head[2];
    }
    return n ? CI_OK : CI_EPROTO;
}

/* A SNAPSHOT run's field @tag (proto.h) into r->snap. */
static int decode_snapshot(ci_result *r, uint32_t tag, const unsigned char *p, uint32_t flen,
                           const char **why)
{
    if (!r->snap.state_cap) {
        *why = "a snapshot's field in the result of a cell";
        return CI_EPROTO;
    }
    if (tag == CI_FIELD_STATE) {
        if (flen == 0 || flen > r->snap.state_cap) {
            *why = flen ? "a state over the memory limit" : "an empty state";
            return CI_EPROTO;
        }
        r->snap.state = p;
        r->snap.state_len = flen;
        return CI_OK;
    }
    if (flen == 0) {
        *why = tag == CI_FIELD_LEFT_OUT ? "an empty list of what was left out"
                                        : "an empty package set";
        return CI_EPROTO;
    }
    return decode_text(tag == CI_FIELD_PACKAGES ? &r->snap.packages : &r->snap.left_out, p,
                       flen, tag == CI_FIELD_PACKAGES ? CI_PACKAGES_MAX : CI_LEFT_OUT_MAX, why);
}

/* What every RESULT must hold, once all its fields (@seen) are read. */
static int check_complete(const ci_result *r, unsigned seen, uint32_t outcome, const char **why)
{
    if (outcome == CI_OUTCOME_OK && r->snap.state_cap &&
        (!(seen & (1u << CI_FIELD_STATE)) || !(seen & (1u << CI_FIELD_PACKAGES)))) {
        *why = "a snapshot without its state or package set";
        return CI_EPROTO;
    }
    if (outcome != CI_OUTCOME_OK && (seen & (1u << CI_FIELD_STATE))) {
        *why = "a state with an error";
        return CI_EPROTO;
    }
    if (!(seen & (1u << CI_FIELD_OUTCOME))) {
        *why = "no outcome";
        return CI_EPROTO;
    }
    if (!(seen & (1u << CI_FIELD_COUNT))) {
        *why = "no execution count";
        return CI_EPROTO;
    }
    if (outcome != CI_OUTCOME_OK && !r->error_name) {
        *why = "an error without a name";
        return CI_EPROTO;
    }
    if (r->traceback_full && !r->traceback) {
        *why = "a full traceback without the traceback";
        return CI_EPROTO;
    }
    return CI_OK;
}

int ci_result_decode(ci_result *r, const unsigned char *p, size_t len,
                     const struct ci_config *cfg, uint32_t *outcome, uint32_t *count,
                     const char **why)
{
    unsigned seen = 0;

    while (len > 0) {
        uint32_t tag, flen;
        char **slot;
        int rc = field_header(&p, &len, &seen, &tag, &flen, why);

        if (rc != CI_OK)
            return rc;
        if (is_word_field(tag)) {
            rc = decode_word(r, tag, p, flen, outcome, count, why);
        } else if (tag == CI_FIELD_OUTPUTS) {
            rc = decode_outputs(r, p, flen, cfg, why);
        } else if (tag == CI_FIELD_REFUSALS) {
            rc = decode_refusals(r, p, flen, why);
        } else if (tag == CI_FIELD_STATE || tag == CI_FIELD_PACKAGES ||
                   tag == CI_FIELD_LEFT_OUT) {
            rc = decode_snapshot(r, tag, p, flen, why);
        } else if ((slot = text_slot(r, tag))) {
            rc = decode_text(slot, p, flen, cfg->output_limit, why);
        } else {
            *why = "unknown field";
            rc = CI_EPROTO;
        }
        if (rc != CI_OK)
            return rc;
        p += flen;
        len -= flen;
    }
    return check_complete(r, seen, *outcome, why);
}

void ci_result_drop_outputs(ci_result *r)
{
    for (size_t i = 0; i < r->output_count; i++) {
        free(r->outputs[i].mime);
        free(r->outputs[i].data);
        free(r->outputs[i].display_id);
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
    free(r->spill_files[0]);
    free(r->spill_files[1]);
    free(r->value);
    free(r->error_name);
    free(r->error_value);
    free(r->traceback);
    free(r->traceback_full);
    free(r->snap.packages);
    free(r->snap.left_out);
    ci_result_drop_outputs(r);
    for (size_t i = 0; i < r->refusal_count; i++)
        free(r->refusals[i].detail);
    free(r->refusals);
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

CI_API int ci_result_rolled_back(const ci_result *r)
{
    return r ? r->rolled_back : 0;
}

CI_API int ci_result_cut(const ci_result *r, int stream, size_t *at, size_t *len,
                         ci_uint64 *bytes, ci_uint64 *lines)
{
    const struct ci_cut none = {0}, *c = &none;
    if (r && (stream == CI_STREAM_STDOUT || stream == CI_STREAM_STDERR) &&
        r->cuts[stream - 1].len)
        c = &r->cuts[stream - 1];
    if (at)
        *at = c->at;
    if (len)
        *len = c->len;
    if (bytes)
        *bytes = c->bytes;
    if (lines)
        *lines = c->lines;
    return c->len != 0;
}

CI_API const char *ci_result_spill_file(const ci_result *r, int stream, int *whole)
{
    const char *name = NULL;
    if (r && (stream == CI_STREAM_STDOUT || stream == CI_STREAM_STDERR))
        name = r->spill_files[stream - 1];
    if (whole)
        *whole = name && !r->spill_partial[stream - 1];
    return name;
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

CI_API const char *ci_result_traceback_full(const ci_result *r)
{
    if (!r || !r->traceback)
        return NULL;
    return r->traceback_full ? r->traceback_full : r->traceback;
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

CI_API const char *ci_result_output_display_id(const ci_result *r, size_t i)
{
    const struct ci_output *o = output_at(r, i);
    return o ? o->display_id : NULL;
}

CI_API int ci_result_output_wait(const ci_result *r, size_t i)
{
    const struct ci_output *o = output_at(r, i);
    return o && (o->flags & CI_OUTPUT_FLAG_WAIT) ? 1 : 0;
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
