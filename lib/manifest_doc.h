/*
 * The signed package manifest as a JSON document: reading it, the
 * member checks, its canonical bytes, verifying its Ed25519 signature,
 * the policy text (manifest.h) made from a verified document, and the
 * key files. docs/manifest-format.md specifies the format, the bytes
 * that are signed and what each check refuses.
 *
 * Shared by the host library (lib/manifest_doc.c, lib/manifest_verify.c)
 * and codeinterp-manifest, which adds key generation, secret keys and
 * signing of its own (tools/manifest/keys.c); jansson and libsodium. The
 * worker sees the policy text alone.
 *
 * Every function that fails records its code and a one-line reason in
 * @err (lib/err.h; NULL records nothing): for a document the reason
 * starts "manifest <path>: ", for a key file "public key <path>: " or
 * "secret key <path>: ". An out-of-memory failure records CI_ENOMEM with
 * an empty message. Every function calls sodium_init() itself, and none
 * keeps state: any may run on any thread.
 */
#ifndef CI_MANIFEST_DOC_H
#define CI_MANIFEST_DOC_H

#include <stddef.h>

#include <jansson.h>
#include <sys/stat.h>

#include "err.h"

#define CI_MANIFEST_FORMAT "codeinterp-manifest"
#define CI_MANIFEST_VERSION 1
#define CI_MANIFEST_MAX_BYTES (64u * 1024 * 1024) /* a manifest document */
#define CI_MANIFEST_MAX_DISTS 10000u
#define CI_MANIFEST_NAME_MAX 200u /* a distribution's name */
#define CI_MANIFEST_TEXT_MAX 200u /* a version string */
#define CI_MANIFEST_PUBLIC_PREFIX "codeinterp-manifest-public-key "
#define CI_MANIFEST_SECRET_PREFIX "codeinterp-manifest-secret-key "
#define CI_MANIFEST_KEY_FILE_MAX 4096 /* bytes of a key file */
#define CI_MANIFEST_KEY_ID_LEN 16     /* hex digits, without the NUL */
#define CI_MANIFEST_SIG_B64_LEN 88    /* base64 of a 64-byte signature, padded */
#define CI_MANIFEST_SHOWN_MAX 200     /* a buffer for ci_manifest_shown() */

#define CI_MANIFEST_MAX_WHEELS 10000u    /* "wheels" entries */
#define CI_MANIFEST_WHEEL_FILE_MAX 255u  /* bytes of a wheel's file name */
#define CI_MANIFEST_MAX_REQUIRES 1000u   /* a wheel's requirements */
#define CI_MANIFEST_REQUIRE_MAX 1000u    /* bytes of one requirement */

struct ci_manifest_wheel; /* manifest_cache.h */

/* ---- messages ---- */

/* Records CI_EMANIFEST and "manifest <@path>: " + the formatted rest in
 * @err; returns CI_EMANIFEST. */
