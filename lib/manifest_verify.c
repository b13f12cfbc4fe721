/*
 * Verifying a signed package manifest, host side: the signature (Ed25519
 * over the canonical bytes, by the configured key), then every member of
 * the body, one function per member, in the order docs/manifest-format.md
 * lists what each refuses. manifest_doc.h states each exported
 * function's contract.
 *
 * The signature is checked before anything else in the document is
 * trusted, then the whole body: a manifest the host accepts is one an
 * operator signed and that the format allows, never "mostly valid".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "codeinterp.h"
#include "manifest.h"
#include "manifest_doc.h"

#define SIG_BYTES crypto_sign_BYTES /* 64 */

/* ---- the body ---- */

/* A path listed somewhere in the document, for the duplicate check. */
struct path_ref {
    const char *path;
};

/* A distribution's name, normalised (PEP 503), and its position. */
struct name_ref {
    char *norm;
    const char *name;
    size_t index;
};

/* What the member checks of one document share. */
struct body {
    const json_t *doc;
    const char *path; /* names the document in messages */
    struct ci_err *err;
    const json_t *dists, *site;
    struct path_ref *refs; /* every listed path (room for all was counted) */
    size_t nrefs;
    struct name_ref *names; /* every valid distribution's */
    size_t nnames;
};

static int cmp_path_ref(const void *a, const void *b)
{
    return strcmp(((const struct path_ref *)a)->path, ((const struct path_ref *)b)->path);
}

static int cmp_name_ref(const void *a, const void *b)
{
    const struct name_ref *x = a, *y = b;
    int c = strcmp(x->norm, y->norm);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Only @allowed members (NULL-terminated), and each of the first
 * @required of them present. CI_OK or CI_EMANIFEST naming @where. */
static int check_members(const struct body *b, const json_t *obj, const char *const allowed[],
                         size_t required, const char *where)
{
    const char *key;
    json_t *v;
    char s[CI_MANIFEST_SHOWN_MAX];
    json_object_foreach((json_t *)obj, key, v) {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], key))
            i++;
        if (!allowed[i])
            return ci_manifest_refuse(b->err, b->path, "malformed: unknown member \"%s\" in %s",
                                      ci_manifest_shown(key, s, sizeof s), where);
    }
    for (size_t i = 0; i < required; i++)
        if (!json_object_get(obj, allowed[i]))
            return ci_manifest_refuse(b->err, b->path, "malformed: %s has no member \"%s\"",
                                      where, allowed[i]);
    return CI_OK;
}

/* The start of the check of @obj, entry @i of the array @list: an object
 * with only @allowed members and the first @required of them, named in
 * @where (@size bytes) "LIST[I] (KEY)" when its @key member is a string
 * that @valid accepts (*@named is then 1), else "LIST[I]". */
static int check_entry(const struct body *b, const json_t *obj, const char *list, size_t i,
                       const char *key, int (*valid)(const char *),
                       const char *const allowed[], size_t required, char *where, size_t size,
                       int *named)
{
    const json_t *k = json_object_get(obj, key);

    snprintf(where, size, "%s[%zu]", list, i);
    if (!json_is_object(obj))
        return ci_manifest_refuse(b->err, b->path, "malformed: %s is not an object", where);
    if ((*named = json_is_string(k) && valid(json_string_value(k))))
        snprintf(where, size, "%s[%zu] (%s)", list, i, json_string_value(k));
    return check_members(b, obj, allowed, required, where);
}

/* "format" and "version": this format, this version. */
static int check_format(const struct body *b)
{
    json_t *v = json_object_get(b->doc, "format");
    if (!json_is_string(v) || strcmp(json_string_value(v), CI_MANIFEST_FORMAT))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"format\" is not \"%s\"",
                                  CI_MANIFEST_FORMAT);
    v = json_object_get(b->doc, "version");
    if (!json_is_integer(v))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"version\" is not an integer");
    if (json_integer_value(v) != CI_MANIFEST_VERSION)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: format version %lld; this codeinterp reads version %d",
                                  (long long)json_integer_value(v), CI_MANIFEST_VERSION);
    return CI_OK;
}

