/*
 * Rollback, the host's side (docs/rollback.md).
 *
 * A session with rollback has, in its PID namespace, a reaper (pid 1,
 * the host's child: w->pid), the worker (its child: w->task_pid), and,
 * while a cell runs, the worker's checkpoint, a fork made just before the
 * cell (lib/worker/checkpoint.c). The host
 *
 *   - finds the worker after READY, as the reaper's only child, and
 *     takes a copy of its seccomp listener with pidfd_getfd(2): the
 *     worker closes its own when its first frame arrives, before any
 *     cell, so no cell ever holds it;
 *   - answers every fork the filter sends it: the one a RUN with
 *     CI_RUN_FLAG_CHECKPOINT asked for, from the worker's main thread
 *     with glibc's fork() flags, goes through, until the worker says it
 *     has its checkpoint (CHECKPOINTED); any other is EPERM;
 *   - when the worker dies in the cell (the reaper's ENDED frame, or the
 *     host's own kill at the grace period), reads the checkpoint's
 *     ROLLED_BACK, finds it as the reaper's only child, and runs the
 *     next cells in it.
 *
 * Every pid is checked through a pidfd opened before the check, so a pid
 * reused after a death is never taken for the process it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "cpu.h"
#include "proto.h"
#include "rollback.h"

/* The flags of glibc's fork(), which the worker's filter sends here
 * (lib/worker/seccomp.c's FORK_FLAGS). */
#define FORK_FLAGS (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)

int ci_rollback_possible(void)
{
    char path[64];

    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)getpid(), (long)getpid());
    return access(path, R_OK) == 0;
}

/* The start of the /proc file @path as a string in @buf; 0, or -1. */
static int read_proc(const char *path, char *buf, size_t size)
{
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* The children of the main thread of @parent, in any state (a zombie
 * too): how many, with the first @max of them in @pids; -1 if the list
 * cannot be read. */
static int children_of(pid_t parent, pid_t *pids, int max)
{
    char path[64], buf[512], *p, *end;
    int n = 0;

    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)parent, (long)parent);
    if (read_proc(path, buf, sizeof buf) != 0)
        return access(path, R_OK) == 0 ? 0 : -1; /* an empty list reads as nothing */
    for (p = buf;; p = end) {
        long pid = strtol(p, &end, 10);

        if (end == p)
            break;
        if (pid <= 0 || pid > INT32_MAX)
            return -1;
        if (n < max)
            pids[n] = (pid_t)pid;
        n++;
    }
    return n;
}

static int count_children(pid_t parent, pid_t *first)
{
    pid_t pid;
    int n = children_of(parent, &pid, 1);

    if (n > 0 && first)
        *first = pid;
    return n;
}

/* The one child of @parent, or -1 if it has none or more than one. */
static pid_t only_child(pid_t parent)
{
    pid_t child = -1;

    return count_children(parent, &child) == 1 ? child : -1;
}

/* The state, parent and flags of @pid from /proc/PID/stat (proc(5)):
 * 0, or -1 if it is gone. */
static int stat_of(pid_t pid, char *state, pid_t *ppid, unsigned long *flags)
{
    char path[64], buf[1024], *p;
    long parent;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    if (read_proc(path, buf, sizeof buf) != 0)
        return -1;
    /* After "pid (comm) ": state, ppid, pgrp, session, tty_nr, tpgid,
     * flags; comm may hold ')'. */
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 1, " %c %ld %*d %*d %*d %*d %lu", state, &parent, flags) != 3)
        return -1;
    *ppid = (pid_t)parent;
    return 0;
}

/* 1 if @pid is alive and not on its way out: not a zombie, not exiting
 * (PF_EXITING), no SIGKILL pending (proc(5)). */
static int lives_on(pid_t pid)
{
    static const char *const keys[] = {"\nSigPnd:", "\nShdPnd:"}; /* the thread's, the group's */
    char path[64], buf[4096], *p, state;
    unsigned long flags, pending;
    pid_t ppid;

    if (stat_of(pid, &state, &ppid, &flags) != 0)
        return 0; /* gone */
    if (state == 'Z' || state == 'X' || (flags & 0x4))
        return 0;
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    if (read_proc(path, buf, sizeof buf) != 0)
        return 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if ((p = strstr(buf, keys[i])) && sscanf(p + 8, "%lx", &pending) == 1 &&
            (pending & (1ul << (SIGKILL - 1))))
            return 0;
    return 1;
}

