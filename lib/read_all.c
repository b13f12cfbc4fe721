/* Reading a descriptor whole, with a bound (read_all.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "read_all.h"

int ci_read_all(int fd, size_t max, size_t hint, char **out, size_t *len)
{
    size_t want = max + 1; /* one byte past @max tells a longer input */
    size_t cap = hint && hint < want ? hint + 1 : (want < 65536 ? want : 65536);
    size_t have = 0;
    char *buf = malloc(cap + 1);

    *out = NULL;
    *len = 0;
    if (!buf)
        return -1;
    for (;;) {
        ssize_t n;

        if (have == cap) {
            size_t ncap = cap > want / 2 ? want : cap * 2;
            char *nb;

            if (have == want)
                break;
            if (!(nb = realloc(buf, ncap + 1))) {
                free(buf);
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        n = read(fd, buf + have, cap - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        have += (size_t)n;
    }
    buf[have] = '\0';
    *out = buf;
    *len = have;
    return 0;
}
