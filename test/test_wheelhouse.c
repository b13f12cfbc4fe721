/*
 * The signed wheelhouse (ci_config_set_wheelhouse), end to end: wheels
 * built from test/wheels (build.py, offline, with Debian's setuptools)
 * are listed by codeinterp-manifest create --wheelhouse and signed; a
 * session under that manifest installs them with %pip, !pip and
 * pip.main, dependencies resolved inside the wheelhouse, a C extension
 * that loads from the site directory, and imports them on the next line
 * and after a restart. What must be refused is: a name the wheelhouse
 * lacks (the message lists what it has), a wheel changed or added after
 * signing, one that would shadow the manifest's numpy, and the hostile
 * wheels (an entry "../escape.py", a symbolic link, an absolute path),
 * none of which writes anything outside the site directory. Of an attack
 * review: a wheel whose entry inflates to more than its zip headers say
 * is refused and leaves nothing; a UTF-8 entry name installs in this
 * C-locale program (it never calls setlocale); a NUL in the file name
 * the cell asks for is a ValueError and the worker lives; the site
 * directory and its files are the host's, readable by the worker only.
 * The cell can write and chmod nothing of the site directory, and the
 * sandbox's layers stay what they were. A wheelhouse needs a manifest and must be
 * a directory; without one, %pip install says it is not enabled.
 */
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <libgen.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

/* The wheels' sources and their build script, beside the cells. */
#define WHEELS_SRC CI_TEST_CELLS "/../wheels"

static char *tmp;        /* the test's own directory */
static char *built;      /* <tmp>/built: every wheel build.py made */
static char *wheelhouse; /* <tmp>/wh: the listed wheels */
static char *tool;       /* build/codeinterp-manifest */
static char *manifest;   /* <tmp>/m.json, signed with <tmp>/key.key */
static char *pub;
static char *fast_whl;   /* ci_fast's file name (its tag is the platform's) */
static int signed_ok;    /* the manifest was made and signed */

#define BETA1 "ci_beta-1.0-py3-none-any.whl"
#define BETA2 "ci_beta-2.0-py3-none-any.whl"
#define ALPHA "ci_alpha-1.0-py3-none-any.whl"
#define GAMMA "ci_gamma-1.0-py3-none-any.whl"
#define SHADOW "ci_numpy_shadow-1.0-py3-none-any.whl"
#define ESCAPE "ci_escape-1.0-py3-none-any.whl"
#define SYMLINK "ci_symlink-1.0-py3-none-any.whl"
#define ABSPATH "ci_abspath-1.0-py3-none-any.whl"
#define BOMB "ci_bomb-1.0-py3-none-any.whl"
#define UNICODE "ci_unicode-1.0-py3-none-any.whl"
/* ci_unicode's module, its name in UTF-8 ("dátá.py"). */
#define UNICODE_MODULE "d\xc3\xa1t\xc3\xa1.py"
/* The group the workers of a root host run in (CI_WORKER_GID). */
#define WORKER_GID 65534
/* Where ci_abspath's absolute entry points. */
#define ABS_TARGET "/tmp/ci_abspath_escape.py"

/* Runs the command line @cmd (from h_fmt; freed): 0 if it exits 0, else
 * -1, saying which on stderr (a group setup may not fail a test). */
static int sh(char *cmd)
{
    int st = system(cmd), rc = 0;

    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "test_wheelhouse: command failed (status %d): %s\n", st, cmd);
        rc = -1;
    }
    free(cmd);
    return rc;
}

/* The lowercase hex SHA-256 of the file @path; NULL if unreadable. */
static char *file_sha256(const char *path)
{
    unsigned char sum[crypto_hash_sha256_BYTES];
    char hex[2 * sizeof sum + 1];
    size_t len;
    char *data = h_read_file(path, &len);

    if (!data)
        return NULL;
    crypto_hash_sha256(sum, (const unsigned char *)data, len);
    free(data);
    sodium_bin2hex(hex, sizeof hex, sum, sizeof sum);
    return strdup(hex);
}

/* The hostile wheels are listed by the test itself, after create: the
 * host must refuse them even when a signed manifest lists them. */
