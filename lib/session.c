/* Sessions: new, free, restart; the worker's lifetime from start to reap. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "changes.h"
#include "channel.h"
#include "clock.h"
#include "config.h"
#include "cpu.h"
#include "errors.h"
#include "fd.h"
#include "files.h"
#include "manifest_cache.h"
#include "output.h"
#include "proto.h"
#include "result.h"
#include "rollback.h"
#include "session.h"
#include "spawn.h"
#include "thread.h"
#include "wheel.h"
#include "worker_start.h"

void ci_worker_init(struct ci_worker *w)
{
    *w = (struct ci_worker){.pid = 0, .pidfd = -1, .procfd = -1, .channel = -1, .out = -1,
                            .err = -1, .layers = 0, .exit_code = -1, .task_pidfd = -1,
                            .ready_listener = CI_READY_NO_LISTENER, .listener = -1};
}

static void worker_close(struct ci_worker *w)
{
    ci_close_fd(&w->pidfd);
    ci_close_fd(&w->task_pidfd);
    ci_close_fd(&w->listener);
    ci_close_fd(&w->procfd);
    ci_close_fd(&w->channel);
    ci_close_fd(&w->out);
    ci_close_fd(&w->err);
    ci_worker_init(w);
}

int ci_worker_proc_open(const struct ci_worker *w, const char *name, int flags)
{
    char path[64];
    struct pollfd p = {.fd = ci_worker_task_pidfd(w), .events = POLLIN};
    int fd, n;

    if (w->procfd >= 0 && w->task_pid <= 0) /* the pin is of w->pid's */
        return openat(w->procfd, name, flags | O_CLOEXEC);
    if (ci_worker_task(w) <= 0 || p.fd < 0) {
        errno = ESRCH;
        return -1;
    }
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)ci_worker_task(w), name);
    if ((fd = open(path, flags | O_CLOEXEC)) < 0)
        return -1;
    while ((n = poll(&p, 1, 0)) < 0 && errno == EINTR)
        ;
    if (n != 0) {
        close(fd);
        errno = ESRCH;
        return -1;
    }
    return fd;
}

/* A sentence for how the reaped worker @w ended with wait status @st
 * after @cpu_us of CPU time; the name is static. A worker that reported
 * a signal (w->signaled) and exited with 128 + it was its PID namespace's
 * init, which the signal could not end (proto.h): its end is told as the
 * signal's. */
void ci_worker_describe_end(const struct ci_worker *w, int st, unsigned long long cpu_us,
                            const char **name, char *value, size_t valuelen)
{
    int signaled = w->signaled;

    if (ci_worker_cpu_limited(w, st, cpu_us)) {
        *name = "CPULimitExceeded";
        snprintf(value, valuelen,
                 "the worker used up its CPU time limit (%llu s of CPU time in all, "
                 "RLIMIT_CPU) and the kernel killed it",
                 w->cpu_budget_s ? w->cpu_budget_s : w->cpu_limit_s);
        return;
    }
    if (signaled && signaled != SIGSYS && WIFEXITED(st) && WEXITSTATUS(st) == 128 + signaled)
        st = signaled; /* the wait status of a death by that signal */
    if (WIFEXITED(st)) {
        *name = "WorkerDied";
        snprintf(value, valuelen, "the worker exited with status %d", WEXITSTATUS(st));
    } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) {
        *name = "SandboxViolation";
        snprintf(value, valuelen,
                 "the worker was killed by the seccomp filter (signal %d, SIGSYS): "
                 "the cell made a forbidden system call",
                 SIGSYS);
    } else if (WIFSIGNALED(st)) {
        const char *abbrev = sigabbrev_np(WTERMSIG(st));
        *name = "WorkerDied";
        snprintf(value, valuelen, "the worker was killed by signal %d (SIG%s)", WTERMSIG(st),
                 abbrev ? abbrev : "?");
    } else {
        *name = "WorkerDied";
        snprintf(value, valuelen, "the worker ended with wait status %d", st);
    }
}

/* Waits until @deadline_ms for the worker to exit and reaps it into @st
 * and its CPU time in *@cpu_us: 1 once reaped, 0 if the deadline came
 * first, -1 if it is not ours to reap (ECHILD: the host reaped it behind
 * our back). */
