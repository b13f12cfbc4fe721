/*
 * Signed package manifests (ci_config_set_manifest, codeinterp-manifest):
 * a session imports and reads exactly what the manifest lists, and every
 * tampering the issue names fails closed with a message that says why:
 * a changed byte in a listed module, an added .pth file or module, another
 * key, a truncated signature, a distribution listed twice. After each,
 * undoing it makes sessions work again: nothing else broke.
 *
 * The tests never touch the machine's packages: the manifest lists numpy,
 * pandas and matplotlib as installed, plus a site directory of the test's
 * own (okpkg listed, unlistedpkg not) whose files the tests change.
 */
#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "zygote.h" /* ci_zygote_stop_all */

static char *tmp;      /* the test's own directory */
static char *site;     /* <tmp>/site: okpkg and unlistedpkg */
static char *tool;     /* build/codeinterp-manifest */
static char *manifest; /* <tmp>/m.json, signed with <tmp>/key.key */
static char *pub, *other_pub, *secret;
static char *good;     /* the signed manifest's bytes */
static size_t good_len;

/* Runs the command line @cmd (from h_fmt; freed), asserts exit 0. */
static void sh(char *cmd)
{
    int st = system(cmd);

    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("command failed (status %d): %s", st, cmd);
    free(cmd);
}

static void write_mode(const char *path, const char *text, mode_t mode)
{
    h_write_file(path, text, strlen(text));
    assert_int_equal(chmod(path, mode), 0);
}

/* A pip-style distribution @name in the site directory: a package of an
 * __init__.py and a lazy.py (imported by no one until a cell does), and a
 * dist-info with METADATA, top_level.txt and RECORD. */
static void make_dist(const char *name, const char *init)
{
    char *pkg = h_fmt("%s/%s", site, name), *info = h_fmt("%s/%s-1.0.dist-info", site, name);
    char *p;

    assert_int_equal(mkdir(pkg, 0755), 0);
    assert_int_equal(mkdir(info, 0755), 0);
    write_mode(p = h_fmt("%s/__init__.py", pkg), init, 0644), free(p);
    write_mode(p = h_fmt("%s/lazy.py", pkg), "LAZY = 'as signed'\n", 0644), free(p);
    p = h_fmt("%s/METADATA", info);
    {
        char *meta = h_fmt("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n", name);
        write_mode(p, meta, 0644);
        free(meta);
    }
    free(p);
    p = h_fmt("%s/top_level.txt", info);
    {
        char *top = h_fmt("%s\n", name);
        write_mode(p, top, 0644);
        free(top);
    }
    free(p);
    p = h_fmt("%s/RECORD", info);
    {
        char *rec = h_fmt("%s/__init__.py,,\n%s/lazy.py,,\n%s-1.0.dist-info/METADATA,,\n"
                          "%s-1.0.dist-info/top_level.txt,,\n%s-1.0.dist-info/RECORD,,\n",
                          name, name, name, name, name);
        write_mode(p, rec, 0644);
        free(rec);
    }
    free(p);
    free(pkg);
    free(info);
}

static int group_setup(void **state)
{
    char exe[4096], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

    if (n <= 0 || sodium_init() < 0)
        return -1;
    exe[n] = '\0';
    /* build/test/test_manifest -> build/codeinterp-manifest */
    if (!(slash = strrchr(exe, '/')))
        return -1;
    *slash = '\0';
    if (!(slash = strrchr(exe, '/')))
        return -1;
    *slash = '\0';
    tool = h_fmt("%s/codeinterp-manifest", exe);
    tmp = h_tmpdir();
    /* The workers (uid 65534 under a root host) list the site directory. */
    chmod(tmp, 0755);
    site = h_fmt("%s/site", tmp);
    mkdir(site, 0755);
    make_dist("okpkg", "VALUE = 42\n");
    make_dist("unlistedpkg", "SECRET = 'unlisted'\n");
    pub = h_fmt("%s/key.pub", tmp);
    secret = h_fmt("%s/key.key", tmp);
    other_pub = h_fmt("%s/other.pub", tmp);
    manifest = h_fmt("%s/m.json", tmp);
    sh(h_fmt("cd %s && %s keygen key && %s keygen other", tmp, tool, tool));
    /* sympy: Debian lists its top-level isympy.py, whose .pyc py3compile
     * writes outside the package's file list. */
    sh(h_fmt("%s create --packages okpkg,numpy,pandas,matplotlib,sympy --path %s -o %s", tool,
             site, manifest));
    sh(h_fmt("%s sign --key %s %s", tool, secret, manifest));
    chmod(manifest, 0644);
    good = h_read_file(manifest, &good_len);
    return good ? 0 : -1;
}

