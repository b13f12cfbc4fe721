/*
 * Opening a name below a directory the cell can write, without following
 * any symbolic link and without leaving that directory.
 *
 * openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does it in one
 * call (O_NOFOLLOW alone protects only the last component). Where it is
 * missing (ENOSYS: kernels before 5.6, and valgrind 3.19, which does not
 * know the call; EPERM: old container seccomp profiles), the name is
 * walked one component at a time instead:
 * each intermediate component is opened O_PATH | O_NOFOLLOW relative to
 * the descriptor of the one before and must be a directory (a symbolic
 * link, planted before or swapped in during the walk, is then seen as the
 * link itself and refused), and the last is opened with O_NOFOLLOW.
 * Since every step starts from a descriptor already checked, a rename
 * during the walk cannot redirect it. For the names allowed here (no
 * "..", ".", empty component or leading '/'), that gives the guarantees
 * of RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS.
 * RESOLVE_NO_XDEV is approximated by refusing a directory on another
 * device than @dirfd; a bind mount of the same filesystem, or a file
 * mounted over a name, is not seen (only directories: overlayfs on old
 * kernels gives files the st_dev of their layer). Neither the worker nor
 * a cell can mount anything the host sees (its mounts are in a mount
 * namespace of its own), so either takes the host's own administrator.
 *
 * Both paths check the name first, so they accept and refuse the same
 * names whatever the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "resolve.h"

#define RESOLVE_SAFE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)

/* Set once openat2 answered ENOSYS: it will not come back. */
static atomic_int no_openat2;

int ci_name_beneath_valid(const char *name)
{
    const char *p = name;
    if (!name || !*name || *name == '/' || strlen(name) >= PATH_MAX)
        return 0;
    while (*p) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n;
        if (*p == '/')
            p++;
        if (end && !*p) /* a trailing slash */
            return 0;
    }
    return 1;
}

static int close_keep_errno(int fd, int err)
{
    close(fd);
    errno = err;
    return -1;
}

int ci_open_beneath_fallback(int dirfd, const char *name, int flags, mode_t mode)
{
    char part[NAME_MAX + 1];
    const char *p = name, *slash;
    struct stat top, st;
    int cur = -1, fd;

    if (!ci_name_beneath_valid(name)) {
        errno = EINVAL;
        return -1;
    }
    if (fstat(dirfd, &top) < 0)
        return -1;
    while ((slash = strchr(p, '/'))) {
        size_t n = (size_t)(slash - p);
        int next;
        if (n > NAME_MAX) {
            errno = ENAMETOOLONG;
            return cur >= 0 ? close_keep_errno(cur, errno) : -1;
        }
        memcpy(part, p, n);
        part[n] = '\0';
        /* O_PATH | O_NOFOLLOW opens a symbolic link as itself, so the
         * fstat below sees it: no link is ever followed. */
        next = openat(cur >= 0 ? cur : dirfd, part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0)
            return cur >= 0 ? close_keep_errno(cur, errno) : -1;
        if (cur >= 0)
            close(cur);
        cur = next;
        if (fstat(cur, &st) < 0)
            return close_keep_errno(cur, errno);
        if (S_ISLNK(st.st_mode))
            return close_keep_errno(cur, ELOOP);
        if (!S_ISDIR(st.st_mode))
            return close_keep_errno(cur, ENOTDIR);
        if (st.st_dev != top.st_dev)
            return close_keep_errno(cur, EXDEV);
        p = slash + 1;
    }
    if (strlen(p) > NAME_MAX) {
        errno = ENAMETOOLONG;
        return cur >= 0 ? close_keep_errno(cur, errno) : -1;
    }
    fd = openat(cur >= 0 ? cur : dirfd, p, flags | O_NOFOLLOW, mode);
    if (fd < 0) {
        int err = errno;
        /* The O_NOFOLLOW added here makes O_DIRECTORY see a link as a
         * non-directory; openat2 says ELOOP unless the caller asked for
         * O_NOFOLLOW. Only the errno differs. */
        if (err == ENOTDIR && !(flags & O_NOFOLLOW) &&
            fstatat(cur >= 0 ? cur : dirfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
            err = ELOOP;
        if (cur >= 0)
            close(cur);
        errno = err;
        return -1;
    }
    if (cur >= 0)
        close(cur);
    if (fstat(fd, &st) < 0)
        return close_keep_errno(fd, errno);
    /* Only O_PATH | O_NOFOLLOW opens a link itself; openat2 returns it
     * too when the caller asked for O_NOFOLLOW, and refuses it otherwise. */
    if (S_ISLNK(st.st_mode) && !(flags & O_NOFOLLOW))
        return close_keep_errno(fd, ELOOP);
    if (S_ISDIR(st.st_mode) && st.st_dev != top.st_dev)
        return close_keep_errno(fd, EXDEV);
    return fd;
}

int ci_open_beneath(int dirfd, const char *name, int flags, mode_t mode)
{
    struct open_how how = {.flags = (uint64_t)flags, .mode = mode, .resolve = RESOLVE_SAFE};
    int fd;

    if (!ci_name_beneath_valid(name)) {
        errno = EINVAL;
        return -1;
    }
    if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
        do
            fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof how);
        while (fd < 0 && (errno == EINTR || errno == EAGAIN));
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
            return fd;
        /* EPERM: container seccomp profiles older than openat2 (Docker
         * before 20.10) refuse it so. The walk is as safe, and where the
         * EPERM was the file's own (O_NOATIME, a seal), it gets it too;
         * only ENOSYS is remembered. */
        if (errno == ENOSYS)
            atomic_store_explicit(&no_openat2, 1, memory_order_relaxed);
    }
    do
        fd = ci_open_beneath_fallback(dirfd, name, flags, mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}
