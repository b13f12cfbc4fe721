/*
 * A session and its worker as the host sees them (session.c): the
 * handles of a live worker, the session's state, and the worker's
 * lifetime.
 */
#ifndef CI_SESSION_H
#define CI_SESSION_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "changes.h"
#include "config.h"
#include "err.h"
#include "spill.h"

/* A live worker's handles; pid <= 0 means none. pid is the host's child,
 * which the host reaps and kills to end the session; with rollback that
 * is the reaper, pid 1 of the namespace, and the process that runs the
 * cells is task_pid (rollback.c), which ci_worker_task() gives either way. */
struct ci_worker {
    pid_t pid;
    int pidfd;   /* readable when the worker has exited */
    pid_t task_pid;  /* with a reaper: the worker under it; else 0 */
    int task_pidfd;  /* its pidfd, or -1 */
    uint32_t ready_listener; /* the descriptor READY named (CI_READY_NO_LISTENER) */
    int listener;    /* the worker's seccomp listener, held by the host, or -1 */
    int armed;       /* 1: the checkpoint's clone may pass now (until CHECKPOINTED) */
    int checkpoint;  /* 1: this run's checkpoint exists (CHECKPOINTED came) */
    pid_t checkpoint_pid; /* its pid then, as the host sees it */
    int procfd;  /* O_PATH /proc/<pid> while it must be pinned (spawn.c), else -1 */
    int channel; /* frames (proto.h), non-blocking */
    int out;     /* the worker's fd 1, non-blocking read end */
    int err;     /* the worker's fd 2, non-blocking read end */
    int clear_refs_denied; /* 1 once /proc/<pid>/clear_refs was refused (usage.c) */
    int cpu_clock_known;  /* 1: cpu_clock is its CPU clock; 0 not asked yet; -1 none */
    clockid_t cpu_clock;  /* clock_getcpuclockid(3) of pid, asked once (usage.c) */
    unsigned layers; /* CI_SANDBOX_* bits it reported in READY */
    int signaled;    /* the signal a SIGNALED frame named (proto.h), or 0 */
    int exit_code;   /* its exit status once reaped, if it exited; else -1 */
    int functions_sent; /* 1 once it was sent the FUNCTIONS frame */
    int network_sent;   /* 1 once it was sent the NETWORK frame */
    int paused;         /* 1 while stopped between cells (cpu.c) */
    unsigned long long cpu_limit_s; /* its RLIMIT_CPU (seconds), 0: none */
    unsigned long long cpu_budget_s; /* the first worker's: the session's in all (rollback.c) */
};

struct ci_manifest_verified; /* manifest_cache.h */

struct ci_session {
    struct ci_config cfg;
    char *dir;       /* <root>/codeinterp-XXXXXX, removed by ci_session_free */
    char *workspace; /* <dir>/workspace, the cell's working directory */
    int dir_fd;       /* <dir>, O_RDONLY, flock()ed while the session lives (files.c) */
    int64_t start_deadline; /* ci_now_ms() by which the worker's start ends */
    dev_t dir_dev;    /* of s->dir, as made */
    ino_t dir_ino;
    dev_t quota_dev;  /* of the tmpfs mounted on s->dir (quota.c), or 0: none */
    struct ci_worker worker;
    int execution_count;
    unsigned long long last_run_us; /* the last run's wall time; 0 before any */
    atomic_int busy;
    int run_seq;              /* runs so far, across restarts */
    uint32_t internal_runs;   /* runs that were no cell (snapshots), numbered apart (run.c) */
    atomic_int running;       /* the running run's run_seq, or 0 */
    atomic_int interrupt_for; /* the run ci_session_interrupt() asked to stop */
    atomic_int wake_fd;       /* eventfd of the running run, or -1: wakes it to see that request */
    atomic_int wake_users;    /* ci_session_interrupt calls using wake_fd now (run.c) */
    struct ci_scan files;    /* the workspace after the last run */
    struct ci_manifest_verified *verified_manifest; /* cfg.manifest, verified; or NULL */
    struct ci_spill_kept spills[CI_SPILL_KEEP]; /* oldest first */
    int spill_count;
    char id[33];      /* 32 hex digits: the audit trail's name for it */
    int audit_failed; /* an audit event could not be written (audit.h) */
    struct ci_err err; /* the last failure: ci_session_errmsg() */
    char *left_out;    /* what the snapshot it was restored from lacked, or NULL (snapshot.c) */
};

/* No worker: every handle -1. */
void ci_worker_init(struct ci_worker *w);

/* The process that runs the cells: the one the host signals, whose /proc
 * and CPU clock it reads. */
static inline pid_t ci_worker_task(const struct ci_worker *w)
{
    return w->task_pid > 0 ? w->task_pid : w->pid;
}
static inline int ci_worker_task_pidfd(const struct ci_worker *w)
{
    return w->task_pid > 0 ? w->task_pidfd : w->pidfd;
}

/* Describes in @name/@value how a worker ended with wait status @st after
 * @cpu_us of CPU time (static name, formatted value). */
void ci_worker_describe_end(const struct ci_worker *w, int st, unsigned long long cpu_us,
                            const char **name, char *value, size_t valuelen);
int ci_worker_start(ci_session *s);
/* 1 if the live worker @w has exited (its pidfd is readable, or waitid(2)
 * with WNOWAIT says so), without reaping it: ci_worker_reap reaps. */
int ci_worker_exited(const struct ci_worker *w);
/* Waits until @deadline_ms for the READY of @w, a session's worker or
 * (@packets: its channel is SOCK_SEQPACKET, a frame a message) a zygote,
 * keeping the start of its stderr (w->err) to explain a failure: an
 * import error, a lockdown step the kernel refused. CI_OK with
 * w->layers; else @w is killed and reaped, and @err says why, naming it
 * @who: CI_EMANIFEST (it exited with CI_WORKER_EXIT_MANIFEST: the
 * installed files are not the manifest's), CI_EPROTO (its first message
 * was no READY), CI_ENOMEM or CI_ESPAWN. */
int ci_ready_wait(struct ci_worker *w, int64_t deadline_ms, int packets, const char *who,
                  struct ci_err *err);
/* SIGKILL, reap, close every handle. Safe on a worker that is gone. */
void ci_worker_stop(struct ci_worker *w);
/* Reaps an exiting worker, waiting until @deadline_ms at most, then kills
 * it. Describes its end in @name/@value (static name, formatted value).
 * 1 if it had to kill it (one already exiting does not count), else 0. */
int ci_worker_reap(struct ci_worker *w, int64_t deadline_ms, const char **name,
                   char *value, size_t valuelen);
/* Opens /proc/<pid>/@name of the live worker @w with @flags (O_CLOEXEC is
 * added): through w->procfd where one is held, else by name, and then
 * checked with the pidfd to be this worker's. A pid is not reused while
 * its process (or its zombie) lives, and so after an open by name a
 * pidfd that is not yet readable proves the file is the worker's; only
 * ci_worker_reap reaps it, but a host that ignores SIGCHLD gets its
 * children reaped by the kernel at once. The descriptor, which the
 * caller closes, or -1 with errno (ESRCH: it exited, or neither handle
 * is held). */
int ci_worker_proc_open(const struct ci_worker *w, const char *name, int flags);

#endif /* CI_SESSION_H */
