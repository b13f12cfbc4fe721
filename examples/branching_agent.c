/*
 * branching_agent: an agent host that tries several next cells from one
 * state and keeps the best, as tree-search and self-consistency agents
 * do, without replaying anything.
 *
 *     branching_agent CELLS DATA.csv
 *
 * DATA.csv goes into the workspace as macrodata.csv and CELLS/load.py
 * runs once. Then each CELLS/try_*.py runs in a branch of that session of
 * its own (ci_session_fork): each defines a model and ends with its
 * score, the held-out error, as its value. The host keeps the branch with
 * the lowest score, frees the others, and runs CELLS/report.py there:
 * the kept branch has the state of load.py and of its own alternative,
 * and nothing of the others'.
 *
 * Exit status: 0 if every cell ran and a branch was kept, 1 otherwise, 2
 * for a wrong command line.
 */
#include <codeinterp.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRIES 16

/* The whole file @path, NUL-terminated, its size in *@len (may be NULL). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f;
    char *buf = NULL;
    long n;

    if (!(f = fopen(path, "rb")))
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
        if (len)
            *len = (size_t)n;
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* Runs CELLS/@name on @s, prints what it printed; its value, malloc'ed,
 * or NULL if it did not end well. */
static char *run_file(ci_session *s, const char *dir, const char *name)
{
    char path[4096], *code, *value = NULL;
    ci_result *r = NULL;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    code = slurp(path, NULL);
    if (!code) {
        fprintf(stderr, "cannot read %s/%s\n", dir, name);
        return NULL;
    }
    if (ci_run(s, code, &r) != CI_OK) {
        fprintf(stderr, "%s: %s\n", name, ci_session_errmsg(s));
    } else {
        printf("== %s (%s)\n%s", name, ci_status_name(ci_result_status(r)),
               ci_result_stdout(r, NULL));
        if (ci_result_status(r) != CI_STATUS_OK)
            printf("%s\n", ci_result_traceback(r) ? ci_result_traceback(r) : "");
        else
            value = strdup(ci_result_value(r) ? ci_result_value(r) : "None");
    }
    ci_result_free(r);
    free(code);
    return value;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    char *tries[MAX_TRIES], *data, *done;
    ci_session *root, *branch[MAX_TRIES];
    double score[MAX_TRIES];
    int n = 0, best = -1, status = 1;
    struct dirent *e;
    size_t len;
    DIR *d;

    if (argc != 3) {
        fprintf(stderr, "usage: %s CELLS DATA.csv\n", argv[0]);
        return 2;
    }
    if (!(d = opendir(argv[1]))) {
        perror(argv[1]);
        return 2;
    }
    while ((e = readdir(d)) && n < MAX_TRIES)
        if (strncmp(e->d_name, "try_", 4) == 0 && strstr(e->d_name, ".py"))
            tries[n++] = strdup(e->d_name);
    closedir(d);
    qsort(tries, (size_t)n, sizeof *tries, by_name);
    if (!(data = slurp(argv[2], &len))) {
        perror(argv[2]);
        return 2;
    }

    if (ci_session_new(&root, NULL) != CI_OK) {
        fprintf(stderr, "ci_session_new: %s\n", ci_session_errmsg(NULL));
        return 1;
    }
    if (ci_session_put_file(root, "macrodata.csv", data, len) != CI_OK ||
        !(done = run_file(root, argv[1], "load.py"))) {
        fprintf(stderr, "the first cell failed: %s\n", ci_session_errmsg(root));
        ci_session_free(root);
        return 1;
    }
    free(done);

    /* Every alternative from the same state, each in its own branch. */
    for (int i = 0; i < n; i++) {
        char *value;

        branch[i] = NULL;
        score[i] = 0;
        if (ci_session_fork(root, &branch[i]) != CI_OK) {
            fprintf(stderr, "ci_session_fork: %s\n", ci_session_errmsg(root));
            continue;
        }
        if ((value = run_file(branch[i], argv[1], tries[i]))) {
            score[i] = atof(value);
            printf("score of %s: %s\n", tries[i], value);
            if (best < 0 || score[i] < score[best])
                best = i;
            free(value);
        }
    }
    ci_session_free(root);

    for (int i = 0; i < n; i++)
        if (i != best)
            ci_session_free(branch[i]);
    if (best >= 0) {
        printf("best: %s\n", tries[best]);
        done = run_file(branch[best], argv[1], "report.py");
        status = done ? 0 : 1;
        free(done);
        ci_session_free(branch[best]);
    }
    for (int i = 0; i < n; i++)
        free(tries[i]);
    free(data);
    return status;
}