int ci_rollback_children(const struct ci_worker *w, pid_t except)
{
    pid_t pids[16];
    int n = children_of(w->task_pid, pids, 16), alive = 0;

    if (n > 16)
        return n; /* more than a worker ever has: each counts */
    for (int i = 0; i < n; i++)
        alive += pids[i] != except && lives_on(pids[i]);
    return alive;
}

int ci_rollback_checkpoint_pid(const struct ci_worker *w, pid_t *pid)
{
    return count_children(w->task_pid, pid);
}

/* A pidfd of the only child of the reaper @w->pid, checked to be that
 * child after it was opened (so the pid was not reused); -1 if none. */
static int open_task(const struct ci_worker *w, pid_t *pid)
{
    struct pollfd p;
    pid_t child = only_child(w->pid), ppid;
    unsigned long flags;
    char state;
    int fd;

    if (child <= 0 || child == w->task_pid)
        return -1;
    if ((fd = (int)syscall(SYS_pidfd_open, child, 0)) < 0)
        return -1;
    p = (struct pollfd){.fd = fd, .events = POLLIN};
    if (stat_of(child, &state, &ppid, &flags) != 0 || ppid != w->pid || poll(&p, 1, 0) != 0) {
        close(fd);
        return -1;
    }
    *pid = child;
    return fd;
}

/* 1 if @fd is a seccomp listener (an anonymous inode of that name). */
static int is_listener(int fd)
{
    static const char want[] = "anon_inode:seccomp notify";
    char path[64], link[64];
    ssize_t n;

    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    n = readlink(path, link, sizeof link);
    return n == (ssize_t)(sizeof want - 1) && memcmp(link, want, sizeof want - 1) == 0;
}

int ci_rollback_attach(struct ci_worker *w, struct ci_err *err)
{
    int fd;

    if (w->ready_listener == CI_READY_NO_LISTENER)
        return CI_OK;
    w->task_pidfd = open_task(w, &w->task_pid);
    if (w->task_pidfd < 0) {
        w->task_pid = 0;
        return ci_err_set(err, CI_ESPAWN, "the worker under the reaper (pid %ld) cannot be "
                          "found", (long)w->pid);
    }
    /* Best effort: without it there is no rollback, and every fork the
     * worker's filter sends finds no listener and fails (ENOSYS). */
    fd = (int)syscall(SYS_pidfd_getfd, w->task_pidfd, (int)w->ready_listener, 0);
    if (fd >= 0 && !is_listener(fd)) {
        close(fd);
        fd = -1;
    }
    w->listener = fd; /* pidfd_getfd(2) sets close-on-exec */
    return CI_OK;
}

