/*
 * repl: a small interactive host for one sandboxed session.
 *
 *     repl [-t TIMEOUT_MS]
 *
 * Reads cells from standard input: a cell ends at a blank line, end of
 * input ends the program. Runs each cell and prints what the host gets
 * back: stdout, stderr, "Out[n]: value" or the error and its traceback,
 * and a status line when a limit ended the cell. When the worker dies,
 * the session is restarted (variables are lost, workspace files stay).
 *
 *     printf 'x = 6 * 7\nx\n\n1/0\n' | build/repl
 *
 * A cell cannot hold a blank line, so write function bodies without them.
 */
#include <codeinterp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void print_result(const ci_result *r, unsigned long timeout_ms)
{
    size_t len;
    const char *text = ci_result_stdout(r, &len);
    put_text(text, len);
    text = ci_result_stderr(r, &len);
    if (len > 0) {
        printf("[stderr]\n");
        put_text(text, len);
    }

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
    }
    if (ci_result_truncated(r))
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
    int rc = ci_run(s, code, &r);
    if (rc == CI_EDEAD) {
        *next = 1;
        return restart(s);
    }
    if (rc != CI_OK) {
        fprintf(stderr, "ci_run: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(s));
        return rc == CI_ETOOBIG ? 0 : -1;
    }
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

    /* A terminal gets prompts; piped input is echoed so the transcript
     * shows each cell above its result. */
    int tty = isatty(STDIN_FILENO);
    if (tty)
        printf("codeinterp %d.%d.%d, worker pid %d, workspace %s\n"
               "A blank line runs the cell; end of input (Ctrl-D) quits.\n",
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
    ci_session_free(s);
    return status;
}
