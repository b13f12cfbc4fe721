/*
 * codeinterp-manifest (tools/manifest/): what its sources share, the
 * messages, the JSON writer and the signer's key and signing functions
 * (keys.c), none of which the library holds. Exit codes: 0 success,
 * 1 findings or a failed verification, 2 a usage or I/O error.
 */
#ifndef CI_MANIFEST_CLI_H
#define CI_MANIFEST_CLI_H

#include <stdio.h>

#include <jansson.h>

#include "err.h"

#define CI_MANIFEST_CLI_OK 0
#define CI_MANIFEST_CLI_FINDINGS 1
#define CI_MANIFEST_CLI_ERROR 2

#define CI_MANIFEST_CLI_DEFAULT_PYTHON "/usr/bin/python3.11"

/* "codeinterp-manifest: " + the formatted message + "\n" on stderr. */
void ci_manifest_cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of @cmd ("" for none): the message, then where to get
 * help. Returns CI_MANIFEST_CLI_ERROR. */
int ci_manifest_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes @doc as indented JSON with sorted keys to @path, through a
 * temporary file in the same directory renamed over it, with mode @mode;
 * "-" is standard output. 0, or -1 after saying why. */
int ci_manifest_cli_write_json(const json_t *doc, const char *path, unsigned mode);

/* Seconds on the monotonic clock. */
double ci_manifest_cli_now(void);

int ci_manifest_cli_create(int argc, char **argv);

/* ---- keys.c: what only the signer needs ---- */

/*
 * Reads the secret key file @path ("codeinterp-manifest-secret-key
 * <base64 of 64 bytes>\n") into @sk, checking that its public half
 * belongs to its seed. CI_OK; CI_EIO when it cannot be read; CI_EMANIFEST
 * when it is not such a file; CI_ENOMEM; the reason in @err. The caller
 * wipes @sk (sodium_memzero); it is wiped already on failure.
 */
int ci_manifest_read_secret_key(const char *path, unsigned char sk[64], struct ci_err *err);

/*
 * Makes a new key pair and writes <@name>.key (mode 0600) and <@name>.pub
 * (mode 0644), each created with O_EXCL, so an existing file is never
 * replaced; when the second cannot be made the first is removed again.
 * The modes are set with fchmod(2), whatever the umask. CI_OK, CI_EIO
 * (@err names the file: "exists" for EEXIST), or CI_ENOMEM.
 */
int ci_manifest_keygen(const char *name, struct ci_err *err);

/*
 * Signs @doc in place with the libsodium secret key @sk: replaces any
 * "signature" member with {"algorithm": "ed25519", "key_id", "value"}
 * over the canonical bytes (ci_manifest_canonical). It does not check
 * the body (the command does, with ci_manifest_check_body(), before it
 * signs). CI_OK, CI_EINVAL (not an object) or CI_ENOMEM.
 */
int ci_manifest_sign(json_t *doc, const unsigned char sk[64], struct ci_err *err);

#endif