static int list_hostile(const char *file, const char *name)
{
    json_error_t e;
    json_t *j = json_load_file(manifest, 0, &e), *wheels;
    char *path = h_fmt("%s/%s", wheelhouse, file), *sum;
    int rc = -1;

    if (!j) {
        fprintf(stderr, "test_wheelhouse: %s does not parse: %s\n", manifest, e.text);
        free(path);
        return -1;
    }
    if (!(wheels = json_object_get(j, "wheels"))) {
        wheels = json_array();
        json_object_set_new(j, "wheels", wheels);
    }
    if ((sum = file_sha256(path)) &&
        !json_array_append_new(wheels, json_pack("{s:s, s:s, s:s, s:s, s:[]}", "file", file,
                                                 "sha256", sum, "name", name, "version", "1.0",
                                                 "requires")) &&
        !json_dump_file(j, manifest, JSON_INDENT(1)))
        rc = 0;
    free(sum);
    free(path);
    json_decref(j);
    return rc;
}

static int group_setup(void **state)
{
    char *build = h_build_dir();

    if (!build || sodium_init() < 0)
        return -1;
    tool = h_fmt("%s/codeinterp-manifest", build);
    free(build);
    tmp = h_tmpdir();
    built = h_fmt("%s/built", tmp);
    wheelhouse = h_fmt("%s/wh", tmp);
    manifest = h_fmt("%s/m.json", tmp);
    pub = h_fmt("%s/key.pub", tmp);
    if (sh(h_fmt("/usr/bin/python3 %s/build.py %s > /dev/null", WHEELS_SRC, built)))
        return -1;
    {
        char *cmd = h_fmt("cd %s && ls ci_fast-1.0-*.whl", built), line[300] = "";
        FILE *f = popen(cmd, "r");
        free(cmd);
        if (!f || !fgets(line, sizeof line, f) || pclose(f) != 0)
            return -1;
        line[strcspn(line, "\n")] = '\0';
        fast_whl = strdup(line);
    }
    /* The wheelhouse create lists: the good wheels and the shadowing one.
     * A failure from here on fails each test that needs the manifest
     * (wheel_session), not the group: the others still run. */
    if (sh(h_fmt("mkdir %s && cd %s && cp " BETA1 " " BETA2 " " ALPHA " %s " SHADOW " %s",
                 wheelhouse, built, fast_whl, wheelhouse)) ||
        sh(h_fmt("cd %s && %s keygen key > /dev/null 2>&1", tmp, tool)) ||
        sh(h_fmt("%s create --packages numpy,pandas,matplotlib --wheelhouse %s -o %s", tool,
                 wheelhouse, manifest)))
        return 0;
    if (sh(h_fmt("cd %s && cp " ESCAPE " " SYMLINK " " ABSPATH " " BOMB " " UNICODE " %s", built,
                 wheelhouse)) ||
        list_hostile(ESCAPE, "ci-escape") || list_hostile(SYMLINK, "ci-symlink") ||
        list_hostile(ABSPATH, "ci-abspath") || list_hostile(BOMB, "ci-bomb") ||
        list_hostile(UNICODE, "ci-unicode") ||
        sh(h_fmt("%s sign --key %s/key.key %s > /dev/null", tool, tmp, manifest)))
        return 0;
    chmod(manifest, 0644);
    signed_ok = 1;
    return 0;
}

static int group_teardown(void **state)
{
    h_rmtree(tmp);
    free(tmp), free(built), free(wheelhouse), free(tool), free(manifest), free(pub);
    free(fast_whl);
    return 0;
}

/* A config under the test's manifest with its wheelhouse. */
static ci_config *wheel_config(void)
{
    ci_config *cfg = ci_config_new();

    if (!signed_ok)
        fail_msg("no signed manifest of the wheelhouse: the group setup's create or sign "
                 "failed (its command is printed above)");
    assert_non_null(cfg);
    assert_int_equal(ci_config_set_manifest(cfg, manifest, pub), CI_OK);
    assert_int_equal(ci_config_set_wheelhouse(cfg, wheelhouse), CI_OK);
    /* The zygote hashes every listed file of numpy, pandas and matplotlib
     * before its READY. */
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 200000), CI_OK);
    assert_int_equal(ci_config_set_timeout_ms(cfg, 60000), CI_OK);
    return cfg;
}

/* A session under the manifest needs Landlock (its read rules): where
 * this kernel or container refuses it, the calling test is skipped. */
