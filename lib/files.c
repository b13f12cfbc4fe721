/*
 * The session directory and the files moved in and out of its workspace.
 *
 * The workspace is written by untrusted cells, so the host never follows a
 * link found there: names are resolved with ci_open_beneath() (resolve.c:
 * openat2(2) RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk one
 * component at a time where the kernel lacks it; O_NOFOLLOW alone
 * protects only the last component),
 * files with more than one hard link are refused, and removal works on
 * descriptors, never through a link.
 *
 *   <root>/codeinterp-XXXXXX/     mode 0700 (0710, group CI_WORKER_GID, for a
 *                                 root host), removed by ci_session_free; for
 *                                 a root host a tmpfs of its own, the
 *                                 session's quota (quota.c); flock(2)ed
 *                                 by the host while the session lives
 *       workspace/                the cell's working directory
 *       config/                   HOME and MPLCONFIGDIR of the worker
 *       tmp/                      TMPDIR of the worker
 *
 * A root host's worker runs as CI_WORKER_UID (see lib/worker/privileges.c),
 * so the host gives it these three directories and every file it puts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "audit.h"
#include "clock.h"
#include "fd.h"
#include "config.h"
#include "errors.h"
#include "files.h"
#include "quota.h"
#include "read_all.h"
#include "resolve.h"
#include "session.h"
#include "wheel.h"
#include "worker_start.h"

/* ---- creating and removing the session directory ---- */

/* The session directory's mode: the host's alone where the worker has
 * its uid, searchable by the worker's group too for a root host, whose
 * workers are CI_WORKER_UID and CI_WORKER_GID (SECURITY.md, "File
 * modes"). */
#define SESSION_DIR_MODE (geteuid() == 0 ? 0710 : 0700)

/* Sets the mode of the inode @fd holds (an O_PATH descriptor will do)
 * without following a link; 0 or -1 with errno. */
static int set_mode(int fd, mode_t mode)
{
    char proc[64];

    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    return chmod(proc, mode); /* the magic link names exactly this inode */
}

int ci_give_to_worker(int dirfd, const char *name)
{
    if (geteuid() != 0)
        return 0;
    return fchownat(dirfd, name, CI_WORKER_UID, CI_WORKER_GID,
                    AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH));
}

static int remove_tree(int top, int parent, const char *name);

/*
 * A host killed before ci_session_free() leaves its session directories,
 * with whatever its cells wrote, behind. Its host keeps each flock(2)ed
 * (s->dir_fd); when the lock can be taken, no host holds it any more (the
 * kernel drops a dead process's locks), and the directory is removed by
 * the next session started under the same root by a host of the same
 * user. A directory without a workspace (one being made: its host locks
 * it before it makes the workspace), one whose "lock" file is held
 * (old_lock_held), or not ours, is left alone.
 * At most STALE_SCAN entries of the root are looked at, and a root is
 * scanned again only after STALE_EVERY_MS, so a crowded /tmp cannot slow
 * ci_session_new() down (a scan of a few hundred entries costs about a
 * millisecond, a zygote's session start a few).
 */
#define STALE_SCAN 4096
#define STALE_EVERY_MS 60000

/* 1 if @root was not scanned in the last STALE_EVERY_MS by this process;
 * then records the scan. The last few roots are remembered. */
static int stale_scan_due(const char *root)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        char root[3001];
        int64_t at;
        pid_t pid;
    } last[4];
    static unsigned next;
    int64_t now = ci_now_ms();
    int due = 1;

    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < 4; i++) {
        if (last[i].pid == getpid() && !strcmp(last[i].root, root)) {
            due = now - last[i].at >= STALE_EVERY_MS;
            if (due)
                last[i].at = now;
            goto out;
        }
    }
    if (strlen(root) < sizeof last[0].root) {
        unsigned i = next++ % 4;

        strcpy(last[i].root, root);
        last[i].at = now;
        last[i].pid = getpid();
    }
