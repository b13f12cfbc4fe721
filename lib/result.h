/*
 * A run's result as the host builds it (result.c): its buffers, rich
 * outputs, and the decoder of the worker's RESULT frame.
 */
#ifndef CI_RESULT_H
#define CI_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "codeinterp.h"
#include "config.h"

struct ci_buf {
    char *data; /* NUL-terminated when not NULL */
    size_t len;
};

/* One rich output (codeinterp.h); mime, data and display_id are
 * NUL-terminated. */
struct ci_output {
    uint32_t type;    /* ci_output_type */
    uint32_t message; /* the message's number in the run */
    uint32_t flags;   /* CI_OUTPUT_FLAG_* */
    char *mime;       /* "" for a clear_output */
    unsigned char *data;
    size_t len;
    char *display_id; /* NULL when the message has none */
};

struct ci_result {
    ci_status status;
    int execution_count;
    int truncated; /* CI_TRUNCATED_* */
    int rolled_back; /* 1: killed, and the session was rolled back (rollback.c) */
    struct ci_buf out, err;
    char *spill_files[2]; /* of stdout and stderr, when cut and kept */
    int spill_partial[2]; /* the spill limit stopped it */
    struct ci_cut {       /* of stdout and stderr, when cut */
        size_t at, len;   /* the marker line in out or err */
        unsigned long long bytes, lines; /* what it says was left out */
    } cuts[2];
    char *value, *error_name, *error_value, *traceback;
    char *traceback_full; /* NULL unless it differs from traceback */
    struct ci_output *outputs;
    size_t output_count, outputs_omitted;
    char **files; /* changed files, sorted */
    size_t file_count;
    unsigned long long wall_us, cpu_us, peak_memory;
    struct ci_refusal {   /* the worker's REFUSALS field, for the audit trail */
        uint32_t kind;    /* enum ci_refusal_kind */
        uint32_t times;
        char *detail;
    } *refusals;
    size_t refusal_count;
    uint32_t refusals_left_out;
    unsigned long long http_over_limit; /* requests past CI_FETCH_PER_RUN_MAX */
    struct ci_snapshot_fields { /* a SNAPSHOT run's (proto.h), else all 0 */
        size_t state_cap;        /* set before decoding: 0 refuses the fields */
        const unsigned char *state; /* in the decoded payload, not a copy */
        size_t state_len;
        char *packages, *left_out; /* NUL-terminated copies; left_out may be NULL */
    } snap;
};

ci_result *ci_result_new(void);
/* Decodes a RESULT payload from the untrusted worker into @r: checks every
 * tag, length and byte against @cfg's limits (and r->snap.state_cap: the
 * snapshot fields are refused unless it is set, and required with
 * OUTCOME_OK when it is). r->snap.state then points into @p. CI_OK,
 * CI_EPROTO (with @why set), or CI_ENOMEM. */
int ci_result_decode(ci_result *r, const unsigned char *p, size_t len,
                     const struct ci_config *cfg, uint32_t *outcome, uint32_t *count,
                     const char **why);
/* The largest RESULT payload a worker under @cfg may send; for a
 * SNAPSHOT run, @state_cap more (and its package set and list). */
size_t ci_result_frame_cap(const struct ci_config *cfg, size_t state_cap);
/* Frees @r's outputs and forgets they were omitted. */
void ci_result_drop_outputs(ci_result *r);
/* Strict UTF-8 (RFC 3629) without NUL bytes: 1 if valid. */
int ci_utf8_valid(const unsigned char *p, size_t n);
char *ci_strdup(const char *s);

#endif /* CI_RESULT_H */