#define require_landlock() require_landlock_(__func__)
static int require_landlock_(const char *test)
{
    const struct h_probe *p = h_probe(1);

    if (p->landlock || (p->unknown & CI_SANDBOX_LANDLOCK))
        return 1;
    h_skip_because_(test, "a wheelhouse needs a signed manifest, whose read rules need Landlock, "
                          "which this kernel or container refuses (probed)");
    return 0;
}

/* A new session of wheel_config(); asserts it starts. */
static ci_session *wheel_session(void)
{
    ci_config *cfg = wheel_config();
    ci_session *s = NULL;
    int rc = ci_session_new(&s, cfg);

    ci_config_free(cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %s: %s", ci_strerror(rc), ci_session_errmsg(NULL));
    return s;
}

/* Runs @code, asserts @want, and returns its stdout, stderr and error
 * message joined (malloc'ed): what a user of pip reads. */
static char *pip_text(ci_session *s, const char *code, ci_status want)
{
    ci_result *r = h_run_status(s, code, want);
    const char *out = ci_result_stdout(r, NULL), *err = ci_result_stderr(r, NULL);
    const char *ev = ci_result_error_value(r);
    char *text = h_fmt("%s%s%s", out ? out : "", err ? err : "", ev ? ev : "");

    ci_result_free(r);
    return text;
}

/* %pip @line must succeed; returns what it printed. */
static char *pip_ok(ci_session *s, const char *line)
{
    return pip_text(s, line, CI_STATUS_OK);
}

/* The host's answer to the cell's own INSTALL of @file, past pip.py:
 * "status: message". */
static char *host_install(ci_session *s, const char *file)
{
    char *cell = h_cell("wheel_host_install"), *code = h_fmt("WHEEL = %s\n%s", file, cell);
    char *v = h_worker_string(s, code);

    free(code), free(cell);
    return v;
}

/* The cell test/cells/wheel_pip_main.py, pip.main(['install', @package]),
 * run to @want. */
static ci_result *pip_main(ci_session *s, const char *package, ci_status want)
{
    char *cell = h_cell("wheel_pip_main"), *code = h_fmt("PACKAGE = '%s'\n%s", package, cell);
    ci_result *r = h_run_status(s, code, want);

    free(code), free(cell);
    return r;
}

/* The session directory, from the host's side: the workspace's parent. */
static char *session_dir(ci_session *s)
{
    char *ws = strdup(ci_session_workspace(s));

    assert_non_null(ws);
    char *dir = strdup(dirname(ws));
    free(ws);
    return dir;
}

/* %pip install ci_beta==1.0, then the import on the next line, show and
 * list naming it. */
static void test_pip_install_and_import(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install ci_beta==1.0");

    h_assert_contains(out, "Successfully installed ci-beta-1.0");
    free(out);
    h_expect_cell(s, "wheel_beta_version", "'1.0'", NULL);
    out = pip_ok(s, "%pip show ci_beta");
    h_assert_contains(out, "Name: ci-beta");
    h_assert_contains(out, "Version: 1.0");
    free(out);
    out = pip_ok(s, "%pip list");
    h_assert_contains(out, "ci-beta");
    h_assert_contains(out, "numpy");
    free(out);
    /* ci_alpha needs ci-beta>=2.0, and 1.0 is installed: a session never
     * replaces one, so nothing is installed. */
    out = pip_ok(s, "%pip install ci_alpha");
    h_assert_contains(out, "ERROR: Cannot install ci-beta>=2.0");
    h_assert_contains(out, "ci-beta 1.0 is installed");
    h_assert_not_contains(out, "Successfully installed");
    free(out);
    h_expect_error(s, "import ci_alpha", "ModuleNotFoundError", NULL);
    /* The files are in the session's site directory, beside the workspace. */
    char *dir = session_dir(s), *init = h_fmt("%s/site/ci_beta/__init__.py", dir);
    assert_int_equal(access(init, R_OK), 0);
    free(init), free(dir);
    ci_session_free(s);
}

/* ci_alpha needs ci-beta>=2.0: both come from the wheelhouse. */
static void test_dependency_from_the_wheelhouse(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install ci_alpha");

    h_assert_contains(out, "Successfully installed");
    h_assert_contains(out, "ci-alpha-1.0");
    h_assert_contains(out, "ci-beta-2.0");
    h_assert_not_contains(out, "ci-beta-1.0");
    free(out);
    h_expect_cell(s, "wheel_alpha_versions", "('1.0', '2.0', '2.0')", NULL);
    ci_session_free(s);
}

/* ci_fast's extension module maps from the site directory (not noexec)
 * and computes in C. */
static void test_compiled_extension_loads(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install ci_fast");
    char *dir = session_dir(s), *site = h_fmt("%s/site", dir);
    struct statvfs vfs;

    h_assert_contains(out, "Successfully installed ci-fast-1.0");
    free(out);
    /* A noexec of the host's own mount of the site directory (a root
     * host's session tmpfs) the worker's bind lifts, except where a user
     * namespace of its own keeps it locked (docs/wheelhouse.md): only
     * then may the .so fail to map, and the test is skipped. */
    assert_int_equal(statvfs(site, &vfs), 0);
    free(site), free(dir);
    char *cell = h_cell("wheel_fast_speed");
    ci_result *r = h_run(s, cell);

    free(cell);
    if (ci_result_status(r) == CI_STATUS_ERROR && (vfs.f_flag & ST_NOEXEC) &&
        (ci_session_sandbox(s) & CI_SANDBOX_USERNS) &&
        strstr(ci_result_error_value(r), "failed to map segment")) {
        ci_result_free(r);
        ci_session_free(s);
        h_skip_because("the site directory is on a noexec mount of the host's, which the "
                       "worker's user namespace keeps locked: an extension cannot be mapped");
        return;
    }
    if (ci_result_status(r) != CI_STATUS_OK) {
        h_dump(r);
        fail_msg("ci_fast's extension module does not load");
    }
    h_assert_str(ci_result_value(r), "(2880067194370816120, True)");
    ci_result_free(r);
    h_expect_error(s, "ci_fast.fib(93)", "ValueError", "n must be in 0..92");
    ci_session_free(s);
}

/* !pip install and pip.main(['install', ...]) install as %pip does. */
static void test_shell_pip_and_pip_main(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "!pip install ci_beta");

    h_assert_contains(out, "Successfully installed ci-beta-2.0");
    free(out);
    h_expect_cell(s, "wheel_beta_version", "'2.0'", NULL);
    ci_result *r = pip_main(s, "ci_fast", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "0");
    h_assert_contains(ci_result_stdout(r, NULL), "Successfully installed ci-fast-1.0");
    ci_result_free(r);
    h_expect_cell(s, "wheel_fast_fib", "55", NULL);
    ci_session_free(s);
}

