/*
 * scripted_agent: an agent host with a scripted agent.
 *
 *     scripted_agent [--manifest FILE --public-key FILE.pub] CELLS OUTDIR FILE...
 *
 * It starts a sandboxed session, uploads each FILE into its workspace
 * under the file's own name, and runs the cells an analyst agent would
 * write, one after another (state persists between them, as in a
 * notebook): the *.py files of the folder CELLS in the order of their
 * names (alphasort: 1_load.py before 2_change.py), each file one cell. In a real agent a model writes them. It
 * prints each result as the host receives it: text, value, the files the
 * cell wrote, and its rich outputs, of which figures come back as
 * image/png outputs saved into OUTDIR as they arrive. Then it copies
 * every file the cells wrote in the top of the workspace out of the
 * session into OUTDIR. With --manifest, the session may import only the
 * packages of that signed package manifest (codeinterp-manifest(1)), which
 * the key of --public-key must have signed; the cells are the same.
 *
 * Exit status: 0 if every cell ran to the end and every file came back;
 * 1 otherwise; 2 for a wrong command line.
 */
#include <codeinterp.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
        printf("  %-30s %8zu bytes  -> %s\n", name, len, path);
    ci_free(data);
    return ok ? 0 : -1;
}

static int is_cell(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && strcmp(e->d_name + n - 3, ".py") == 0;
}

/* The names written so far, each once, to be copied out at the end. */
struct written {
    char **names;
    size_t count;
};

/* Adds the files @r says its cell wrote in the top of the workspace; the
 * spill files under .outputs/ stay. 0, or -1 out of memory. */
static int note_files(struct written *w, const ci_result *r)
{
    for (size_t i = 0; i < ci_result_file_count(r); i++) {
        const char *name = ci_result_file_name(r, i);
        size_t j = 0;
        if (strchr(name, '/'))
            continue;
        while (j < w->count && strcmp(w->names[j], name) != 0)
            j++;
        if (j < w->count)
            continue;
        char **more = realloc(w->names, (w->count + 1) * sizeof *more);
        if (!more)
            return -1;
        w->names = more;
        if (!(w->names[w->count] = strdup(name)))
            return -1;
        w->count++;
    }
    return 0;
}

/* Uploads @path into @s's workspace under its own name. */
static int upload(ci_session *s, const char *path)
{
    size_t len;
    char *data = read_file(path, &len);
    if (!data) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    int rc = ci_session_put_file(s, name, data, len);
    free(data);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_put_file %s: %s: %s\n", name, ci_strerror(rc),
                ci_session_errmsg(s));
        return -1;
    }
    printf("uploaded %s as %s (%zu bytes)\n", path, name, len);
    return 0;
}

/* Runs cell @path in @s and prints it and its result; 0 if it ran to the
 * end, -1 otherwise. */
static int run_cell(ci_session *s, const char *path, const char *outdir, struct written *w)
{
    size_t len;
    char *code = read_file(path, &len);
    if (!code || memchr(code, '\0', len)) {
        fprintf(stderr, "%s: %s\n", path, code ? "not a text file" : strerror(errno));
        free(code);
        return -1;
    }
    code[len] = '\0'; /* read_file leaves room: len < its buffer */
    printf("\nIn [%s]:\n", strrchr(path, '/') + 1);
    print_indented("    ", code);
    printf("\n");
    fflush(stdout); /* show the cell before it runs, in order with stderr */

    ci_result *r;
    int rc = ci_run(s, code, &r), failed = 0, figures = 0;
    free(code);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_run: %s: %s\n", ci_strerror(rc), ci_session_errmsg(s));
        return -1;
    }
    print_result(r);
    if (print_outputs(r, outdir, &figures) != 0 || note_files(w, r) != 0 ||
        ci_result_status(r) != CI_STATUS_OK)
        failed = -1;
    fflush(stdout);
    ci_result_free(r);
    return failed;
}

int main(int argc, char **argv)
{
    const char *manifest = NULL, *public_key = NULL;

    if (argc >= 6 && !strcmp(argv[1], "--manifest") && !strcmp(argv[3], "--public-key")) {
        manifest = argv[2];
        public_key = argv[4];
        argv += 4;
        argc -= 4;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s [--manifest FILE --public-key FILE.pub] CELLS OUTDIR FILE...\n",
                argv[0]);
        return 2;
    }
    const char *cells_dir = argv[1], *outdir = argv[2];

    struct dirent **cells;
    int ncells = scandir(cells_dir, &cells, is_cell, alphasort);
    if (ncells <= 0) {
        fprintf(stderr, "%s: %s\n", cells_dir, ncells < 0 ? strerror(errno) : "no *.py cells");
        return 1;
    }
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "mkdir %s: %s\n", outdir, strerror(errno));
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
        return 1;
    }
    printf("session started: worker pid %d, workspace %s\n",
           ci_session_pid(s), ci_session_workspace(s));

    /* 2. Give it the data. */
    int failed = 0;
    for (int i = 3; i < argc && !failed; i++)
        failed = upload(s, argv[i]) != 0;

    /* 3. Run the agent's cells, one after another. A scripted agent
     *    cannot adapt to a failed cell, so it stops there; a real one
     *    would read the error and try again. */
    struct written w = {NULL, 0};
    for (int i = 0; i < ncells; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", cells_dir, cells[i]->d_name);
        if (!failed && run_cell(s, path, outdir, &w) != 0)
            failed = 1;
        free(cells[i]);
    }
    free(cells);

    /* 4. Copy what the cells wrote out. */
    if (!failed && w.count) {
        printf("\nfiles copied out of the session:\n");
        for (size_t i = 0; i < w.count; i++)
            if (fetch(s, w.names[i], outdir) != 0)
                failed = 1;
    }
    for (size_t i = 0; i < w.count; i++)
        free(w.names[i]);
    free(w.names);

    /* 5. Kill the worker and remove its workspace. */
    ci_session_free(s);
    printf("\n%s\n", failed ? "FAILED" : "done");
    return failed;
}