/* "python": a version string. */
static int check_python(const struct body *b)
{
    json_t *v = json_object_get(b->doc, "python");
    if (!json_is_string(v) || !ci_manifest_text_valid(json_string_value(v), CI_MANIFEST_TEXT_MAX))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: \"python\" is not a version string (1 to %u bytes, "
                                  "no control characters)",
                                  CI_MANIFEST_TEXT_MAX);
    return CI_OK;
}

/* "search_path": 1 to CI_MANIFEST_MAX_PATHS valid directories, none twice. */
static int check_search_path(const struct body *b)
{
    json_t *sp = json_object_get(b->doc, "search_path");
    char s[CI_MANIFEST_SHOWN_MAX];
    if (!json_is_array(sp) || json_array_size(sp) < 1 ||
        json_array_size(sp) > CI_MANIFEST_MAX_PATHS)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: \"search_path\" is not an array of 1 to %u "
                                  "directories",
                                  CI_MANIFEST_MAX_PATHS);
    for (size_t i = 0; i < json_array_size(sp); i++) {
        json_t *e = json_array_get(sp, i);
        if (!json_is_string(e) || !ci_manifest_path_valid(json_string_value(e)))
            return ci_manifest_refuse(b->err, b->path,
                                      "malformed: search_path[%zu] is not an absolute, normalised "
                                      "path of at most %u bytes without control characters",
                                      i, CI_MANIFEST_PATH_MAX);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(json_string_value(json_array_get(sp, j)), json_string_value(e)))
                return ci_manifest_refuse(b->err, b->path,
                                          "lists search path directory %s twice",
                                          ci_manifest_shown(json_string_value(e), s, sizeof s));
    }
    return CI_OK;
}

/* "distributions" an array, "site_files" an object, within the limits;
 * then room for the later checks' lists. */
static int check_sizes(struct body *b)
{
    b->dists = json_object_get(b->doc, "distributions");
    b->site = json_object_get(b->doc, "site_files");
    if (!json_is_array(b->dists))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: \"distributions\" is not an array");
    if (!json_is_object(b->site))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"site_files\" is not an object");
    size_t nd = json_array_size(b->dists);
    if (nd > CI_MANIFEST_MAX_DISTS)
        return ci_manifest_refuse(b->err, b->path, "malformed: more than %u distributions",
                                  CI_MANIFEST_MAX_DISTS);
    /* Count the files first: the limit, and room for the duplicate check. */
    size_t nfiles = json_object_size(b->site);
    for (size_t i = 0; i < nd; i++) {
        json_t *f = json_object_get(json_array_get(b->dists, i), "files");
        if (json_is_object(f))
            nfiles += json_object_size(f);
    }
    if (nfiles > CI_MANIFEST_MAX_FILES)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: lists %zu files; at most %u are allowed", nfiles,
                                  CI_MANIFEST_MAX_FILES);
    b->refs = malloc((nfiles ? nfiles : 1) * sizeof *b->refs);
    b->names = calloc(nd ? nd : 1, sizeof *b->names);
    if (!b->refs || !b->names)
        return ci_err_set(b->err, CI_ENOMEM, NULL);
    return CI_OK;
}

/* The files object @files of @where: paths and hashes. Appends each path
 * to the body's refs. */
static int check_files(struct body *b, const json_t *files, const char *where)
{
    const char *key;
    json_t *v;
    char s[CI_MANIFEST_SHOWN_MAX];
    if (!json_is_object(files))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"files\" of %s is not an object",
                                  where);
    json_object_foreach((json_t *)files, key, v) {
        if (!ci_manifest_path_valid(key))
            return ci_manifest_refuse(b->err, b->path,
                                      "malformed: %s lists \"%s\", which is not an absolute, "
                                      "normalised path of at most %u bytes without control "
                                      "characters",
                                      where, ci_manifest_shown(key, s, sizeof s),
                                      CI_MANIFEST_PATH_MAX);
        if (!json_is_string(v) || !ci_manifest_hex_valid(json_string_value(v), 64))
            return ci_manifest_refuse(b->err, b->path,
                                      "malformed: the hash of %s in %s is not 64 lowercase hex "
                                      "digits",
                                      ci_manifest_shown(key, s, sizeof s), where);
        b->refs[b->nrefs++].path = key;
    }
    return CI_OK;
}

