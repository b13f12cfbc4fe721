/*
 * The signed package manifest, host side: key files, the document's
 * strict validation, its canonical bytes, Ed25519 signing and
 * verification, and the policy text handed to the worker (manifest.h).
 * See manifest_doc.h for the contract of each function.
 *
 * Verification checks the signature before it trusts anything else in
 * the document, then the whole body: a manifest the host accepts is one
 * an operator signed and that the format allows, never "mostly valid".
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

#include "internal.h"
#include "manifest.h"
#include "manifest_doc.h"

#define SIG_BYTES crypto_sign_BYTES /* 64 */
#define SIG_B64_LEN 88              /* base64 of 64 bytes, padded */
#define KEY_FILE_MAX 4096

/* ---- messages ---- */

/* "<what> <path>: " + the formatted rest, into @msg. */
static void say(char *msg, size_t msglen, const char *what, const char *path, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));
static void say(char *msg, size_t msglen, const char *what, const char *path, const char *fmt,
                ...)
{
    if (!msg || msglen == 0)
        return;
    int n = snprintf(msg, msglen, "%s %s: ", what, path);
    if (n < 0 || (size_t)n >= msglen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, msglen - (size_t)n, fmt, ap);
    va_end(ap);
}

#define MF_SAY(...) say(msg, msglen, "manifest", path, __VA_ARGS__)

/* @s as it may be shown in a message: control bytes and '"' escaped, cut
 * at about 160 bytes. Returns @buf. */
static const char *shown(const char *s, char *buf, size_t n)
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

/* 1 if @s is a string the format allows: no byte below 0x20 nor 0x7f,
 * 1..@max bytes. */
static int text_valid(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    return 1;
}