/* A name the wheelhouse lacks: pip's words, and what can be installed. */
static void test_not_in_the_wheelhouse_lists_what_is(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install nonexistent");

    h_assert_contains(out, "ERROR: Could not find a version that satisfies the requirement "
                           "nonexistent (from versions: none)");
    h_assert_contains(out, "ERROR: No matching distribution found for nonexistent");
    h_assert_contains(out, "The session's wheelhouse offers: ");
    h_assert_contains(out, "ci-alpha 1.0");
    h_assert_contains(out, "ci-beta 1.0, 2.0");
    h_assert_contains(out, "ci-fast 1.0");
    free(out);
    /* A version the wheelhouse lacks: the versions it has. */
    out = pip_ok(s, "%pip install ci_beta==3.0");
    h_assert_contains(out, "(from versions: 1.0, 2.0)");
    free(out);
    ci_result *r = pip_main(s, "nonexistent", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "1");
    ci_result_free(r);
    h_expect_error(s, "import nonexistent", "ModuleNotFoundError", NULL);
    ci_session_free(s);
}

/* The listed size of ci_beta 1.0's wheel, which the next test changes:
 * put back by its teardown, for the tests after it, even if it fails. */
static off_t beta1_size = -1;
static int restore_beta1(void **state)
{
    char *path = h_fmt("%s/" BETA1, wheelhouse);

    if (beta1_size >= 0 && truncate(path, beta1_size) != 0)
        fprintf(stderr, "test_wheelhouse: cannot put back %s: %s\n", path, strerror(errno));
    free(path);
    return 0;
}

/* A byte appended to a listed wheel after signing: refused, naming its
 * SHA-256; the original bytes back, it installs. */