void ci_rollback_answer(struct ci_worker *w)
{
    struct seccomp_notif_sizes sizes;
    struct seccomp_notif *req;
    struct seccomp_notif_resp *resp;
    size_t req_size, resp_size;

    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
        sizes = (struct seccomp_notif_sizes){sizeof *req, sizeof *resp, 0};
    req_size = sizes.seccomp_notif > sizeof *req ? sizes.seccomp_notif : sizeof *req;
    resp_size = sizes.seccomp_notif_resp > sizeof *resp ? sizes.seccomp_notif_resp : sizeof *resp;
    req = calloc(1, req_size);
    resp = calloc(1, resp_size);
    if (req && resp && ioctl(w->listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
        /* The thread that asked is the worker's main thread when its tid
         * is the worker's pid (as the listener's namespace, ours, sees
         * it). Registers cannot change while it waits: the flags are the
         * ones the clone will use. */
        /* And while the worker has no child: the checkpoint's is its
         * first fork, the one before it reaped (checkpoint.c), so any
         * other, if a cell hooked the main thread here, finds one. */
        int checkpoint = w->armed && (pid_t)req->pid == w->task_pid &&
                         req->data.arch == AUDIT_ARCH_X86_64 && req->data.nr == SYS_clone &&
                         req->data.args[0] == FORK_FLAGS && req->data.args[1] == 0 &&
                         count_children(w->task_pid, NULL) == 0;

        /* Still armed until CHECKPOINTED: a signal that arrives during
         * the fork makes the kernel restart it (ERESTARTNOINTR), and the
         * restart asks again, from the same thread at the same point. */
        resp->id = req->id;
        if (checkpoint)
            resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        else
            resp->error = -EPERM;
        /* ENOENT: the thread died, or a signal ended its wait. */
        ioctl(w->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
    }
    free(req);
    free(resp);
}

int ci_ended_parse(const unsigned char *p, size_t len, int *st, unsigned long long *cpu_us,
                   const char **why)
{
    uint32_t status, zero;
    uint64_t us;

    if (len != 16) {
        *why = "an end report of the wrong length";
        return -1;
    }
    memcpy(&status, p, 4);
    memcpy(&zero, p + 4, 4);
    memcpy(&us, p + 8, 8);
    if (zero != 0 || status > 0xffff) {
        *why = "a malformed end report";
        return -1;
    }
    *st = (int)status;
    *cpu_us = us;
    return 0;
}

int ci_rollback_keep_cpu_budget(struct ci_worker *w, unsigned long long cpu_us,
                                int64_t deadline_ms)
{
    uint64_t left, used_s = (cpu_us + 999999) / 1000000;
    unsigned long long soft, hard;

    if (!w->cpu_limit_s)
        return 0;
    if (used_s >= w->cpu_limit_s)
        return -1;
    left = w->cpu_limit_s - used_s;
    if (ci_send_frame(w->channel, CI_FRAME_CPU_BUDGET, &left, sizeof left, NULL, 0, deadline_ms,
                      NULL) != 0)
        return -1;
    while (ci_worker_read_cpu_limit(w, &soft, &hard) != 0 || soft != left || hard != left) {
        if (ci_now_ms() >= deadline_ms)
            return -1;
        usleep(1000);
    }
    w->cpu_limit_s = left;
    return 0;
}

int ci_count_parse(const unsigned char *p, size_t len, uint32_t count, const char **why)
{
    if (len != sizeof count || memcmp(p, &count, sizeof count) != 0) {
        *why = "a checkpoint's report for another cell";
        return -1;
    }
    return 0;
}

int ci_rollback_take_over(struct ci_worker *w, struct ci_reader *rd, uint32_t count, int *ended,
                          int *st, unsigned long long *cpu_us, int rolled, int64_t deadline_ms)
{
    const char *why;
    int fd;
    pid_t pid;

    if (!w->checkpoint || w->task_pid <= 0)
        return -1;
    w->checkpoint = 0;
    /* It may live on (the host's kill at the grace period, a forged
     * report): it must not speak again. */
    syscall(SYS_pidfd_send_signal, w->task_pidfd, SIGKILL, NULL, 0);
    /* A frame the worker was cut off in the middle of would make the
     * stream unreadable. */
    if (rd->header_have != 0)
        return -1;
    while (!*ended || !rolled) {
        struct pollfd p[2] = {{.fd = w->channel, .events = POLLIN},
                              {.fd = w->pidfd, .events = POLLIN}};
        int64_t left = deadline_ms - ci_now_ms();
        int n;

        if (left <= 0)
            return -1;
        if (poll(p, 2, (int)(left > 1000 ? 1000 : left)) < 0 && errno != EINTR)
            return -1;
        if (p[1].revents)
            return -1; /* the reaper died: nothing is left */
        if (!p[0].revents)
            continue;
        n = ci_reader_pump(rd, w->channel);
        if (n == 0)
            continue;
        if (n != 1)
            return -1;
        if (rd->type == CI_FRAME_ENDED && !*ended) {
            if (ci_ended_parse(rd->payload, rd->len, st, cpu_us, &why) != 0)
                return -1;
            *ended = 1;
        } else if (rd->type == CI_FRAME_ROLLED_BACK && !rolled &&
                   ci_count_parse(rd->payload, rd->len, count, &why) == 0) {
            rolled = 1;
        } else {
            return -1;
        }
        ci_reader_reset(rd);
    }
    /* The reaper reaped the worker before it said so: its only child now
     * is the checkpoint. */
    if ((fd = open_task(w, &pid)) < 0)
        return -1;
    close(w->task_pidfd);
    w->task_pidfd = fd;
    w->task_pid = pid;
    w->cpu_clock_known = 0;
    w->clear_refs_denied = 0;
    w->paused = 0;
    w->signaled = 0;
    return 0;
}