static int wait_exit(struct ci_worker *w, int *st, unsigned long long *cpu_us,
                     int64_t deadline_ms)
{
    for (;;) {
        struct rusage ru;
        pid_t r = wait4(w->pid, st, WNOHANG, &ru);
        int64_t left;

        if (r == w->pid) {
            *cpu_us = (unsigned long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
                      (unsigned long long)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return -1;
        left = deadline_ms - ci_now_ms();
        if (left <= 0)
            return 0;
        if (w->pidfd >= 0) {
            struct pollfd p = {.fd = w->pidfd, .events = POLLIN};
            poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        } else {
            usleep(5000);
        }
    }
}

static void *reaper_main(void *arg)
{
    pid_t pid = (pid_t)(intptr_t)arg;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* Reaps a killed worker that is slow to exit on a detached thread, so no
 * call waits for the kernel and no zombie is left. Without a thread it
 * blocks: leaking the zombie would be worse. */
static void reap_in_background(pid_t pid)
{
    if (ci_thread_start_masked(reaper_main, (void *)(intptr_t)pid) != 0)
        reaper_main((void *)(intptr_t)pid);
}

/* 1 if the worker is already on its way out (PF_EXITING in the flags of
 * /proc/PID/stat, proc(5)): killed, or exiting, but its address space not
 * yet torn down, which takes long for a big one on a loaded machine. */
static int worker_exiting(const struct ci_worker *w)
{
    char buf[512], *p;
    unsigned long flags = 0;
    ssize_t n;
    int fd;

    if ((fd = ci_worker_proc_open(w, "stat", O_RDONLY)) < 0)
        return errno == ESRCH && w->pidfd >= 0; /* the pidfd says it exited */
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* After "pid (comm) ": state, ppid, pgrp, session, tty_nr, tpgid, flags. */
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
        return 0;
    return (flags & 0x4) != 0; /* PF_EXITING */
}

int ci_worker_reap(struct ci_worker *w, int64_t deadline_ms, const char **name,
                   char *value, size_t valuelen)
{
    int st = 0, got, reaped, killed = 0;
    unsigned long long cpu_us = 0;

    *name = "WorkerDied";
    snprintf(value, valuelen, "the worker is gone");
    if (w->pid <= 0) {
        worker_close(w);
        return 0;
    }
    got = wait_exit(w, &st, &cpu_us, deadline_ms);
    if (got == 0) {
        killed = !worker_exiting(w);
        kill(w->pid, SIGKILL);
        /* A killed process normally exits at once, but the kernel may
         * take long to tear it down (a cell can make closing its files
         * slow: freeing a fragmented file on a discard-mounted disk took
         * minutes here): 50 ms, then the reaping goes to a thread. */
        got = wait_exit(w, &st, &cpu_us, ci_now_ms() + 50);
        if (got != 1) {
            reap_in_background(w->pid);
            snprintf(value, valuelen, "the worker was killed (SIGKILL) and is still exiting");
        }
    }
    reaped = got == 1;
    if (reaped)
        ci_worker_describe_end(w, st, cpu_us, name, value, valuelen);
    worker_close(w);
    w->exit_code = reaped && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return killed;
}

void ci_worker_stop(struct ci_worker *w)
{
    const char *name;
    char value[128];
    if (w->pid > 0)
        kill(w->pid, SIGKILL);
    ci_worker_reap(w, ci_now_ms(), &name, value, sizeof value);
}

/* The READY of a worker whose channel is a stream (ci_reader), or of a
 * zygote, whose SOCK_SEQPACKET channel carries each frame as one message
 * (@rd NULL). 1 with w->layers; 0 until more comes; -1 at EOF or on an
 * error; -2 for anything else. */
static int ready_frame(struct ci_worker *w, struct ci_reader *rd)
{
    unsigned char buf[64];
    struct ci_frame_header h;
    ssize_t n;

    if (rd) {
        n = ci_reader_pump(rd, w->channel);
        if (n != 1)
            return (int)n;
        return rd->type == CI_FRAME_READY &&
                       ci_ready_parse(rd->payload, rd->len, &w->layers, &w->ready_listener) == 0
                   ? 1
                   : -2;
    }
    n = recv(w->channel, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0)
        return -1;
    if ((size_t)n < sizeof h)
        return -2;
    memcpy(&h, buf, sizeof h);
    return h.type == CI_FRAME_READY && h.len == (size_t)n - sizeof h &&
                   ci_ready_parse(buf + sizeof h, h.len, &w->layers, &w->ready_listener) == 0
               ? 1
               : -2;
}

int ci_ready_wait(struct ci_worker *w, int64_t deadline_ms, int packets, const char *who,
                  struct ci_err *err)
{
    struct ci_buf stderr_start = {0};
    int truncated = 0;
    struct ci_drain drain;
    struct ci_reader rd;
    const char *why = NULL;
    int rc = CI_ESPAWN, exited = 0;

    ci_drain_init(&drain, w->out, w->err, NULL, &stderr_start, 2048, &truncated);
    ci_reader_init(&rd, 64);
    for (;;) {
        struct pollfd p[3] = {{.fd = w->channel, .events = POLLIN},
                              {.fd = drain.s[0].fd, .events = POLLIN},
                              {.fd = drain.s[1].fd, .events = POLLIN}};
        int64_t left = deadline_ms - ci_now_ms();
        int n;
        if (left <= 0) {
            why = "it did not become ready within the startup timeout";
            break;
        }
        if (poll(p, 3, (int)(left > 1000 ? 1000 : left)) < 0 && errno != EINTR) {
            why = strerror(errno);
            break;
        }
        if (ci_drain_pipes(&drain) < 0) {
            rc = CI_ENOMEM;
            why = "out of memory";
            break;
        }
        n = ready_frame(w, packets ? NULL : &rd);
        if (n == 0)
            continue;
        if (n == 1) {
            rc = CI_OK;
        } else if (n == -1) {
            why = "it exited during start-up";
            exited = 1;
            ci_drain_pipes(&drain); /* what it wrote before it went */
        } else {
            rc = CI_EPROTO;
            why = "its first message was not a valid READY frame";
        }
        break;
    }
    ci_reader_reset(&rd);
    ci_drain_finish(&drain, NULL);
    if (rc != CI_OK) {
        const char *name;
        char end[160];
        if (!exited)
            kill(w->pid, SIGKILL);
        ci_worker_reap(w, ci_now_ms() + 2000, &name, end, sizeof end);
        if (w->exit_code == CI_WORKER_EXIT_MANIFEST) {
            /* The installed files are not those of the manifest: what
             * it printed says which. */
            rc = ci_manifest_refusal(err, stderr_start.data);
        } else {
            ci_err_set(err, rc, "the %s did not start: %s (%s)%s%s", who, why, end,
                       stderr_start.len ? "; its stderr: " : "",
                       stderr_start.len ? stderr_start.data : "");
        }
    }
    free(stderr_start.data);
    return rc;
}

_Static_assert(CI_LAYER_SECCOMP == CI_SANDBOX_SECCOMP && CI_LAYER_RLIMITS == CI_SANDBOX_RLIMITS &&
                   CI_LAYER_NO_NEW_PRIVS == CI_SANDBOX_NO_NEW_PRIVS &&
                   CI_LAYER_LANDLOCK == CI_SANDBOX_LANDLOCK &&
                   CI_LAYER_UNPRIVILEGED == CI_SANDBOX_UNPRIVILEGED &&
                   CI_LAYER_USERNS == CI_SANDBOX_USERNS && CI_LAYER_NETNS == CI_SANDBOX_NETNS &&
                   CI_LAYER_IPCNS == CI_SANDBOX_IPCNS && CI_LAYER_UTSNS == CI_SANDBOX_UTSNS &&
                   CI_LAYER_MNTNS == CI_SANDBOX_MNTNS && CI_LAYER_PIDNS == CI_SANDBOX_PIDNS &&
                   CI_LAYER_TASK_LIMIT == CI_SANDBOX_TASK_LIMIT &&
                   CI_LAYER_DISK_QUOTA == CI_SANDBOX_DISK_QUOTA &&
                   CI_LAYER_ALL == (CI_SANDBOX_SECCOMP | CI_SANDBOX_RLIMITS |
                                    CI_SANDBOX_NO_NEW_PRIVS | CI_SANDBOX_LANDLOCK |
                                    CI_SANDBOX_UNPRIVILEGED | CI_SANDBOX_USERNS |
                                    CI_SANDBOX_NETNS | CI_SANDBOX_IPCNS | CI_SANDBOX_UTSNS |
                                    CI_SANDBOX_MNTNS | CI_SANDBOX_PIDNS |
                                    CI_SANDBOX_TASK_LIMIT | CI_SANDBOX_DISK_QUOTA),
               "READY's layer bits are the public CI_SANDBOX_* bits");

/* Refuses a worker that lacks a layer the config demands. */
static int check_layers(ci_session *s)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{CI_SANDBOX_SECCOMP, "seccomp"},
                 {CI_SANDBOX_RLIMITS, "rlimits"},
                 {CI_SANDBOX_NO_NEW_PRIVS, "no_new_privs"},
                 {CI_SANDBOX_LANDLOCK, "landlock (the kernel has no Landlock, or it is disabled)"},
                 {CI_SANDBOX_UNPRIVILEGED, "unprivileged (the worker kept a root uid or a capability)"},
                 {CI_SANDBOX_USERNS, "user namespace (refused by the kernel or the container)"},
                 {CI_SANDBOX_NETNS, "network namespace (refused by the kernel or the container)"},
                 {CI_SANDBOX_IPCNS, "IPC namespace (refused by the kernel or the container)"},
                 {CI_SANDBOX_UTSNS, "UTS namespace (refused by the kernel or the container)"},
                 {CI_SANDBOX_MNTNS, "mount namespace (refused by the kernel or the container)"},
                 {CI_SANDBOX_PIDNS, "PID namespace (refused by the kernel or the container)"},
                 {CI_SANDBOX_TASK_LIMIT, "task limit (it needs the user namespace)"},
                 {CI_SANDBOX_DISK_QUOTA, "disk quota (only a root host can mount its tmpfs, "
                                         "and only with a quota set)"}};
    unsigned missing = s->cfg.required_layers & ~s->worker.layers;
    size_t i;

    if (!missing)
        return CI_OK;
    for (i = 0; i < sizeof names / sizeof *names; i++)
        if (missing & names[i].bit)
            break;
    ci_err_set(&s->err, CI_ESANDBOX, "a required sandbox layer is not available: %s",
               i < sizeof names / sizeof *names ? names[i].name : "?");
    ci_worker_stop(&s->worker);
    return CI_ESANDBOX;
}

int ci_worker_start(ci_session *s)
{
    int rc;

    /* The startup timeout bounds all of it: a zygote's start, its
     * answer, a retry, and the worker's READY. */
    s->start_deadline = ci_now_ms() + (int64_t)s->cfg.startup_ms;
    /* Known before any worker starts: only a zygote's child has one. */
    if ((s->cfg.required_layers & CI_SANDBOX_PIDNS) && !ci_uses_zygote(s)) {
        return ci_err_set(&s->err, CI_ESANDBOX,
                          "a required sandbox layer is not available: PID namespace (only a "
                          "worker forked from the zygote has one, and %s)",
                          s->cfg.zygote ? "$CODEINTERP_WORKER turns the zygote off"
                                        : "the zygote is off");
    }
    /* The manifest is verified before any worker starts; a session keeps
     * the one its last start verified. */
    ci_manifest_cache_put(s->verified_manifest);
    s->verified_manifest = NULL;
    if (s->cfg.manifest && (rc = ci_manifest_cache_get(&s->cfg, &s->verified_manifest, &s->err)) != CI_OK)
        return rc;
    if ((rc = ci_wheelhouse_check(s)) != CI_OK)
        return rc;
    rc = ci_spawn_worker(s, &s->err);
    if (rc != CI_OK)
        return rc;
    rc = ci_ready_wait(&s->worker, s->start_deadline, 0, "worker", &s->err);
    if (rc == CI_OK && (rc = ci_rollback_attach(&s->worker, &s->err)) != CI_OK)
        ci_worker_stop(&s->worker);
    if (rc == CI_OK)
        rc = check_layers(s);
    if (rc == CI_OK)
        ci_worker_unpin(&s->worker);
    if (rc == CI_OK &&
        (rc = ci_worker_check_cpu_limit(&s->worker, s->cfg.cpu_limit_s, &s->err)) != CI_OK)
        ci_worker_stop(&s->worker);
    if (rc == CI_OK) {
        ci_worker_pause(&s->worker); /* until its first cell */
        ci_err_clear(&s->err);
    }
    return rc;
}

CI_API int ci_session_new(ci_session **out, const ci_config *cfg)
{
    ci_session *s;
    struct ci_config defaults;
    int rc;

    ci_err_clear(ci_thread_err());
    if (!out) {
        return ci_err_set(ci_thread_err(), CI_EINVAL, "out is NULL");
    }
    *out = NULL;
    if (!(s = calloc(1, sizeof *s))) {
        return ci_err_set(ci_thread_err(), CI_ENOMEM, "out of memory");
    }
    s->dir_fd = -1;
    atomic_init(&s->wake_fd, -1);
    ci_worker_init(&s->worker);
    ci_audit_session_id(s);
    ci_config_defaults(&defaults);
    if ((rc = ci_config_copy(&s->cfg, cfg ? cfg : &defaults)) == CI_OK) {
        if ((rc = ci_workspace_create(s)) == CI_OK)
            rc = ci_worker_start(s);
        /* A session the log cannot record does not start. */
        if (ci_audit_session_start(s, rc) != CI_OK && rc == CI_OK)
            rc = CI_EIO;
    }
    if (rc != CI_OK) {
        ci_err_set(ci_thread_err(), rc, "%s", s->err.msg[0] ? s->err.msg : ci_strerror(rc));
        ci_session_free(s);
        return rc;
    }
    *out = s;
    return CI_OK;
}

CI_API void ci_session_free(ci_session *s)
{
    if (!s)
        return;
    ci_worker_stop(&s->worker);
    ci_audit_session_end(s); /* nobody is told if it fails: the session is gone */
    ci_workspace_remove(s);
    ci_manifest_cache_put(s->verified_manifest);
    ci_config_clear(&s->cfg);
    ci_scan_clear(&s->files);
    free(s->left_out);
    free(s);
}

CI_API int ci_session_restart(ci_session *s)
{
    int expected = 0, rc;
    if (!s)
        return CI_EINVAL;
    if (!atomic_compare_exchange_strong(&s->busy, &expected, 1)) {
        return ci_err_set(&s->err, CI_EBUSY, "a run is in progress on this session");
    }
    ci_worker_stop(&s->worker);
    s->execution_count = 0;
    s->files.valid = 0;
    /* A fresh interpreter lacks nothing it was given. */
    free(s->left_out);
    s->left_out = NULL;
    rc = ci_workspace_renew(s);
    if (rc == CI_OK)
        rc = ci_worker_start(s);
    if (ci_audit_restart(s, rc) != CI_OK && rc == CI_OK)
        rc = CI_EIO; /* the worker lives, but runs nothing: ci_audit_check */
    atomic_store(&s->busy, 0);
    return rc;
}

CI_API const char *ci_session_workspace(const ci_session *s)
{
    return s ? s->workspace : NULL;
}

int ci_worker_exited(const struct ci_worker *w)
{
    struct pollfd p = {.fd = w->pidfd, .events = POLLIN};
    siginfo_t info;

    if (w->pidfd >= 0)
        return poll(&p, 1, 0) > 0;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)w->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
        return errno == ECHILD;
    return info.si_pid == w->pid;
}

/* 1 if the worker lives, as far as can be seen without reaping it: one
 * that died between runs is reaped, and reported, by the next run. */
static int worker_alive(const ci_session *s)
{
    return s && s->worker.pid > 0 && !ci_worker_exited(&s->worker);
}

CI_API unsigned ci_session_sandbox(const ci_session *s)
{
    return worker_alive(s) ? s->worker.layers : 0;
}

CI_API int ci_session_pid(const ci_session *s)
{
    return worker_alive(s) ? (int)ci_worker_task(&s->worker) : -1;
}

CI_API int ci_session_rollback_active(const ci_session *s)
{
    return worker_alive(s) && s->worker.listener >= 0;
}
