/*
 * The zygote: a worker warmed once (CPython started, the preload list
 * imported, the cell runner loaded) that then only forks session workers
 * when the host asks, over the SOCK_SEQPACKET channel of lib/proto.h.
 *
 * It keeps children forked ahead, the spares (spare_life()), each of which has
 * already made its namespaces, entered its new root and written the
 * pages a first cell writes; a request goes to the spare with a copy of
 * the session directory the zygote made with open_tree(2) in a mount
 * namespace of its own (ci_unshare_zygote), the host gets the spare's
 * pid, and the zygote forks a replacement once that session has had time
 * to start (SPARE_DELAY_MS). A session's start thus waits for none of the
 * fork, those page copies, or the unmount of the spare's old root.
 *
 * It holds no session's data: it never runs a cell, never reads a
 * workspace, and each child gets its session (descriptors, workspace,
 * limits, environment) only after the fork, then isolates and locks
 * itself down exactly as a worker started by exec does (main.c).
 *
 * A child is made with clone(CLONE_PARENT): it is the host's child, not
 * the zygote's, so the host waits for it, reads its status and is the
 * parent its PR_SET_PDEATHSIG watches, as for a worker it started itself,
 * and the zygote's death (or its restart) touches no session.
 *
 * glibc has no fork() with CLONE_PARENT, so the clone is the raw system
 * call. What glibc's fork() would do besides is moot here: the zygote is
 * single-threaded (checked), so no lock is held and no atfork handler has
 * anything to release. One thing stays behind: the thread id glibc keeps
 * in the main thread's descriptor is still the zygote's. glibc uses it
 * only to signal or join that thread from another one (pthread_kill,
 * which then fails with ESRCH) and for PI and robust mutexes, which
 * neither CPython nor the cell runner uses; raise() and pthread_kill() on
 * the calling thread ask the kernel for the real id.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto.h"
#include "zygote_proto.h"
#include "worker.h"

/* How long a spare may take to take its session and leave the group. */
#define SPARE_ACK_MS 2000

/*
 * Spares kept ready, and how long after handing one out the zygote waits
 * before it forks a replacement while another is still ready: long
 * enough for that session's start and first cell, which on two CPUs
 * would otherwise compete with the fork and the new spare's first writes
 * (several ms of CPU between them). With none left (sessions coming
 * faster than that), the replacement is forked at once.
 */
#define SPARES 2
#define SPARE_DELAY_MS 10

/* Ours, for a spare to map in the user namespace its clone made: inside,
 * until mapped, they read as the overflow ids. */
static unsigned zygote_uid, zygote_gid;

/* 1 if this zygote has user and mount namespaces of its own in which it
 * can copy a session directory with open_tree(2) (ci_unshare_zygote):
 * its spares then enter their new root before they have a session. */
static int zygote_mounts;

/* What the zygote hands a spare: the host's request as it came, and,
 * with zygote_mounts, the session directory's copy as a fifth
 * descriptor. Both sides are this program, forked: a plain struct. */
struct order {
    struct ci_spawn_request req;
    int32_t tree_error;             /* 0, or the errno of copy_session() */
    char dir[CI_SPAWN_DIR_MAX + 1]; /* the host's name (links resolved), NUL-terminated */
};

/* A pidfd of the host, for a spare in a PID namespace of its own to check
 * that its parent lives (ci_tie_to_outside_parent); -1 without pidfds
 * (Linux before 5.3), and then no spare gets a PID namespace. */
static int host_pidfd = -1;

/* 1 if @fd has something to read (or hung up) within @ms. */
static int readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;

    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return n > 0;
}

/* 1 if this process has one thread: a fork of several would copy locks
 * another thread holds. */
static int single_threaded(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n == 1;
}

