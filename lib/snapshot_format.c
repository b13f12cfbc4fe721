/*
 * The snapshot format (docs/snapshot-format.md, snapshot.h): the writer,
 * and the reader, which takes the bytes as hostile: every length is
 * checked against what is left before it is used, and nothing outside
 * the caller's bytes is read. Integers are little-endian, so a snapshot
 * moves between machines.
 */
#include <openssl/evp.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "codeinterp.h"
#include "proto.h"
#include "result.h"
#include "snapshot.h"

/* SHA-256 of @n bytes: OpenSSL's, which uses the CPU's SHA instructions
 * (100 MiB in 60 ms here, against 390 ms for libsodium's portable code),
 * libsodium's if OpenSSL fails. */
static void digest(const void *p, size_t n, unsigned char out[CI_SNAPSHOT_HASH_LEN])
{
    if (EVP_Digest(p, n, out, NULL, EVP_sha256(), NULL) != 1)
        crypto_hash_sha256(out, p, n);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

int ci_snapshot_path_valid(const char *p, size_t n, unsigned *depth)
{
    size_t start = 0;

    *depth = 0;
    if (n == 0 || n > CI_SNAP_PATH_MAX || memchr(p, '\0', n))
        return 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != '/')
            continue;
        size_t part = i - start;
        if (part == 0 || part > 255 || (part == 1 && p[start] == '.') ||
            (part == 2 && p[start] == '.' && p[start + 1] == '.'))
            return 0;
        if (++*depth > CI_SNAP_DEPTH_MAX)
            return 0;
        start = i + 1;
    }
    return 1;
}

/* The DIR or FILE section of @len bytes at @p: CI_OK with @e, or why not. */
static const char *entry_parse(uint32_t type, const unsigned char *p, uint64_t len,
                               struct ci_snapshot_entry *e)
{
    unsigned depth;
    uint64_t path_len;

    if (len < 4)
        return "a directory or file entry cut short";
    e->is_dir = type == CI_SNAP_DIR;
    e->mode = get32(p);
    if (e->is_dir) {
        if (e->mode != 0700)
            return "a directory mode other than 0700";
        path_len = len - 4;
        e->path = (const char *)p + 4;
        e->data = NULL;
        e->len = 0;
    } else {
        if (e->mode != 0600 && e->mode != 0700)
            return "a file mode other than 0600 or 0700";
        if (len < 8 || (path_len = get32(p + 4)) > len - 8)
            return "a file entry cut short";
        e->path = (const char *)p + 8;
        e->data = p + 8 + path_len;
        e->len = (size_t)(len - 8 - path_len);
    }
    e->path_len = (size_t)path_len;
    if (!ci_snapshot_path_valid(e->path, e->path_len, &depth))
        return "a path that is not relative, has an empty, \".\" or \"..\" component, a NUL, "
               "or is too long or too deep";
    return NULL;
}

/* The sections before the entries, each once and in this order. */
static const uint32_t head_order[] = {CI_SNAP_PACKAGES, CI_SNAP_COUNT, CI_SNAP_STATE};
#define HEAD_COUNT (sizeof head_order / sizeof *head_order)

static const char *section_fault(uint32_t type, const unsigned char *p, uint64_t len,
                                 struct ci_snapshot_view *v)
{
    switch (type) {
    case CI_SNAP_PACKAGES:
        if (len == 0 || len > CI_PACKAGES_MAX || !ci_utf8_valid(p, (size_t)len))
            return "a package set that is empty, too long or not UTF-8";
        v->packages = (const char *)p;
        v->packages_len = (size_t)len;
        return NULL;
    case CI_SNAP_COUNT:
        if (len != 4 || get32(p) >= CI_RUN_COUNT_INTERNAL)
            return "an execution count that is not a u32 under 2^31";
        v->count = get32(p);
        return NULL;
    case CI_SNAP_LEFT_OUT:
        if (len == 0 || len > 2 * (uint64_t)CI_LEFT_OUT_MAX || !ci_utf8_valid(p, (size_t)len))
            return "a list of what was left out that is empty, too long or not UTF-8";
        v->left_out = (const char *)p;
        v->left_out_len = (size_t)len;
        return NULL;
    case CI_SNAP_STATE:
        if (len == 0 || len > CI_STATE_MAX)
            return "an interpreter state that is empty or over 3 GiB";
        v->state = p;
        v->state_len = (size_t)len;
        return NULL;
    }
    return "an unknown section";
}

