/*
 * The worker as pid 1 of its PID namespace (a zygote's child, zygote.c).
 *
 * The kernel gives a namespace's init only the signals it has a handler
 * for, when they come from inside the namespace (pid_namespaces(7)): a
 * cell's os.kill(os.getpid(), SIGKILL), os.abort() or signal.alarm()
 * would be ignored, where in Jupyter, or in a worker started by exec,
 * they end the process. Signals from the host (its SIGKILL, outside the
 * namespace) and those the kernel forces (a fault, the seccomp filter)
 * still arrive as anywhere else.
 *
 * So each signal whose default action ends a process gets a handler that
 * tells the host which signal it was (a SIGNALED frame) and exits with
 * 128 + its number; the host reports that as death by the signal. A
 * SIGKILL, which has no handler, is trapped by the seccomp filter instead
 * (ci_seccomp_load) and reported from the SIGSYS handler the same way. A
 * cell that sets a handler of its own replaces ours, as it would replace
 * the default action anywhere; one that sets SIG_DFL back gets the
 * kernel's init rule: the signal is ignored.
 *
 * The faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP) keep their default
 * action: the kernel forces them, so a real fault ends the worker as it
 * would any process. Only the same signals sent with kill(2) are ignored.
 */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto.h"
#include "worker.h"

/* Default action "Term" or "Core" in signal(7), minus the forced faults,
 * SIGKILL (trapped), SIGINT (the host's interrupt) and SIGSYS (seccomp.c);
 * then every real-time signal from glibc's SIGRTMIN (glibc keeps the two
 * below for its threads). */
static const int terminating[] = {
    SIGHUP, SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
    SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR,
};

_Noreturn void ci_init_die_by(int sig)
{
    struct {
        struct ci_frame_header h;
        uint32_t sig;
    } f = {{CI_FRAME_SIGNALED, sizeof(uint32_t)}, (uint32_t)sig};

    /* Async-signal-safe only. Never blocks: if the channel is full, the
     * host sees an exit status instead. */
    send(CI_FD_CHANNEL, &f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
    syscall(SYS_exit_group, 128 + sig);
    for (;;)
        ;
}

static void on_terminating(int sig)
{
    ci_init_die_by(sig);
}

static void take(int sig)
{
    struct sigaction now, sa;

    /* A signal CPython ignores (SIGPIPE, SIGXFSZ) or handles (SIGINT)
     * stays as it is. */
    if (sigaction(sig, NULL, &now) != 0 || now.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_terminating;
    sigfillset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void ci_init_signals(void)
{
    if (getpid() != 1)
        return;
    for (size_t i = 0; i < sizeof terminating / sizeof *terminating; i++)
        take(terminating[i]);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        take(sig);
}
