/*
 * The snapshot format (docs/snapshot-format.md): its writer, and the
 * reader that takes a snapshot's bytes as hostile (snapshot_format.c),
 * which the fuzz target drives too.
 */
#ifndef CI_SNAPSHOT_H
#define CI_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#define CI_SNAPSHOT_MAGIC "\x89" "CISNAP\n"
#define CI_SNAPSHOT_MAGIC_LEN 8
#define CI_SNAPSHOT_VERSION 1u
#define CI_SNAPSHOT_HASH_LEN 32 /* SHA-256 of everything before it, at the end */

enum ci_snapshot_section {
    CI_SNAP_PACKAGES = 1, /* the package set: UTF-8 lines (proto.h's PACKAGES) */
    CI_SNAP_COUNT = 2,    /* u32: the execution count */
    CI_SNAP_STATE = 3,    /* the pickled interpreter state: the host never reads it */
    CI_SNAP_LEFT_OUT = 4, /* what was not carried: UTF-8 "name: reason" lines; last */
    CI_SNAP_DIR = 5,      /* u32 mode, then the directory's path */
    CI_SNAP_FILE = 6,     /* u32 mode, u32 path length, the path, the contents */
};
/* A section's header: u32 type, u32 0, u64 length. */
#define CI_SNAP_HEADER_LEN 16
/* The longest path of a DIR or FILE, and the deepest directory. */
#define CI_SNAP_PATH_MAX 4095
#define CI_SNAP_DEPTH_MAX 64

/* A snapshot's parts, pointing into its bytes. */
struct ci_snapshot_view {
    const char *packages;
    size_t packages_len;
    const char *left_out; /* NULL if none */
    size_t left_out_len;
    const unsigned char *state;
    size_t state_len;
    uint32_t count;
    const unsigned char *entries; /* the DIR and FILE sections */
    size_t entries_len;
    size_t entry_count;
    unsigned long long file_bytes; /* the FILE sections' contents */
};

/* One DIR or FILE section; path is not NUL-terminated. */
struct ci_snapshot_entry {
    int is_dir;
    uint32_t mode; /* 0600 or 0700 for a file, 0700 for a directory */
    const char *path;
    size_t path_len;
    const unsigned char *data;
    size_t len;
};

/* Checks all of @data (@len bytes) as a snapshot: magic, version, hash,
 * each section's type, order, length and content (paths relative, no
 * empty, "." or ".." component, no NUL, components of at most 255 bytes
 * and at most CI_SNAP_DEPTH_MAX deep). CI_OK with @v filled, or CI_EINVAL
 * with @why (a static sentence). Reads nothing outside @data. */
int ci_snapshot_parse(const void *data, size_t len, struct ci_snapshot_view *v,
                      const char **why);
/* The entry at *@off of @v's entries (start with 0), moving *@off past
 * it: 1, or 0 after the last. Only for a view ci_snapshot_parse filled. */
int ci_snapshot_next(const struct ci_snapshot_view *v, size_t *off,
                     struct ci_snapshot_entry *e);

/* A snapshot being written: a growing buffer that refuses to pass @max. */
struct ci_snapshot_writer {
    unsigned char *p;
    size_t len, cap, max;
};
/* Writes the magic and the version. CI_OK, CI_ENOMEM or CI_ETOOBIG. */
int ci_snapshot_begin(struct ci_snapshot_writer *w, size_t max);
/* Begins a snapshot in @buf, a malloc'ed block it takes over whatever
 * the outcome, whose @state_len bytes at @state_off are the state (a
 * SNAPSHOT run's RESULT frame): moves them in place, after the magic, the
 * version, the PACKAGES section of @plen bytes at @packages and the COUNT
 * section of @count, so that the state is never held twice. CI_OK,
 * CI_ENOMEM or CI_ETOOBIG (over @max; @buf then freed). */
int ci_snapshot_begin_around(struct ci_snapshot_writer *w, unsigned char *buf, size_t state_off,
                             size_t state_len, const char *packages, size_t plen,
                             uint32_t count, size_t max);
/* Appends a section of @type whose contents are @a then @b. */
int ci_snapshot_add(struct ci_snapshot_writer *w, uint32_t type, const void *a, size_t alen,
                    const void *b, size_t blen);
/* Appends a DIR section for the path @path (@plen bytes). */
int ci_snapshot_add_dir(struct ci_snapshot_writer *w, const char *path, size_t plen);
/* Reserves a FILE section of the path @path (@plen bytes), mode 0700 if
 * @executable else 0600, and @size bytes of contents: *@data receives
 * where they go (valid until the next call), *@at the section's offset
 * for ci_snapshot_shrink. */
int ci_snapshot_reserve_file(struct ci_snapshot_writer *w, const char *path, size_t plen,
                             int executable, size_t size, unsigned char **data, size_t *at);
/* Takes back the last @unused bytes of the last section, which is at @at. */
void ci_snapshot_shrink(struct ci_snapshot_writer *w, size_t at, size_t unused);
/* Appends the hash; the bytes are then w->p, w->len, the caller's. */
int ci_snapshot_end(struct ci_snapshot_writer *w);

/* 1 if @p (@n bytes, not NUL-terminated) is a path a DIR or FILE may
 * name, with its depth in *@depth. */
int ci_snapshot_path_valid(const char *p, size_t n, unsigned *depth);

#endif /* CI_SNAPSHOT_H */
