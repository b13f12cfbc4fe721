/*
 * The reaper of a session with rollback (ci_config_set_rollback).
 *
 * A zygote's child is pid 1 of its PID namespace, and when pid 1 dies
 * the kernel kills every other process of the namespace
 * (pid_namespaces(7)). A checkpoint (checkpoint.c) must outlive the
 * worker it copies, so in such a session pid 1 forks the worker at once
 * and stays behind as this reaper: it runs no Python, holds only the
 * channel, and waits. The checkpoint is the worker's child; when the
 * worker dies the kernel makes it ours, and the reaper only reaps:
 *
 *   - every child it reaps is a worker that ended (a checkpoint made
 *     obsolete is reaped by the worker that made it), so it says how, an
 *     ENDED frame (proto.h): the host learns of the death from it;
 *   - once it has no child left it exits with that last status, as the
 *     worker it outlived would have (a signal as 128 + its number, the
 *     exit of a namespace's init: init.c).
 *
 * The host kills the reaper to end the session, which ends the rest.
 */
#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"
#include "worker.h"

/* One ENDED frame, whole (a write this small on a stream socket is one
 * piece) or not at all: the host is gone if it fails. */
static void report(int st, const struct rusage *ru)
{
    struct {
        struct ci_frame_header h;
        uint32_t status, zero;
        uint64_t cpu_us;
    } f = {{CI_FRAME_ENDED, 16}, (uint32_t)st, 0,
           (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000 +
               (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec)};
    ssize_t n;

    do
        n = write(CI_FD_CHANNEL, &f, sizeof f);
    while (n < 0 && errno == EINTR);
}

/* What the reaper may do from here on: wait, write its frames, exit. */
static void confine(void)
{
    static const int allowed[] = {SCMP_SYS(wait4), SCMP_SYS(write), SCMP_SYS(exit_group),
                                  SCMP_SYS(exit), SCMP_SYS(rt_sigreturn),
                                  SCMP_SYS(restart_syscall)};
    scmp_filter_ctx ctx;
    int rc = -ENOMEM;

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_NO_NEW_PRIVS, "reaper: prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (ctx) {
        rc = 0;
        for (size_t i = 0; rc == 0 && i < sizeof allowed / sizeof *allowed; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
        if (rc == 0)
            rc = seccomp_load(ctx);
        seccomp_release(ctx);
    }
    if (rc != 0)
        ci_fatal(CI_EXIT_SECCOMP, "reaper: seccomp: %s", strerror(-rc));
}

static _Noreturn void reap(void)
{
    int last = 0;

    for (;;) {
        struct rusage ru;
        int st;
        pid_t pid = wait4(-1, &st, __WALL, &ru);

        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0) /* ECHILD: no worker and no checkpoint left */
            _exit(WIFSIGNALED(last) ? 128 + WTERMSIG(last) : WEXITSTATUS(last));
        last = st;
        report(st, &ru);
    }
}

int ci_reaper_start(void)
{
    pid_t pid;

    if (getpid() != 1)
        return 0; /* no PID namespace of our own: no rollback */
    pid = ci_interp_fork(0);
    if (pid < 0)
        ci_fatal(CI_EXIT_NAMESPACES, "reaper: fork: %s", strerror(-pid));
    if (pid == 0) {
        ci_tie_to_reaper();
        return 1;
    }
    /* Nothing of the session's but the channel; the cwd is the
     * workspace's, which it must not pin. */
    if (chdir("/") != 0 || close_range(0, CI_FD_CHANNEL - 1, 0) != 0 ||
        close_range(CI_FD_CHANNEL + 1, ~0u, 0) != 0)
        ci_fatal(CI_EXIT_DESCRIPTORS, "reaper: %s", strerror(errno));
    confine();
    reap();
}
