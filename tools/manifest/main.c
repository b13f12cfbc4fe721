/*
 * codeinterp-manifest: keys, and signed package manifests made from what
 * is installed (see man/man1/codeinterp-manifest.1).
 *
 *   keygen NAME                       NAME.key (0600) and NAME.pub (0644)
 *   create --packages A,B [...]       an unsigned manifest of what is installed
 *   sign --key NAME.key MANIFEST      sign it (in place, or -o OUT)
 *   verify --key NAME.pub MANIFEST    its signature, then the installed files
 *                                     (and a wheelhouse's, with --wheelhouse DIR)
 *   diff MANIFEST                     the installed files against it (idem)
 *
 * The signature is checked by the library's own code
 * (lib/manifest_verify.c), so "verify" accepts exactly what
 * ci_session_new() would; keys and signing are the tool's own (keys.c).
 * docs/manifest-format.md specifies the format.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli.h"
#include "codeinterp.h"
#include "manifest.h"
#include "manifest_doc.h"

static const char usage_text[] =
    "usage: codeinterp-manifest COMMAND [OPTION...] [ARG...]\n"
    "\n"
    "Signed package manifests for codeinterp: the distributions, and every\n"
    "file of them with its SHA-256, that a sandboxed interpreter may import.\n"
    "\n"
    "commands:\n"
    "  keygen NAME                       write the key pair NAME.key (secret, 0600)\n"
    "                                    and NAME.pub (public, 0644); never overwrites\n"
    "  create --packages A,B,... [--path DIR]... [--wheelhouse DIR]\n"
    "         [--python PYTHON] [-o FILE]\n"
    "                                    an unsigned manifest of A, B and what they\n"
    "                                    depend on, from what is installed, and of\n"
    "                                    the wheels of a wheelhouse\n"
    "  sign --key NAME.key MANIFEST [-o OUT]\n"
    "                                    sign MANIFEST (in place unless -o)\n"
    "  verify --key NAME.pub [--signature-only] [--wheelhouse DIR] MANIFEST\n"
    "                                    check its signature, then the installed files\n"
    "  diff [--wheelhouse DIR] MANIFEST  name every changed, missing or extra file\n"
    "  keyid NAME.pub                    print the key id of a public key, as the\n"
    "                                    messages of a wrong key name it\n"
    "\n"
    "'codeinterp-manifest COMMAND --help' describes one command.\n"
    "Exit status: 0 success; 1 findings, or a manifest that fails verification;\n"
    "2 a usage or input/output error.\n";

static const char keygen_help[] =
    "usage: codeinterp-manifest keygen NAME\n"
    "\n"
    "Makes an Ed25519 key pair and writes NAME.key (the secret key, mode 0600)\n"
    "and NAME.pub (the public key, mode 0644). Refuses if either exists.\n"
    "Keep NAME.key where only the signer can read it; give NAME.pub to the\n"
    "hosts that verify (ci_config_set_manifest).\n";

static const char sign_help[] =
    "usage: codeinterp-manifest sign --key NAME.key MANIFEST [-o OUT]\n"
    "\n"
    "Signs the canonical bytes of MANIFEST with the secret key, replacing any\n"
    "earlier signature; a MANIFEST the format refuses gets a warning (the\n"
    "library will refuse it after the signature). Writes MANIFEST itself\n"
    "(through a temporary file renamed over it) unless -o OUT names another.\n"
    "\n"
    "  -k, --key FILE     the secret key file (keygen's NAME.key)\n"
    "  -o, --output FILE  write the signed manifest here; '-' is standard output\n";

static const char verify_help[] =
    "usage: codeinterp-manifest verify --key NAME.pub [--signature-only]\n"
    "                                  [--wheelhouse DIR] MANIFEST\n"
    "\n"
    "Checks the signature of MANIFEST with the public key exactly as the\n"
    "codeinterp library does, then compares the installed files (and the\n"
    "wheelhouse's) with it as diff does. Findings go to standard output, one a\n"
    "line; the summary, with the number of wheels listed, to standard error.\n"
    "\n"
    "  -k, --key FILE       the public key file (keygen's NAME.pub)\n"
    "  -s, --signature-only check the signature and the format only\n"
    "  -w, --wheelhouse DIR compare the wheels of DIR with the listed ones too\n";

static const char diff_help[] =
    "usage: codeinterp-manifest diff [--wheelhouse DIR] MANIFEST\n"
    "\n"
    "Compares the installed files with MANIFEST, signed or not (no key is\n"
    "needed, and the signature is not checked), and prints one line per\n"
    "finding on standard output:\n"
    "  changed PATH      its SHA-256 is not the listed one\n"
    "  missing PATH      listed, but absent or not a regular file\n"
    "  extra PATH        not listed, inside a listed package's directory, or a\n"
    "                    .pth file in a search-path directory\n"
    "  unreadable PATH   listed, but could not be read (the reason follows)\n"
    "With --wheelhouse DIR (-w), the wheels too: DIR/FILE is changed when its\n"
    "SHA-256 is not the listed one, missing when it is absent or not a regular\n"
    "file (a link is not one: the host does not follow it), and extra when it\n"
    "is a *.whl regular file that is not listed.\n"
    "Exit status 1 if there is any finding.\n";

void ci_manifest_cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("codeinterp-manifest: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int ci_manifest_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "codeinterp-manifest: %s%s", cmd, *cmd ? ": " : "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'codeinterp-manifest %s%s--help'.\n", cmd, *cmd ? " " : "");
    va_end(ap);
    return CI_MANIFEST_CLI_ERROR;
}

double ci_manifest_cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ci_manifest_cli_write_json(const json_t *doc, const char *path, unsigned mode)
{
    const size_t flags = JSON_INDENT(1) | JSON_SORT_KEYS;
    if (!strcmp(path, "-")) {
        if (json_dumpf(doc, stdout, flags) != 0 || fputc('\n', stdout) == EOF ||
            fflush(stdout) != 0) {
            ci_manifest_cli_err("cannot write the manifest to standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        ci_manifest_cli_err("out of memory");
        return -1;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp-XXXXXX", 12);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        ci_manifest_cli_err("%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    int ok = f && fchmod(fd, mode) == 0 && json_dumpf(doc, f, flags) == 0 &&
             fputc('\n', f) != EOF && fflush(f) == 0 && fsync(fd) == 0;
    int e = errno;
    if (f ? fclose(f) != 0 : close(fd) != 0)
        ok = ok ? (e = errno, 0) : 0;
    if (ok && rename(tmp, path) != 0) {
        e = errno;
        ok = 0;
    }
    if (!ok) {
        ci_manifest_cli_err("%s: cannot write: %s", path, strerror(e));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

/* Exit status for a library code: 1 for a manifest at fault, else 2. */
static int status_of(int rc)
{
    return rc == CI_EMANIFEST ? CI_MANIFEST_CLI_FINDINGS : CI_MANIFEST_CLI_ERROR;
}

