/*
 * fork + exec of codeinterp-worker.
 *
 * Everything the child needs (paths, argv, envp, descriptors) is prepared
 * before the fork; between fork and exec the child makes only
 * async-signal-safe calls (signal-safety(7)) and reports a failure through
 * a close-on-exec pipe, as musl's posix_spawn does.
 *
 * The fork runs on a library-owned thread that lives as long as the
 * process: PR_SET_PDEATHSIG fires when the *thread* that forked exits
 * (prctl(2)), so a worker forked from a short-lived host thread would be
 * killed with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fd.h"
#include "manifest_cache.h"
#include "session.h"
#include "spawn.h"
#include "thread.h"
#include "zygote.h"

#ifndef CI_WORKER_PATH
#define CI_WORKER_PATH "/usr/local/libexec/codeinterp/codeinterp-worker"
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* What the child does, all of it prepared by the parent. */
struct spawn_job {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int fds[4];   /* become the worker's 0..3; all >= 5 here */
    int policy;   /* becomes its 4 (lib/manifest.h), or -1; >= 5 here */
    int status_w; /* close-on-exec; the child writes its errno on failure */
    long max_fd;
    pid_t pid;    /* out: > 0, or -errno of fork */
    int done;
};

/* Steps whose failure the child reports, as the first byte of its report. */
enum { STEP_DUP = 1, STEP_FDS, STEP_CHDIR, STEP_EXEC };

static void child_fail(int status_w, int step)
{
    int report[2] = {step, errno};
    ssize_t n = write(status_w, report, sizeof report);
    (void)n;
    _exit(127);
}

