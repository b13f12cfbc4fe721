/*
 * The allow list of URLs (ci_config_allow_url) and its checks. Every URL
 * is parsed by libcurl's own URL parser, the one that then makes the
 * request, so the host checks the URL it fetches, not a reading of it.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "err.h"
#include "errors.h"
#include "proto.h"
#include "result.h"
#include "urls.h"

#define MIB (1024u * 1024)

void ci_urls_defaults(struct ci_url_policy *p)
{
    p->rules = NULL;
    p->count = 0;
    p->request_limit = 16 * MIB;
    p->response_limit = 16 * MIB;
    p->timeout_ms = 30000;
}

static void rule_clear(struct ci_url_rule *r)
{
    free(r->prefix);
    free(r->scheme);
    free(r->host);
    free(r->path);
    for (size_t i = 0; i < r->header_count; i++)
        free(r->headers[i]);
    free(r->headers);
    memset(r, 0, sizeof *r);
}

void ci_urls_clear(struct ci_url_policy *p)
{
    for (size_t i = 0; i < p->count; i++)
        rule_clear(&p->rules[i]);
    free(p->rules);
    p->rules = NULL;
    p->count = 0;
}

static int rule_copy(struct ci_url_rule *dst, const struct ci_url_rule *src)
{
    memset(dst, 0, sizeof *dst);
    dst->port = src->port;
    if (!(dst->prefix = ci_strdup(src->prefix)) || !(dst->scheme = ci_strdup(src->scheme)) ||
        !(dst->host = ci_strdup(src->host)) || !(dst->path = ci_strdup(src->path)))
        return CI_ENOMEM;
    if (src->header_count && !(dst->headers = calloc(src->header_count, sizeof(char *))))
        return CI_ENOMEM;
    for (; dst->header_count < src->header_count; dst->header_count++)
        if (!(dst->headers[dst->header_count] = ci_strdup(src->headers[dst->header_count])))
            return CI_ENOMEM;
    return CI_OK;
}

int ci_urls_copy(struct ci_url_policy *dst, const struct ci_url_policy *src)
{
    *dst = *src;
    dst->rules = NULL;
    dst->count = 0;
    if (src->count == 0)
        return CI_OK;
    if (!(dst->rules = calloc(src->count, sizeof *dst->rules)))
        return CI_ENOMEM;
    for (; dst->count < src->count; dst->count++)
        if (rule_copy(&dst->rules[dst->count], &src->rules[dst->count]) != CI_OK) {
            dst->count++;
            ci_urls_clear(dst);
            return CI_ENOMEM;
        }
    return CI_OK;
}

void ci_url_clear(struct ci_url *u)
{
    free(u->url);
    free(u->scheme);
    free(u->host);
    free(u->path);
    memset(u, 0, sizeof *u);
}

/* A copy of libcurl's string @s (curl_free'd), or NULL. */
static char *take(char *s)
{
    char *copy = s ? ci_strdup(s) : NULL;
    curl_free(s);
    return copy;
}

/* 1 if @path holds a backslash or may hide a '.', '/' or '\\' from the
 * allow list: %2e, %2f or %5c (any case), the same encoded twice (%252e),
 * IIS's %u, or the start of an overlong UTF-8 sequence, which is no UTF-8
 * but a lax decoder reads (%c0%ae is '.'; %c0, %c1, %e0 then %80 to %9f,
 * %f0 then %80 to %8f). libcurl resolves only literal dot segments, and a
 * server that decodes before it normalises would serve /v1/%2e%2e/x as
 * /x, above the prefix. */
static int hidden_segment(const char *path)
{
    for (const char *p = path; *p; p++) {
        const char *e = p + 1;
        char a, b;
        if (*p == '\\')
            return 1;
        if (*p != '%')
            continue;
        if (e[0] == '2' && e[1] == '5')
            e += 2;
        if (e[0] == 'u' || e[0] == 'U')
            return 1;
        if (!e[0] || !e[1])
            continue;
        a = (char)(e[0] | 0x20);
        b = (char)(e[1] | 0x20);
        if ((a == '2' && (b == 'e' || b == 'f')) || (a == '5' && b == 'c') ||
            (a == 'c' && (b == '0' || b == '1')) ||
            (b == '0' && (a == 'e' || a == 'f') && e[2] == '%' &&
             (e[3] == '8' || (a == 'e' && e[3] == '9'))))
            return 1;
    }
    return 0;
}

