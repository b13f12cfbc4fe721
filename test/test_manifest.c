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
 *
 * The "wheels" member: a signed manifest that lists wheels gives the host
 * exactly them (ci_manifest_cache_get), every fault in it is refused with
 * its message, and create --wheelhouse lists a wheel built here with its
 * hash, name, version and the requirements that apply.
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
#include "manifest_cache.h" /* ci_manifest_cache_get, struct ci_manifest_wheel */
#include "manifest_doc.h"   /* ci_manifest_check_body */
#include "zygote.h"         /* ci_zygote_stop_all */

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
    char *build = h_build_dir();

    if (!build || sodium_init() < 0)
        return -1;
    tool = h_fmt("%s/codeinterp-manifest", build);
    free(build);
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
    {
        char *cell = h_cell("manifest_unlisted_by_importlib");
        code = h_fmt("SITE = '%s'\n%s", site, cell);
        free(cell);
    }
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

/* ---- the "wheels" member ---- */

#define TINY "ci_tiny-1.2.3-py3-none-any.whl"
#define SHA_A "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define SHA_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"

/* A "wheels" entry; @requires is taken (NULL: an empty list). */
static json_t *wheel_entry(const char *file, const char *sha, const char *name,
                           const char *version, json_t *requires)
{
    json_t *w = json_pack("{s:s, s:s, s:s, s:s, s:o}", "file", file, "sha256", sha, "name", name,
                          "version", version, "requires", requires ? requires : json_array());

    assert_non_null(w);
    return w;
}

/* The good manifest with @wheels (taken) as its "wheels", signed. */
static void put_signed_wheels(json_t *wheels)
{
    json_t *j = good_json();

    json_object_set_new(j, "wheels", wheels);
    put_json(j);
    sh(h_fmt("%s sign --key %s %s 2> /dev/null", tool, secret, manifest));
    chmod(manifest, 0644);
}

static void assert_sha(const unsigned char got[32], const char *hex)
{
    unsigned char want[32];

    assert_int_equal(sodium_hex2bin(want, sizeof want, hex, 64, NULL, NULL, NULL), 0);
    assert_memory_equal(got, want, 32);
}

/* A signed manifest that lists wheels: the host's verified manifest
 * holds each, in order, as listed; sessions start under it as before.
 * Without the member there are none. */
