/* Return codes and messages, from the one list in codeinterp.h. */
#include <stdio.h>
#include <string.h>

#include "errors.h"
#include "session.h"

CI_API const char *ci_strerror(int code)
{
    switch (code) {
#define CI_ERROR_CASE_(name, value, message) \
    case value:                              \
        return message;
        CI_ERRORS(CI_ERROR_CASE_)
#undef CI_ERROR_CASE_
    }
    return "unknown error";
}

CI_API const char *ci_status_name(ci_status status)
{
    static const char *const names[] = {
        [CI_STATUS_OK] = "ok",         [CI_STATUS_ERROR] = "error",
        [CI_STATUS_TIMEOUT] = "timeout", [CI_STATUS_MEMORY] = "memory",
        [CI_STATUS_KILLED] = "killed", [CI_STATUS_INTERRUPTED] = "interrupted",
    };
    if ((unsigned)status < sizeof names / sizeof names[0])
        return names[status];
    return "unknown";
}

void ci_format_size(char *out, size_t size, unsigned long long bytes)
{
    static const char *const units[] = {"TiB", "GiB", "MiB", "KiB"};
    char n[32];
    size_t len;

    for (int i = 0; i < 4; i++) {
        unsigned long long unit = 1ULL << (40 - 10 * i);
        if (bytes < unit)
            continue;
        /* Two decimals at most, no trailing zeros: 1.5 GiB, 1.46 KiB. */
        snprintf(n, sizeof n, "%.2f", (double)bytes / (double)unit);
        len = strlen(n);
        while (n[len - 1] == '0')
            n[--len] = '\0';
        if (n[len - 1] == '.')
            n[--len] = '\0';
        snprintf(out, size, "%s %s", n, units[i]);
        return;
    }
    snprintf(out, size, "%llu byte%s", bytes, bytes == 1 ? "" : "s");
}

/* The detail of the calling thread's last failed ci_session_new(), which
 * has no session to hold it (libgit2's git_error_last() is per thread too). */
static _Thread_local struct ci_err thread_err;

struct ci_err *ci_thread_err(void)
{
    return &thread_err;
}

CI_API const char *ci_session_errmsg(const ci_session *s)
{
    return s ? s->err.msg : thread_err.msg;
}
