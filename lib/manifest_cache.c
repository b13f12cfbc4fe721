/*
 * The cache of the package manifests this process has verified
 * (ci_config_set_manifest), and what a session does with a verified one:
 * the sealed memfd its worker reads the policy text from, and the
 * message of a worker that refused the installed files.
 *
 * Verifying a manifest means reading up to 64 MiB of JSON, checking its
 * Ed25519 signature and every member (lib/manifest_verify.c): some milliseconds
 * for the default set, too slow for each session start. So a verified
 * manifest is kept, with the identity its file had (device, inode, size,
 * modification and change times) and the key it was checked against,
 * and a later start with the same path, the same key and a file that
 * stat(2) still finds the same reuses it. Any write to the file changes
 * its times, and a replaced file is another inode: either is verified
 * anew. The identity kept is that of the descriptor the verified bytes
 * were read from, so a file replaced between the stat(2) and the read
 * cannot leave one file's content under the other's identity.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "manifest_cache.h"
#include "manifest_doc.h"
#include "result.h"

/* Distinct manifests (or keys) kept at once; the least recently used goes. */
#define MAX_VERIFIED 8

struct verified {
    char *path; /* NULL: a free slot */
    unsigned char key[32];
    struct stat st;
    struct ci_manifest_verified *verified;
    unsigned long used;
};

static pthread_mutex_t verified_lock = PTHREAD_MUTEX_INITIALIZER;
static struct verified verified[MAX_VERIFIED];
static unsigned long verified_clock;

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Drops the cache's reference; the manifest goes with the last one. Called
 * with the lock. */
static void release(struct ci_manifest_verified *p)
{
    if (p && --p->refs == 0) {
        ci_manifest_wheels_free(p->wheels, p->n_wheels);
        free(p->text);
        free(p);
    }
}

static void slot_clear(struct verified *v)
{
    release(v->verified);
    free(v->path);
    memset(v, 0, sizeof *v);
}

/* The slot for @path, @key and a file that stat(2) finds as @st, or NULL.
 * Called with the lock. */
static struct verified *lookup(const char *path, const unsigned char key[32],
                               const struct stat *st)
{
    for (struct verified *v = verified; v < verified + MAX_VERIFIED; v++)
        if (v->path && !strcmp(v->path, path) && !memcmp(v->key, key, sizeof v->key) &&
            same_file(&v->st, st))
            return v;
    return NULL;
}

/* ci_manifest_cache_get(), its reason in @err. */
static int cache_get(const struct ci_config *cfg, struct ci_manifest_verified **out,
                     struct ci_err *err)
{
    unsigned char key[32];
    struct verified *v;
    struct ci_manifest_verified *p;
    struct stat st;
    char *path;
    int rc;

    *out = NULL;
    if (cfg->manifest_key_path) {
        if ((rc = ci_manifest_read_public_key(cfg->manifest_key_path, key, err)) != CI_OK)
            return rc;
    } else {
        memcpy(key, cfg->manifest_key, sizeof key);
    }
    if (stat(cfg->manifest, &st) == 0) {
        pthread_mutex_lock(&verified_lock);
        if ((v = lookup(cfg->manifest, key, &st)))
            goto found;
        pthread_mutex_unlock(&verified_lock);
    }
    /* Verified without the lock: other sessions' starts need not wait
     * for it. The cache keys it by the identity of the file it read
     * (not the one stat(2) found above, which may since have been
     * replaced). */
    if (!(p = calloc(1, sizeof *p)) || !(path = ci_strdup(cfg->manifest))) {
        free(p);
        return ci_manifest_fail(err, CI_ENOMEM, "manifest", cfg->manifest, "out of memory");
    }
    if ((rc = ci_manifest_verify_with_wheels(cfg->manifest, key, &p->text, &p->len, p->digest,
                                             &st, &p->wheels, &p->n_wheels, err)) != CI_OK) {
        free(p);
        free(path);
        return rc;
    }
    p->refs = 1;
    pthread_mutex_lock(&verified_lock);
    if ((v = lookup(cfg->manifest, key, &st))) {
        /* Another start verified the same file meanwhile. */
        release(p);
        free(path);
        goto found;
    }
    v = &verified[0];
    for (struct verified *w = verified; w < verified + MAX_VERIFIED; w++)
        if (!w->path || (v->path && w->used < v->used))
            v = w;
    slot_clear(v);
    v->path = path;
    v->verified = p;
    v->st = st;
    memcpy(v->key, key, sizeof key);
found:
    v->used = ++verified_clock;
    v->verified->refs++;
    *out = v->verified;
    pthread_mutex_unlock(&verified_lock);
    return CI_OK;
}

int ci_manifest_cache_get(const struct ci_config *cfg, struct ci_manifest_verified **out,
                          struct ci_err *err)
{
    return cache_get(cfg, out, err);
}

void ci_manifest_cache_put(struct ci_manifest_verified *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&verified_lock);
    release(p);
    pthread_mutex_unlock(&verified_lock);
}

int ci_manifest_policy_memfd(const struct ci_manifest_verified *p)
{
    int fd = memfd_create("codeinterp-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING), err;
    size_t done = 0;

    if (fd < 0)
        return -1;
    while (done < p->len) {
        ssize_t n = write(fd, p->text + done, p->len - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto fail;
        done += (size_t)n;
    }
    /* Sealed: nothing can change it between here and the worker's read. */
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
        lseek(fd, 0, SEEK_SET) != 0)
        goto fail;
    return fd;
fail:
    err = errno ? errno : EIO;
    close(fd);
    errno = err;
    return -1;
}

int ci_manifest_refusal(struct ci_err *err, const char *stderr_text)
{
    static const char prefix[] = "codeinterp-worker: ";
    const char *line = stderr_text;

    if (!line || !*line)
        return ci_err_set(err, CI_EMANIFEST, "manifest: the worker refused the installed files");
    if (!strncmp(line, prefix, sizeof prefix - 1))
        line += sizeof prefix - 1;
    return ci_err_set(err, CI_EMANIFEST, "%.*s", (int)strcspn(line, "\n"), line);
}
