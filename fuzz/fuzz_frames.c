/*
 * A libFuzzer target for the host side of the worker protocol (proto.h):
 * the input is what a hostile worker writes on the channel, read by
 * ci_reader_pump in pieces of fuzzer-chosen sizes, then handled frame by
 * frame as await_ready (session.c) and on_frame (run.c) do; or, in one
 * mode, a snapshot's bytes as ci_session_restore takes them from anyone
 * (snapshot_format.c). Besides the sanitizers' memory and UB checks,
 * every answer is checked against a reference written from proto.h's
 * text alone (for a snapshot, docs/snapshot-format.md's); a mismatch or a
 * broken invariant aborts, so the fuzzer reports logic bugs too.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined by `make fuzz`, and
 * with gcc and fuzz/standalone.c by `make check`, which runs every file
 * of fuzz/corpus/frames and fuzz/regressions through it.
 *
 * The input:
 *   byte 0   mode: bit 0 the stream starts with the start-up phase (READY
 *            first), bit 1 the per-run display limit equals the per-output
 *            one (1024) instead of 4096, bit 2 the runs' RUN frames have
 *            CI_RUN_FLAG_INPUT (the host answers INPUT_REQUEST, and waits
 *            on), bit 3 the session has the host functions "echo" and "f"
 *            (the host answers a CALL of them, and waits on), bit 4 the
 *            session allows the URLs under http://127.0.0.1:9/v1/ with a
 *            request limit of 1024 bytes (the host checks a FETCH and its
 *            URL, and waits on; no request is made), bit 5 the runs are
 *            SNAPSHOT runs (RUN flag CI_RUN_FLAG_SNAPSHOT, numbered
 *            CI_RUN_COUNT_INTERNAL | 1, | 2, ...; the result may, and with
 *            OUTCOME_OK must, carry the snapshot's fields, the state at
 *            most SNAP_STATE_CAP bytes), bit 6 the rest is no channel but
 *            a snapshot's bytes (docs/snapshot-format.md) for
 *            ci_snapshot_parse, ci_snapshot_next and ci_snapshot_left_out,
 *            taken as given and again with its last 32 bytes replaced by
 *            the SHA-256 of those before them (32 bytes appended if there
 *            are fewer), so that more than the hash check is reached; the
 *            other bits are ignored
 *   byte 1   n, the length of the read schedule
 *   n bytes  the read schedule: read call k takes entry k mod n. On the
 *            first pass through it, an entry with bit 7 set fails the read
 *            without data (EINTR if bit 6 is set too, else EAGAIN); the low
 *            6 bits cap the bytes the read returns (0: no cap). With n == 0
 *            every read returns all it asked for.
 *   the rest the bytes of the channel, then end of file (with bit 6,
 *            the snapshot; the read schedule is then unused).
 * fuzz/make_seeds.py writes the seed inputs in this format.
 */
#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "config.h"
#include "fetch.h"
#include "functions.h"
#include "urls.h"
#include "wheel.h"
#include "proto.h"
#include "result.h"
#include "rollback.h"
#include "snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* -DFUZZ_FRAMES_TRACE: say what the host made of each frame (triage). */
#ifdef FUZZ_FRAMES_TRACE
#define TRACE(...) fprintf(stderr, "  " __VA_ARGS__)
#else
#define TRACE(...) ((void)0)
#endif

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_frames: invariant failed at %s:%d: %s\n", __FILE__,   \
                    __LINE__, #cond);                                                   \
            abort();                                                                    \
        }                                                                               \
    } while (0)

/* The host's limits: the smallest the public setters accept, so the
 * fuzzer reaches them with small inputs. */
#define OUTPUT_LIMIT 1024u
#define DISPLAY_OUTPUT_LIMIT 1024u
#define DISPLAY_RUN_LIMIT 4096u
#define CALL_LIMIT 1024u
#define URL_PREFIX "http://127.0.0.1:9/v1/"
#define URL_REQUEST_LIMIT 1024u
/* A SNAPSHOT run's largest state (run.c takes the memory limit). */
#define SNAP_STATE_CAP 4096u

/* ------------------------------------------------------------ reference */

/* UTF-8 without NUL, straight from the table of well-formed byte
 * sequences (Unicode 15, table 3-7), written apart from ci_utf8_valid. */
static int ref_utf8(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        unsigned char lo = 0x80, hi = 0xBF;
        size_t k;
        if (c == 0x00)
            return 0;
        if (c <= 0x7F) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF)
            k = 1;
        else if (c == 0xE0)
            k = 2, lo = 0xA0;
        else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
            k = 2;
        else if (c == 0xED)
            k = 2, hi = 0x9F;
        else if (c == 0xF0)
            k = 3, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3)
            k = 3;
        else if (c == 0xF4)
            k = 3, hi = 0x8F;
        else
            return 0;
        if (n - i - 1 < k)
            return 0;
        if (p[i + 1] < lo || p[i + 1] > hi)
            return 0;
        for (size_t j = 2; j <= k; j++)
            if (p[i + j] < 0x80 || p[i + j] > 0xBF)
                return 0;
        i += k + 1;
    }
    return 1;
}

static int ref_mime_char(unsigned char c)
{
    static const char extra[] = "!#$&^_.+-";
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
        return 1;
    for (const char *e = extra; *e; e++)
        if (c == (unsigned char)*e)
            return 1;
    return 0;
}

/* type "/" subtype, each 1 or more restricted-name characters. */
static int ref_mime(const unsigned char *p, size_t n)
{
    size_t slashes = 0, at = 0;
    if (n < 1 || n > CI_MIME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '/') {
            slashes++;
            at = i;
        } else if (!ref_mime_char(p[i])) {
            return 0;
        }
    }
    return slashes == 1 && at > 0 && at < n - 1;
}

static int ends_with(const unsigned char *p, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(p + n - k, suffix, k) == 0;
}

/* text/..., application/json, or a subtype ending in +json or +xml. */
static int ref_mime_text(const unsigned char *p, size_t n)
{
    const unsigned char *slash = memchr(p, '/', n);
    const unsigned char *sub = slash ? slash + 1 : p;
    size_t sublen = n - (size_t)(sub - p);
    if (n >= 5 && memcmp(p, "text/", 5) == 0)
        return 1;
    if (n == 16 && memcmp(p, "application/json", 16) == 0)
        return 1;
    return ends_with(sub, sublen, "+json") || ends_with(sub, sublen, "+xml");
}

