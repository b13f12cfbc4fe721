/*
 * Starting a session's worker (spawn.c), forked by a zygote or by
 * fork + exec.
 */
#ifndef CI_SPAWN_H
#define CI_SPAWN_H

#include <sys/types.h>

#include "codeinterp.h"
#include "err.h"

/* Starts the worker of session @s, forked by a zygote or by fork + exec,
 * and fills s->worker. CI_OK, or the code in @err with its message
 * (CI_ESPAWN, CI_EMANIFEST, CI_ENOMEM, CI_EIO). */
int ci_spawn_worker(ci_session *s, struct ci_err *err);
struct ci_worker;
/* Once READY said its layers: closes w->procfd if the worker has a proc
 * of its own (PID and mount namespaces) and a pidfd vouches for
 * ci_worker_proc_open's opens by name, so that an idle session holds
 * only its pidfd, channel, stdout, stderr and directory. */
void ci_worker_unpin(struct ci_worker *w);
/* 1 if @s's workers are forked from a zygote: the config says so and
 * $CODEINTERP_WORKER is not set. */
int ci_uses_zygote(const ci_session *s);

/* $CODEINTERP_WORKER, or the built-in path of codeinterp-worker. */
const char *ci_worker_path(void);
/* fork + exec of the worker program with @argv, the descriptors @fds as
 * its 0..3 and *@policy, unless it is -1, as its 4 (each renumbered in
 * place above 4; the caller still closes them), the environment of the
 * session directory @dir and <dir>/workspace as its working directory.
 * The child's pid, or -1 with CI_ESPAWN and why in @err. */
pid_t ci_exec_worker(char *const argv[], const char *dir, int fds[4], int *policy,
                     struct ci_err *err);

#endif /* CI_SPAWN_H */