static int group_teardown(void **state)
{
    h_rmtree(tmp);
    free(tmp);
    free(site);
    free(tool);
    free(manifest);
    free(pub);
    free(other_pub);
    free(secret);
    free(good);
    return 0;
}

/* A config with the test's manifest and @key (a .pub path); @zygote 0 or 1. */
static ci_config *manifest_config(const char *key, int zygote)
{
    ci_config *cfg = ci_config_new();

    assert_non_null(cfg);
    assert_int_equal(ci_config_set_manifest(cfg, manifest, key), CI_OK);
    assert_int_equal(ci_config_set_zygote(cfg, zygote), CI_OK);
    return cfg;
}

/* ci_session_new with @cfg must fail with CI_EMANIFEST, start no
 * process, and say @why. */
static void expect_refused(ci_config *cfg, const char *why)
{
    int before = h_children_but_spares(getpid());

    h_start_fails(cfg, CI_EMANIFEST, why);
    /* Whatever started for it (a zygote that found the files changed) is gone. */
    assert_true(h_children_but_spares(getpid()) <= before);
}

/* A manifest's read rules are Landlock's (include/codeinterp.h). Where
 * the kernel or a container refuses Landlock (test/probe.c), a session
 * under the manifest must be refused, with and without the zygote, saying
 * why; then the calling test, which needs one to start, is skipped. */
#define require_landlock() require_landlock_(__func__)
static void require_landlock_(const char *test)
{
    const struct h_probe *p = h_probe(1);
    if (p->landlock || (p->unknown & CI_SANDBOX_LANDLOCK))
        return;
    for (int zygote = 1; zygote >= 0; zygote--) {
        ci_config *cfg = manifest_config(pub, zygote);
        expect_refused(cfg, "its read rules need Landlock, which this kernel does not offer");
        ci_config_free(cfg);
    }
    h_skip_because_(test, "a session under a manifest needs Landlock, which this kernel or "
                          "container refuses (probed); such a session is refused, as it must be");
}

/* A session under the test's manifest, from the zygote; asserts it starts. */
static ci_session *manifest_session(void)
{
    ci_config *cfg = manifest_config(pub, 1);
    ci_session *s = NULL;
    int rc = ci_session_new(&s, cfg);

    ci_config_free(cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %s: %s", ci_strerror(rc), ci_session_errmsg(NULL));
    return s;
}

/* A session with @cfg must start and import okpkg. */
static void expect_works(ci_config *cfg)
{
    ci_session *s = NULL;
    int rc = ci_session_new(&s, cfg);

    if (rc != CI_OK)
        fail_msg("ci_session_new: %s: %s", ci_strerror(rc), ci_session_errmsg(NULL));
    h_expect(s, "import okpkg\nokpkg.VALUE", "42", NULL);
    ci_session_free(s);
}

/* The key id codeinterp-manifest keyid prints for @pubfile (16 hex digits). */
static char *key_id(const char *pubfile)
{
    char *cmd = h_fmt("%s keyid %s", tool, pubfile), line[64] = "";
    FILE *f = popen(cmd, "r");

    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(pclose(f), 0);
    free(cmd);
    line[strcspn(line, "\n")] = '\0';
    assert_int_equal(strlen(line), 16);
    assert_int_equal(strspn(line, "0123456789abcdef"), 16);
    return strdup(line);
}

/* Writes @text as the manifest (a tampered copy); NULL puts the good one back. */
static void put_manifest(const char *text)
{
    h_write_file(manifest, text ? text : good, text ? strlen(text) : good_len);
    chmod(manifest, 0644);
}

/* The good manifest as JSON, for a test to change. */
static json_t *good_json(void)
{
    json_error_t e;
    json_t *j = json_loadb(good, good_len, 0, &e);

    if (!j)
        fail_msg("the signed manifest does not parse: %s", e.text);
    return j;
}

/* The test's own distribution, okpkg, in the manifest @j. */
static json_t *okpkg_of(json_t *j)
{
    json_t *dists = json_object_get(j, "distributions");

    for (size_t i = 0; i < json_array_size(dists); i++) {
        json_t *d = json_array_get(dists, i);
        if (!strcmp(json_string_value(json_object_get(d, "name")), "okpkg"))
            return d;
    }
    fail_msg("the manifest does not list okpkg");
    return NULL;
}

static void put_json(json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);

    assert_non_null(text);
    put_manifest(text);
    free(text);
    json_decref(j);
}

