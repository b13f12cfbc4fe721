/*
 * codeinterp-manifest's key pairs and signatures: making a key pair,
 * reading a secret key file, and signing a document's canonical bytes.
 * Only the signer needs them, so they live in the tool and never in
 * libcodeinterp, which only verifies (lib/manifest_verify.c; make
 * check-abi proves the library holds none of this). The key file format
 * and what is signed are in docs/manifest-format.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "cli.h"
#include "codeinterp.h"
#include "manifest_doc.h"

int ci_manifest_read_secret_key(const char *path, unsigned char sk[64], struct ci_err *err)
{
    unsigned char pk[32], sk2[64];
    int rc = ci_manifest_read_key(path, "secret key", CI_MANIFEST_SECRET_PREFIX,
                                  CI_MANIFEST_PUBLIC_PREFIX, sk, 64, err);
    if (rc != CI_OK)
        return rc;
    /* libsodium's secret key is seed || public key: both halves must agree */
    crypto_sign_seed_keypair(pk, sk2, sk);
    int same = sodium_memcmp(sk2, sk, 64) == 0;
    sodium_memzero(sk2, sizeof sk2);
    if (same)
        return CI_OK;
    sodium_memzero(sk, 64);
    return ci_manifest_fail(err, CI_EMANIFEST, "secret key", path,
                            "corrupt: its public half does not match its seed");
}

/* Writes @text to a new file @path of mode @mode (fchmod(2), whatever
 * the umask). 0, or -1 with errno; nothing is left behind on failure,
 * except for EEXIST's old file. */
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

/* "<prefix><base64 of key>\n", malloc'd; NULL if memory ran out. */
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

/* @name + @suffix, malloc'd; NULL if memory ran out. */
static char *with_suffix(const char *name, const char *suffix)
{
    size_t nl = strlen(name), sl = strlen(suffix);
    char *p = malloc(nl + sl + 1);
    if (p) {
        memcpy(p, name, nl);
        memcpy(p + nl, suffix, sl + 1);
    }
    return p;
}

int ci_manifest_keygen(const char *name, struct ci_err *err)
{
    unsigned char pk[32], sk[64];
    char *keypath = NULL, *pubpath = NULL, *sktext = NULL, *pktext = NULL;
    struct stat st;
    int rc;

    if (sodium_init() < 0)
        return ci_manifest_fail(err, CI_EIO, "key pair", name,
                                "libsodium could not be initialised");
    crypto_sign_keypair(pk, sk);
    keypath = with_suffix(name, ".key");
    pubpath = with_suffix(name, ".pub");
    sktext = key_text(CI_MANIFEST_SECRET_PREFIX, sk, sizeof sk);
    pktext = key_text(CI_MANIFEST_PUBLIC_PREFIX, pk, sizeof pk);
    if (!keypath || !pubpath || !sktext || !pktext) {
        rc = ci_err_set(err, CI_ENOMEM, NULL);
        goto out;
    }
    /* Refuse before anything is written, so no half pair is made. */
    if (lstat(keypath, &st) == 0 || lstat(pubpath, &st) == 0) {
        int secret = lstat(keypath, &st) == 0;
        rc = ci_manifest_fail(err, CI_EIO, secret ? "secret key" : "public key",
                              secret ? keypath : pubpath,
                              "exists; not replaced (remove it first if you mean to)");
        goto out;
    }
    if (write_new(keypath, sktext, 0600) != 0) {
        rc = ci_manifest_fail(err, CI_EIO, "secret key", keypath, "cannot create: %s",
                              errno == EEXIST ? "it exists; not replaced" : strerror(errno));
        goto out;
    }
    if (write_new(pubpath, pktext, 0644) != 0) {
        rc = ci_manifest_fail(err, CI_EIO, "public key", pubpath, "cannot create: %s",
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

int ci_manifest_sign(json_t *doc, const unsigned char sk[64], struct ci_err *err)
{
    unsigned char sig[crypto_sign_BYTES];
    char id[CI_MANIFEST_KEY_ID_LEN + 1], b64[CI_MANIFEST_SIG_B64_LEN + 1];
    size_t len;

    if (!json_is_object(doc))
        return ci_err_set(err, CI_EINVAL, "manifest: not a JSON object");
    if (sodium_init() < 0)
        return ci_err_set(err, CI_ENOMEM, "manifest: libsodium could not be initialised");
    char *canon = ci_manifest_canonical(doc, &len);
    if (!canon)
        return ci_err_set(err, CI_ENOMEM, NULL);
    crypto_sign_detached(sig, NULL, (const unsigned char *)canon, len, sk);
    free(canon);
    ci_manifest_key_id(sk + 32, id);
    sodium_bin2base64(b64, sizeof b64, sig, sizeof sig, sodium_base64_VARIANT_ORIGINAL);
    json_t *s = json_pack("{s:s, s:s, s:s}", "algorithm", "ed25519", "key_id", id, "value", b64);
    if (!s || json_object_set_new(doc, "signature", s) != 0)
        return ci_err_set(err, CI_ENOMEM, NULL);
    return CI_OK;
}
