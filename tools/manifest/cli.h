/*
 * codeinterp-manifest: shared between its sources. Exit codes: 0 success,
 * 1 findings or a failed verification, 2 a usage or I/O error.
 */
#ifndef CI_MANIFEST_CLI_H
#define CI_MANIFEST_CLI_H

#include <stdio.h>

#include <jansson.h>

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

#endif
