/*
 * Runs that are no cell (run.c), for snapshots (snapshot.c).
 */
#ifndef CI_RUN_H
#define CI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "codeinterp.h"

/*
 * Runs a RUN with @flags (CI_RUN_FLAG_SNAPSHOT or CI_RUN_FLAG_RESTORE) on
 * the live session @s, which the caller has made busy: its payload after
 * the head is @a then @b, its count one of its own (CI_RUN_COUNT_INTERNAL),
 * the session's execution count untouched, its timeout, interrupt and
 * grace period a cell's. @state_cap is a SNAPSHOT's largest state (0 for
 * any other run); *@payload (may be NULL) receives the RESULT frame's
 * payload, which (*@out)->snap.state points into, or NULL. CI_OK with
 * *@out (the caller's, ci_result_free) or CI_ENOMEM.
 */
int ci_run_internal(ci_session *s, uint32_t flags, const void *a, size_t alen, const void *b,
                    size_t blen, size_t state_cap, ci_result **out, unsigned char **payload);

#endif /* CI_RUN_H */