/* Sends the host one reply (proto.h); a host that went away ends us. */
static void reply(uint32_t stage, int32_t pid)
{
    struct ci_spawn_reply r = {.pid = pid, .stage = stage};
    ssize_t n;

    do
        n = send(CI_FD_CHANNEL, &r, sizeof r, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
        _exit(CI_EXIT_HOST_GONE);
    if (n != (ssize_t)sizeof r)
        ci_fatal(CI_EXIT_PROTOCOL, "zygote: send: %s", n < 0 ? strerror(errno) : "short");
}

/* The descriptors that came in @m's SCM_RIGHTS messages: the first @max
 * in @fds, the others closed. How many came. */
static int take_rights(struct msghdr *m, int *fds, int max)
{
    struct cmsghdr *c;
    int n = 0;

    for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            int fd;

            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (n < max)
                fds[n] = fd;
            else
                close(fd);
            n++;
        }
    }
    return n;
}

/* One SPAWN message on @sock: the request, the directory (NUL-terminated
 * in @dir) and its descriptors in @fds, the fifth -1 unless the request
 * has a quota. 1 with a well-formed one; 0 for a malformed one (its
 * descriptors closed); -1 at EOF. */
static int receive(int sock, struct ci_spawn_request *req, char *dir, int fds[CI_SPAWN_FDS + 1])
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * (CI_SPAWN_FDS + 4))];
        struct cmsghdr align;
    } control;
    struct iovec iov[2] = {{req, sizeof *req}, {dir, CI_SPAWN_DIR_MAX + 1}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2,
                         .msg_control = control.buf, .msg_controllen = sizeof control.buf};
    int nfds, ok;
    ssize_t n;

    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return -1;
    if (n < 0)
        ci_fatal(CI_EXIT_PROTOCOL, "zygote: recvmsg: %s", strerror(errno));
    fds[CI_SPAWN_FDS] = -1;
    nfds = take_rights(&msg, fds, CI_SPAWN_FDS + 1);
    ok = !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) && (size_t)n >= sizeof *req &&
         nfds == CI_SPAWN_FDS + (req->quota_dev != 0) && req->version == CI_PROTO_VERSION &&
         (req->flags & ~CI_SPAWN_FLAG_ROLLBACK) == 0 && req->reserved == 0 &&
         req->dir_len >= 1 && req->dir_len <= CI_SPAWN_DIR_MAX &&
         (size_t)n == sizeof *req + req->dir_len;
    if (!ok) {
        for (int i = 0; i < nfds && i < CI_SPAWN_FDS + 1; i++)
            close(fds[i]);
        return 0;
    }
    dir[req->dir_len] = '\0';
    return 1;
}

/*
 * With zygote_mounts: a copy of the session directory made with
 * open_tree(2), not recursive, for the spare to attach at its name in its
 * own root (ci_mount_session). Opened here, as the workers' uid: a
 * directory above it that this uid cannot search fails here as it would
 * in the worker. The copy's descriptor, or -1 (with o->tree_error set,
 * or without zygote_mounts).
 */
static int copy_session(struct order *o)
{
    struct stat st;
    int dir, tree;

    o->tree_error = 0;
    if (!zygote_mounts)
        return -1;
    dir = open(o->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        o->tree_error = errno;
        return -1;
    }
    /* By name, so the one the host made, or nothing: whoever can write
     * above it could have put another in its place. */
    if (fstat(dir, &st) != 0 || (uint64_t)st.st_dev != o->req.dir_dev ||
        (uint64_t)st.st_ino != o->req.dir_ino) {
        o->tree_error = ESTALE;
        close(dir);
        return -1;
    }
    tree = open_tree(dir, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
    if (tree < 0)
        o->tree_error = errno;
    close(dir);
    return tree;
}

/*
 * With a quota: @tree, the host's copy of the session directory's tmpfs
 * (zygote_proto.h), which a spare attaches instead of copy_session()'s,
 * or -1 with o->tree_error set: EXDEV without zygote_mounts (the spare
 * could not attach it: the host starts that worker by exec), EACCES if
 * this uid, the workers', cannot reach the directory by its name, as a
 * worker started by exec could not (the spare explains).
 */
static int take_quota_tree(struct order *o, int tree)
{
    int dir = zygote_mounts ? open(o->dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;

    o->tree_error = !zygote_mounts ? EXDEV : dir < 0 && errno == EACCES ? EACCES : 0;
    if (dir >= 0)
        close(dir);
    if (!o->tree_error)
        return tree;
    close(tree);
    return -1;
}

/* Passes @o on to a spare, with the request's descriptors and @tree
 * (if not -1), and waits for the spare to say it has left the zygote's
 * process group. 0, or -1 (the spare is gone, or did not answer within
 * SPARE_ACK_MS). */
static int forward(int sock, const struct order *o, const int fds[CI_SPAWN_FDS], int tree)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * (CI_SPAWN_FDS + 1))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {(void *)o, sizeof *o};
    int nfds = CI_SPAWN_FDS + (tree >= 0);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = CMSG_SPACE(sizeof(int) * nfds)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    char ack;
    ssize_t n;

    memset(control.buf, 0, sizeof control.buf);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * CI_SPAWN_FDS);
    if (tree >= 0)
        memcpy(CMSG_DATA(c) + sizeof(int) * CI_SPAWN_FDS, &tree, sizeof tree);
    do
        n = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof *o)
        return -1;
    if (!readable(sock, SPARE_ACK_MS))
        return -1;
    do
        n = recv(sock, &ack, 1, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}

