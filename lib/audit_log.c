/*
 * The audit log shared by a config and its sessions: one line a write(2),
 * the file opened append-only on first use and held, the writers of this
 * process serialized by a mutex and those of other processes by flock(2),
 * each line chained to the one before it by SHA-256 (docs/audit-log.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "audit.h"
#include "fd.h"
#include "result.h"

struct ci_audit {
    atomic_int refs;
    pthread_mutex_t lock;
    char *path;   /* NULL: no file */
    ci_event_fn fn;
    void *payload;
    int fd;       /* -1 until the first event */
    off_t end;    /* the file's size after our last write; -1: not known */
    unsigned long long seq;  /* the last line's */
    char prev[65];           /* the last line's SHA-256, hex */
};

struct ci_audit *ci_audit_new(const char *path, ci_event_fn fn, void *payload)
{
    struct ci_audit *a = calloc(1, sizeof *a);

    if (!a || (path && !(a->path = ci_strdup(path)))) {
        free(a);
        return NULL;
    }
    atomic_init(&a->refs, 1);
    pthread_mutex_init(&a->lock, NULL);
    a->fn = fn;
    a->payload = payload;
    a->fd = -1;
    a->end = -1;
    snprintf(a->prev, sizeof a->prev, "%s", CI_AUDIT_FIRST_PREV);
    return a;
}

struct ci_audit *ci_audit_ref(struct ci_audit *a)
{
    if (a)
        atomic_fetch_add(&a->refs, 1);
    return a;
}

void ci_audit_unref(struct ci_audit *a)
{
    if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
        return;
    ci_close_fd(&a->fd);
    pthread_mutex_destroy(&a->lock);
    free(a->path);
    free(a);
}

const char *ci_audit_path(const struct ci_audit *a)
{
    return a ? a->path : NULL;
}

ci_event_fn ci_audit_fn(const struct ci_audit *a, void **payload)
{
    *payload = a ? a->payload : NULL;
    return a ? a->fn : NULL;
}

static void hex_sha256(const void *p, size_t n, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, p, n);
    sodium_bin2hex(out, 65, h, sizeof h);
}

/* The file's last line (it must end in a newline) gives seq and prev.
 * 0, or -1 with @msg. */
static int read_last_line(struct ci_audit *a, off_t size, char *msg, size_t msglen)
{
    size_t want = 4096;
    char *buf = NULL;

    if (size == 0) {
        a->seq = 0;
        snprintf(a->prev, sizeof a->prev, "%s", CI_AUDIT_FIRST_PREV);
        return 0;
    }
    for (;;) {
        size_t n = (off_t)want < size ? want : (size_t)size;
        char *start, *line;
        size_t len;
        ssize_t got;
        json_t *doc;
        json_int_t seq;

        free(buf);
        if (!(buf = malloc(n + 1))) {
            snprintf(msg, msglen, "out of memory reading the audit log's last line");
            return -1;
        }
        got = pread(a->fd, buf, n, size - (off_t)n);
        if (got != (ssize_t)n) {
            snprintf(msg, msglen, "cannot read the audit log %s: %s", a->path,
                     got < 0 ? strerror(errno) : "it shrank");
            break;
        }
        if (buf[n - 1] != '\n') {
            snprintf(msg, msglen, "the audit log %s ends in an incomplete line (check it with "
                     "codeinterp-audit verify); nothing is appended to it", a->path);
            break;
        }
        buf[n - 1] = '\0';
        start = memrchr(buf, '\n', n - 1);
        if (!start && (off_t)n < size && want < CI_AUDIT_LINE_MAX) {
            want *= 4;
            continue;
        }
        line = start ? start + 1 : buf;
        if (!start && (off_t)n < size) {
            snprintf(msg, msglen, "the audit log %s ends in a line over %u bytes", a->path,
                     CI_AUDIT_LINE_MAX);
            break;
        }
        len = (size_t)(buf + n - 1 - line);
        doc = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
        seq = json_integer_value(json_object_get(doc, "seq"));
        json_decref(doc);
        if (seq <= 0) {
            snprintf(msg, msglen, "the audit log %s ends in a line that is not an audit "
                     "event (no seq); nothing is appended to it", a->path);
            break;
        }
        a->seq = (unsigned long long)seq;
        hex_sha256(line, len, a->prev);
        free(buf);
        return 0;
    }
    free(buf);
    return -1;
}

