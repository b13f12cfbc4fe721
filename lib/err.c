/*
 * The error channel of lib/err.h: setting and copying a code and its
 * message. libc only, so the worker links it too.
 */
#include <stdio.h>
#include <string.h>

#include "codeinterp.h"
#include "err.h"

void ci_err_clear(struct ci_err *err)
{
    if (!err)
        return;
    err->code = CI_OK;
    err->msg[0] = '\0';
}

int ci_err_vset(struct ci_err *err, int code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->msg[0] = '\0';
    if (fmt)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return code;
}

int ci_err_set(struct ci_err *err, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ci_err_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}
