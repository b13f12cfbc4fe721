/*
 * repl: a small interactive host for one sandboxed session.
 *
 *     repl [-t TIMEOUT_MS]
 *
 * Reads cells from standard input: a cell ends at a blank line, end of
 * input ends the program. Runs each cell and prints what the host gets
 * back: stdout and stderr as the cell prints them (streamed), then
 * "Out[n]: value" or the error and its traceback, one line per rich
 * output (a figure, a display() call), the files the cell wrote, and a
 * status line when a limit ended the cell. Ctrl-C interrupts the running
 * cell, as in Jupyter; the variables stay. When the worker dies, the
 * session is restarted (variables are lost, workspace files stay).
 *
 *     printf 'x = 6 * 7\nx\n\n1/0\n' | build/repl
 *
 * A cell cannot hold a blank line, so write function bodies without them.
 */
#include <codeinterp.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The session Ctrl-C interrupts. ci_session_interrupt() is safe in a
 * signal handler; when no cell runs it does nothing. */
static ci_session *volatile interruptible;

static void on_sigint(int sig)
{
    (void)sig;
    if (interruptible)
        ci_session_interrupt(interruptible);
}

/* Streamed output: stdout as it is, stderr too (the terminal shows both). */
static void on_output(int stream, const char *data, size_t len, void *payload)
{
    (void)payload;
    fwrite(data, 1, len, stream == CI_STREAM_STDERR ? stderr : stdout);
    fflush(stream == CI_STREAM_STDERR ? stderr : stdout);
}

static int is_blank(const char *line)
{
    return line[strspn(line, " \t\r\n")] == '\0';
}

/* Writes @len bytes of @text, and a newline if it does not end with one. */
static void put_text(const char *text, size_t len)
{
    fwrite(text, 1, len, stdout);
    if (len > 0 && text[len - 1] != '\n')
        putchar('\n');
}

/* One line per rich output message: its first (richest) representation,
 * as a notebook shows it; text/plain in full, anything else described. */
static void print_outputs(const ci_result *r)
{
    size_t n = ci_result_output_count(r);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const unsigned char *data = ci_result_output_data(r, i, &len);
        const char *mime = ci_result_output_mime(r, i);
        if (i > 0 && ci_result_output_message(r, i) == ci_result_output_message(r, i - 1))
            continue;
        if (strcmp(mime, "text/plain") == 0) {
            put_text((const char *)data, len);
        } else if (strcmp(mime, "image/png") == 0 && len >= 24) {
            /* The IHDR chunk follows the signature: width, height. */
            unsigned long w = (unsigned long)data[16] << 24 | data[17] << 16 | data[18] << 8 | data[19];
            unsigned long h = (unsigned long)data[20] << 24 | data[21] << 16 | data[22] << 8 | data[23];
            printf("[%s: image/png, %lux%lu, %zu bytes]\n",
                   ci_result_output_type(r, i) == CI_OUTPUT_EXECUTE_RESULT ? "Out" : "display",
                   w, h, len);
        } else {
            printf("[%s: %s, %zu bytes]\n",
                   ci_result_output_type(r, i) == CI_OUTPUT_EXECUTE_RESULT ? "Out" : "display",
                   mime, len);
        }
    }
    if (ci_result_outputs_omitted(r))
        printf("[%zu outputs left out: over the display limits]\n", ci_result_outputs_omitted(r));
    n = ci_result_file_count(r);
    for (size_t i = 0; i < n; i++)
        printf("%s%s%s", i ? ", " : "[files written: ", ci_result_file_name(r, i),
               i + 1 == n ? "]\n" : "");
}

static void print_result(const ci_result *r, unsigned long timeout_ms)
{
    const char *value = ci_result_value(r);
    if (value)
        printf("Out[%d]: %s%s\n", ci_result_execution_count(r),
               strchr(value, '\n') ? "\n" : "", value);

    /* The traceback ends with the "Name: message" line, as Python prints
     * it; without one (a SyntaxError may have none), print that line. */
    ci_status st = ci_result_status(r);
    const char *name = ci_result_error_name(r);
    const char *msg = ci_result_error_value(r);
    const char *tb = ci_result_traceback(r);
    if (tb)
        put_text(tb, strlen(tb));
    else if (st == CI_STATUS_ERROR || st == CI_STATUS_MEMORY)
        printf("%s: %s\n", name ? name : "?", msg ? msg : "");
    switch (st) {
    case CI_STATUS_OK:
    case CI_STATUS_ERROR:
        break;
    case CI_STATUS_TIMEOUT:
        printf("[timeout: interrupted after %lu ms; the session and its "
               "variables are intact]\n", timeout_ms);
        break;
    case CI_STATUS_MEMORY:
        printf("[memory: the cell reached the memory limit; the session and "
               "its variables are intact]\n");
        break;
    case CI_STATUS_KILLED:
        printf("[killed: %s: %s]\n", name ? name : "?", msg ? msg : "");
        break;
    case CI_STATUS_INTERRUPTED:
        printf("[interrupted; the session and its variables are intact]\n");
        break;
    }
    print_outputs(r);
    if (ci_result_truncated(r) & (CI_TRUNCATED_STDOUT | CI_TRUNCATED_STDERR | CI_TRUNCATED_TEXT))
        printf("[output truncated at the output limit]\n");
}

