/*
 * Starting a session's worker (spawn.c), forked by a zygote or by
 * fork + exec.
 */
#ifndef CI_SPAWN_H
#define CI_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "codeinterp.h"

/* spawn.c: starts the worker of session @s, forked by a zygote or by
 * fork + exec, and fills s->worker. CI_OK or CI_ESPAWN (@msg says why). */
int ci_spawn_worker(ci_session *s, char *msg, size_t msglen);
/* 1 if @s's workers are forked from a zygote: the config says so and
 * $CODEINTERP_WORKER is not set. */
int ci_uses_zygote(const ci_session *s);

/* $CODEINTERP_WORKER, or the built-in path of codeinterp-worker. */
const char *ci_worker_path(void);
/* fork + exec of the worker program with @argv, the descriptors @fds as
 * its 0..3 and *@policy, unless it is -1, as its 4 (each renumbered in
 * place above 4; the caller still closes them), the environment of the
 * session directory @dir and <dir>/workspace as its working directory.
 * The child's pid, or -1 with @msg. */
pid_t ci_exec_worker(char *const argv[], const char *dir, int fds[4], int *policy, char *msg,
                     size_t msglen);

#endif /* CI_SPAWN_H */
