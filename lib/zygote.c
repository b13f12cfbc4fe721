/*
 * The host's side of the zygotes (lib/worker/zygote.c is the other): one
 * warm worker per preload list, started by fork + exec like any worker,
 * that forks each session's worker on request. A session's worker is then
 * ready in milliseconds instead of the ~0.7 s of starting CPython and
 * importing numpy, pandas and matplotlib, and shares the pages of those
 * imports with every other session until it writes them.
 *
 * A zygote lives as long as the process (it dies with the spawner thread
 * that started it, PR_SET_PDEATHSIG). If it dies or stops answering, it is
 * reaped and the next request starts a new one; the sessions it forked
 * never depend on it, since they are the host's children (CLONE_PARENT).
 * Requests to one zygote are serialised by one lock: each is a send, a
 * fork in the zygote and a reply, about a millisecond.
 *
 * The zygote warms up in a directory of its own made like a session's (so
 * a host that dies leaves nothing a later one does not remove), with HOME
 * and MPLCONFIGDIR in it for matplotlib's font cache; it is removed as
 * soon as the zygote is warm.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include "files.h"
#include "manifest_cache.h"
#include "proto.h"
#include "quota.h"
#include "result.h"
#include "rollback.h"
#include "session.h"
#include "spawn.h"
#include "zygote.h"
#include "zygote_proto.h"

/* Distinct preload lists kept warm at once; the least recently used goes. */
#define MAX_ZYGOTES 4
/* How long a zygote may take to fork and answer. */
#define SPAWN_REPLY_MS 5000

struct zygote {
    char *preload; /* NULL: a free slot */
    char *worker;  /* the program it runs */
    int manifest;  /* 1: it checked and enforces the manifest of digest */
    unsigned char digest[32];
    struct ci_worker proc; /* pid, pidfd; channel is the control socket, err its
                            * stderr until it is warm */
    unsigned long used;
};

static pthread_mutex_t zygote_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zygote zygotes[MAX_ZYGOTES];
static pid_t zygote_owner; /* the process the table belongs to */
static unsigned long zygote_clock;

/* Reaps the children of ours in process group @pgid that have exited, a
 * zygote's: its spares (lib/worker/zygote.c), which the host never hears
 * of, stay in its group until they are given a session. Waits up to
 * @wait_ms for the group to be gone. */
static void reap_group(pid_t pgid, int wait_ms)
{
    int64_t end = ci_now_ms() + wait_ms;
    siginfo_t info;

    for (;;) {
        info.si_pid = 0;
        if (waitid(P_PGID, (id_t)pgid, &info, WEXITED | WNOHANG) < 0) {
            if (errno == EINTR)
                continue;
            return; /* ECHILD: none left */
        }
        if (info.si_pid != 0)
            continue;
        if (ci_now_ms() >= end)
            return;
        usleep(1000);
    }
}

static void zygote_drop(struct zygote *z)
{
    pid_t pgid = z->proc.pid;

    if (pgid > 0) {
        kill(-pgid, SIGKILL);     /* the zygote and its spare */
        ci_worker_stop(&z->proc); /* reaps it, closes the socket */
        reap_group(pgid, 2000);   /* a SIGKILLed spare exits at once */
    }
    free(z->preload);
    free(z->worker);
    memset(z, 0, sizeof *z);
    ci_worker_init(&z->proc);
}

/* Starts a zygote for @preload and @s's manifest, if any, in slot @z.
 * CI_OK, or an error with its code and message in @err. */
static int zygote_start(struct zygote *z, const ci_session *s, const char *preload,
                        struct ci_err *err)
{
    ci_session scratch; /* only its directory: the zygote's warm-up place */
    char a_parent[32];
    int ctl[2] = {-1, -1}, errp[2] = {-1, -1}, fds[4] = {-1, -1, -1, -1}, rc = CI_ESPAWN;
    int policy = -1;
    pid_t pid;

