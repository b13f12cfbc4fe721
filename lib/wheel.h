/*
 * The signed wheelhouse (ci_config_set_wheelhouse, wheel.c): the session
 * start's checks, the site directory, and the host's answers to a cell's
 * INSTALL requests (proto.h): the listing of the manifest's wheels, and
 * the install of one of them, which the host reads, checks against the
 * manifest's SHA-256 and unpacks itself. docs/wheelhouse.md describes it.
 */
#ifndef CI_WHEEL_H
#define CI_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

/* The session directory's entry for installed packages. */
#define CI_SITE_DIR "site"

/* The most bytes of one wheel file the host reads (it holds it in memory
 * while it checks and unpacks it), the most its entries may unpack to,
 * and the most entries it may have. */
#define CI_WHEEL_FILE_MAX (512ull * 1024 * 1024)
#define CI_WHEEL_UNPACKED_MAX (2ull * 1024 * 1024 * 1024)
#define CI_WHEEL_ENTRIES_MAX 100000u

/* What the host answers an INSTALL: its status (CI_INSTALL_*) and the
 * bytes after it (JSON or a message; malloc'ed, NULL when there are none
 * or memory ran out). */
struct ci_install_reply {
    uint32_t status;
    char *data;
    size_t len;
};

/*
 * At a session's start: a config with a wheelhouse needs a manifest, and
 * its wheelhouse must be a directory. CI_OK, or CI_EMANIFEST with @s->err.
 */
int ci_wheelhouse_check(ci_session *s);

/*
 * The site directory in the new session directory @dirfd when the config
 * has a wheelhouse: the host's, mode 0755 (the worker may read and map it,
 * never write it). 0 (also without a wheelhouse), or -1 with errno.
 */
int ci_site_make(const ci_session *s, int dirfd);

/* An INSTALL payload, checked: 0 with its op and argument (@arg_len bytes
 * at *@arg, not NUL-terminated), or -1 with @why (a static sentence). */
int ci_install_parse(const unsigned char *p, size_t len, uint32_t *op, const char **arg,
                     size_t *arg_len, const char **why);

/*
 * Answers one INSTALL of @s into @out. @stop is asked between a wheel's
 * entries: nonzero stops the install, undoes it, and answers
 * CI_INSTALL_STOPPED. Never fails: a refusal or failure is the answer.
 */
void ci_install_serve(ci_session *s, uint32_t op, const char *arg, size_t arg_len,
                      int (*stop)(void *), void *stop_arg, struct ci_install_reply *out);

#endif /* CI_WHEEL_H */
