/*
 * codeinterp-manifest: shared between its sources. Exit codes: 0 success,
 * 1 findings or a failed verification, 2 a usage or I/O error.
 */
#ifndef CIM_CLI_H
#define CIM_CLI_H

#include <stdio.h>

#include <jansson.h>

#define CIM_OK 0
#define CIM_FINDINGS 1
#define CIM_ERROR 2

#define CIM_DEFAULT_PYTHON "/usr/bin/python3.11"

/* "codeinterp-manifest: " + the formatted message + "\n" on stderr. */
void cim_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error of @cmd ("" for none): the message, then where to get
 * help. Returns CIM_ERROR. */
int cim_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes @doc as indented JSON with sorted keys to @path, through a
 * temporary file in the same directory renamed over it, with mode @mode;
 * "-" is standard output. 0, or -1 after saying why. */
int cim_write_json(const json_t *doc, const char *path, unsigned mode);

/* Seconds on the monotonic clock. */
double cim_now(void);

int cim_create(int argc, char **argv);

#endif
