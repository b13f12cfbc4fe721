/*
 * The session directory as a tmpfs of its own, the session's disk and
 * inode quota, mounted by a root host on s->dir in its own mount
 * namespace (quota.c).
 */
#ifndef CI_QUOTA_H
#define CI_QUOTA_H

#include "codeinterp.h"

/* Mounts it with the config's quotas if the host may (root, or
 * CAP_SYS_ADMIN over its mount namespace) and the config has one; sets
 * s->quota_dev. CI_OK also where the host may not (no quota: the layer
 * is best effort); CI_EIO in s->err on any other failure. */
int ci_quota_mount(ci_session *s);
/* Detaches the tmpfs on @path (a session directory under a safe root),
 * if one is there; what is in it goes with its last user. */
void ci_quota_unmount(const char *path);
/* A detached copy of s->dir's tmpfs (open_tree(2)) for a zygote's child
 * to attach in its own root, close-on-exec; -1 with errno. */
int ci_quota_tree(const ci_session *s);
/* For a write into the session directory that failed with @err:
 * CI_ETOOBIG with s->err naming the quota when @err is ENOSPC or EDQUOT
 * and the session has one, else -1 (the caller's own mapping). */
int ci_quota_error(ci_session *s, const char *name, int err);

#endif /* CI_QUOTA_H */