/* Says why @err failed ("out of memory" for CI_ENOMEM, which carries no
 * message) and returns @status. */
static int fail(const struct ci_err *err, int status)
{
    ci_manifest_cli_err("%s", err->code == CI_ENOMEM ? "out of memory" : err->msg);
    return status;
}

/* After a command's options: its one operand, @what (NAME, MANIFEST), in
 * *@arg and -1; else the usage error's status. */
static int one_operand(int argc, char **argv, const char *cmd, const char *what,
                       const char **arg)
{
    if (argc - optind != 1)
        return ci_manifest_cli_usage_error(cmd, argc == optind ? "%s is missing" : "one %s only", what);
    *arg = argv[optind];
    return -1;
}

/* A command whose only option is --help, and its one operand @what:
 * -1 with it in *@arg, else the status (help printed, or a usage error). */
static int help_and_operand(int argc, char **argv, const char *cmd, const char *help,
                            const char *what, const char **arg)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return CI_MANIFEST_CLI_OK;
        }
        return ci_manifest_cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
    }
    return one_operand(argc, argv, cmd, what, arg);
}

/* ---- keygen ---- */

static int cmd_keygen(int argc, char **argv)
{
    const char *name;
    int status = help_and_operand(argc, argv, "keygen", keygen_help, "NAME", &name);
    if (status >= 0)
        return status;
    if (!*name)
        return ci_manifest_cli_usage_error("keygen", "NAME is empty");
    struct ci_err err;
    int rc = ci_manifest_keygen(name, &err);
    if (rc != CI_OK)
        return fail(&err, CI_MANIFEST_CLI_ERROR);
    unsigned char pk[32];
    char id[CI_MANIFEST_KEY_ID_LEN + 1] = "?";
    char pub[4096];
    snprintf(pub, sizeof pub, "%s.pub", name);
    if (ci_manifest_read_public_key(pub, pk, &err) == CI_OK)
        ci_manifest_key_id(pk, id);
    fprintf(stderr, "codeinterp-manifest: wrote %s.key (secret, mode 0600) and %s.pub (public); key id %s\n",
            name, name, id);
    return CI_MANIFEST_CLI_OK;
}