static void test_changed_wheel_refused_naming_the_hash(void **state)
{
    if (!require_landlock())
        return;
    char *path = h_fmt("%s/" BETA1, wheelhouse), *listed = file_sha256(path), *changed;
    struct stat st;
    ci_session *s = wheel_session();

    assert_non_null(listed);
    assert_int_equal(stat(path, &st), 0);
    beta1_size = st.st_size;
    {
        FILE *f = fopen(path, "a");
        assert_non_null(f);
        assert_int_equal(fputc('x', f), 'x');
        assert_int_equal(fclose(f), 0);
    }
    changed = file_sha256(path);
    char *out = pip_ok(s, "%pip install ci_beta==1.0");
    h_assert_contains(out, BETA1);
    h_assert_contains(out, "SHA-256");
    h_assert_contains(out, listed);
    h_assert_contains(out, changed);
    h_assert_not_contains(out, "Successfully installed");
    free(out);
    h_expect_error(s, "import ci_beta", "ModuleNotFoundError", NULL);
    /* Nothing of it reached the site directory. */
    char *dir = session_dir(s), *site = h_fmt("%s/site", dir), *names = h_dir_names(site);
    h_assert_str(names, "");
    free(names);
    assert_int_equal(truncate(path, st.st_size), 0);
    out = pip_ok(s, "%pip install ci_beta==1.0");
    h_assert_contains(out, "Successfully installed ci-beta-1.0");
    free(out);
    h_expect_cell(s, "wheel_beta_version", "'1.0'", NULL);
    ci_session_free(s);
    free(site), free(dir), free(changed), free(listed), free(path);
}

/* Takes away the wheel the next test added, even if it failed. */
static int remove_gamma(void **state)
{
    char *gamma = h_fmt("%s/" GAMMA, wheelhouse);

    unlink(gamma);
    free(gamma);
    return 0;
}

/* A wheel put in the directory after signing is not offered, and the
 * host refuses it asked directly; so is a name outside the wheelhouse,
 * and a second install of one installed. */
static void test_unlisted_wheel_not_offered(void **state)
{
    if (!require_landlock())
        return;
    /* A session starts with it there: only what is listed counts. */
    assert_int_equal(sh(h_fmt("cp %s/" GAMMA " %s", built, wheelhouse)), 0);
    ci_session *s = wheel_session();

    char *out = pip_ok(s, "%pip install ci_gamma");
    h_assert_contains(out, "ERROR: No matching distribution found for ci_gamma");
    h_assert_contains(out, "The session's wheelhouse offers: ");
    h_assert_not_contains(out, "ci-gamma");
    h_assert_not_contains(out, "Successfully installed");
    free(out);
    out = host_install(s, "'" GAMMA "'");
    h_assert_contains(out, "refused: the wheel " GAMMA " is not listed");
    free(out);
    h_expect_error(s, "import ci_gamma", "ModuleNotFoundError", NULL);
    /* Names that leave the wheelhouse directory, as the cell's own request. */
    out = host_install(s, "'../m.json'");
    h_assert_contains(out, "refused: ");
    free(out);
    out = host_install(s, "'/etc/passwd'");
    h_assert_contains(out, "refused: ");
    free(out);
    /* Installed once, the second is refused by the host itself. */
    out = host_install(s, "'" BETA2 "'");
    h_assert_contains(out, "done: ");
    free(out);
    out = host_install(s, "'" BETA2 "'");
    h_assert_contains(out, "refused: ");
    h_assert_contains(out, "already installed");
    free(out);
    ci_session_free(s);
}

/* ci_numpy_shadow's top-level package is numpy: refused, and numpy is
 * Debian's still. */
static void test_shadowing_wheel_refused(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install ci_numpy_shadow");

    h_assert_contains(out, SHADOW);
    h_assert_contains(out, "the host refused it");
    h_assert_contains(out, "would shadow the module 'numpy'");
    h_assert_not_contains(out, "Successfully installed");
    free(out);
    out = host_install(s, "'" SHADOW "'");
    h_assert_contains(out, "refused: ");
    h_assert_contains(out, "shadow");
    free(out);
    h_expect_cell(s, "wheel_numpy_untouched",
                  "('/usr/lib/python3/dist-packages/numpy/__init__.py', False)", NULL);
    char *dir = session_dir(s), *site = h_fmt("%s/site", dir), *names = h_dir_names(site);
    h_assert_str(names, "");
    free(names), free(site), free(dir);
    ci_session_free(s);
}

/* nftw's callback: counts the entries named escape.py. */
static int escapes;
static int count_escape(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    if (!strcmp(path + ftw->base, "escape.py")) {
        fprintf(stderr, "found %s\n", path);
        escapes++;
    }
    return 0;
}

