/*
 * A mount namespace of the worker's own, whose root is a small read-only
 * tmpfs holding only what the interpreter reads: /usr, the /bin, /sbin,
 * /lib* links (or directories) as the host has them, the /etc files the
 * Landlock rules allow (and three directories the warm-up reads), four
 * device nodes, /sys/devices/system/cpu, a /proc (of the worker's own
 * PID namespace, or the host's), the session
 * directory at its own absolute path, a private /tmp, and a signed
 * package manifest's search-path directories found nowhere else in it,
 * read-only. Everything else
 * of the host's tree (/etc/shadow, /home, /root, /var, other sessions'
 * directories) does not exist in it, and the old root is detached, not
 * just hidden. The host's /tmp must exist: the new root is built on it.
 *
 * Made while the worker is single-threaded and before Python starts,
 * which then reads the same /usr files through the new root. A zygote's
 * spare makes it before it has a session (ci_mount_root_ahead) and then
 * moves the zygote's copy of its session directory in
 * (ci_mount_session). It needs
 * CAP_SYS_ADMIN in the user namespace that owns the new mount namespace:
 * a root worker makes it before it leaves root (so it belongs to the
 * initial user namespace, and nothing the worker does later can change
 * its mounts), an unprivileged one inside its own user namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "manifest.h"
#include "proto.h"
#include "worker.h"

/* Where the new root is built: a mount point only inside our namespace,
 * so the host's /tmp is neither written nor seen (the session directory,
 * often under it, is reached through a descriptor opened before). */
#define NEWROOT "/tmp"

/* The new root's path: NEWROOT while it is built, "" once entered. */
static const char *root_at = NEWROOT;

static _Noreturn void die(const char *what, const char *path)
{
    ci_fatal(CI_EXIT_NAMESPACES, "mount namespace: %s %s: %s", what, path, strerror(errno));
}

/* mkdir -p of @path (absolute) in the new root. */
static void make_dirs(const char *path)
{
    char buf[PATH_MAX];

    if (snprintf(buf, sizeof buf, "%s%s", root_at, path) >= (int)sizeof buf)
        ci_fatal(CI_EXIT_NAMESPACES, "mount namespace: path too long: %s", path);
    for (char *p = buf + strlen(root_at) + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            die("mkdir", buf);
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        die("mkdir", buf);
}

/* An empty file at @path in the new root, to bind a file onto. */
static void make_file(const char *path)
{
    char buf[PATH_MAX];
    char *slash;
    int fd;

    snprintf(buf, sizeof buf, "%s", path);
    slash = strrchr(buf, '/');
    if (slash && slash != buf) {
        *slash = '\0';
        make_dirs(buf);
    }
    snprintf(buf, sizeof buf, "%s%s", root_at, path);
    fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
    if (fd < 0)
        die("create", buf);
    close(fd);
}

/* The flags of the mount holding @path that a bind remount must keep:
 * a user namespace cannot clear what its owner's mount set (they are
 * locked), and we never want to clear them anyway. */
static unsigned long kept_flags(const char *path)
{
    struct statvfs sv;
    unsigned long f = 0;

    if (statvfs(path, &sv) != 0)
        return 0;
    if (sv.f_flag & ST_RDONLY)
        f |= MS_RDONLY;
    if (sv.f_flag & ST_NOSUID)
        f |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV)
        f |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    return f;
}

/*
 * The place of the session directory at @path in the new root, made with
 * its parents. Refused if its parent is not on the new root's own tmpfs
 * or on its private /tmp: inside a bind of the host's (a workspace root
 * under /usr, say), its siblings, other sessions' directories, would show.
 */
static void make_session_place(const char *path)
{
    char parent[PATH_MAX], own[PATH_MAX];
    struct stat p, root, tmp;
    char *slash;

    make_dirs(path);
    snprintf(parent, sizeof parent, "%s%s", root_at, path);
    slash = strrchr(parent, '/');
    if (slash)
        slash[slash == parent] = '\0';
    snprintf(own, sizeof own, "%s/", root_at);
    if (stat(parent, &p) != 0 || stat(own, &root) != 0)
        die("stat", parent);
    snprintf(own, sizeof own, "%s/tmp", root_at);
    if (stat(own, &tmp) != 0)
        die("stat", own);
    if (p.st_dev != root.st_dev && p.st_dev != tmp.st_dev)
        ci_fatal(CI_EXIT_NAMESPACES, "the session directory %s is inside a directory the "
                 "sandbox binds from the host, where other sessions' directories would show: "
                 "choose a workspace root outside /usr", path);
}

/*
 * Binds the host's @path, reached through @src, at @path in the new root
 * with @flags (MS_RDONLY, MS_NOSUID, ...). Returns 0, or -1 if @src is
 * missing or the bind is refused (only when @optional; else fatal).
 */
