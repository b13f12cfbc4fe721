/*
 * codeinterp-manifest create: an unsigned manifest of the requested
 * distributions and what they depend on, from what is installed.
 *
 * The discovery program (discover.py) runs under the interpreter the
 * manifest is for and names the files; this side hashes them, on a few
 * threads, and writes the document. Nothing here trusts the program's
 * output more than the library's own check of the finished document.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "cli.h"
#include "codeinterp.h"
#include "manifest.h"
#include "manifest_doc.h"
#include "discover_py.h" /* discover.py, embedded */

static const char create_help[] =
    "usage: codeinterp-manifest create --packages A,B,... [--path DIR]...\n"
    "                                  [--wheelhouse DIR] [--python PYTHON] [-o FILE]\n"
    "\n"
    "Writes an unsigned manifest of the distributions A, B, ... and those they\n"
    "depend on, as installed for PYTHON: each with its version, what it requires\n"
    "and what pulled it in, and every file of it with its SHA-256. The standard\n"
    "library is the distribution \"python\". A .pth file in a search-path\n"
    "directory that no listed distribution owns is listed under site_files.\n"
    "Dependencies of a Debian package come from its Depends (followed to\n"
    "packages that hold a Python distribution), others from Requires-Dist.\n"
    "\n"
    "  -p, --packages LIST  distribution names, comma-separated (may be repeated)\n"
    "  -P, --path DIR       put DIR before the interpreter's module search path\n"
    "                       (may be repeated; in the order given)\n"
    "      --python PYTHON  the interpreter (default " CI_MANIFEST_CLI_DEFAULT_PYTHON ")\n"
    "  -w, --wheelhouse DIR list each *.whl of DIR (a regular file, not a link; all\n"
    "                       else in DIR is ignored) with its SHA-256, name, version\n"
    "                       and the requirements that apply to PYTHON, so that\n"
    "                       sessions with this wheelhouse (ci_config_set_wheelhouse)\n"
    "                       may install them\n"
    "  -o, --output FILE    write the manifest here (default: standard output)\n"
    "\n"
    "A one-line summary goes to standard error. Sign the result with 'sign'.\n";

/* ---- running the discovery program ---- */

/* Everything on @fd to its end, malloc'd and NUL-terminated; NULL if
 * memory ran out (what is left is still read, so the writer never
 * blocks on a full pipe). */
static char *read_to_end(int fd)
{
    size_t cap = 1 << 20, have = 0;
    char *buf = malloc(cap), sink[4096];

    for (;;) {
        if (buf && have + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
                cap *= 2;
            }
        }
        ssize_t n = buf ? read(fd, buf + have, cap - 1 - have) : read(fd, sink, sizeof sink);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (buf)
            have += (size_t)n;
    }
    if (buf)
        buf[have] = '\0';
    return buf;
}

/* Runs @python on the discovery program with @args, returning what it
 * printed (malloc'd, NUL-terminated) or NULL after saying why. */
static char *run_discovery(const char *python, char **args, size_t nargs)
{
    int pipefd[2] = {-1, -1}, status;
    char **argv = calloc(nargs + 5, sizeof *argv), *out = NULL;
    pid_t pid;

    if (!argv) {
        ci_manifest_cli_err("out of memory");
        return NULL;
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        ci_manifest_cli_err("pipe: %s", strerror(errno));
        goto out;
    }
    argv[0] = (char *)python;
    argv[1] = "-I";
    argv[2] = "-c";
    argv[3] = (char *)discover_py;
    for (size_t i = 0; i < nargs; i++)
        argv[4 + i] = args[i];
    fflush(NULL);
    if ((pid = fork()) < 0) {
        ci_manifest_cli_err("fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        if (dup2(pipefd[1], 1) < 0)
            _exit(127);
        execv(python, argv);
        int e = errno;
        dprintf(2, "codeinterp-manifest: create: cannot run %s: %s\n", python, strerror(e));
        _exit(127);
    }
    close(pipefd[1]);
    pipefd[1] = -1;
    out = read_to_end(pipefd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!out) {
        ci_manifest_cli_err("out of memory");
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* 127: the child said why already */
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 127))
            ci_manifest_cli_err("create: the discovery program under %s failed (%s %d)", python,
                                WIFEXITED(status) ? "exit status" : "signal",
                                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        free(out);
        out = NULL;
    }
out:
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    free(argv);
    return out;
}

