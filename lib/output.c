/*
 * The worker's stdout and stderr: pipes read raw by the host, so writes at
 * the descriptor level (os.write, C extensions) are captured like print().
 * Each stream keeps at most `cap` bytes per run; the rest is read and
 * discarded, so however much a cell prints, the host's memory stays bounded
 * and the worker never blocks on a full pipe. A streaming run's callback is
 * given each chunk as it is kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int keep(struct ci_drain *d, int i, const char *chunk, size_t n)
{
    struct ci_buf *b = d->buf[i];
    size_t room, take;
    char *grown;

    if (!b)
        return 0;
    room = d->cap > b->len ? d->cap - b->len : 0;
    take = n < room ? n : room;
    if (take < n && d->truncated)
        *d->truncated |= i == 0 ? CI_TRUNCATED_STDOUT : CI_TRUNCATED_STDERR;
    if (take == 0)
        return 0;
    grown = realloc(b->data, b->len + take + 1);
    if (!grown)
        return -1;
    memcpy(grown + b->len, chunk, take);
    b->len += take;
    grown[b->len] = '\0';
    b->data = grown;
    if (d->fn)
        d->fn(i == 0 ? CI_STREAM_STDOUT : CI_STREAM_STDERR, chunk, take, d->payload);
    return 0;
}

int ci_drain_one(struct ci_drain *d, int i)
{
    char chunk[16384]; /* small: hosts may call ci_run on small thread stacks */
    /* At most 1 MiB a call, more than a pipe holds (the worker cannot
     * grow its pipes: F_SETPIPE_SZ is not in its seccomp policy), so one
     * call still empties a pipe its writer has stopped filling, while a
     * cell that floods it cannot keep the host here past its deadlines. */
    for (int reads = 0; reads < 64; reads++) {
        ssize_t n;
        if (d->fd[i] < 0)
            return 1;
        n = read(d->fd[i], chunk, sizeof chunk);
        if (n > 0) {
            if (keep(d, i, chunk, (size_t)n) < 0)
                return -1;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        /* EOF or a hard error: the write end is gone. The descriptor
         * itself belongs to the worker record and is closed there. */
        d->fd[i] = -1;
        return 1;
    }
    return 0;
}

int ci_drain_pipes(struct ci_drain *d)
{
    int i;
    for (i = 0; i < 2; i++)
        if (ci_drain_one(d, i) < 0)
            return -1;
    return 0;
}