static void test_wheels_verified(void **state)
{
    ci_config *cfg = manifest_config(pub, 0);
    struct ci_manifest_verified *v = NULL;
    struct ci_err err = {0};
    json_t *wheels = json_array();

    json_array_append_new(wheels, wheel_entry(TINY, SHA_A, "ci-tiny", "1.2.3",
                                              json_pack("[s, s]", "ci-beta <3,>=1.0", "numpy")));
    json_array_append_new(wheels,
                          wheel_entry("ci_beta-2.0-py3-none-any.whl", SHA_B, "ci_beta", "2.0", NULL));
    put_signed_wheels(wheels);
    if (ci_manifest_cache_get(cfg, &v, &err) != CI_OK)
        fail_msg("ci_manifest_cache_get: %s", err.msg);
    assert_int_equal(v->n_wheels, 2);
    h_assert_str(v->wheels[0].file, TINY);
    h_assert_str(v->wheels[0].name, "ci-tiny");
    h_assert_str(v->wheels[0].version, "1.2.3");
    assert_sha(v->wheels[0].sha256, SHA_A);
    assert_int_equal(v->wheels[0].n_requires, 2);
    h_assert_str(v->wheels[0].requires[0], "ci-beta <3,>=1.0");
    h_assert_str(v->wheels[0].requires[1], "numpy");
    h_assert_str(v->wheels[1].file, "ci_beta-2.0-py3-none-any.whl");
    h_assert_str(v->wheels[1].name, "ci_beta");
    h_assert_str(v->wheels[1].version, "2.0");
    assert_sha(v->wheels[1].sha256, SHA_B);
    assert_int_equal(v->wheels[1].n_requires, 0);
    /* The policy text the worker gets does not name them. */
    assert_null(strstr(v->text, "ci_tiny"));
    ci_manifest_cache_put(v);
    {
        const struct h_probe *p = h_probe(1);
        if (p->landlock || (p->unknown & CI_SANDBOX_LANDLOCK))
            expect_works(cfg);
    }

    /* A wheel listed after signing breaks the signature, as any change. */
    {
        json_t *j = good_json();
        char *text, *signed_text = h_read_file(manifest, NULL);
        json_t *s = json_loads(signed_text, 0, NULL);

        json_object_set(j, "signature", json_object_get(s, "signature"));
        json_object_set_new(j, "wheels", json_pack("[o]", wheel_entry(TINY, SHA_A, "ci-tiny",
                                                                      "1.2.3", NULL)));
        text = json_dumps(j, JSON_COMPACT);
        put_manifest(text);
        assert_int_equal(ci_manifest_cache_get(cfg, &v, &err), CI_EMANIFEST);
        h_assert_contains(err.msg, "bad signature: changed after signing");
        free(text);
        free(signed_text);
        json_decref(s);
        json_decref(j);
    }

    /* A fault in a signed "wheels" is the library's refusal too. */
    put_signed_wheels(json_pack("[o]", wheel_entry("../x.whl", SHA_A, "x", "1.0", NULL)));
    assert_int_equal(ci_manifest_cache_get(cfg, &v, &err), CI_EMANIFEST);
    {
        char *want = h_fmt("manifest %s: malformed: the file of wheels[0] (\"../x.whl\") is not a "
                           "wheel's file name (1 to 255 of [A-Za-z0-9._+-], not starting with "
                           "'.', ending \".whl\")",
                           manifest);
        h_assert_str(err.msg, want);
        free(want);
    }

    put_manifest(NULL);
    if (ci_manifest_cache_get(cfg, &v, &err) != CI_OK)
        fail_msg("ci_manifest_cache_get: %s", err.msg);
    assert_int_equal(v->n_wheels, 0);
    assert_null(v->wheels);
    ci_manifest_cache_put(v);
    ci_config_free(cfg);
}

/* The smallest body the format allows, with @wheels (taken; NULL: none)
 * as its "wheels", through the body check: CI_OK, or CI_EMANIFEST with the
 * message "manifest m.json: " @why exactly. */
static void expect_wheels(json_t *wheels, const char *why)
{
    json_t *j = json_pack("{s:s, s:i, s:s, s:[s], s:[], s:{}}", "format", "codeinterp-manifest",
                          "version", 1, "python", "3.11.2", "search_path", "/usr/lib/python3.11",
                          "distributions", "site_files");
    struct ci_err err = {0};

    assert_non_null(j);
    if (wheels)
        json_object_set_new(j, "wheels", wheels);
    if (!why) {
        if (ci_manifest_check_body(j, "m.json", &err) != CI_OK)
            fail_msg("refused: %s", err.msg);
    } else {
        char *want = h_fmt("manifest m.json: %s", why);
        assert_int_equal(ci_manifest_check_body(j, "m.json", &err), CI_EMANIFEST);
        assert_int_equal(err.code, CI_EMANIFEST);
        h_assert_str(err.msg, want);
        free(want);
    }
    json_decref(j);
}

/* The one wheel @w, as a "wheels" member. */
static json_t *one(json_t *w)
{
    return json_pack("[o]", w);
}

/* A wheel entry TINY with @member set to @value (taken), or removed (NULL). */
static json_t *tiny_with(const char *member, json_t *value)
{
    json_t *w = wheel_entry(TINY, SHA_A, "ci-tiny", "1.2.3", json_pack("[s]", "numpy"));

    if (value)
        json_object_set_new(w, member, value);
    else
        json_object_del(w, member);
    return one(w);
}

#define FILE_RULE "is not a wheel's file name (1 to 255 of [A-Za-z0-9._+-], not starting with " \
                  "'.', ending \".whl\")"
#define REQ_RULE "is not a requirement (1 to 1000 bytes, no control characters)"