out:
    pthread_mutex_unlock(&lock);
    return due;
}

/* Removes the stale session directory @name of the root @root (open at
 * @rootfd), open at @sdir: its quota tmpfs, if it is one, is detached
 * first (the host that mounted it died), then the directory under it. */
static void remove_stale_dir(const char *root, int rootfd, int sdir, const char *name)
{
    struct stat top, dir;

    if (fstat(rootfd, &top) == 0 && fstat(sdir, &dir) == 0 && top.st_dev != dir.st_dev) {
        char path[PATH_MAX];

        /* The root is safe (root_is_safe): no one else renames in it. */
        snprintf(path, sizeof path, "%s/%s", root, name);
        ci_quota_unmount(path);
    }
    remove_tree(sdir, rootfd, name);
}

/* 1 if @sdir holds a "lock" file someone has flock()ed: the mark of a
 * live session of a host built from an earlier version of this library,
 * which locked that file instead of the directory (two builds can share
 * a machine, a root and a uid: an upgrade, a copy a binding bundles). */
static int old_lock_held(int sdir)
{
    int lock = openat(sdir, "lock", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int held;

    if (lock < 0)
        return 0;
    held = flock(lock, LOCK_EX | LOCK_NB) != 0;
    close(lock);
    return held;
}

static void remove_stale(const char *root)
{
    DIR *d;
    struct dirent *e;
    int seen = 0;

    if (!stale_scan_due(root) || !(d = opendir(root)))
        return;
    while ((e = readdir(d)) && seen++ < STALE_SCAN) {
        struct stat st;
        int sdir;

        if (strncmp(e->d_name, "codeinterp-", 11) != 0 || strlen(e->d_name) != 17 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        sdir = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sdir < 0)
            continue;
        if (flock(sdir, LOCK_EX | LOCK_NB) == 0 &&
            faccessat(sdir, "workspace", F_OK, AT_SYMLINK_NOFOLLOW) == 0 && !old_lock_held(sdir))
            remove_stale_dir(root, dirfd(d), sdir, e->d_name);
        close(sdir);
    }
    closedir(d);
}

/*
 * 0 if no one but root and us can rename what is in @real or above it:
 * every directory from it up to / is owned by root or by us, and, where
 * its group or others may write, sticky (as /tmp is). Else -1 with the
 * offending directory in @bad. Otherwise another user could swap a
 * session directory for one of theirs between its creation and the
 * worker's entering it by name, and read what the cell writes (the
 * checks of OpenSSH's StrictModes, for the same reason).
 */
static int root_is_safe(const char *real, char *bad, size_t badlen)
{
    char path[PATH_MAX];
    struct stat st;
    char *slash;

    snprintf(path, sizeof path, "%s", real);
    for (;;) {
        if (stat(path[0] ? path : "/", &st) != 0)
            return 0; /* gone: mkdtemp says so */
        if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
            ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
            snprintf(bad, badlen, "%s", path[0] ? path : "/");
            return -1;
        }
        if (!path[0])
            return 0;
        slash = strrchr(path, '/');
        *slash = '\0';
    }
}

/* The workspace root of @s (else $TMPDIR, else /tmp) in @real, of
 * PATH_MAX bytes, with every link and dot resolved: the worker mounts the
 * session directory at this path in its own root, and HOME, TMPDIR and
 * its working directory name it, so inside and out it is one path. It
 * must be short enough, and safe (root_is_safe). */
