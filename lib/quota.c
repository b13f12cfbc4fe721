/*
 * The session's disk and inode quota: a root host mounts a tmpfs of its
 * own on the session directory, with size= and nr_inodes= from the
 * config (Documentation/filesystems/tmpfs.rst), before it makes the lock
 * file and the three directories in it. The kernel then refuses, with
 * ENOSPC, any block or inode past the quota, whoever writes: a cell, or
 * the host's ci_session_put_file() and spill files. The host's own
 * filesystem (the workspace root's) is never written by a session, and
 * what a session wrote goes with its tmpfs: ephemeral by construction.
 *
 * The mount is in the host's mount namespace, at the session directory's
 * path, so the host's names and descriptors reach it as before; a worker
 * started by exec copies that namespace, and a zygote's child, whose
 * zygote may not see mounts made after it started, gets a copy of the
 * mount made here (ci_quota_tree) to attach in its own root.
 *
 * Mounting needs CAP_SYS_ADMIN over the host's mount namespace: an
 * unprivileged host gets no quota (CI_SANDBOX_DISK_QUOTA clear).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "errors.h"
#include "quota.h"
#include "session.h"

/* The answers of a kernel that does not let this host mount a tmpfs. */
static int may_not_mount(int err)
{
    return err == EPERM || err == EACCES || err == ENODEV || err == ENOSYS;
}

int ci_quota_mount(ci_session *s)
{
    char opts[96];
    struct stat st;

    if (!s->cfg.disk_quota)
        return CI_OK;
    /* mode=0700 until make_subdirs() gives a root host's worker its way
     * in; nosuid, nodev, noexec, as the worker binds it anyway. */
    snprintf(opts, sizeof opts, "size=%llu,nr_inodes=%llu,mode=0700", s->cfg.disk_quota,
             s->cfg.inode_quota);
    if (mount("codeinterp", s->dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) != 0) {
        if (may_not_mount(errno))
            return CI_OK;
        return ci_err_set(&s->err, CI_EIO, "cannot mount the session's tmpfs on %s: %s", s->dir,
                          strerror(errno));
    }
    if (stat(s->dir, &st) != 0) {
        ci_err_set(&s->err, CI_EIO, "cannot stat the session's tmpfs %s: %s", s->dir,
                   strerror(errno));
        ci_quota_unmount(s->dir);
        return CI_EIO;
    }
    s->quota_dev = st.st_dev;
    return CI_OK;
}

void ci_quota_unmount(const char *path)
{
    /* Detached: a descriptor still open in it (the host's, a dying
     * worker's) keeps it alive until closed, and nothing else waits. */
    umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
}

int ci_quota_tree(const ci_session *s)
{
    return open_tree(AT_FDCWD, s->dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
}

int ci_quota_error(ci_session *s, const char *name, int err)
{
    struct statvfs fs;
    char size[32];

    if (!s->quota_dev || (err != ENOSPC && err != EDQUOT))
        return -1;
    if (s->dir_fd >= 0 && fstatvfs(s->dir_fd, &fs) == 0 && fs.f_favail == 0)
        return ci_err_set(&s->err, CI_ETOOBIG, "%s: the session's inode quota of %llu files is "
                          "full", name, s->cfg.inode_quota);
    ci_format_size(size, sizeof size, s->cfg.disk_quota);
    return ci_err_set(&s->err, CI_ETOOBIG, "%s: the session's disk quota of %s is full", name,
                      size);
}