/* A requires or pulled_in_by list of @where: distribution names. */
static int check_name_list(const struct body *b, const json_t *list, const char *member,
                           const char *where)
{
    char s[CI_MANIFEST_SHOWN_MAX];
    if (!json_is_array(list))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"%s\" of %s is not an array",
                                  member, where);
    size_t n = json_array_size(list);
    if (n > CI_MANIFEST_MAX_DISTS)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: \"%s\" of %s has more than %u names", member, where,
                                  CI_MANIFEST_MAX_DISTS);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i);
        if (!json_is_string(e) || !ci_manifest_name_valid(json_string_value(e)))
            return ci_manifest_refuse(
                b->err, b->path,
                "malformed: \"%s\" of %s holds %s%s%s, which is not a distribution name", member,
                where, json_is_string(e) ? "\"" : "a non-string",
                json_is_string(e) ? ci_manifest_shown(json_string_value(e), s, sizeof s) : "",
                json_is_string(e) ? "\"" : "");
    }
    return CI_OK;
}

/* Distribution @i: its members, name, version, requested, requires,
 * pulled_in_by and files; its name joins the body's names. */
static int check_distribution(struct body *b, size_t i)
{
    static const char *const members[] = {"name",         "version", "requested", "requires",
                                          "pulled_in_by", "files",   NULL};
    json_t *d = json_array_get(b->dists, i);
    char where[260], s[CI_MANIFEST_SHOWN_MAX];
    int rc, named;

    if ((rc = check_entry(b, d, "distributions", i, "name", ci_manifest_name_valid, members, 6,
                          where, sizeof where, &named)) != CI_OK)
        return rc;
    json_t *name = json_object_get(d, "name");
    if (!named)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: the name of %s is not 1 to %u of [A-Za-z0-9._-]%s%s%s",
                                  where, CI_MANIFEST_NAME_MAX, json_is_string(name) ? " (\"" : "",
                                  json_is_string(name)
                                      ? ci_manifest_shown(json_string_value(name), s, sizeof s)
                                      : "",
                                  json_is_string(name) ? "\")" : "");
    json_t *ver = json_object_get(d, "version");
    if (!json_is_string(ver) ||
        !ci_manifest_text_valid(json_string_value(ver), CI_MANIFEST_TEXT_MAX))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: the version of %s is not a string of 1 to %u bytes "
                                  "without control characters",
                                  where, CI_MANIFEST_TEXT_MAX);
    if (!json_is_boolean(json_object_get(d, "requested")))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: \"requested\" of %s is not true or false", where);
    if ((rc = check_name_list(b, json_object_get(d, "requires"), "requires", where)) != CI_OK ||
        (rc = check_name_list(b, json_object_get(d, "pulled_in_by"), "pulled_in_by", where)) !=
            CI_OK ||
        (rc = check_files(b, json_object_get(d, "files"), where)) != CI_OK)
        return rc;
    struct name_ref *n = &b->names[b->nnames];
    n->name = json_string_value(name);
    n->index = i;
    if (!(n->norm = malloc(strlen(n->name) + 1)))
        return ci_err_set(b->err, CI_ENOMEM, NULL);
    ci_manifest_normalise_name(n->name, n->norm);
    b->nnames++;
    return CI_OK;
}

/* No distribution twice after normalisation: the later one is named.
 * Leaves the body's names sorted. */
static int check_unique_names(struct body *b)
{
    size_t dup_index = (size_t)-1;
    const char *dup_name = NULL;
    if (b->nnames > 1)
        qsort(b->names, b->nnames, sizeof *b->names, cmp_name_ref);
    for (size_t i = 1; i < b->nnames; i++) {
        if (!strcmp(b->names[i].norm, b->names[i - 1].norm) && b->names[i].index < dup_index) {
            dup_index = b->names[i].index;
            dup_name = b->names[i].name;
        }
    }
    if (dup_name)
        return ci_manifest_refuse(b->err, b->path, "lists distribution %s twice", dup_name);
    return CI_OK;
}

