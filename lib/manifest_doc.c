/*
 * The signed package manifest as a document, host side: reading the
 * JSON and the public key file, its canonical bytes (what is signed) and
 * the policy text handed to the worker (manifest.h), with the small
 * checks and messages verification and codeinterp-manifest share.
 * manifest_doc.h states each function's contract; docs/manifest-format.md
 * the format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "codeinterp.h"
#include "manifest.h"
#include "manifest_cache.h" /* struct ci_manifest_wheel */
#include "manifest_doc.h"
#include "read_all.h"

/* ---- messages ---- */

static int vfail(struct ci_err *err, int code, const char *what, const char *path,
                 const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
static int vfail(struct ci_err *err, int code, const char *what, const char *path,
                 const char *fmt, va_list ap)
{
    char detail[CI_ERR_MSG_MAX];

    vsnprintf(detail, sizeof detail, fmt, ap);
    return ci_err_set(err, code, "%s %s: %s", what, path, detail);
}

int ci_manifest_fail(struct ci_err *err, int code, const char *what, const char *path,
                     const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(err, code, what, path, fmt, ap);
    va_end(ap);
    return code;
}

int ci_manifest_refuse(struct ci_err *err, const char *path, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(err, CI_EMANIFEST, "manifest", path, fmt, ap);
    va_end(ap);
    return CI_EMANIFEST;
}

const char *ci_manifest_shown(const char *s, char *buf, size_t n)
{
    size_t o = 0;
    for (; *s && o + 8 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (o >= 160) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            o += (size_t)snprintf(buf + o, n - o, c == '"' || c == '\\' ? "\\%c" : "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = '\0';
    return buf;
}

/* ---- small checks ---- */

int ci_manifest_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > CI_MANIFEST_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

void ci_manifest_normalise_name(const char *name, char *out)
{
    size_t o = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '-' || *p == '_' || *p == '.') {
            if (o == 0 || out[o - 1] != '-')
                out[o++] = '-';
            /* a run is one '-': skip the rest of it */
            while (p[1] == '-' || p[1] == '_' || p[1] == '.')
                p++;
        } else {
            out[o++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        }
    }
    out[o] = '\0';
}

int ci_manifest_text_valid(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

int ci_manifest_hex_valid(const char *s, size_t len)
{
    if (strlen(s) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int ci_manifest_wheel_file_valid(const char *file)
{
    size_t n = strlen(file);

    if (n < 5 || n > CI_MANIFEST_WHEEL_FILE_MAX || file[0] == '.' || strcmp(file + n - 4, ".whl"))
        return 0;
    for (const char *p = file; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '+' || *p == '-'))
            return 0;
    return 1;
}

void ci_manifest_key_id(const unsigned char pk[32], char out[CI_MANIFEST_KEY_ID_LEN + 1])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, pk, 32);
    sodium_bin2hex(out, CI_MANIFEST_KEY_ID_LEN + 1, h, CI_MANIFEST_KEY_ID_LEN / 2);
}

/* ---- reading files ---- */

/* Why read_whole() failed, for a message. */
static const char *read_error(int e)
{
    return e == EINVAL ? "not a regular file" : strerror(e);
}

/* Reads @path whole, at most @max bytes, into a malloc'd NUL-terminated
 * buffer; *@identity (unless NULL) is the file's stat(2) once read. 0;
 * -1 with errno (EFBIG when larger than @max, EINVAL when not a regular
 * file, EISDIR for a directory). */
static int read_whole(const char *path, size_t max, char **out, size_t *len,
                      struct stat *identity)
{
    struct stat st;
    char *buf = NULL;
    int e;

    *out = NULL;
    /* Non-blocking, so that a FIFO cannot hang the open; only a regular
     * file is read (a FIFO or a device would block or never end). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0)
        goto fail;
    if (!S_ISREG(st.st_mode)) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        goto fail;
    }
    if ((size_t)st.st_size > max) {
        errno = EFBIG;
        goto fail;
    }
    /* It may grow while being read: read on, up to one byte past @max. */
    if (ci_read_all(fd, max, (size_t)st.st_size, &buf, len) != 0)
        goto fail;
    /* What was read, as it is now: a write during the read changes its
     * times, and the next look at the file sees it changed. */
    if (identity && fstat(fd, identity) != 0)
        goto fail;
    if (*len > max) {
        errno = EFBIG;
        goto fail;
    }
    close(fd);
    *out = buf;
    return 0;
fail:
    e = errno;
    free(buf);
    close(fd);
    errno = e;
    return -1;
}

/* ---- key files ---- */

/* The fault in the key file text @text (@len bytes) for a key of @keylen
 * bytes, with the key decoded into @key when there is none: CI_OK or
 * CI_EMANIFEST. */
static int parse_key(const char *text, size_t len, const char *path, const char *what,
                     const char *prefix, const char *other_prefix, unsigned char *key,
                     size_t keylen, struct ci_err *err)
{
    size_t pl = strlen(prefix);
    size_t b64len = sodium_base64_ENCODED_LEN(keylen, sodium_base64_VARIANT_ORIGINAL) - 1;
    int public = !strcmp(what, "public key");

    if (strlen(text) != len)
        return ci_manifest_fail(err, CI_EMANIFEST, what, path,
                                "not a key file (it holds a NUL byte)");
    if (len >= strlen(other_prefix) && !memcmp(text, other_prefix, strlen(other_prefix)))
        return ci_manifest_fail(err, CI_EMANIFEST, what, path,
                                "this is a %s key file, not a %s key file",
                                public ? "secret" : "public", public ? "public" : "secret");
    if (len < pl || memcmp(text, prefix, pl))
        return ci_manifest_fail(err, CI_EMANIFEST, what, path,
                                "not a codeinterp-manifest %s file (it must start with \"%s\")",
                                what, prefix);
    const char *b = text + pl;
    size_t bl = strcspn(b, "\n"), got = 0;
    const char *rest = b + bl, *end = NULL;
    if (*rest == '\n')
        rest++;
    if (*rest)
        return ci_manifest_fail(err, CI_EMANIFEST, what, path,
                                "text after the key (a key file is one line)");
    if (bl != b64len)
        return ci_manifest_fail(
            err, CI_EMANIFEST, what, path,
            "the key is %zu characters long; the base64 of a %zu-byte key is %zu (truncated?)",
            bl, keylen, b64len);
    if (sodium_base642bin(key, keylen, b, bl, NULL, &got, &end, sodium_base64_VARIANT_ORIGINAL) !=
            0 ||
        got != keylen || end != b + bl)
        return ci_manifest_fail(err, CI_EMANIFEST, what, path, "the key is not valid base64");
    return CI_OK;
}

int ci_manifest_read_key(const char *path, const char *what, const char *prefix,
                         const char *other_prefix, unsigned char *key, size_t keylen,
                         struct ci_err *err)
{
    char *text;
    size_t len;
    int rc;

    if (sodium_init() < 0)
        return ci_manifest_fail(err, CI_EMANIFEST, what, path,
                                "libsodium could not be initialised");
    if (read_whole(path, CI_MANIFEST_KEY_FILE_MAX, &text, &len, NULL) != 0) {
        if (errno == ENOMEM)
            return ci_err_set(err, CI_ENOMEM, NULL);
        return ci_manifest_fail(err, CI_EIO, what, path, "cannot read: %s",
                                errno == EFBIG ? "larger than a key file can be"
                                               : read_error(errno));
    }
    rc = parse_key(text, len, path, what, prefix, other_prefix, key, keylen, err);
    sodium_memzero(text, len);
    free(text);
    if (rc != CI_OK)
        sodium_memzero(key, keylen);
    return rc;
}

int ci_manifest_read_public_key(const char *path, unsigned char pk[32], struct ci_err *err)
{
    int rc = ci_manifest_read_key(path, "public key", CI_MANIFEST_PUBLIC_PREFIX,
                                  CI_MANIFEST_SECRET_PREFIX, pk, 32, err);
    /* For the library a public key it cannot read is a manifest fault. */
    if (rc == CI_EIO && err)
        err->code = CI_EMANIFEST;
    return rc == CI_EIO ? CI_EMANIFEST : rc;
}

/* ---- the document ---- */

int ci_manifest_load(const char *path, json_t **out, struct stat *identity, struct ci_err *err)
{
    json_error_t jerr;
    char *text;
    size_t len;

    *out = NULL;
    if (read_whole(path, CI_MANIFEST_MAX_BYTES, &text, &len, identity) != 0) {
        if (errno == ENOMEM)
            return ci_err_set(err, CI_ENOMEM, NULL);
        if (errno == EFBIG)
            return ci_manifest_refuse(err, path, "malformed: larger than %u MiB",
                                      CI_MANIFEST_MAX_BYTES >> 20);
        return ci_manifest_fail(err, CI_EIO, "manifest", path, "cannot read: %s",
                                read_error(errno));
    }
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!doc) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return ci_err_set(err, CI_ENOMEM, NULL);
        return ci_manifest_refuse(err, path, "malformed: line %d column %d: %s", jerr.line,
                                  jerr.column, jerr.text);
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        return ci_manifest_refuse(err, path, "malformed: not a JSON object");
    }
    *out = doc;
    return CI_OK;
}