/*
 * Parses @text as an absolute http or https URL into @out. CI_OK;
 * CI_EINVAL with @why (a static sentence) for a URL with a control
 * character or a space, userinfo, another scheme, or none of a host;
 * CI_ENOMEM.
 */
static int url_parse(const char *text, struct ci_url *out, const char **why)
{
    CURLU *h;
    char *user = NULL, *port = NULL, *zone = NULL, *s = NULL;
    int rc = CI_EINVAL;

    memset(out, 0, sizeof *out);
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if (*c <= ' ' || *c >= 0x7f) {
            *why = "it holds a space, a control character or a byte that is not ASCII";
            return CI_EINVAL;
        }
    if (strlen(text) > CI_FETCH_URL_MAX) {
        *why = "it is over 8192 bytes";
        return CI_EINVAL;
    }
    if (!(h = curl_url()))
        return CI_ENOMEM;
    *why = "it is not an absolute URL";
    if (curl_url_set(h, CURLUPART_URL, text, 0) != CURLUE_OK)
        goto out;
    if (curl_url_get(h, CURLUPART_USER, &user, 0) != CURLUE_NO_USER) {
        *why = "it has userinfo (user:password@)";
        goto out;
    }
    if (curl_url_get(h, CURLUPART_SCHEME, &s, 0) != CURLUE_OK ||
        (strcmp(s, "http") != 0 && strcmp(s, "https") != 0)) {
        *why = "only http and https are allowed";
        goto out;
    }
    rc = CI_ENOMEM;
    out->scheme = take(s);
    s = NULL;
    if (curl_url_get(h, CURLUPART_HOST, &s, 0) != CURLUE_OK || !s[0]) {
        rc = CI_EINVAL;
        *why = "it has no host";
        goto out;
    }
    /* The host part leaves the zone out: [fe80::1%25eth0] would match a
     * prefix of [fe80::1%25lo], and connect through another interface. */
    if (curl_url_get(h, CURLUPART_ZONEID, &zone, 0) != CURLUE_NO_ZONEID) {
        rc = CI_EINVAL;
        *why = "it names an IPv6 zone (%25...), which no prefix matches";
        goto out;
    }
    for (char *c = s; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    out->host = take(s);
    s = NULL;
    if (curl_url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
        goto out;
    out->port = strtol(port, NULL, 10);
    if (curl_url_get(h, CURLUPART_PATH, &s, 0) != CURLUE_OK)
        goto out;
    if (hidden_segment(s)) {
        rc = CI_EINVAL;
        *why = "its path holds an encoded '.', '/' or '\\', or a '\\', which a server may "
               "decode into a path the allow list never saw";
        goto out;
    }
    out->path = take(s);
    s = NULL;
    if (curl_url_get(h, CURLUPART_URL, &s, 0) != CURLUE_OK)
        goto out;
    out->url = take(s);
    s = NULL;
    if (out->scheme && out->host && out->path && out->url)
        rc = CI_OK;
out:
    curl_free(user);
    curl_free(port);
    curl_free(zone);
    curl_free(s);
    curl_url_cleanup(h);
    if (rc != CI_OK)
        ci_url_clear(out);
    return rc;
}

static struct ci_url_rule *rule_find(ci_config *cfg, const char *prefix)
{
    for (size_t i = 0; i < cfg->urls.count; i++)
        if (strcmp(cfg->urls.rules[i].prefix, prefix) == 0)
            return &cfg->urls.rules[i];
    return NULL;
}

CI_API int ci_config_allow_url(ci_config *cfg, const char *prefix)
{
    struct ci_url u;
    struct ci_url_rule *grown;
    const char *why = NULL;
    int rc;

    ci_err_clear(ci_thread_err());
    if (!cfg || !prefix)
        return ci_err_set(ci_thread_err(), CI_EINVAL, "%s is NULL", !cfg ? "cfg" : "prefix");
    if (rule_find(cfg, prefix))
        return CI_OK;
    if (cfg->urls.count >= CI_URL_PREFIXES_MAX)
        return ci_err_set(ci_thread_err(), CI_ETOOBIG, "a session allows at most %u URL prefixes",
                          CI_URL_PREFIXES_MAX);
    if (strpbrk(prefix, "?#"))
        return ci_err_set(ci_thread_err(), CI_EINVAL, "the URL prefix '%.200s' has a query or a "
                          "fragment; a prefix is a scheme, a host, a port and a path", prefix);
    if ((rc = url_parse(prefix, &u, &why)) != CI_OK)
        return rc == CI_EINVAL ? ci_err_set(ci_thread_err(), CI_EINVAL, "'%.200s' is not a URL "
                                            "prefix the host can allow: %s", prefix, why)
                               : rc;
    grown = realloc(cfg->urls.rules, (cfg->urls.count + 1) * sizeof *grown);
    if (!grown) {
        ci_url_clear(&u);
        return CI_ENOMEM;
    }
    cfg->urls.rules = grown;
    grown += cfg->urls.count;
    *grown = (struct ci_url_rule){ci_strdup(prefix), u.scheme, u.host, u.port, u.path, NULL, 0};
    free(u.url);
    if (!grown->prefix) {
        rule_clear(grown);
        return CI_ENOMEM;
    }
    cfg->urls.count++;
    return CI_OK;
}

/* 1 if @c may be in an HTTP token (RFC 9110's tchar). */
static int tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

int ci_http_header_valid(const char *line, size_t len)
{
    size_t i = 0;

    while (i < len && tchar((unsigned char)line[i]))
        i++;
    if (i == 0 || i == len || line[i] != ':')
        return 0;
    for (i++; i < len; i++)
        if ((unsigned char)line[i] < ' ' ? line[i] != '\t' : (unsigned char)line[i] == 0x7f)
            return 0;
    return 1;
}

CI_API int ci_config_set_url_header(ci_config *cfg, const char *prefix, const char *header)
{
    struct ci_url_rule *r;
    char **grown, *copy;

    ci_err_clear(ci_thread_err());
    if (!cfg || !prefix || !header)
        return ci_err_set(ci_thread_err(), CI_EINVAL, "%s is NULL",
                          !cfg ? "cfg" : !prefix ? "prefix" : "header");
    if (!(r = rule_find(cfg, prefix)))
        return ci_err_set(ci_thread_err(), CI_EINVAL, "'%.200s' is not an allowed URL prefix: "
                          "allow it first (ci_config_allow_url)", prefix);
    /* The message never shows the header: it is a credential. */
    if (strlen(header) > CI_URL_HEADER_MAX || !ci_http_header_valid(header, strlen(header)))
        return ci_err_set(ci_thread_err(), CI_EINVAL, "a header the host adds must be one "
                          "'Name: value' line of at most %u bytes, without CR, LF or NUL",
                          CI_URL_HEADER_MAX);
    if (r->header_count >= CI_URL_HEADERS_MAX)
        return ci_err_set(ci_thread_err(), CI_ETOOBIG, "a URL prefix has at most %u headers",
                          CI_URL_HEADERS_MAX);
    if (!(copy = ci_strdup(header)))
        return CI_ENOMEM;
    if (!(grown = realloc(r->headers, (r->header_count + 1) * sizeof *grown))) {
        free(copy);
        return CI_ENOMEM;
    }
    r->headers = grown;
    r->headers[r->header_count++] = copy;
    return CI_OK;
}

CI_API int ci_config_set_url_limits(ci_config *cfg, size_t request_bytes, size_t response_bytes,
                                    unsigned long timeout_ms)
{
    if (!cfg || request_bytes < 1 || request_bytes > CI_URL_LIMIT_MAX || response_bytes < 1 ||
        response_bytes > CI_URL_LIMIT_MAX || timeout_ms < 1 || timeout_ms > 3600000)
        return CI_EINVAL;
    cfg->urls.request_limit = request_bytes;
    cfg->urls.response_limit = response_bytes;
    cfg->urls.timeout_ms = timeout_ms;
    return CI_OK;
}

/* 1 if @u is within @r: the same scheme, host and port, and a path that
 * starts with the prefix's at a segment boundary: "/v1" allows /v1 and
 * /v1/x, never /v1admin (libcurl's path part holds no query or fragment). */
static int rule_matches(const struct ci_url_rule *r, const struct ci_url *u)
{
    size_t n = strlen(r->path);

    return strcmp(r->scheme, u->scheme) == 0 && strcmp(r->host, u->host) == 0 &&
           r->port == u->port && strncmp(r->path, u->path, n) == 0 &&
           (n == 0 || r->path[n - 1] == '/' || u->path[n] == '\0' || u->path[n] == '/');
}

void ci_url_refusal(const struct ci_url_policy *p, const char *url, const char *why, char *msg,
                    size_t msglen)
{
    size_t n = (size_t)snprintf(msg, msglen, "network access to %.300s is not allowed in "
                                "this sandbox%s%s; allowed:", url, why ? ": " : "",
                                why ? why : "");
    for (size_t i = 0; i < p->count && n < msglen; i++)
        n += (size_t)snprintf(msg + n, msglen - n, "%s %s", i ? "," : "", p->rules[i].prefix);
}

const struct ci_url_rule *ci_url_check(const struct ci_url_policy *p, const char *url,
                                       struct ci_url *out, char *msg, size_t msglen)
{
    const char *why = NULL;
    int rc = url_parse(url, out, &why);

    msg[0] = '\0';
    if (rc == CI_ENOMEM)
        return NULL;
    if (rc == CI_OK)
        for (size_t i = 0; i < p->count; i++)
            if (rule_matches(&p->rules[i], out))
                return &p->rules[i];
    ci_url_clear(out);
    ci_url_refusal(p, url, rc == CI_OK ? NULL : why, msg, msglen);
    return NULL;
}

/* 1 if the IPv4 address @a (host order) is public: not this network,
 * private, shared (RFC 6598), loopback, link-local, multicast, reserved
 * or broadcast. */
static int public_v4(uint32_t a)
{
    static const struct {
        uint32_t net, mask;
    } private[] = {
        {0x00000000, 0xff000000}, {0x0a000000, 0xff000000}, {0x64400000, 0xffc00000},
        {0x7f000000, 0xff000000}, {0xa9fe0000, 0xffff0000}, {0xac100000, 0xfff00000},
        {0xc0000000, 0xffffff00}, {0xc0a80000, 0xffff0000}, {0xc6120000, 0xfffe0000},
        {0xe0000000, 0xe0000000},
    };
    for (size_t i = 0; i < sizeof private / sizeof *private; i++)
        if ((a & private[i].mask) == private[i].net)
            return 0;
    return 1;
}

/* 1 if the IPv6 address @a is public: not unspecified, loopback,
 * link-local, unique local, multicast, in the local-use NAT64 prefix
 * (64:ff9b:1::/48, RFC 8215), and for an IPv4-mapped or NAT64 address,
 * its IPv4 address is. */
static int public_v6(const struct in6_addr *a)
{
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    static const unsigned char local_nat64[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
    const unsigned char *b = a->s6_addr;
    uint32_t v4;

    if (IN6_IS_ADDR_UNSPECIFIED(a) || IN6_IS_ADDR_LOOPBACK(a) || IN6_IS_ADDR_LINKLOCAL(a) ||
        IN6_IS_ADDR_SITELOCAL(a) || IN6_IS_ADDR_MULTICAST(a) || (b[0] & 0xfe) == 0xfc ||
        memcmp(b, local_nat64, sizeof local_nat64) == 0)
        return 0;
    if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a) || memcmp(b, nat64, 12) == 0) {
        memcpy(&v4, b + 12, 4);
        return public_v4(ntohl(v4));
    }
    return 1;
}

/* 1 if @addr is the address @host (a prefix's host) names literally. */
static int named(const char *host, const struct sockaddr *addr)
{
    char text[64];
    size_t n = strlen(host);
    struct in6_addr a6;
    struct in_addr a4;

    if (addr->sa_family == AF_INET) {
        if (strcmp(host, "localhost") == 0)
            return (ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr) >> 24) == 127;
        return inet_pton(AF_INET, host, &a4) == 1 &&
               a4.s_addr == ((const struct sockaddr_in *)addr)->sin_addr.s_addr;
    }
    if (strcmp(host, "localhost") == 0)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)addr)->sin6_addr);
    if (n < 3 || n - 2 >= sizeof text || host[0] != '[' || host[n - 1] != ']')
        return 0;
    memcpy(text, host + 1, n - 2);
    text[n - 2] = '\0';
    return inet_pton(AF_INET6, text, &a6) == 1 &&
           memcmp(&a6, &((const struct sockaddr_in6 *)addr)->sin6_addr, sizeof a6) == 0;
}

int ci_url_address_allowed(const struct ci_url_rule *rule, const struct sockaddr *addr)
{
    if (addr->sa_family == AF_INET)
        return public_v4(ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr)) ||
               named(rule->host, addr);
    if (addr->sa_family == AF_INET6)
        return public_v6(&((const struct sockaddr_in6 *)addr)->sin6_addr) ||
               named(rule->host, addr);
    return 0;
}