/* Every fault of "wheels" the format names, each with its message. */
static void test_wheels_refused(void **state)
{
    char *long_name = malloc(257), *long_req = malloc(1002);
    json_t *many;

    expect_wheels(NULL, NULL);
    expect_wheels(json_array(), NULL);
    expect_wheels(tiny_with("requires", NULL), "malformed: wheels[0] (" TINY ") has no member "
                                               "\"requires\"");
    expect_wheels(json_object(), "malformed: \"wheels\" is not an array");
    expect_wheels(json_pack("[s]", TINY), "malformed: wheels[0] is not an object");
    expect_wheels(tiny_with("extra", json_string("x")),
                  "malformed: unknown member \"extra\" in wheels[0] (" TINY ")");
    expect_wheels(tiny_with("sha256", NULL),
                  "malformed: wheels[0] (" TINY ") has no member \"sha256\"");

    /* the file name */
    {
        static const char *const bad[] = {"../x.whl", "/tmp/x.whl", ".x.whl", "x.zip", "a b.whl",
                                          ".whl", "x.whl/", "x\\y.whl"};
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            char s[CI_MANIFEST_SHOWN_MAX];
            char *why = h_fmt("malformed: the file of wheels[0] (\"%s\") " FILE_RULE,
                              ci_manifest_shown(bad[i], s, sizeof s));
            expect_wheels(tiny_with("file", json_string(bad[i])), why);
            free(why);
        }
    }
    expect_wheels(tiny_with("file", json_integer(1)), "malformed: the file of wheels[0] " FILE_RULE);
    memset(long_name, 'a', 256);
    memcpy(long_name + 252, ".whl", 5);
    assert_int_equal(strlen(long_name), 256);
    {
        char *why = h_fmt("malformed: the file of wheels[0] (\"%.160s...\") " FILE_RULE, long_name);
        expect_wheels(tiny_with("file", json_string(long_name)), why);
        free(why);
    }
    memcpy(long_name + 251, ".whl", 5); /* 255 bytes: allowed */
    expect_wheels(tiny_with("file", json_string(long_name)), NULL);

    /* the hash, name and version */
    expect_wheels(tiny_with("sha256", json_string("00112233445566778899AABBCCDDEEFF00112233445566778"
                                                  "899aabbccddeeff")),
                  "malformed: the sha256 of wheels[0] (" TINY ") is not 64 lowercase hex digits");
    expect_wheels(tiny_with("sha256", json_string("0011")),
                  "malformed: the sha256 of wheels[0] (" TINY ") is not 64 lowercase hex digits");
    expect_wheels(tiny_with("name", json_string("ci tiny")),
                  "malformed: the name of wheels[0] (" TINY ") (\"ci tiny\") is not 1 to 200 of "
                  "[A-Za-z0-9._-]");
    expect_wheels(tiny_with("version", json_string("")),
                  "malformed: the version of wheels[0] (" TINY ") is not a string of 1 to 200 "
                  "bytes without control characters");

    /* the requirements */
    expect_wheels(tiny_with("requires", json_string("numpy")),
                  "malformed: \"requires\" of wheels[0] (" TINY ") is not an array");
    expect_wheels(tiny_with("requires", json_pack("[s, s]", "numpy", "")),
                  "malformed: requires[1] of wheels[0] (" TINY ") (\"\") " REQ_RULE);
    expect_wheels(tiny_with("requires", json_pack("[s]", "numpy\n>=1")),
                  "malformed: requires[0] of wheels[0] (" TINY ") (\"numpy\\x0a>=1\") " REQ_RULE);
    expect_wheels(tiny_with("requires", json_pack("[i]", 3)),
                  "malformed: requires[0] of wheels[0] (" TINY ") " REQ_RULE);
    memset(long_req, 'a', 1001);
    long_req[1001] = '\0';
    {
        char *why = h_fmt("malformed: requires[0] of wheels[0] (" TINY ") (\"%.160s...\") " REQ_RULE,
                          long_req);
        expect_wheels(tiny_with("requires", json_pack("[s]", long_req)), why);
        free(why);
    }
    long_req[1000] = '\0';
    expect_wheels(tiny_with("requires", json_pack("[s]", long_req)), NULL);
    many = json_array();
    for (int i = 0; i < 1001; i++)
        json_array_append_new(many, json_string("numpy"));
    expect_wheels(tiny_with("requires", many),
                  "malformed: \"requires\" of wheels[0] (" TINY ") has more than 1000 requirements");
    many = json_array();
    for (int i = 0; i < 1000; i++)
        json_array_append_new(many, json_string("numpy"));
    expect_wheels(tiny_with("requires", many), NULL);

    /* the same wheel twice, and too many */
    expect_wheels(json_pack("[o, o]", wheel_entry(TINY, SHA_A, "ci-tiny", "1.2.3", NULL),
                            wheel_entry(TINY, SHA_B, "ci-tiny", "1.2.4", NULL)),
                  "lists the wheel " TINY " twice");
    expect_wheels(json_pack("[o, o, o]", wheel_entry("b-1.0-py3-none-any.whl", SHA_A, "b", "1.0", NULL),
                            wheel_entry(TINY, SHA_A, "ci-tiny", "1.2.3", NULL),
                            wheel_entry("Ci_Tiny-1.2.3-py2.py3-none-any.whl", SHA_B, "Ci_Tiny",
                                        "1.2.3", NULL)),
                  "lists two wheels of ci-tiny 1.2.3 (" TINY " and Ci_Tiny-1.2.3-py2.py3-none-any.whl)");
    /* Another version of a name is another wheel. */
    expect_wheels(json_pack("[o, o]", wheel_entry(TINY, SHA_A, "ci-tiny", "1.2.3", NULL),
                            wheel_entry("ci_tiny-2.0-py3-none-any.whl", SHA_B, "ci.tiny", "2.0",
                                        NULL)),
                  NULL);
    many = json_array();
    for (int i = 0; i < 10001; i++)
        json_array_append_new(many, json_null());
    expect_wheels(many, "malformed: more than 10000 wheels");
    free(long_name);
    free(long_req);
}