int ci_manifest_refuse(struct ci_err *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records @code and "<@what> <@path>: " + the formatted rest in @err;
 * returns @code. */
int ci_manifest_fail(struct ci_err *err, int code, const char *what, const char *path,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* @s as a message may show it: control bytes, '"' and '\' escaped, cut
 * at about 160 bytes, into @buf (@n bytes, at least
 * CI_MANIFEST_SHOWN_MAX). Returns @buf. Cannot fail. */
const char *ci_manifest_shown(const char *s, char *buf, size_t n);

/* ---- small checks ---- */

/* 1 if @name is 1..CI_MANIFEST_NAME_MAX of [A-Za-z0-9._-], else 0. */
int ci_manifest_name_valid(const char *name);

/*
 * The PEP 503 normalisation of @name into @out (lower case, each run of
 * '-', '_' and '.' as one '-'); @out holds at least strlen(@name) + 1
 * bytes. Cannot fail.
 */
void ci_manifest_normalise_name(const char *name, char *out);

/* 1 if @s is 1..@max bytes with no byte below 0x20 nor 0x7f, else 0. */
int ci_manifest_text_valid(const char *s, size_t max);

/* 1 if @s is exactly @len lowercase hex digits, else 0. */
int ci_manifest_hex_valid(const char *s, size_t len);

/* 1 if @file is a wheel's file name as the "wheels" member allows it: 1
 * to CI_MANIFEST_WHEEL_FILE_MAX bytes of [A-Za-z0-9._+-], not starting
 * with '.', ending ".whl". */
int ci_manifest_wheel_file_valid(const char *file);

/* ---- key files ---- */

/* The key id of @pk: lowercase hex of the first 8 bytes of its SHA-256,
 * NUL-terminated in @out. Cannot fail. */
void ci_manifest_key_id(const unsigned char pk[32], char out[CI_MANIFEST_KEY_ID_LEN + 1]);

/*
 * Reads the key file @path: @prefix, the base64 of exactly @keylen bytes
 * into @key, then at most one "\n". @what ("public key", "secret key")
 * names it in messages; a file that starts with @other_prefix is named
 * as the other kind. CI_OK; CI_EIO when it cannot be read; CI_EMANIFEST
 * when it is not such a file; CI_ENOMEM. @key is wiped on failure, and
 * the text read is wiped before it is freed.
 */
int ci_manifest_read_key(const char *path, const char *what, const char *prefix,
                         const char *other_prefix, unsigned char *key, size_t keylen,
                         struct ci_err *err);

/*
 * Reads the public key file @path ("codeinterp-manifest-public-key
 * <base64 of 32 bytes>\n") into @pk. CI_OK; CI_EMANIFEST when it cannot
 * be read or is not such a file; CI_ENOMEM.
 */
int ci_manifest_read_public_key(const char *path, unsigned char pk[32], struct ci_err *err);

/* ---- the document ---- */

/*
 * Reads and parses the document @path (a regular file of at most
 * CI_MANIFEST_MAX_BYTES, JSON with duplicate keys refused) into *@out,
 * which the caller releases with json_decref(); *@identity (unless NULL)
 * is the stat(2) of the file read, taken from its descriptor once read,
 * so what a cache keyed by it holds is what was read. It checks only
 * that the text is a JSON object: see ci_manifest_check_body() and
 * ci_manifest_verify_json(). CI_OK; CI_EIO when it cannot be read
 * ("cannot read: <strerror>"); CI_EMANIFEST when it is too large, not
 * JSON ("malformed: line L column C: ...") or not an object; CI_ENOMEM.
 * *@out is NULL on failure.
 */
int ci_manifest_load(const char *path, json_t **out, struct stat *identity, struct ci_err *err);

/*
 * The canonical bytes of @doc: the object without its "signature" member,
 * serialised with JSON_COMPACT | JSON_SORT_KEYS. A malloc'd, NUL-terminated
 * string the caller frees, its length in *@len unless @len is NULL; NULL
 * if memory ran out or @doc is not an object.
 */
char *ci_manifest_canonical(const json_t *doc, size_t *len);

/*
 * The policy text of @doc, which must have passed ci_manifest_check_body():
 * its search path, then every distribution's files, then site_files.
 * CI_OK with a malloc'd, NUL-terminated *@policy (length *@len) the caller
 * frees; CI_EMANIFEST if it would exceed CI_MANIFEST_POLICY_MAX; CI_ENOMEM.
 * @path only names the document in @err. *@policy is NULL on failure.
 */
int ci_manifest_policy_text(const json_t *doc, const char *path, char **policy, size_t *len,
                            struct ci_err *err);

/*
 * The "wheels" of @doc, which must have passed ci_manifest_check_body(),
 * as *@n structs (manifest_cache.h) in document order in *@out (malloc'd,
 * the hashes decoded; NULL and 0 when it lists none); free them with
 * ci_manifest_wheels_free(). CI_OK, or CI_ENOMEM with *@out NULL.
 */
int ci_manifest_wheels(const json_t *doc, struct ci_manifest_wheel **out, size_t *n,
                       struct ci_err *err);
/* Frees the @n wheels at @w and @w itself, as ci_manifest_wheels() gave
 * them. NULL is fine. Cannot fail. */
void ci_manifest_wheels_free(struct ci_manifest_wheel *w, size_t n);

/* ---- verification (lib/manifest_verify.c) ---- */

/*
 * Checks every member of @doc except "signature" against the format:
 * members, types, names, paths, hashes, distributions named twice after
 * PEP 503 normalisation ("lists distribution X twice"), a path listed
 * twice in the whole document ("lists PATH twice"), the limits. A
 * "signature" member, if any, is not looked at. @path only names the
 * document in @err. CI_OK, CI_EMANIFEST or CI_ENOMEM.
 */
int ci_manifest_check_body(const json_t *doc, const char *path, struct ci_err *err);

/*
 * Verifies a parsed document as ci_manifest_verify() does, without
 * reading it; @path only names it in @err.
 */
int ci_manifest_verify_json(const json_t *doc, const char *path, const unsigned char pk[32],
                            char **policy, size_t *policy_len, unsigned char digest[32],
                            struct ci_err *err);

/*
 * Reads the manifest @path and checks, in this order: that it is JSON (at
 * most CI_MANIFEST_MAX_BYTES, no duplicate keys), that it carries a
 * signature ("not signed"), that the signature member is well formed
 * ("malformed signature: ..."), that it was made by @pk ("signed by an
 * unknown key (key id X; the configured key's id is Y)"), that it
 * verifies ("bad signature: changed after signing"), and then the whole
 * body as ci_manifest_check_body() does. On success, *@policy is the
 * policy text (manifest.h; malloc'd, NUL-terminated, the caller frees),
 * *@policy_len its length, @digest the SHA-256 of the canonical bytes,
 * and *@identity (unless NULL) as ci_manifest_load() gives it. Only a
 * regular file is read (a FIFO would block). CI_OK; CI_EMANIFEST (an
 * unreadable file too: "cannot read: ..."); CI_ENOMEM. *@policy is NULL
 * on failure.
 */
int ci_manifest_verify(const char *path, const unsigned char pk[32], char **policy,
                       size_t *policy_len, unsigned char digest[32], struct stat *identity,
                       struct ci_err *err);

/*
 * ci_manifest_verify(), and the wheels the manifest lists as
 * ci_manifest_wheels() gives them in *@wheels and *@n_wheels (NULL and 0
 * on failure, and when it lists none). What ci_manifest_cache_get() keeps.
 */
int ci_manifest_verify_with_wheels(const char *path, const unsigned char pk[32], char **policy,
                                   size_t *policy_len, unsigned char digest[32],
                                   struct stat *identity, struct ci_manifest_wheel **wheels,
                                   size_t *n_wheels, struct ci_err *err);

#endif /* CI_MANIFEST_DOC_H */