static uint32_t word(const unsigned char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

struct ref_output {
    uint32_t type, message, flags;
    const unsigned char *mime, *data, *id;
    size_t mime_len, len, id_len;
};

struct ref_result {
    uint32_t outcome, count, flags, omitted;
    unsigned seen; /* 1 << tag */
    /* VALUE..TRACEBACK and TRACEBACK_FULL by tag; NULL if absent */
    const unsigned char *text[CI_FIELD_TRACEBACK_FULL + 1];
    size_t text_len[CI_FIELD_TRACEBACK_FULL + 1];
    struct ref_output *outputs;
    size_t output_count;
    /* The REFUSALS field: its entries' kind, times and detail. */
    uint32_t refusals_left_out;
    size_t refusal_count;
    struct {
        uint32_t kind, times, len;
        const unsigned char *detail;
    } refusals[CI_REFUSALS_MAX];
    /* A SNAPSHOT run's STATE, PACKAGES and LEFT_OUT, present if seen. */
    const unsigned char *state, *packages, *left_out;
    size_t state_len, packages_len, left_out_len;
};

/* The REFUSALS field; 1 if well formed, its entries in @ref. */
static int ref_refusals(const unsigned char *p, size_t len, struct ref_result *ref)
{
    size_t off = 4;

    if (len < 4)
        return 0;
    ref->refusals_left_out = word(p);
    while (off < len) {
        uint32_t kind, times, dlen;
        if (ref->refusal_count == CI_REFUSALS_MAX || len - off < 12)
            return 0;
        kind = word(p + off);
        times = word(p + off + 4);
        dlen = word(p + off + 8);
        off += 12;
        if (kind < CI_REFUSAL_NETWORK || kind > CI_REFUSAL_MODE || times == 0 || dlen == 0 ||
            dlen > CI_REFUSAL_DETAIL_MAX || dlen > len - off || !ref_utf8(p + off, dlen))
            return 0;
        ref->refusals[ref->refusal_count].kind = kind;
        ref->refusals[ref->refusal_count].times = times;
        ref->refusals[ref->refusal_count].len = dlen;
        ref->refusals[ref->refusal_count++].detail = p + off;
        off += dlen;
    }
    return ref->refusal_count > 0;
}

/* The OUTPUTS field; 1 if well formed. Counts them in ref->output_count,
 * and fills ref->outputs unless it is NULL. */
static int ref_outputs(const unsigned char *p, size_t len, size_t per_output, size_t per_run,
                       struct ref_result *ref)
{
    size_t off = 0, n = 0, total = 0;
    struct ref_output prev = {0}, o;
    while (off < len) {
        uint32_t mlen, dlen, idlen;
        int clear;
        if (len - off < 24)
            return 0;
        o.type = word(p + off);
        o.message = word(p + off + 4);
        o.flags = word(p + off + 8);
        idlen = word(p + off + 12);
        mlen = word(p + off + 16);
        dlen = word(p + off + 20);
        off += 24;
        if (++n > CI_MAX_OUTPUTS)
            return 0;
        if ((uint64_t)mlen + dlen + idlen > len - off)
            return 0;
        o.mime = p + off;
        o.data = p + off + mlen;
        o.id = p + off + mlen + dlen;
        o.mime_len = mlen;
        o.len = dlen;
        o.id_len = idlen;
        clear = o.type == 4;
        if (o.type < 1 || o.type > 4)
            return 0;
        if (n == 1 ? o.message != 0 : (o.message != prev.message && o.message != prev.message + 1))
            return 0;
        /* One message: the same type, flags and id; a clear_output alone. */
        if (n > 1 && o.message == prev.message &&
            (clear || o.type != prev.type || o.flags != prev.flags || idlen != prev.id_len ||
             memcmp(o.id, prev.id, idlen) != 0))
            return 0;
        if (o.flags != 0 && !(clear && o.flags == 1))
            return 0;
        if (idlen > 255 || (o.type == 3 && idlen == 0) || ((o.type == 2 || clear) && idlen != 0))
            return 0;
        if (!ref_utf8(o.id, idlen))
            return 0;
        if (clear ? mlen != 0 || dlen != 0 : !ref_mime(o.mime, mlen))
            return 0;
        if (dlen > per_output || total + dlen > per_run)
            return 0;
        total += dlen;
        if (ref_mime_text(o.mime, mlen) && !ref_utf8(o.data, dlen))
            return 0;
        if (ref->outputs)
            ref->outputs[n - 1] = o;
        prev = o;
        off += (size_t)mlen + dlen + idlen;
    }
    ref->output_count = n;
    return 1;
}

/* A RESULT payload as proto.h describes it, of a SNAPSHOT run whose
 * state may take @state_cap bytes if that is not 0, else of a cell; 1 if
 * well formed. */
static int ref_result(const unsigned char *p, size_t len, const struct ci_config *cfg,
                      size_t state_cap, struct ref_result *ref)
{
    memset(ref, 0, sizeof *ref);
    while (len > 0) {
        uint32_t tag, flen;
        if (len < 8)
            return 0;
        tag = word(p);
        flen = word(p + 4);
        p += 8;
        len -= 8;
        if (flen > len || tag < CI_FIELD_OUTCOME || tag > CI_FIELD_LEFT_OUT ||
            (ref->seen & (1u << tag)))
            return 0;
        ref->seen |= 1u << tag;
        switch (tag) {
        case CI_FIELD_OUTCOME:
        case CI_FIELD_FLAGS:
        case CI_FIELD_COUNT:
        case CI_FIELD_OMITTED:
            if (flen != 4)
                return 0;
            if (tag == CI_FIELD_OUTCOME && (ref->outcome = word(p)) > CI_OUTCOME_INTERRUPT)
                return 0;
            if (tag == CI_FIELD_FLAGS && ((ref->flags = word(p)) & ~CI_FLAG_TRUNCATED))
                return 0;
            if (tag == CI_FIELD_COUNT)
                ref->count = word(p);
            if (tag == CI_FIELD_OMITTED)
                ref->omitted = word(p);
            break;
        case CI_FIELD_OUTPUTS:
            if (!ref_outputs(p, flen, cfg->display_output_limit, cfg->display_run_limit, ref))
                return 0;
            /* Valid: counted; now kept. */
            if (!(ref->outputs = calloc(ref->output_count + 1, sizeof *ref->outputs)))
                abort();
            ref_outputs(p, flen, cfg->display_output_limit, cfg->display_run_limit, ref);
            break;
        case CI_FIELD_REFUSALS:
            if (!ref_refusals(p, flen, ref))
                return 0;
            break;
        /* A snapshot's fields come only from a SNAPSHOT run. */
        case CI_FIELD_STATE: /* 1 byte or more, within the state's cap */
            if (!state_cap || flen == 0 || flen > state_cap)
                return 0;
            ref->state = p;
            ref->state_len = flen;
            break;
        case CI_FIELD_PACKAGES: /* text, not empty, not bound by the output limit */
            if (!state_cap || flen == 0 || flen > CI_PACKAGES_MAX || !ref_utf8(p, flen))
                return 0;
            ref->packages = p;
            ref->packages_len = flen;
            break;
        case CI_FIELD_LEFT_OUT: /* sent only if something was left out */
            if (!state_cap || flen == 0 || flen > CI_LEFT_OUT_MAX || !ref_utf8(p, flen))
                return 0;
            ref->left_out = p;
            ref->left_out_len = flen;
            break;
        default: /* the text fields */
            if (flen > cfg->output_limit || !ref_utf8(p, flen))
                return 0;
            ref->text[tag] = p;
            ref->text_len[tag] = flen;
            break;
        }
        p += flen;
        len -= flen;
    }
    if (!(ref->seen & (1u << CI_FIELD_OUTCOME)) || !(ref->seen & (1u << CI_FIELD_COUNT)))
        return 0;
    /* An error always has its class's name. */
    if (ref->outcome != CI_OUTCOME_OK && !ref->text[CI_FIELD_ENAME])
        return 0;
    /* The whole traceback only ever comes with the folded one. */
    if (ref->text[CI_FIELD_TRACEBACK_FULL] && !ref->text[CI_FIELD_TRACEBACK])
        return 0;
    /* A snapshot taken has its state and package set; a failed one no state. */
    if (state_cap && ref->outcome == CI_OUTCOME_OK && (!ref->state || !ref->packages))
        return 0;
    if (ref->outcome != CI_OUTCOME_OK && ref->state)
        return 0;
    return 1;
}

/* ----------------------------------------------------- the result checks */

static void check_text(const char *s, const unsigned char *want, size_t want_len)
{
    if (!want) {
        CHECK(s == NULL);
        return;
    }
    CHECK(s != NULL);
    CHECK(strlen(s) == want_len);
    CHECK(memcmp(s, want, want_len) == 0);
}

/* What any result the decoder left, whole or partial, must satisfy
 * through the public getters. */
static void check_getters(const ci_result *r, const struct ci_config *cfg)
{
    const char *texts[5] = {ci_result_value(r), ci_result_error_name(r),
                            ci_result_error_value(r), ci_result_traceback(r),
                            ci_result_traceback_full(r)};
    size_t n = ci_result_output_count(r), total = 0, len = 1;
    size_t last_message = 0;

    CHECK((texts[3] == NULL) == (texts[4] == NULL));
    for (int i = 0; i < 5; i++)
        if (texts[i]) {
            size_t k = strlen(texts[i]);
            CHECK(k <= cfg->output_limit);
            CHECK(ref_utf8((const unsigned char *)texts[i], k));
        }
    CHECK(n <= CI_MAX_OUTPUTS);
    CHECK((ci_result_truncated(r) & ~(CI_TRUNCATED_TEXT | CI_TRUNCATED_OUTPUTS)) == 0);
    if (ci_result_outputs_omitted(r))
        CHECK(ci_result_truncated(r) & CI_TRUNCATED_OUTPUTS);
    CHECK(ci_result_stdout(r, &len) != NULL && len == 0);
    CHECK(ci_result_stderr(r, &len) != NULL && len == 0);
    CHECK(ci_result_file_count(r) == 0 && ci_result_file_name(r, 0) == NULL);
    CHECK(ci_result_status(r) == CI_STATUS_OK); /* run.c's classify() sets it */
    CHECK(ci_result_wall_time_us(r) == 0 && ci_result_cpu_time_us(r) == 0 &&
          ci_result_peak_memory(r) == 0);
    for (size_t i = 0; i < n; i++) {
        const char *mime = ci_result_output_mime(r, i);
        const unsigned char *d = ci_result_output_data(r, i, &len);
        ci_output_type type = ci_result_output_type(r, i);
        size_t message = ci_result_output_message(r, i);
        const char *id = ci_result_output_display_id(r, i);
        int clear = type == CI_OUTPUT_CLEAR_OUTPUT;
        size_t mlen;

        CHECK(type >= CI_OUTPUT_DISPLAY_DATA && type <= CI_OUTPUT_CLEAR_OUTPUT);
        CHECK(i == 0 ? message == 0 : (message == last_message || message == last_message + 1));
        last_message = message;
        CHECK(ci_result_output_wait(r, i) == 0 || (clear && ci_result_output_wait(r, i) == 1));
        if (id) {
            size_t idlen = strnlen(id, CI_DISPLAY_ID_MAX + 1);
            CHECK(idlen >= 1 && idlen <= CI_DISPLAY_ID_MAX);
            CHECK(ref_utf8((const unsigned char *)id, idlen));
            CHECK(type == CI_OUTPUT_DISPLAY_DATA || type == CI_OUTPUT_UPDATE_DISPLAY_DATA);
        } else {
            CHECK(type != CI_OUTPUT_UPDATE_DISPLAY_DATA);
        }
        CHECK(mime != NULL);
        mlen = strnlen(mime, CI_MIME_MAX + 1);
        CHECK(mlen <= CI_MIME_MAX);
        CHECK(clear ? mlen == 0 && len == 0 : ref_mime((const unsigned char *)mime, mlen));
        CHECK(d != NULL);
        CHECK(d[len] == '\0'); /* result.h: data is NUL-terminated too */
        CHECK(len <= cfg->display_output_limit);
        total += len;
        CHECK(total <= cfg->display_run_limit);
        if (ref_mime_text((const unsigned char *)mime, mlen))
            CHECK(ref_utf8(d, len));
    }
    /* Past the end: nothing. */
    CHECK(ci_result_output_mime(r, n) == NULL);
    CHECK(ci_result_output_data(r, n, &len) == NULL && len == 0);
    CHECK(ci_result_output_type(r, n) == 0);
    CHECK(ci_result_output_message(r, n) == 0);
    CHECK(ci_result_output_display_id(r, n) == NULL);
    CHECK(ci_result_output_wait(r, n) == 0);
}

/* What r->snap holds after decoding the @len bytes at @p with a state
 * cap of @state_cap, whole or partial: nothing unless the cap was set,
 * the state within the payload, the texts as a SNAPSHOT run's are. */
static void check_snap(const ci_result *r, const unsigned char *p, size_t len,
                       size_t state_cap)
{
    CHECK(r->snap.state_cap == state_cap);
    if (!state_cap)
        CHECK(!r->snap.state && !r->snap.state_len && !r->snap.packages && !r->snap.left_out);
    if (r->snap.state)
        CHECK(r->snap.state >= p && r->snap.state_len <= state_cap &&
              r->snap.state_len <= len - (size_t)(r->snap.state - p));
    else
        CHECK(r->snap.state_len == 0);
    if (r->snap.packages) {
        size_t k = strnlen(r->snap.packages, CI_PACKAGES_MAX + 1);
        CHECK(k <= CI_PACKAGES_MAX && ref_utf8((const unsigned char *)r->snap.packages, k));
    }
    if (r->snap.left_out) {
        size_t k = strnlen(r->snap.left_out, CI_LEFT_OUT_MAX + 1);
        CHECK(k >= 1 && k <= CI_LEFT_OUT_MAX &&
              ref_utf8((const unsigned char *)r->snap.left_out, k));
    }
}

/* Decodes a RESULT payload as on_frame does, for a SNAPSHOT run whose
 * state may take @state_cap bytes if that is not 0 (as ci_run_internal
 * sets it), else for a cell; 1 if the run ended well. */
static int on_result(const unsigned char *p, size_t len, const struct ci_config *cfg,
                     int execution_count, size_t state_cap)
{
    struct ref_result ref;
    uint32_t outcome = CI_OUTCOME_ERROR, count = 0;
    const char *why = NULL;
    ci_result *r = ci_result_new();
    int rc, want;

    CHECK(r != NULL);
    r->execution_count = execution_count;
    r->snap.state_cap = state_cap;
    rc = ci_result_decode(r, p, len, cfg, &outcome, &count, &why);
    want = ref_result(p, len, cfg, state_cap, &ref);
    CHECK(rc == CI_OK || rc == CI_EPROTO || rc == CI_ENOMEM);
    if (rc == CI_EPROTO)
        CHECK(why != NULL && why[0] != '\0');
    if (rc != CI_ENOMEM)
        CHECK((rc == CI_OK) == want);
    if (rc == CI_OK) {
        CHECK(outcome == ref.outcome && count == ref.count);
        check_text(ci_result_value(r), ref.text[CI_FIELD_VALUE], ref.text_len[CI_FIELD_VALUE]);
        check_text(ci_result_error_name(r), ref.text[CI_FIELD_ENAME],
                   ref.text_len[CI_FIELD_ENAME]);
        check_text(ci_result_error_value(r), ref.text[CI_FIELD_EVALUE],
                   ref.text_len[CI_FIELD_EVALUE]);
        check_text(ci_result_traceback(r), ref.text[CI_FIELD_TRACEBACK],
                   ref.text_len[CI_FIELD_TRACEBACK]);
        if (ref.text[CI_FIELD_TRACEBACK_FULL])
            check_text(ci_result_traceback_full(r), ref.text[CI_FIELD_TRACEBACK_FULL],
                       ref.text_len[CI_FIELD_TRACEBACK_FULL]);
        else
            check_text(ci_result_traceback_full(r), ref.text[CI_FIELD_TRACEBACK],
                       ref.text_len[CI_FIELD_TRACEBACK]);
        CHECK(ci_result_outputs_omitted(r) == ref.omitted);
        CHECK(ci_result_truncated(r) ==
              ((ref.flags & CI_FLAG_TRUNCATED ? CI_TRUNCATED_TEXT : 0) |
               (ref.omitted ? CI_TRUNCATED_OUTPUTS : 0)));
        CHECK(ci_result_output_count(r) == ref.output_count);
        for (size_t i = 0; i < ref.output_count; i++) {
            const struct ref_output *o = &ref.outputs[i];
            size_t dlen;
            const unsigned char *d = ci_result_output_data(r, i, &dlen);
            CHECK((uint32_t)ci_result_output_type(r, i) == o->type);
            CHECK(ci_result_output_message(r, i) == o->message);
            CHECK(ci_result_output_wait(r, i) == (o->flags == 1));
            check_text(ci_result_output_display_id(r, i), o->id_len ? o->id : NULL, o->id_len);
            check_text(ci_result_output_mime(r, i), o->mime, o->mime_len);
            CHECK(dlen == o->len && memcmp(d, o->data, dlen) == 0);
        }
        CHECK(r->refusal_count == ref.refusal_count);
        CHECK(r->refusals_left_out == ref.refusals_left_out);
        for (size_t i = 0; i < ref.refusal_count; i++) {
            CHECK(r->refusals[i].kind == ref.refusals[i].kind);
            CHECK(r->refusals[i].times == ref.refusals[i].times);
            check_text(r->refusals[i].detail, ref.refusals[i].detail, ref.refusals[i].len);
        }
        CHECK(ci_result_execution_count(r) == execution_count);
        CHECK(r->snap.state == ref.state && r->snap.state_len == ref.state_len);
        check_text(r->snap.packages, ref.packages, ref.packages_len);
        check_text(r->snap.left_out, ref.left_out, ref.left_out_len);
    }
    TRACE("RESULT of %zu bytes: %s, count %u, %zu outputs\n", len,
          rc == CI_OK ? "decoded" : why ? why : "out of memory", count,
          ci_result_output_count(r));
    check_getters(r, cfg);
    check_snap(r, p, len, state_cap);
    free(ref.outputs);
    ci_result_free(r);
    /* on_frame: a result for another cell is a protocol error too. */
    return rc == CI_OK && count == (uint32_t)execution_count;
}

/* A SIGNALED payload as on_frame does; 1 if the run waits on for the
 * worker's death. */
static int on_signaled(const unsigned char *p, size_t len)
{
    const char *why = NULL;
    int sig = 0;
    int rc = ci_signaled_parse(p, len, &sig, &why);
    int want = len == 4 && word(p) >= 1 && word(p) <= CI_SIGNAL_MAX;

    TRACE("SIGNALED: %d %s\n", sig, rc == 0 ? "" : why);
    CHECK(rc == 0 || rc == -1);
    CHECK((rc == 0) == want);
    if (rc == 0)
        CHECK(sig == (int)word(p));
    else
        CHECK(why != NULL && why[0] != '\0' && sig == 0);
    return rc == 0;
}

/* An ENDED payload (a reaper's, rollback.c) as on_frame does; the run
 * ends at it either way. */
static void on_ended(const unsigned char *p, size_t len)
{
    const char *why = NULL;
    int st = -1;
    unsigned long long cpu_us = 7;
    int rc = ci_ended_parse(p, len, &st, &cpu_us, &why);
    int want = len == 16 && word(p) <= 0xffff && word(p + 4) == 0;

    TRACE("ENDED: %d %s\n", st, rc == 0 ? "" : why);
    CHECK(rc == 0 || rc == -1);
    CHECK((rc == 0) == want);
    if (rc == 0) {
        uint64_t us;
        memcpy(&us, p + 8, sizeof us);
        CHECK(st == (int)word(p) && cpu_us == us);
    } else {
        CHECK(why != NULL && why[0] != '\0' && st == -1 && cpu_us == 7);
    }
}

/* A VIOLATION payload as on_violation does (the name not yet known);
 * 1 if the run waits on for the worker's death. */
static int on_violation(const unsigned char *p, size_t len, char name[CI_VIOLATION_NAME_MAX + 1])
{
    const char *why = NULL;
    int rc = ci_violation_parse(p, len, name, &why);
    int want = len >= 5 && len <= 4 + CI_VIOLATION_NAME_MAX && word(p) < CI_VIOLATION_NR_MAX;

    for (size_t i = 4; want && i < len; i++)
        want = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_';
    TRACE("VIOLATION: %s\n", rc == 0 ? name : why);
    CHECK(rc == 0 || rc == -1);
    CHECK((rc == 0) == want);
    if (rc == 0) {
        CHECK(strlen(name) == len - 4 && memcmp(name, p + 4, len - 4) == 0);
    } else {
        CHECK(why != NULL && why[0] != '\0');
        CHECK(name[0] == '\0'); /* untouched */
    }
    return rc == 0;
}

/* An INPUT_REQUEST payload as on_input_request does, in a run whose RUN
 * had CI_RUN_FLAG_INPUT if @answers; 1 if the host answers it and waits
 * on for the result. */
static int on_input_request(int answers, const unsigned char *p, size_t len)
{
    const char *why = NULL;
    uint32_t flags = 0xDEADu;
    int rc = ci_input_request_parse(p, len, &flags, &why);
    int want = len >= 4 && len - 4 <= CI_INPUT_PROMPT_MAX &&
               (word(p) & ~CI_INPUT_FLAG_PASSWORD) == 0 && ref_utf8(p + 4, len - 4);

    TRACE("INPUT_REQUEST: %s\n", rc == 0 ? (answers ? "answered" : "refused: no input") : why);
    CHECK(rc == 0 || rc == -1);
    CHECK((rc == 0) == want);
    if (rc == 0)
        CHECK(flags == word(p));
    else
        CHECK(why != NULL && why[0] != '\0' && flags == 0xDEADu);
    return answers && rc == 0;
}

/* ------------------------------------------------- a CALL's arguments */

/* JSON as RFC 8259 writes its grammar, written apart from jansson: 1 if
 * the @n bytes at @p are one value with white space around it. Nesting
 * past @depth, and numbers jansson cannot hold (an integer beyond 64 bits,
 * a real beyond a double), count as invalid too, as for jansson. */
struct ref_json {
    const unsigned char *p;
    size_t n, at;
};

static void ref_ws(struct ref_json *j)
{
    while (j->at < j->n && (j->p[j->at] == ' ' || j->p[j->at] == '\t' ||
                            j->p[j->at] == '\n' || j->p[j->at] == '\r'))
        j->at++;
}

static int ref_lit(struct ref_json *j, const char *word)
{
    size_t len = strlen(word);
    if (j->n - j->at < len || memcmp(j->p + j->at, word, len) != 0)
        return 0;
    j->at += len;
    return 1;
}

static int ref_hex4(struct ref_json *j, unsigned *v)
{
    *v = 0;
    if (j->n - j->at < 4)
        return 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = j->p[j->at++];
        unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                     : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d > 15)
            return 0;
        *v = *v * 16 + d;
    }
    return 1;
}