static void test_config_arguments(void **state)
{
    unsigned char key[32] = {0};
    ci_config *cfg = ci_config_new();

    assert_int_equal(ci_config_set_manifest(NULL, "m.json", "k.pub"), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest(cfg, "", "k.pub"), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest(cfg, "m.json", NULL), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest(cfg, "m.json", ""), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest_key(cfg, "m.json", key, 31), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest_key(cfg, "m.json", NULL, 32), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest_key(cfg, NULL, key, 32), CI_EINVAL);
    assert_int_equal(ci_config_set_manifest(cfg, "/nonexistent/m.json", "/nonexistent/k.pub"),
                     CI_OK);
    /* The files are read by ci_session_new, which names the one missing. */
    expect_refused(cfg, "/nonexistent/k.pub");
    assert_int_equal(ci_config_set_manifest(cfg, NULL, NULL), CI_OK);
    ci_config_free(cfg);
}

/* What the manifest lists runs, as it would without one. */
static void test_listed_packages_run(void **state)
{
    require_landlock();
    ci_session *s = manifest_session();
    char *code;

    assert_true(ci_session_sandbox(s) & CI_SANDBOX_LANDLOCK);
    h_expect(s, "import okpkg\nokpkg.VALUE", "42", NULL);
    h_expect(s, "import pandas as pd\nint(pd.DataFrame({'a': [1, 2, 3]}).a.sum())", "6", NULL);
    h_expect(s, "import numpy as np\nint(np.arange(10).sum())", "45", NULL);
    h_expect(s, "import json, decimal, sqlite3\njson.dumps({'a': 1})", "'{\"a\": 1}'", NULL);
    h_expect(s, "import isympy, sympy\nstr(sympy.sqrt(8))", "'2*sqrt(2)'", NULL);
    /* The search path is the manifest's (then the workspace), and site's
     * main() did not run: no .pth file was read. help() still works. */
    code = h_fmt("import sys\n(sys.path[:3], sys.flags.no_site, callable(help))");
    {
        /* The test's directory after the standard library: nothing there
         * can stand in for what CPython imports while it starts. */
        char *want = h_fmt("(['/usr/lib/python3.11', '/usr/lib/python3.11/lib-dynload', '%s'], "
                           "1, True)", site);
        h_expect(s, code, want, NULL);
        free(want);
    }
    free(code);
    ci_session_free(s);
}