/* ---- keyid ---- */

static int cmd_keyid(int argc, char **argv)
{
    unsigned char pk[32];
    char id[CI_MANIFEST_KEY_ID_LEN + 1];
    struct ci_err err;

    if (argc != 2 || argv[1][0] == '-') {
        if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            fputs("usage: codeinterp-manifest keyid NAME.pub\n\nPrints the key id of the public"
                  " key in NAME.pub: the first 8 bytes of its\nSHA-256, in hex, as a manifest's"
                  " signature and codeinterp's messages name it.\n", stdout);
            return CI_MANIFEST_CLI_OK;
        }
        return ci_manifest_cli_usage_error("keyid", "one NAME.pub, and nothing else");
    }
    if (ci_manifest_read_public_key(argv[1], pk, &err) != CI_OK)
        return fail(&err, CI_MANIFEST_CLI_ERROR);
    ci_manifest_key_id(pk, id);
    printf("%s\n", id);
    return CI_MANIFEST_CLI_OK;
}

/* ---- sign ---- */

static int cmd_sign(int argc, char **argv)
{
    static const struct option opts[] = {{"key", required_argument, NULL, 'k'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    const char *key = NULL, *out = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":k:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'k': key = optarg; break;
        case 'o': out = optarg; break;
        case 'h': fputs(sign_help, stdout); return CI_MANIFEST_CLI_OK;
        case ':': return ci_manifest_cli_usage_error("sign", "'%s' needs a value", argv[optind - 1]);
        default: return ci_manifest_cli_usage_error("sign", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!key)
        return ci_manifest_cli_usage_error("sign", "--key NAME.key is missing");
    const char *path;
    int status = one_operand(argc, argv, "sign", "MANIFEST", &path);
    if (status >= 0)
        return status;
    struct ci_err err;
    unsigned char sk[64];
    int rc = ci_manifest_read_secret_key(key, sk, &err);
    if (rc != CI_OK)
        return fail(&err, CI_MANIFEST_CLI_ERROR);
    json_t *doc = NULL;
    rc = ci_manifest_load(path, &doc, NULL, &err);
    /* A body the format refuses is signed all the same (a tamper test
     * needs one), with a warning: the signature does not make it valid,
     * and the library refuses it after checking the signature. */
    int body = rc == CI_OK ? ci_manifest_check_body(doc, path, &err) : CI_OK;
    if (body == CI_ENOMEM)
        rc = CI_ENOMEM;
    else if (body != CI_OK)
        ci_manifest_cli_err("warning: %s; signed anyway, but codeinterp will refuse it", err.msg);
    if (rc == CI_OK)
        rc = ci_manifest_sign(doc, sk, &err);
    sodium_memzero(sk, sizeof sk);
    if (rc != CI_OK) {
        json_decref(doc);
        return fail(&err, status_of(rc));
    }
    /* In place keeps the old file's mode; a new file gets 0644. */
    const char *dest = out ? out : path;
    struct stat st;
    unsigned mode = stat(dest, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0644;
    int w = ci_manifest_cli_write_json(doc, dest, mode);
    const char *id = json_string_value(json_object_get(json_object_get(doc, "signature"), "key_id"));
    if (w == 0 && strcmp(dest, "-"))
        fprintf(stderr, "codeinterp-manifest: signed %s with key id %s\n", dest, id);
    json_decref(doc);
    return w == 0 ? CI_MANIFEST_CLI_OK : CI_MANIFEST_CLI_ERROR;
}

/* ---- verify and diff ---- */

struct report {
    unsigned long counts[CI_MANIFEST_UNSAFE + 1];
};

/* @s on one line: control bytes as \xNN, since an extra file's name is
 * whatever is on disk. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f || c == '\\')
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

static int report_finding(void *ctx, enum ci_manifest_finding what, const char *path, const char *detail)
{
    struct report *r = ctx;
    if ((unsigned)what <= CI_MANIFEST_UNSAFE)
        r->counts[what]++;
    printf("%s ", ci_manifest_finding_name(what));
    put_escaped(stdout, path);
    if (detail) {
        fputs(" (", stdout);
        put_escaped(stdout, detail);
        fputc(')', stdout);
    }
    fputc('\n', stdout);
    return 0;
}

/* A *.whl name: what create lists from a wheelhouse. */
static int is_wheel_name(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".whl");
}

/* Wheel @w of a checked document against @dir/<file>, as the host reads
 * it (a regular file, no link followed): 1 finding reported, or 0; -1 if
 * memory ran out. */
static long compare_wheel(const char *dir, const json_t *w, struct report *r)
{
    const char *file = json_string_value(json_object_get(w, "file"));
    const char *want = json_string_value(json_object_get(w, "sha256"));
    char *path, hex[65];
    unsigned char sha[32];
    struct stat st;
    long n = 1;
    int found;

    if (asprintf(&path, "%s/%s", dir, file) < 0)
        return -1;
    found = lstat(path, &st) == 0;
    if (!found && errno != ENOENT)
        report_finding(r, CI_MANIFEST_UNREADABLE, path, strerror(errno));
    else if (!found || !S_ISREG(st.st_mode))
        report_finding(r, CI_MANIFEST_MISSING, path,
                       !found                ? NULL
                       : S_ISLNK(st.st_mode) ? "a symbolic link, which the host does not follow"
                                             : "not a regular file");
    else if (ci_manifest_sha256_file(path, sha, NULL) != 0)
        report_finding(r, CI_MANIFEST_UNREADABLE, path, strerror(errno));
    else if (sodium_bin2hex(hex, sizeof hex, sha, sizeof sha), strcmp(hex, want))
        report_finding(r, CI_MANIFEST_CHANGED, path, NULL);
    else
        n = 0; /* as listed */
    free(path);
    return n;
}

/* The wheels of @doc against the wheelhouse @dir: each listed one as
 * compare_wheel() finds it, then each *.whl regular file not listed. The
 * number of findings, or -1 after saying why. */
static long compare_wheelhouse(const json_t *doc, const char *dir, struct report *r)
{
    const json_t *wheels = json_object_get(doc, "wheels");
    long n = 0, k;
    DIR *d;
    struct dirent *e;

    for (size_t i = 0; i < json_array_size(wheels); i++) {
        if ((k = compare_wheel(dir, json_array_get(wheels, i), r)) < 0) {
            ci_manifest_cli_err("out of memory");
            return -1;
        }
        n += k;
    }
    if (!(d = opendir(dir))) {
        ci_manifest_cli_err("--wheelhouse %s: %s", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d))) {
        struct stat st;
        size_t i = 0;
        if (!is_wheel_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        while (i < json_array_size(wheels) &&
               strcmp(json_string_value(json_object_get(json_array_get(wheels, i), "file")), e->d_name))
            i++;
        if (i == json_array_size(wheels)) {
            char *path;
            if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
                closedir(d);
                ci_manifest_cli_err("out of memory");
                return -1;
            }
            report_finding(r, CI_MANIFEST_EXTRA, path, NULL);
            free(path);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Compares the installed files with @policy, and with @wheelhouse (NULL:
 * not) the wheels @doc lists; prints the findings and a summary on
 * stderr. CI_MANIFEST_CLI_OK, CI_MANIFEST_CLI_FINDINGS or
 * CI_MANIFEST_CLI_ERROR. */
static int compare_files(const char *path, const json_t *doc, const char *wheelhouse,
                         const char *policy, size_t len, double t0)
{
    struct ci_manifest_policy p;
    struct ci_err err;
    size_t nwheels = json_array_size(json_object_get(doc, "wheels"));
    if (ci_manifest_policy_parse(policy, len, &p, &err) != 0) {
        /* our own text from a valid document: a bug, not the manifest's fault */
        ci_manifest_cli_err("manifest %s: its policy text does not parse: %s", path, err.msg);
        ci_manifest_policy_free(&p);
        return CI_MANIFEST_CLI_ERROR;
    }
    struct report r = {{0}};
    long n = ci_manifest_compare(&p, report_finding, &r), w = 0;
    size_t nfiles = p.n_files;
    ci_manifest_policy_free(&p);
    if (n < 0) {
        fflush(stdout);
        ci_manifest_cli_err("out of memory while comparing the installed files");
        return CI_MANIFEST_CLI_ERROR;
    }
    if (wheelhouse && (w = compare_wheelhouse(doc, wheelhouse, &r)) < 0)
        return CI_MANIFEST_CLI_ERROR;
    fflush(stdout);
    n += w;
    char wl[96] = "";
    if (n == 0) {
        if (wheelhouse)
            snprintf(wl, sizeof wl, "; the %zu listed wheel%s as listed, no extra wheel", nwheels,
                     nwheels == 1 ? "" : "s");
        else if (nwheels)
            snprintf(wl, sizeof wl, "; %zu wheel%s listed, not compared (no --wheelhouse)",
                     nwheels, nwheels == 1 ? "" : "s");
        fprintf(stderr,
                "codeinterp-manifest: %s: all %zu listed files as listed, no extra file%s (%.2f "
                "s)\n",
                path, nfiles, wl, ci_manifest_cli_now() - t0);
        return CI_MANIFEST_CLI_OK;
    }
    if (wheelhouse || nwheels)
        snprintf(wl, sizeof wl, ", %zu wheel%s", nwheels, nwheels == 1 ? "" : "s");
    fprintf(stderr,
            "codeinterp-manifest: %s: %ld finding%s: %lu changed, %lu missing, %lu extra, %lu "
            "unreadable, %lu unsafe (%zu files%s listed; %.2f s)\n",
            path, n, n == 1 ? "" : "s", r.counts[CI_MANIFEST_CHANGED], r.counts[CI_MANIFEST_MISSING],
            r.counts[CI_MANIFEST_EXTRA], r.counts[CI_MANIFEST_UNREADABLE], r.counts[CI_MANIFEST_UNSAFE], nfiles,
            wl, ci_manifest_cli_now() - t0);
    return CI_MANIFEST_CLI_FINDINGS;
}

static int cmd_verify(int argc, char **argv)
{
    static const struct option opts[] = {{"key", required_argument, NULL, 'k'},
                                         {"signature-only", no_argument, NULL, 's'},
                                         {"wheelhouse", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    const char *key = NULL, *wheelhouse = NULL;
    int sig_only = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":k:sw:h", opts, NULL)) != -1) {
        switch (c) {
        case 'k': key = optarg; break;
        case 's': sig_only = 1; break;
        case 'w': wheelhouse = optarg; break;
        case 'h': fputs(verify_help, stdout); return CI_MANIFEST_CLI_OK;
        case ':': return ci_manifest_cli_usage_error("verify", "'%s' needs a value", argv[optind - 1]);
        default: return ci_manifest_cli_usage_error("verify", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!key)
        return ci_manifest_cli_usage_error("verify", "--key NAME.pub is missing");
    const char *path;
    int status = one_operand(argc, argv, "verify", "MANIFEST", &path);
    if (status >= 0)
        return status;
    double t0 = ci_manifest_cli_now();
    struct ci_err err;
    unsigned char pk[32], digest[32];
    if (ci_manifest_read_public_key(key, pk, &err) != CI_OK)
        return fail(&err, CI_MANIFEST_CLI_ERROR);
    json_t *doc;
    int rc = ci_manifest_load(path, &doc, NULL, &err);
    if (rc != CI_OK)
        return fail(&err, status_of(rc));
    char *policy = NULL;
    size_t len = 0, nwheels = json_array_size(json_object_get(doc, "wheels"));
    rc = ci_manifest_verify_json(doc, path, pk, &policy, &len, digest, &err);
    if (rc != CI_OK) {
        json_decref(doc);
        return fail(&err, status_of(rc));
    }
    char id[CI_MANIFEST_KEY_ID_LEN + 1], hex[65];
    ci_manifest_key_id(pk, id);
    sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
    fprintf(stderr,
            "codeinterp-manifest: %s: good signature by key id %s (canonical SHA-256 %s); %zu "
            "wheel%s listed\n",
            path, id, hex, nwheels, nwheels == 1 ? "" : "s");
    status = sig_only ? CI_MANIFEST_CLI_OK : compare_files(path, doc, wheelhouse, policy, len, t0);
    free(policy);
    json_decref(doc);
    return status;
}

static int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {{"wheelhouse", required_argument, NULL, 'w'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0, 0, 0, 0}};
    const char *path, *wheelhouse = NULL;
    int status, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":w:h", opts, NULL)) != -1) {
        switch (c) {
        case 'w': wheelhouse = optarg; break;
        case 'h': fputs(diff_help, stdout); return CI_MANIFEST_CLI_OK;
        case ':': return ci_manifest_cli_usage_error("diff", "'%s' needs a value", argv[optind - 1]);
        default: return ci_manifest_cli_usage_error("diff", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if ((status = one_operand(argc, argv, "diff", "MANIFEST", &path)) >= 0)
        return status;
    double t0 = ci_manifest_cli_now();
    struct ci_err err;
    json_t *doc;
    int rc = ci_manifest_load(path, &doc, NULL, &err);
    if (rc == CI_OK)
        rc = ci_manifest_check_body(doc, path, &err);
    char *policy = NULL;
    size_t len = 0;
    if (rc == CI_OK)
        rc = ci_manifest_policy_text(doc, path, &policy, &len, &err);
    if (rc != CI_OK) {
        json_decref(doc);
        return fail(&err, status_of(rc));
    }
    status = compare_files(path, doc, wheelhouse, policy, len, t0);
    free(policy);
    json_decref(doc);
    return status;
}

int main(int argc, char **argv)
{
    if (sodium_init() < 0) {
        ci_manifest_cli_err("libsodium could not be initialised");
        return CI_MANIFEST_CLI_ERROR;
    }
    if (argc < 2) {
        fputs(usage_text, stderr);
        return CI_MANIFEST_CLI_ERROR;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        return CI_MANIFEST_CLI_OK;
    }
    /* Each command parses argv[1..]: its own name is its argv[0]. */
    optind = 1;
    if (!strcmp(cmd, "keygen"))
        return cmd_keygen(argc - 1, argv + 1);
    if (!strcmp(cmd, "create"))
        return ci_manifest_cli_create(argc - 1, argv + 1);
    if (!strcmp(cmd, "sign"))
        return cmd_sign(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify"))
        return cmd_verify(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff"))
        return cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "keyid"))
        return cmd_keyid(argc - 1, argv + 1);
    return ci_manifest_cli_usage_error("", "unknown command '%s' (keygen, create, sign, verify, diff, keyid)",
                           cmd);
}