/* In a spare: the zygote's order, its descriptors in @fds and the copy
 * of the session directory in *@tree (-1 if none came). 1, or -1 at EOF;
 * exits on anything else, which would be a bug of this file. */
static int take_order(int sock, struct order *o, int fds[CI_SPAWN_FDS], int *tree)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * (CI_SPAWN_FDS + 1))];
        struct cmsghdr align;
    } control;
    struct iovec iov = {o, sizeof *o};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = sizeof control.buf};
    int got[CI_SPAWN_FDS + 1], nfds;
    ssize_t n;

    do
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return -1;
    nfds = n > 0 ? take_rights(&m, got, CI_SPAWN_FDS + 1) : 0;
    if (n != (ssize_t)sizeof *o || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        (nfds != CI_SPAWN_FDS && nfds != CI_SPAWN_FDS + 1))
        ci_fatal(CI_EXIT_PROTOCOL, "spare: a malformed order from the zygote");
    memcpy(fds, got, sizeof(int) * CI_SPAWN_FDS);
    *tree = nfds > CI_SPAWN_FDS ? got[CI_SPAWN_FDS] : -1;
    o->dir[sizeof o->dir - 1] = '\0';
    return 1;
}

/* In the child: the request's descriptors become 0..3, @keep[0] and
 * @keep[1] (each if not -1) 4 and 5, and nothing else of the zygote's
 * stays open. */
static void take_descriptors(const int fds[CI_SPAWN_FDS], const int keep[2])
{
    int from[CI_SPAWN_FDS + 2], moved[CI_SPAWN_FDS + 2];

    memcpy(from, fds, sizeof(int) * CI_SPAWN_FDS);
    from[CI_SPAWN_FDS] = keep[0];
    from[CI_SPAWN_FDS + 1] = keep[1];
    /* First above them all, so one dup2 cannot close another's source. */
    for (int i = 0; i < CI_SPAWN_FDS + 2; i++) {
        moved[i] = from[i] < 0 ? -1 : fcntl(from[i], F_DUPFD_CLOEXEC, CI_SPAWN_FDS + 16);
        if (from[i] >= 0 && moved[i] < 0)
            ci_fatal(CI_EXIT_DESCRIPTORS, "zygote child: F_DUPFD: %s", strerror(errno));
    }
    for (int i = 0; i < CI_SPAWN_FDS + 2; i++) {
        if (moved[i] < 0)
            close(i);
        else if (dup3(moved[i], i, i < CI_SPAWN_FDS ? 0 : O_CLOEXEC) != i)
            ci_fatal(CI_EXIT_DESCRIPTORS, "zygote child: dup3: %s", strerror(errno));
    }
    if (close_range(CI_SPAWN_FDS + 2, ~0u, 0) != 0)
        ci_fatal(CI_EXIT_DESCRIPTORS, "zygote child: close_range: %s", strerror(errno));
}

