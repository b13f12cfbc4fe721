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
    "                                  [--python PYTHON] [-o FILE]\n"
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
    "  -o, --output FILE    write the manifest here (default: standard output)\n"
    "\n"
    "A one-line summary goes to standard error. Sign the result with 'sign'.\n";

/* ---- running the discovery program ---- */

/* Runs @python on the discovery program with @args, returning what it
 * printed (malloc'd, NUL-terminated) or NULL after saying why. */
static char *run_discovery(const char *python, char **args, size_t nargs)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        ci_manifest_cli_err("pipe: %s", strerror(errno));
        return NULL;
    }
    char **argv = calloc(nargs + 5, sizeof *argv);
    if (!argv) {
        ci_manifest_cli_err("out of memory");
        return NULL;
    }
    argv[0] = (char *)python;
    argv[1] = "-I";
    argv[2] = "-c";
    argv[3] = (char *)discover_py;
    for (size_t i = 0; i < nargs; i++)
        argv[4 + i] = args[i];
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        ci_manifest_cli_err("fork: %s", strerror(errno));
        free(argv);
        return NULL;
    }
    if (pid == 0) {
        if (dup2(pipefd[1], 1) < 0)
            _exit(127);
        execv(python, argv);
        int e = errno;
        dprintf(2, "codeinterp-manifest: create: cannot run %s: %s\n", python, strerror(e));
        _exit(127);
    }
    free(argv);
    close(pipefd[1]);
    size_t cap = 1 << 20, have = 0;
    char *buf = malloc(cap);
    int failed = !buf;
    for (;;) {
        if (!failed && have + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                failed = 1;
            else {
                buf = nb;
                cap *= 2;
            }
        }
        char sink[4096];
        ssize_t n = failed ? read(pipefd[0], sink, sizeof sink)
                           : read(pipefd[0], buf + have, cap - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (!failed)
            have += (size_t)n;
    }
    close(pipefd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (failed) {
        ci_manifest_cli_err("out of memory");
        free(buf);
        return NULL;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 127))
            ci_manifest_cli_err("create: the discovery program under %s failed (%s %d)", python,
                    WIFEXITED(status) ? "exit status" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        free(buf);
        return NULL;
    }
    buf[have] = '\0';
    return buf;
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

/* ---- the command ---- */

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

/* Prints a discovery list ("warnings", "notes") on stderr. */
static void print_list(const json_t *out, const char *member, const char *label)
{
    json_t *list = json_object_get(out, member);
    for (size_t i = 0; i < json_array_size(list); i++)
        if (json_is_string(json_array_get(list, i)))
            ci_manifest_cli_err("create: %s: %s", label, json_string_value(json_array_get(list, i)));
}

int ci_manifest_cli_create(int argc, char **argv)
{
    static const struct option opts[] = {{"packages", required_argument, NULL, 'p'},
                                         {"path", required_argument, NULL, 'P'},
                                         {"python", required_argument, NULL, 'y'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    char **pkgs = NULL, **paths = NULL;
    size_t npkgs = 0, npaths = 0;
    const char *python = CI_MANIFEST_CLI_DEFAULT_PYTHON, *out = "-";
    int status = CI_MANIFEST_CLI_ERROR, c;
    char *text = NULL;
    json_t *found = NULL, *doc = NULL;
    struct job *jobs = NULL;
    char *joined = NULL;
    char **args = NULL;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:P:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (add_packages(&pkgs, &npkgs, optarg) != 0) {
                ci_manifest_cli_err("out of memory");
                goto done;
            }
            break;
        case 'P': {
            char **np = realloc(paths, (npaths + 1) * sizeof *np);
            if (!np) {
                ci_manifest_cli_err("out of memory");
                goto done;
            }
            paths = np;
            paths[npaths++] = optarg;
            break;
        }
        case 'y': python = optarg; break;
        case 'o': out = optarg; break;
        case 'h':
            fputs(create_help, stdout);
            status = CI_MANIFEST_CLI_OK;
            goto done;
        case ':':
            status = ci_manifest_cli_usage_error("create", "'%s' needs a value", argv[optind - 1]);
            goto done;
        default:
            status = ci_manifest_cli_usage_error("create", "unknown option '%s'", argv[optind - 1]);
            goto done;
        }
    }
    if (optind < argc) {
        status = ci_manifest_cli_usage_error("create", "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (npkgs == 0) {
        status = ci_manifest_cli_usage_error("create", "--packages is missing (e.g. --packages numpy,pandas,matplotlib)");
        goto done;
    }
    for (size_t i = 0; i < npkgs; i++) {
        if (!ci_manifest_name_valid(pkgs[i])) {
            status = ci_manifest_cli_usage_error("create", "'%s' is not a distribution name ([A-Za-z0-9._-], at most %u)",
                                     pkgs[i], CI_MANIFEST_NAME_MAX);
            goto done;
        }
    }
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (paths[i][0] != '/') {
            status = ci_manifest_cli_usage_error("create", "--path %s: not an absolute path", paths[i]);
            goto done;
        }
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            ci_manifest_cli_err("create: --path %s: %s", paths[i],
                    errno && stat(paths[i], &st) != 0 ? strerror(errno) : "not a directory");
            goto done;
        }
    }
    if (access(python, X_OK) != 0) {
        ci_manifest_cli_err("create: --python %s: %s", python, strerror(errno));
        goto done;
    }

    double t0 = ci_manifest_cli_now();
    size_t jl = 1;
    for (size_t i = 0; i < npkgs; i++)
        jl += strlen(pkgs[i]) + 1;
    joined = calloc(1, jl);
    args = calloc(npaths + 1, sizeof *args);
    if (!joined || !args) {
        ci_manifest_cli_err("out of memory");
        goto done;
    }
    for (size_t i = 0; i < npkgs; i++) {
        if (i)
            strcat(joined, ",");
        strcat(joined, pkgs[i]);
    }
    args[0] = joined;
    for (size_t i = 0; i < npaths; i++)
        args[1 + i] = paths[i];
    text = run_discovery(python, args, npaths + 1);
    if (!text)
        goto done;
    json_error_t jerr;
    found = json_loads(text, 0, &jerr);
    if (!json_is_object(found)) {
        ci_manifest_cli_err("create: the discovery program printed no JSON object (line %d: %s)", jerr.line,
                jerr.text);
        goto done;
    }
    double t1 = ci_manifest_cli_now();
    print_list(found, "warnings", "warning");
    print_list(found, "notes", "note");

    json_t *sp = json_object_get(found, "search_path");
    json_t *unknown = json_object_get(found, "unknown");
    if (json_array_size(unknown) > 0) {
        for (size_t i = 0; i < json_array_size(unknown); i++) {
            const char *name = json_string_value(json_array_get(unknown, i));
            json_t *hint = json_object_get(json_object_get(found, "hints"), name);

            if (json_is_string(hint))
                ci_manifest_cli_err("create: no distribution named '%s' is installed in the search path; "
                        "the module %s comes from the distribution '%s': name that one",
                        name, name, json_string_value(hint));
            else
                ci_manifest_cli_err("create: no distribution named '%s' is installed in the search path",
                        name);
        }
        fprintf(stderr, "codeinterp-manifest: create: the search path of %s:", python);
        for (size_t i = 0; i < json_array_size(sp); i++)
            fprintf(stderr, " %s", json_string_value(json_array_get(sp, i)));
        fputc('\n', stderr);
        goto done;
    }

    /* Every file to hash, in document order: the distributions', then the
     * site files. */
    json_t *dists = json_object_get(found, "distributions");
    json_t *site = json_object_get(found, "site_files");
    size_t nfiles = json_array_size(site);
    for (size_t i = 0; i < json_array_size(dists); i++)
        nfiles += json_array_size(json_object_get(json_array_get(dists, i), "files"));
    jobs = calloc(nfiles ? nfiles : 1, sizeof *jobs);
    if (!jobs) {
        ci_manifest_cli_err("out of memory");
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i <= json_array_size(dists); i++) {
        json_t *files = i < json_array_size(dists)
                            ? json_object_get(json_array_get(dists, i), "files")
                            : site;
        for (size_t j = 0; j < json_array_size(files); j++)
            jobs[k++].path = json_string_value(json_array_get(files, j));
    }
    for (size_t i = 0; i < nfiles; i++) {
        if (!jobs[i].path) {
            ci_manifest_cli_err("create: the discovery program printed a file name that is not a string");
            goto done;
        }
    }
    hash_all(jobs, nfiles);
    double t2 = ci_manifest_cli_now();

    /* The document. */
    const char *pyver = json_string_value(json_object_get(found, "python"));
    doc = json_pack("{s:s, s:i, s:s?, s:O, s:[], s:{}}", "format", CI_MANIFEST_FORMAT, "version",
                    CI_MANIFEST_VERSION, "python", pyver, "search_path", sp, "distributions",
                    "site_files");
    if (!doc) {
        ci_manifest_cli_err("create: the discovery program's output is incomplete");
        goto done;
    }
    json_t *out_dists = json_object_get(doc, "distributions");
    json_t *out_site = json_object_get(doc, "site_files");
    unsigned long long bytes = 0;
    size_t listed = 0, skipped = 0;
    k = 0;
    for (size_t i = 0; i <= json_array_size(dists); i++) {
        json_t *d = i < json_array_size(dists) ? json_array_get(dists, i) : NULL;
        json_t *files = d ? json_object_get(d, "files") : site;
        json_t *obj = d ? json_object() : out_site;
        if (!obj) {
            ci_manifest_cli_err("out of memory");
            goto done;
        }
        for (size_t j = 0; j < json_array_size(files); j++, k++) {
            struct job *jb = &jobs[k];
            if (jb->err == ENOENT || jb->err == EISDIR) {
                /* gone, or no longer a regular file, since discovery named it */
                ci_manifest_cli_err("create: warning: %s: %s; not listed", jb->path,
                        jb->err == ENOENT ? "vanished" : "not a regular file");
                skipped++;
                continue;
            }
            if (jb->err) {
                ci_manifest_cli_err("create: cannot read %s: %s", jb->path, strerror(jb->err));
                if (d)
                    json_decref(obj);
                goto done;
            }
            char hex[65];
            sodium_bin2hex(hex, sizeof hex, jb->sha, sizeof jb->sha);
            if (json_object_set_new(obj, jb->path, json_string(hex)) != 0) {
                ci_manifest_cli_err("out of memory");
                if (d)
                    json_decref(obj);
                goto done;
            }
            bytes += jb->size;
            listed++;
        }
        if (!d)
            break;
        const char *name = json_string_value(json_object_get(d, "name"));
        int requested = name && !strcmp(name, "python");
        char norm[CI_MANIFEST_NAME_MAX + 1], want[CI_MANIFEST_NAME_MAX + 1];
        if (name && strlen(name) <= CI_MANIFEST_NAME_MAX) {
            ci_manifest_normalise_name(name, norm);
            for (size_t r = 0; r < npkgs && !requested; r++) {
                ci_manifest_normalise_name(pkgs[r], want);
                requested = !strcmp(norm, want);
            }
        }
        json_t *entry = json_pack("{s:s?, s:O?, s:b, s:O?, s:[], s:o}", "name", name, "version",
                                  json_object_get(d, "version"), "requested", requested, "requires",
                                  json_object_get(d, "requires"), "pulled_in_by", "files", obj);
        if (!entry || json_array_append_new(out_dists, entry) != 0) {
            ci_manifest_cli_err("create: the discovery program's output is incomplete");
            goto done;
        }
    }
    /* pulled_in_by: the listed distributions that require each one, in
     * document order. */
    for (size_t i = 0; i < json_array_size(out_dists); i++) {
        json_t *d = json_array_get(out_dists, i);
        json_t *req = json_object_get(d, "requires");
        for (size_t r = 0; r < json_array_size(req); r++) {
            const char *rn = json_string_value(json_array_get(req, r));
            for (size_t t = 0; rn && t < json_array_size(out_dists); t++) {
                json_t *target = json_array_get(out_dists, t);
                if (!strcmp(json_string_value(json_object_get(target, "name")), rn)) {
                    json_array_append(json_object_get(target, "pulled_in_by"),
                                      json_object_get(d, "name"));
                    break;
                }
            }
        }
    }

    struct ci_err err;
    if (ci_manifest_check_body(doc, strcmp(out, "-") ? out : "(standard output)", &err) != CI_OK) {
        ci_manifest_cli_err("create: the manifest made is not valid, so it is not written: %s",
                            err.msg);
        goto done;
    }
    if (ci_manifest_cli_write_json(doc, out, 0644) != 0)
        goto done;
    double t3 = ci_manifest_cli_now();
    fprintf(stderr,
            "codeinterp-manifest: create: %zu distributions, %zu files, %llu bytes, %.2f s "
            "(discovery %.2f s, hashing %.2f s)%s%s\n",
            json_array_size(out_dists), listed, bytes, t3 - t0, t1 - t0, t2 - t1,
            skipped ? "; files vanished meanwhile: " : "", skipped ? "see above" : "");
    status = CI_MANIFEST_CLI_OK;
done:
    for (size_t i = 0; i < npkgs; i++)
        free(pkgs[i]);
    free(pkgs);
    free(paths);
    free(args);
    free(joined);
    free(text);
    free(jobs);
    json_decref(found);
    json_decref(doc);
    return status;
}