static int resolve_root(ci_session *s, char *real)
{
    const char *root = s->cfg.workspace_root;
    char bad[PATH_MAX];

    if (!root) {
        root = getenv("TMPDIR");
        if (!root || root[0] != '/')
            root = "/tmp";
    }
    if (!realpath(root, real))
        return ci_err_set(&s->err, errno == ENOMEM ? CI_ENOMEM : CI_EIO,
                          "cannot resolve the workspace root %s: %s", root, strerror(errno));
    if (strlen(real) > CI_WORKSPACE_ROOT_MAX) {
        return ci_err_set(&s->err, CI_EIO,
                          "the workspace root %s resolves to a path of %zu bytes, longer than %d",
                          root, strlen(real), CI_WORKSPACE_ROOT_MAX);
    }
    if (root_is_safe(real, bad, sizeof bad) != 0) {
        return ci_err_set(&s->err, CI_EIO,
                          "the workspace root %s is not safe: %s can be written by another "
                          "user who could swap a session directory for their own (it must "
                          "belong to root or to us, and be sticky if others may write it, "
                          "as /tmp is)",
                          real, bad);
    }
    return CI_OK;
}

/* s->dir, a new directory of a random name under @root, mode 0700, and
 * s->workspace, the name of the workspace in it. */
static int make_dir(ci_session *s, const char *root)
{
    size_t n = strlen(root) + sizeof "/codeinterp-XXXXXX";

    if (!(s->dir = malloc(n)) || !(s->workspace = malloc(n + sizeof "/workspace"))) {
        return ci_err_set(&s->err, CI_ENOMEM, "out of memory");
    }
    snprintf(s->dir, n, "%s/codeinterp-XXXXXX", root);
    if (!mkdtemp(s->dir)) { /* mode 0700 */
        ci_err_set(&s->err, CI_EIO, "cannot create a session directory under %s: %s", root,
                   strerror(errno));
        free(s->dir);
        s->dir = NULL;
        return CI_EIO;
    }
    snprintf(s->workspace, n + sizeof "/workspace", "%s/workspace", s->dir);
    return CI_OK;
}

/* The workspace, config and tmp directories in the session directory
 * @dirfd, each given to the worker. 0, or -1 with errno. */
static int make_subdirs(ci_session *s, int dirfd)
{
    static const char *const subdirs[] = {"workspace", "config", "tmp"};

    for (int i = 0; i < 3; i++)
        if (mkdirat(dirfd, subdirs[i], 0700) < 0 || ci_give_to_worker(dirfd, subdirs[i]) < 0)
            return -1;
    if (ci_site_make(s, dirfd) < 0) /* the host's, beside them (wheel.h) */
        return -1;
    /* The session directory itself stays the host's: a worker of another
     * uid can search it, through its group, to reach its three
     * directories, but can put nothing beside them, nor rename them, nor
     * change its mode; no one else can enter it. */
    if (geteuid() == 0 &&
        (fchownat(dirfd, "", 0, CI_WORKER_GID, AT_EMPTY_PATH) < 0 ||
         set_mode(dirfd, SESSION_DIR_MODE) < 0))
        return -1;
    return 0;
}

/* Clears what the new session directory @dirfd inherited from the
 * workspace root: a setgid bit, which every directory made in it would
 * inherit, and ACLs, which would let in whom they name and whose default
 * every file and directory made below would take, the umask ignored
 * (acl(5)): a cell's 0777 would stay 0777. 0, or -1 with errno. */
static int make_private(int dirfd)
{
    static const char *const acls[] = {"system.posix_acl_default", "system.posix_acl_access"};
    char proc[64];

    snprintf(proc, sizeof proc, "/proc/self/fd/%d", dirfd);
    for (int i = 0; i < 2; i++)
        if (removexattr(proc, acls[i]) < 0 && errno != ENODATA && errno != EOPNOTSUPP)
            return -1;
    return set_mode(dirfd, 0700);
}

/* Fills the new s->dir: opens it as s->dir_fd, notes its identity
 * (s->dir_dev, s->dir_ino), makes it private, takes its lock (waiting out
 * a stale scan of another host that may hold it for a moment, and finds
 * no workspace yet) and makes its three directories. */