/* The hostile wheels: each refused, by %pip and by the host asked
 * directly, and nothing of them anywhere. */
static void test_hostile_wheels_refused(void **state)
{
    if (!require_landlock())
        return;
    static const struct {
        const char *dist, *file, *why;
    } hostile[] = {
        {"ci_escape", ESCAPE, "'..' path component): ../escape.py"},
        {"ci_symlink", SYMLINK, "(a link or a device): ci_symlink/up"},
        {"ci_abspath", ABSPATH, "an absolute, empty or overlong path): " ABS_TARGET},
    };
    ci_session *s = wheel_session();
    char *dir = session_dir(s), *site = h_fmt("%s/site", dir);

    unlink(ABS_TARGET);
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        char *line = h_fmt("%%pip install %s", hostile[i].dist);
        char *out = pip_ok(s, line), *quoted = h_fmt("'%s'", hostile[i].file);
        h_assert_contains(out, hostile[i].file);
        h_assert_contains(out, "the host refused it");
        h_assert_contains(out, hostile[i].why);
        h_assert_not_contains(out, "Successfully installed");
        free(out);
        out = host_install(s, quoted);
        h_assert_contains(out, "refused: ");
        h_assert_contains(out, hostile[i].why);
        free(out);
        char *imp = h_fmt("import %s", hostile[i].dist);
        h_expect_error(s, imp, "ModuleNotFoundError", NULL);
        free(imp), free(quoted), free(line);
    }
    char *names = h_dir_names(site);
    h_assert_str(names, "");
    free(names);
    escapes = 0;
    assert_int_equal(nftw(dir, count_escape, 16, FTW_PHYS), 0);
    assert_int_equal(nftw(tmp, count_escape, 16, FTW_PHYS), 0);
    assert_int_equal(escapes, 0);
    {
        char *parent = h_fmt("%s/../escape.py", dir);
        assert_int_equal(access(parent, F_OK), -1);
        free(parent);
    }
    assert_int_equal(access(ABS_TARGET, F_OK), -1);
    h_expect_cell(s, "wheel_abspath_absent", "False", NULL);
    free(site), free(dir);
    ci_session_free(s);
}

/* ci_bomb's ci_bomb/zeros.bin: 100 bytes, both its zip headers say, and
 * 64 MiB of zeros it inflates to: refused as it is written, by %pip and
 * by the host asked directly, and what was written of it undone. */
static void test_entry_larger_than_its_header_refused(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *dir = session_dir(s), *site = h_fmt("%s/site", dir);
    char *out = pip_ok(s, "%pip install ci_bomb");

    h_assert_contains(out, BOMB);
    h_assert_contains(out, "the host refused it");
    h_assert_contains(out, BOMB " has an entry that unpacks to more than its zip header says: "
                           "ci_bomb/zeros.bin");
    h_assert_not_contains(out, "Successfully installed");
    free(out);
    out = host_install(s, "'" BOMB "'");
    h_assert_str(out, "refused: " BOMB " has an entry that unpacks to more than its zip header "
                      "says: ci_bomb/zeros.bin");
    free(out);
    h_expect_error(s, "import ci_bomb", "ModuleNotFoundError", NULL);
    char *names = h_dir_names(site);
    h_assert_str(names, "");
    free(names), free(site), free(dir);
    ci_session_free(s);
}

/* ci_unicode's module has a UTF-8 name: it installs though this program
 * runs in the C locale (it never calls setlocale), under that name, and
 * imports. */
static void test_utf8_entry_name_installs_in_the_c_locale(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install ci_unicode");

    h_assert_contains(out, "Successfully installed ci-unicode-1.0");
    free(out);
    char *dir = session_dir(s), *module = h_fmt("%s/site/ci_unicode/" UNICODE_MODULE, dir);
    size_t len;
    char *text = h_read_file(module, &len);
    assert_non_null(text);
    h_assert_str(text, "NAME = 'd\xc3\xa1t\xc3\xa1'\n");
    free(text), free(module), free(dir);
    h_expect_cell(s, "wheel_unicode_import", "'d\xc3\xa1t\xc3\xa1'", NULL);
    ci_session_free(s);
}

/* A NUL in the file name the cell asks the host for: a ValueError in the
 * cell, and the worker lives on. */