/*
 * A spare: the next session's worker, forked before it is asked for, so
 * that the fork, the namespaces that need no session and the first
 * writes to the warm pages (ci_interp_prefault) are not on any session's
 * start. It keeps only its socket to the zygote, stays in the zygote's
 * process group (the host reaps the group of a zygote it drops, so a
 * spare it never heard of cannot be left a zombie), and waits. Returns in
 * the spare once its session arrives, with its own session and group;
 * exits if the zygote goes first.
 */
static uint32_t spare_life(int sock, pid_t parent, int own_pidns, struct ci_spawn_request *req,
                           char **session_dir)
{
    static struct order order;
    int fds[CI_SPAWN_FDS], got, ruleset, tree, keep[2];
    uint32_t layers;

    prctl(PR_SET_NAME, "ci-spare", 0, 0, 0);
    /* Before the pidfd is closed with the zygote's other descriptors. */
    if (own_pidns)
        ci_tie_to_outside_parent(host_pidfd);
    /* With a manifest, its Landlock rules now, from the descriptors the
     * zygote holds, while no session waits: ruleset goes to fd 6. */
    ruleset = ci_landlock_prepare();
    if (ruleset >= 0 && ruleset <= CI_SPAWN_FDS + 2) {
        int moved = fcntl(ruleset, F_DUPFD_CLOEXEC, CI_SPAWN_FDS + 3);

        if (moved < 0)
            ci_fatal(CI_EXIT_DESCRIPTORS, "spare: its ruleset: %s", strerror(errno));
        close(ruleset);
        ruleset = moved;
    }
    /* Nothing of the zygote's: above all not the host's channel (fd 3),
     * whose EOF tells the host the zygote is gone. */
    if (dup2(sock, CI_SPAWN_FDS + 1) < 0 || close(CI_FD_CHANNEL) != 0 ||
        (ruleset >= 0 && dup2(ruleset, CI_SPAWN_FDS + 2) < 0) ||
        close_range(CI_SPAWN_FDS + 2 + (ruleset >= 0), ~0u, 0) != 0 ||
        close_range(CI_SPAWN_FDS, CI_SPAWN_FDS, 0) != 0)
        ci_fatal(CI_EXIT_DESCRIPTORS, "spare: its descriptors: %s", strerror(errno));
    if (ruleset >= 0)
        ruleset = CI_SPAWN_FDS + 2;
    sock = CI_SPAWN_FDS + 1;
    layers = ci_lockdown_spare(parent, own_pidns, zygote_uid, zygote_gid);
    /* Its new root entered now, while no session waits: the session
     * directory comes as the zygote's copy, and no unmount is left for
     * the session's start. */
    if (zygote_mounts)
        layers |= ci_mount_root_ahead(layers);
    /* Out of the zygote's working directory, the one it warmed up in,
     * which the host removes once the zygote is warm: the new root put
     * us at its "/", but without one (a container that refuses the
     * namespaces) the rehearsal below would run where getcwd(3) fails,
     * and the spare die of it. main() then enters the session's own. */
    if (!(layers & CI_LAYER_MNTNS) && chdir("/") != 0)
        ci_fatal(CI_EXIT_PYTHON, "spare: cannot leave the zygote's directory: %s",
                 strerror(errno));
    /* Worth its time only while no session waits for this spare. */
    if (!readable(sock, 0))
        ci_interp_prefault();
    got = take_order(sock, &order, fds, &tree);
    if (got < 0)
        _exit(CI_EXIT_HOST_GONE);
    /* Out of the zygote's group before the host hears of us: a host that
     * drops the zygote kills and reaps that group whole. The zygote
     * answers the host only after this byte. */
    ci_own_session();
    if (send(sock, "s", 1, MSG_NOSIGNAL) != 1)
        _exit(CI_EXIT_HOST_GONE);
    prctl(PR_SET_NAME, "codeinterp-work", 0, 0, 0); /* as exec names it */
    keep[0] = ruleset;
    keep[1] = tree;
    take_descriptors(fds, keep); /* closes the socket too; our stderr is the session's */
    if (ruleset >= 0)
        ci_landlock_use(CI_SPAWN_FDS);
    if (zygote_mounts && (layers & CI_LAYER_MNTNS)) {
        /* Every other failure of the copy the zygote answered itself. */
        if (tree < 0)
            ci_fatal_unreachable(order.dir, order.tree_error ? order.tree_error : EBADF);
        ci_mount_session(CI_SPAWN_FDS + 1, order.dir);
    }
    if (tree >= 0)
        close(CI_SPAWN_FDS + 1);
    *req = order.req;
    *session_dir = order.dir;
    return layers;
}

