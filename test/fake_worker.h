/*
 * For tests that run the test program itself as a fake, hostile worker
 * (test_protocol.c, test_faults.c): frames written and read on the
 * channel descriptor (lib/proto.h) exactly as the fake means them.
 */
#ifndef CI_TEST_FAKE_WORKER_H
#define CI_TEST_FAKE_WORKER_H

#include <stddef.h>
#include <stdint.h>

/* Writes all @n bytes to the channel; exits 99 if it cannot. */
void fw_put(const void *p, size_t n);

/* Writes a frame: its header, then @len bytes of @payload. */
void fw_frame(uint32_t type, const void *payload, uint32_t len);

/* Appends a RESULT field (tag, length, bytes) to @buf at @at; returns the
 * new end. */
size_t fw_field(unsigned char *buf, size_t at, uint32_t tag, const void *p, uint32_t len);

/* Reads exactly @n bytes: the host sends a frame's parts with separate
 * send() calls, so one read() may return only the first of them. 0, or
 * -1 at EOF or on an error. */
int fw_get(void *p, size_t n);

/* Reads a RUN frame: its execution count into *@count, its source into
 * @code (@size bytes, NUL-terminated); exits 98 at EOF or if it does not
 * fit. */
void fw_get_run(uint32_t *count, char *code, size_t size);

#endif
