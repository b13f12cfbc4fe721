/*
 * A session's message (ci_session_errmsg) and the thread's, for calls
 * without a session (errors.c); sizes named as limits are named.
 */
#ifndef CI_ERRORS_H
#define CI_ERRORS_H

#include <stddef.h>

#include "codeinterp.h"
#include "err.h"

/* The calling thread's error, for the calls that fail before a session
 * exists to hold one (ci_session_new, the config's setters):
 * ci_session_errmsg(NULL) reads its message. Never NULL. */
struct ci_err *ci_thread_err(void);
/* @bytes as a limit is named: "1 MiB", "1.5 GiB", "1.46 KiB", "1000
 * bytes" (two decimals at most; outputs.size() in the worker agrees). */
void ci_format_size(char *out, size_t size, unsigned long long bytes);

#endif /* CI_ERRORS_H */
