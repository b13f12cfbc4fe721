/*
 * A session's message (ci_session_errmsg) and the thread's, for calls
 * without a session (errors.c); sizes named as limits are named.
 */
#ifndef CI_ERRORS_H
#define CI_ERRORS_H

#include <stddef.h>

#include "codeinterp.h"

void ci_set_errmsg(ci_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ci_set_thread_errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* @bytes as a limit is named: "1 MiB", "1.5 GiB", "1.46 KiB", "1000
 * bytes" (two decimals at most; outputs.size() in the worker agrees). */
void ci_format_size(char *out, size_t size, unsigned long long bytes);

#endif /* CI_ERRORS_H */