static int bind_from(const char *src, const char *path, unsigned long flags, int optional)
{
    char dst[PATH_MAX];
    struct stat st;

    if (stat(src, &st) != 0) {
        if (optional)
            return -1;
        die("stat", src);
    }
    if (S_ISDIR(st.st_mode))
        make_dirs(path);
    else
        make_file(path);
    snprintf(dst, sizeof dst, "%s%s", root_at, path);
    /* Recursive only where a user namespace insists (locked submounts,
     * as under /proc); otherwise the submounts stay behind. */
    if (mount(src, dst, NULL, MS_BIND, NULL) != 0 &&
        (errno != EINVAL || mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)) {
        if (optional)
            return -1;
        die("bind", src);
    }
    if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | flags | kept_flags(src), NULL) != 0)
        die("remount", dst); /* the bind is there: refusing its flags is not optional */
    return 0;
}

static int bind(const char *path, unsigned long flags, int optional)
{
    return bind_from(path, path, flags, optional);
}

/*
 * A proc instance of our PID namespace at /proc in the new root, showing
 * only its processes (proc(5)), and with subset=pid (Linux 5.8) none of
 * the files about the whole machine either. 1 if mounted; 0 where the
 * kernel refuses (a container whose /proc has paths masked makes a new
 * instance "too revealing"), and the caller binds the host's.
 */
static int mount_own_proc(void)
{
    /* Read-only: our maps were written before, through the host's. */
    const unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    char dst[PATH_MAX];

    make_dirs("/proc");
    snprintf(dst, sizeof dst, NEWROOT "/proc");
    if (mount("proc", dst, "proc", flags, "subset=pid") == 0)
        return 1;
    return mount("proc", dst, "proc", flags, NULL) == 0;
}

/*
 * The Landlock rule for /proc/self names the inode of /proc/1, and proc
 * makes a new one whenever an unused dentry was evicted (the host holds
 * its /proc/<pid> open for the same reason, spawn.c). A bind mount of
 * the directory on itself holds the dentry for the namespace's life, and
 * adds no descriptor. Best effort: a cell only risks losing /proc/self.
 */
static void pin_own_proc(void)
{
    mount("/proc/1", "/proc/1", NULL, MS_BIND, NULL);
}

/* /bin, /lib, ... as the host has them: the same link (into /usr on a
 * merged-usr system) or a read-only bind of the directory. */
static void top_level_link(const char *path)
{
    char target[PATH_MAX], dst[PATH_MAX];
    struct stat st;
    ssize_t n;

    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        bind(path, MS_RDONLY | MS_NOSUID | MS_NODEV, 0);
        return;
    }
    if (!S_ISLNK(st.st_mode))
        return;
    n = readlink(path, target, sizeof target - 1);
    if (n < 0)
        die("readlink", path);
    target[n] = '\0';
    snprintf(dst, sizeof dst, NEWROOT "%s", path);
    if (symlink(target, dst) != 0)
        die("symlink", dst);
}

static int pivot_root(const char *new_root, const char *put_old)
{
    return (int)syscall(SYS_pivot_root, new_root, put_old);
}

/*
 * The owners and modes of the directories above the session directory,
 * read from the host's tree before it is hidden and given to their copies
 * in the new root, so that a directory uid 65534 cannot search on the
 * host stops it here too (ci_leave_root() says so rather than letting
 * paths work inside that fail for the host's view of the session).
 */
struct ancestors {
    size_t n;
    struct {
        size_t len; /* of the path's prefix naming this directory */
        struct stat st;
    } dir[64];
};

static void read_ancestors(const char *session, struct ancestors *a)
{
    char buf[PATH_MAX];

    a->n = 0;
    snprintf(buf, sizeof buf, "%s", session);
    for (char *p = buf + 1; *p && a->n < sizeof a->dir / sizeof *a->dir; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (stat(buf, &a->dir[a->n].st) == 0)
            a->dir[a->n++].len = (size_t)(p - buf);
        *p = '/';
    }
}

/* Best effort: in a user namespace the host's owners may be unmapped. */
static void copy_ancestors(const char *session, const struct ancestors *a)
{
    char buf[PATH_MAX];

    for (size_t i = 0; i < a->n; i++) {
        snprintf(buf, sizeof buf, NEWROOT "%.*s", (int)a->dir[i].len, session);
        if (chown(buf, a->dir[i].st.st_uid, a->dir[i].st.st_gid) != 0 && errno != EPERM &&
            errno != EINVAL)
            die("chown", buf);
        if (chmod(buf, a->dir[i].st.st_mode & 07777) != 0)
            die("chmod", buf);
    }
}