int ci_snapshot_parse(const void *data, size_t len, struct ci_snapshot_view *v,
                      const char **why)
{
    const unsigned char *p = data, *end;
    unsigned char hash[CI_SNAPSHOT_HASH_LEN];
    size_t next = 0; /* in head_order */

    memset(v, 0, sizeof *v);
    *why = "not a snapshot (no magic number)";
    if (!data || len < CI_SNAPSHOT_MAGIC_LEN || memcmp(p, CI_SNAPSHOT_MAGIC, CI_SNAPSHOT_MAGIC_LEN) != 0)
        return CI_EINVAL;
    if (len < CI_SNAPSHOT_MAGIC_LEN + 8 + CI_SNAPSHOT_HASH_LEN) {
        *why = "a snapshot cut short (too short for its version and hash)";
        return CI_EINVAL;
    }
    if (get32(p + CI_SNAPSHOT_MAGIC_LEN) != CI_SNAPSHOT_VERSION ||
        get32(p + CI_SNAPSHOT_MAGIC_LEN + 4) != 0) {
        *why = "a snapshot format version this library does not read";
        return CI_EINVAL;
    }
    end = p + len - CI_SNAPSHOT_HASH_LEN;
    digest(p, (size_t)(end - p), hash);
    if (sodium_memcmp(hash, end, sizeof hash) != 0) {
        *why = "a snapshot whose SHA-256 does not match (cut, changed or damaged)";
        return CI_EINVAL;
    }
    p += CI_SNAPSHOT_MAGIC_LEN + 8;
    while (p < end) {
        uint32_t type;
        uint64_t slen;
        struct ci_snapshot_entry e;

        if ((size_t)(end - p) < CI_SNAP_HEADER_LEN) {
            *why = "a section header cut short";
            return CI_EINVAL;
        }
        type = get32(p);
        slen = get64(p + 8);
        if (get32(p + 4) != 0) {
            *why = "a section header whose reserved word is not 0";
            return CI_EINVAL;
        }
        if (slen > (uint64_t)(end - p) - CI_SNAP_HEADER_LEN) {
            *why = "a section longer than the snapshot";
            return CI_EINVAL;
        }
        p += CI_SNAP_HEADER_LEN;
        if (v->left_out) {
            *why = "a section after the list of what was left out";
            return CI_EINVAL;
        }
        if (next < HEAD_COUNT) {
            if (type != head_order[next++]) {
                *why = "a section out of order, repeated or unknown";
                return CI_EINVAL;
            }
        } else if (type == CI_SNAP_DIR || type == CI_SNAP_FILE) {
            if ((*why = entry_parse(type, p, slen, &e)))
                return CI_EINVAL;
            if (!v->entries)
                v->entries = p - CI_SNAP_HEADER_LEN;
            v->entry_count++;
            v->file_bytes += e.len;
            v->entries_len = (size_t)(p + slen - v->entries);
            p += slen;
            continue;
        } else if (type != CI_SNAP_LEFT_OUT) {
            *why = "a section out of order, repeated or unknown";
            return CI_EINVAL;
        }
        if ((*why = section_fault(type, p, slen, v)))
            return CI_EINVAL;
        p += slen;
    }
    if (next < HEAD_COUNT) {
        *why = "a snapshot without its package set, count or interpreter state";
        return CI_EINVAL;
    }
    *why = NULL;
    return CI_OK;
}

int ci_snapshot_next(const struct ci_snapshot_view *v, size_t *off, struct ci_snapshot_entry *e)
{
    const unsigned char *p;
    uint64_t slen;

    if (!v->entries || *off >= v->entries_len)
        return 0;
    p = v->entries + *off;
    slen = get64(p + 8);
    entry_parse(get32(p), p + CI_SNAP_HEADER_LEN, slen, e);
    *off += CI_SNAP_HEADER_LEN + (size_t)slen;
    return 1;
}

/* Room for @more bytes in @w. */
static int grow(struct ci_snapshot_writer *w, size_t more)
{
    size_t cap;
    unsigned char *p;

    if (more > w->max || w->len > w->max - more)
        return CI_ETOOBIG;
    if (w->len + more <= w->cap)
        return CI_OK;
    cap = w->cap ? w->cap : 4096;
    while (cap < w->len + more)
        cap = cap > SIZE_MAX / 2 ? w->len + more : cap * 2;
    if (!(p = realloc(w->p, cap)))
        return CI_ENOMEM;
    w->p = p;
    w->cap = cap;
    return CI_OK;
}

int ci_snapshot_begin(struct ci_snapshot_writer *w, size_t max)
{
    int rc;

    memset(w, 0, sizeof *w);
    w->max = max;
    if ((rc = grow(w, CI_SNAPSHOT_MAGIC_LEN + 8)) != CI_OK)
        return rc;
    memcpy(w->p, CI_SNAPSHOT_MAGIC, CI_SNAPSHOT_MAGIC_LEN);
    put32(w->p + CI_SNAPSHOT_MAGIC_LEN, CI_SNAPSHOT_VERSION);
    put32(w->p + CI_SNAPSHOT_MAGIC_LEN + 4, 0);
    w->len = CI_SNAPSHOT_MAGIC_LEN + 8;
    return CI_OK;
}

/* A section's header at @p. */
static void put_header(unsigned char *p, uint32_t type, uint64_t len)
{
    put32(p, type);
    put32(p + 4, 0);
    put64(p + 8, len);
}

