/*
 * Host functions (functions.c): the config's table, the FUNCTIONS and
 * CALL payloads (proto.h), and the reply a callback gives.
 */
#ifndef CI_FUNCTIONS_H
#define CI_FUNCTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Deep copy of @src's functions into @dst (whose own are not freed);
 * CI_OK, or CI_ENOMEM with what was copied left for ci_functions_clear. */
int ci_functions_copy(struct ci_config *dst, const struct ci_config *src);
void ci_functions_clear(struct ci_config *cfg);
/* The function named by the @len bytes at @name, or NULL. */
const struct ci_function *ci_function_find(const struct ci_config *cfg, const char *name,
                                           size_t len);
/* The FUNCTIONS payload (proto.h) of @cfg's functions in *@out
 * (malloc'ed), *@len bytes. CI_OK or CI_ENOMEM. */
int ci_functions_frame(const struct ci_config *cfg, unsigned char **out, size_t *len);
/* The largest CALL payload a worker under @cfg may send. */
size_t ci_call_frame_cap(const struct ci_config *cfg);
/* A CALL payload (proto.h), checked: 0 with the function in *@fn and the
 * arguments' JSON at @p + *@args_at, or -1 with @why (a static sentence). */
int ci_call_parse(const unsigned char *p, size_t len, const struct ci_config *cfg,
                  const struct ci_function **fn, size_t *args_at, const char **why);

/* The answer a host function's callback gives (ci_reply_json,
 * ci_reply_error): the CALL_REPLY's status and what follows it. */
struct ci_reply {
    ci_session *s;
    const char *function;
    size_t result_limit;
    int answered;
    uint32_t status; /* CI_CALL_* */
    char *data;      /* the reply's bytes after its status */
    size_t len;
    char failure[256]; /* why an answer was refused, told to the cell if none is given */
};
void ci_reply_init(ci_reply *reply, ci_session *s, const char *function);
/* After the callback: a reply without an answer becomes CI_CALL_FAILED
 * saying why (data may then be NULL when memory ran out). */
void ci_reply_finish(ci_reply *reply);
void ci_reply_clear(ci_reply *reply);

#endif /* CI_FUNCTIONS_H */
