/* The library's version, from the CI_VERSION_* macros: defined once, in the header. */
#include "codeinterp.h"

#define CI_STR_(x) #x
#define CI_XSTR_(x) CI_STR_(x)

CI_API const char *ci_version(void)
{
    return CI_XSTR_(CI_VERSION_MAJOR) "." CI_XSTR_(CI_VERSION_MINOR) "." CI_XSTR_(CI_VERSION_PATCH);
}