/* A spare as the zygote sees it, or as it sees itself once forked. */
struct spare {
    pid_t pid;     /* in the zygote: its pid, or -errno of a failed fork */
    int sock;      /* the zygote's end of its socket, or in the spare its own; -1 */
    int own_pidns; /* in the spare: it is pid 1 of a PID namespace of its own */
};

/*
 * A new spare in @sp (pid, and the zygote's end of its socket), or none
 * (sock -1) if the fork failed. Returns 1 in the spare itself, with
 * sp->own_pidns set if it is pid 1 of a PID namespace of its own.
 *
 * The clone makes that namespace, with the user namespace that owns it:
 * CLONE_NEWPID needs CAP_SYS_ADMIN over the new namespace, which the
 * zygote has over a user namespace it creates in the same call and
 * nowhere else (user_namespaces(7)). unshare(CLONE_NEWPID) in the child
 * would not do: it moves only the caller's later children. Where the
 * kernel or a container refuses the pair, the spare is cloned without it
 * and makes its user namespace itself (ci_lockdown_spare).
 */
static int spare_make(struct spare *sp)
{
    int pair[2];

    sp->pid = 0;
    sp->sock = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
        return 0;
    sp->own_pidns = host_pidfd >= 0;
    sp->pid = sp->own_pidns ? ci_interp_fork(CLONE_PARENT | CLONE_NEWUSER | CLONE_NEWPID)
                            : -EPERM;
    if (sp->pid < 0 && ci_ns_refused(-sp->pid)) {
        sp->own_pidns = 0;
        sp->pid = ci_interp_fork(CLONE_PARENT);
    }
    if (sp->pid == 0) {
        close(pair[0]);
        sp->sock = pair[1];
        return 1;
    }
    close(pair[1]);
    if (sp->pid < 0) {
        close(pair[0]);
        return 0;
    }
    sp->sock = pair[0];
    return 0;
}

/* The ready spares, oldest first. */
struct pool {
    struct spare v[SPARES];
    int ready;
};

/*
 * The zygote's own start: out of the host's session, never root, tied to
 * @parent, its manifest's files checked, warm with @preload, its seccomp
 * filter built, then its mount namespace made; READY, with the layers it
 * has, goes to the host last.
 */
static void warm_up(pid_t parent, const char *preload)
{
    uint32_t layers;

    /* Named for ps and top; each child takes the worker's name back. */
    prctl(PR_SET_NAME, "ci-zygote", 0, 0, 0);
    layers = ci_lockdown_zygote(parent);
    zygote_uid = (unsigned)geteuid();
    zygote_gid = (unsigned)getegid();

    /* Checked to be our parent's by the ci_tie_to_parent() below. */
    host_pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
    /* With a manifest: its files hashed here once for every child, and
     * its Landlock rules planned and held open (manifest.c). */
    ci_manifest_check_files();
    ci_landlock_plan(1);
    ci_interp_warm(preload, 1);
    ci_seccomp_prepare();
    if (!single_threaded())
        ci_fatal(CI_EXIT_PYTHON, "zygote: the warm-up left threads running; "
                 "a fork would copy their locks");
    /* Single-threaded, as unshare(CLONE_NEWUSER) requires; after the
     * warm-up, which thus ran without a capability. */
    zygote_mounts = ci_unshare_zygote(zygote_uid, zygote_gid);
    ci_tie_to_parent(parent);
    ci_send_ready(layers, -1);
}

/* Tops up @pool while no request waits: at once when it is empty, else
 * after SPARE_DELAY_MS without one. 1 in a new spare (@self), else 0. */
