/*
 * Host-side internals shared by the host library's sources. Never
 * installed, never included by the worker.
 */
#ifndef CI_INTERNAL_H
#define CI_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codeinterp.h"
#include "proto.h"

struct ci_config {
    unsigned long timeout_ms;
    unsigned long grace_ms;
    unsigned long startup_ms;
    unsigned long long memory_limit;
    unsigned long long file_limit;
    size_t output_limit;
    unsigned required_layers; /* CI_SANDBOX_* */
    char *workspace_root; /* NULL: $TMPDIR, else /tmp */
};

void ci_config_defaults(struct ci_config *cfg);
/* Deep copy (the root string); CI_OK or CI_ENOMEM. */
int ci_config_copy(struct ci_config *dst, const struct ci_config *src);
void ci_config_clear(struct ci_config *cfg);

/* A live worker's handles; pid <= 0 means none. */
struct ci_worker {
    pid_t pid;
    int pidfd;   /* readable when the worker has exited */
    int procfd;  /* O_PATH /proc/<pid>, held only to pin its dentry (spawn.c) */
    int channel; /* frames (proto.h), non-blocking */
    int out;     /* the worker's fd 1, non-blocking read end */
    int err;     /* the worker's fd 2, non-blocking read end */
    unsigned layers; /* CI_SANDBOX_* bits it reported in READY */
};

struct ci_session {
    struct ci_config cfg;
    char *dir;       /* <root>/codeinterp-XXXXXX, removed by ci_session_free */
    char *workspace; /* <dir>/workspace, the cell's working directory */
    int workspace_fd; /* O_PATH descriptor of the workspace */
    struct ci_worker worker;
    int execution_count;
    atomic_int busy;
    char errmsg[1024];
};

struct ci_buf {
    char *data; /* NUL-terminated when not NULL */
    size_t len;
};

struct ci_result {
    ci_status status;
    int execution_count;
    int truncated;
    struct ci_buf out, err;
    char *value, *error_name, *error_value, *traceback;
};

/* errors.c */
void ci_set_errmsg(ci_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ci_set_thread_errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A monotonic clock in milliseconds; every deadline is on it. */
#include <time.h>
static inline int64_t ci_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* spawn.c: fork + exec of the worker for session @s; fills s->worker. */
int ci_spawn_worker(ci_session *s, char *msg, size_t msglen);

/* session.c: the worker's lifetime as seen from the host. */
int ci_worker_start(ci_session *s);
/* SIGKILL, reap, close every handle. Safe on a worker that is gone. */
void ci_worker_stop(struct ci_worker *w);
/* Reaps an exiting worker, waiting until @deadline_ms at most, then kills
 * it. Describes its end in @name/@value (static name, formatted value). */
void ci_worker_reap(struct ci_worker *w, int64_t deadline_ms, const char **name,
                    char *value, size_t valuelen);

/* files.c: the session directory and its workspace. */
int ci_workspace_create(ci_session *s);
/* Replaces config/ and tmp/ with empty ones before a new worker starts:
 * the worker reads its HOME and MPLCONFIGDIR before it locks itself down,
 * and an earlier cell may have planted files there. CI_OK or CI_EIO. */
int ci_workspace_renew(ci_session *s);
void ci_workspace_remove(ci_session *s);

/* channel.c: frames over the socketpair. */
struct ci_reader {
    unsigned char header[sizeof(struct ci_frame_header)];
    size_t header_have;
    uint32_t type, len;
    unsigned char *payload;
    size_t have;
    size_t max_len; /* frames longer than this are a protocol error */
};
void ci_reader_init(struct ci_reader *rd, size_t max_len);
void ci_reader_reset(struct ci_reader *rd);
/* Reads what is available from @fd. Returns 1 when a whole frame is in
 * rd (type, len, payload), 0 when more is needed (EAGAIN), -1 on EOF or
 * error (errno set; 0 for EOF), -2 when the frame is over max_len. */
int ci_reader_pump(struct ci_reader *rd, int fd);
/* Writes a whole frame of two payload parts to non-blocking @fd before
 * @deadline_ms, draining @drain (the output pipes) meanwhile so a worker
 * blocked on a full pipe cannot stall us. 0, or -1 with errno (ETIMEDOUT,
 * EPIPE...). */
struct ci_drain;
int ci_send_frame(int fd, uint32_t type, const void *a, size_t alen,
                  const void *b, size_t blen, int64_t deadline_ms,
                  struct ci_drain *drain);

/* output.c: draining the worker's stdout/stderr into capped buffers. */
struct ci_drain {
    int fd[2];            /* out, err; -1 when closed */
    struct ci_buf *buf[2]; /* NULL: read and discard */
    size_t cap;
    int *truncated;
};
/* Reads whatever is available on either pipe; never blocks. 0, or -1 when
 * memory ran out. */
int ci_drain_pipes(struct ci_drain *d);
/* Reads one pipe, at most 1 MiB; 0 when done for now, 1 on EOF (the fd
 * set to -1), -1 on ENOMEM. */
int ci_drain_one(struct ci_drain *d, int i);

/* result.c */
ci_result *ci_result_new(void);
/* Decodes a RESULT payload from the untrusted worker into @r: checks every
 * tag, length and byte. CI_OK, CI_EPROTO (with @why set), or CI_ENOMEM. */
int ci_result_decode(ci_result *r, const unsigned char *p, size_t len, size_t field_cap,
                     uint32_t *outcome, uint32_t *count, const char **why);
char *ci_strdup(const char *s);

#endif /* CI_INTERNAL_H */