/* An unlisted package can be neither imported nor read. */
static void test_unlisted_package_refused(void **state)
{
    require_landlock();
    ci_session *s = manifest_session();
    char *code;

    h_expect_error(s, "import unlistedpkg", "ModuleNotFoundError",
                   "No module named 'unlistedpkg': the signed package manifest does not list it");
    /* The hook's own frames are left out of the cell's traceback. */
    {
        ci_result *r = h_run_status(s, "import unlistedpkg", CI_STATUS_ERROR);
        h_assert_contains(ci_result_traceback(r), "<cell");
        h_assert_not_contains(ci_result_traceback(r), "find_spec");
        ci_result_free(r);
    }
    code = h_fmt("open('%s/unlistedpkg/__init__.py').read()", site);
    {
        char *msg = h_fmt("the signed package manifest does not list %s/unlistedpkg/__init__.py;"
                          " this session reads only the packages it lists", site);
        h_expect_error(s, code, "PermissionError", msg);
        free(msg);
    }
    free(code);
    /* Through importlib's own machinery, past the hook, too. */
    code = h_fmt("import importlib.util\n"
                 "spec = importlib.util.spec_from_file_location('u', '%s/unlistedpkg/__init__.py')\n"
                 "m = importlib.util.module_from_spec(spec)\n"
                 "spec.loader.exec_module(m)",
                 site);
    h_expect_error(s, code, "PermissionError", NULL);
    free(code);
    /* The listed one still reads. */
    code = h_fmt("open('%s/okpkg/__init__.py').read()", site);
    h_expect(s, code, "'VALUE = 42\\n'", NULL);
    free(code);
    /* A package the machine has but the manifest does not list, if any
     * of these is installed: the same. */
    {
        static const char *const names[] = {"yaml", "jinja2", "pygments", "certifi", "requests",
                                            "ipykernel", "apt", "docutils", "markupsafe"};
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            char *dir = h_fmt("/usr/lib/python3/dist-packages/%s/__init__.py", names[i]);
            char *listed = h_fmt("\"/usr/lib/python3/dist-packages/%s/", names[i]);
            if (access(dir, F_OK) == 0 && !strstr(good, listed)) {
                char *imp = h_fmt("import %s", names[i]);
                char *msg = h_fmt("No module named '%s': the signed package manifest does not "
                                  "list it", names[i]);
                char *rd = h_fmt("open('%s').read()", dir);
                h_expect_error(s, imp, "ModuleNotFoundError", msg);
                h_expect_error(s, rd, "PermissionError", NULL);
                free(imp);
                free(msg);
                free(rd);
            }
            free(dir);
            free(listed);
        }
    }
    ci_session_free(s);
}

/* The public key given as bytes works as the file does. */
static void test_key_as_bytes(void **state)
{
    require_landlock();
    size_t len;
    char *text = h_read_file(pub, &len), *b64;
    unsigned char key[32];
    size_t key_len = 0;
    ci_config *cfg = ci_config_new();

    assert_non_null(text);
    b64 = strchr(text, ' ');
    assert_non_null(b64);
    b64++;
    assert_int_equal(sodium_base642bin(key, sizeof key, b64, strcspn(b64, "\n"), NULL, &key_len,
                                       NULL, sodium_base64_VARIANT_ORIGINAL),
                     0);
    assert_int_equal(key_len, 32);
    assert_int_equal(ci_config_set_manifest_key(cfg, manifest, key, 32), CI_OK);
    expect_works(cfg);
    key[0] ^= 1;
    assert_int_equal(ci_config_set_manifest_key(cfg, manifest, key, 32), CI_OK);
    expect_refused(cfg, "unknown key");
    ci_config_free(cfg);
    free(text);
}

/* Each fault in the document itself: refused before any worker starts. */
static void test_document_faults(void **state)
{
    require_landlock();
    ci_config *cfg = manifest_config(pub, 1), *other = manifest_config(other_pub, 1);
    json_t *j, *sig;
    char *half;

    /* Signed by another key: both ids named, as keyid prints them. */
    {
        char *mine = key_id(pub), *theirs = key_id(other_pub);
        char *why = h_fmt("signed by an unknown key (key id %s; the configured key's id is %s)",
                          mine, theirs);

        assert_string_not_equal(mine, theirs);
        expect_refused(other, why);
        free(mine);
        free(theirs);
        free(why);
    }

    /* The signature cut in half. */
    j = good_json();
    sig = json_object_get(json_object_get(j, "signature"), "value");
    half = strndup(json_string_value(sig), strlen(json_string_value(sig)) / 2);
    json_object_set_new(json_object_get(j, "signature"), "value", json_string(half));
    free(half);
    put_json(j);
    expect_refused(cfg, "malformed signature");

    /* No signature at all. */
    j = good_json();
    json_object_del(j, "signature");
    put_json(j);
    expect_refused(cfg, "not signed");

    /* One version changed after signing. */
    j = good_json();
    json_object_set_new(okpkg_of(j), "version", json_string("1.1"));
    put_json(j);
    expect_refused(cfg, "bad signature");

    /* Cut short: not JSON. */
    {
        char *cut = strndup(good, good_len / 2);
        put_manifest(cut);
        free(cut);
    }
    expect_refused(cfg, "malformed");

    /* A distribution listed twice, then signed with the right key. */
    j = good_json();
    {
        json_t *twin = json_deep_copy(okpkg_of(j));

        json_object_set_new(twin, "files", json_object());
        json_array_append_new(json_object_get(j, "distributions"), twin);
    }
    put_json(j);
    sh(h_fmt("%s sign --key %s %s", tool, secret, manifest));
    chmod(manifest, 0644);
    expect_refused(cfg, "lists distribution okpkg twice");

    put_manifest(NULL);
    expect_works(cfg);
    ci_config_free(cfg);
    ci_config_free(other);

    /* A FIFO, as the manifest or as the key, is refused at once: a read
     * of it would block the start (and the process's other starts). */
    {
        char *fifo = h_fmt("%s/fifo", tmp);
        ci_config *c = ci_config_new();

        assert_int_equal(mkfifo(fifo, 0644), 0);
        assert_int_equal(ci_config_set_manifest(c, fifo, pub), CI_OK);
        expect_refused(c, "not a regular file");
        assert_int_equal(ci_config_set_manifest(c, manifest, fifo), CI_OK);
        expect_refused(c, "not a regular file");
        ci_config_free(c);
        unlink(fifo);
        free(fifo);
    }
}

