/*
 * Checkpoints, for rollback (ci_config_set_rollback, docs/rollback.md).
 *
 * Before each cell of such a session the worker forks: the child, the
 * checkpoint, shares every page with the worker until one of them writes
 * it (copy on write), so the copy costs the page tables, not the state.
 * The checkpoint only waits, on a pipe whose one writer is the worker:
 *
 *   - the cell ends (whatever its outcome): the worker kills the
 *     checkpoint before the RESULT goes, so no death after that point is
 *     rolled back, and reaps it after;
 *   - the worker dies in the cell: the pipe reads end-of-file, and the
 *     checkpoint, whose interpreter is the worker's as the cell found it,
 *     takes its place (main.c says so to the host).
 *
 * The fork itself is a clone the seccomp filter sends to the host, which
 * lets it through only here (seccomp.c, lib/rollback.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker.h"

static pid_t live = 0;    /* the checkpoint of the running cell, or 0 */
static int live_pipe = -1; /* the write end of its pipe */
/* Killed by ci_checkpoint_drop(), not yet reaped. A copy of a big
 * process takes milliseconds to tear down, which it does on its own
 * while the worker answers; but it is reaped before the next cell runs,
 * for a worker that dies must leave no dead checkpoint to the reaper,
 * which takes every child it reaps for a worker (reaper.c). */
static pid_t dropped = 0;

/* Reaps the dropped checkpoint, waiting for its end only if @wait. */
static void reap(int wait)
{
    pid_t r;

    if (dropped <= 0)
        return;
    do
        r = waitpid(dropped, NULL, __WALL | (wait ? 0 : WNOHANG));
    while (r < 0 && errno == EINTR);
    if (r != 0)
        dropped = 0;
}

void ci_checkpoint_reap(void)
{
    reap(0);
}

/* In the checkpoint: returns once the worker has gone (end-of-file: its
 * end of the pipe closed). Anything else ends the checkpoint; the worker
 * itself ends it with SIGKILL (ci_checkpoint_drop). */
static void wait_for_worker_end(int fd)
{
    char byte;
    ssize_t n;

    do
        n = read(fd, &byte, 1);
    while (n < 0 && errno == EINTR);
    if (n != 0)
        _exit(0);
    close(fd);
}

int ci_checkpoint_make(void)
{
    int p[2];
    pid_t pid;

    reap(1);
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid = ci_interp_fork_checkpoint();
    if (pid < 0) {
        /* The host refused the clone, or the task limit did. */
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        wait_for_worker_end(p[0]);
        live = 0;
        ci_interp_take_over();
        return 1;
    }
    close(p[0]);
    live = pid;
    live_pipe = p[1];
    return 0;
}

int ci_checkpoint_drop(void)
{
    if (live <= 0)
        return 0;
    /* SIGKILL rather than the pipe's byte: it is gone at once, even if
     * the cell's threads hold the pipe or the checkpoint's read. */
    kill(live, SIGKILL);
    close(live_pipe);
    live_pipe = -1;
    dropped = live;
    live = 0;
    return 1;
}
