/*
 * The analyst's package set that make deps installs from Debian: each
 * package imports in a session, from Debian's dist-packages, and does its
 * job there under the sandbox: a seaborn figure, Excel and OpenDocument
 * files that round-trip through the workspace, Markdown tables, model
 * fits, plotly's MIME bundle, documents and PDFs written and read back,
 * and requests refused with the network policy's message. The group's
 * session has the defaults. Last, the whole set round-trips through
 * codeinterp-manifest create and sign and a session under that manifest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, NULL);
}

/* The set, as make deps installs it: the module a cell imports, the
 * Debian package it comes from and its distribution, a line each. Run
 * from the top of the tree. */
#define SET_LIST "tools/analysis_packages.txt"

/* Each module imports, and from Debian's directory, not another install;
 * the list is all of the set (it names pandas and plotly). */
static void test_each_package_imports_from_debian(void **state)
{
    char line[256], module[128], debian[128];
    int count = 0, pandas = 0, plotly = 0;
    FILE *f = fopen(SET_LIST, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%127s %127s", module, debian) != 2)
            continue;
        char *code = h_fmt("import %s as m\nm.__file__.split('/')[:5]", module);
        ci_result *r = h_run(S, code);
        if (ci_result_status(r) != CI_STATUS_OK) {
            h_dump(r);
            fail_msg("import %s (%s) failed", module, debian);
        }
        h_assert_str(ci_result_value(r), "['', 'usr', 'lib', 'python3', 'dist-packages']");
        ci_result_free(r);
        free(code);
        count++;
        pandas |= !strcmp(debian, "python3-pandas");
        plotly |= !strcmp(debian, "python3-plotly");
    }
    fclose(f);
    assert_int_equal(count, 29);
    assert_true(pandas && plotly);
}

/* sns.barplot draws the means as bars and the figure comes back as a PNG. */
static void test_seaborn_barplot_gives_a_figure(void **state)
{
    uint32_t w, h;
    char *cell = h_cell("packages_seaborn_barplot");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    h_assert_str(ci_result_value(r), "[2.0, 4.0]");
    assert_int_equal(h_count_mime(r, "image/png"), 1);
    h_png_size(r, h_find_mime(r, "image/png", 0), &w, &h);
    assert_true(w > 100 && h > 100);
    ci_result_free(r);
}

/* The first bytes of workspace file @name, as the host gets them. */
static void assert_file_starts(const char *name, const char *magic, size_t n)
{
    void *data;
    size_t len;
    assert_int_equal(ci_session_get_file(S, name, &data, &len), CI_OK);
    assert_true(len > n);
    assert_memory_equal(data, magic, n);
    ci_free(data);
}

/* df.to_excel and pd.read_excel round-trip in the workspace, with each
 * writer (openpyxl, XlsxWriter, odfpy), and the host gets the files. */
static void test_excel_round_trips_in_the_workspace(void **state)
{
    h_expect_cell(S, "packages_excel_round_trip", "True", NULL);
    char *cell = h_cell("packages_excel_engines");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    h_assert_str(ci_result_value(r), "(True, True)");
    assert_int_equal(ci_result_file_count(r), 2);
    ci_result_free(r);
    assert_file_starts("q.xlsx", "PK\3\4", 4);
    assert_file_starts("w.xlsx", "PK\3\4", 4);
    assert_file_starts("q.ods", "PK\3\4", 4);
}

/* df.to_markdown, through tabulate. */
static void test_to_markdown(void **state)
{
    h_expect(S,
             "print(pd.DataFrame({'k': ['a', 'b'], 'v': [1, 22]}).to_markdown(index=False))",
             NULL,
             "| k   |   v |\n"
             "|:----|----:|\n"
             "| a   |   1 |\n"
             "| b   |  22 |\n");
}

/* Fits: scikit-learn (a forest on two threads too), statsmodels, scipy,
 * sympy, networkx, joblib. */
