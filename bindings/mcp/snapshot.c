/*
 * Snapshots (ci_session_snapshot, ci_session_restore): the tool
 * save_snapshot, which --snapshot FILE enables and which replaces FILE
 * with the session's snapshot, and --restore FILE, whose snapshot the
 * session starts from. Both files are the operator's: the model names no
 * host path.
 */
#include "mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a --restore file may hold besides the state (within the memory
 * limit) and the files (within the disk quota): the package set, the
 * list of what was left out, the sections' headers and the paths. */
#define RESTORE_SLACK (16ull << 20)
/* The disk quota's part of that cap when there is none (--disk-quota 0). */
#define RESTORE_NO_QUOTA (4ull << 30)

unsigned long long restore_cap(void)
{
    return srv.memory_limit + (srv.disk_quota ? srv.disk_quota : RESTORE_NO_QUOTA) +
           RESTORE_SLACK;
}

/* Control characters (a traceback's newlines) as spaces: the start's
 * failure is one line on stderr. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20)
            *s = ' ';
}

/* ------------------------------------------------------------- restore */

/* Reads the regular file @path whole, at most @cap bytes, into *@out
 * (free) and *@len: 0, or -1 with @why. A FIFO or device is refused
 * before it is read; a file that grows past @cap while it is read too. */
static int read_capped(const char *path, unsigned long long cap, char **out, size_t *len,
                       char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    char *data = NULL, big[32];
    size_t n = 0, size = 0;

    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(why, why_size, "cannot read the snapshot %s: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "cannot read the snapshot %s: not a regular file", path);
        goto fail;
    }
    if ((unsigned long long)st.st_size > cap)
        goto too_big;
    for (;;) {
        if (n == size) { /* the first time, room for the size fstat gave and a byte more */
            if (n > cap)
                goto too_big;
            size = !size ? (size_t)st.st_size + 1 : size <= cap / 2 ? size * 2 : (size_t)cap + 1;
            char *more = realloc(data, size);
            if (!more) {
                snprintf(why, why_size, "cannot read the snapshot %s: out of memory", path);
                goto fail;
            }
            data = more;
        }
        ssize_t got = read(fd, data + n, size - n);
        if (got == 0)
            break;
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(why, why_size, "cannot read the snapshot %s: %s", path, strerror(errno));
            goto fail;
        }
        n += (size_t)got;
    }
    close(fd);
    *out = data;
    *len = n;
    return 0;
too_big:
    snprintf(why, why_size, "the snapshot %s is over the %s a --restore file may take here "
             "(--memory, plus --disk-quota, plus 16 MiB)", path, fmt_size(big, cap));
fail:
    if (fd >= 0)
        close(fd);
    free(data);
    one_line(why);
    return -1;
}

int session_restore(char *why, size_t why_size)
{
    ci_session *s;
    char *data;
    size_t len;
    int rc;

    if (read_capped(srv.restore_file, restore_cap(), &data, &len, why, why_size) < 0)
        return -1;
    rc = ci_session_restore(&s, srv.cfg, data, len);
    free(data);
    if (rc != CI_OK) {
        snprintf(why, why_size, "the Python session could not be restored from %s: %s: %s",
                 srv.restore_file, ci_strerror(rc), ci_session_errmsg(NULL));
        one_line(why);
        return -1;
    }
    pthread_mutex_lock(&srv.lock);
    srv.session = s;
    pthread_mutex_unlock(&srv.lock);
    const char *left = ci_session_left_out(s), *nl = strchr(left, '\n');
    size_t lines = 0;
    for (const char *p = left; (p = strchr(p, '\n')); p++)
        lines++;
    if (lines) /* the model was told when it saved; the operator is told here */
        fprintf(stderr, MCP_SERVER_NAME ": the snapshot could not carry %zu thing%s, missing "
                "from this session; the first: %.*s\n", lines, lines == 1 ? "" : "s",
                (int)(nl - left > 200 ? 200 : nl - left), left);
    return 0;
}

/* -------------------------------------------------------------- saving */

/* Writes @len bytes of @data to @fd: 0, or -1 with errno. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Creates a new file of mode 0600 beside @base in @dir, with a random
 * name (into @tmp), O_EXCL: whatever is at that name already, a
 * symbolic link included, is refused, never followed, and another name
 * tried. The descriptor, or -1 with errno. */