/* ---- hashing ---- */

struct job {
    const char *path;
    unsigned char sha[32];
    unsigned long long size;
    int err; /* errno, or 0 */
};

struct pool {
    struct job *jobs;
    size_t n;
    atomic_size_t next;
};

static void *hash_worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            return NULL;
        struct job *j = &p->jobs[i];
        j->err = ci_manifest_sha256_file(j->path, j->sha, &j->size) == 0 ? 0 : errno;
    }
}

/* Hashes every job on up to 8 threads (one per CPU); the files are
 * small and many, so the threads mostly overlap their system calls. */
static void hash_all(struct job *jobs, size_t n)
{
    struct pool p = {jobs, n, 0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cpus < 1 ? 1 : cpus > 8 ? 8 : (size_t)cpus;
    if (nt < 4)
        nt = 4;
    pthread_t t[8];
    size_t started = 0;
    for (; started < nt; started++)
        if (pthread_create(&t[started], NULL, hash_worker, &p) != 0)
            break;
    if (started == 0)
        hash_worker(&p);
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i], NULL);
}

/* ---- parse: the command line ---- */

/* One create command's state, from its arguments to the document. */
struct create {
    char **pkgs; /* requested distributions, malloc'd copies */
    size_t npkgs;
    char **paths; /* --path directories, in argv */
    size_t npaths;
    const char *python, *out;
    const char *wheelhouse; /* --wheelhouse, or NULL */
    json_t *found;    /* the discovery program's output */
    struct job *jobs; /* every file it named, in document order */
    size_t njobs;
    json_t *doc; /* the manifest made */
    unsigned long long bytes;
    size_t listed, skipped;
    double t0, t1, t2; /* start, discovery done, hashing done */
};

static int add_packages(char ***list, size_t *n, const char *arg)
{
    char *copy = strdup(arg);
    if (!copy)
        return -1;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t l = strlen(tok);
        while (l && tok[l - 1] == ' ')
            tok[--l] = '\0';
        if (!*tok)
            continue;
        char **nl = realloc(*list, (*n + 1) * sizeof *nl);
        if (!nl || !(nl[*n] = strdup(tok))) {
            free(copy);
            if (nl)
                *list = nl;
            return -1;
        }
        *list = nl;
        (*n)++;
    }
    free(copy);
    return 0;
}

/* The options into @c. -1 to go on; else the exit status (help printed,
 * a usage error, out of memory). */