static void test_models_fit(void **state)
{
    h_expect_cell(S, "packages_sklearn_linear", "(2.0, 1.0)", NULL);
    h_expect_cell(S, "packages_sklearn_forest", "[0, 1]", NULL);
    h_expect_cell(S, "packages_statsmodels_ols", "[2.0, 3.0]", NULL);
    h_expect(S, "import scipy.stats\nround(float(scipy.stats.norm.ppf(0.975)), 4)", "1.96", NULL);
    h_expect(S, "import sympy\nsympy.solve(sympy.Symbol('x')**2 - 4)", "[-2, 2]", NULL);
    h_expect(S, "import networkx as nx\nnx.shortest_path(nx.cycle_graph(6), 0, 4)", "[0, 5, 4]",
             NULL);
    h_expect(S,
             "from joblib import Parallel, delayed\n"
             "Parallel(n_jobs=2)(delayed(pow)(i, 2) for i in range(5))",
             "[0, 1, 4, 9, 16]", NULL);
}

/* A plotly figure as the last expression gives plotly's MIME bundle. */
static void test_plotly_gives_its_mime_bundle(void **state)
{
    ci_result *r = h_run_status(S,
                                "import plotly.graph_objects as go\n"
                                "go.Figure(go.Bar(x=['a', 'b'], y=[1, 2]))",
                                CI_STATUS_OK);
    size_t i = h_find_mime(r, "application/vnd.plotly.v1+json", 0);
    const char *json = (const char *)ci_result_output_data(r, i, NULL);
    h_assert_contains(json, "\"data\": [{\"x\": [\"a\", \"b\"], \"y\": [1, 2], \"type\": \"bar\"}]");
    assert_true(h_count_mime(r, "text/html") >= 1);
    ci_result_free(r);
}

/* requests fails with the network policy's words, not a bare socket error
 * (nor, for https, its missing CA bundle: the worker has none). */
static void test_requests_refused_with_the_policy(void **state)
{
    static const char *const cells[] = {
        "import requests\nrequests.get('http://example.com/', timeout=5)",
        "requests.get('https://example.com/', timeout=5)"};

    for (size_t i = 0; i < 2; i++) {
        ci_result *r = h_run_status(S, cells[i], CI_STATUS_ERROR);
        h_assert_str(ci_result_error_name(r), "ConnectionError");
        h_assert_contains(ci_result_error_value(r), "network access is disabled in this sandbox");
        ci_result_free(r);
    }
}

/* Documents written in the workspace and read back: Word, PDF (reportlab
 * writes, pypdf reads), an image. */
static void test_documents_round_trip(void **state)
{
    h_expect_cell(S, "packages_docx_memo", "['Variance', 'Sales over budget']", NULL);
    h_expect_cell(S, "packages_reportlab_pdf", "'Total variance -928,634 USD'", NULL);
    h_expect_cell(S, "packages_pillow_png", "((30, 20), (255, 0, 0))", NULL);
    assert_file_starts("memo.pdf", "%PDF", 4);
}

/* Text and markup: bs4 over lxml, jinja2, yaml, tabulate, dateutil, pytz,
 * IPython's display, tqdm's progress bar on stderr. */