char *ci_manifest_canonical(const json_t *doc, size_t *len)
{
    if (!json_is_object(doc))
        return NULL;
    /* A shallow copy shares the members' values; only "signature" goes. */
    json_t *body = json_copy((json_t *)doc);
    if (!body)
        return NULL;
    json_object_del(body, "signature");
    char *text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(body);
    if (text && len)
        *len = strlen(text);
    return text;
}

/* The files object of distribution @i of @dists, or @site past the last:
 * the policy text's file lines in order. */
static const json_t *files_of(const json_t *dists, const json_t *site, size_t i)
{
    return i < json_array_size(dists) ? json_object_get(json_array_get(dists, i), "files") : site;
}

int ci_manifest_policy_text(const json_t *doc, const char *path, char **policy, size_t *len,
                            struct ci_err *err)
{
    *policy = NULL;
    json_t *sp = json_object_get(doc, "search_path");
    json_t *dists = json_object_get(doc, "distributions");
    json_t *site = json_object_get(doc, "site_files");
    const char *key;
    json_t *v;
    /* sizes first, so the text is made in one allocation */
    size_t total = strlen(CI_MANIFEST_POLICY_MAGIC) + 4;
    for (size_t i = 0; i < json_array_size(sp); i++)
        total += 6 + strlen(json_string_value(json_array_get(sp, i)));
    for (size_t i = 0; i <= json_array_size(dists); i++) {
        json_t *f = (json_t *)files_of(dists, site, i);
        json_object_foreach(f, key, v) total += 5 + 64 + 1 + strlen(key) + 1;
    }
    if (total > CI_MANIFEST_POLICY_MAX)
        return ci_manifest_refuse(err, path,
                                  "its policy text would take %zu bytes, over the limit of %u",
                                  total, CI_MANIFEST_POLICY_MAX);
    char *t = malloc(total + 1);
    if (!t)
        return ci_err_set(err, CI_ENOMEM, NULL);
    size_t o = 0;
#define PUT(s, n) (memcpy(t + o, (s), (n)), o += (n))
    PUT(CI_MANIFEST_POLICY_MAGIC, strlen(CI_MANIFEST_POLICY_MAGIC));
    for (size_t i = 0; i < json_array_size(sp); i++) {
        const char *d = json_string_value(json_array_get(sp, i));
        PUT("path ", 5);
        PUT(d, strlen(d));
        PUT("\n", 1);
    }
    for (size_t i = 0; i <= json_array_size(dists); i++) {
        json_t *f = (json_t *)files_of(dists, site, i);
        json_object_foreach(f, key, v) {
            PUT("file ", 5);
            PUT(json_string_value(v), 64);
            PUT(" ", 1);
            PUT(key, strlen(key));
            PUT("\n", 1);
        }
    }
    PUT("end\n", 4);
#undef PUT
    t[o] = '\0';
    *policy = t;
    *len = o;
    return CI_OK;
}