/* Runs in the child: async-signal-safe calls only. */
static void child_exec(const struct spawn_job *j)
{
    struct sigaction dfl;
    sigset_t none;
    int fd, sig, first_closed = 4;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (sig = 1; sig < NSIG; sig++)
        sigaction(sig, &dfl, NULL); /* fails harmlessly for SIGKILL, SIGSTOP */

    for (fd = 0; fd < 4; fd++)
        if (dup2(j->fds[fd], fd) < 0)
            child_fail(j->status_w, STEP_DUP);
    if (j->policy >= 0) {
        if (dup2(j->policy, 4) < 0)
            child_fail(j->status_w, STEP_DUP);
        first_closed = 5;
    }
    /* Every other descriptor, the host's included, must not survive exec. */
    if (syscall(SYS_close_range, (unsigned)first_closed, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
        for (fd = first_closed; fd < j->max_fd; fd++)
            if (fd != j->status_w)
                close(fd);
    }
    if (chdir(j->cwd) < 0)
        child_fail(j->status_w, STEP_CHDIR);

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(j->path, j->argv, j->envp);
    child_fail(j->status_w, STEP_EXEC);
}

/* ---- the spawner thread ---- */

static pthread_mutex_t spawner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawner_cond = PTHREAD_COND_INITIALIZER;
static struct spawn_job *spawner_job;
static pid_t spawner_owner; /* the process whose spawner thread runs */

static void *spawner_main(void *unused)
{
    pthread_mutex_lock(&spawner_lock);
    for (;;) {
        struct spawn_job *j;
        while (!spawner_job || spawner_job->done)
            pthread_cond_wait(&spawner_cond, &spawner_lock);
        j = spawner_job;
        pthread_mutex_unlock(&spawner_lock);

        /* All signals are blocked on this thread, so no host handler can
         * run in the child before child_exec resets them. */
        j->pid = fork();
        if (j->pid == 0)
            child_exec(j);
        if (j->pid < 0)
            j->pid = -errno;

        pthread_mutex_lock(&spawner_lock);
        j->done = 1;
        pthread_cond_broadcast(&spawner_cond);
    }
    return NULL;
}

/* In a forked child: the lock and the condition variable as new. The
 * parent's spawner thread, which is not in the child, may have been
 * waiting on the condition (as it does between jobs) or holding the
 * lock, and glibc's condition variable would then wait for that thread
 * for ever in the child's first broadcast. Plain stores, safe between
 * fork and exec (the spawner's own children run this too). */
static void spawner_forked(void)
{
    static const pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

    memcpy(&spawner_lock, &lock, sizeof lock);
    memcpy(&spawner_cond, &cond, sizeof cond);
    spawner_job = NULL;
}

/* Starts the spawner thread once per process (again in a forked child,
 * which has no threads but the one that forked). Called with the lock. */
static int spawner_ensure(void)
{
    int rc;

    if (spawner_owner == getpid())
        return 0;
    if (spawner_owner == 0 && (rc = pthread_atfork(NULL, NULL, spawner_forked)) != 0)
        return -rc;
    if ((rc = ci_thread_start_masked(spawner_main, NULL)) != 0)
        return -rc;
    spawner_owner = getpid();
    return 0;
}

static pid_t spawner_fork(struct spawn_job *j)
{
    int rc;
    pthread_mutex_lock(&spawner_lock);
    if ((rc = spawner_ensure()) < 0) {
        pthread_mutex_unlock(&spawner_lock);
        return rc;
    }
    while (spawner_job && !spawner_job->done)
        pthread_cond_wait(&spawner_cond, &spawner_lock);
    spawner_job = j;
    pthread_cond_broadcast(&spawner_cond);
    while (!j->done)
        pthread_cond_wait(&spawner_cond, &spawner_lock);
    /* Another caller may have posted its job since ours was done. */
    if (spawner_job == j)
        spawner_job = NULL;
    pthread_cond_broadcast(&spawner_cond);
    pthread_mutex_unlock(&spawner_lock);
    return j->pid;
}

/* ---- starting a process by exec ---- */

/* Moves @fd to a number >= 5 so the child's dup2 onto 0..4 cannot clobber
 * another source; close-on-exec either way. */
static int fd_above_stdio(int fd)
{
    int moved;
    if (fd < 0 || fd >= 5)
        return fd;
    moved = fcntl(fd, F_DUPFD_CLOEXEC, 5);
    close(fd);
    return moved;
}

const char *ci_worker_path(void)
{
    const char *path = getenv("CODEINTERP_WORKER");
    return path && *path ? path : CI_WORKER_PATH;
}

pid_t ci_exec_worker(char *const argv[], const char *dir, int fds[4], int *policy,
                     struct ci_err *err)
{
    char e_home[4200], e_mpl[4200], e_tmp[4200], cwd[4200];
    const char *path = ci_worker_path();
    int policy_given = *policy >= 0;
    struct spawn_job j;
    int status[2] = {-1, -1}, report[2];
    ssize_t n;
    pid_t pid = -1;

    if (access(path, X_OK) < 0) {
        ci_err_set(err, CI_ESPAWN, "worker %s is not executable: %s", path, strerror(errno));
        return -1;
    }
    /* An explicit environment: nothing of the host's passes through. */
    snprintf(e_home, sizeof e_home, "HOME=%s/config", dir);
    snprintf(e_mpl, sizeof e_mpl, "MPLCONFIGDIR=%s/config", dir);
    snprintf(e_tmp, sizeof e_tmp, "TMPDIR=%s/tmp", dir);
    snprintf(cwd, sizeof cwd, "%s/workspace", dir);
    char *envp[] = {"PATH=/usr/bin:/bin", e_home, "LANG=C.UTF-8", e_mpl, "MPLBACKEND=Agg",
                    e_tmp, "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1",
                    "MKL_NUM_THREADS=1", "NUMEXPR_NUM_THREADS=1",
                    /* joblib (scikit-learn's, statsmodels') decides at its
                     * import whether it may start processes; a zygote
                     * imports it before the sandbox exists, so it is told:
                     * threads, as in a cell, and no warning. */
                    "JOBLIB_MULTIPROCESSING=0",
                    /* glibc reserves 64 MiB of address space per malloc
                     * arena; RLIMIT_AS would run out early otherwise. */
                    "MALLOC_ARENA_MAX=2", NULL};

    memset(&j, 0, sizeof j);
    j.path = path;
    j.argv = argv;
    j.envp = envp;
    j.cwd = cwd;
    if (pipe2(status, O_CLOEXEC) < 0) {
        ci_err_set(err, CI_ESPAWN, "cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 4; i++)
        j.fds[i] = fds[i] = fd_above_stdio(fds[i]);
    j.policy = *policy = fd_above_stdio(*policy);
    j.status_w = status[1] = fd_above_stdio(status[1]);
    j.max_fd = sysconf(_SC_OPEN_MAX);
    if (j.max_fd < 0 || j.max_fd > 65536)
        j.max_fd = 65536;
    if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0 || fds[3] < 0 || status[1] < 0 ||
        (policy_given && *policy < 0)) {
        ci_err_set(err, CI_ESPAWN, "cannot arrange the worker's descriptors: %s", strerror(errno));
        goto out;
    }
    pid = spawner_fork(&j);
    if (pid < 0) {
        ci_err_set(err, CI_ESPAWN, "fork failed: %s", strerror((int)-pid));
        pid = -1;
        goto out;
    }
    ci_close_fd(&status[1]);
    /* EOF means exec succeeded (the write end was close-on-exec). */
    do
        n = read(status[0], report, sizeof report);
    while (n < 0 && errno == EINTR);
    if (n != 0) {
        static const char *const step[] = {"", "dup2", "close descriptors", "chdir", "execve"};
        int which = (n == sizeof report && report[0] >= 1 && report[0] <= STEP_EXEC) ? report[0] : 0;
        struct ci_worker w;

        ci_err_set(err, CI_ESPAWN, "starting worker %s failed at %s: %s", path, step[which],
                   n == sizeof report ? strerror(report[1]) : "no report");
        ci_worker_init(&w);
        w.pid = pid;
        ci_worker_stop(&w); /* reaps the failed child */
        pid = -1;
    }
out:
    ci_close_fd(&status[0]);
    ci_close_fd(&status[1]);
    return pid;
}

/* ---- one session's worker ---- */

/* Starts the worker by exec, with the session's limits on its command line
 * and its package manifest's policy, if any, on descriptor 4. */
static pid_t exec_session_worker(ci_session *s, int fds[4], struct ci_err *err)
{
    int policy = -1;
    pid_t pid;
    char a_parent[32], a_memory[32], a_fsize[32], a_output[32], a_display[32],
        a_display_run[32], a_dpi[16], a_tasks[16], a_quota[32], a_cpu[32];

    snprintf(a_parent, sizeof a_parent, "%ld", (long)getpid());
    snprintf(a_memory, sizeof a_memory, "%llu", s->cfg.memory_limit);
    snprintf(a_fsize, sizeof a_fsize, "%llu", s->cfg.file_limit);
    snprintf(a_output, sizeof a_output, "%zu", s->cfg.output_limit);
    snprintf(a_display, sizeof a_display, "%zu", s->cfg.display_output_limit);
    snprintf(a_display_run, sizeof a_display_run, "%zu", s->cfg.display_run_limit);
    snprintf(a_dpi, sizeof a_dpi, "%u", s->cfg.figure_dpi);
    snprintf(a_tasks, sizeof a_tasks, "%lu", s->cfg.task_limit);
    snprintf(a_quota, sizeof a_quota, "%llu", (unsigned long long)s->quota_dev);
    snprintf(a_cpu, sizeof a_cpu, "%lu", s->cfg.cpu_limit_s);
    char *argv[] = {"codeinterp-worker", "--parent", a_parent, "--memory", a_memory,
                    "--fsize", a_fsize, "--output-limit", a_output,
                    "--display-limit", a_display, "--display-run-limit", a_display_run,
                    "--dpi", a_dpi, "--tasks", a_tasks, "--quota-dev", a_quota, "--cpu", a_cpu,
                    "--preload", (char *)ci_config_preload(&s->cfg),
                    s->verified_manifest ? "--manifest" : NULL, NULL};

    if (s->verified_manifest && (policy = ci_manifest_policy_memfd(s->verified_manifest)) < 0) {
        ci_err_set(err, CI_ESPAWN, "cannot hand the worker its package manifest: %s",
                   strerror(errno));
        return -1;
    }
    pid = ci_exec_worker(argv, s->dir, fds, &policy, err);
    if (policy >= 0)
        close(policy);
    return pid;
}

/* A pidfd of our child @pid, checked after it is open to be still our
 * child's (as the zygote's is, ci_zygote_spawn): -1 without pidfd_open(2),
 * -2 if @pid is no child of ours any more, so a pid reused after a host
 * that ignores SIGCHLD had the kernel reap the worker is never watched. */
static int own_child_pidfd(pid_t pid)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
    siginfo_t info;

    if (fd < 0)
        return -1;
    if (waitid((idtype_t)P_PIDFD, (id_t)fd, &info, WEXITED | WNOHANG | WNOWAIT) != 0 &&
        errno == ECHILD) {
        close(fd);
        return -2;
    }
    return fd;
}

/* Starts the worker once, with new descriptors; fills s->worker. */
static int spawn_once(ci_session *s, struct ci_err *err, int *retry)
{
    char procpath[32];
    int chan[2] = {-1, -1}, out[2] = {-1, -1}, errpipe[2] = {-1, -1}, null = -1, rc = CI_ESPAWN;
    int fds[4], by_exec = 0, pidfd = -1;
    pid_t pid = -1;

    *retry = 0;
    ci_err_clear(err);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, chan) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(errpipe, O_CLOEXEC) < 0 || (null = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        ci_err_set(err, CI_ESPAWN, "cannot create the worker's descriptors: %s", strerror(errno));
        goto fail;
    }
    fds[0] = null;
    fds[1] = out[1];
    fds[2] = errpipe[1];
    fds[3] = chan[1];
    /* A zygote forks it warm; $CODEINTERP_WORKER names a program to run
     * for every session (the tests' fake workers), so it never has one. */
    if (ci_uses_zygote(s))
        pid = ci_zygote_spawn(s, fds, err, retry, &by_exec, &pidfd);
    if (!ci_uses_zygote(s) || by_exec) {
        pid = exec_session_worker(s, fds, err);
        if (pid > 0 && (pidfd = own_child_pidfd(pid)) == -2) {
            ci_err_set(err, CI_ESPAWN, "the worker (pid %ld) was reaped by another before it "
                       "could be watched: does the host ignore SIGCHLD or reap every child?",
                       (long)pid);
            pid = -1;
        }
    }
    /* Whichever way, ours are closed below: the worker has its copies. */
    null = fds[0];
    out[1] = fds[1];
    errpipe[1] = fds[2];
    chan[1] = fds[3];
    if (pid < 0) {
        rc = err->code != CI_OK ? err->code : CI_ESPAWN;
        goto fail;
    }

    rc = CI_ESPAWN;
    s->worker.pid = pid;
    s->worker.pidfd = pidfd;
    pidfd = -1;
    /*
     * The worker's Landlock rule for its own /proc/<pid> names that
     * directory's inode, and procfs builds a new inode whenever an unused
     * dentry was evicted (memory pressure, drop_caches): the cell would
     * lose /proc/self. Holding the directory open pins the dentry; the
     * worker cannot hold it itself without a descriptor cells would see.
     * Best effort: without it the cell only risks losing /proc/self.
     * A worker with a proc of its own needs no pin of the host's, and
     * the host then lets it go (ci_worker_unpin).
     */
    snprintf(procpath, sizeof procpath, "/proc/%ld", (long)pid);
    s->worker.procfd = open(procpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
    s->worker.channel = chan[0];
    s->worker.out = out[0];
    s->worker.err = errpipe[0];
    chan[0] = out[0] = errpipe[0] = -1;
    if ((s->worker.pidfd >= 0 && fcntl(s->worker.pidfd, F_SETFD, FD_CLOEXEC) < 0) ||
        fcntl(s->worker.channel, F_SETFL, O_NONBLOCK) < 0 ||
        fcntl(s->worker.out, F_SETFL, O_NONBLOCK) < 0 ||
        fcntl(s->worker.err, F_SETFL, O_NONBLOCK) < 0) {
        ci_err_set(err, CI_ESPAWN, "fcntl on the worker's descriptors failed: %s", strerror(errno));
        ci_worker_stop(&s->worker);
        goto fail;
    }
    rc = CI_OK;
fail:
    ci_close_fd(&pidfd);
    ci_close_fd(&chan[0]);
    ci_close_fd(&chan[1]);
    ci_close_fd(&out[0]);
    ci_close_fd(&out[1]);
    ci_close_fd(&errpipe[0]);
    ci_close_fd(&errpipe[1]);
    ci_close_fd(&null);
    return rc;
}

void ci_worker_unpin(struct ci_worker *w)
{
    if (w->pidfd >= 0 && (w->layers & CI_SANDBOX_PIDNS) && (w->layers & CI_SANDBOX_MNTNS))
        ci_close_fd(&w->procfd);
}

int ci_uses_zygote(const ci_session *s)
{
    return s->cfg.zygote && !getenv("CODEINTERP_WORKER");
}

int ci_spawn_worker(ci_session *s, struct ci_err *err)
{
    int retry, rc = spawn_once(s, err, &retry);

    /* A zygote that died on the way is replaced once, time allowing. */
    if (rc != CI_OK && retry && ci_now_ms() < s->start_deadline)
        rc = spawn_once(s, err, &retry);
    return rc;
}
