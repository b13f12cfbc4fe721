/*
 * Frames over the socketpair between host and worker (channel.c); the
 * frame format is proto.h's.
 */
#ifndef CI_CHANNEL_H
#define CI_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

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
/* The same, reading through @fn (read(2)'s contract: bytes, 0 at EOF, -1
 * with errno), so the fuzz target can drive the reader from memory. */
typedef ssize_t ci_read_fn(void *ctx, void *buf, size_t n);
int ci_reader_pump_from(struct ci_reader *rd, ci_read_fn *fn, void *ctx);
/* read(2) on the descriptor *(int *)@fd: ci_reader_pump's ci_read_fn. */
ssize_t ci_read_fd(void *fd, void *buf, size_t n);
/* A READY payload (proto.h): 0 with *@layers and *@listener (a
 * descriptor number in the worker, or CI_READY_NO_LISTENER) if it is
 * well formed, else -1. */
int ci_ready_parse(const unsigned char *p, size_t len, unsigned *layers, uint32_t *listener);
/* A SIGNALED frame's payload: 0 with the signal in @sig, or -1 with
 * @why (a static sentence). */
int ci_signaled_parse(const unsigned char *p, size_t len, int *sig, const char **why);
/* A VIOLATION payload (proto.h): 0 and the syscall's name in @name if it
 * is well formed, else -1 with @why (@name untouched). */
int ci_violation_parse(const unsigned char *p, size_t len,
                       char name[CI_VIOLATION_NAME_MAX + 1], const char **why);
/* An INPUT_REQUEST payload (proto.h): 0 with its flags in *@flags, the
 * prompt at @p + 4 (@len - 4 bytes), or -1 with @why. */
int ci_input_request_parse(const unsigned char *p, size_t len, uint32_t *flags,
                           const char **why);
/* Writes a whole frame of two payload parts to non-blocking @fd before
 * @deadline_ms, draining @drain (the output pipes) meanwhile so a worker
 * blocked on a full pipe cannot stall us. 0, or -1 with errno (ETIMEDOUT,
 * EPIPE...). */
struct ci_drain;
int ci_send_frame(int fd, uint32_t type, const void *a, size_t alen,
                  const void *b, size_t blen, int64_t deadline_ms,
                  struct ci_drain *drain);

#endif /* CI_CHANNEL_H */
