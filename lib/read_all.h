/*
 * Reading a descriptor to its end, with a bound, for the host library
 * and the worker alike (read_all.c, linked into both).
 */
#ifndef CI_READ_ALL_H
#define CI_READ_ALL_H

#include <stddef.h>

/* Reads @fd until end of file, or until it holds @max + 1 bytes, into a
 * new malloc'd buffer with room for a NUL after the bytes (set), which
 * the caller frees. *@len greater than @max (which is below SIZE_MAX)
 * says the input is longer than @max; what that means (refused, cut) is
 * the caller's. @hint, the size expected (fstat's, or 0), sizes the first
 * allocation. 0 with *@out and *@len; -1 with errno (ENOMEM, or read(2)'s
 * but EINTR) and *@out NULL. */
int ci_read_all(int fd, size_t max, size_t hint, char **out, size_t *len);

#endif /* CI_READ_ALL_H */