/* A string; its raw bytes are UTF-8 (NUL excluded, as a control), its
 * escapes those of RFC 8259 section 7, a surrogate escape only in a pair. */
static int ref_string(struct ref_json *j)
{
    size_t start;
    if (!ref_lit(j, "\""))
        return 0;
    for (;;) {
        start = j->at;
        while (j->at < j->n && j->p[j->at] != '"' && j->p[j->at] != '\\' && j->p[j->at] >= 0x20)
            j->at++;
        if (!ref_utf8(j->p + start, j->at - start) || j->at >= j->n || j->p[j->at] < 0x20)
            return 0;
        if (j->p[j->at++] == '"')
            return 1;
        if (j->at >= j->n)
            return 0;
        unsigned char e = j->p[j->at++];
        unsigned v, w;
        if (strchr("\"\\/bfnrt", e) && e)
            continue;
        if (e != 'u' || !ref_hex4(j, &v))
            return 0;
        if (v >= 0xDC00 && v <= 0xDFFF)
            return 0;
        if (v >= 0xD800 && v <= 0xDBFF &&
            (!ref_lit(j, "\\u") || !ref_hex4(j, &w) || w < 0xDC00 || w > 0xDFFF))
            return 0;
    }
}

static int ref_number(struct ref_json *j)
{
    size_t start = j->at, digits;
    int real = 0;
    char buf[64];

    ref_lit(j, "-");
    digits = j->at;
    while (j->at < j->n && j->p[j->at] >= '0' && j->p[j->at] <= '9')
        j->at++;
    if (j->at == digits || (j->p[digits] == '0' && j->at - digits > 1))
        return 0;
    if (ref_lit(j, ".")) {
        real = 1;
        digits = j->at;
        while (j->at < j->n && j->p[j->at] >= '0' && j->p[j->at] <= '9')
            j->at++;
        if (j->at == digits)
            return 0;
    }
    if (j->at < j->n && (j->p[j->at] == 'e' || j->p[j->at] == 'E')) {
        real = 1;
        j->at++;
        if (!ref_lit(j, "+"))
            ref_lit(j, "-");
        digits = j->at;
        while (j->at < j->n && j->p[j->at] >= '0' && j->p[j->at] <= '9')
            j->at++;
        if (j->at == digits)
            return 0;
    }
    /* What a json_int_t (long long) or a double holds. */
    if (j->at - start >= sizeof buf)
        return real; /* a long real may still be finite; a long integer never fits */
    memcpy(buf, j->p + start, j->at - start);
    buf[j->at - start] = '\0';
    errno = 0;
    if (real) {
        double d = strtod(buf, NULL);
        return !(errno == ERANGE && (d > 1 || d < -1));
    }
    strtoll(buf, NULL, 10);
    return errno != ERANGE;
}