/* The position of @name (already valid) among the sorted names, or -1. */
static long name_position(const struct body *b, const char *name)
{
    char norm[CI_MANIFEST_NAME_MAX + 1];
    ci_manifest_normalise_name(name, norm);
    size_t lo = 0, hi = b->nnames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(norm, b->names[mid].norm);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

/* requires and pulled_in_by name listed distributions, each once per
 * list: seen[k] is the number of the list that last named names[k]. */
static int check_dependencies(const struct body *b)
{
    static const char *const lists[] = {"requires", "pulled_in_by"};
    size_t *seen = calloc(b->nnames ? b->nnames : 1, sizeof *seen), list_no = 0;
    int rc = CI_OK;
    if (!seen)
        return ci_err_set(b->err, CI_ENOMEM, NULL);
    for (size_t i = 0; i < json_array_size(b->dists) && rc == CI_OK; i++) {
        json_t *d = json_array_get(b->dists, i);
        const char *dn = json_string_value(json_object_get(d, "name"));
        for (int l = 0; l < 2 && rc == CI_OK; l++) {
            json_t *list = json_object_get(d, lists[l]);
            list_no++;
            for (size_t j = 0; j < json_array_size(list) && rc == CI_OK; j++) {
                const char *n = json_string_value(json_array_get(list, j));
                long k = name_position(b, n);
                if (k < 0)
                    rc = ci_manifest_refuse(b->err, b->path,
                                            "malformed: \"%s\" of distribution %s names %s, "
                                            "which is not listed",
                                            lists[l], dn, n);
                else if (seen[k] == list_no)
                    rc = ci_manifest_refuse(b->err, b->path,
                                            "malformed: \"%s\" of distribution %s names %s twice",
                                            lists[l], dn, n);
                else
                    seen[k] = list_no;
            }
        }
    }
    free(seen);
    return rc;
}

/* No path listed twice in the whole document. */
static int check_unique_paths(struct body *b)
{
    char s[CI_MANIFEST_SHOWN_MAX];
    if (b->nrefs > 1)
        qsort(b->refs, b->nrefs, sizeof *b->refs, cmp_path_ref);
    for (size_t i = 1; i < b->nrefs; i++)
        if (!strcmp(b->refs[i].path, b->refs[i - 1].path))
            return ci_manifest_refuse(b->err, b->path, "lists %s twice",
                                      ci_manifest_shown(b->refs[i].path, s, sizeof s));
    return CI_OK;
}

/* " (\"S\")" for the string @v as a message shows it, "" for a non-string. */
static const char *shown_value(const json_t *v, char *buf, size_t n)
{
    char s[CI_MANIFEST_SHOWN_MAX];
    if (!json_is_string(v))
        return "";
    snprintf(buf, n, " (\"%s\")", ci_manifest_shown(json_string_value(v), s, sizeof s));
    return buf;
}

/* The requires list of wheel @where: at most CI_MANIFEST_MAX_REQUIRES
 * strings, each 1 to CI_MANIFEST_REQUIRE_MAX bytes of text. */
static int check_requirements(const struct body *b, const json_t *req, const char *where)
{
    char s[CI_MANIFEST_SHOWN_MAX + 8];
    if (!json_is_array(req))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"requires\" of %s is not an array",
                                  where);
    if (json_array_size(req) > CI_MANIFEST_MAX_REQUIRES)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: \"requires\" of %s has more than %u requirements",
                                  where, CI_MANIFEST_MAX_REQUIRES);
    for (size_t j = 0; j < json_array_size(req); j++) {
        const json_t *e = json_array_get(req, j);
        if (!json_is_string(e) ||
            !ci_manifest_text_valid(json_string_value(e), CI_MANIFEST_REQUIRE_MAX))
            return ci_manifest_refuse(b->err, b->path,
                                      "malformed: requires[%zu] of %s%s is not a requirement (1 "
                                      "to %u bytes, no control characters)",
                                      j, where, shown_value(e, s, sizeof s),
                                      CI_MANIFEST_REQUIRE_MAX);
    }
    return CI_OK;
}

/* Wheel @i of @wheels: exactly its members, each valid. Its file is
 * @files[@i]; @keys[@i] has its key (the normalised name, ' ', the
 * version: a name has no space) as norm and its file as name. */
