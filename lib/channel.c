/*
 * Frames over the socketpair (proto.h). The worker is untrusted: a frame's
 * length is checked against the caller's cap before anything is allocated,
 * and every wait has a deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "channel.h"
#include "clock.h"
#include "output.h"
#include "proto.h"
#include "result.h"

void ci_reader_init(struct ci_reader *rd, size_t max_len)
{
    memset(rd, 0, sizeof *rd);
    rd->max_len = max_len;
}

void ci_reader_reset(struct ci_reader *rd)
{
    free(rd->payload);
    ci_reader_init(rd, rd->max_len);
}

int ci_reader_pump(struct ci_reader *rd, int fd)
{
    return ci_reader_pump_from(rd, ci_read_fd, &fd);
}

ssize_t ci_read_fd(void *fd, void *buf, size_t n)
{
    return read(*(const int *)fd, buf, n);
}

int ci_reader_pump_from(struct ci_reader *rd, ci_read_fn *fn, void *ctx)
{
    for (;;) {
        unsigned char *dst;
        size_t want;
        ssize_t n;

        if (rd->header_have < sizeof rd->header) {
            dst = rd->header + rd->header_have;
            want = sizeof rd->header - rd->header_have;
        } else {
            if (rd->have == rd->len)
                return 1;
            dst = rd->payload + rd->have;
            want = rd->len - rd->have;
        }
        n = fn(ctx, dst, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            if (n == 0)
                errno = 0;
            return -1;
        }
        if (rd->header_have < sizeof rd->header) {
            rd->header_have += (size_t)n;
            if (rd->header_have == sizeof rd->header) {
                struct ci_frame_header h;
                memcpy(&h, rd->header, sizeof h);
                rd->type = h.type;
                rd->len = h.len;
                if (rd->len > rd->max_len)
                    return -2;
                /* +1 so an empty payload still gets a buffer. */
                rd->payload = malloc((size_t)rd->len + 1);
                if (!rd->payload) {
                    errno = ENOMEM;
                    return -1;
                }
            }
        } else {
            rd->have += (size_t)n;
        }
    }
}

int ci_send_frame(int fd, uint32_t type, const void *a, size_t alen, const void *b,
                  size_t blen, int64_t deadline_ms, struct ci_drain *drain)
{
    struct ci_frame_header h;
    struct iovec iov[3];
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = 3};

    if (alen + blen > UINT32_MAX) {
        errno = EMSGSIZE;
        return -1;
    }
    h.type = type;
    h.len = (uint32_t)(alen + blen);
    iov[0] = (struct iovec){&h, sizeof h};
    iov[1] = (struct iovec){(void *)a, alen};
    iov[2] = (struct iovec){(void *)b, blen};

    /* One sendmsg for the whole frame where the socket has room: the
     * worker then wakes once, not once a part. */
    while (m.msg_iovlen > 0) {
        struct pollfd p[3];
        int64_t wait;
        ssize_t n;

        n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            ci_iov_advance(&m.msg_iov, &m.msg_iovlen, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        /* The socket is full: wait for room, reading the worker's output
         * meanwhile in case it is blocked writing to a full pipe. */
        wait = deadline_ms - ci_now_ms();
        if (wait <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        p[0] = (struct pollfd){.fd = fd, .events = POLLOUT};
        p[1] = (struct pollfd){.fd = drain ? drain->s[0].fd : -1, .events = POLLIN};
        p[2] = (struct pollfd){.fd = drain ? drain->s[1].fd : -1, .events = POLLIN};
        if (poll(p, 3, wait > 1000 ? 1000 : (int)wait) < 0 && errno != EINTR)
            return -1;
        if (drain && ci_drain_pipes(drain) < 0) {
            errno = ENOMEM;
            return -1;
        }
    }
    return 0;
}

/* Payload checks of the worker's small frames; pure, so the fuzz target
 * (fuzz/fuzz_frames.c) drives them as the host does. */

int ci_ready_parse(const unsigned char *p, size_t len, unsigned *layers, uint32_t *listener)
{
    uint32_t version, bits, fd;

    if (len != 12)
        return -1;
    memcpy(&version, p, 4);
    memcpy(&bits, p + 4, 4);
    memcpy(&fd, p + 8, 4);
    if (version != CI_PROTO_VERSION || (bits & ~CI_LAYER_ALL) ||
        (fd != CI_READY_NO_LISTENER && fd > INT32_MAX))
        return -1;
    *layers = bits;
    *listener = fd;
    return 0;
}

int ci_signaled_parse(const unsigned char *p, size_t len, int *sig, const char **why)
{
    uint32_t n;

    if (len != sizeof n) {
        *why = "a signal report of the wrong length";
        return -1;
    }
    memcpy(&n, p, sizeof n);
    if (n == 0 || n > CI_SIGNAL_MAX) {
        *why = "a signal report for an unknown signal";
        return -1;
    }
    *sig = (int)n;
    return 0;
}

int ci_violation_parse(const unsigned char *p, size_t len,
                       char name[CI_VIOLATION_NAME_MAX + 1], const char **why)
{
    uint32_t nr;

    if (len < sizeof nr + 1 || len > sizeof nr + CI_VIOLATION_NAME_MAX) {
        *why = "a violation report of the wrong length";
        return -1;
    }
    memcpy(&nr, p, sizeof nr);
    if (nr >= CI_VIOLATION_NR_MAX) {
        *why = "a violation report for an unknown system call";
        return -1;
    }
    for (size_t i = sizeof nr; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_')) {
            *why = "a violation report with a malformed name";
            return -1;
        }
    memcpy(name, p + sizeof nr, len - sizeof nr);
    name[len - sizeof nr] = '\0';
    return 0;
}

int ci_input_request_parse(const unsigned char *p, size_t len, uint32_t *flags,
                           const char **why)
{
    uint32_t f;

    if (len < sizeof f || len - sizeof f > CI_INPUT_PROMPT_MAX) {
        *why = "an input request of the wrong length";
        return -1;
    }
    memcpy(&f, p, sizeof f);
    if (f & ~CI_INPUT_FLAG_PASSWORD) {
        *why = "an input request with unknown flags";
        return -1;
    }
    if (!ci_utf8_valid(p + sizeof f, len - sizeof f)) {
        *why = "an input request whose prompt is not UTF-8 without NUL";
        return -1;
    }
    *flags = f;
    return 0;
}