    memset(&scratch, 0, sizeof scratch);
    scratch.cfg.workspace_root = s->cfg.workspace_root;
    scratch.dir_fd = -1;
    if (ci_workspace_create(&scratch) != CI_OK) {
        rc = ci_err_set(err, scratch.err.code, "zygote: %s", scratch.err.msg);
        ci_workspace_remove(&scratch);
        return rc;
    }
    z->preload = ci_strdup(preload);
    z->worker = ci_strdup(ci_worker_path());
    if (!z->preload || !z->worker) {
        rc = ci_err_set(err, CI_ENOMEM, "out of memory");
        goto out;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
        pipe2(errp, O_CLOEXEC) < 0 || (fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ||
        (fds[1] = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
        ci_err_set(err, CI_ESPAWN, "cannot create the zygote's descriptors: %s", strerror(errno));
        goto out;
    }
    if (s->verified_manifest && (policy = ci_manifest_policy_memfd(s->verified_manifest)) < 0) {
        ci_err_set(err, CI_ESPAWN, "cannot hand the zygote its package manifest: %s",
                   strerror(errno));
        goto out;
    }
    z->manifest = s->verified_manifest != NULL;
    if (s->verified_manifest)
        memcpy(z->digest, s->verified_manifest->digest, sizeof z->digest);
    fds[2] = errp[1];
    fds[3] = ctl[1];
    errp[1] = ctl[1] = -1;
    snprintf(a_parent, sizeof a_parent, "%ld", (long)getpid());
    {
        char *argv[] = {"codeinterp-worker", "--zygote", "--parent", a_parent,
                        "--preload", z->preload, z->manifest ? "--manifest" : NULL, NULL};
        pid = ci_exec_worker(argv, scratch.dir, fds, &policy, err);
    }
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    if (policy >= 0)
        close(policy);
    if (pid < 0)
        goto out;
    z->proc.pid = pid;
    z->proc.pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
    z->proc.channel = ctl[0];
    z->proc.err = errp[0];
    ctl[0] = errp[0] = -1;
    fcntl(z->proc.err, F_SETFL, O_NONBLOCK);
    rc = ci_ready_wait(&z->proc, s->start_deadline, 1, "zygote", err);
    /* Reaped if it failed. Any spare it forked (after a READY that came
     * too late) ends when the zygote's socket does, and is reaped here. */
    if (rc != CI_OK)
        reap_group(pid, 2000);
    ci_close_fd(&z->proc.err); /* its stderr is only read until it is warm */
out:
    if (rc != CI_OK)
        zygote_drop(z);
    ci_close_fd(&ctl[0]);
    ci_close_fd(&errp[0]);
    ci_close_fd(&errp[1]);
    /* Warm now: its font cache and HOME are no longer read. */
    ci_workspace_remove(&scratch);
    return rc;
}

/* The zygote for @s's preload list and worker program, started if none
 * is alive; NULL with @err. Called with the lock. */
static struct zygote *zygote_get(const ci_session *s, struct ci_err *err)
{
    const char *preload = ci_config_preload(&s->cfg), *worker = ci_worker_path();
    struct zygote *z, *lru = &zygotes[0];

    if (zygote_owner != getpid()) {
        /* A forked host: the zygotes and their sockets are the parent's. */
        for (z = zygotes; z < zygotes + MAX_ZYGOTES; z++) {
            if (z->proc.channel >= 0 && z->preload)
                close(z->proc.channel);
            if (z->proc.pidfd >= 0 && z->preload)
                close(z->proc.pidfd);
            free(z->preload);
            free(z->worker);
            memset(z, 0, sizeof *z);
            ci_worker_init(&z->proc);
        }
        zygote_owner = getpid();
    }
    for (z = zygotes; z < zygotes + MAX_ZYGOTES; z++) {
        if (z->preload && !strcmp(z->preload, preload) && !strcmp(z->worker, worker) &&
            z->manifest == (s->verified_manifest != NULL) &&
            (!s->verified_manifest || !memcmp(z->digest, s->verified_manifest->digest, sizeof z->digest))) {
            if (!ci_worker_exited(&z->proc))
                goto found;
            zygote_drop(z); /* it died: start another */
            lru = z;
            break;
        }
        if (!z->preload || (lru->preload && z->used < lru->used))
            lru = z;
    }
    z = lru;
    if (z->preload)
        zygote_drop(z);
    if (zygote_start(z, s, preload, err) != CI_OK)
        return NULL;
found:
    z->used = ++zygote_clock;
    return z;
}

/* Kills and reaps children the zygote ASSIGNED but never STARTED. */
static void reap_assigned(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

/* 1 if @pid is a child of ours (waitid with WNOWAIT only asks). */
static int our_child(pid_t pid)
{
    siginfo_t info;

    info.si_pid = 0;
    return pid > 0 && waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* A pidfd of @pid, opened before @pid's checks: while it reads as not
 * exited, @pid is still that process's (a pid is not reused while its
 * process or zombie lives), so a pid reused after a host that ignores
 * SIGCHLD had the kernel reap the worker cannot pass them. -1 if the
 * kernel has no pidfd_open(2) (the checks then stand alone). */
static int pidfd_of(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
}

static int pidfd_lives(int pidfd)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    return pidfd < 0 || poll(&p, 1, 0) == 0;
}

/* Reads the zygote's replies to one SPAWN request (proto.h) until it
 * says STARTED or FAILED, within @wait_ms. The new worker's pid and, in
 * *@pidfd, its pidfd (or -1), or -1 with @err; *@gone is set if the
 * zygote must be dropped, *@by_exec if it cannot see the session
 * directory (ci_zygote_spawn). Every child it ASSIGNED and did not start
 * is killed and reaped here. */
static pid_t read_replies(struct zygote *z, int64_t wait_ms, struct ci_err *err, int *gone,
                          int *by_exec, int *pidfd)
{
    pid_t assigned[8];
    int n_assigned = 0;
    int64_t deadline = ci_now_ms() + wait_ms;

    for (;;) {
        struct pollfd p = {.fd = z->proc.channel, .events = POLLIN};
        struct ci_spawn_reply r;
        int64_t left = deadline - ci_now_ms();
        ssize_t n;

        if (left <= 0 || poll(&p, 1, (int)left) == 0) {
            ci_err_set(err, CI_ESPAWN, "the zygote did not answer within %lld ms",
                       (long long)wait_ms);
            break;
        }
        do
            n = recv(z->proc.channel, &r, sizeof r, MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
            continue;
        if (n != sizeof r) {
            ci_err_set(err, CI_ESPAWN, "the zygote is gone (%s)",
                       n < 0    ? strerror(errno)
                       : n == 0 ? "it closed its channel"
                                : "a short reply");
            break;
        }
        /* One that is not (or no longer) our child is not ours to reap:
         * a spare that died while it waited was reaped with the zygote's
         * group, and the zygote moves on to the next. */
        if (r.stage == CI_SPAWN_ASSIGNED) {
            if (our_child(r.pid) && n_assigned < (int)(sizeof assigned / sizeof *assigned))
                assigned[n_assigned++] = r.pid;
            continue;
        }
        if (r.stage == CI_SPAWN_FAILED && r.pid == -ESTALE) {
            ci_err_set(err, CI_ESPAWN,
                       "the session directory was replaced by another of its name "
                       "before the worker could take it");
            reap_assigned(assigned, n_assigned);
            return -1;
        }
        if (r.stage == CI_SPAWN_FAILED && r.pid == -EXDEV) {
            /* Its copy of the mount table lacks the directory. */
            ci_err_set(err, CI_ESPAWN, "the zygote cannot see the session directory");
            *by_exec = 1;
            reap_assigned(assigned, n_assigned);
            return -1;
        }
        if (r.stage == CI_SPAWN_FAILED && r.pid < 0 && r.pid > -4096) {
            /* It could not fork (EAGAIN, ENOMEM): not its fault, keep it. */
            ci_err_set(err, CI_ESPAWN, "the zygote could not fork: %s", strerror(-r.pid));
            reap_assigned(assigned, n_assigned);
            return -1;
        }
        /*
         * STARTED must name the child it last ASSIGNED, which has left
         * the zygote's group for one of its own before the zygote said
         * so: neither the zygote itself, nor a spare, nor another
         * session's worker passes.
         */
        if (r.stage == CI_SPAWN_STARTED && n_assigned > 0 &&
            r.pid == assigned[n_assigned - 1] && r.pid != z->proc.pid) {
            int fd = pidfd_of(r.pid);

            if (getpgid(r.pid) == r.pid && our_child(r.pid) && pidfd_lives(fd)) {
                reap_assigned(assigned, n_assigned - 1);
                *pidfd = fd;
                return r.pid;
            }
            ci_close_fd(&fd);
        }
        ci_err_set(err, CI_ESPAWN, "the zygote broke the protocol (stage %u, pid %d)",
                   (unsigned)r.stage, (int)r.pid);
        break;
    }
    reap_assigned(assigned, n_assigned);
    *gone = 1;
    return -1;
}

/* Sends one SPAWN request and reads the replies: the pid, or -1 with
 * @err (a zygote that failed is dropped). */
static pid_t zygote_request(struct zygote *z, const ci_session *s, const int fds[4],
                            struct ci_err *err, int *by_exec, int *pidfd)
{
    struct ci_spawn_request req = {
        .version = CI_PROTO_VERSION,
        .dpi = s->cfg.figure_dpi,
        .memory = s->cfg.memory_limit,
        .fsize = s->cfg.file_limit,
        .tasks = (uint32_t)s->cfg.task_limit,
        .output_limit = s->cfg.output_limit,
        .display_limit = s->cfg.display_output_limit,
        .display_run_limit = s->cfg.display_run_limit,
        .cpu = s->cfg.cpu_limit_s,
        .dir_len = (uint32_t)strlen(s->dir),
        .dir_dev = (uint64_t)s->dir_dev,
        .dir_ino = (uint64_t)s->dir_ino,
        .quota_dev = (uint64_t)s->quota_dev,
        .flags = s->cfg.rollback && ci_rollback_possible() ? CI_SPAWN_FLAG_ROLLBACK : 0,
    };
    union {
        char buf[CMSG_SPACE(sizeof(int) * (CI_SPAWN_FDS + 1))];
        struct cmsghdr align;
    } control;
    struct iovec iov[2] = {{&req, sizeof req}, {s->dir, req.dir_len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2, .msg_control = control.buf,
                       .msg_controllen = sizeof control.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    int gone = 0, tree = -1, nfds = CI_SPAWN_FDS;
    int64_t left;
    pid_t pid;
    ssize_t n;

    if (req.dir_len < 1 || req.dir_len > CI_SPAWN_DIR_MAX) {
        ci_err_set(err, CI_ESPAWN, "the session directory's path is too long for the zygote");
        return -1;
    }
    /* The quota's tmpfs, which the zygote may not see (quota.c). */
    if (s->quota_dev && (tree = ci_quota_tree(s)) < 0) {
        ci_err_set(err, CI_ESPAWN, "cannot copy the session's tmpfs for the worker: %s",
                   strerror(errno));
        return -1;
    }
    nfds += tree >= 0;
    memset(control.buf, 0, sizeof control.buf);
    m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * CI_SPAWN_FDS);
    if (tree >= 0)
        memcpy(CMSG_DATA(c) + sizeof(int) * CI_SPAWN_FDS, &tree, sizeof tree);
    do
        n = sendmsg(z->proc.channel, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    ci_close_fd(&tree);
    if (n != (ssize_t)(sizeof req + req.dir_len)) {
        ci_err_set(err, CI_ESPAWN, "the zygote is gone (send: %s)",
                   n < 0 ? strerror(errno) : "short");
        zygote_drop(z);
        return -1;
    }
    /* No longer than the session's start may take. */
    left = s->start_deadline - ci_now_ms();
    pid = read_replies(z,
                       left < 1                ? 1
                       : left < SPAWN_REPLY_MS ? left
                                               : SPAWN_REPLY_MS,
                       err, &gone, by_exec, pidfd);
    if (gone)
        zygote_drop(z);
    return pid;
}

pid_t ci_zygote_spawn(ci_session *s, int fds[4], struct ci_err *err, int *retry, int *by_exec,
                      int *pidfd)
{
    pid_t pid = -1;
    struct zygote *z;

    *retry = 0;
    *by_exec = 0;
    *pidfd = -1;
    pthread_mutex_lock(&zygote_lock);
    z = zygote_get(s, err);
    if (z) {
        reap_group(z->proc.pid, 0); /* a spare that died unused */
        pid = zygote_request(z, s, fds, err, by_exec, pidfd);
        /* A zygote that died on this request was dropped: the next try
         * starts another (with new descriptors: the old ones may be in
         * a child it started before it died, which was reaped). */
        *retry = pid < 0 && !z->preload;
    }
    pthread_mutex_unlock(&zygote_lock);
    return pid;
}

void ci_zygote_stop_all(void)
{
    pthread_mutex_lock(&zygote_lock);
    if (zygote_owner == getpid())
        for (struct zygote *z = zygotes; z < zygotes + MAX_ZYGOTES; z++)
            if (z->preload)
                zygote_drop(z);
    pthread_mutex_unlock(&zygote_lock);
}
