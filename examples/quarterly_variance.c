/*
 * quarterly_variance: an agent host with a scripted agent.
 *
 *     quarterly_variance [--manifest FILE --public-key FILE.pub] CSV OUTDIR
 *
 * It starts a sandboxed session, uploads CSV (US quarterly macro data) as
 * macrodata.csv, runs the cells an analyst agent would write one after
 * another (state persists between them, as in a notebook), prints each
 * result as the host receives it: text, value, the files the cell wrote,
 * and its rich outputs, of which the chart comes back as an image/png
 * figure output saved into OUTDIR as it arrives. Then it copies the report
 * and the chart files the cells wrote out of the session into OUTDIR.
 * With --manifest, the session may import only the packages of that
 * signed package manifest (codeinterp-manifest(1)), which the key of
 * --public-key must have signed; the cells are the same.
 *
 * Exit status: 0 if every cell ran to the end and every file came back;
 * 1 otherwise.
 */
#include <codeinterp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The agent's cells, in order. In a real agent a model writes these. */
static const char *const cells[] = {
    /* 1. Load and inspect. */
    "import pandas as pd\n"
    "pd.set_option('display.width', 120)\n"
    "pd.set_option('display.max_columns', 20)\n"
    "\n"
    "df = pd.read_csv('macrodata.csv')\n"
    "df.index = pd.PeriodIndex(df['year'].astype(int).astype(str) + 'Q'\n"
    "                          + df['quarter'].astype(int).astype(str), freq='Q')\n"
    "df = df.drop(columns=['year', 'quarter'])\n"
    "print('shape:', df.shape)\n"
    "print('quarters:', df.index[0], 'to', df.index[-1])\n"
    "print('columns:', ', '.join(df.columns))\n"
    "print('missing values:', int(df.isna().sum().sum()))\n"
    "df.head()",

    /* 2. Quarter-over-quarter and year-over-year change. */
    "series = ['realgdp', 'realcons', 'realinv', 'realgovt', 'realdpi',\n"
    "          'cpi', 'm1', 'unemp']\n"
    "levels = df[series]\n"
    "qoq = levels.pct_change() * 100      # % change on the previous quarter\n"
    "yoy = levels.pct_change(4) * 100     # % change on the same quarter a year earlier\n"
    "# unemp is already a rate: its change is in percentage points, not %\n"
    "qoq['unemp'] = levels['unemp'].diff()\n"
    "yoy['unemp'] = levels['unemp'].diff(4)\n"
    "print('QoQ change, last 4 quarters:')\n"
    "print(qoq.tail(4).round(2))\n"
    "print()\n"
    "print('YoY change since 2008:')\n"
    "yoy.loc['2008Q1':].round(2)",

    /* 3. The quarters with the largest swings. */
    "for name in ['realgdp', 'realinv']:\n"
    "    moves = qoq[name].dropna()\n"
    "    top = moves.loc[moves.abs().nlargest(5).index]\n"
    "    print(f'largest QoQ moves of {name}:')\n"
    "    for quarter, change in top.items():\n"
    "        print(f'  {quarter}  {change:+6.2f} %')",

    /* 4. A variance report per series, as CSV and as a Markdown table. */
    "rows = []\n"
    "for name in series:\n"
    "    s = qoq[name].dropna()\n"
    "    rows.append({'series': name, 'unit': 'pp' if name == 'unemp' else '%',\n"
    "                 'mean': s.mean(), 'std': s.std(), 'variance': s.var(),\n"
    "                 'min': s.min(), 'min_quarter': str(s.idxmin()),\n"
    "                 'max': s.max(), 'max_quarter': str(s.idxmax())})\n"
    "report = (pd.DataFrame(rows).set_index('series')\n"
    "          .sort_values('variance', ascending=False).round(3))\n"
    "report.to_csv('variance_report.csv')\n"
    "\n"
    "def cell(v):\n"
    "    return f'{v:.3f}' if isinstance(v, float) else str(v)\n"
    "\n"
    "header = ['series'] + list(report.columns)\n"
    "lines = ['# Variance of quarter-over-quarter change, '\n"
    "         f'{df.index[1]} to {df.index[-1]}', '',\n"
    "         'Change in % on the previous quarter (unemp: in percentage points),'\n"
    "         ' sorted by variance.', '',\n"
    "         '| ' + ' | '.join(header) + ' |',\n"
    "         '|' + '|'.join(':---' if h in ('series', 'unit') or h.endswith('quarter')\n"
    "                        else '---:' for h in header) + '|']\n"
    "for name, row in report.iterrows():\n"
    "    lines.append('| ' + ' | '.join([name] + [cell(v) for v in row]) + ' |')\n"
    "with open('variance_report.md', 'w') as f:\n"
    "    f.write('\\n'.join(lines) + '\\n')\n"
    "print('\\n'.join(lines[4:]))",

    /* 5. A chart of year-over-year change, recessions shaded. */
    "import matplotlib.pyplot as plt\n"
    "\n"
    "x = yoy.index.to_timestamp()\n"
    "falling = qoq.index[qoq['realgdp'] < 0]\n"
    "labels = {'realgdp': 'real GDP', 'realcons': 'real consumption',\n"
    "          'realinv': 'real investment'}\n"
    "colors = {'realgdp': 'tab:blue', 'realcons': 'tab:orange',\n"
    "          'realinv': 'tab:green'}\n"
    "fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 7), dpi=100)\n"
    "for ax, names in [(top, ['realgdp', 'realcons']), (bottom, ['realinv'])]:\n"
    "    for q in falling:\n"
    "        ax.axvspan(q.start_time, q.end_time, color='0.87', lw=0)\n"
    "    for name in names:\n"
    "        ax.plot(x, yoy[name], lw=1.5, color=colors[name], label=labels[name])\n"
    "    ax.axhline(0, color='black', lw=0.8)\n"
    "    ax.set_ylabel('% change, year over year')\n"
    "    ax.grid(axis='y', color='0.9')\n"
    "    ax.legend(loc='lower left', frameon=False)\n"
    "top.set_title(f'US real GDP, consumption and investment, {yoy.index[4]}-{yoy.index[-1]}\\n'\n"
    "              '(grey: quarters in which real GDP fell)')\n"
    "bottom.margins(x=0.01)\n"
    "fig.tight_layout()\n"
    "fig.savefig('variance_chart.png')   # a file, and the figure comes back too\n"
    "print(f'chart: {len(falling)} quarters of falling real GDP shaded')",

    /* 6. A summary value for the agent's answer: the cell's last expression. */
    "import os\n"
    "worst = qoq['realgdp'].idxmin()\n"
    "{'quarters': len(df),\n"
    " 'most_volatile': report.index[0],\n"
    " 'least_volatile': report.index[-1],\n"
    " 'gdp_qoq_std_pct': float(report.loc['realgdp', 'std']),\n"
    " 'worst_gdp_quarter': f\"{worst} ({qoq['realgdp'][worst]:+.2f} %)\",\n"
    " 'files': sorted(f for f in os.listdir('.') if f.startswith('variance_'))}",
};