static void test_nul_in_the_file_name_is_a_value_error(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();

    char *cell = h_cell("wheel_nul_name");
    h_expect_error(s, cell, "ValueError", "host_install(): a wheel's file name holds no NUL");
    free(cell);
    h_expect(s, "1 + 1", "2", NULL);
    char *out = host_install(s, "'" BETA2 "'");
    h_assert_contains(out, "done: ");
    free(out);
    ci_session_free(s);
}

/* Asserts @path's owner, group (unless (gid_t)-1) and mode. */
static void assert_owned(const char *path, uid_t uid, gid_t gid, mode_t mode)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        fail_msg("lstat %s: %s", path, strerror(errno));
    if (st.st_uid != uid || (gid != (gid_t)-1 && st.st_gid != gid) ||
        (st.st_mode & 07777) != mode)
        fail_msg("%s is %u:%u mode %04o, not %u:%d mode %04o", path, (unsigned)st.st_uid,
                 (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777), (unsigned)uid,
                 gid == (gid_t)-1 ? -1 : (int)gid, (unsigned)mode);
}

/* The site directory and what is installed in it are the host's and
 * readable by the worker only: a root host's root:65534, directories
 * 0750 and files 0640; an unprivileged host's its own uid (the group
 * whatever its directory gives), 0700 and 0600. */
static void test_site_readable_by_the_worker_only(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *dir = session_dir(s), *site = h_fmt("%s/site", dir);
    char *pkg = h_fmt("%s/ci_beta", site), *init = h_fmt("%s/__init__.py", pkg);
    int root = geteuid() == 0;
    uid_t uid = geteuid();
    gid_t gid = root ? WORKER_GID : (gid_t)-1;
    char *out = pip_ok(s, "%pip install ci_beta");

    h_assert_contains(out, "Successfully installed ci-beta-2.0");
    free(out);
    assert_owned(site, uid, gid, root ? 0750 : 0700);
    assert_owned(pkg, uid, gid, root ? 0750 : 0700);
    assert_owned(init, uid, gid, root ? 0640 : 0600);
    /* The worker reads them still. */
    h_expect_cell(s, "wheel_beta_version", "'2.0'", NULL);
    free(init), free(pkg), free(site), free(dir);
    ci_session_free(s);
    if (!root)
        h_skip_part_because("not root: a root host's site (root:%d, 0750 and 0640) cannot be "
                            "made here; checked an unprivileged host's (our uid, 0700 and 0600)",
                            WORKER_GID);
}

/* After installs the cell still cannot write or chmod the site directory
 * or what is in it, and the sandbox has the layers it started with. */
static void test_sandbox_intact_after_installs(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    unsigned before = ci_session_sandbox(s);

    assert_true(before & CI_SANDBOX_LANDLOCK);
    char *out = pip_ok(s, "%pip install ci_alpha ci_fast");
    h_assert_contains(out, "Successfully installed");
    free(out);
    h_expect_cell(s, "wheel_site_read_only",
                  "{'new file': 'refused', 'chmod site': 'refused', "
                  "'append to a module': 'refused', 'chmod a module': 'refused', "
                  "'remove a module': 'refused', 'new directory': 'refused', "
                  "'site on the path': True}",
                  NULL);
    assert_int_equal(ci_session_sandbox(s), before);
    /* And from the host's side: the module is as the wheel had it. */
    char *dir = session_dir(s), *init = h_fmt("%s/site/ci_beta/__init__.py", dir);
    size_t len;
    char *text = h_read_file(init, &len);
    h_assert_contains(text, "VERSION = \"2.0\"");
    free(text), free(init);
    char *x = h_fmt("%s/site/x.py", dir);
    assert_int_equal(access(x, F_OK), -1);
    free(x), free(dir);
    ci_session_free(s);
}

/* A wheelhouse without a manifest, or one that is not a directory: no
 * session. */
