/*
 * Opening a name below a directory without following a symbolic link
 * or leaving it (resolve.c).
 */
#ifndef CI_RESOLVE_H
#define CI_RESOLVE_H

#include <sys/types.h>

/* resolve.c: opening a name below @dirfd without following a symbolic
 * link or leaving @dirfd: openat2(2) RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, or, where openat2 is missing
 * (ENOSYS: Linux before 5.6, valgrind), a walk one component at a time
 * with O_NOFOLLOW. @name must pass ci_name_beneath_valid() (else EINVAL).
 * The descriptor, or -1 with errno (ELOOP: a link on the path; ENOTDIR;
 * EXDEV: another filesystem). */
int ci_open_beneath(int dirfd, const char *name, int flags, mode_t mode);
/* The walk alone, whatever the kernel has: for the tests. */
int ci_open_beneath_fallback(int dirfd, const char *name, int flags, mode_t mode);
/* 1 if @name is relative, shorter than PATH_MAX, and has no empty, "." or
 * ".." component (nor a trailing slash). */
int ci_name_beneath_valid(const char *name);

#endif /* CI_RESOLVE_H */