/* A changed byte in a listed module: found when a zygote (or a worker
 * started by exec) checks the files, that is before its first session. */
static void test_changed_module(void **state)
{
    require_landlock();
    char *path = h_fmt("%s/okpkg/__init__.py", site);
    ci_config *zyg = manifest_config(pub, 1), *exec = manifest_config(pub, 0);

    expect_works(zyg); /* a zygote that checked the good files */
    /* A module imported after that check is checked as it is read: one
     * changed since is refused, not run, by the running zygote's sessions. */
    {
        char *lazy = h_fmt("%s/okpkg/lazy.py", site), *want;
        ci_config *c = manifest_config(pub, 1);
        ci_session *s = NULL;
        ci_result *r;

        write_mode(lazy, "LAZY = 'changed'\n", 0644);
        assert_int_equal(ci_session_new(&s, c), CI_OK);
        r = h_run_status(s, "import okpkg.lazy", CI_STATUS_ERROR);
        h_assert_str(ci_result_error_name(r), "ImportError");
        want = h_fmt("%s changed since the signed package manifest was checked; it is not run",
                     lazy);
        h_assert_str(ci_result_error_value(r), want);
        ci_result_free(r);
        ci_session_free(s);
        write_mode(lazy, "LAZY = 'as signed'\n", 0644);
        assert_int_equal(ci_session_new(&s, c), CI_OK);
        h_expect(s, "import okpkg.lazy\nokpkg.lazy.LAZY", "'as signed'", NULL);
        ci_session_free(s);
        ci_config_free(c);
        free(want);
        free(lazy);
    }
    write_mode(path, "VALUE = 43\n", 0644);
    ci_zygote_stop_all(); /* the next session gets a new zygote, which checks */
    expect_refused(zyg, path);
    expect_refused(zyg, "changed since the manifest was signed");
    expect_refused(exec, path);
    write_mode(path, "VALUE = 42\n", 0644);
    expect_works(zyg);
    expect_works(exec);
    ci_config_free(zyg);
    ci_config_free(exec);
    free(path);
}