static void test_wheelhouse_needs_a_manifest(void **state)
{
    ci_config *cfg = ci_config_new();
    char *file = h_fmt("%s/" BETA1, wheelhouse), *why;

    assert_int_equal(ci_config_set_wheelhouse(cfg, wheelhouse), CI_OK);
    why = h_fmt("the wheelhouse %s needs a signed package manifest", wheelhouse);
    h_start_fails(cfg, CI_EMANIFEST, why);
    free(why);
    ci_config_free(cfg);

    cfg = wheel_config();
    assert_int_equal(ci_config_set_wheelhouse(cfg, file), CI_OK);
    if (require_landlock()) {
        why = h_fmt("the wheelhouse %s is not a directory", file);
        h_start_fails(cfg, CI_EMANIFEST, why);
        free(why);
    }
    {
        char *missing = h_fmt("%s/none", tmp);
        assert_int_equal(ci_config_set_wheelhouse(cfg, missing), CI_OK);
        if (require_landlock())
            h_start_fails(cfg, CI_EMANIFEST, missing);
        free(missing);
    }
    /* NULL turns it off again: the manifest alone starts. */
    assert_int_equal(ci_config_set_wheelhouse(cfg, NULL), CI_OK);
    if (require_landlock()) {
        ci_session *s = NULL;
        assert_int_equal(ci_session_new(&s, cfg), CI_OK);
        char *out = pip_ok(s, "%pip install ci_beta");
        h_assert_contains(out, "package installation is not enabled in this session");
        free(out);
        ci_session_free(s);
    }
    assert_int_equal(ci_config_set_wheelhouse(NULL, wheelhouse), CI_EINVAL);
    ci_config_free(cfg);
    free(file);
}

/* No wheelhouse: %pip install is not enabled, and says what is
 * installed; %pip list, show and freeze work. */
static void test_without_a_wheelhouse(void **state)
{
    ci_session *s = h_session(NULL);
    char *out = pip_ok(s, "%pip install ci_beta");

    h_assert_contains(out, "package installation is not enabled in this session");
    h_assert_contains(out, "numpy");
    free(out);
    h_expect_error(s, "import ci_beta", "ModuleNotFoundError", NULL);
    out = pip_ok(s, "%pip list");
    h_assert_contains(out, "numpy");
    h_assert_contains(out, "pandas");
    free(out);
    out = pip_ok(s, "%pip show numpy");
    h_assert_contains(out, "Name: numpy");
    free(out);
    out = pip_ok(s, "%pip freeze");
    h_assert_contains(out, "numpy==");
    free(out);
    ci_result *r = pip_main(s, "ci_beta", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "1");
    ci_result_free(r);
    ci_session_free(s);
}

/* ci_session_restart keeps the site directory: the next worker imports
 * what the last installed, the compiled module too. */
static void test_restart_keeps_installed(void **state)
{
    if (!require_landlock())
        return;
    ci_session *s = wheel_session();
    char *out = pip_ok(s, "%pip install ci_beta==1.0 ci_fast");

    h_assert_contains(out, "ci-beta-1.0");
    h_assert_contains(out, "ci-fast-1.0");
    free(out);
    h_expect_cell(s, "wheel_before_restart", "'1.0'", NULL);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect_error(s, "x", "NameError", NULL);
    h_expect_cell(s, "wheel_after_restart", "('1.0', 6765)", NULL);
    out = pip_ok(s, "%pip list");
    h_assert_contains(out, "ci-beta");
    free(out);
    /* Installed before the restart: a second install is refused. */
    out = host_install(s, "'" BETA1 "'");
    h_assert_contains(out, "already installed");
    free(out);
    ci_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pip_install_and_import),
        cmocka_unit_test(test_dependency_from_the_wheelhouse),
        cmocka_unit_test(test_compiled_extension_loads),
        cmocka_unit_test(test_shell_pip_and_pip_main),
        cmocka_unit_test(test_not_in_the_wheelhouse_lists_what_is),
        cmocka_unit_test_teardown(test_changed_wheel_refused_naming_the_hash, restore_beta1),
        cmocka_unit_test_teardown(test_unlisted_wheel_not_offered, remove_gamma),
        cmocka_unit_test(test_shadowing_wheel_refused),
        cmocka_unit_test(test_hostile_wheels_refused),
        cmocka_unit_test(test_entry_larger_than_its_header_refused),
        cmocka_unit_test(test_utf8_entry_name_installs_in_the_c_locale),
        cmocka_unit_test(test_nul_in_the_file_name_is_a_value_error),
        cmocka_unit_test(test_site_readable_by_the_worker_only),
        cmocka_unit_test(test_sandbox_intact_after_installs),
        cmocka_unit_test(test_wheelhouse_needs_a_manifest),
        cmocka_unit_test(test_without_a_wheelhouse),
        cmocka_unit_test(test_restart_keeps_installed),
    };

    h_watchdog(300);
    return cmocka_run_group_tests_name("wheelhouse", tests, group_setup, group_teardown);
}
