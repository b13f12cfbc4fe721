/*
 * Descriptor handling shared by the host library's cleanup paths.
 */
#ifndef CI_FD_H
#define CI_FD_H

#include <unistd.h>

/* Closes *@fd unless it is -1 and sets it to -1, so a cleanup path may
 * close every handle it holds, open or not. */
static inline void ci_close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

#endif /* CI_FD_H */
