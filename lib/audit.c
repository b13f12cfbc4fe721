/*
 * The audit trail's events: what each one records of a session, a cell, a
 * file, a call or a refusal (the schema is docs/audit-log.md). Every field
 * is what the host itself saw or decided; nothing is taken from the worker
 * but what the protocol checked (a result's status, a violation's name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <jansson.h>
#include <sodium.h>

#include "audit.h"
#include "config.h"
#include "err.h"
#include "manifest_cache.h"
#include "proto.h"
#include "result.h"
#include "session.h"
#include "snapshot.h"

void ci_audit_session_id(ci_session *s)
{
    unsigned char id[16];

    if (getrandom(id, sizeof id, 0) != (ssize_t)sizeof id)
        randombytes_buf(id, sizeof id); /* getrandom cannot fail on a 16-byte read; belt */
    sodium_bin2hex(s->id, sizeof s->id, id, sizeof id);
}

/* A JSON string of @n bytes that may not be UTF-8 (a workspace file's
 * name is any bytes): each byte that starts no valid sequence becomes
 * U+FFFD. NULL when memory ran out. */
static json_t *text(const char *p, size_t n)
{
    json_t *j;
    char *clean;
    size_t i = 0, o = 0;

    if (ci_utf8_valid((const unsigned char *)p, n))
        return json_stringn(p, n);
    if (!(clean = malloc(n * 3 + 1)))
        return NULL;
    while (i < n) {
        size_t k = 1;
        while (k <= 4 && i + k <= n && !ci_utf8_valid((const unsigned char *)p + i, k))
            k++;
        if (k <= 4 && i + k <= n) {
            memcpy(clean + o, p + i, k);
            o += k;
            i += k;
        } else {
            memcpy(clean + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    j = json_stringn(clean, o);
    free(clean);
    return j;
}

static json_t *hash_of(const void *p, size_t n)
{
    unsigned char h[crypto_hash_sha256_BYTES];
    char hex[2 * sizeof h + 1];

    crypto_hash_sha256(h, p ? p : (const void *)"", n);
    sodium_bin2hex(hex, sizeof hex, h, sizeof h);
    return json_string(hex);
}

static const char *code_name(int rc)
{
#define CI_AUDIT_NAME_(name, value, message) \
    case name:                               \
        return #name;
    switch (rc) {
    CI_ERRORS(CI_AUDIT_NAME_)
    }
#undef CI_AUDIT_NAME_
    return "unknown";
}

static json_t *layer_names(unsigned bits)
{
    static const struct {
        unsigned bit;
        const char *name;
    } layers[] = {{CI_SANDBOX_SECCOMP, "seccomp"},     {CI_SANDBOX_RLIMITS, "rlimits"},
                  {CI_SANDBOX_NO_NEW_PRIVS, "no_new_privs"}, {CI_SANDBOX_LANDLOCK, "landlock"},
                  {CI_SANDBOX_UNPRIVILEGED, "unprivileged"}, {CI_SANDBOX_USERNS, "userns"},
                  {CI_SANDBOX_NETNS, "netns"},         {CI_SANDBOX_IPCNS, "ipcns"},
                  {CI_SANDBOX_UTSNS, "utsns"},         {CI_SANDBOX_MNTNS, "mntns"},
                  {CI_SANDBOX_PIDNS, "pidns"},         {CI_SANDBOX_TASK_LIMIT, "task_limit"},
                  {CI_SANDBOX_DISK_QUOTA, "disk_quota"}};
    json_t *a = json_array();
    size_t i;

    for (i = 0; a && i < sizeof layers / sizeof *layers; i++)
        if (bits & layers[i].bit)
            json_array_append_new(a, json_string(layers[i].name));
    return a;
}

/* Marks @s and says why: its runs, puts and gets stop until a restart's
 * event is written. CI_EIO. */
static int failed(ci_session *s, const char *why)
{
    s->audit_failed = 1;
    return ci_err_set(&s->err, CI_EIO, "the audit event could not be recorded: %s", why);
}

/* Writes @ev (whose first member is "event"; taken) to @s's log. */
static int emit(ci_session *s, json_t *ev)
{
    char msg[512], *body;
    size_t len;
    int rc;

    if (!ev) /* a member could not be made */
        return failed(s, "out of memory");
    body = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(ev);
    if (!body || (len = strlen(body)) < 3) {
        free(body);
        return failed(s, "out of memory");
    }
    /* Inside the braces: the log puts its own members first. */
    rc = ci_audit_write(s->cfg.audit, s->id, body + 1, len - 2, msg, sizeof msg);
    free(body);
    return rc == 0 ? CI_OK : failed(s, msg);
}

/* A new event object, or NULL when memory ran out. json_pack's "o"
 * members take a NULL as a failure, so a member that could not be made
 * fails the whole event. */
#define EVENT(fmt, ...) json_pack("{s:s," fmt "}", "event", __VA_ARGS__)

int ci_audit_check(ci_session *s)
{
    if (!s->cfg.audit || !s->audit_failed)
        return CI_OK;
    return ci_err_set(&s->err, CI_EIO, "an audit event of this session could not be recorded; "
                      "it runs nothing more until ci_session_restart() records its own");
}

static json_t *limits(const struct ci_config *c)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
                     "timeout_ms", (json_int_t)c->timeout_ms, "grace_ms", (json_int_t)c->grace_ms,
                     "startup_timeout_ms", (json_int_t)c->startup_ms,
                     "memory_limit", (json_int_t)c->memory_limit,
                     "file_limit", (json_int_t)c->file_limit,
                     "output_limit", (json_int_t)c->output_limit,
                     "spill_limit", (json_int_t)c->spill_limit,
                     "display_output_limit", (json_int_t)c->display_output_limit,
                     "display_run_limit", (json_int_t)c->display_run_limit,
                     "call_args_limit", (json_int_t)c->call_args_limit,
                     "call_result_limit", (json_int_t)c->call_result_limit,
                     "task_limit", (json_int_t)c->task_limit,
                     "disk_quota", (json_int_t)c->disk_quota,
                     "inode_quota", (json_int_t)c->inode_quota,
                     "url_request_limit", (json_int_t)c->urls.request_limit,
                     "url_response_limit", (json_int_t)c->urls.response_limit,
                     "url_timeout_ms", (json_int_t)c->urls.timeout_ms);
}

static json_t *manifest_id(const ci_session *s)
{
    char hex[65];

    if (!s->verified_manifest)
        return json_null();
    sodium_bin2hex(hex, sizeof hex, s->verified_manifest->digest,
                   sizeof s->verified_manifest->digest);
    return json_string(hex);
}

/* A started worker's layers and pid, or a failed start's code and message. */
static json_t *start_event(ci_session *s, const char *event, int rc)
{
    if (rc != CI_OK)
        return EVENT("s:s,s:o,s:o,s:o", event, "error", code_name(rc), "message",
                     text(s->err.msg, strlen(s->err.msg)), "required_sandbox",
                     layer_names(s->cfg.required_layers), "limits", limits(&s->cfg));
    return EVENT("s:o,s:o,s:o,s:o,s:i", event, "sandbox", layer_names(s->worker.layers),
                 "required_sandbox", layer_names(s->cfg.required_layers), "limits",
                 limits(&s->cfg), "manifest", manifest_id(s), "worker_pid", (int)s->worker.pid);
}

/* A start's event: a failed start keeps its own message, which says more
 * than the log's. */
static int emit_start(ci_session *s, const char *ok, const char *failure, int rc)
{
    struct ci_err why;
    int logged;

    if (rc == CI_OK)
        return emit(s, start_event(s, ok, rc));
    why = s->err;
    logged = emit(s, start_event(s, failure, rc));
    s->err = why;
    return logged;
}

int ci_audit_session_start(ci_session *s, int rc)
{
    if (!s->cfg.audit)
        return CI_OK;
    return emit_start(s, "session_start", "session_start_failed", rc);
}

int ci_audit_restart(ci_session *s, int rc)
{
    if (!s->cfg.audit)
        return CI_OK;
    s->audit_failed = 0; /* this event says whether the log works again */
    return emit_start(s, "restart", "restart_failed", rc);
}

int ci_audit_session_end(ci_session *s)
{
    if (!s->cfg.audit)
        return CI_OK;
    /* The runs that were no cell (snapshots) are not counted. */
    return emit(s, EVENT("s:i", "session_end", "cells", s->run_seq - (int)s->internal_runs));
}

int ci_audit_cell_start(ci_session *s, int count, const char *code, size_t len)
{
    if (!s->cfg.audit)
        return CI_OK;
    return emit(s, EVENT("s:i,s:o,s:I", "cell_start", "execution_count", count, "sha256",
                         hash_of(code, len), "bytes", (json_int_t)len));
}

/* The first of @r's changed files, within CI_AUDIT_FILES_MAX names and
 * CI_AUDIT_FILE_NAMES_MAX bytes of them; *@listed says how many. */
static json_t *changed_files(const ci_result *r, size_t *listed)
{
    json_t *a = json_array();
    size_t i, bytes = 0;

    for (i = 0; a && i < r->file_count && i < CI_AUDIT_FILES_MAX; i++) {
        size_t n = strlen(r->files[i]);
        if (n > CI_AUDIT_FILE_NAMES_MAX - bytes)
            break;
        bytes += n;
        if (json_array_append_new(a, text(r->files[i], n)) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    *listed = i;
    return a;
}

static json_t *opt_text(const char *p)
{
    return p ? text(p, strlen(p)) : json_null();
}

static const char *refusal_kind(uint32_t kind)
{
    static const char *const names[] = {
        [CI_REFUSAL_NETWORK] = "network", [CI_REFUSAL_PROCESS] = "process",
        [CI_REFUSAL_SIGNAL] = "signal",   [CI_REFUSAL_SYMLINK] = "symlink",
        [CI_REFUSAL_PATH] = "path",       [CI_REFUSAL_MODE] = "mode"};

    return kind < sizeof names / sizeof *names && names[kind] ? names[kind] : "unknown";
}

/* The refusals the worker reported with @r, one event each, before the
 * cell's own. */
static int cell_refusals(ci_session *s, const ci_result *r)
{
    for (size_t i = 0; i < r->refusal_count; i++) {
        const struct ci_refusal *f = &r->refusals[i];
        int rc = emit(s, EVENT("s:s,s:o,s:I,s:i", "refusal", "kind", refusal_kind(f->kind),
                               "detail", text(f->detail, strlen(f->detail)), "times",
                               (json_int_t)f->times, "execution_count", r->execution_count));

        if (rc != CI_OK)
            return rc;
    }
    return CI_OK;
}

/* An exception's name, its first CI_AUDIT_NAME_MAX bytes. */
static json_t *opt_name(const char *p)
{
    return p ? text(p, strnlen(p, CI_AUDIT_NAME_MAX)) : json_null();
}

int ci_audit_cell(ci_session *s, const char *code, size_t len, const ci_result *r)
{
    json_t *files;
    size_t listed = 0;
    int rc;

    if (!s->cfg.audit)
        return CI_OK;
    if ((rc = cell_refusals(s, r)) != CI_OK)
        return rc;
    files = changed_files(r, &listed);
    rc = emit(s, EVENT("s:i,s:o,s:I,s:s,s:o,s:I,s:I,s:I,s:o,s:I,s:b,s:I,s:I", "cell",
                       "execution_count", r->execution_count, "sha256", hash_of(code, len),
                       "bytes", (json_int_t)len, "status", ci_status_name(r->status),
                       "error_name", opt_name(r->error_name),
                       "wall_us", (json_int_t)r->wall_us, "cpu_us", (json_int_t)r->cpu_us,
                       "peak_memory", (json_int_t)r->peak_memory,
                       "files", files, "files_omitted", (json_int_t)(r->file_count - listed),
                       "files_incomplete", (r->truncated & CI_TRUNCATED_FILES) != 0,
                       "refusals_omitted", (json_int_t)r->refusals_left_out,
                       "http_over_limit", (json_int_t)r->http_over_limit));
    if (r->status != CI_STATUS_KILLED)
        return rc;
    /* The worker is gone: the session is dead until a restart, unless
     * its checkpoint took over (ci_config_set_rollback). */
    return emit(s, EVENT("s:i,s:o,s:o,s:b", "kill", "execution_count", r->execution_count,
                         "cause", opt_name(r->error_name), "message",
                         opt_text(r->error_value), "rolled_back", r->rolled_back != 0)) == CI_OK
               ? rc
               : CI_EIO;
}

int ci_audit_violation(ci_session *s, const char *syscall_name)
{
    if (!s->cfg.audit)
        return CI_OK;
    return emit(s, EVENT("s:s,s:o", "refusal", "kind", "syscall", "syscall",
                         text(syscall_name, strlen(syscall_name))));
}

int ci_audit_file(ci_session *s, const char *op, const char *name, const void *data,
                  size_t len, int rc)
{
    char event[16];

    if (!s->cfg.audit)
        return CI_OK;
    snprintf(event, sizeof event, "file_%s", op);
    if (rc != CI_OK)
        return emit(s, EVENT("s:o,s:s", event, "name", text(name, strlen(name)), "error",
                             code_name(rc)));
    return emit(s, EVENT("s:o,s:I,s:o", event, "name", text(name, strlen(name)), "bytes",
                         (json_int_t)len, "sha256", hash_of(data, len)));
}

int ci_audit_snapshot(ci_session *s, const char *op, const void *data, size_t len, int rc)
{
    char hex[2 * CI_SNAPSHOT_HASH_LEN + 1];

    if (!s->cfg.audit)
        return CI_OK;
    if (rc != CI_OK || !data || len < CI_SNAPSHOT_HASH_LEN)
        return emit(s, EVENT("s:s,s:s", op, "error", code_name(rc), "message", s->err.msg));
    /* Its last bytes are the SHA-256 of the rest: no need to hash it again. */
    sodium_bin2hex(hex, sizeof hex, (const unsigned char *)data + len - CI_SNAPSHOT_HASH_LEN,
                   CI_SNAPSHOT_HASH_LEN);
    return emit(s, EVENT("s:I,s:s", op, "bytes", (json_int_t)len, "sha256", hex));
}

int ci_audit_pickle_refusals(ci_session *s, const char *op, const ci_result *r)
{
    if (!s->cfg.audit)
        return CI_OK;
    for (size_t i = 0; i < r->refusal_count; i++) {
        const struct ci_refusal *f = &r->refusals[i];
        int rc = emit(s, EVENT("s:s,s:o,s:I,s:s", "refusal", "kind", refusal_kind(f->kind),
                               "detail", text(f->detail, strlen(f->detail)), "times",
                               (json_int_t)f->times, "during", op));

        if (rc != CI_OK)
            return rc;
    }
    return CI_OK;
}

int ci_audit_fork(ci_session *s, const ci_session *branch)
{
    if (!s->cfg.audit)
        return CI_OK;
    return emit(s, EVENT("s:s", "fork", "branch", branch->id));
}

static const char *call_outcome(unsigned status)
{
    switch (status) {
    case CI_CALL_RETURNED:
        return "returned";
    case CI_CALL_RAISED:
        return "raised";
    case CI_CALL_STOPPED:
        return "stopped";
    default:
        return "failed";
    }
}

int ci_audit_call(ci_session *s, const char *function, size_t args_len, unsigned status,
                  size_t reply_len)
{
    if (!s->cfg.audit)
        return CI_OK;
    return emit(s, EVENT("s:s,s:I,s:I,s:s", "call", "function", function, "args_bytes",
                         (json_int_t)args_len, "reply_bytes", (json_int_t)reply_len, "outcome",
                         call_outcome(status)));
}

int ci_audit_install(ci_session *s, const char *file, size_t file_len, unsigned status,
                     const char *data, size_t len)
{
    static const char *const outcome[] = {"installed", "refused", "failed", "stopped"};

    if (!s->cfg.audit)
        return CI_OK;
    return emit(s, EVENT("s:o,s:s,s:o", "install", "wheel", text(file, file_len), "outcome",
                         status < 4 ? outcome[status] : "failed", "detail",
                         text(data ? data : "", data ? (len < 1024 ? len : 1024) : 0)));
}

int ci_audit_http(ci_session *s, const char *method, const char *url, int status,
                  unsigned long long bytes, int allowed)
{
    size_t len = strlen(url);

    if (!s->cfg.audit)
        return CI_OK;
    /* A line must stay well under what a chain's continuation reads back. */
    return emit(s, EVENT("s:o,s:o,s:I,s:i,s:I,s:b", "http", "method",
                         text(method, strnlen(method, 64)), "url",
                         text(url, len < CI_AUDIT_URL_MAX ? len : CI_AUDIT_URL_MAX), "url_bytes",
                         (json_int_t)len, "status", status, "bytes", (json_int_t)bytes,
                         "allowed", allowed != 0));
}