static int lower_hex(const char *s, size_t len)
{
    if (strlen(s) != len)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
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

/* Reads @path whole, at most @max bytes, into a malloc'd NUL-terminated
 * buffer; *@identity (unless NULL) is the file's stat(2) once read. 0;
 * -1 with errno (EFBIG when larger than @max, EINVAL when not a regular
 * file). */
/* Why read_whole() failed, for a message. */
static const char *read_error(int e)
{
    return e == EINVAL ? "not a regular file" : strerror(e);
}

static int read_whole(const char *path, size_t max, char **out, size_t *len,
                      struct stat *identity)
{
    *out = NULL;
    /* Non-blocking, so that a FIFO cannot hang the open; only a regular
     * file is read (a FIFO or a device would block or never end). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        errno = EFBIG;
        return -1;
    }
    size_t cap = S_ISREG(st.st_mode) && (size_t)st.st_size < max ? (size_t)st.st_size + 1 : 65536;
    size_t have = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    for (;;) {
        if (have == cap) {
            if (cap > max) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return -1;
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                close(fd);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t n = read(fd, buf + have, cap - have);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        have += (size_t)n;
    }
    /* What was read, as it is now: a write during the read changes its
     * times, and the next look at the file sees it changed. */
    if (identity && fstat(fd, identity) != 0) {
        int e = errno;
        free(buf);
        close(fd);
        errno = e;
        return -1;
    }
    close(fd);
    if (have > max) {
        free(buf);
        errno = EFBIG;
        return -1;
    }
    buf[have] = '\0';
    *out = buf;
    *len = have;
    return 0;
}

/*
 * Parses a key file's text: @prefix, the base64 of exactly @keylen bytes,
 * then at most one "\n". CI_OK, CI_EIO, CI_EMANIFEST or CI_ENOMEM.
 */
static int read_key(const char *path, const char *what, const char *prefix,
                    const char *other_prefix, unsigned char *key, size_t keylen, char *msg,
                    size_t msglen)
{
    char *text;
    size_t len;
    if (sodium_init() < 0) {
        say(msg, msglen, what, path, "libsodium could not be initialised");
        return CI_EMANIFEST;
    }
    if (read_whole(path, KEY_FILE_MAX, &text, &len, NULL) != 0) {
        if (errno == ENOMEM)
            return CI_ENOMEM;
        say(msg, msglen, what, path, "cannot read: %s",
            errno == EFBIG ? "larger than a key file can be" : read_error(errno));
        return CI_EIO;
    }
    int rc = CI_EMANIFEST;
    size_t pl = strlen(prefix);
    size_t b64len = sodium_base64_ENCODED_LEN(keylen, sodium_base64_VARIANT_ORIGINAL) - 1;
    if (strlen(text) != len) {
        say(msg, msglen, what, path, "not a key file (it holds a NUL byte)");
    } else if (len >= strlen(other_prefix) && !memcmp(text, other_prefix, strlen(other_prefix))) {
        say(msg, msglen, what, path, "this is a %s key file, not a %s key file",
            strcmp(what, "public key") ? "public" : "secret", strcmp(what, "public key") ? "secret" : "public");
    } else if (len < pl || memcmp(text, prefix, pl)) {
        say(msg, msglen, what, path, "not a codeinterp-manifest %s file (it must start with \"%s\")",
            what, prefix);
    } else {
        const char *b = text + pl;
        size_t bl = strcspn(b, "\n");
        const char *rest = b + bl;
        size_t got = 0;
        const char *end = NULL;
        if (*rest == '\n')
            rest++;
        if (*rest)
            say(msg, msglen, what, path, "text after the key (a key file is one line)");
        else if (bl != b64len)
            say(msg, msglen, what, path,
                "the key is %zu characters long; the base64 of a %zu-byte key is %zu (truncated?)", bl,
                keylen, b64len);
        else if (sodium_base642bin(key, keylen, b, bl, NULL, &got, &end,
                                   sodium_base64_VARIANT_ORIGINAL) != 0 ||
                 got != keylen || end != b + bl)
            say(msg, msglen, what, path, "the key is not valid base64");
        else
            rc = CI_OK;
    }
    sodium_memzero(text, len);
    free(text);
    if (rc != CI_OK)
        sodium_memzero(key, keylen);
    return rc;
}

int ci_manifest_read_public_key(const char *path, unsigned char pk[32], char *msg, size_t msglen)
{
    int rc = read_key(path, "public key", CI_MANIFEST_PUBLIC_PREFIX, CI_MANIFEST_SECRET_PREFIX, pk, 32, msg,
                      msglen);
    return rc == CI_EIO ? CI_EMANIFEST : rc;
}

int ci_manifest_read_secret_key(const char *path, unsigned char sk[64], char *msg, size_t msglen)
{
    int rc = read_key(path, "secret key", CI_MANIFEST_SECRET_PREFIX, CI_MANIFEST_PUBLIC_PREFIX, sk, 64, msg,
                      msglen);
    if (rc != CI_OK)
        return rc;
    /* libsodium's secret key is seed || public key: both halves must agree */
    unsigned char pk[32], sk2[64];
    crypto_sign_seed_keypair(pk, sk2, sk);
    int same = sodium_memcmp(sk2, sk, 64) == 0;
    sodium_memzero(sk2, sizeof sk2);
    if (!same) {
        sodium_memzero(sk, 64);
        say(msg, msglen, "secret key", path, "corrupt: its public half does not match its seed");
        return CI_EMANIFEST;
    }
    return CI_OK;
}

/* ---- writing key files ---- */

/* Writes @text to a new file @path of mode @mode. 0, or -1 with errno
 * (nothing is left behind on failure, except for EEXIST's old file). */
static int write_new(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    size_t len = strlen(text), off = 0;
    int e = 0;
    if (fchmod(fd, mode) != 0)
        e = errno;
    while (!e && off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            e = errno;
        else
            off += (size_t)n;
    }
    if (!e && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        unlink(path);
        errno = e;
        return -1;
    }
    return 0;
}

/* "<prefix><base64 of key>\n", malloc'd. */
static char *key_text(const char *prefix, const unsigned char *key, size_t keylen)
{
    size_t b64 = sodium_base64_ENCODED_LEN(keylen, sodium_base64_VARIANT_ORIGINAL);
    size_t pl = strlen(prefix);
    char *t = malloc(pl + b64 + 1);
    if (!t)
        return NULL;
    memcpy(t, prefix, pl);
    sodium_bin2base64(t + pl, b64, key, keylen, sodium_base64_VARIANT_ORIGINAL);
    strcat(t, "\n");
    return t;
}

int ci_manifest_keygen(const char *name, char *msg, size_t msglen)
{
    if (sodium_init() < 0) {
        say(msg, msglen, "key pair", name, "libsodium could not be initialised");
        return CI_EIO;
    }
    size_t nl = strlen(name);
    char *keypath = malloc(nl + 5), *pubpath = malloc(nl + 5);
    unsigned char pk[32], sk[64];
    char *sktext = NULL, *pktext = NULL;
    int rc = CI_ENOMEM;
    if (!keypath || !pubpath)
        goto out;
    memcpy(keypath, name, nl);
    memcpy(keypath + nl, ".key", 5);
    memcpy(pubpath, name, nl);
    memcpy(pubpath + nl, ".pub", 5);
    struct stat st;
    rc = CI_EIO;
    /* Refuse before anything is written, so no half pair is made. */
    if (lstat(keypath, &st) == 0 || lstat(pubpath, &st) == 0) {
        const char *which = lstat(keypath, &st) == 0 ? keypath : pubpath;
        say(msg, msglen, which == keypath ? "secret key" : "public key", which,
            "exists; not replaced (remove it first if you mean to)");
        goto out;
    }
    crypto_sign_keypair(pk, sk);
    rc = CI_ENOMEM;
    sktext = key_text(CI_MANIFEST_SECRET_PREFIX, sk, sizeof sk);
    pktext = key_text(CI_MANIFEST_PUBLIC_PREFIX, pk, sizeof pk);
    if (!sktext || !pktext)
        goto out;
    rc = CI_EIO;
    if (write_new(keypath, sktext, 0600) != 0) {
        say(msg, msglen, "secret key", keypath, "cannot create: %s",
            errno == EEXIST ? "it exists; not replaced" : strerror(errno));
        goto out;
    }
    if (write_new(pubpath, pktext, 0644) != 0) {
        say(msg, msglen, "public key", pubpath, "cannot create: %s",
            errno == EEXIST ? "it exists; not replaced" : strerror(errno));
        unlink(keypath);
        goto out;
    }
    rc = CI_OK;
out:
    sodium_memzero(sk, sizeof sk);
    if (sktext) {
        sodium_memzero(sktext, strlen(sktext));
        free(sktext);
    }
    free(pktext);
    free(keypath);
    free(pubpath);
    return rc;
}

/* ---- the document ---- */

static int load_doc(const char *path, json_t **out, struct stat *identity, char *msg,
                    size_t msglen)
{
    *out = NULL;
    char *text;
    size_t len;
    if (read_whole(path, CI_MANIFEST_MAX_BYTES, &text, &len, identity) != 0) {
        if (errno == ENOMEM)
            return CI_ENOMEM;
        if (errno == EFBIG) {
            MF_SAY("malformed: larger than %u MiB", CI_MANIFEST_MAX_BYTES >> 20);
            return CI_EMANIFEST;
        }
        MF_SAY("cannot read: %s", read_error(errno));
        return CI_EIO;
    }
    json_error_t err;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (!doc) {
        if (json_error_code(&err) == json_error_out_of_memory)
            return CI_ENOMEM;
        MF_SAY("malformed: line %d column %d: %s", err.line, err.column, err.text);
        return CI_EMANIFEST;
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        MF_SAY("malformed: not a JSON object");
        return CI_EMANIFEST;
    }
    *out = doc;
    return CI_OK;
}

int ci_manifest_load(const char *path, json_t **out, char *msg, size_t msglen)
{
    return load_doc(path, out, NULL, msg, msglen);
}


/* Only @allowed members (NULL-terminated), and each of the first
 * @required of them present. 0, or -1 with @msg naming @where. */
static int check_members(const json_t *obj, const char *const allowed[], size_t required,
                         const char *where, const char *path, char *msg, size_t msglen)
{
    const char *key;
    json_t *v;
    char b[200];
    json_object_foreach((json_t *)obj, key, v) {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], key))
            i++;
        if (!allowed[i]) {
            MF_SAY("malformed: unknown member \"%s\" in %s", shown(key, b, sizeof b), where);
            return -1;
        }
    }
    for (size_t i = 0; i < required; i++) {
        if (!json_object_get(obj, allowed[i])) {
            MF_SAY("malformed: %s has no member \"%s\"", where, allowed[i]);
            return -1;
        }
    }
    return 0;
}