/* ---- the wheels ---- */

void ci_manifest_wheels_free(struct ci_manifest_wheel *w, size_t n)
{
    for (size_t i = 0; w && i < n; i++) {
        free(w[i].file);
        free(w[i].name);
        free(w[i].version);
        for (size_t j = 0; j < w[i].n_requires; j++)
            free(w[i].requires[j]);
        free(w[i].requires);
    }
    free(w);
}

/* Wheel @e of a checked document into @w (zeroed): 0, or -1 when memory
 * ran out, with what was copied left for ci_manifest_wheels_free(). */
static int copy_wheel(const json_t *e, struct ci_manifest_wheel *w)
{
    const json_t *req = json_object_get(e, "requires");
    size_t nreq = json_array_size(req);

    if (!(w->file = strdup(json_string_value(json_object_get(e, "file")))) ||
        !(w->name = strdup(json_string_value(json_object_get(e, "name")))) ||
        !(w->version = strdup(json_string_value(json_object_get(e, "version")))) ||
        (nreq && !(w->requires = calloc(nreq, sizeof *w->requires))))
        return -1;
    sodium_hex2bin(w->sha256, sizeof w->sha256, json_string_value(json_object_get(e, "sha256")),
                   2 * sizeof w->sha256, NULL, NULL, NULL);
    for (; w->n_requires < nreq; w->n_requires++)
        if (!(w->requires[w->n_requires] =
                  strdup(json_string_value(json_array_get(req, w->n_requires)))))
            return -1;
    return 0;
}

int ci_manifest_wheels(const json_t *doc, struct ci_manifest_wheel **out, size_t *n,
                       struct ci_err *err)
{
    const json_t *wheels = json_object_get(doc, "wheels");
    size_t count = json_array_size(wheels);
    struct ci_manifest_wheel *w;

    *out = NULL;
    *n = 0;
    if (count == 0)
        return CI_OK;
    if (!(w = calloc(count, sizeof *w)))
        return ci_err_set(err, CI_ENOMEM, NULL);
    for (size_t i = 0; i < count; i++)
        if (copy_wheel(json_array_get(wheels, i), &w[i]) != 0) {
            ci_manifest_wheels_free(w, count);
            return ci_err_set(err, CI_ENOMEM, NULL);
        }
    *out = w;
    *n = count;
    return CI_OK;
}
