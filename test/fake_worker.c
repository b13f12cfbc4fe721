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

void fw_get_run(uint32_t *count, char *code, size_t size)
{
    struct ci_frame_header h;

    if (fw_get(&h, sizeof h) < 0 || h.len < sizeof *count || h.len - sizeof *count >= size ||
        fw_get(count, sizeof *count) < 0 || fw_get(code, h.len - sizeof *count) < 0)
        _exit(98);
    code[h.len - sizeof *count] = '\0';
}