static int fill_dir(ci_session *s)
{
    int dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;

    if (dirfd >= 0 && fstat(dirfd, &st) == 0) {
        s->dir_dev = st.st_dev;
        s->dir_ino = st.st_ino;
    }
    if (dirfd < 0 || make_private(dirfd) < 0 || flock(dirfd, LOCK_EX) < 0 ||
        make_subdirs(s, dirfd) < 0) {
        if (dirfd >= 0 && errno == EINVAL && geteuid() == 0) {
            /* fchownat's answer for an id this user namespace does not map
             * (a container that maps only root): no worker can run here. */
            ci_err_set(&s->err, CI_ESPAWN,
                       "cannot give the session directory %s to uid %u, which a root "
                       "host's workers run as: this user namespace does not map it "
                       "(/proc/self/uid_map)",
                       s->dir, CI_WORKER_UID);
            close(dirfd);
            return CI_ESPAWN;
        }
        ci_err_set(&s->err, CI_EIO, "cannot create the session directory %s: %s", s->dir,
                   strerror(errno));
        if (dirfd >= 0)
            close(dirfd);
        return CI_EIO;
    }
    s->dir_fd = dirfd;
    return CI_OK;
}

int ci_workspace_open(const ci_session *s)
{
    if (s->dir_fd < 0) {
        errno = EBADF;
        return -1;
    }
    /* Nothing but the host can put or rename anything in s->dir. */
    return openat(s->dir_fd, "workspace", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int ci_workspace_create(ci_session *s)
{
    char root[PATH_MAX];
    int rc;

    if ((rc = resolve_root(s, root)) != CI_OK)
        return rc;
    remove_stale(root);
    if ((rc = make_dir(s, root)) != CI_OK || (rc = ci_quota_mount(s)) != CI_OK)
        return rc;
    return fill_dir(s);
}

/* Makes the directory @name in @parent readable, writable and searchable
 * by its owner, without following a link: a cell may have chmod'ed it 000. */
static void unlock_dir(int parent, const char *name)
{
    struct stat st;
    int fd = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
        set_mode(fd, 0700);
    close(fd);
}

/*
 * The removal of a tree a cell made, which may be of any depth and width,
 * have directories of mode 0, and change no more (its worker is dead). It
 * never follows a link (every directory is opened O_NOFOLLOW from the
 * descriptor of the one above), never names "..", and never recurses: it
 * walks down holding one directory stream a level, at most RM_DEPTH of
 * them, and moves a directory met deeper than that into @top (the session
 * directory) under a name of its own, ".ci-rm-N", to be removed in its
 * turn. The worker cannot write the session directory, so no name there
 * is a cell's. Each pass over a directory that removed something is
 * followed by another, since readdir may skip entries removed under it;
 * a pass that removes nothing ends, so an entry that cannot go ends the
 * walk instead of spinning.
 */
#define RM_DEPTH 32

struct rm_level {
    DIR *d;
    int progress;            /* this pass removed or moved something */
    char name[NAME_MAX + 1]; /* the directory's name in the level above */
};

/* Moves the directory @name of @fd into @top as the next free ".ci-rm-N"
 * (*@next counts them); 0, or -1 with errno. */
static int move_aside(int top, int fd, const char *name, unsigned *next)
{
    char aside[32];

    /* Moving a directory rewrites its "..": it must be writable. */
    unlock_dir(fd, name);
    for (int tries = 0; tries < 64; tries++) {
        snprintf(aside, sizeof aside, ".ci-rm-%u", (*next)++);
        if (renameat2(fd, name, top, aside, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* Opens the directory @name of @parent as a stream at @l, made readable
 * first; 0 or -1. */
static int rm_enter(struct rm_level *l, int parent, const char *name)
{
    int fd;

    unlock_dir(parent, name);
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (!(l->d = fdopendir(fd))) {
        close(fd);
        return -1;
    }
    l->progress = 0;
    snprintf(l->name, sizeof l->name, "%s", name);
    return 0;
}

/* Empties the directory @name of @parent, moving what is deeper than
 * RM_DEPTH into @top, and removes it; 1 if it is gone. */
static int remove_walk(int top, int parent, const char *name, unsigned *next)
{
    struct rm_level lv[RM_DEPTH];
    int depth = 0;

    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
        return 1; /* not a directory, or nothing */
    if (rm_enter(&lv[0], parent, name) < 0)
        return 0;
    for (;;) {
        struct rm_level *l = &lv[depth];
        int fd = dirfd(l->d);
        struct dirent *e = readdir(l->d);

        if (e) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            if (unlinkat(fd, e->d_name, 0) == 0)
                l->progress = 1;
            else if (errno != EISDIR)
                continue;
            else if (depth + 1 == RM_DEPTH) {
                if (move_aside(top, fd, e->d_name, next) == 0)
                    l->progress = 1;
            } else if (rm_enter(&lv[depth + 1], fd, e->d_name) == 0) {
                depth++;
            }
            continue;
        }
        if (l->progress) {
            l->progress = 0;
            rewinddir(l->d);
            continue;
        }
        closedir(l->d);
        if (depth == 0)
            break;
        depth--;
        if (unlinkat(dirfd(lv[depth].d), l->name, AT_REMOVEDIR) == 0)
            lv[depth].progress = 1;
    }
    return unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

/* Removes @name of @parent and all beneath it, then every directory the
 * walk moved into @top; 1 if @name is gone. Cannot fail otherwise: what
 * cannot be removed stays. */
static int remove_tree(int top, int parent, const char *name)
{
    unsigned next = 0, done = 0;
    int gone = remove_walk(top, parent, name, &next);

    while (done < next) {
        char aside[32];

        snprintf(aside, sizeof aside, ".ci-rm-%u", done++);
        remove_walk(top, top, aside, &next);
    }
    return gone;
}

void ci_workspace_remove(ci_session *s)
{
    int top;

    /* A quota's tmpfs goes whole, with everything in it. */
    if (s->quota_dev)
        ci_quota_unmount(s->dir);
    s->quota_dev = 0;
    /* Everything in it goes, whatever its name: deep trees are moved into
     * the session directory itself as they are met, and its passes repeat
     * until a pass finds nothing left. */
    if (s->dir && (top = open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
        remove_tree(top, AT_FDCWD, s->dir);
        close(top);
    }
    ci_close_fd(&s->dir_fd); /* the lock last */
    free(s->dir);
    free(s->workspace);
    s->dir = s->workspace = NULL;
}

/* mkdirat(2) of @name in @dir, mode 0700. In a session whose inode
 * quota a cell filled, the inode of the directory just removed is still
 * held by the dead worker's Landlock rules, which go with its
 * credentials, after an RCU grace period: ENOSPC is tried again for up
 * to a second. 0 or -1 with errno. */
static int make_renewed(int dir, const char *name)
{
    for (int tries = 0;; tries++) {
        if (mkdirat(dir, name, 0700) == 0)
            return 0;
        if (errno != ENOSPC || tries == 100)
            return -1;
        usleep(10000);
    }
}

int ci_workspace_renew(ci_session *s)
{
    static const char *const renewed[] = {"config", "tmp"};
    int top = s->dir_fd, rc = CI_OK;

    if (top < 0)
        return ci_err_set(&s->err, CI_EIO, "the session has no directory");
    /* A worker with the host's uid may have narrowed it (to 0, say). */
    set_mode(top, SESSION_DIR_MODE);
    for (int i = 0; i < 2 && rc == CI_OK; i++) {
        remove_tree(top, top, renewed[i]);
        if (make_renewed(top, renewed[i]) < 0 || ci_give_to_worker(top, renewed[i]) < 0) {
            ci_err_set(&s->err, CI_EIO, "cannot renew %s/%s: %s", s->dir, renewed[i],
                       strerror(errno));
            rc = CI_EIO;
        }
    }
    return rc;
}

/* ---- put and get ---- */

/* The name rules of ci_session_put_file: relative, no empty, "." or ".."
 * component; the same as ci_open_beneath()'s. */
static int name_valid(const char *name)
{
    return ci_name_beneath_valid(name);
}

/* Says which argument of a file call was wrong; CI_EINVAL. */
static int bad_name(ci_session *s, const char *name)
{
    if (!name)
        return ci_err_set(&s->err, CI_EINVAL, "name is NULL");
    return ci_err_set(&s->err, CI_EINVAL,
                      "name \"%.200s\" is not a relative path inside the workspace (no "
                      "leading /, no empty, \".\" or \"..\" component, under %d bytes)",
                      name, PATH_MAX);
}

/* The code of a file call that failed with errno @err. */
static int errno_code(int err)
{
    switch (err) {
    case ENOENT:
        return CI_ENOENT;
    case ELOOP:  /* a symbolic link on the path */
    case EXDEV:  /* a path that leaves the workspace */
    case ENOTDIR:
    case EISDIR:
        return CI_EUNSAFE;
    case ENOMEM:
        return CI_ENOMEM;
    default:
        return CI_EIO;
    }
}

static int open_error(ci_session *s, const char *what, const char *name, int err)
{
    int quota = ci_quota_error(s, name, err);

    if (quota != -1)
        return quota;
    return ci_err_set(&s->err, errno_code(err), "%s %s: %s", what, name, strerror(err));
}

int ci_create_temp(int dirfd, char *tmp, size_t size)
{
    for (int tries = 0; tries < 16; tries++) {
        unsigned long long r;
        int fd;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            return -1;
        snprintf(tmp, size, ".ci-put-%016llx", r);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

static int put_file(ci_session *s, const char *name, const void *data, size_t len)
{
    const char *base, *slash;
    char tmp[64];
    int dirfd, fd, rc = CI_OK;
    size_t done = 0;

    if (!s)
        return CI_EINVAL;
    if (!name_valid(name))
        return bad_name(s, name);
    if (!data && len) {
        return ci_err_set(&s->err, CI_EINVAL, "data is NULL and len is %zu", len);
    }
    if (len > s->cfg.file_limit) {
        return ci_err_set(&s->err, CI_ETOOBIG, "%s: %zu bytes is over the file limit of %llu", name,
                          len, s->cfg.file_limit);
    }
    slash = strrchr(name, '/');
    base = slash ? slash + 1 : name;
    if ((dirfd = ci_workspace_open(s)) < 0)
        return open_error(s, "cannot open the workspace for", name, errno);
    if (slash) {
        char *dir = strndup(name, (size_t)(slash - name));
        int ws = dirfd;

        dirfd = dir ? ci_open_beneath(ws, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0) : -1;
        rc = dir ? errno : ENOMEM;
        free(dir);
        close(ws);
        if (dirfd < 0)
            return rc == ENOMEM ? CI_ENOMEM : open_error(s, "cannot open the directory of", name, rc);
        rc = CI_OK;
    }

    /* Written aside, then renamed over the name: a link planted under that
     * name is replaced, never written through. */
    fd = ci_create_temp(dirfd, tmp, sizeof tmp);
    if (fd < 0) {
        rc = open_error(s, "cannot create", name, errno);
        close(dirfd);
        return rc;
    }
    /* Owned by the worker, so the cell can read and overwrite it. */
    if (ci_give_to_worker(fd, "") < 0)
        rc = open_error(s, "cannot give to the worker", name, errno);
    while (rc == CI_OK && done < len) {
        ssize_t n = write(fd, (const char *)data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = open_error(s, "cannot write", name, n < 0 ? errno : EIO);
            break;
        }
        done += (size_t)n;
    }
    if (close(fd) < 0 && rc == CI_OK)
        rc = open_error(s, "cannot write", name, errno);
    if (rc == CI_OK && renameat(dirfd, tmp, dirfd, base) < 0)
        rc = open_error(s, "cannot replace", name, errno);
    if (rc != CI_OK)
        unlinkat(dirfd, tmp, 0);
    close(dirfd);
    /* The next run rescans first: this file is not the cell's doing. */
    s->files.valid = 0;
    return rc;
}

/* Reads @name, refusing a file over @max bytes (at most the file limit). */
static int get_file(ci_session *s, const char *name, unsigned long long max, void **data,
                    size_t *len)
{
    struct stat st;
    char *buf;
    size_t have = 0;
    int fd, ws, open_err;

    if (data)
        *data = NULL;
    if (len)
        *len = 0;
    if (!s)
        return CI_EINVAL;
    if (!data || !len) {
        return ci_err_set(&s->err, CI_EINVAL, "%s is NULL", !data ? "data" : "len");
    }
    if (!name_valid(name))
        return bad_name(s, name);
    /* O_NONBLOCK: a FIFO planted under the name must not block the open.
     * Device nodes cannot appear: the seccomp policy refuses mknod. */
    if ((ws = ci_workspace_open(s)) < 0)
        return open_error(s, "cannot open the workspace for", name, errno);
    fd = ci_open_beneath(ws, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
    open_err = errno;
    close(ws);
    if (fd < 0)
        return open_error(s, "cannot open", name, open_err);
    if (fstat(fd, &st) < 0) {
        close(fd);
        return open_error(s, "cannot stat", name, errno);
    }
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
        ci_err_set(&s->err, CI_EUNSAFE, "%s: refused, %s", name,
                   !S_ISREG(st.st_mode) ? "not a regular file" : "it has more than one hard link");
        close(fd);
        return CI_EUNSAFE;
    }
    if ((unsigned long long)st.st_size > max) {
        ci_err_set(&s->err, CI_ETOOBIG, "%s: %lld bytes is over the %s of %llu", name,
                   (long long)st.st_size,
                   max < s->cfg.file_limit ? "limit this get asked" : "file limit", max);
        close(fd);
        *len = (size_t)st.st_size; /* ci_session_get_file_max tells it */
        return CI_ETOOBIG;
    }
    /* The size seen by fstat bounds the read, even if the file grows. */
    if (ci_read_all(fd, (size_t)st.st_size, (size_t)st.st_size, &buf, &have) != 0) {
        int err = errno;
        close(fd);
        if (err == ENOMEM) {
            return ci_err_set(&s->err, CI_ENOMEM, "%s: out of memory", name);
        }
        return open_error(s, "cannot read", name, err);
    }
    if (have > (size_t)st.st_size)
        buf[have = (size_t)st.st_size] = '\0';
    close(fd);
    *data = buf;
    *len = have;
    return CI_OK;
}

CI_API int ci_session_put_file(ci_session *s, const char *name, const void *data, size_t len)
{
    int rc;

    if (s && ci_audit_check(s) != CI_OK)
        return CI_EIO;
    rc = put_file(s, name, data, len);
    if (s && name && ci_audit_file(s, "put", name, data, len, rc) != CI_OK && rc == CI_OK)
        rc = CI_EIO; /* the file is in the workspace, but unrecorded */
    return rc;
}

CI_API int ci_session_get_file(ci_session *s, const char *name, void **data, size_t *len)
{
    int rc = ci_session_get_file_max(s, name, s ? s->cfg.file_limit : 0, data, len);

    if (rc != CI_OK && len)
        *len = 0;
    return rc;
}

CI_API int ci_session_get_file_max(ci_session *s, const char *name, ci_uint64 max, void **data,
                                   size_t *len)
{
    int rc;

    if (s && ci_audit_check(s) != CI_OK) {
        if (data)
            *data = NULL;
        if (len)
            *len = 0;
        return CI_EIO;
    }
    rc = get_file(s, name, s && max > s->cfg.file_limit ? s->cfg.file_limit : max, data, len);
    if (s && name && data && len &&
        ci_audit_file(s, "get", name, *data, *len, rc) != CI_OK && rc == CI_OK) {
        /* What the log cannot record is not handed out. */
        free(*data);
        *data = NULL;
        *len = 0;
        rc = CI_EIO;
    }
    return rc;
}
