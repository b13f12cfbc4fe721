/*
 * A libFuzzer-compatible driver without libFuzzer: runs each file named on
 * the command line (a directory: each regular file in it, in name order)
 * once through LLVMFuzzerTestOneInput. `make check` builds a fuzz target
 * with it and gcc, so the seeds and every crash the fuzzer ever found run
 * as regression tests without clang. A failing input aborts, as under
 * libFuzzer; the last "running" line names it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;

    if (!f) {
        perror(path);
        return -1;
    }
    for (;;) {
        size_t n;
        if (len == cap) {
            unsigned char *grown = realloc(buf, cap ? cap * 2 : 65536);
            if (!grown) {
                fprintf(stderr, "%s: out of memory\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = grown;
            cap = cap ? cap * 2 : 65536;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        perror(path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    fprintf(stderr, "running %s (%zu bytes)\n", path, len);
    /* An exact-size copy, so ASan sees a read past the input. */
    {
        unsigned char *exact = malloc(len ? len : 1);
        if (!exact) {
            free(buf);
            return -1;
        }
        memcpy(exact, buf, len);
        free(buf);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
    }
    return 0;
}

static int skip(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    int ran = 0, failed = 0;

    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) < 0) {
            perror(argv[i]);
            failed++;
            continue;
        }
        if (S_ISDIR(sb.st_mode)) {
            struct dirent **names;
            int n = scandir(argv[i], &names, skip, alphasort);
            if (n < 0) {
                perror(argv[i]);
                failed++;
                continue;
            }
            for (int k = 0; k < n; k++) {
                char path[4096];
                struct stat fsb;
                snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
                if (stat(path, &fsb) == 0 && S_ISREG(fsb.st_mode)) {
                    if (run_file(path) < 0)
                        failed++;
                    else
                        ran++;
                }
                free(names[k]);
            }
            free(names);
        } else if (run_file(argv[i]) < 0) {
            failed++;
        } else {
            ran++;
        }
    }
    fprintf(stderr, "%d inputs ran, %d could not be read\n", ran, failed);
    return failed ? 1 : 0;
}
