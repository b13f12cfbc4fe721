/*
 * One error channel for code inside the library: a return code and the
 * one-line message that explains it, passed down by the caller as
 * libgit2 passes its error state, so that a failure deep in a call chain
 * reaches the caller with its reason and no layer in between formats
 * buffers of its own. The code is the truth (a CI_E* of codeinterp.h);
 * the message is detail for a person.
 *
 * A session holds one (s->err, which ci_session_errmsg() reads), and so
 * does each thread for the calls that fail before a session exists
 * (ci_thread_err(), errors.h); everything below them reports into the
 * one it is given: the worker's start (spawn.c, zygote.c, session.c),
 * the files (files.c), host functions, the package manifest
 * (lib/manifest*.c, lib/worker/manifest.c, tools/manifest/).
 */
#ifndef CI_ERR_H
#define CI_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* As long as a session's own message (ci_session_errmsg), so a message
 * passed through the channel is never cut shorter than it would be there. */
#define CI_ERR_MSG_MAX 1024

struct ci_err {
    int code;                 /* CI_OK, or the CI_E* of the failure */
    char msg[CI_ERR_MSG_MAX]; /* NUL-terminated; "" when there is no detail */
};

/* Clears @err: code CI_OK, message "". @err may be NULL. Cannot fail. */
void ci_err_clear(struct ci_err *err);

/*
 * Records @code and the printf-style message @fmt (cut to fit, always
 * NUL-terminated; NULL leaves the message ""), replacing what @err held.
 * @err may be NULL: nothing is recorded. Returns @code, so a failure is
 * `return ci_err_set(err, CI_EIO, "...")`. Not thread-safe on one @err;
 * each caller passes its own.
 */
int ci_err_set(struct ci_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ci_err_vset(struct ci_err *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif /* CI_ERR_H */