static int ref_value(struct ref_json *j, int depth);

/* An array or object, after its opening bracket; @object for '{'. */
static int ref_members(struct ref_json *j, int object, int depth)
{
    ref_ws(j);
    if (ref_lit(j, object ? "}" : "]"))
        return 1;
    for (;;) {
        if (object) {
            ref_ws(j);
            if (!ref_string(j))
                return 0;
            ref_ws(j);
            if (!ref_lit(j, ":"))
                return 0;
        }
        if (!ref_value(j, depth))
            return 0;
        if (ref_lit(j, object ? "}" : "]"))
            return 1;
        if (!ref_lit(j, ","))
            return 0;
    }
}

/* A value with white space around it. */
static int ref_value(struct ref_json *j, int depth)
{
    int ok;
    ref_ws(j);
    if (j->at >= j->n)
        return 0;
    switch (j->p[j->at]) {
    case '{':
    case '[':
        if (depth >= 2048) /* jansson's JSON_PARSER_MAX_DEPTH */
            return 0;
        ok = ref_members(j, j->p[j->at++] == '{', depth + 1);
        break;
    case '"':
        ok = ref_string(j);
        break;
    default:
        ok = ref_lit(j, "true") || ref_lit(j, "false") || ref_lit(j, "null") || ref_number(j);
    }
    ref_ws(j);
    return ok;
}