/* The session directory: the parent of our cwd, the workspace. */
static void session_dir(char *out, size_t size)
{
    char *slash;

    if (!getcwd(out, size))
        die("getcwd", "");
    slash = strrchr(out, '/');
    if (!slash || slash == out)
        ci_fatal(CI_EXIT_NAMESPACES, "mount namespace: the workspace %s has no session directory",
                 out);
    *slash = '\0';
}

/*
 * A manifest's search-path directories the new root would not otherwise
 * hold (a virtual environment in /opt, a test's site directory under
 * /tmp), opened in @fd before NEWROOT's tmpfs hides them; -1 for the
 * others. Each is bound read-only later, parents first.
 */
static void open_search_path(int fd[CI_MANIFEST_MAX_PATHS])
{
    const struct ci_manifest_policy *mf = ci_manifest();

    for (size_t i = 0; i < CI_MANIFEST_MAX_PATHS; i++)
        fd[i] = -1;
    for (size_t i = 0; mf && i < mf->n_search; i++)
        if (ci_manifest_needs_bind(i))
            fd[i] = open(mf->search_path[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    /* A missing one: the check names its listed files as missing. */
}

static void bind_search_path(int fd[CI_MANIFEST_MAX_PATHS])
{
    const struct ci_manifest_policy *mf = ci_manifest();
    char fdpath[32];

    for (;;) {
        size_t best = CI_MANIFEST_MAX_PATHS;

        for (size_t i = 0; mf && i < mf->n_search; i++)
            if (fd[i] >= 0 && (best == CI_MANIFEST_MAX_PATHS ||
                               strlen(mf->search_path[i]) < strlen(mf->search_path[best])))
                best = i;
        if (best == CI_MANIFEST_MAX_PATHS)
            return;
        snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd[best]);
        /* Not noexec: extension modules are mapped executable. */
        bind_from(fdpath, mf->search_path[best], MS_RDONLY | MS_NOSUID | MS_NODEV, 0);
        close(fd[best]);
        fd[best] = -1;
    }
}

/*
 * The session's site directory, where the host installs the packages a
 * cell asks for with %pip (lib/wheel.c), if it has one: bound over itself
 * read-only and, unlike the rest of the session directory, not noexec,
 * because an extension module's .so is mapped executable (nothing in it
 * can be run by execve: the seccomp filter refuses execve). Only the
 * host writes it. Where noexec cannot be cleared (a flag the owner of a
 * user namespace's mount set is locked), it stays: pure-Python packages
 * still work, and an extension's import says "failed to map segment".
 */
static void bind_site(const char *session)
{
    const unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
    char dst[PATH_MAX];
    struct stat st;

    snprintf(dst, sizeof dst, "%s%s/site", root_at, session);
    if (lstat(dst, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    if (mount(dst, dst, NULL, MS_BIND, NULL) != 0)
        die("bind", dst);
    if (mount(NULL, dst, NULL, flags | (kept_flags(dst) & ~(MS_NOEXEC | MS_RDONLY)), NULL) != 0 &&
        mount(NULL, dst, NULL, flags | kept_flags(dst), NULL) != 0)
        die("remount", dst);
}

/* A mount namespace of our own, nothing of which propagates back to the
 * host's tree. 0 where the kernel refuses it, or where a container's
 * seccomp profile allows unshare(2) but refuses mount(2): the namespace
 * is then an unchanged copy of the host's tree in which we can mount
 * nothing (and once the worker's own filter is loaded, never will), so
 * it hides nothing, and the worker goes on without the layer. */
static int unshare_mounts(void)
{
    if (unshare(CLONE_NEWNS) != 0) {
        if (ci_ns_refused(errno))
            return 0;
        die("unshare", "CLONE_NEWNS");
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        if (ci_ns_refused(errno))
            return 0;
        die("make private", "/");
    }
    return 1;
}

/* The new root at NEWROOT, all of it but the session directory, with
 * the manifest's directories opened in @search_fd. 1 if its /proc is
 * our PID namespace's own. */
static int build_root(uint32_t have, int search_fd[CI_MANIFEST_MAX_PATHS])
{
    static const char *const links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    /* The files the Landlock rules allow, and three directories only the
     * warm-up reads (Landlock denies them to cells): the alternatives
     * links libblas.so.3 and liblapack.so.3 resolve through, fontconfig's
     * configuration for matplotlib's fc-list, and the sitecustomize.py
     * /usr/lib/python3.11 links to. */
    static const char *const etc[] = {"/etc/ld.so.cache", "/etc/localtime",
                                      "/etc/matplotlibrc", "/etc/mime.types",
                                      "/etc/alternatives", "/etc/fonts", "/etc/python3.11"};
    static const char *const devices[] = {"/dev/zero", "/dev/random", "/dev/urandom"};
    const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    char tmp[PATH_MAX];
    int own_proc;

    if (mount("ci-root", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "mode=0755,size=1m") != 0)
        die("mount tmpfs", NEWROOT);
    bind("/usr", MS_RDONLY | MS_NOSUID | MS_NODEV, 0); /* dlopen: not noexec */
    for (size_t i = 0; i < sizeof links / sizeof *links; i++)
        top_level_link(links[i]);
    for (size_t i = 0; i < sizeof etc / sizeof *etc; i++)
        bind(etc[i], ro, 1);
    /* Device nodes: their own mounts must allow devices. */
    bind("/dev/null", MS_NOSUID | MS_NOEXEC, 0);
    for (size_t i = 0; i < sizeof devices / sizeof *devices; i++)
        bind(devices[i], MS_RDONLY | MS_NOSUID | MS_NOEXEC, 1);
    bind("/sys/devices/system/cpu", ro, 1); /* os.cpu_count(), OpenBLAS */
    /*
     * pid 1 of our own PID namespace mounts a proc of that namespace:
     * the host's processes are not in it. Otherwise the host's /proc, as
     * before: Landlock lets a cell read only its own /proc/<pid> (and the
     * host pins that directory's dentry, which only works on the host's
     * proc instance). Writable, because the user namespace maps are
     * written through it after this.
     */
    own_proc = (have & CI_LAYER_PIDNS) && mount_own_proc();
    if (!own_proc)
        bind("/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0);
    /* A private /tmp, where the session directory often goes. */
    make_dirs("/tmp");
    snprintf(tmp, sizeof tmp, NEWROOT "/tmp");
    if (mount("ci-tmp", tmp, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "mode=1777,size=64m") != 0)
        die("mount tmpfs", tmp);
    bind_search_path(search_fd);
    return own_proc;
}

/* Into the new root, with pivot_root(".", "."), as pivot_root(2)
 * describes; the old root, stacked on it, detached. The cwd is @cwd. */
static void enter_root(const char *cwd, int own_proc)
{
    if (chdir(NEWROOT) != 0)
        die("chdir", NEWROOT);
    if (pivot_root(".", ".") != 0)
        die("pivot_root", NEWROOT);
    if (umount2(".", MNT_DETACH) != 0)
        die("detach the old root", "");
    root_at = "";
    if (chdir("/") != 0 || chdir(cwd) != 0)
        die("chdir", cwd);
    if (own_proc)
        pin_own_proc();
}

/* The new root's tmpfs read-only: nothing more is made in it. */
static void seal_root(void)
{
    if (mount(NULL, root_at[0] ? root_at : "/", NULL,
              MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        die("remount read-only", root_at[0] ? root_at : "/");
}

uint32_t ci_mount_root(uint32_t have)
{
    char cwd[PATH_MAX], session[PATH_MAX], fdpath[32];
    struct ancestors above;
    int session_fd, own_proc, search_fd[CI_MANIFEST_MAX_PATHS];

    if (have & CI_LAYER_MNTNS)
        return 0;
    if (!getcwd(cwd, sizeof cwd))
        die("getcwd", "");
    session_dir(session, sizeof session);
    read_ancestors(session, &above);
    if (!unshare_mounts())
        return 0;
    /* Opened in the new namespace (a bind's source must be one of its
     * mounts), and before NEWROOT's tmpfs hides it. */
    session_fd = open(session, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (session_fd < 0)
        die("open", session);
    snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", session_fd);
    open_search_path(search_fd);
    own_proc = build_root(have, search_fd);
    /* The session directory at its own path (often inside the private
     * /tmp), which is the host's name of it. */
    make_session_place(session);
    bind_from(fdpath, session, MS_NOSUID | MS_NODEV | MS_NOEXEC, 0);
    bind_site(session);
    copy_ancestors(session, &above);
    close(session_fd);
    seal_root();
    enter_root(cwd, own_proc);
    return CI_LAYER_MNTNS;
}

uint32_t ci_mount_root_ahead(uint32_t have)
{
    int own_proc, search_fd[CI_MANIFEST_MAX_PATHS];

    if ((have & CI_LAYER_MNTNS) || !unshare_mounts())
        return 0;
    open_search_path(search_fd);
    own_proc = build_root(have, search_fd);
    enter_root("/", own_proc);
    return CI_LAYER_MNTNS;
}

void ci_mount_session(int tree, const char *path)
{
    const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

    /* The zygote's copy of the directory: no unmount, so none of the
     * kernel's waits for every CPU that an unmount ends with. */
    make_session_place(path);
    if (move_mount(tree, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
        die("move_mount", path);
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags | kept_flags(path), NULL) != 0)
        die("remount", path);
    bind_site(path);
    seal_root();
}
