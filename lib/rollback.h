/*
 * Rollback, the host's side (rollback.c, docs/rollback.md): finding the
 * worker under its reaper, holding its seccomp listener, letting the
 * checkpoint's clone through, and taking the checkpoint as the worker
 * once the worker died in a cell.
 */
#ifndef CI_ROLLBACK_H
#define CI_ROLLBACK_H

#include <stdint.h>

#include "channel.h"
#include "err.h"
#include "session.h"

/* 1 if this host can find a worker under its reaper: a reaper is only
 * asked for then (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN). */
int ci_rollback_possible(void);

/* After READY: when it named a listener, @w->pid is the reaper; finds
 * the worker, its only child, into w->task_pid and w->task_pidfd, and
 * takes the listener into w->listener (-1 if it cannot be had: the
 * session then has no rollback, ci_session_rollback_active). CI_OK, or
 * CI_ESPAWN with @err if the worker cannot be found. */
int ci_rollback_attach(struct ci_worker *w, struct ci_err *err);

/* Answers the seccomp notification waiting on w->listener: the clone of
 * the checkpoint, from the worker's main thread while w->armed (from the
 * RUN until CHECKPOINTED) and the worker has no child, goes through; any
 * other is refused with EPERM. */
void ci_rollback_answer(struct ci_worker *w);

/* The worker died in the cell of count @count, whose checkpoint was let
 * through (w->checkpoint): kills what is left of it, reads from @rd the
 * reaper's ENDED (unless *@ended: it came; then *@ended is set, its wait
 * status and CPU time in *@st and *@cpu_us) and the checkpoint's
 * ROLLED_BACK (unless @rolled: it came), until @deadline_ms, then makes
 * the checkpoint w's task. 0 if so; -1 if it cannot be (the stream was
 * mid-frame, another frame came, the time ran out, the checkpoint is not
 * to be found), and then the session must end. */
int ci_rollback_take_over(struct ci_worker *w, struct ci_reader *rd, uint32_t count, int *ended,
                          int *st, unsigned long long *cpu_us, int rolled, int64_t deadline_ms);

/*
 * After ci_rollback_take_over(), with a CPU limit (ci_config_set_cpu_limit),
 * which is the session's over its whole life: what the dead worker used
 * (@cpu_us, the reaper's word) is spent, and the checkpoint, w's task now,
 * whose clock started again near zero, is told to keep what is left as its
 * RLIMIT_CPU (CPU_BUDGET) and checked to have done so, until
 * @deadline_ms. 0 (also without a limit), or -1 if nothing is left or it
 * did not: then the session must end.
 */
int ci_rollback_keep_cpu_budget(struct ci_worker *w, unsigned long long cpu_us,
                                int64_t deadline_ms);

/* A ROLLED_BACK or CHECKPOINTED frame's payload, for the cell of count
 * @count: 0, or -1 with @why. */
int ci_count_parse(const unsigned char *p, size_t len, uint32_t count, const char **why);

/* How many children the worker's main thread has that live on (not
 * dead, exiting or killed), leaving out @except: none but its checkpoint,
 * which it kills, after the cell. A fork the host approved that was not
 * the checkpoint's (a cell that took over the main thread at that moment)
 * shows as one. */
int ci_rollback_children(const struct ci_worker *w, pid_t except);

/* How many children the worker's main thread has, in any state, with
 * the first in *@pid: at CHECKPOINTED, 1, the checkpoint (maybe killed
 * already, if the cell was quick); -1 if they cannot be listed. */
int ci_rollback_checkpoint_pid(const struct ci_worker *w, pid_t *pid);

/* An ENDED frame's payload: 0 with the wait status and CPU time, or -1
 * with @why. */
int ci_ended_parse(const unsigned char *p, size_t len, int *st, unsigned long long *cpu_us,
                   const char **why);

#endif /* CI_ROLLBACK_H */