static int parse_options(struct create *c, int argc, char **argv)
{
    static const struct option opts[] = {{"packages", required_argument, NULL, 'p'},
                                         {"path", required_argument, NULL, 'P'},
                                         {"python", required_argument, NULL, 'y'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"wheelhouse", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":p:P:o:w:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            if (add_packages(&c->pkgs, &c->npkgs, optarg) != 0) {
                ci_manifest_cli_err("out of memory");
                return CI_MANIFEST_CLI_ERROR;
            }
            break;
        case 'P': {
            char **np = realloc(c->paths, (c->npaths + 1) * sizeof *np);
            if (!np) {
                ci_manifest_cli_err("out of memory");
                return CI_MANIFEST_CLI_ERROR;
            }
            c->paths = np;
            c->paths[c->npaths++] = optarg;
            break;
        }
        case 'y': c->python = optarg; break;
        case 'o': c->out = optarg; break;
        case 'w': c->wheelhouse = optarg; break;
        case 'h': fputs(create_help, stdout); return CI_MANIFEST_CLI_OK;
        case ':':
            return ci_manifest_cli_usage_error("create", "'%s' needs a value", argv[optind - 1]);
        default:
            return ci_manifest_cli_usage_error("create", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return ci_manifest_cli_usage_error("create", "unexpected argument '%s'", argv[optind]);
    return -1;
}

/* The command line into @c, checked: names, directories, the
 * interpreter. -1 to go on; else the exit status. */
static int parse(struct create *c, int argc, char **argv)
{
    int status = parse_options(c, argc, argv);
    if (status >= 0)
        return status;
    if (c->npkgs == 0)
        return ci_manifest_cli_usage_error(
            "create", "--packages is missing (e.g. --packages numpy,pandas,matplotlib)");
    for (size_t i = 0; i < c->npkgs; i++)
        if (!ci_manifest_name_valid(c->pkgs[i]))
            return ci_manifest_cli_usage_error(
                "create", "'%s' is not a distribution name ([A-Za-z0-9._-], at most %u)",
                c->pkgs[i], CI_MANIFEST_NAME_MAX);
    for (size_t i = 0; i < c->npaths; i++) {
        struct stat st;
        if (c->paths[i][0] != '/')
            return ci_manifest_cli_usage_error("create", "--path %s: not an absolute path",
                                               c->paths[i]);
        if (stat(c->paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            ci_manifest_cli_err("create: --path %s: %s", c->paths[i],
                                errno && stat(c->paths[i], &st) != 0 ? strerror(errno)
                                                                     : "not a directory");
            return CI_MANIFEST_CLI_ERROR;
        }
    }
    if (c->wheelhouse) {
        struct stat st;
        int found = stat(c->wheelhouse, &st) == 0;
        if (!found || !S_ISDIR(st.st_mode)) {
            ci_manifest_cli_err("create: --wheelhouse %s: %s", c->wheelhouse,
                                found ? "not a directory" : strerror(errno));
            return CI_MANIFEST_CLI_ERROR;
        }
    }
    if (access(c->python, X_OK) != 0) {
        ci_manifest_cli_err("create: --python %s: %s", c->python, strerror(errno));
        return CI_MANIFEST_CLI_ERROR;
    }
    return -1;
}

/* ---- discover: what the interpreter has installed ---- */

/* Prints a discovery list ("warnings", "notes") on stderr. */
static void print_list(const json_t *out, const char *member, const char *label)
{
    json_t *list = json_object_get(out, member);
    for (size_t i = 0; i < json_array_size(list); i++)
        if (json_is_string(json_array_get(list, i)))
            ci_manifest_cli_err("create: %s: %s", label, json_string_value(json_array_get(list, i)));
}

/* Names each requested distribution that is not installed, with the
 * one that holds a module of that name when there is one, then the
 * search path looked in. */
static void print_unknown(const struct create *c)
{
    json_t *unknown = json_object_get(c->found, "unknown");
    json_t *sp = json_object_get(c->found, "search_path");
    for (size_t i = 0; i < json_array_size(unknown); i++) {
        const char *name = json_string_value(json_array_get(unknown, i));
        json_t *hint = json_object_get(json_object_get(c->found, "hints"), name);

        if (json_is_string(hint))
            ci_manifest_cli_err("create: no distribution named '%s' is installed in the search "
                                "path; the module %s comes from the distribution '%s': name "
                                "that one",
                                name, name, json_string_value(hint));
        else
            ci_manifest_cli_err("create: no distribution named '%s' is installed in the search "
                                "path",
                                name);
    }
    fprintf(stderr, "codeinterp-manifest: create: the search path of %s:", c->python);
    for (size_t i = 0; i < json_array_size(sp); i++)
        fprintf(stderr, " %s", json_string_value(json_array_get(sp, i)));
    fputc('\n', stderr);
}

/* Runs the discovery program for @c's packages and paths: its output in
 * c->found, its warnings and notes printed. 0, or -1 after saying why. */
static int discover(struct create *c)
{
    size_t jl = 1;
    char *joined = NULL, **args = NULL, *text = NULL;
    json_error_t jerr;
    int rc = -1;

    for (size_t i = 0; i < c->npkgs; i++)
        jl += strlen(c->pkgs[i]) + 1;
    joined = calloc(1, jl);
    args = calloc(c->npaths + 2, sizeof *args);
    if (!joined || !args) {
        ci_manifest_cli_err("out of memory");
        goto out;
    }
    for (size_t i = 0; i < c->npkgs; i++) {
        if (i)
            strcat(joined, ",");
        strcat(joined, c->pkgs[i]);
    }
    args[0] = joined;
    for (size_t i = 0; i < c->npaths; i++)
        args[1 + i] = c->paths[i];
    if (c->wheelhouse &&
        asprintf(&args[1 + c->npaths], "--wheelhouse=%s", c->wheelhouse) < 0) {
        args[1 + c->npaths] = NULL;
        ci_manifest_cli_err("out of memory");
        goto out;
    }
    if (!(text = run_discovery(c->python, args, c->npaths + 1 + (c->wheelhouse != NULL))))
        goto out;
    c->found = json_loads(text, 0, &jerr);
    if (!json_is_object(c->found)) {
        ci_manifest_cli_err("create: the discovery program printed no JSON object (line %d: %s)",
                            jerr.line, jerr.text);
        goto out;
    }
    c->t1 = ci_manifest_cli_now();
    print_list(c->found, "warnings", "warning");
    print_list(c->found, "notes", "note");
    if (json_array_size(json_object_get(c->found, "unknown")) > 0) {
        print_unknown(c);
        goto out;
    }
    if (json_array_size(json_object_get(c->found, "bad_wheels")) > 0) {
        print_list(c->found, "bad_wheels", "cannot list a wheel");
        goto out;
    }
    rc = 0;
out:
    if (args && c->wheelhouse)
        free(args[1 + c->npaths]);
    free(args);
    free(joined);
    free(text);
    return rc;
}

/* ---- hash: every file discovery named ---- */

/* The file list of distribution @i of discovery's output, or its site
 * files past the last: the document's order. */
static json_t *found_files(const struct create *c, size_t i)
{
    json_t *dists = json_object_get(c->found, "distributions");
    return i < json_array_size(dists) ? json_object_get(json_array_get(dists, i), "files")
                                      : json_object_get(c->found, "site_files");
}

/* Hashes every file discovery named, into c->jobs in document order: the
 * distributions', then the site files. 0, or -1 after saying why. */
static int hash(struct create *c)
{
    size_t nd = json_array_size(json_object_get(c->found, "distributions")), k = 0;

    c->njobs = 0;
    for (size_t i = 0; i <= nd; i++)
        c->njobs += json_array_size(found_files(c, i));
    if (!(c->jobs = calloc(c->njobs ? c->njobs : 1, sizeof *c->jobs))) {
        ci_manifest_cli_err("out of memory");
        return -1;
    }
    for (size_t i = 0; i <= nd; i++) {
        json_t *files = found_files(c, i);
        for (size_t j = 0; j < json_array_size(files); j++)
            c->jobs[k++].path = json_string_value(json_array_get(files, j));
    }
    for (size_t i = 0; i < c->njobs; i++) {
        if (!c->jobs[i].path) {
            ci_manifest_cli_err("create: the discovery program printed a file name that is not "
                                "a string");
            return -1;
        }
    }
    hash_all(c->jobs, c->njobs);
    c->t2 = ci_manifest_cli_now();
    return 0;
}

/* ---- build: the document ---- */

/* The hashes of @n jobs from *@k on into the files object @obj; a file
 * gone since discovery named it is left out with a warning. 0, or -1
 * after saying why. */
static int add_files(struct create *c, json_t *obj, size_t n, size_t *k)
{
    for (size_t j = 0; j < n; j++, (*k)++) {
        struct job *jb = &c->jobs[*k];
        char hex[65];
        if (jb->err == ENOENT || jb->err == EISDIR) {
            /* gone, or no longer a regular file, since discovery named it */
            ci_manifest_cli_err("create: warning: %s: %s; not listed", jb->path,
                                jb->err == ENOENT ? "vanished" : "not a regular file");
            c->skipped++;
            continue;
        }
        if (jb->err) {
            ci_manifest_cli_err("create: cannot read %s: %s", jb->path, strerror(jb->err));
            return -1;
        }
        sodium_bin2hex(hex, sizeof hex, jb->sha, sizeof jb->sha);
        if (json_object_set_new(obj, jb->path, json_string(hex)) != 0) {
            ci_manifest_cli_err("out of memory");
            return -1;
        }
        c->bytes += jb->size;
        c->listed++;
    }
    return 0;
}

/* 1 if the distribution @name was requested (the standard library,
 * "python", always is), by PEP 503 name. */
static int requested(const struct create *c, const char *name)
{
    char norm[CI_MANIFEST_NAME_MAX + 1], want[CI_MANIFEST_NAME_MAX + 1];
    if (name && !strcmp(name, "python"))
        return 1;
    if (!name || strlen(name) > CI_MANIFEST_NAME_MAX)
        return 0;
    ci_manifest_normalise_name(name, norm);
    for (size_t r = 0; r < c->npkgs; r++) {
        ci_manifest_normalise_name(c->pkgs[r], want);
        if (!strcmp(norm, want))
            return 1;
    }
    return 0;
}

/* Appends discovery's distribution @d, with the files object @files
 * (taken), to the document's distributions. 0, or -1 after saying why. */
static int add_distribution(struct create *c, const json_t *d, json_t *files)
{
    const char *name = json_string_value(json_object_get(d, "name"));
    json_t *entry = json_pack("{s:s?, s:O?, s:b, s:O?, s:[], s:o}", "name", name, "version",
                              json_object_get(d, "version"), "requested", requested(c, name),
                              "requires", json_object_get(d, "requires"), "pulled_in_by",
                              "files", files);
    if (!entry || json_array_append_new(json_object_get(c->doc, "distributions"), entry) != 0) {
        ci_manifest_cli_err("create: the discovery program's output is incomplete");
        return -1;
    }
    return 0;
}

/* pulled_in_by: the listed distributions that require each one, in
 * document order. */
static void add_pulled_in_by(json_t *dists)
{
    for (size_t i = 0; i < json_array_size(dists); i++) {
        json_t *d = json_array_get(dists, i);
        json_t *req = json_object_get(d, "requires");
        for (size_t r = 0; r < json_array_size(req); r++) {
            const char *rn = json_string_value(json_array_get(req, r));
            for (size_t t = 0; rn && t < json_array_size(dists); t++) {
                json_t *target = json_array_get(dists, t);
                if (!strcmp(json_string_value(json_object_get(target, "name")), rn)) {
                    json_array_append(json_object_get(target, "pulled_in_by"),
                                      json_object_get(d, "name"));
                    break;
                }
            }
        }
    }
}

/* Wheel @w of discovery's output, @jb its hash, as a "wheels" entry
 * appended to @wheels. 0, or -1 after saying why. */
static int add_wheel(json_t *wheels, const json_t *w, const struct job *jb)
{
    const char *base = strrchr(jb->path, '/') ? strrchr(jb->path, '/') + 1 : jb->path;
    char hex[65];

    if (!ci_manifest_wheel_file_valid(base)) {
        ci_manifest_cli_err("create: %s: a wheel's file name in a manifest is 1 to %u of "
                            "[A-Za-z0-9._+-], not starting with '.'; rename it or move it out "
                            "of the wheelhouse",
                            jb->path, CI_MANIFEST_WHEEL_FILE_MAX);
        return -1;
    }
    if (jb->err) {
        ci_manifest_cli_err("create: cannot read %s: %s", jb->path,
                            jb->err == EISDIR ? "not a regular file" : strerror(jb->err));
        return -1;
    }
    sodium_bin2hex(hex, sizeof hex, jb->sha, sizeof jb->sha);
    if (json_array_append_new(wheels, json_pack("{s:s, s:s, s:O, s:O, s:O}", "file", base,
                                                "sha256", hex, "name", json_object_get(w, "name"),
                                                "version", json_object_get(w, "version"),
                                                "requires",
                                                json_object_get(w, "requires"))) != 0) {
        ci_manifest_cli_err("create: the discovery program's wheel list is incomplete");
        return -1;
    }
    return 0;
}

/* With --wheelhouse: the wheels discovery listed there, hashed, as the
 * document's "wheels" (an empty one for a wheelhouse without any). 0, or
 * -1 after saying why. */
static int add_wheels(struct create *c)
{
    json_t *found = json_object_get(c->found, "wheels"), *wheels;
    size_t n = json_array_size(found);
    struct job *jobs;
    int rc = 0;

    if (!c->wheelhouse)
        return 0;
    if (!(wheels = json_array()) || json_object_set_new(c->doc, "wheels", wheels) != 0 ||
        !(jobs = calloc(n ? n : 1, sizeof *jobs))) {
        ci_manifest_cli_err("out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!(jobs[i].path = json_string_value(json_object_get(json_array_get(found, i), "path")))) {
            ci_manifest_cli_err("create: the discovery program's wheel list is incomplete");
            free(jobs);
            return -1;
        }
    hash_all(jobs, n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = add_wheel(wheels, json_array_get(found, i), &jobs[i]);
    free(jobs);
    return rc;
}

/* The manifest of discovery's output and the hashes, in c->doc, checked
 * as the library checks it. 0, or -1 after saying why. */
static int build(struct create *c)
{
    json_t *dists = json_object_get(c->found, "distributions");
    const char *pyver = json_string_value(json_object_get(c->found, "python"));
    struct ci_err err;
    size_t k = 0;

    c->doc = json_pack("{s:s, s:i, s:s?, s:O, s:[], s:{}}", "format", CI_MANIFEST_FORMAT,
                       "version", CI_MANIFEST_VERSION, "python", pyver, "search_path",
                       json_object_get(c->found, "search_path"), "distributions", "site_files");
    if (!c->doc) {
        ci_manifest_cli_err("create: the discovery program's output is incomplete");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(dists); i++) {
        json_t *obj = json_object();
        if (!obj) {
            ci_manifest_cli_err("out of memory");
            return -1;
        }
        if (add_files(c, obj, json_array_size(found_files(c, i)), &k) != 0) {
            json_decref(obj);
            return -1;
        }
        if (add_distribution(c, json_array_get(dists, i), obj) != 0)
            return -1;
    }
    if (add_files(c, json_object_get(c->doc, "site_files"),
                  json_array_size(found_files(c, json_array_size(dists))), &k) != 0)
        return -1;
    add_pulled_in_by(json_object_get(c->doc, "distributions"));
    if (add_wheels(c) != 0)
        return -1;
    if (ci_manifest_check_body(c->doc, strcmp(c->out, "-") ? c->out : "(standard output)",
                               &err) != CI_OK) {
        ci_manifest_cli_err("create: the manifest made is not valid, so it is not written: %s",
                            err.msg);
        return -1;
    }
    return 0;
}

/* ---- the command ---- */

int ci_manifest_cli_create(int argc, char **argv)
{
    struct create c = {.python = CI_MANIFEST_CLI_DEFAULT_PYTHON, .out = "-"};
    int status = parse(&c, argc, argv);

    if (status >= 0)
        goto out;
    status = CI_MANIFEST_CLI_ERROR;
    c.t0 = ci_manifest_cli_now();
    if (discover(&c) != 0 || hash(&c) != 0 || build(&c) != 0 ||
        ci_manifest_cli_write_json(c.doc, c.out, 0644) != 0)
        goto out;
    size_t nw = json_array_size(json_object_get(c.doc, "wheels"));
    char wheels[64] = "";
    if (c.wheelhouse)
        snprintf(wheels, sizeof wheels, ", %zu wheel%s", nw, nw == 1 ? "" : "s");
    fprintf(stderr,
            "codeinterp-manifest: create: %zu distributions, %zu files, %llu bytes%s, %.2f s "
            "(discovery %.2f s, hashing %.2f s)%s%s\n",
            json_array_size(json_object_get(c.doc, "distributions")), c.listed, c.bytes, wheels,
            ci_manifest_cli_now() - c.t0, c.t1 - c.t0, c.t2 - c.t1,
            c.skipped ? "; files vanished meanwhile: " : "", c.skipped ? "see above" : "");
    status = CI_MANIFEST_CLI_OK;
out:
    for (size_t i = 0; i < c.npkgs; i++)
        free(c.pkgs[i]);
    free(c.pkgs);
    free(c.paths);
    free(c.jobs);
    json_decref(c.found);
    json_decref(c.doc);
    return status;
}
