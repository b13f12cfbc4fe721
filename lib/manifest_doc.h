/*
 * The signed package manifest as a document (lib/manifest.c): key files,
 * reading and validating the JSON, its canonical bytes, signing and
 * verifying them, and the policy text made from a verified document.
 * Host library and codeinterp-manifest only (jansson and libsodium); the
 * worker sees the policy text alone (manifest.h).
 *
 * The format is /tmp/notes/manifest-spec.md's, in short:
 *   {"format": "codeinterp-manifest", "version": 1, "python": "3.11.2",
 *    "search_path": [dir, ...],
 *    "distributions": [{"name", "version", "requested", "requires",
 *                       "pulled_in_by", "files": {path: sha256 hex}}, ...],
 *    "site_files": {path: sha256 hex},
 *    "signature": {"algorithm": "ed25519", "key_id": 16 hex, "value": base64}}
 * What is signed is the document without "signature", serialised with
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS) (RFC 8785 for what a valid
 * manifest may hold), so the signature never depends on formatting.
 *
 * Every function that fails writes a one-line reason to @msg (at most
 * @msglen bytes, NUL-terminated): for a document it starts
 * "manifest <path>: ", for a key file "public key <path>: " or
 * "secret key <path>: ". Every function calls sodium_init() itself.
 */
#ifndef CI_MANIFEST_DOC_H
#define CI_MANIFEST_DOC_H

#include <stddef.h>

#include <jansson.h>
#include <sys/stat.h>

#define CI_MANIFEST_FORMAT "codeinterp-manifest"
#define CI_MANIFEST_VERSION 1
#define CI_MANIFEST_MAX_BYTES (64u * 1024 * 1024) /* a manifest document */
#define CI_MANIFEST_MAX_DISTS 10000u
#define CI_MANIFEST_NAME_MAX 200u /* a distribution's name */
#define CI_MANIFEST_TEXT_MAX 200u /* a version string */
#define CI_MANIFEST_PUBLIC_PREFIX "codeinterp-manifest-public-key "
#define CI_MANIFEST_SECRET_PREFIX "codeinterp-manifest-secret-key "
#define CI_MANIFEST_KEY_ID_LEN 16 /* hex digits, without the NUL */

/*
 * Reads the public key file @path ("codeinterp-manifest-public-key
 * <base64 of 32 bytes>\n") into @pk. CI_OK; CI_EMANIFEST when it cannot
 * be read or is not such a file (@msg names the file and the fault);
 * CI_ENOMEM.
 */
int ci_manifest_read_public_key(const char *path, unsigned char pk[32], char *msg,
                                size_t msglen);

/*
 * Reads the secret key file @path (as above, "codeinterp-manifest-secret-
 * key", 64 bytes) into @sk, checking that its public half belongs to its
 * seed. CI_OK; CI_EIO when it cannot be read; CI_EMANIFEST when it is not
 * such a file; CI_ENOMEM. The caller wipes @sk (sodium_memzero).
 */
int ci_manifest_read_secret_key(const char *path, unsigned char sk[64], char *msg,
                                size_t msglen);

/*
 * Makes a new key pair and writes <@name>.key (mode 0600) and <@name>.pub
 * (mode 0644), each created with O_EXCL, so an existing file is never
 * replaced; when the second cannot be made the first is removed again.
 * The modes are set with fchmod(2), whatever the umask. CI_OK, CI_EIO
 * (@msg names the file: "exists" for EEXIST), or CI_ENOMEM.
 */
int ci_manifest_keygen(const char *name, char *msg, size_t msglen);

/* The key id of @pk: lowercase hex of the first 8 bytes of its SHA-256,
 * NUL-terminated in @out. Cannot fail. */
void ci_manifest_key_id(const unsigned char pk[32], char out[CI_MANIFEST_KEY_ID_LEN + 1]);

/*
 * Reads and parses the document @path (at most CI_MANIFEST_MAX_BYTES, JSON with
 * duplicate keys refused) into *@out, which the caller releases with
 * json_decref(). It checks only that the text is JSON: see
 * ci_manifest_check_body() and ci_manifest_verify_json(). CI_OK; CI_EIO
 * when it cannot be read ("cannot read: <strerror>"); CI_EMANIFEST when it
 * is too large, not JSON ("malformed: line L column C: ...") or not an
 * object; CI_ENOMEM.
 */