struct path_ref {
    const char *path;
};
struct name_ref {
    char *norm;
    const char *name;
    size_t index;
};

static int cmp_path_ref(const void *a, const void *b)
{
    return strcmp(((const struct path_ref *)a)->path, ((const struct path_ref *)b)->path);
}

static int cmp_name_ref(const void *a, const void *b)
{
    const struct name_ref *x = a, *y = b;
    int c = strcmp(x->norm, y->norm);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The files object @files of @where: paths and hashes. Appends each path
 * to @refs (room is there: the caller counted). */
static int check_files(const json_t *files, const char *where, struct path_ref *refs,
                       size_t *nrefs, const char *path, char *msg, size_t msglen)
{
    const char *key;
    json_t *v;
    char b[200];
    if (!json_is_object(files)) {
        MF_SAY("malformed: \"files\" of %s is not an object", where);
        return -1;
    }
    json_object_foreach((json_t *)files, key, v) {
        if (!ci_manifest_path_valid(key)) {
            MF_SAY("malformed: %s lists \"%s\", which is not an absolute, normalised path of at "
                   "most %u bytes without control characters",
                   where, shown(key, b, sizeof b), CI_MANIFEST_PATH_MAX);
            return -1;
        }
        if (!json_is_string(v) || !lower_hex(json_string_value(v), 64)) {
            MF_SAY("malformed: the hash of %s in %s is not 64 lowercase hex digits",
                   shown(key, b, sizeof b), where);
            return -1;
        }
        refs[(*nrefs)++].path = key;
    }
    return 0;
}

/* A requires or pulled_in_by list: names, none twice. */
static int check_name_list(const json_t *list, const char *member, const char *where,
                           const char *path, char *msg, size_t msglen)
{
    char b[200];
    if (!json_is_array(list)) {
        MF_SAY("malformed: \"%s\" of %s is not an array", member, where);
        return -1;
    }
    size_t n = json_array_size(list);
    if (n > CI_MANIFEST_MAX_DISTS) {
        MF_SAY("malformed: \"%s\" of %s has more than %u names", member, where, CI_MANIFEST_MAX_DISTS);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(list, i);
        if (!json_is_string(s) || !ci_manifest_name_valid(json_string_value(s))) {
            MF_SAY("malformed: \"%s\" of %s holds %s%s%s, which is not a distribution name",
                   member, where, json_is_string(s) ? "\"" : "a non-string",
                   json_is_string(s) ? shown(json_string_value(s), b, sizeof b) : "",
                   json_is_string(s) ? "\"" : "");
            return -1;
        }
    }
    return 0;
}

/* The position of @name (already valid) among the sorted @names, or -1. */
static long name_position(const struct name_ref *names, size_t n, const char *name)
{
    char norm[CI_MANIFEST_NAME_MAX + 1];
    ci_manifest_normalise_name(name, norm);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(norm, names[mid].norm);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

int ci_manifest_check_body(const json_t *doc, const char *path, char *msg, size_t msglen)
{
    static const char *const top[] = {"format",        "version",    "python", "search_path",
                                      "distributions", "site_files", "signature", NULL};
    static const char *const dist_members[] = {"name",         "version", "requested", "requires",
                                               "pulled_in_by", "files",   NULL};
    char b[200], where[260];
    if (!json_is_object(doc)) {
        MF_SAY("malformed: not a JSON object");
        return CI_EMANIFEST;
    }
    if (check_members(doc, top, 6, "the document", path, msg, msglen))
        return CI_EMANIFEST;

    json_t *v = json_object_get(doc, "format");
    if (!json_is_string(v) || strcmp(json_string_value(v), CI_MANIFEST_FORMAT)) {
        MF_SAY("malformed: \"format\" is not \"%s\"", CI_MANIFEST_FORMAT);
        return CI_EMANIFEST;
    }
    v = json_object_get(doc, "version");
    if (!json_is_integer(v)) {
        MF_SAY("malformed: \"version\" is not an integer");
        return CI_EMANIFEST;
    }
    if (json_integer_value(v) != CI_MANIFEST_VERSION) {
        MF_SAY("malformed: format version %lld; this codeinterp reads version %d",
               (long long)json_integer_value(v), CI_MANIFEST_VERSION);
        return CI_EMANIFEST;
    }
    v = json_object_get(doc, "python");
    if (!json_is_string(v) || !text_valid(json_string_value(v), CI_MANIFEST_TEXT_MAX)) {
        MF_SAY("malformed: \"python\" is not a version string (1 to %u bytes, no control "
               "characters)",
               CI_MANIFEST_TEXT_MAX);
        return CI_EMANIFEST;
    }

    json_t *sp = json_object_get(doc, "search_path");
    if (!json_is_array(sp) || json_array_size(sp) < 1 || json_array_size(sp) > CI_MANIFEST_MAX_PATHS) {
        MF_SAY("malformed: \"search_path\" is not an array of 1 to %u directories",
               CI_MANIFEST_MAX_PATHS);
        return CI_EMANIFEST;
    }
    for (size_t i = 0; i < json_array_size(sp); i++) {
        json_t *e = json_array_get(sp, i);
        if (!json_is_string(e) || !ci_manifest_path_valid(json_string_value(e))) {
            MF_SAY("malformed: search_path[%zu] is not an absolute, normalised path of at most %u "
                   "bytes without control characters",
                   i, CI_MANIFEST_PATH_MAX);
            return CI_EMANIFEST;
        }
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(json_string_value(json_array_get(sp, j)), json_string_value(e))) {
                MF_SAY("lists search path directory %s twice", shown(json_string_value(e), b, sizeof b));
                return CI_EMANIFEST;
            }
        }
    }

    json_t *dists = json_object_get(doc, "distributions");
    json_t *site = json_object_get(doc, "site_files");
    if (!json_is_array(dists)) {
        MF_SAY("malformed: \"distributions\" is not an array");
        return CI_EMANIFEST;
    }
    if (!json_is_object(site)) {
        MF_SAY("malformed: \"site_files\" is not an object");
        return CI_EMANIFEST;
    }
    size_t nd = json_array_size(dists);
    if (nd > CI_MANIFEST_MAX_DISTS) {
        MF_SAY("malformed: more than %u distributions", CI_MANIFEST_MAX_DISTS);
        return CI_EMANIFEST;
    }

    /* Count the files first: the limit, and room for the duplicate check. */
    size_t nfiles = json_is_object(site) ? json_object_size(site) : 0;
    for (size_t i = 0; i < nd; i++) {
        json_t *f = json_object_get(json_array_get(dists, i), "files");
        if (json_is_object(f))
            nfiles += json_object_size(f);
    }
    if (nfiles > CI_MANIFEST_MAX_FILES) {
        MF_SAY("malformed: lists %zu files; at most %u are allowed", nfiles, CI_MANIFEST_MAX_FILES);
        return CI_EMANIFEST;
    }

    int rc = CI_ENOMEM;
    struct path_ref *refs = malloc((nfiles ? nfiles : 1) * sizeof *refs);
    struct name_ref *names = calloc(nd ? nd : 1, sizeof *names);
    size_t nrefs = 0, nnames = 0;
    if (!refs || !names)
        goto out;
    rc = CI_EMANIFEST;

    for (size_t i = 0; i < nd; i++) {
        json_t *d = json_array_get(dists, i);
        snprintf(where, sizeof where, "distributions[%zu]", i);
        if (!json_is_object(d)) {
            MF_SAY("malformed: %s is not an object", where);
            goto out;
        }
        json_t *name = json_object_get(d, "name");
        if (json_is_string(name) && ci_manifest_name_valid(json_string_value(name)))
            snprintf(where, sizeof where, "distributions[%zu] (%s)", i, json_string_value(name));
        if (check_members(d, dist_members, 6, where, path, msg, msglen))
            goto out;
        if (!json_is_string(name) || !ci_manifest_name_valid(json_string_value(name))) {
            MF_SAY("malformed: the name of %s is not 1 to %u of [A-Za-z0-9._-]%s%s%s", where,
                   CI_MANIFEST_NAME_MAX, json_is_string(name) ? " (\"" : "",
                   json_is_string(name) ? shown(json_string_value(name), b, sizeof b) : "",
                   json_is_string(name) ? "\")" : "");
            goto out;
        }
        json_t *ver = json_object_get(d, "version");
        if (!json_is_string(ver) || !text_valid(json_string_value(ver), CI_MANIFEST_TEXT_MAX)) {
            MF_SAY("malformed: the version of %s is not a string of 1 to %u bytes without "
                   "control characters",
                   where, CI_MANIFEST_TEXT_MAX);
            goto out;
        }
        if (!json_is_boolean(json_object_get(d, "requested"))) {
            MF_SAY("malformed: \"requested\" of %s is not true or false", where);
            goto out;
        }
        if (check_name_list(json_object_get(d, "requires"), "requires", where, path, msg, msglen) ||
            check_name_list(json_object_get(d, "pulled_in_by"), "pulled_in_by", where, path, msg,
                            msglen))
            goto out;
        if (check_files(json_object_get(d, "files"), where, refs, &nrefs, path, msg, msglen))
            goto out;
        names[nnames].name = json_string_value(name);
        names[nnames].index = i;
        names[nnames].norm = malloc(strlen(names[nnames].name) + 1);
        if (!names[nnames].norm) {
            rc = CI_ENOMEM;
            goto out;
        }
        ci_manifest_normalise_name(names[nnames].name, names[nnames].norm);
        nnames++;
    }
    if (check_files(site, "site_files", refs, &nrefs, path, msg, msglen))
        goto out;

    /* The same distribution twice: the later one is named. */
    if (nnames > 1)
        qsort(names, nnames, sizeof *names, cmp_name_ref);
    size_t dup_index = (size_t)-1;
    const char *dup_name = NULL;
    for (size_t i = 1; i < nnames; i++) {
        if (!strcmp(names[i].norm, names[i - 1].norm) && names[i].index < dup_index) {
            dup_index = names[i].index;
            dup_name = names[i].name;
        }
    }
    if (dup_name) {
        MF_SAY("lists distribution %s twice", dup_name);
        goto out;
    }

    /* requires and pulled_in_by name listed distributions, each once:
     * seen[k] is the number of the list that last named names[k]. */
    size_t *seen = calloc(nnames ? nnames : 1, sizeof *seen), list_no = 0;
    if (!seen) {
        rc = CI_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < nd; i++) {
        json_t *d = json_array_get(dists, i);
        const char *dn = json_string_value(json_object_get(d, "name"));
        static const char *const lists[] = {"requires", "pulled_in_by"};
        for (int l = 0; l < 2; l++) {
            json_t *list = json_object_get(d, lists[l]);
            list_no++;
            for (size_t j = 0; j < json_array_size(list); j++) {
                const char *n = json_string_value(json_array_get(list, j));
                long k = name_position(names, nnames, n);
                if (k < 0) {
                    MF_SAY("malformed: \"%s\" of distribution %s names %s, which is not listed",
                           lists[l], dn, n);
                    free(seen);
                    goto out;
                }
                if (seen[k] == list_no) {
                    MF_SAY("malformed: \"%s\" of distribution %s names %s twice", lists[l],
                           dn, n);
                    free(seen);
                    goto out;
                }
                seen[k] = list_no;
            }
        }
    }
    free(seen);

    if (nrefs > 1)
        qsort(refs, nrefs, sizeof *refs, cmp_path_ref);
    for (size_t i = 1; i < nrefs; i++) {
        if (!strcmp(refs[i].path, refs[i - 1].path)) {
            MF_SAY("lists %s twice", shown(refs[i].path, b, sizeof b));
            goto out;
        }
    }
    rc = CI_OK;
out:
    if (names)
        for (size_t i = 0; i < nnames; i++)
            free(names[i].norm);
    free(names);
    free(refs);
    return rc;
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

int ci_manifest_sign(json_t *doc, const unsigned char sk[64], char *msg, size_t msglen)
{
    if (!json_is_object(doc)) {
        snprintf(msg, msglen, "manifest: not a JSON object");
        return CI_EINVAL;
    }
    if (sodium_init() < 0) {
        snprintf(msg, msglen, "manifest: libsodium could not be initialised");
        return CI_ENOMEM;
    }
    size_t len;
    char *canon = ci_manifest_canonical(doc, &len);
    if (!canon)
        return CI_ENOMEM;
    unsigned char sig[SIG_BYTES];
    crypto_sign_detached(sig, NULL, (const unsigned char *)canon, len, sk);
    free(canon);
    char id[CI_MANIFEST_KEY_ID_LEN + 1], b64[SIG_B64_LEN + 1];
    ci_manifest_key_id(sk + 32, id);
    sodium_bin2base64(b64, sizeof b64, sig, sizeof sig, sodium_base64_VARIANT_ORIGINAL);
    json_t *s = json_pack("{s:s, s:s, s:s}", "algorithm", "ed25519", "key_id", id, "value", b64);
    if (!s || json_object_set_new(doc, "signature", s) != 0)
        return CI_ENOMEM;
    return CI_OK;
}

int ci_manifest_policy_text(const json_t *doc, const char *path, char **policy, size_t *len, char *msg,
                       size_t msglen)
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
        json_t *f = i < json_array_size(dists)
                        ? json_object_get(json_array_get(dists, i), "files")
                        : site;
        json_object_foreach(f, key, v) total += 5 + 64 + 1 + strlen(key) + 1;
    }
    if (total > CI_MANIFEST_POLICY_MAX) {
        MF_SAY("its policy text would take %zu bytes, over the limit of %u", total,
               CI_MANIFEST_POLICY_MAX);
        return CI_EMANIFEST;
    }
    char *t = malloc(total + 1);
    if (!t)
        return CI_ENOMEM;
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
        json_t *f = i < json_array_size(dists)
                        ? json_object_get(json_array_get(dists, i), "files")
                        : site;
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