/* Opens the file on first use; takes the file's lock, and catches up with
 * what others appended. 0, or -1 with @msg. */
static int lock_file(struct ci_audit *a, char *msg, size_t msglen)
{
    struct stat st;

    if (a->fd < 0) {
        a->fd = open(a->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        if (a->fd < 0) {
            snprintf(msg, msglen, "cannot open the audit log %s: %s", a->path, strerror(errno));
            return -1;
        }
    }
    while (flock(a->fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            snprintf(msg, msglen, "cannot lock the audit log %s: %s", a->path, strerror(errno));
            return -1;
        }
    }
    if (fstat(a->fd, &st) < 0) {
        snprintf(msg, msglen, "cannot stat the audit log %s: %s", a->path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(msg, msglen, "the audit log %s is not a regular file", a->path);
    } else if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        /* Another user could rewrite it, chain and all. */
        snprintf(msg, msglen, "the audit log %s is %s: only the host's user may write it",
                 a->path, st.st_uid != geteuid() ? "another user's file" : "writable by others");
    } else if (st.st_size == a->end || read_last_line(a, st.st_size, msg, msglen) == 0) {
        a->end = st.st_size;
        return 0;
    }
    flock(a->fd, LOCK_UN);
    return -1;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Now in UTC, to the microsecond: "2026-12-02T07:25:00.123456Z". */
static void utc_now(char out[48])
{
    struct timespec ts;
    struct tm tm;
    char day[24];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 48, "%s.%06ldZ", day, ts.tv_nsec / 1000);
}

/* The line after the chain's last, in *@out (malloc'ed, with its newline). */
static char *compose(struct ci_audit *a, const char *session, const char *body, size_t len,
                     size_t *out_len)
{
    char now[48], *line;
    int head;
    size_t cap = len + 256;

    utc_now(now);
    if (!(line = malloc(cap)))
        return NULL;
    head = snprintf(line, cap, "{\"seq\":%llu,\"time\":\"%s\",\"session\":\"%s\",\"prev\":\"%s\",",
                    a->seq + 1, now, session, a->prev);
    if (head < 0 || (size_t)head + len + 3 > cap) {
        free(line);
        return NULL;
    }
    memcpy(line + head, body, len);
    memcpy(line + head + len, "}\n", 3);
    *out_len = (size_t)head + len + 2;
    return line;
}

int ci_audit_write(struct ci_audit *a, const char *session, const char *body, size_t len,
                   char *msg, size_t msglen)
{
    char *line;
    size_t n;
    int rc = -1;

    pthread_mutex_lock(&a->lock);
    if (a->path && lock_file(a, msg, msglen) < 0)
        goto out;
    if (!(line = compose(a, session, body, len, &n))) {
        snprintf(msg, msglen, "out of memory for an audit event");
    } else if (a->path && write_all(a->fd, line, n) < 0) {
        snprintf(msg, msglen, "cannot write the audit log %s: %s", a->path, strerror(errno));
        a->end = -1; /* a part may have been written: read the file again */
    } else {
        /* The line is the chain's last now, whatever the callback says. */
        a->seq++;
        hex_sha256(line, n - 1, a->prev);
        if (a->path)
            a->end += (off_t)n;
        line[n - 1] = '\0'; /* the callback's line ends there */
        if (a->fn && a->fn(line, n - 1, a->payload) != 0)
            snprintf(msg, msglen, "the audit event callback refused an event");
        else
            rc = 0;
    }
    free(line);
    if (a->path)
        flock(a->fd, LOCK_UN);
out:
    pthread_mutex_unlock(&a->lock);
    return rc;
}