/* A CALL payload as on_call does, in a session with the host functions
 * "echo" and "f" if @defined; 1 if the host answers it and waits on. Only
 * one direction of the JSON check is the reference's: what its grammar
 * refuses, the host must refuse; the host may refuse more (duplicate keys,
 * a shape other than {"args": [...], "kwargs": {...}}), and must then say
 * so as a JSON refusal. */
static int on_call(int defined, const struct ci_config *cfg, const unsigned char *p,
                   size_t len)
{
    const struct ci_function *fn = NULL;
    const char *why = NULL;
    size_t at = 12345, nl = len >= 4 ? word(p) : 0;
    int rc = ci_call_parse(p, len, cfg, &fn, &at, &why);
    int name_ok = len >= 4 && nl >= 1 && nl <= CI_FUNCTION_NAME_MAX && nl <= len - 4 &&
                  ((nl == 4 && memcmp(p + 4, "echo", 4) == 0) ||
                   (nl == 1 && p[4] == 'f')) && defined;
    struct ref_json j = {p + 4 + nl, name_ok ? len - 4 - nl : 0, 0};
    int json_ok = name_ok && j.n <= cfg->call_args_limit && ref_value(&j, 0) && j.at == j.n;

    TRACE("CALL: %s\n", rc == 0 ? "answered" : why);
    CHECK(rc == 0 || rc == -1);
    if (!json_ok) /* the name, the length or the grammar */
        CHECK(rc == -1);
    if (rc == 0) {
        CHECK(at == 4 + nl && fn == ci_function_find(cfg, (const char *)p + 4, nl));
        j.at = 0;
        ref_ws(&j);
        CHECK(j.p[j.at] == '{'); /* an object, whatever else it is */
    } else {
        CHECK(why != NULL && why[0] != '\0');
        CHECK(at == 12345 || (name_ok && at == 4 + nl));
        if (name_ok && json_ok)
            CHECK(strstr(why, "arguments are not") != NULL);
    }
    return rc == 0;
}

/* 1 if @c is a tchar (RFC 9110), written apart from urls.c. */
static int ref_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
           (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* 1 if the @n bytes at @p are header lines as proto.h says: each a
 * token, ':', then bytes that are not controls (tab allowed), CRLF. */
static int ref_head(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t name = i;
        while (i < n && ref_tchar(p[i]))
            i++;
        if (i == name || i == n || p[i] != ':')
            return 0;
        for (i++; i < n && p[i] != '\r'; i++)
            if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
                return 0;
        if (n - i < 2 || p[i + 1] != '\n')
            return 0;
        i += 2;
    }
    return 1;
}

/* A FETCH payload as on_fetch does, in a session that allows URLs if
 * @allowed; 1 if the host takes it (and would answer it). The URL's own
 * check (ci_url_check) runs too: its refusal is an answer, not a broken
 * protocol. */
