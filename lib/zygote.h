/*
 * The host's side of the warm zygote (zygote.c); its protocol is
 * zygote_proto.h's.
 */
#ifndef CI_ZYGOTE_H
#define CI_ZYGOTE_H

#include <sys/types.h>

#include "codeinterp.h"
#include "err.h"

/* A worker for @s forked by the warm zygote for its preload list
 * (started if none is alive), with @fds as its 0..3. The worker's pid
 * (the host's child), or -1 with @err's code and message (CI_EMANIFEST
 * when the zygote found the installed files differ from the manifest,
 * else CI_ESPAWN, CI_ENOMEM or CI_EIO); then *@retry is 1 if the zygote died on the way, so
 * another try (with new descriptors) may succeed with a new one, and
 * *@by_exec 1 if the zygote cannot see the session directory (a mount
 * made after it started, where mounts do not propagate), so the worker
 * is for fork + exec to start, with the same descriptors. On success
 * *@pidfd is the worker's pidfd, opened before the pid was checked to be
 * the child the zygote started (-1 without pidfd_open(2)); the caller's. */
pid_t ci_zygote_spawn(ci_session *s, int fds[4], struct ci_err *err, int *retry, int *by_exec,
                      int *pidfd);
/* Kills and reaps every zygote of this process (the tests use it to see
 * that nothing else is left); the next session starts a new one. */
void ci_zygote_stop_all(void);

#endif /* CI_ZYGOTE_H */
