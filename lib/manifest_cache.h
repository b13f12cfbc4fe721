/*
 * A verified package manifest, shared by the sessions and the zygote
 * that use it (manifest_cache.c). The policy text (lib/manifest.h) is
 * what a worker is given on its descriptor 4.
 */
#ifndef CI_MANIFEST_CACHE_H
#define CI_MANIFEST_CACHE_H

#include <stddef.h>

#include "config.h"
#include "err.h"

/* A wheel the manifest's "wheels" member lists (docs/manifest-format.md). */
struct ci_manifest_wheel {
    char *file;    /* its file name in the wheelhouse directory */
    unsigned char sha256[32];
    char *name;    /* METADATA's Name */
    char *version; /* METADATA's Version */
    char **requires; /* "NAME" or "NAME SPECIFIERS", markers already evaluated */
    size_t n_requires;
};

struct ci_manifest_verified {
    unsigned char digest[32]; /* SHA-256 of the manifest's canonical bytes */
    char *text;  /* the policy text (manifest.h) */
    size_t len;
    struct ci_manifest_wheel *wheels; /* in the document's order; NULL if none */
    size_t n_wheels;
    int refs; /* under manifest_cache.c's lock */
};

/* The verified manifest @cfg names, verifying it unless the file and key
 * are those of one verified before. CI_OK and a reference in *@out (put it
 * back with ci_manifest_cache_put), CI_EMANIFEST or CI_ENOMEM with @err. */
int ci_manifest_cache_get(const struct ci_config *cfg, struct ci_manifest_verified **out,
                          struct ci_err *err);
void ci_manifest_cache_put(struct ci_manifest_verified *p);
/* A sealed memfd holding @p's text at offset 0, close-on-exec; -1 with errno. */
int ci_manifest_policy_memfd(const struct ci_manifest_verified *p);
/* Records in @err, with CI_EMANIFEST (which it returns), why a worker or
 * zygote exited with CI_WORKER_EXIT_MANIFEST: the first line of what it
 * wrote on stderr (@stderr_text, NULL if nothing). */
int ci_manifest_refusal(struct ci_err *err, const char *stderr_text);

#endif /* CI_MANIFEST_CACHE_H */