static int on_fetch(int allowed, const struct ci_config *cfg, const unsigned char *p,
                    size_t len)
{
    struct ci_fetch_request req;
    const char *why = NULL;
    uint32_t ml = len >= 12 ? word(p) : 0, ul = len >= 12 ? word(p + 4) : 0,
             hl = len >= 12 ? word(p + 8) : 0;
    int shape = len >= 12 && ml >= 1 && ml <= CI_FETCH_METHOD_MAX && ul >= 1 &&
                ul <= CI_FETCH_URL_MAX && hl <= CI_FETCH_HEAD_MAX &&
                (uint64_t)ml + ul + hl <= len - 12;
    int ok = allowed && shape && len - 12 - ml - ul - hl <= URL_REQUEST_LIMIT;
    int rc;

    for (uint32_t i = 0; ok && i < ml; i++)
        ok = p[12 + i] >= 'A' && p[12 + i] <= 'Z';
    ok = ok && !memchr(p + 12 + ml, 0, ul) && ref_head(p + 12 + ml + ul, hl);
    if (!allowed) /* on_fetch refuses it before parsing: no NETWORK frame was sent */
        return 0;
    rc = ci_fetch_parse(p, len, cfg, &req, &why);
    TRACE("FETCH: %s\n", rc == 0 ? "taken" : why);
    CHECK(rc == (ok ? 0 : -1));
    if (rc == 0) {
        char url[CI_FETCH_URL_MAX + 1], msg[4096];
        struct ci_url u;
        const struct ci_url_rule *rule;
        CHECK(req.method == (const char *)p + 12 && req.method_len == ml);
        CHECK(req.url == req.method + ml && req.url_len == ul);
        CHECK(req.head == req.url + ul && req.head_len == hl);
        CHECK(req.body == req.head + hl && req.body_len == len - 12 - ml - ul - hl);
        memcpy(url, req.url, ul);
        url[ul] = '\0';
        rule = ci_url_check(&cfg->urls, url, &u, msg, sizeof msg);
        if (rule) {
            CHECK(strcmp(u.scheme, "http") == 0 && u.port == 9 &&
                  strcmp(u.host, "127.0.0.1") == 0 && strncmp(u.path, "/v1/", 4) == 0);
            CHECK(strncmp(u.url, URL_PREFIX, strlen(URL_PREFIX)) == 0);
            ci_url_clear(&u);
        } else if (msg[0]) {
            CHECK(strstr(msg, "is not allowed in this sandbox") != NULL);
            CHECK(strstr(msg, "; allowed: " URL_PREFIX) != NULL);
        }
    } else {
        CHECK(why != NULL && why[0] != '\0');
    }
    return rc == 0;
}

/* An INSTALL payload as on_install does; 1 if the host takes it (and
 * would answer it: a refusal or an install is an answer). */
static int on_install(const unsigned char *p, size_t len)
{
    const char *why = NULL, *arg = NULL;
    size_t arg_len = 0;
    uint32_t op = 0, want_op = len >= 4 ? word(p) : 0;
    size_t n = len >= 4 ? len - 4 : 0;
    int ok = len >= 4 && ((want_op == CI_INSTALL_LIST && n == 0) ||
                          (want_op == CI_INSTALL_WHEEL && n >= 1 && n <= CI_INSTALL_ARG_MAX &&
                           !memchr(p + 4, 0, n)));
    int rc = ci_install_parse(p, len, &op, &arg, &arg_len, &why);

    TRACE("INSTALL: %s\n", rc == 0 ? "taken" : why);
    CHECK(rc == (ok ? 0 : -1));
    if (rc == 0)
        CHECK(op == want_op && arg == (const char *)p + 4 && arg_len == n);
    else
        CHECK(why != NULL && why[0] != '\0');
    return rc == 0;
}

static void noop(void *payload, const char *name, const char *args, size_t len, ci_reply *reply)
{
}

/* A READY payload as await_ready does; 1 if the worker is ready. */
static int on_ready(uint32_t type, const unsigned char *p, size_t len)
{
    unsigned layers = 0xDEADu;
    uint32_t listener = 0xBEEFu;
    int rc = type == CI_FRAME_READY ? ci_ready_parse(p, len, &layers, &listener) : -1;
    int want = type == CI_FRAME_READY && len == 12 && word(p) == CI_PROTO_VERSION &&
               (word(p + 4) & ~CI_LAYER_ALL) == 0 &&
               (word(p + 8) == CI_READY_NO_LISTENER || word(p + 8) <= INT32_MAX);
    TRACE("READY: %s\n", rc == 0 ? "accepted" : "refused");
    CHECK(rc == 0 || rc == -1);
    CHECK((rc == 0) == want);
    CHECK(rc == 0 ? layers == word(p + 4) : layers == 0xDEADu);
    CHECK(rc == 0 ? listener == word(p + 8) : listener == 0xBEEFu);
    return rc == 0;
}

/* ------------------------------------------------------- a snapshot */

/* The reference below is written from docs/snapshot-format.md alone. */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return le32(p) | (uint64_t)le32(p + 4) << 32;
}

struct ref_entry {
    int is_dir;
    uint32_t mode;
    const unsigned char *path, *data; /* data: NULL for a DIR */
    size_t path_len, len;
};

struct ref_snapshot {
    const unsigned char *packages, *state, *left_out; /* left_out: NULL if none */
    size_t packages_len, state_len, left_out_len;
    uint32_t count;
    const unsigned char *entries, *entries_end; /* the first DIR or FILE's header, past the last */
    struct ref_entry *entry;
    size_t entry_count, entry_cap;
    unsigned long long file_bytes;
};

/* Relative to the workspace: components separated by single '/', none
 * empty, "." or "..", each at most 255 bytes; no NUL; at most 4095 bytes
 * and 64 components in all. */
static int ref_snap_path(const unsigned char *p, size_t n)
{
    const unsigned char *at = p, *end = p + n;
    size_t parts = 0;

    if (n == 0 || n > 4095 || memchr(p, '\0', n))
        return 0;
    for (;;) {
        const unsigned char *slash = memchr(at, '/', (size_t)(end - at));
        size_t k = (size_t)((slash ? slash : end) - at);
        if (k == 0 || k > 255 || (k == 1 && at[0] == '.') || (k == 2 && memcmp(at, "..", 2) == 0))
            return 0;
        if (++parts > 64)
            return 0;
        if (!slash)
            return 1;
        at = slash + 1;
    }
}

/* A DIR (u32 mode 0700, the path) or FILE (u32 mode 0600 or 0700, u32
 * path length, the path, the bytes) section's @n bytes at @c; 1 if well
 * formed, appended to ref->entry. */
static int ref_snap_entry(int is_dir, const unsigned char *c, uint64_t n, struct ref_snapshot *ref)
{
    struct ref_entry e = {is_dir, 0, NULL, NULL, 0, 0};

    if (n < (is_dir ? 4u : 8u))
        return 0;
    e.mode = le32(c);
    if (is_dir) {
        if (e.mode != 0700)
            return 0;
        e.path = c + 4;
        e.path_len = (size_t)(n - 4);
    } else {
        if ((e.mode != 0600 && e.mode != 0700) || le32(c + 4) > n - 8)
            return 0;
        e.path = c + 8;
        e.path_len = le32(c + 4);
        e.data = e.path + e.path_len;
        e.len = (size_t)(n - 8 - e.path_len);
    }
    if (!ref_snap_path(e.path, e.path_len))
        return 0;
    if (ref->entry_count == ref->entry_cap) {
        size_t cap = ref->entry_cap ? 2 * ref->entry_cap : 16;
        struct ref_entry *grown = realloc(ref->entry, cap * sizeof *grown);
        if (!grown)
            abort();
        ref->entry = grown;
        ref->entry_cap = cap;
    }
    ref->entry[ref->entry_count++] = e;
    ref->file_bytes += e.len;
    return 1;
}

