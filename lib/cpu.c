/*
 * The worker's CPU, held to its cells.
 *
 * Between cells the whole worker is stopped: SIGSTOP through its pidfd
 * once a cell's result is in, SIGCONT before the next cell is sent. The
 * timeout interrupts only the main thread, so without this a thread a
 * cell started and left running would burn a core for the rest of the
 * session. The worker cannot fork (the seccomp policy allows clone only
 * with thread flags), so its threads are all there is to stop. SIGSTOP
 * cannot be caught, blocked or ignored, reaches a worker that is the init
 * of its own PID namespace since it comes from an ancestor namespace
 * (pid_namespaces(7)), and SIGKILL still ends a stopped process, so
 * ci_session_free and ci_session_restart need nothing more. A stopped
 * system call resumes with restart_syscall, which the policy allows.
 *
 * A lifetime budget (ci_config_set_cpu_limit) is RLIMIT_CPU, soft and hard
 * alike, which the worker sets on itself as it locks down (lockdown.c):
 * the host cannot set another uid's limits without CAP_SYS_RESOURCE,
 * which containers drop. The host then reads it back from the kernel
 * (/proc/PID/limits) and refuses a worker without it. The kernel kills
 * the worker (SIGKILL) when its threads' CPU time reaches it, and no cell
 * can raise it (that needs CAP_SYS_RESOURCE in the initial user
 * namespace) nor set it at all (the policy allows prlimit64 only to read
 * its own limits).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codeinterp.h"
#include "cpu.h"
#include "err.h"
#include "session.h"
#include "usage.h"

/* Through the pidfd where there is one, so a recycled pid is never hit. */
static void send_to_worker(const struct ci_worker *w, int sig)
{
    int pidfd = ci_worker_task_pidfd(w);

    if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
        return;
    if (pidfd < 0)
        kill(ci_worker_task(w), sig);
}

void ci_worker_pause(struct ci_worker *w)
{
    if (w->pid <= 0 || w->paused)
        return;
    send_to_worker(w, SIGSTOP);
    w->paused = 1;
}

void ci_worker_resume(struct ci_worker *w)
{
    if (w->pid <= 0 || !w->paused)
        return;
    send_to_worker(w, SIGCONT);
    w->paused = 0;
}

int ci_worker_read_cpu_limit(const struct ci_worker *w, unsigned long long *soft,
                             unsigned long long *hard)
{
    static const char name[] = "\nMax cpu time";
    char buf[4096], *line;
    ssize_t n;
    int fd = ci_worker_proc_open(w, "limits", O_RDONLY);

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if (!(line = strstr(buf, name)))
        return -1;
    return sscanf(line + sizeof name - 1, " %llu %llu", soft, hard) == 2 ? 0 : -1;
}

int ci_worker_check_cpu_limit(struct ci_worker *w, unsigned long seconds, struct ci_err *err)
{
    unsigned long long soft, hard;
    int64_t used = ci_worker_cpu_ns(w);

    if (seconds == 0)
        return CI_OK;
    /* It set the budget on top of the whole seconds its start used, which
     * are fewer than it has used by now. */
    if (ci_worker_read_cpu_limit(w, &soft, &hard) < 0 || soft != hard || hard < seconds || used < 0 ||
        hard > seconds + (unsigned long long)used / 1000000000 + 1)
        return ci_err_set(err, CI_ESPAWN, "the worker did not set its CPU limit of %lu s "
                          "(RLIMIT_CPU, as its /proc/PID/limits shows it)", seconds);
    w->cpu_limit_s = w->cpu_budget_s = hard;
    return CI_OK;
}

int ci_worker_cpu_limited(const struct ci_worker *w, int st, unsigned long long cpu_us)
{
    unsigned long long limit_us = w->cpu_limit_s * 1000000ULL, slack = limit_us / 10;

    /* The kernel holds the limit against CPU time sampled at each tick,
     * and wait4 reports the scheduler's exact count, which a loaded
     * machine made 2% lower here: a SIGKILL within 10% of the limit (or
     * 100 ms) is the kernel's. No one else kills the worker so but the
     * host, which names its own kills, the OOM killer, or the cell. */
    if (slack < 100000)
        slack = 100000;
    return w->cpu_limit_s && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL &&
           cpu_us + slack >= limit_us;
}
