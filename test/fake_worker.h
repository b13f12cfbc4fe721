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

/* Appends one output of an OUTPUTS field (proto.h) to @buf at @at: the
 * header of six u32, then @mime_len bytes of @mime, @len of @data and
 * @id_len of @id, as given (the fake may break any rule); returns the new
 * end. */
size_t fw_output(unsigned char *buf, size_t at, uint32_t type, uint32_t message, uint32_t flags,
                 const void *id, uint32_t id_len, const char *mime, uint32_t mime_len,
                 const void *data, uint32_t len);

/* Reads exactly @n bytes: the host sends a frame's parts with separate
 * send() calls, so one read() may return only the first of them. 0, or
 * -1 at EOF or on an error. */
int fw_get(void *p, size_t n);

/* Reads a RUN frame: its execution count into *@count, its flags into
 * *@flags (unless NULL), its source into @code (@size bytes,
 * NUL-terminated); exits 98 at EOF, on another frame or if it does not
 * fit. */
void fw_get_run(uint32_t *count, uint32_t *flags, char *code, size_t size);

/* Reads an INPUT_REPLY frame: its status into *@status, its text into
 * @text (@size bytes, NUL-terminated). 0, or -1 at EOF, on another frame
 * or if it does not fit. */
int fw_get_input_reply(uint32_t *status, char *text, size_t size);

#endif
