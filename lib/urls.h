/*
 * The URLs a cell may fetch through the host (ci_config_allow_url): the
 * allow list, the headers the host adds, the limits, and the checks of a
 * URL and of the address it resolves to. Host side only.
 */
#ifndef CI_URLS_H
#define CI_URLS_H

#include <stddef.h>
#include <sys/socket.h>

/* The most prefixes a config allows, headers one prefix adds, and bytes
 * of one such header. */
#define CI_URL_PREFIXES_MAX 256u
#define CI_URL_HEADERS_MAX 32u
#define CI_URL_HEADER_MAX 8192u

/* One allowed prefix: its parts as libcurl's URL parser gives them. */
struct ci_url_rule {
    char *prefix; /* as given */
    char *scheme; /* "http" or "https" */
    char *host;   /* lower case; an IPv6 literal in brackets */
    long port;    /* the scheme's default when the prefix names none */
    char *path;   /* starts with '/' */
    char **headers; /* "Name: value" lines the host adds (ci_config_set_url_header) */
    size_t header_count;
};

struct ci_url_policy {
    struct ci_url_rule *rules; /* in the order allowed; none: no network */
    size_t count;
    size_t request_limit;  /* bytes of a request's body */
    size_t response_limit; /* bytes of a response's body */
    unsigned long timeout_ms; /* one request, bounded again by the cell's time */
};

void ci_urls_defaults(struct ci_url_policy *p);
/* Deep copy; CI_OK, or CI_ENOMEM with @dst empty. */
int ci_urls_copy(struct ci_url_policy *dst, const struct ci_url_policy *src);
void ci_urls_clear(struct ci_url_policy *p);

/* The parts of a URL a cell asked for, checked (ci_url_check). */
struct ci_url {
    char *url; /* normalized by libcurl: what the host requests */
    char *scheme, *host, *path;
    long port;
};
void ci_url_clear(struct ci_url *u);

/* The rule that allows @url (NUL-terminated), with its parts in *@out; NULL
 * with the refusal, naming the allowed prefixes, in @msg (for a URL that
 * is malformed, has userinfo, a scheme other than http or https, or
 * matches no prefix) or with @msg empty when memory ran out. */
const struct ci_url_rule *ci_url_check(const struct ci_url_policy *p, const char *url,
                                       struct ci_url *out, char *msg, size_t msglen);

/* The refusal of @url (with @why, NULL for none) in @msg: the policy and
 * the prefixes allowed. */
void ci_url_refusal(const struct ci_url_policy *p, const char *url, const char *why, char *msg,
                    size_t msglen);

/* 1 if a connection to @addr may be made for a URL of @rule: a public
 * address, or the address a prefix's literal host names (127.0.0.1,
 * [::1]; localhost for loopback). */
int ci_url_address_allowed(const struct ci_url_rule *rule, const struct sockaddr *addr);

/* 1 if the @len bytes at @line are one "Name: value" header: a token,
 * a colon, then no control character but tab. */
int ci_http_header_valid(const char *line, size_t len);

#endif /* CI_URLS_H */
