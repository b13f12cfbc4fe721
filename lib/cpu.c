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
 */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Through the pidfd where there is one, so a recycled pid is never hit. */
static void send_to_worker(const struct ci_worker *w, int sig)
{
    if (w->pidfd >= 0 && syscall(SYS_pidfd_send_signal, w->pidfd, sig, NULL, 0) == 0)
        return;
    if (w->pidfd < 0)
        kill(w->pid, sig);
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
