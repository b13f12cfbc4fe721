/*
 * A signed package manifest's file list, as the worker, the host library
 * and codeinterp-manifest all need it (lib/manifest_files.c): the policy
 * text that carries it from the host to the worker, and the check of the
 * installed files against it. libc and libsodium only, so the worker
 * links it too; the signed JSON document is manifest_doc.h's, and
 * docs/manifest-format.md specifies both.
 *
 * The policy text (the worker's descriptor 4 when a manifest is set):
 *
 *   codeinterp-policy 1\n
 *   path <absolute directory>\n        the module search path, in order, 1 to 64
 *   file <64 hex> <absolute path>\n    each listed file and its SHA-256
 *   end\n
 *
 * A path runs to the end of its line; paths are normalised (no "//",
 * "/./", "/../" or trailing '/') and hold no byte below 0x20 nor 0x7f.
 */
#ifndef CI_MANIFEST_H
#define CI_MANIFEST_H

#include <stddef.h>

struct ci_err; /* err.h */

#define CI_MANIFEST_POLICY_MAGIC "codeinterp-policy 1\n"
#define CI_MANIFEST_MAX_PATHS 64u
#define CI_MANIFEST_MAX_FILES 1000000u
#define CI_MANIFEST_PATH_MAX 4095u
/* The most policy text the worker reads: every file at its longest. */
#define CI_MANIFEST_POLICY_MAX (64u * 1024 * 1024)

struct ci_manifest_file {
    char *path;
    unsigned char sha256[32];
};

struct ci_manifest_policy {
    char **search_path; /* in order */
    size_t n_search;
    struct ci_manifest_file *files; /* sorted by path (strcmp) */
    size_t n_files;
};

/* 1 if @path is absolute, normalised as above, at most CI_MANIFEST_PATH_MAX
 * bytes and free of control bytes. */
int ci_manifest_path_valid(const char *path);

/*
 * Parses policy text of @len bytes into @out (zeroed first). Returns 0, or
 * -1 with CI_EMANIFEST and a one-line reason in @err (lib/err.h): bad
 * syntax, a path listed twice, too many entries, out of memory. @out owns
 * copies; free with ci_manifest_policy_free() on success and failure
 * alike.
 */
int ci_manifest_policy_parse(const char *text, size_t len, struct ci_manifest_policy *out,
                             struct ci_err *err);
void ci_manifest_policy_free(struct ci_manifest_policy *p);

/* The listed file whose path is exactly @path, or NULL (binary search). */
const struct ci_manifest_file *ci_manifest_find(const struct ci_manifest_policy *p,
                                                const char *path);

/* SHA-256 of the file at @path, read to its end (symbolic links
 * followed), and its length in bytes in *@size unless @size is NULL. 0,
 * or -1 with errno set (ENOENT, EISDIR for a non-regular file, ...). */
int ci_manifest_sha256_file(const char *path, unsigned char out[32], unsigned long long *size);

enum ci_manifest_finding {
    CI_MANIFEST_CHANGED = 1, /* its SHA-256 differs from the listed one, or a
                              * directory between its search-path directory
                              * and it is a symbolic link (detail says which) */
    CI_MANIFEST_MISSING,     /* listed, but absent or not a regular file */
    CI_MANIFEST_EXTRA,       /* present but not listed, where only listed files may be */
    CI_MANIFEST_UNREADABLE,  /* listed, but could not be read (detail: strerror) */
    CI_MANIFEST_UNSAFE,      /* listed, but others could change it after the
                              * check: it (through any link) is writable by
                              * group or others, or a directory it lies in,
                              * beneath its search-path directory or where a
                              * link leads, is writable by others (unless
                              * sticky) */
};

/* Called once per finding, in path order within each kind of pass;
 * @detail is NULL or a short reason. Nonzero stops the check. */
typedef int (*ci_manifest_report)(void *ctx, enum ci_manifest_finding what, const char *path,
                                  const char *detail);

/*
 * Compares the installed files with @p: hashes every listed file, then
 * looks for extra files. A file is extra when it is a regular file or a
 * symbolic link that is not listed and
 *   - lies in a directory strictly beneath a search-path directory that
 *     holds at least one listed file (a listed package's own tree), or
 *   - is a *.pth file directly in a search-path directory, or
 *   - is __pycache__/<name>.*.pyc directly beneath a search-path
 *     directory whose <name>.py there is listed.
 * Other entries of a search-path directory are other, unlisted packages:
 * they are not extra (Landlock keeps them unreadable).
 * Returns the number of findings reported (0: the installed files are as
 * listed), or -1 if memory ran out.
 */
long ci_manifest_compare(const struct ci_manifest_policy *p, ci_manifest_report report,
                         void *ctx);

/* "changed", "missing", "extra", "unreadable" or "unsafe" (a static
 * string; "unknown" for any other value). Cannot fail. */
const char *ci_manifest_finding_name(enum ci_manifest_finding what);

#endif