int ci_snapshot_begin_around(struct ci_snapshot_writer *w, unsigned char *buf, size_t state_off,
                             size_t state_len, const char *packages, size_t plen,
                             uint32_t count, size_t max)
{
    size_t head = CI_SNAPSHOT_MAGIC_LEN + 8 + CI_SNAP_HEADER_LEN + plen + CI_SNAP_HEADER_LEN + 4 +
                  CI_SNAP_HEADER_LEN;
    unsigned char *p;

    memset(w, 0, sizeof *w);
    if (plen > CI_PACKAGES_MAX || state_len > max || head > max - state_len) {
        free(buf);
        return CI_ETOOBIG;
    }
    /* Left first, then shrink; or grow first, then right: the state's
     * bytes are never cut off. */
    if (state_off >= head) {
        memmove(buf + head, buf + state_off, state_len);
        p = realloc(buf, head + state_len);
        p = p ? p : buf;
    } else {
        if (!(p = realloc(buf, head + state_len))) {
            free(buf);
            return CI_ENOMEM;
        }
        memmove(p + head, p + state_off, state_len);
    }
    memcpy(p, CI_SNAPSHOT_MAGIC, CI_SNAPSHOT_MAGIC_LEN);
    put32(p + CI_SNAPSHOT_MAGIC_LEN, CI_SNAPSHOT_VERSION);
    put32(p + CI_SNAPSHOT_MAGIC_LEN + 4, 0);
    w->len = CI_SNAPSHOT_MAGIC_LEN + 8;
    put_header(p + w->len, CI_SNAP_PACKAGES, plen);
    memcpy(p + w->len + CI_SNAP_HEADER_LEN, packages, plen);
    w->len += CI_SNAP_HEADER_LEN + plen;
    put_header(p + w->len, CI_SNAP_COUNT, 4);
    put32(p + w->len + CI_SNAP_HEADER_LEN, count);
    w->len += CI_SNAP_HEADER_LEN + 4;
    put_header(p + w->len, CI_SNAP_STATE, state_len);
    w->len += CI_SNAP_HEADER_LEN + state_len;
    w->p = p;
    w->cap = w->len;
    w->max = max;
    return CI_OK;
}

/* Reserves a section of @type of @len bytes, whose first @alen are @a;
 * *@rest receives where the other @len - @alen go, *@at its offset. */
static int reserve(struct ci_snapshot_writer *w, uint32_t type, const void *a, size_t alen,
                   size_t len, unsigned char **rest, size_t *at)
{
    int rc;

    if (len > SIZE_MAX - CI_SNAP_HEADER_LEN)
        return CI_ETOOBIG;
    if ((rc = grow(w, CI_SNAP_HEADER_LEN + len)) != CI_OK)
        return rc;
    *at = w->len;
    put_header(w->p + w->len, type, len);
    if (alen)
        memcpy(w->p + w->len + CI_SNAP_HEADER_LEN, a, alen);
    *rest = w->p + w->len + CI_SNAP_HEADER_LEN + alen;
    w->len += CI_SNAP_HEADER_LEN + len;
    return CI_OK;
}

void ci_snapshot_shrink(struct ci_snapshot_writer *w, size_t at, size_t unused)
{
    put64(w->p + at + 8, get64(w->p + at + 8) - unused);
    w->len -= unused;
}

int ci_snapshot_add(struct ci_snapshot_writer *w, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen)
{
    unsigned char *rest;
    size_t at;
    int rc;

    if (blen > SIZE_MAX - alen)
        return CI_ETOOBIG;
    if ((rc = reserve(w, type, a, alen, alen + blen, &rest, &at)) != CI_OK)
        return rc;
    if (blen)
        memcpy(rest, b, blen);
    return CI_OK;
}

int ci_snapshot_add_dir(struct ci_snapshot_writer *w, const char *path, size_t plen)
{
    unsigned char mode[4];

    put32(mode, 0700);
    return ci_snapshot_add(w, CI_SNAP_DIR, mode, sizeof mode, path, plen);
}

int ci_snapshot_reserve_file(struct ci_snapshot_writer *w, const char *path, size_t plen,
                             int executable, size_t size, unsigned char **data, size_t *at)
{
    unsigned char head[8];
    int rc;

    if (plen > CI_SNAP_PATH_MAX || size > SIZE_MAX - sizeof head - plen)
        return CI_ETOOBIG;
    put32(head, executable ? 0700 : 0600);
    put32(head + 4, (uint32_t)plen);
    if ((rc = reserve(w, CI_SNAP_FILE, head, sizeof head, sizeof head + plen + size, data, at)) !=
        CI_OK)
        return rc;
    memcpy(*data, path, plen);
    *data += plen;
    return CI_OK;
}

int ci_snapshot_end(struct ci_snapshot_writer *w)
{
    int rc;

    /* The hash may pass max: max bounds what the sections hold. */
    w->max += CI_SNAPSHOT_HASH_LEN;
    if ((rc = grow(w, CI_SNAPSHOT_HASH_LEN)) != CI_OK)
        return rc;
    digest(w->p, w->len, w->p + w->len);
    w->len += CI_SNAPSHOT_HASH_LEN;
    return CI_OK;
}
