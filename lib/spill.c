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
 * most the spill limit, and at most half of what an unprivileged user
 * could still write there (a root host's writes reach the blocks kept
 * for root); a session keeps the spill files of its last CI_SPILL_KEEP
 * cut streams and removes older ones, so a loop of cells that print
 * without end cannot make the host fill its disk. Writing one stops
 * after CI_SPILL_MS, so a slow disk cannot hold a run past its
 * deadlines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "clock.h"
#include "files.h"
#include "resolve.h"
#include "session.h"
#include "spill.h"

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
    free(sp->pend);
    sp->pend = NULL;
    sp->err = err ? err : EIO;
}

int ci_spill_begin(struct ci_spill *sp, int workspace_fd)
{
    if (workspace_fd < 0) {
        sp->err = ENOENT;
        return -1;
    }
    struct statvfs fs;
    int made;

    /* Made by the host as the worker's, so a cell can delete what it has
     * read; if the cell made it first, it is used as long as it is a
     * directory reached without a link. Given to the worker through the
     * descriptor, never by name: a cell's thread may have put something
     * else under the name meanwhile. */
    made = mkdirat(workspace_fd, OUTPUTS_DIR, 0700) == 0;
    sp->dir = ci_open_beneath(workspace_fd, OUTPUTS_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    if (!(sp->pend = malloc(CI_SPILL_BUF)) || sp->dir < 0 ||
        (made && ci_give_to_worker(sp->dir, "") < 0) ||
        (sp->fd = ci_create_temp(sp->dir, sp->tmp, sizeof sp->tmp)) < 0 ||
        ci_give_to_worker(sp->fd, "") < 0 || fstatvfs(sp->fd, &fs) < 0) {
        give_up(sp, errno);
        return -1;
    }
    /* A root host may write into the blocks a filesystem keeps for root,
     * which a cell's own writes cannot reach: a spill file takes at most
     * half of what an unprivileged user could still write. */
    sp->room = (unsigned long long)fs.f_bavail * fs.f_frsize / 2;
    return 0;
}

/* Writes what waits in the buffer; a failure or a slow disk gives the
 * file up. */
static void flush(struct ci_spill *sp)
{
    const char *p = sp->pend;
    size_t n = sp->pend_len;
    int64_t start = ci_now_us();

    while (n > 0 && sp->fd >= 0) {
        ssize_t w = write(sp->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            give_up(sp, w < 0 ? errno : EIO);
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    sp->pend_len = 0;
    /* A disk that throttles the host's writes must not hold the run past
     * its deadlines: past CI_SPILL_MS of writing, the file is given up. */
    sp->write_us += ci_now_us() - start;
    if (sp->fd >= 0 && sp->write_us > CI_SPILL_MS * 1000) {
        give_up(sp, 0);
        sp->slow = 1;
    }
}

void ci_spill_write(struct ci_spill *sp, const char *data, size_t n, unsigned long long cap)
{
    if (sp->fd < 0)
        return;
    if (sp->room < cap && sp->written + n > sp->room) {
        give_up(sp, ENOSPC);
        return;
    }
    if (n > cap - sp->written) {
        n = (size_t)(cap - sp->written);
        sp->full = 1;
    }
    sp->written += n;
    /* Gathered: a cell printing line by line hands the host tiny reads. */
    while (n > 0 && sp->fd >= 0) {
        size_t take = CI_SPILL_BUF - sp->pend_len < n ? CI_SPILL_BUF - sp->pend_len : n;
        memcpy(sp->pend + sp->pend_len, data, take);
        sp->pend_len += take;
        data += take;
        n -= take;
        if (sp->pend_len == CI_SPILL_BUF)
            flush(sp);
    }
}

/* Remembers @base as kept and removes the spill file that falls out of the
 * last CI_SPILL_KEEP. A name kept again (cell numbers restart with the
 * worker) moves to the newest place rather than being counted twice. */
static void keep_name(ci_session *s, int dir, const char *base, const struct stat *st)
{
    struct ci_spill_kept *kept = s->spills, old;
    struct stat now;
    int i, n = s->spill_count;

    for (i = 0; i < n; i++)
        if (strcmp(kept[i].name, base) == 0)
            break;
    if (i == n && n == CI_SPILL_KEEP) {
        /* Only the file the host made: a name the cell gave to a file of
         * its own stays. (A cell that moves spill files away keeps them;
         * its disk quota bounds that, as any file it writes.) */
        old = kept[0];
        if (fstatat(dir, old.name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == old.dev &&
            now.st_ino == old.ino)
            unlinkat(dir, old.name, 0);
        i = 0;
    } else if (i == n) {
        s->spill_count = ++n;
    }
    memmove(&kept[i], &kept[i + 1], (size_t)(n - 1 - i) * sizeof kept[0]);
    snprintf(kept[n - 1].name, sizeof kept[n - 1].name, "%s", base);
    kept[n - 1].dev = st->st_dev;
    kept[n - 1].ino = st->st_ino;
}

int ci_spill_end(struct ci_spill *sp, ci_session *s, int count, int stream, char *name,
                 size_t size)
{
    char base[CI_SPILL_NAME_MAX];
    struct stat st;
    int rc = -1;

    if (sp->fd >= 0)
        flush(sp);
    free(sp->pend);
    sp->pend = NULL;
    if (sp->fd >= 0) {
        snprintf(base, sizeof base, "cell-%d.%s", count,
                 stream == CI_STREAM_STDOUT ? "stdout" : "stderr");
        if (fstat(sp->fd, &st) < 0 || close(sp->fd) < 0) {
            sp->err = errno;
            unlinkat(sp->dir, sp->tmp, 0);
        } else if (renameat(sp->dir, sp->tmp, sp->dir, base) < 0) {
            sp->err = errno;
            unlinkat(sp->dir, sp->tmp, 0);
        } else {
            snprintf(name, size, "%s/%s", OUTPUTS_DIR, base);
            if (s)
                keep_name(s, sp->dir, base, &st);
            rc = 0;
        }
        sp->fd = -1;
    }
    if (sp->dir >= 0)
        close(sp->dir);
    sp->dir = -1;
    return rc;
}