/* The files the cells write, to be copied out of the session. */
static const char *const outputs[] = {
    "variance_report.csv",
    "variance_report.md",
    "variance_chart.png",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *status_name(ci_status st)
{
    switch (st) {
    case CI_STATUS_OK: return "ok";
    case CI_STATUS_ERROR: return "error";
    case CI_STATUS_TIMEOUT: return "timeout";
    case CI_STATUS_MEMORY: return "out of memory";
    case CI_STATUS_KILLED: return "worker killed";
    case CI_STATUS_INTERRUPTED: return "interrupted";
    }
    return "?";
}

/* Prints @text with @indent before each line. */
static void print_indented(const char *indent, const char *text)
{
    while (*text) {
        size_t n = strcspn(text, "\n");
        if (n > 0)
            printf("%s%.*s", indent, (int)n, text);
        putchar('\n');
        text += n;
        if (*text == '\n')
            text++;
    }
}

static int save(const char *path, const void *data, size_t len);

/* The rich outputs, one line a message: its first, richest, representation,
 * as a notebook shows it. Figures (image/png) are saved into @dir as
 * cell<N>-output<I>.png, where a chat front end would show them. */
static int print_outputs(const ci_result *r, const char *dir, int *figures)
{
    int failed = 0;
    for (size_t i = 0; i < ci_result_output_count(r); i++) {
        size_t len;
        if (i > 0 && ci_result_output_message(r, i) == ci_result_output_message(r, i - 1))
            continue;
        const unsigned char *data = ci_result_output_data(r, i, &len);
        const char *mime = ci_result_output_mime(r, i);
        const char *kind =
            ci_result_output_type(r, i) == CI_OUTPUT_EXECUTE_RESULT ? "execute_result"
                                                                     : "display_data";
        if (strcmp(mime, "image/png") == 0 && len >= 24) {
            char path[4096];
            /* Width and height, big-endian, in the IHDR chunk. */
            unsigned long w = (unsigned long)data[16] << 24 | data[17] << 16 | data[18] << 8 | data[19];
            unsigned long h = (unsigned long)data[20] << 24 | data[21] << 16 | data[22] << 8 | data[23];
            snprintf(path, sizeof path, "%s/cell%d-output%zu.png", dir,
                     ci_result_execution_count(r), i + 1);
            printf("[%s] image/png %lux%lu, %zu bytes -> %s\n", kind, w, h, len, path);
            if (save(path, data, len) != 0)
                failed = 1;
            ++*figures;
        } else {
            printf("[%s] %s, %zu bytes\n", kind, mime, len);
        }
    }
    for (size_t i = 0; i < ci_result_file_count(r); i++)
        printf("%s%s", i ? ", " : "[files written] ", ci_result_file_name(r, i));
    if (ci_result_file_count(r))
        putchar('\n');
    printf("[%.1f ms wall, %.1f ms CPU, peak RSS %.0f MiB]\n", ci_result_wall_time_us(r) / 1e3,
           ci_result_cpu_time_us(r) / 1e3, ci_result_peak_memory(r) / 1048576.0);
    return failed;
}

/* Prints a cell's result the way a notebook shows it. */
static void print_result(const ci_result *r)
{
    size_t len;
    const char *out = ci_result_stdout(r, &len);
    fwrite(out, 1, len, stdout);
    if (len > 0 && out[len - 1] != '\n')
        putchar('\n');

    const char *err = ci_result_stderr(r, &len);
    if (len > 0) {
        printf("[stderr]\n");
        fwrite(err, 1, len, stdout);
        if (err[len - 1] != '\n')
            putchar('\n');
    }

    const char *value = ci_result_value(r);
    if (value) {
        int n = ci_result_execution_count(r);
        if (strchr(value, '\n'))
            printf("Out[%d]:\n%s\n", n, value);
        else
            printf("Out[%d]: %s\n", n, value);
    }

    if (ci_result_status(r) != CI_STATUS_OK) {
        const char *name = ci_result_error_name(r);
        const char *msg = ci_result_error_value(r);
        printf("[%s] %s: %s\n", status_name(ci_result_status(r)),
               name ? name : "?", msg ? msg : "");
        if (ci_result_traceback(r))
            print_indented("    ", ci_result_traceback(r));
    }
    if (ci_result_truncated(r))
        printf("[output truncated at the output limit]\n");
}

/* Reads a whole file into a malloc'd buffer; NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = realloc(buf, cap *= 2);
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
        errno = EIO;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Writes @len bytes to @path; 0, or -1 after saying why. */
static int save(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "write %s: %s\n", path, strerror(errno));
    return ok ? 0 : -1;
}

