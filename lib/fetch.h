/*
 * HTTP through the host: the NETWORK frame that turns a worker's HTTP
 * clients to the channel, the checks of a FETCH from the untrusted
 * worker, and the request libcurl makes for it. Host side only.
 */
#ifndef CI_FETCH_H
#define CI_FETCH_H

#include <stddef.h>
#include <stdint.h>

struct ci_config;

/* The most HTTP requests one run makes through the host. Each is an
 * audit line of up to 8 KiB of URL, and a cell that loops on refused
 * requests would otherwise write the host's disk full at about 12 MB/s;
 * past it a request is refused without a line, and the run's cell event
 * counts them (http_over_limit). */
#define CI_FETCH_PER_RUN_MAX 1000u

/* A FETCH's parts (proto.h), pointing into its payload. */
struct ci_fetch_request {
    const char *method, *url, *head, *body;
    size_t method_len, url_len, head_len, body_len;
};

/* A FETCH_REPLY's status and what follows it (malloc'ed). */
struct ci_fetch_reply {
    uint32_t status; /* CI_FETCH_* */
    unsigned char *data;
    size_t len;
    int http_status;                /* of a response (CI_FETCH_DONE), else 0 */
    unsigned long long body_bytes;  /* the response body's size */
};

/* The NETWORK payload of @cfg: request and response limits. */
void ci_network_frame(const struct ci_config *cfg, uint32_t out[2]);
/* The largest FETCH payload a worker under @cfg may send. */
size_t ci_fetch_frame_cap(const struct ci_config *cfg);
/* A FETCH payload, checked: 0 with its parts in *@req, or -1 with @why
 * (a static sentence): a frame the worker's own client never sends. */
int ci_fetch_parse(const unsigned char *p, size_t len, const struct ci_config *cfg,
                   struct ci_fetch_request *req, const char **why);
/*
 * Makes @req's request if the allow list and the address policy allow it,
 * within the limits and by @deadline_ms (ci_now_ms); @stop(@arg) is asked
 * as it runs and a nonzero answer ends it (CI_FETCH_STOPPED). Always
 * gives a reply in *@out; its data is NULL when memory ran out.
 */
void ci_fetch_perform(const struct ci_config *cfg, const struct ci_fetch_request *req,
                      int64_t deadline_ms, int (*stop)(void *), void *arg,
                      struct ci_fetch_reply *out);

#endif /* CI_FETCH_H */
