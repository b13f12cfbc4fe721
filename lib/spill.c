/*
 * Spill files: the whole of a stream that passed the output limit, kept in
 * the workspace where the next cell can read, grep or tail it:
 *
 *   workspace/.outputs/cell-N.stdout   (and .stderr; N the execution count)
 *
 * The workspace belongs to the cell, so nothing found there is trusted:
 * .outputs is opened with ci_open_beneath() (no link followed), the stream
 * is written to a new file of a random name (ci_create_temp) and renamed
 * over cell-N.* only when the run ends, so a name the cell planted (a
 * link, a FIFO) is replaced, never written through. Each file holds at
 * most the spill limit; a session keeps the spill files of its last
 * CI_SPILL_KEEP cut streams and removes older ones, so a loop of cells
 * that print without end cannot make the host fill its disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define OUTPUTS_DIR ".outputs"

void ci_spill_init(struct ci_spill *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->fd = -1;
    sp->dir = -1;
}

static void give_up(struct ci_spill *sp, int err)
{
    if (sp->fd >= 0) {
        close(sp->fd);
        unlinkat(sp->dir, sp->tmp, 0);
        sp->fd = -1;
    }
    sp->err = err ? err : EIO;
}

int ci_spill_begin(struct ci_spill *sp, int workspace_fd)
{
    if (workspace_fd < 0) {
        sp->err = ENOENT;
        return -1;
    }
    /* Made by the host as the worker's, so a cell can delete what it has
     * read; if the cell made it first, it is used as long as it is a
     * directory reached without a link. */
    if (mkdirat(workspace_fd, OUTPUTS_DIR, 0700) == 0)
        ci_give_to_worker(workspace_fd, OUTPUTS_DIR);
    sp->dir = ci_open_beneath(workspace_fd, OUTPUTS_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    if (sp->dir < 0 || (sp->fd = ci_create_temp(sp->dir, sp->tmp, sizeof sp->tmp)) < 0 ||
        ci_give_to_worker(sp->fd, "") < 0) {
        give_up(sp, errno);
        return -1;
    }
    return 0;
}

void ci_spill_write(struct ci_spill *sp, const char *data, size_t n, unsigned long long cap)
{
    if (sp->fd < 0)
        return;
    if (n > cap - sp->written) {
        n = (size_t)(cap - sp->written);
        sp->full = 1;
    }
    while (n > 0) {
        ssize_t w = write(sp->fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            give_up(sp, w < 0 ? errno : EIO);
            return;
        }
        data += w;
        n -= (size_t)w;
        sp->written += (unsigned long long)w;
    }
}

/* Remembers @base as kept and removes the spill file that falls out of the
 * last CI_SPILL_KEEP. A name kept again (cell numbers restart with the
 * worker) moves to the newest place rather than being counted twice. */
static void keep_name(ci_session *s, int dir, const char *base)
{
    char(*kept)[CI_SPILL_NAME_MAX] = s->spills;
    int i, n = s->spill_count;

    for (i = 0; i < n; i++)
        if (strcmp(kept[i], base) == 0)
            break;
    if (i == n && n == CI_SPILL_KEEP) {
        unlinkat(dir, kept[0], 0);
        i = 0;
    } else if (i == n) {
        s->spill_count = ++n;
    }
    memmove(kept[i], kept[i + 1], (size_t)(n - 1 - i) * sizeof kept[0]);
    snprintf(kept[n - 1], sizeof kept[0], "%s", base);
}

int ci_spill_end(struct ci_spill *sp, ci_session *s, int count, int stream, char *name,
                 size_t size)
{
    char base[CI_SPILL_NAME_MAX];
    int rc = -1;

    if (sp->fd >= 0) {
        snprintf(base, sizeof base, "cell-%d.%s", count,
                 stream == CI_STREAM_STDOUT ? "stdout" : "stderr");
        if (close(sp->fd) < 0) {
            sp->err = errno;
            unlinkat(sp->dir, sp->tmp, 0);
        } else if (renameat(sp->dir, sp->tmp, sp->dir, base) < 0) {
            sp->err = errno;
            unlinkat(sp->dir, sp->tmp, 0);
        } else {
            snprintf(name, size, "%s/%s", OUTPUTS_DIR, base);
            if (s)
                keep_name(s, sp->dir, base);
            rc = 0;
        }
        sp->fd = -1;
    }
    if (sp->dir >= 0)
        close(sp->dir);
    sp->dir = -1;
    return rc;
}