/* A snapshot's @len bytes at @p; 1 if the host takes them (the checks
 * before any session starts), their parts in @ref (ref->entry is the
 * caller's to free either way). */
static int ref_snapshot(const unsigned char *p, size_t len, struct ref_snapshot *ref)
{
    static const unsigned char magic[8] = {0x89, 'C', 'I', 'S', 'N', 'A', 'P', '\n'};
    unsigned char hash[32];
    size_t off = 16, body;
    /* Sections so far: 0 to 3 of PACKAGES, COUNT, STATE; then 4 after the LEFT_OUT. */
    unsigned stage = 0;

    memset(ref, 0, sizeof *ref);
    if (len < 16 + 32 || memcmp(p, magic, 8) != 0 || le32(p + 8) != 1 || le32(p + 12) != 0)
        return 0;
    body = len - 32;
    crypto_hash_sha256(hash, p, body);
    if (memcmp(hash, p + body, 32) != 0)
        return 0;
    while (off < body) {
        uint32_t type;
        uint64_t n;
        const unsigned char *c;

        if (body - off < 16 || le32(p + off + 4) != 0)
            return 0;
        type = le32(p + off);
        n = le64(p + off + 8);
        if (n > body - off - 16 || stage == 4)
            return 0;
        c = p + off + 16;
        if (stage < 3 && type != (stage == 0 ? 1u : stage == 1 ? 2u : 3u))
            return 0; /* PACKAGES, COUNT and STATE first, each once, in order */
        switch (type) {
        case 1: /* PACKAGES: UTF-8 lines, 1 byte to 1 MiB */
            if (stage != 0 || n < 1 || n > 1048576 || !ref_utf8(c, (size_t)n))
                return 0;
            ref->packages = c;
            ref->packages_len = (size_t)n;
            stage = 1;
            break;
        case 2: /* COUNT: a u32 under 2^31 */
            if (stage != 1 || n != 4 || le32(c) >= 0x80000000u)
                return 0;
            ref->count = le32(c);
            stage = 2;
            break;
        case 3: /* STATE: 1 byte to 3 GiB */
            if (stage != 2 || n < 1 || n > 3ull << 30)
                return 0;
            ref->state = c;
            ref->state_len = (size_t)n;
            stage = 3;
            break;
        case 4: /* LEFT_OUT: UTF-8 lines, 1 byte to 2 MiB; last */
            if (n < 1 || n > 2u << 20 || !ref_utf8(c, (size_t)n))
                return 0;
            ref->left_out = c;
            ref->left_out_len = (size_t)n;
            stage = 4;
            break;
        case 5: /* DIR */
        case 6: /* FILE */
            if (!ref_snap_entry(type == 5, c, n, ref))
                return 0;
            if (!ref->entries)
                ref->entries = p + off;
            ref->entries_end = c + n;
            break;
        default:
            return 0;
        }
        off += 16 + (size_t)n;
    }
    return stage >= 3;
}

/* ci_snapshot_parse, ci_snapshot_next and ci_snapshot_left_out on the
 * @len bytes at @p, against the reference. */
static void check_snapshot(const unsigned char *p, size_t len)
{
    struct ci_snapshot_view v;
    struct ci_snapshot_entry e;
    struct ref_snapshot ref;
    const char *why = NULL;
    char *list = (char *)&v; /* not NULL, to see a failure set it so */
    size_t off = 0, i = 0;
    int rc = ci_snapshot_parse(p, len, &v, &why);
    int want = ref_snapshot(p, len, &ref);

    TRACE("snapshot of %zu bytes: %s\n", len, rc == CI_OK ? "taken" : why);
    CHECK(rc == CI_OK || rc == CI_EINVAL);
    CHECK((rc == CI_OK) == want);
    if (rc == CI_OK) {
        CHECK(why == NULL);
        CHECK(v.packages == (const char *)ref.packages && v.packages_len == ref.packages_len);
        CHECK(v.count == ref.count);
        CHECK(v.state == ref.state && v.state_len == ref.state_len);
        CHECK(v.left_out == (const char *)ref.left_out && v.left_out_len == ref.left_out_len);
        CHECK(v.entries == ref.entries &&
              v.entries_len == (size_t)(ref.entries_end - ref.entries));
        CHECK(v.entry_count == ref.entry_count && v.file_bytes == ref.file_bytes);
        while (ci_snapshot_next(&v, &off, &e)) {
            const struct ref_entry *want_e;
            CHECK(i < ref.entry_count);
            want_e = &ref.entry[i++];
            CHECK(e.is_dir == want_e->is_dir && e.mode == want_e->mode);
            CHECK(e.path == (const char *)want_e->path && e.path_len == want_e->path_len);
            CHECK(e.data == want_e->data && e.len == want_e->len);
        }
        CHECK(i == ref.entry_count && off == v.entries_len);
        CHECK(ci_snapshot_next(&v, &off, &e) == 0);
    } else {
        CHECK(why != NULL && why[0] != '\0');
    }

    rc = ci_snapshot_left_out(p, len, &list);
    CHECK(rc == CI_OK || rc == CI_EINVAL || rc == CI_ENOMEM);
    if (rc != CI_ENOMEM)
        CHECK((rc == CI_OK) == want);
    if (rc == CI_OK) {
        CHECK(list != NULL && strlen(list) == ref.left_out_len);
        CHECK(memcmp(list, ref.left_out ? ref.left_out : (const unsigned char *)"",
                     ref.left_out_len) == 0);
    } else {
        CHECK(list == NULL);
        if (rc == CI_EINVAL)
            CHECK(strstr(ci_session_errmsg(NULL), why) != NULL);
    }
    ci_free(list);
    free(ref.entry);
}

/* The snapshot at @p as given, then with its hash made right. */
static void on_snapshot(const unsigned char *p, size_t len)
{
    size_t body = len >= CI_SNAPSHOT_HASH_LEN ? len - CI_SNAPSHOT_HASH_LEN : len;
    unsigned char *fixed = malloc(body + CI_SNAPSHOT_HASH_LEN);

    check_snapshot(p, len);
    if (!fixed)
        return;
    memcpy(fixed, p, body);
    crypto_hash_sha256(fixed + body, fixed, body);
    check_snapshot(fixed, body + CI_SNAPSHOT_HASH_LEN);
    free(fixed);
}

/* ------------------------------------------------------------ the stream */

struct stream {
    const unsigned char *p;
    size_t len, off;
    const unsigned char *schedule;
    size_t schedule_len, calls;
    int would_block; /* the last read failed with EAGAIN */
};

static ssize_t stream_read(void *ctx, void *buf, size_t n)
{
    struct stream *st = ctx;
    size_t give = n;

    CHECK(n > 0); /* the reader never asks for nothing */
    st->would_block = 0;
    if (st->schedule_len) {
        unsigned char v = st->schedule[st->calls % st->schedule_len];
        int first_pass = st->calls < st->schedule_len;
        st->calls++;
        if (first_pass && (v & 0x80)) {
            errno = (v & 0x40) ? EINTR : EAGAIN;
            st->would_block = errno == EAGAIN;
            return -1;
        }
        if ((v & 0x3F) && (v & 0x3F) < give)
            give = v & 0x3F;
    }
    if (give > st->len - st->off)
        give = st->len - st->off;
    memcpy(buf, st->p + st->off, give);
    st->off += give;
    return (ssize_t)give;
}