/* Replaces a dead worker. Returns 0, or -1 if no new worker would start. */
static int restart(ci_session *s)
{
    int rc = ci_session_restart(s);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_restart: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(s));
        return -1;
    }
    printf("[session restarted: worker pid %d; variables are gone, files in "
           "the workspace are kept]\n", ci_session_pid(s));
    return 0;
}

/* Runs one cell and sets *@next to the next cell's number; returns 0, or
 * -1 if the session cannot go on. */
static int run_cell(ci_session *s, const char *code, unsigned long timeout_ms,
                    int *next)
{
    ci_result *r;
    fflush(stdout);
    int rc = ci_run_stream(s, code, on_output, NULL, &r);
    if (rc == CI_EDEAD) {
        *next = 1;
        return restart(s);
    }
    if (rc != CI_OK) {
        fprintf(stderr, "ci_run: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(s));
        return rc == CI_ETOOBIG ? 0 : -1;
    }
    size_t len;
    const char *out = ci_result_stdout(r, &len);
    if (len > 0 && out[len - 1] != '\n')
        putchar('\n'); /* the streamed output ended mid-line */
    print_result(r, timeout_ms);
    ci_status st = ci_result_status(r);
    *next = ci_result_execution_count(r) + 1;
    ci_result_free(r);
    if (st != CI_STATUS_KILLED)
        return 0;
    *next = 1;
    return restart(s);
}

int main(int argc, char **argv)
{
    unsigned long timeout_ms = 30000;
    int opt;
    while ((opt = getopt(argc, argv, "ht:")) != -1) {
        char *end;
        /* strtoul would take "-5" as a huge number: digits only. */
        if (opt == 't' && optarg[0] >= '0' && optarg[0] <= '9' &&
            (timeout_ms = strtoul(optarg, &end, 10), *end == '\0'))
            continue;
        fprintf(opt == 'h' ? stdout : stderr,
                "usage: %s [-t TIMEOUT_MS]\n"
                "Reads Python cells from stdin, each ended by a blank line, and runs them\n"
                "in one sandboxed session. -t sets each cell's timeout (default 30000).\n",
                argv[0]);
        return opt == 'h' ? 0 : 2;
    }

    ci_config *cfg = ci_config_new();
    if (!cfg) {
        fprintf(stderr, "ci_config_new: %s\n", ci_strerror(CI_ENOMEM));
        return 1;
    }
    int rc = ci_config_set_timeout_ms(cfg, timeout_ms);
    if (rc != CI_OK) {
        fprintf(stderr, "timeout %lu ms: %s\n", timeout_ms, ci_strerror(rc));
        ci_config_free(cfg);
        return 2;
    }
    ci_session *s;
    rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_new: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(NULL));
        return 1;
    }

    interruptible = s;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);

    /* A terminal gets prompts; piped input is echoed so the transcript
     * shows each cell above its result. */
    int tty = isatty(STDIN_FILENO);
    if (tty)
        printf("codeinterp %d.%d.%d, worker pid %d, workspace %s\n"
               "A blank line runs the cell; Ctrl-C interrupts it; end of input (Ctrl-D) "
               "quits.\n",
               CI_VERSION_MAJOR, CI_VERSION_MINOR, CI_VERSION_PATCH,
               ci_session_pid(s), ci_session_workspace(s));

    char *cell = NULL, *line = NULL;
    size_t cell_len = 0, line_cap = 0;
    int count = 1, status = 0;
    for (;;) {
        if (tty) {
            printf(cell_len ? "   ...: " : "In [%d]: ", count);
            fflush(stdout);
        }
        ssize_t n = getline(&line, &line_cap, stdin);
        if (n >= 0 && !is_blank(line)) {
            char *bigger = realloc(cell, cell_len + (size_t)n + 1);
            if (!bigger) {
                fprintf(stderr, "%s\n", ci_strerror(CI_ENOMEM));
                status = 1;
                break;
            }
            cell = bigger;
            memcpy(cell + cell_len, line, (size_t)n + 1);
            cell_len += (size_t)n;
            continue;
        }
        if (cell_len > 0) { /* a blank line or the end: run what we have */
            if (!tty) {
                printf("In [%d]:\n%s", count, cell);
                if (cell[cell_len - 1] != '\n')
                    putchar('\n');
            }
            if (run_cell(s, cell, timeout_ms, &count) != 0) {
                status = 1;
                break;
            }
            cell_len = 0;
            putchar('\n');
            fflush(stdout);
        }
        if (n < 0)
            break;
    }
    if (tty && status == 0)
        putchar('\n');
    free(line);
    free(cell);
    interruptible = NULL;
    ci_session_free(s);
    return status;
}