/* Copies @name out of the session's workspace into @dir; prints its size. */
static int fetch(ci_session *s, const char *name, const char *dir)
{
    void *data;
    size_t len;
    int rc = ci_session_get_file(s, name, &data, &len);
    if (rc != CI_OK) {
        fprintf(stderr, "get %s: %s: %s\n", name, ci_strerror(rc),
                ci_session_errmsg(s));
        return -1;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int ok = save(path, data, len) == 0;
    if (ok)
        printf("  %-22s %8zu bytes  -> %s\n", name, len, path);
    ci_free(data);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *manifest = NULL, *public_key = NULL;

    if (argc == 7 && !strcmp(argv[1], "--manifest") && !strcmp(argv[3], "--public-key")) {
        manifest = argv[2];
        public_key = argv[4];
        argv += 4;
        argc -= 4;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s [--manifest FILE --public-key FILE.pub] CSV OUTDIR\n",
                argv[0]);
        return 2;
    }
    const char *csv_path = argv[1], *outdir = argv[2];

    if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mkdir %s: %s\n", outdir, strerror(errno));
        return 1;
    }
    size_t csv_len;
    char *csv = read_file(csv_path, &csv_len);
    if (!csv) {
        fprintf(stderr, "%s: %s\n", csv_path, strerror(errno));
        return 1;
    }

    /* 1. Start a sandboxed worker with the default limits, and the
     *    package manifest if one was given. */
    ci_session *s;
    ci_config *cfg = ci_config_new();
    int rc = cfg ? CI_OK : CI_ENOMEM;
    if (rc == CI_OK && manifest)
        rc = ci_config_set_manifest(cfg, manifest, public_key);
    if (rc == CI_OK)
        rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_new: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(NULL));
        free(csv);
        return 1;
    }
    printf("session started: worker pid %d, workspace %s\n",
           ci_session_pid(s), ci_session_workspace(s));

    /* 2. Give it the data. */
    rc = ci_session_put_file(s, "macrodata.csv", csv, csv_len);
    free(csv);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_put_file: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(s));
        ci_session_free(s);
        return 1;
    }
    printf("uploaded %s as macrodata.csv (%zu bytes)\n", csv_path, csv_len);

    /* 3. Run the agent's cells, one after another. */
    int failed = 0, figures = 0;
    for (size_t i = 0; i < COUNT(cells); i++) {
        printf("\nIn [%zu]:\n", i + 1);
        print_indented("    ", cells[i]);
        printf("\n");
        fflush(stdout); /* show the cell before it runs, in order with stderr */

        ci_result *r;
        rc = ci_run(s, cells[i], &r);
        if (rc != CI_OK) {
            fprintf(stderr, "ci_run: %s: %s\n", ci_strerror(rc),
                    ci_session_errmsg(s));
            failed = 1;
            break;
        }
        print_result(r);
        if (print_outputs(r, outdir, &figures) != 0)
            failed = 1;
        fflush(stdout);
        if (ci_result_status(r) != CI_STATUS_OK)
            failed = 1;
        ci_result_free(r);
        if (failed)
            break; /* a scripted agent cannot adapt; a real one would */
    }

    /* 4. Copy the results out. The chart came back as a figure already. */
    if (!failed && figures != 1) {
        fprintf(stderr, "expected the chart as one figure output, got %d\n", figures);
        failed = 1;
    }
    if (!failed) {
        printf("\nfiles copied out of the session:\n");
        for (size_t i = 0; i < COUNT(outputs); i++)
            if (fetch(s, outputs[i], outdir) != 0)
                failed = 1;
    }

    /* 5. Kill the worker and remove its workspace. */
    ci_session_free(s);
    printf("\n%s\n", failed ? "FAILED" : "done");
    return failed;
}