/* Runs @cmd (from h_fmt; freed) and returns its exit status. */
static int status_of(char *cmd)
{
    int st = system(cmd);

    free(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* create --wheelhouse: each *.whl regular file, with its SHA-256, name,
 * version and only the requirements that apply here; other entries are
 * ignored; a file that is no wheel fails create, named. verify and diff
 * compare the wheelhouse with what is listed. */
static void test_create_wheelhouse(void **state)
{
    char *wh = h_fmt("%s/wh", tmp), *out = h_fmt("%s/wm.json", tmp), *log = h_fmt("%s/wm.log", tmp);
    char *whl = h_fmt("%s/" TINY, wh), *p, *text, hex[65];
    unsigned char sum[crypto_hash_sha256_BYTES];
    size_t len;
    json_t *doc, *w;

    assert_int_equal(mkdir(wh, 0755), 0);
    sh(h_fmt("/usr/bin/python3 %s/manifest_make_wheel.py good %s > /dev/null", CI_TEST_CELLS, wh));
    /* What create must pass over: not a .whl, a link, a directory. */
    write_mode(p = h_fmt("%s/README.txt", wh), "not a wheel\n", 0644), free(p);
    assert_int_equal(symlink(TINY, p = h_fmt("%s/link-1.0-py3-none-any.whl", wh)), 0), free(p);
    assert_int_equal(mkdir(p = h_fmt("%s/dir-1.0-py3-none-any.whl", wh), 0755), 0), free(p);

    sh(h_fmt("%s create --packages okpkg --path %s --wheelhouse %s -o %s 2> %s", tool, site, wh,
             out, log));
    text = h_read_file(log, NULL);
    h_assert_contains(text, ", 1 wheel, ");
    free(text);
    text = h_read_file(whl, &len);
    crypto_hash_sha256(sum, (const unsigned char *)text, len);
    sodium_bin2hex(hex, sizeof hex, sum, sizeof sum);
    free(text);
    doc = json_load_file(out, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(json_array_size(json_object_get(doc, "wheels")), 1);
    w = json_array_get(json_object_get(doc, "wheels"), 0);
    {
        json_t *want = json_pack("{s:s, s:s, s:s, s:s, s:[s, s, s]}", "file", TINY, "sha256", hex,
                                 "name", "ci-tiny", "version", "1.2.3", "requires",
                                 "ci-beta <3,>=1.0", "numpy", "ci-gamma >=0.5");
        if (!json_equal(w, want)) {
            char *got = json_dumps(w, JSON_SORT_KEYS);
            fail_msg("create listed %s", got);
        }
        json_decref(want);
    }
    json_decref(doc);

    /* Signed, it verifies, wheelhouse and all; a changed or an added
     * wheel is a finding. */
    sh(h_fmt("%s sign --key %s %s 2> /dev/null", tool, secret, out));
    sh(h_fmt("%s verify --key %s --wheelhouse %s %s > /dev/null 2> %s", tool, pub, wh, out, log));
    text = h_read_file(log, NULL);
    h_assert_contains(text, "; 1 wheel listed\n");
    h_assert_contains(text, "; the 1 listed wheel as listed, no extra wheel");
    free(text);
    text = h_read_file(whl, &len);
    write_mode(p = h_fmt("%s/ci_tiny-2.0-py3-none-any.whl", wh), "", 0644), free(p);
    h_write_file(whl, text, len - 1);
    free(text);
    assert_int_equal(status_of(h_fmt("%s diff --wheelhouse %s %s > %s 2> /dev/null", tool, wh, out,
                                     log)),
                     1);
    text = h_read_file(log, NULL);
    p = h_fmt("changed %s\nextra %s/ci_tiny-2.0-py3-none-any.whl\n", whl, wh);
    h_assert_str(text, p);
    free(p);
    free(text);
    p = h_fmt("%s/ci_tiny-2.0-py3-none-any.whl", wh), unlink(p), free(p);

    /* Not a zip, or a zip without METADATA: create fails, naming it, and
     * writes nothing. */
    unlink(out);
    write_mode(p = h_fmt("%s/ci_bad-1.0-py3-none-any.whl", wh), "not a zip\n", 0644);
    assert_int_equal(status_of(h_fmt("%s create --packages okpkg --path %s --wheelhouse %s -o %s "
                                     "2> %s",
                                     tool, site, wh, out, log)),
                     2);
    text = h_read_file(log, NULL);
    {
        char *want = h_fmt("cannot list a wheel: %s: not a zip archive", p);
        h_assert_contains(text, want);
        free(want);
    }
    free(text);
    unlink(p);
    free(p);
    assert_int_equal(access(out, F_OK), -1);
    sh(h_fmt("/usr/bin/python3 %s/manifest_make_wheel.py nometa %s > /dev/null", CI_TEST_CELLS, wh));
    assert_int_equal(status_of(h_fmt("%s create --packages okpkg --path %s --wheelhouse %s -o %s "
                                     "2> %s",
                                     tool, site, wh, out, log)),
                     2);
    text = h_read_file(log, NULL);
    p = h_fmt("cannot list a wheel: %s/ci_nometa-1.0-py3-none-any.whl: it holds no "
              "NAME.dist-info/METADATA: not a wheel", wh);
    h_assert_contains(text, p);
    free(p);
    free(text);
    assert_int_equal(access(out, F_OK), -1);

    h_rmtree(wh);
    unlink(log);
    free(wh);
    free(out);
    free(log);
    free(whl);
}

/* make demo-macro's cells, unchanged, under the manifest. */
static void test_demo_under_manifest(void **state)
{
    require_landlock();
    char *build = h_build_dir(), *demo, *out = h_fmt("%s/demo", tmp);

    assert_non_null(build);
    demo = h_fmt("%s/scripted_agent", build);
    free(build);
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
        cmocka_unit_test(test_wheels_verified),
        cmocka_unit_test(test_wheels_refused),
        cmocka_unit_test(test_create_wheelhouse),
        cmocka_unit_test(test_demo_under_manifest),
    };

    h_watchdog(600);
    return cmocka_run_group_tests_name("manifest", tests, group_setup, group_teardown);
}
