/* Frames of a fake worker; see fake_worker.h. */
#include <string.h>
#include <unistd.h>

#include "fake_worker.h"
#include "proto.h"

void fw_put(const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(CI_FD_CHANNEL, c, n);
        if (k <= 0)
            _exit(99);
        c += k;
        n -= (size_t)k;
    }
}

void fw_frame(uint32_t type, const void *payload, uint32_t len)
{
    struct ci_frame_header h = {type, len};
    fw_put(&h, sizeof h);
    fw_put(payload, len);
}

size_t fw_field(unsigned char *buf, size_t at, uint32_t tag, const void *p, uint32_t len)
{
    memcpy(buf + at, &tag, 4);
    memcpy(buf + at + 4, &len, 4);
    memcpy(buf + at + 8, p, len);
    return at + 8 + len;
}

size_t fw_output(unsigned char *buf, size_t at, uint32_t type, uint32_t message, uint32_t flags,
                 const void *id, uint32_t id_len, const char *mime, uint32_t mime_len,
                 const void *data, uint32_t len)
{
    uint32_t h[6] = {type, message, flags, id_len, mime_len, len};
    _Static_assert(sizeof h == CI_OUTPUT_HEADER_SIZE, "proto.h's output header");
    memcpy(buf + at, h, sizeof h);
    at += sizeof h;
    memcpy(buf + at, mime, mime_len);
    memcpy(buf + at + mime_len, data, len);
    memcpy(buf + at + mime_len + len, id, id_len);
    return at + mime_len + len + id_len;
}

int fw_get(void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t k = read(CI_FD_CHANNEL, c, n);
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

void fw_get_run(uint32_t *count, uint32_t *flags, char *code, size_t size)
{
    struct ci_frame_header h;
    uint32_t head[2]; /* count, flags */

    if (fw_get(&h, sizeof h) < 0 || h.type != CI_FRAME_RUN || h.len < sizeof head ||
        h.len - sizeof head >= size || fw_get(head, sizeof head) < 0 ||
        fw_get(code, h.len - sizeof head) < 0)
        _exit(98);
    *count = head[0];
    if (flags)
        *flags = head[1];
    code[h.len - sizeof head] = '\0';
}

int fw_get_input_reply(uint32_t *status, char *text, size_t size)
{
    struct ci_frame_header h;

    if (fw_get(&h, sizeof h) < 0 || h.type != CI_FRAME_INPUT_REPLY || h.len < sizeof *status ||
        h.len - sizeof *status >= size || fw_get(status, sizeof *status) < 0 ||
        fw_get(text, h.len - sizeof *status) < 0)
        return -1;
    text[h.len - sizeof *status] = '\0';
    return 0;
}