static void test_text_tools(void **state)
{
    h_expect(S,
             "from bs4 import BeautifulSoup\n"
             "[td.text for td in BeautifulSoup('<tr><td>a</td><td>b</td></tr>', 'lxml')('td')]",
             "['a', 'b']", NULL);
    h_expect(S, "import jinja2\njinja2.Template('{{ n }} lines').render(n=3)", "'3 lines'", NULL);
    h_expect(S, "import yaml\nyaml.safe_load('a: [1, 2]')", "{'a': [1, 2]}", NULL);
    h_expect(S, "import tabulate\nprint(tabulate.tabulate([[1, 2]], tablefmt='plain'))", NULL,
             "1  2\n");
    h_expect(S,
             "import dateutil.parser, pytz\n"
             "dateutil.parser.parse('2025-03-31T12:00Z').astimezone("
             "pytz.timezone('Europe/Paris')).isoformat()",
             "'2025-03-31T14:00:00+02:00'", NULL);
    ci_result *r = h_run_status(S,
                                "from IPython.display import Markdown, display\n"
                                "display(Markdown('**F**'))",
                                CI_STATUS_OK);
    h_assert_output(r, h_find_mime(r, "text/markdown", 0), "text/markdown", "**F**",
                    CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
    r = h_run_status(S, "from tqdm import tqdm\nsum(tqdm(range(1000)))", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "499500");
    h_assert_contains(ci_result_stderr(r, NULL), "1000/1000");
    ci_result_free(r);
}

/* Column @col (0: the module, 2: the distribution) of the set's lines,
 * joined by @sep; malloc'ed. */
static char *set_column(int col, const char *sep)
{
    char line[256], field[3][128], *out = h_fmt("%s", "");
    FILE *f = fopen(SET_LIST, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%127s %127s %127s", field[0], field[1], field[2]) != 3)
            continue;
        char *grown = h_fmt("%s%s%s", out, *out ? sep : "", field[col]);
        free(out);
        out = grown;
    }
    fclose(f);
    return out;
}

/* Every distribution of the set goes through codeinterp-manifest create
 * and sign, and a session under that manifest imports every module of
 * it, and isympy (a top-level module of sympy's whose .pyc Debian's
 * file list leaves out). */
static void test_the_set_under_its_own_manifest(void **state)
{
    char *exe;
    ci_session *s;

    if (!h_probe(1)->landlock) {
        h_skip_because("a package manifest's read rules need Landlock, which this kernel does "
                       "not offer");
        return;
    }
    assert_non_null(exe = h_build_dir());
    char *dir = h_tmpdir(), *dists = set_column(2, ","), *modules = set_column(0, " ");
    char *cmd = h_fmt("cd %s && %s/codeinterp-manifest keygen k >/dev/null 2>&1 && "
                      "%s/codeinterp-manifest create --packages %s -o m.json 2>/dev/null && "
                      "%s/codeinterp-manifest sign --key k.key m.json >/dev/null 2>&1",
                      dir, exe, exe, dists, exe);
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("command failed (status %d): %s", st, cmd);
    char *manifest = h_fmt("%s/m.json", dir), *pub = h_fmt("%s/k.pub", dir);
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_manifest(cfg, manifest, pub), CI_OK);
    /* With network too: the manifest's import hook and the one that
     * patches requests and urllib3 for the host's HTTP both ask the
     * finders after them, never each other in a loop. */
    assert_int_equal(ci_config_allow_url(cfg, "http://127.0.0.1:9/"), CI_OK);
    /* The zygote hashes every listed file (some 50,000) before READY. */
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 200000), CI_OK);
    assert_int_equal(ci_config_set_timeout_ms(cfg, 200000), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    char *code = h_fmt("import importlib\n"
                       "names = '%s isympy'.split()\n"
                       "len([importlib.import_module(m) for m in names])", modules);
    ci_result *r = h_run_status(s, code, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "30");
    ci_result_free(r);
    ci_session_free(s);
    ci_config_free(cfg);
    h_rmtree(dir);
    free(code), free(pub), free(manifest), free(cmd), free(modules), free(dists), free(dir);
    free(exe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_each_package_imports_from_debian, h_setup_alive),
        cmocka_unit_test_setup(test_seaborn_barplot_gives_a_figure, h_setup_alive),
        cmocka_unit_test_setup(test_excel_round_trips_in_the_workspace, h_setup_alive),
        cmocka_unit_test_setup(test_to_markdown, h_setup_alive),
        cmocka_unit_test_setup(test_models_fit, h_setup_alive),
        cmocka_unit_test_setup(test_plotly_gives_its_mime_bundle, h_setup_alive),
        cmocka_unit_test_setup(test_requests_refused_with_the_policy, h_setup_alive),
        cmocka_unit_test_setup(test_documents_round_trip, h_setup_alive),
        cmocka_unit_test_setup(test_text_tools, h_setup_alive),
        cmocka_unit_test(test_the_set_under_its_own_manifest),
    };

    h_watchdog(300);
    return cmocka_run_group_tests_name("packages", tests, group_setup, h_group_teardown);
}