static int check_wheel(const struct body *b, const json_t *wheels, size_t i,
                       struct path_ref *files, struct name_ref *keys)
{
    static const char *const members[] = {"file", "sha256", "name", "version", "requires", NULL};
    const json_t *w = json_array_get(wheels, i), *file, *name, *ver;
    char where[32 + CI_MANIFEST_WHEEL_FILE_MAX], s[CI_MANIFEST_SHOWN_MAX + 8];
    int rc, named;

    if ((rc = check_entry(b, w, "wheels", i, "file", ci_manifest_wheel_file_valid, members, 5,
                          where, sizeof where, &named)) != CI_OK)
        return rc;
    file = json_object_get(w, "file");
    if (!named)
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: the file of %s%s is not a wheel's file name (1 to "
                                  "%u of [A-Za-z0-9._+-], not starting with '.', ending "
                                  "\".whl\")",
                                  where, shown_value(file, s, sizeof s),
                                  CI_MANIFEST_WHEEL_FILE_MAX);
    if (!json_is_string(json_object_get(w, "sha256")) ||
        !ci_manifest_hex_valid(json_string_value(json_object_get(w, "sha256")), 64))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: the sha256 of %s is not 64 lowercase hex digits",
                                  where);
    name = json_object_get(w, "name");
    if (!json_is_string(name) || !ci_manifest_name_valid(json_string_value(name)))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: the name of %s%s is not 1 to %u of [A-Za-z0-9._-]",
                                  where, shown_value(name, s, sizeof s), CI_MANIFEST_NAME_MAX);
    ver = json_object_get(w, "version");
    if (!json_is_string(ver) ||
        !ci_manifest_text_valid(json_string_value(ver), CI_MANIFEST_TEXT_MAX))
        return ci_manifest_refuse(b->err, b->path,
                                  "malformed: the version of %s is not a string of 1 to %u bytes "
                                  "without control characters",
                                  where, CI_MANIFEST_TEXT_MAX);
    if ((rc = check_requirements(b, json_object_get(w, "requires"), where)) != CI_OK)
        return rc;
    const char *n = json_string_value(name), *v = json_string_value(ver);
    size_t nl = strlen(n), vl = strlen(v);
    files[i].path = json_string_value(file);
    keys[i].name = files[i].path;
    keys[i].index = i;
    if (!(keys[i].norm = malloc(nl + 1 + vl + 1)))
        return ci_err_set(b->err, CI_ENOMEM, NULL);
    ci_manifest_normalise_name(n, keys[i].norm);
    nl = strlen(keys[i].norm);
    keys[i].norm[nl] = ' ';
    memcpy(keys[i].norm + nl + 1, v, vl + 1);
    return CI_OK;
}

/* No file twice, and no (normalised name, version) twice: the two are
 * named. Sorts @files and @keys (@n each). */
static int check_unique_wheels(const struct body *b, const json_t *wheels,
                               struct path_ref *files, struct name_ref *keys, size_t n)
{
    char s[CI_MANIFEST_SHOWN_MAX];
    qsort(files, n, sizeof *files, cmp_path_ref);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(files[i].path, files[i - 1].path))
            return ci_manifest_refuse(b->err, b->path, "lists the wheel %s twice", files[i].path);
    qsort(keys, n, sizeof *keys, cmp_name_ref);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(keys[i].norm, keys[i - 1].norm)) {
            const json_t *first = json_array_get(wheels, keys[i - 1].index);
            return ci_manifest_refuse(
                b->err, b->path, "lists two wheels of %s %s (%s and %s)",
                json_string_value(json_object_get(first, "name")),
                ci_manifest_shown(json_string_value(json_object_get(first, "version")), s,
                                  sizeof s),
                keys[i - 1].name, keys[i].name);
        }
    return CI_OK;
}

/* "wheels", when present: an array of at most CI_MANIFEST_MAX_WHEELS
 * wheels, each valid, none twice. */
