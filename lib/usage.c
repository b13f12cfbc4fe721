/*
 * A run's resources, measured from the host side: the worker is untrusted,
 * so its own account of them would be worth nothing.
 *
 *  - wall time: CLOCK_MONOTONIC around the run;
 *  - CPU time: the worker's process CPU clock (clock_getcpuclockid(3)),
 *    which counts every thread, read before and after;
 *  - peak memory: VmHWM from /proc/<pid>/status (proc(5)), after writing
 *    "5" to /proc/<pid>/clear_refs to reset it to the current RSS. The
 *    worker is not dumpable, so its /proc files belong to root and only a
 *    root host may write that file; elsewhere the peak counts from the
 *    worker's start.
 *
 * Both /proc files are opened for each run and closed again
 * (ci_worker_proc_open, which makes sure they are the worker's), so an
 * idle session holds no descriptor for them: six system calls a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "result.h"
#include "session.h"
#include "usage.h"

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Its clock id is asked for once (glibc checks the pid with clock_getres). */
int64_t ci_worker_cpu_ns(struct ci_worker *w)
{
    struct timespec ts;

    if (w->pid <= 0)
        return -1;
    if (w->cpu_clock_known == 0)
        w->cpu_clock_known = clock_getcpuclockid(ci_worker_task(w), &w->cpu_clock) == 0 ? 1 : -1;
    if (w->cpu_clock_known < 0 || clock_gettime(w->cpu_clock, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void reset_peak(struct ci_worker *w)
{
    int fd;

    if (w->clear_refs_denied)
        return;
    fd = ci_worker_proc_open(w, "clear_refs", O_WRONLY);
    if (fd < 0 && errno != ESRCH)
        w->clear_refs_denied = 1; /* not root: do not try again */
    if (fd >= 0 && write(fd, "5", 1) != 1)
        w->clear_refs_denied = 1;
    if (fd >= 0)
        close(fd);
}

/* VmHWM in bytes, or 0 if it cannot be read. */
static unsigned long long read_peak(struct ci_worker *w)
{
    char buf[4096], *line;
    ssize_t n;
    int fd = ci_worker_proc_open(w, "status", O_RDONLY);

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    line = strstr(buf, "\nVmHWM:");
    if (!line)
        return 0;
    return strtoull(line + 7, NULL, 10) * 1024; /* kB */
}

void ci_usage_begin(struct ci_worker *w, struct ci_usage *u)
{
    reset_peak(w);
    u->cpu_ns = ci_worker_cpu_ns(w);
    u->start_ns = monotonic_ns();
}

void ci_usage_end(struct ci_worker *w, const struct ci_usage *u, ci_result *r)
{
    int64_t now = monotonic_ns(), cpu;

    r->wall_us = (unsigned long long)(now - u->start_ns) / 1000;
    if (w->pid <= 0 || r->rolled_back)
        return; /* dead (and reaped, or replaced by its checkpoint): its clocks are gone */
    cpu = ci_worker_cpu_ns(w);
    if (cpu >= 0 && u->cpu_ns >= 0 && cpu >= u->cpu_ns)
        r->cpu_us = (unsigned long long)(cpu - u->cpu_ns) / 1000;
    r->peak_memory = read_peak(w);
}