int ci_manifest_load(const char *path, json_t **out, char *msg, size_t msglen);

/*
 * Checks every member of @doc except "signature" against the format:
 * members, types, names, paths, hashes, distributions named twice after
 * PEP 503 normalisation ("lists distribution X twice"), a path listed
 * twice in the whole document ("lists PATH twice"), the limits. A
 * "signature" member, if any, is not looked at. @path only names the
 * document in @msg. CI_OK, CI_EMANIFEST or CI_ENOMEM.
 */
int ci_manifest_check_body(const json_t *doc, const char *path, char *msg, size_t msglen);

/*
 * The canonical bytes of @doc: the object without its "signature" member,
 * serialised with JSON_COMPACT | JSON_SORT_KEYS. A malloc'd, NUL-terminated
 * string the caller frees, its length in *@len; NULL if memory ran out or
 * @doc is not an object.
 */
char *ci_manifest_canonical(const json_t *doc, size_t *len);

/*
 * Signs @doc in place with the libsodium secret key @sk: replaces any
 * "signature" member with {"algorithm": "ed25519", "key_id", "value"}
 * over the canonical bytes. It does not check the body (the command does,
 * with ci_manifest_check_body(), before it signs). CI_OK, CI_EINVAL (not
 * an object) or CI_ENOMEM.
 */
int ci_manifest_sign(json_t *doc, const unsigned char sk[64], char *msg, size_t msglen);

/*
 * Verifies a parsed document as ci_manifest_verify() does, without
 * reading it; @path only names it in @msg.
 */
int ci_manifest_verify_json(const json_t *doc, const char *path, const unsigned char pk[32],
                            char **policy, size_t *policy_len, unsigned char digest[32],
                            char *msg, size_t msglen);

/*
 * Reads the manifest @path and checks, in this order: that it is JSON (at
 * most CI_MANIFEST_MAX_BYTES, no duplicate keys), that it carries a signature
 * ("not signed"), that the signature member is well formed ("malformed
 * signature: ..."), that it was made by @pk ("signed by an unknown key
 * (key id X; the configured key's id is Y)"), that it verifies ("bad
 * signature: changed after signing"), and then the whole body as
 * ci_manifest_check_body() does. On success, *@policy is the policy text
 * (manifest.h; malloc'd, NUL-terminated, the caller frees), *@policy_len
 * its length, @digest the SHA-256 of the canonical bytes, and
 * *@identity (unless NULL) the stat(2) of the file that was read, taken
 * from its descriptor once read: what a cache keyed by it holds is what
 * was verified. Only a regular file is read (a FIFO would block). CI_OK;
 * CI_EMANIFEST (an unreadable file too: "cannot read: ..."); CI_ENOMEM.
 * *@policy is NULL on failure.
 */
int ci_manifest_verify(const char *path, const unsigned char pk[32], char **policy,
                       size_t *policy_len, unsigned char digest[32], struct stat *identity,
                       char *msg, size_t msglen);

/*
 * The policy text of @doc, which must have passed ci_manifest_check_body():
 * its search path, then every distribution's files, then site_files.
 * CI_OK with a malloc'd, NUL-terminated *@policy (length *@len); CI_EMANIFEST
 * if it would exceed CI_MANIFEST_POLICY_MAX; CI_ENOMEM.
 */
int ci_manifest_policy_text(const json_t *doc, const char *path, char **policy, size_t *len,
                       char *msg, size_t msglen);

/*
 * The PEP 503 normalisation of @name into @out (lower case, each run of
 * '-', '_' and '.' as one '-'); @out holds at least strlen(@name) + 1
 * bytes. Cannot fail.
 */
void ci_manifest_normalise_name(const char *name, char *out);

/* 1 if @name is 1..CI_MANIFEST_NAME_MAX of [A-Za-z0-9._-], else 0. */
int ci_manifest_name_valid(const char *name);

#endif /* CI_MANIFEST_DOC_H */