static int check_wheels(const struct body *b)
{
    const json_t *wheels = json_object_get(b->doc, "wheels");
    struct path_ref *files;
    struct name_ref *keys;
    size_t n, done = 0;
    int rc = CI_OK;

    if (!wheels)
        return CI_OK;
    if (!json_is_array(wheels))
        return ci_manifest_refuse(b->err, b->path, "malformed: \"wheels\" is not an array");
    if ((n = json_array_size(wheels)) > CI_MANIFEST_MAX_WHEELS)
        return ci_manifest_refuse(b->err, b->path, "malformed: more than %u wheels",
                                  CI_MANIFEST_MAX_WHEELS);
    files = calloc(n ? n : 1, sizeof *files);
    keys = calloc(n ? n : 1, sizeof *keys);
    if (!files || !keys)
        rc = ci_err_set(b->err, CI_ENOMEM, NULL);
    for (; rc == CI_OK && done < n; done++)
        rc = check_wheel(b, wheels, done, files, keys);
    if (rc == CI_OK)
        rc = check_unique_wheels(b, wheels, files, keys, n);
    for (size_t i = 0; keys && i < n; i++)
        free(keys[i].norm);
    free(files);
    free(keys);
    return rc;
}

int ci_manifest_check_body(const json_t *doc, const char *path, struct ci_err *err)
{
    static const char *const top[] = {"format",        "version",    "python",    "search_path",
                                      "distributions", "site_files", "signature", "wheels",
                                      NULL};
    struct body b = {.doc = doc, .path = path, .err = err};
    int rc;

    if (!json_is_object(doc))
        return ci_manifest_refuse(err, path, "malformed: not a JSON object");
    if ((rc = check_members(&b, doc, top, 6, "the document")) != CI_OK ||
        (rc = check_format(&b)) != CI_OK || (rc = check_python(&b)) != CI_OK ||
        (rc = check_search_path(&b)) != CI_OK || (rc = check_sizes(&b)) != CI_OK)
        goto out;
    for (size_t i = 0; i < json_array_size(b.dists); i++)
        if ((rc = check_distribution(&b, i)) != CI_OK)
            goto out;
    if ((rc = check_files(&b, b.site, "site_files")) != CI_OK ||
        (rc = check_unique_names(&b)) != CI_OK || (rc = check_dependencies(&b)) != CI_OK)
        goto out;
    if ((rc = check_unique_paths(&b)) == CI_OK)
        rc = check_wheels(&b);
out:
    if (b.names)
        for (size_t i = 0; i < b.nnames; i++)
            free(b.names[i].norm);
    free(b.names);
    free(b.refs);
    return rc;
}

/* ---- the signature ---- */

/* The signature member: present, of exactly its three string members. */
static int check_signature_members(const json_t *sig, const char *path, struct ci_err *err)
{
    static const char *const members[] = {"algorithm", "key_id", "value", NULL};
    char s[CI_MANIFEST_SHOWN_MAX];
    const char *key;
    json_t *v;
    if (!sig)
        return ci_manifest_refuse(err, path,
                                  "not signed (no \"signature\" member; sign it with "
                                  "codeinterp-manifest sign)");
    if (!json_is_object(sig))
        return ci_manifest_refuse(err, path,
                                  "malformed signature: \"signature\" is not an object");
    json_object_foreach((json_t *)sig, key, v) {
        size_t i = 0;
        while (members[i] && strcmp(members[i], key))
            i++;
        if (!members[i])
            return ci_manifest_refuse(err, path, "malformed signature: unknown member \"%s\"",
                                      ci_manifest_shown(key, s, sizeof s));
    }
    for (size_t i = 0; members[i]; i++)
        if (!json_is_string(json_object_get(sig, members[i])))
            return ci_manifest_refuse(err, path, "malformed signature: \"%s\" is %s", members[i],
                                      json_object_get(sig, members[i]) ? "not a string"
                                                                       : "missing");
    return CI_OK;
}

/* The signature member: present, well formed, by @pk, and good over
 * @canon. */
