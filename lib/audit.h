/*
 * The audit trail (ci_config_set_audit_log, ci_config_set_event_fn;
 * docs/audit-log.md is the schema): one JSON object a line for each event
 * of each session, chained by SHA-256 so that a removed or edited line is
 * detectable. Host side only: the worker never sees the log.
 *
 * audit_log.c is the shared log (the file, its locks, the chain, the
 * callback); audit.c turns each event into its fields.
 */
#ifndef CI_AUDIT_H
#define CI_AUDIT_H

#include <stddef.h>

#include "codeinterp.h"

/* A log shared by a config and every session started from it (or from a
 * copy), counted: ci_audit_ref() for each holder, ci_audit_unref() when
 * it lets go. Its writes are serialized by its own mutex, and against
 * other processes appending to the same file by flock(2). */
struct ci_audit;

/* A new log appending to @path (NULL: none) and calling @fn (NULL: none)
 * with @payload; the file is opened at its first event. NULL when memory
 * ran out. */
struct ci_audit *ci_audit_new(const char *path, ci_event_fn fn, void *payload);
struct ci_audit *ci_audit_ref(struct ci_audit *a); /* NULL-safe */
void ci_audit_unref(struct ci_audit *a);           /* NULL-safe */
/* What @a was made with, for a setter that replaces one half. */
const char *ci_audit_path(const struct ci_audit *a);
ci_event_fn ci_audit_fn(const struct ci_audit *a, void **payload);

/*
 * Appends one line: {"seq":N,"time":"...","session":"@session","prev":"...",
 * then @body, the event's own members as a JSON object's inside (no braces,
 * not empty). Under the log's lock: the file's last line gives seq and prev
 * when the file is new to us or grew meanwhile. 0, or -1 with @msg (a
 * sentence) when the line could not be written whole or the callback
 * refused it; the chain then stays where the file is.
 */
int ci_audit_write(struct ci_audit *a, const char *session, const char *body, size_t len,
                   char *msg, size_t msglen);

/* The first line's prev: 64 zeros. */
#define CI_AUDIT_FIRST_PREV "0000000000000000000000000000000000000000000000000000000000000000"
/* The longest line read back to continue a chain (bytes). */
#define CI_AUDIT_LINE_MAX (16u * 1024 * 1024)
/* The bytes of a URL an http event keeps; url_bytes gives its length. */
#define CI_AUDIT_URL_MAX 8192
/* Changed files a cell event names, and bytes of their names together
 * (a name's byte is at most 6 in JSON: the line stays under
 * CI_AUDIT_LINE_MAX); the rest are counted. */
#define CI_AUDIT_FILES_MAX 1000
#define CI_AUDIT_FILE_NAMES_MAX (1024u * 1024)
/* The bytes of an exception's name a cell or kill event keeps: the cell
 * names its own classes, up to the output limit. */
#define CI_AUDIT_NAME_MAX 1024u

/*
 * audit.c: the events. Each is a no-op returning CI_OK when the session's
 * config has no log. On a failed write each returns CI_EIO, with the
 * session's message saying why, and marks the session (audit_failed):
 * ci_run, put and get then refuse with CI_EIO until a restart's event is
 * written. @s's id is made by ci_audit_session_id().
 */
struct ci_session;
struct ci_result;
/* Fills @s's id: 32 hex digits from getrandom(2). */
void ci_audit_session_id(struct ci_session *s);
/* CI_OK when @s may go on: its config has no log, or nothing failed. */
int ci_audit_check(struct ci_session *s);
/* A worker started (layers, limits, manifest) or failed to (@rc). */
int ci_audit_session_start(struct ci_session *s, int rc);
int ci_audit_session_end(struct ci_session *s);
int ci_audit_restart(struct ci_session *s, int rc);
/* Before the cell is sent: its number, SHA-256 and size. */
int ci_audit_cell_start(struct ci_session *s, int count, const char *code, size_t len);
/* After it: its status, times, memory and changed files; a "kill" event
 * too when the worker died. */
int ci_audit_cell(struct ci_session *s, const char *code, size_t len, const struct ci_result *r);
/* A VIOLATION frame: the worker names the system call the filter refused. */
int ci_audit_violation(struct ci_session *s, const char *syscall_name);
/* ci_session_put_file or _get_file (@op "put" or "get") of @name: @data
 * and @len what was written or read (NULL when it failed), @rc its code. */
int ci_audit_file(struct ci_session *s, const char *op, const char *name, const void *data,
                  size_t len, int rc);
/* ci_session_snapshot (@op "snapshot"), ci_session_restore ("restore",
 * before its files and state go in; "restore_failed" after) of the
 * snapshot @data of @len bytes (NULL when it failed), which ends with
 * its own SHA-256 (docs/snapshot-format.md); @rc its code. */
int ci_audit_snapshot(struct ci_session *s, const char *op, const void *data, size_t len, int rc);
/* The refusals the worker reported with @r, the run of a snapshot or a
 * restore (@op "snapshot" or "restore"): a pickle's code meets the
 * sandbox as a cell's does. */
int ci_audit_pickle_refusals(struct ci_session *s, const char *op, const struct ci_result *r);
/* ci_session_fork of @s made @branch (whose restore event came before). */
int ci_audit_fork(struct ci_session *s, const struct ci_session *branch);
/* A host function's call: its name, the arguments' and the reply's sizes
 * and the reply's status (CI_CALL_*, proto.h). */
int ci_audit_call(struct ci_session *s, const char *function, size_t args_len,
                  unsigned status, size_t reply_len);
/*
 * An HTTP request made for the cell through the host: @method and @url as
 * asked (NUL-terminated; a URL that is not UTF-8 is logged with its bad
 * bytes replaced by U+FFFD), @status the HTTP status (0: no response, as for a refusal or a failed
 * connection), @bytes the response body's size, @allowed 1 if the allow
 * list let it through, 0 if it was refused.
 */
int ci_audit_http(struct ci_session *s, const char *method, const char *url, int status,
                  unsigned long long bytes, int allowed);
/*
 * A cell's %pip install of the wheel @file (@file_len bytes, as the
 * worker named it): the INSTALL_REPLY's @status (CI_INSTALL_*, proto.h)
 * and its @len bytes at @data, the installed distribution's JSON or the
 * reason it was refused or failed (its first 1024 bytes are kept).
 */
int ci_audit_install(struct ci_session *s, const char *file, size_t file_len, unsigned status,
                     const char *data, size_t len);

#endif /* CI_AUDIT_H */
