/*
 * The worker's CPU, held to its cells (cpu.c): stopped between cells, and
 * its lifetime CPU limit.
 */
#ifndef CI_CPU_H
#define CI_CPU_H

#include "err.h"
#include "session.h"

/* Stops every thread of the live worker @w (SIGSTOP) once its cell has
 * ended, so a thread the cell left running uses no CPU until the next
 * cell; a no-op on one that is gone or already stopped. */
void ci_worker_pause(struct ci_worker *w);
/* Lets a stopped worker run again (SIGCONT): before anything is sent to
 * it. A no-op on one that runs. */
void ci_worker_resume(struct ci_worker *w);
/* Checks that the ready worker @w set its RLIMIT_CPU, soft and hard, to
 * @seconds on top of the whole seconds its start used (nothing to check
 * for 0), and notes it in w->cpu_limit_s. CI_OK, or CI_ESPAWN in @err. */
/* The soft and hard RLIMIT_CPU of the worker, from its /proc/PID/limits
 * (proc(5)): 0, or -1 if unreadable or unlimited. */
int ci_worker_read_cpu_limit(const struct ci_worker *w, unsigned long long *soft,
                             unsigned long long *hard);
int ci_worker_check_cpu_limit(struct ci_worker *w, unsigned long seconds, struct ci_err *err);
/* 1 if a worker that ended with wait status @st after @cpu_us of CPU time
 * was killed by the kernel at its CPU limit. */
int ci_worker_cpu_limited(const struct ci_worker *w, int st, unsigned long long cpu_us);

#endif /* CI_CPU_H */