/* The signature member: present, well formed, by @pk, and good. */
static int check_signature(const json_t *doc, const char *path, const unsigned char pk[32],
                           const char *canon, size_t canon_len, char *msg, size_t msglen)
{
    static const char *const members[] = {"algorithm", "key_id", "value", NULL};
    char b[200];
    json_t *sig = json_object_get(doc, "signature");
    if (!sig) {
        MF_SAY("not signed (no \"signature\" member; sign it with codeinterp-manifest sign)");
        return CI_EMANIFEST;
    }
    if (!json_is_object(sig)) {
        MF_SAY("malformed signature: \"signature\" is not an object");
        return CI_EMANIFEST;
    }
    const char *key;
    json_t *v;
    json_object_foreach(sig, key, v) {
        size_t i = 0;
        while (members[i] && strcmp(members[i], key))
            i++;
        if (!members[i]) {
            MF_SAY("malformed signature: unknown member \"%s\"", shown(key, b, sizeof b));
            return CI_EMANIFEST;
        }
    }
    for (size_t i = 0; members[i]; i++) {
        if (!json_is_string(json_object_get(sig, members[i]))) {
            MF_SAY("malformed signature: \"%s\" is %s", members[i],
                   json_object_get(sig, members[i]) ? "not a string" : "missing");
            return CI_EMANIFEST;
        }
    }
    const char *alg = json_string_value(json_object_get(sig, "algorithm"));
    const char *id = json_string_value(json_object_get(sig, "key_id"));
    const char *value = json_string_value(json_object_get(sig, "value"));
    if (strcmp(alg, "ed25519")) {
        MF_SAY("malformed signature: algorithm \"%s\" (only \"ed25519\" is known)",
               shown(alg, b, sizeof b));
        return CI_EMANIFEST;
    }
    if (!lower_hex(id, CI_MANIFEST_KEY_ID_LEN)) {
        MF_SAY("malformed signature: key_id \"%s\" is not %d lowercase hex digits",
               shown(id, b, sizeof b), CI_MANIFEST_KEY_ID_LEN);
        return CI_EMANIFEST;
    }
    unsigned char raw[SIG_BYTES];
    size_t got = 0;
    const char *end = NULL;
    size_t vl = strlen(value);
    if (vl != SIG_B64_LEN) {
        MF_SAY("malformed signature: value is %zu characters long; the base64 of a 64-byte "
               "Ed25519 signature is %d%s",
               vl, SIG_B64_LEN, vl < SIG_B64_LEN ? " (truncated)" : "");
        return CI_EMANIFEST;
    }
    if (sodium_base642bin(raw, sizeof raw, value, vl, NULL, &got, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        got != sizeof raw || end != value + vl) {
        MF_SAY("malformed signature: value is not valid base64");
        return CI_EMANIFEST;
    }
    char want[CI_MANIFEST_KEY_ID_LEN + 1];
    ci_manifest_key_id(pk, want);
    if (strcmp(id, want)) {
        MF_SAY("signed by an unknown key (key id %s; the configured key's id is %s)", id, want);
        return CI_EMANIFEST;
    }
    if (crypto_sign_verify_detached(raw, (const unsigned char *)canon, canon_len, pk) != 0) {
        MF_SAY("bad signature: changed after signing");
        return CI_EMANIFEST;
    }
    return CI_OK;
}

int ci_manifest_verify_json(const json_t *doc, const char *path, const unsigned char pk[32],
                            char **policy, size_t *policy_len, unsigned char digest[32],
                            char *msg, size_t msglen)
{
    *policy = NULL;
    if (sodium_init() < 0) {
        MF_SAY("libsodium could not be initialised");
        return CI_EMANIFEST;
    }
    if (!json_is_object(doc)) {
        MF_SAY("malformed: not a JSON object");
        return CI_EMANIFEST;
    }
    size_t len;
    char *canon = ci_manifest_canonical(doc, &len);
    if (!canon)
        return CI_ENOMEM;
    int rc = check_signature(doc, path, pk, canon, len, msg, msglen);
    if (rc == CI_OK)
        rc = ci_manifest_check_body(doc, path, msg, msglen);
    if (rc == CI_OK)
        rc = ci_manifest_policy_text(doc, path, policy, policy_len, msg, msglen);
    if (rc == CI_OK)
        crypto_hash_sha256(digest, (const unsigned char *)canon, len);
    free(canon);
    return rc;
}

int ci_manifest_verify(const char *path, const unsigned char pk[32], char **policy,
                       size_t *policy_len, unsigned char digest[32], struct stat *identity,
                       char *msg, size_t msglen)
{
    *policy = NULL;
    json_t *doc;
    int rc = load_doc(path, &doc, identity, msg, msglen);
    if (rc == CI_EIO)
        return CI_EMANIFEST;
    if (rc != CI_OK)
        return rc;
    rc = ci_manifest_verify_json(doc, path, pk, policy, policy_len, digest, msg, msglen);
    json_decref(doc);
    return rc;
}
