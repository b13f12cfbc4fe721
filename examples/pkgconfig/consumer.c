/*
 * A program built against an installed codeinterp through pkg-config
 * alone (see Makefile here): it prints the library's version and the
 * value of the cell 6*7.
 */
#include <codeinterp.h>
#include <stdio.h>

int main(void)
{
    ci_session *s;
    ci_result *r;
    int rc = ci_session_new(&s, NULL);

    printf("codeinterp %s (header %d.%d.%d)\n", ci_version(), CI_VERSION_MAJOR,
           CI_VERSION_MINOR, CI_VERSION_PATCH);
    if (rc != CI_OK) {
        fprintf(stderr, "ci_session_new: %s: %s\n", ci_strerror(rc), ci_session_errmsg(NULL));
        return 1;
    }
    if ((rc = ci_run(s, "6*7", &r)) != CI_OK) {
        fprintf(stderr, "ci_run: %s: %s\n", ci_strerror(rc), ci_session_errmsg(s));
        ci_session_free(s);
        return 1;
    }
    if (ci_result_status(r) == CI_STATUS_OK && ci_result_value(r))
        printf("%s\n", ci_result_value(r));
    else
        fprintf(stderr, "%s: %s\n", ci_result_error_name(r), ci_result_error_value(r));
    rc = ci_result_status(r) == CI_STATUS_OK ? 0 : 1;
    ci_result_free(r);
    ci_session_free(s);
    return rc;
}