/* Reads one frame that starts at st->off into the fresh reader @rd, as
 * the host's poll loops do (EAGAIN: poll, then pump again), and checks
 * the reader's answer against the bytes. */
static int pump(struct ci_reader *rd, struct stream *st)
{
    size_t start = st->off, rest;
    struct ci_frame_header h = {0, 0};
    int n;

    for (;;) {
        errno = 0;
        n = ci_reader_pump_from(rd, stream_read, st);
        if (n != 0)
            break;
        CHECK(st->would_block);
    }
    rest = st->len - start;
    if (rest >= sizeof h)
        memcpy(&h, st->p + start, sizeof h);
    switch (n) {
    case 1: /* a whole frame, exactly its bytes */
        CHECK(rest >= sizeof h && h.len <= rd->max_len);
        CHECK(rd->type == h.type && rd->len == h.len && rd->have == h.len);
        CHECK(st->off - start == sizeof h + (size_t)h.len);
        CHECK(rd->payload != NULL);
        CHECK(memcmp(rd->payload, st->p + start + sizeof h, h.len) == 0);
        break;
    case -2: /* over the cap, refused after the header alone */
        CHECK(rest >= sizeof h && h.len > rd->max_len && rd->len == h.len);
        CHECK(st->off - start == sizeof h);
        break;
    case -1: /* end of file within the frame */
        CHECK(errno == 0);
        CHECK(st->off == st->len);
        CHECK(rest < sizeof h || (h.len <= rd->max_len && rest < sizeof h + (size_t)h.len));
        break;
    default:
        CHECK(0);
    }
    TRACE("frame: %s, type %u, length %u\n",
          n == 1 ? "whole" : n == -2 ? "over the cap" : "cut by EOF", rd->type, rd->len);
    return n;
}

/* ------------------------------------------------------------ the host */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ci_config cfg;
    struct stream st = {0};
    struct ci_reader rd;
    unsigned mode;

    /* The decoders' own pieces, on the raw bytes. */
    CHECK(ci_utf8_valid(data, size) == ref_utf8(data, size));

    if (size < 2)
        return 0;
    mode = data[0];
    st.schedule_len = data[1];
    if (size - 2 < st.schedule_len)
        return 0;
    st.schedule = data + 2;
    st.p = data + 2 + st.schedule_len;
    st.len = size - 2 - st.schedule_len;
    if (mode & 64) {
        on_snapshot(st.p, st.len);
        return 0;
    }

    ci_config_defaults(&cfg);
    CHECK(ci_config_set_output_limit(&cfg, OUTPUT_LIMIT) == CI_OK);
    CHECK(ci_config_set_display_limits(&cfg, DISPLAY_OUTPUT_LIMIT,
                                       mode & 2 ? DISPLAY_OUTPUT_LIMIT : DISPLAY_RUN_LIMIT) ==
          CI_OK);
    CHECK(ci_config_set_call_limits(&cfg, CALL_LIMIT, CALL_LIMIT) == CI_OK);
    if ((mode & 8) && (ci_config_add_function(&cfg, "echo", NULL, noop, NULL) != CI_OK ||
                       ci_config_add_function(&cfg, "f", "", noop, NULL) != CI_OK)) {
        ci_config_clear(&cfg);
        return 0; /* out of memory */
    }
    if ((mode & 16) && (ci_config_allow_url(&cfg, URL_PREFIX) != CI_OK ||
                        ci_config_set_url_limits(&cfg, URL_REQUEST_LIMIT, 1024, 1000) != CI_OK)) {
        ci_config_clear(&cfg);
        return 0; /* out of memory */
    }

    if (mode & 1) { /* await_ready: one frame, at most 64 bytes */
        int ok;
        ci_reader_init(&rd, 64);
        ok = pump(&rd, &st) == 1 && on_ready(rd.type, rd.payload, rd.len);
        ci_reader_reset(&rd);
        if (!ok) {
            ci_config_clear(&cfg);
            return 0; /* the host kills the worker */
        }
    }

    /* Runs, one after another, while the worker answers well. */
    for (int count = 1;; count++) {
        char violation[CI_VIOLATION_NAME_MAX + 1] = "";
        int over = 0, ok = 0, signaled = 0;
        size_t state_cap = mode & 32 ? SNAP_STATE_CAP : 0;
        /* run.c: a run that is no cell has a count of its own (proto.h). */
        int execution_count = mode & 32 ? (int)(CI_RUN_COUNT_INTERNAL | (uint32_t)count) : count;

        ci_reader_init(&rd, ci_result_frame_cap(&cfg, state_cap));
        CHECK(rd.max_len >= 4 * OUTPUT_LIMIT + DISPLAY_RUN_LIMIT);
        if (state_cap)
            CHECK(rd.max_len >= ci_result_frame_cap(&cfg, 0) + state_cap + CI_PACKAGES_MAX +
                                    CI_LEFT_OUT_MAX);
        while (!over) {
            if (pump(&rd, &st) != 1) {
                over = 1; /* EOF: the worker died; over the cap: killed */
            } else if (rd.type == CI_FRAME_VIOLATION && !violation[0]) {
                if (on_violation(rd.payload, rd.len, violation))
                    ci_reader_reset(&rd); /* wait on for its death */
                else
                    over = 1;
            } else if (rd.type == CI_FRAME_ENDED) {
                on_ended(rd.payload, rd.len);
                over = 1; /* the worker is dead: rolled back, or the session ends */
            } else if (rd.type == CI_FRAME_SIGNALED && !signaled) {
                if ((signaled = on_signaled(rd.payload, rd.len)))
                    ci_reader_reset(&rd); /* wait on for its death */
                else
                    over = 1;
            } else if (rd.type == CI_FRAME_INPUT_REQUEST && !violation[0] && !signaled) {
                if (on_input_request(mode & 4, rd.payload, rd.len))
                    ci_reader_reset(&rd); /* answered: wait on for the result */
                else
                    over = 1;
            } else if (rd.type == CI_FRAME_CALL && !violation[0] && !signaled) {
                if (on_call(mode & 8, &cfg, rd.payload, rd.len))
                    ci_reader_reset(&rd); /* answered: wait on for the result */
                else
                    over = 1;
            } else if (rd.type == CI_FRAME_FETCH && !violation[0] && !signaled) {
                if (on_fetch(mode & 16, &cfg, rd.payload, rd.len))
                    ci_reader_reset(&rd); /* answered: wait on for the result */
                else
                    over = 1;
            } else if (rd.type == CI_FRAME_INSTALL && !violation[0] && !signaled) {
                if (on_install(rd.payload, rd.len))
                    ci_reader_reset(&rd); /* answered: wait on for the result */
                else
                    over = 1;
            } else if (rd.type == CI_FRAME_RESULT && !violation[0] && !signaled) {
                ok = on_result(rd.payload, rd.len, &cfg, execution_count, state_cap);
                over = 1;
            } else {
                over = 1; /* a second report, a result or request after one, any other type */
            }
        }
        ci_reader_reset(&rd);
        if (!ok) {
            ci_config_clear(&cfg);
            return 0;
        }
    }
}