static int check_signature(const json_t *doc, const char *path, const unsigned char pk[32],
                           const char *canon, size_t canon_len, struct ci_err *err)
{
    json_t *sig = json_object_get(doc, "signature");
    char s[CI_MANIFEST_SHOWN_MAX];
    int rc = check_signature_members(sig, path, err);
    if (rc != CI_OK)
        return rc;
    const char *alg = json_string_value(json_object_get(sig, "algorithm"));
    const char *id = json_string_value(json_object_get(sig, "key_id"));
    const char *value = json_string_value(json_object_get(sig, "value"));
    if (strcmp(alg, "ed25519"))
        return ci_manifest_refuse(err, path,
                                  "malformed signature: algorithm \"%s\" (only \"ed25519\" is "
                                  "known)",
                                  ci_manifest_shown(alg, s, sizeof s));
    if (!ci_manifest_hex_valid(id, CI_MANIFEST_KEY_ID_LEN))
        return ci_manifest_refuse(err, path,
                                  "malformed signature: key_id \"%s\" is not %d lowercase hex "
                                  "digits",
                                  ci_manifest_shown(id, s, sizeof s), CI_MANIFEST_KEY_ID_LEN);
    unsigned char raw[SIG_BYTES];
    size_t got = 0, vl = strlen(value);
    const char *end = NULL;
    if (vl != CI_MANIFEST_SIG_B64_LEN)
        return ci_manifest_refuse(err, path,
                                  "malformed signature: value is %zu characters long; the base64 "
                                  "of a 64-byte Ed25519 signature is %d%s",
                                  vl, CI_MANIFEST_SIG_B64_LEN,
                                  vl < CI_MANIFEST_SIG_B64_LEN ? " (truncated)" : "");
    if (sodium_base642bin(raw, sizeof raw, value, vl, NULL, &got, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        got != sizeof raw || end != value + vl)
        return ci_manifest_refuse(err, path, "malformed signature: value is not valid base64");
    char want[CI_MANIFEST_KEY_ID_LEN + 1];
    ci_manifest_key_id(pk, want);
    if (strcmp(id, want))
        return ci_manifest_refuse(err, path,
                                  "signed by an unknown key (key id %s; the configured key's id "
                                  "is %s)",
                                  id, want);
    if (crypto_sign_verify_detached(raw, (const unsigned char *)canon, canon_len, pk) != 0)
        return ci_manifest_refuse(err, path, "bad signature: changed after signing");
    return CI_OK;
}

int ci_manifest_verify_json(const json_t *doc, const char *path, const unsigned char pk[32],
                            char **policy, size_t *policy_len, unsigned char digest[32],
                            struct ci_err *err)
{
    *policy = NULL;
    if (sodium_init() < 0)
        return ci_manifest_refuse(err, path, "libsodium could not be initialised");
    if (!json_is_object(doc))
        return ci_manifest_refuse(err, path, "malformed: not a JSON object");
    size_t len;
    char *canon = ci_manifest_canonical(doc, &len);
    if (!canon)
        return ci_err_set(err, CI_ENOMEM, NULL);
    int rc = check_signature(doc, path, pk, canon, len, err);
    if (rc == CI_OK)
        rc = ci_manifest_check_body(doc, path, err);
    if (rc == CI_OK)
        rc = ci_manifest_policy_text(doc, path, policy, policy_len, err);
    if (rc == CI_OK)
        crypto_hash_sha256(digest, (const unsigned char *)canon, len);
    free(canon);
    return rc;
}

int ci_manifest_verify_with_wheels(const char *path, const unsigned char pk[32], char **policy,
                                   size_t *policy_len, unsigned char digest[32],
                                   struct stat *identity, struct ci_manifest_wheel **wheels,
                                   size_t *n_wheels, struct ci_err *err)
{
    json_t *doc;
    int rc;

    *policy = NULL;
    if (wheels) {
        *wheels = NULL;
        *n_wheels = 0;
    }
    rc = ci_manifest_load(path, &doc, identity, err);
    if (rc == CI_EIO) {
        /* For the library an unreadable manifest is a manifest fault. */
        if (err)
            err->code = CI_EMANIFEST;
        return CI_EMANIFEST;
    }
    if (rc != CI_OK)
        return rc;
    rc = ci_manifest_verify_json(doc, path, pk, policy, policy_len, digest, err);
    if (rc == CI_OK && wheels && (rc = ci_manifest_wheels(doc, wheels, n_wheels, err)) != CI_OK) {
        free(*policy);
        *policy = NULL;
    }
    json_decref(doc);
    return rc;
}

int ci_manifest_verify(const char *path, const unsigned char pk[32], char **policy,
                       size_t *policy_len, unsigned char digest[32], struct stat *identity,
                       struct ci_err *err)
{
    return ci_manifest_verify_with_wheels(path, pk, policy, policy_len, digest, identity, NULL,
                                          NULL, err);
}