static int top_up(struct pool *pool, struct spare *self)
{
    struct spare sp;

    while (pool->ready < SPARES && !readable(CI_FD_CHANNEL, pool->ready ? SPARE_DELAY_MS : 0)) {
        if (spare_make(&sp)) {
            *self = sp;
            return 1;
        }
        if (sp.sock < 0)
            break;
        pool->v[pool->ready++] = sp;
    }
    return 0;
}

/*
 * Gives @o, with @fds and @tree, to the oldest spare of @pool; if it died
 * meanwhile, the next one, or a new one, takes it. *@answer becomes the
 * pid of the one that took it, or stays -EAGAIN (or -errno of a fork);
 * *@taken is that spare, whose socket the caller closes (-1 if none).
 * 1 in a new spare (@self), else 0.
 */
static int assign(struct pool *pool, const struct order *o, const int fds[CI_SPAWN_FDS],
                  int tree, int32_t *answer, struct spare *taken, struct spare *self)
{
    struct spare sp;

    for (int attempt = 0; attempt < SPARES + 1; attempt++) {
        if (pool->ready > 0) {
            sp = pool->v[0];
            memmove(pool->v, pool->v + 1, sizeof *pool->v * (size_t)--pool->ready);
        } else if (spare_make(&sp)) {
            *self = sp;
            return 1;
        }
        if (sp.sock < 0) {
            *answer = sp.pid < 0 ? sp.pid : -EAGAIN;
            return 0;
        }
        /* Before the spare has the session: should this process die
         * from here on, the host knows which child to reap. */
        reply(CI_SPAWN_ASSIGNED, sp.pid);
        if (forward(sp.sock, o, fds, tree) == 0) {
            *answer = sp.pid;
            *taken = sp;
            return 0;
        }
        /* Gone, or stuck with the session's descriptors: it must not
         * wake up later to speak on them beside the next one. */
        kill(sp.pid, SIGKILL);
        close(sp.sock);
    }
    return 0;
}

/* Answers the host's next SPAWN request; exits if the host is gone. 1 in
 * a new spare (@self), else 0. */
static int serve_request(struct pool *pool, struct spare *self)
{
    static struct order order;
    struct spare taken = {.sock = -1};
    int32_t answer = -EAGAIN;
    int fds[CI_SPAWN_FDS + 1], got, tree;

    got = receive(CI_FD_CHANNEL, &order.req, order.dir, fds);
    if (got < 0)
        _exit(CI_EXIT_HOST_GONE);
    if (got == 0) {
        explicit_bzero(&order, sizeof order);
        reply(CI_SPAWN_FAILED, -EINVAL);
        return 0;
    }
    /* A session with a quota comes with its tmpfs, mounted in the host's
     * namespace, which ours may lack. */
    tree = order.req.quota_dev ? take_quota_tree(&order, fds[CI_SPAWN_FDS])
                               : copy_session(&order);
    /* A directory our copy of the mount table lacks (on a mount made
     * after it, where mounts do not propagate) is no spare's: the host
     * starts that worker by exec. One our uid cannot reach, the spare
     * explains. */
    if (order.tree_error && order.tree_error != EACCES)
        answer = order.tree_error == ESTALE ? -ESTALE : -EXDEV;
    else if (assign(pool, &order, fds, tree, &answer, &taken, self))
        return 1;
    for (int i = 0; i < CI_SPAWN_FDS; i++)
        close(fds[i]);
    if (tree >= 0)
        close(tree);
    /* The next spare is forked from this memory: nothing of this session
     * may be in it. */
    explicit_bzero(&order, sizeof order);
    reply(answer > 0 ? CI_SPAWN_STARTED : CI_SPAWN_FAILED, answer);
    if (taken.sock >= 0)
        close(taken.sock);
    return 0;
}

uint32_t ci_zygote_serve(pid_t parent, const char *preload, struct ci_spawn_request *req,
                         char **session_dir)
{
    struct pool pool = {.ready = 0};
    struct spare self;

    warm_up(parent, preload);
    for (;;)
        if (top_up(&pool, &self) || serve_request(&pool, &self))
            return spare_life(self.sock, parent, self.own_pidns, req, session_dir);
}