static int create_temp(int dir, const char *base, char tmp[NAME_MAX + 1])
{
    for (int tries = 0; tries < 100; tries++) {
        unsigned char r[6];
        int fd;
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return -1;
        snprintf(tmp, NAME_MAX + 1, ".%.200s.%02x%02x%02x%02x%02x%02x.tmp", base, r[0], r[1],
                 r[2], r[3], r[4], r[5]);
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* Replaces @path with @len bytes of @data, atomically: a new file in
 * its directory (create_temp), written, fsynced, renamed over @path, and
 * the directory fsynced. A symbolic link at @path is replaced, not
 * followed. 0, or -1 with @why; on failure @path is as it was. */
static int replace_file(const char *path, const void *data, size_t len, char *why,
                        size_t why_size)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char dir[PATH_MAX], tmp[NAME_MAX + 1];
    const char *step = "open the directory of";
    int dfd, fd = -1, made = 0, err;

    /* --snapshot's value: no trailing '/', shorter than PATH_MAX. */
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
             slash ? path : ".");
    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        goto fail;
    step = "create a new file beside";
    if ((fd = create_temp(dfd, base, tmp)) < 0)
        goto fail;
    made = 1;
    step = "write";
    if (fchmod(fd, 0600) < 0 || write_all(fd, data, len) < 0)
        goto fail;
    step = "sync";
    if (fsync(fd) < 0)
        goto fail;
    step = "write";
    err = close(fd);
    fd = -1;
    if (err < 0)
        goto fail;
    step = "rename the new file over";
    if (renameat(dfd, tmp, dfd, base) < 0)
        goto fail;
    fsync(dfd); /* the rename is done: a failed sync of it changes nothing now */
    close(dfd);
    return 0;
fail:
    err = errno;
    snprintf(why, why_size, "cannot %s %s: %s", step, path, strerror(err));
    if (fd >= 0)
        close(fd);
    if (made)
        unlinkat(dfd, tmp, 0);
    if (dfd >= 0)
        close(dfd);
    return -1;
}

/* The result of a snapshot the library refused: its message and, after a
 * dead worker, a fresh interpreter, as run_python starts one. */
static json_t *snapshot_failed(int rc)
{
    char msg[1024], why[1024], restart[1200] = "";
    snprintf(msg, sizeof msg, "%s", ci_session_errmsg(srv.session));
    if (rc == CI_EDEAD) {
        if (session_restart(why, sizeof why) == 0)
            snprintf(restart, sizeof restart, " A fresh interpreter was started: every variable "
                     "and import is gone; files in the working directory are kept.");
        else
            snprintf(restart, sizeof restart, " %s; the next call will try again.", why);
    }
    /* CI_EDEAD's own text tells a C caller what to do; the server did it. */
    return tool_error("save_snapshot: %s: %s. Nothing was written: the snapshot file keeps what "
                      "it held.%s", rc == CI_EDEAD ? "the Python process died" : ci_strerror(rc),
                      msg, restart);
}

/* save_snapshot's text: the bytes written, then what was not carried,
 * its lines cut to fit @budget. */
static json_t *saved(size_t len, const char *left, size_t budget)
{
    char bytes[32];
    struct buf b = {0};
    size_t left_len = strlen(left), fit, lines = 0;

    buf_printf(&b, "Saved the session's snapshot: %s bytes written to %s.\n",
               fmt_count(bytes, len), srv.snapshot_file);
    if (!left_len) {
        buf_printf(&b, "Everything was carried: every variable and every file of the working "
                   "directory.\n");
    } else {
        buf_printf(&b, "Not carried (a session restored from it will not have them):\n");
        /* Room for the item, the text so far, and the line after the cut. */
        size_t used = TEXT_ITEM_COST(json_text_cost(b.data, b.len)) + 256;
        fit = json_text_fit(left, left_len, budget > used ? budget - used : 0);
        if (fit < left_len)
            while (fit > 0 && left[fit - 1] != '\n')
                fit--;
        buf_add(&b, left, fit);
        for (const char *p = left + fit; (p = strchr(p, '\n')); p++)
            lines++;
        if (fit < left_len)
            buf_printf(&b, "[%zu more lines not shown: the result would exceed "
                       "--max-result-bytes]\n", lines + (left[left_len - 1] != '\n'));
    }
    json_t *result = b.failed ? tool_error("save_snapshot: out of memory")
                              : tool_result(text_content(b.data, b.len), 0);
    free(b.data);
    return result;
}

json_t *save_snapshot(size_t budget)
{
    char why[1024], *left;
    void *data;
    size_t len;
    int rc;

    /* A dead worker is not replaced first: its fresh interpreter's
     * snapshot would replace the file's with an empty one. */
    if (session_ensure(0, why, sizeof why) < 0)
        return tool_error("save_snapshot: %s", why);
    if (!cell_begin(1))
        return tool_error("save_snapshot: the call was cancelled before the snapshot started");
    rc = ci_session_snapshot(srv.session, &data, &len);
    cell_end();
    if (rc != CI_OK)
        return snapshot_failed(rc);
    if ((rc = ci_snapshot_left_out(data, len, &left)) != CI_OK) {
        ci_free(data);
        return tool_error("save_snapshot: %s: %s. Nothing was written.", ci_strerror(rc),
                          ci_session_errmsg(NULL));
    }
    rc = replace_file(srv.snapshot_file, data, len, why, sizeof why);
    ci_free(data);
    json_t *result = rc < 0 ? tool_error("save_snapshot: %s: %s. The snapshot file keeps what "
                                         "it held.", ci_strerror(CI_EIO), why)
                            : saved(len, left, budget);
    ci_free(left);
    return result;
}
