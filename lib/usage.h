/*
 * The worker's resources, read from the host side (usage.c).
 */
#ifndef CI_USAGE_H
#define CI_USAGE_H

#include <stdint.h>

#include "codeinterp.h"
#include "session.h"

struct ci_usage {
    int64_t start_ns; /* CLOCK_MONOTONIC */
    int64_t cpu_ns;   /* the worker's CPU clock, -1 if unreadable */
};
/* Resets the worker's peak RSS where allowed, and notes the clocks. */
void ci_usage_begin(struct ci_worker *w, struct ci_usage *u);
/* Fills r->wall_us, and r->cpu_us and r->peak_memory while the worker lives. */
void ci_usage_end(struct ci_worker *w, const struct ci_usage *u, ci_result *r);
/* The worker's CPU time, all its threads, in ns; -1 if unreadable. */
int64_t ci_worker_cpu_ns(struct ci_worker *w);

#endif /* CI_USAGE_H */
