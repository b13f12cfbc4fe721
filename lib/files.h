/*
 * The session directory, its workspace, and the files the host puts
 * there (files.c).
 */
#ifndef CI_FILES_H
#define CI_FILES_H

#include "codeinterp.h"

/* Gives @name in @dirfd ("" for @dirfd itself) to the worker's uid when
 * the host is root, since the worker is not; else a no-op. 0 or -1. */
int ci_give_to_worker(int dirfd, const char *name);
/* Creates a new file of a random name (.ci-put-XXXXXXXXXXXXXXXX, in @tmp
 * of @size bytes, at least 32) in @dirfd, mode 0600: a cell can see the
 * workspace and must not be able to block the host by planting the names
 * it would use. The descriptor, or -1 with errno. */
int ci_create_temp(int dirfd, char *tmp, size_t size);

/* files.c: the session directory and its workspace. */
int ci_workspace_create(ci_session *s);
/* Replaces config/ and tmp/ with empty ones before a new worker starts:
 * the worker reads its HOME and MPLCONFIGDIR before it locks itself down,
 * and an earlier cell may have planted files there. CI_OK or CI_EIO. */
int ci_workspace_renew(ci_session *s);
void ci_workspace_remove(ci_session *s);
/* A new O_PATH descriptor of @s's workspace, opened through s->dir_fd
 * (a session holds no descriptor of its workspace between calls), which
 * the caller closes; or -1 with errno. */
int ci_workspace_open(const ci_session *s);

#endif /* CI_FILES_H */