/* Files added where only listed files may be. */
static void test_added_files(void **state)
{
    require_landlock();
    char *pth = h_fmt("%s/evil.pth", site), *mod = h_fmt("%s/okpkg/extra.py", site);
    ci_config *cfg = manifest_config(pub, 0);

    write_mode(pth, "import os; os.system('touch /tmp/pwned')\n", 0644);
    expect_refused(cfg, pth);
    unlink(pth);
    write_mode(mod, "X = 1\n", 0644);
    expect_refused(cfg, mod);
    unlink(mod);
    /* A package named as one CPython imports while it starts, before any
     * hook exists: the standard library comes first, so it never runs. */
    {
        char *enc = h_fmt("%s/encodings", site), *init = h_fmt("%s/__init__.py", enc);
        ci_config *zyg = manifest_config(pub, 1);

        assert_int_equal(mkdir(enc, 0755), 0);
        write_mode(init, "raise RuntimeError('the planted encodings ran')\n", 0644);
        expect_works(cfg);
        ci_zygote_stop_all();
        expect_works(zyg);
        h_rmtree(enc);
        ci_config_free(zyg);
        free(enc);
        free(init);
    }
    /* A listed file others could change after the check, or its
     * directory. */
    {
        char *init = h_fmt("%s/okpkg/__init__.py", site), *pkg = h_fmt("%s/okpkg", site);

        assert_int_equal(chmod(init, 0666), 0);
        expect_refused(cfg, "writable by its group or by others (mode 666)");
        assert_int_equal(chmod(init, 0644), 0);
        assert_int_equal(chmod(pkg, 0777), 0);
        expect_refused(cfg, "is writable by others than its owner");
        assert_int_equal(chmod(pkg, 0755), 0);
        free(init);
        free(pkg);
    }
    /* The package swapped for a link to a copy that holds more files:
     * the scan for extra files does not follow links, so the link itself
     * is refused. */
    {
        char *pkg = h_fmt("%s/okpkg", site), *orig = h_fmt("%s/.okpkg-orig", site);
        char *copy = h_fmt("%s/.okpkg-copy", site), *planted = h_fmt("%s/planted.py", copy);
        char *init = h_fmt("%s/__init__.py", copy);

        assert_int_equal(mkdir(copy, 0755), 0);
        write_mode(init, "VALUE = 42\n", 0644);
        write_mode(planted, "X = 1\n", 0644);
        assert_int_equal(rename(pkg, orig), 0);
        assert_int_equal(symlink(".okpkg-copy", pkg), 0);
        expect_refused(cfg, "a directory on its path, is a symbolic link");
        assert_int_equal(unlink(pkg), 0);
        assert_int_equal(rename(orig, pkg), 0);
        h_rmtree(copy);
        free(pkg);
        free(orig);
        free(copy);
        free(planted);
        free(init);
    }
    expect_works(cfg);
    ci_config_free(cfg);
    free(pth);
    free(mod);
}

/* diff names what changed, and verify checks the signature as the
 * library does. */
static void test_command(void **state)
{
    char *path = h_fmt("%s/okpkg/__init__.py", site), *out = h_fmt("%s/diff.txt", tmp), *text;
    int st;

    sh(h_fmt("%s verify --key %s %s", tool, pub, manifest));
    sh(h_fmt("%s diff %s > %s", tool, manifest, out));
    write_mode(path, "VALUE = 43\n", 0644);
    text = h_fmt("%s diff %s > %s", tool, manifest, out);
    st = system(text);
    free(text);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    text = h_read_file(out, NULL);
    h_assert_contains(text, "changed");
    h_assert_contains(text, path);
    free(text);
    write_mode(path, "VALUE = 42\n", 0644);
    text = h_fmt("%s verify --key %s %s 2>/dev/null", tool, other_pub, manifest);
    st = system(text);
    free(text);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
    free(path);
    free(out);
}

/* make demo-macro's cells, unchanged, under the manifest. */
static void test_demo_under_manifest(void **state)
{
    require_landlock();
    char exe[4096], *slash, *demo, *out = h_fmt("%s/demo", tmp);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

    assert_true(n > 0);
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    *slash = '\0';
    slash = strrchr(exe, '/');
    *slash = '\0';
    demo = h_fmt("%s/scripted_agent", exe);
    sh(h_fmt("%s --manifest %s --public-key %s examples/macro %s examples/data/macrodata.csv"
             " > %s/demo.log",
             demo, manifest, pub, out, tmp));
    {
        char *report = h_fmt("%s/variance_report.csv", out);
        assert_int_equal(access(report, F_OK), 0);
        free(report);
    }
    free(demo);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_arguments),
        cmocka_unit_test(test_listed_packages_run),
        cmocka_unit_test(test_unlisted_package_refused),
        cmocka_unit_test(test_key_as_bytes),
        cmocka_unit_test(test_document_faults),
        cmocka_unit_test(test_changed_module),
        cmocka_unit_test(test_added_files),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_demo_under_manifest),
    };

    h_watchdog(600);
    return cmocka_run_group_tests_name("manifest", tests, group_setup, group_teardown);
}
