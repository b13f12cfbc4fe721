/*
 * HTTP through the host (ci_config_allow_url). A cell's HTTP client
 * writes its request to a socket that is not one (lib/worker/fetch.py);
 * the worker sends it as a FETCH, and the host checks it and makes it
 * with libcurl: http and https only, no redirect followed (the cell's
 * client follows one with a new FETCH, checked as the first), names
 * resolved by the host and every address connected to checked
 * (ci_url_address_allowed), the headers of the prefix added and kept out
 * of the response, the body capped, the time bounded by the cell's.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "errors.h"
#include "fetch.h"
#include "proto.h"
#include "result.h"
#include "urls.h"

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

void ci_network_frame(const struct ci_config *cfg, uint32_t out[2])
{
    out[0] = (uint32_t)cfg->urls.request_limit;
    out[1] = (uint32_t)cfg->urls.response_limit;
}

size_t ci_fetch_frame_cap(const struct ci_config *cfg)
{
    return 3 * sizeof(uint32_t) + CI_FETCH_METHOD_MAX + CI_FETCH_URL_MAX + CI_FETCH_HEAD_MAX +
           cfg->urls.request_limit;
}

/* 1 if the @len bytes at @p are header lines, each "Name: value\r\n". */
static int head_valid(const char *p, size_t len)
{
    while (len > 0) {
        const char *end = memchr(p, '\n', len);
        size_t n;
        if (!end || end == p || end[-1] != '\r')
            return 0;
        n = (size_t)(end - p) - 1;
        if (!ci_http_header_valid(p, n))
            return 0;
        len -= n + 2;
        p += n + 2;
    }
    return 1;
}

int ci_fetch_parse(const unsigned char *p, size_t len, const struct ci_config *cfg,
                   struct ci_fetch_request *req, const char **why)
{
    uint32_t ml, ul, hl;
    const char *c = (const char *)p + 3 * sizeof(uint32_t);

    if (len < 3 * sizeof(uint32_t)) {
        *why = "a request cut short";
        return -1;
    }
    ml = get_u32(p);
    ul = get_u32(p + 4);
    hl = get_u32(p + 8);
    if (ml == 0 || ml > CI_FETCH_METHOD_MAX || ul == 0 || ul > CI_FETCH_URL_MAX ||
        hl > CI_FETCH_HEAD_MAX || (size_t)ml + ul + hl > len - 3 * sizeof(uint32_t)) {
        *why = "a request whose parts have the wrong lengths";
        return -1;
    }
    *req = (struct ci_fetch_request){c, c + ml, c + ml + ul, c + ml + ul + hl, ml, ul, hl,
                                     len - 3 * sizeof(uint32_t) - ml - ul - hl};
    if (req->body_len > cfg->urls.request_limit) {
        *why = "a request whose body is over the request limit";
        return -1;
    }
    for (uint32_t i = 0; i < ml; i++)
        if (c[i] < 'A' || c[i] > 'Z') {
            *why = "a request whose method is not upper-case letters";
            return -1;
        }
    if (memchr(req->url, '\0', ul)) {
        *why = "a request whose URL holds a NUL";
        return -1;
    }
    if (!head_valid(req->head, hl)) {
        *why = "a request whose headers are not \"Name: value\" lines";
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ transfer */

struct growing {
    unsigned char *p;
    size_t len, cap;
};

static int grow_put(struct growing *g, const void *p, size_t n)
{
    if (g->cap - g->len < n) {
        size_t cap = g->cap ? g->cap : 4096;
        unsigned char *q;
        while (cap - g->len < n)
            cap *= 2;
        if (!(q = realloc(g->p, cap)))
            return -1;
        g->p = q;
        g->cap = cap;
    }
    memcpy(g->p + g->len, p, n);
    g->len += n;
    return 0;
}

/* One request's state, for libcurl's callbacks and for the reply. */
struct transfer {
    const struct ci_config *cfg;
    const struct ci_url_rule *rule;
    const char *method, *url; /* NUL-terminated copies */
    struct growing head, body;
    int over_head, over_body, no_memory;
    int encoded; /* a Content-Encoding other than identity */
    char refused_addr[64]; /* the address the policy refused, if any */
    int (*stop)(void *);
    void *arg;
};

/* 1 if the header line @line (@len bytes) is named @name (@nl bytes). */
static int named(const char *line, size_t len, const char *name, size_t nl)
{
    return len > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0;
}

/* 1 if the header line @line (@len bytes) is one the host sets itself or
 * that belongs to one hop: the cell's is dropped, the server's kept from
 * the cell (the worker writes its own Content-Length). */
static int hop_header(const char *line, size_t len)
{
    static const char *const names[] = {"host", "content-length", "transfer-encoding",
                                        "connection", "keep-alive", "expect", "te",
                                        "upgrade", "trailer", "proxy-connection",
                                        "proxy-authorization", "proxy-authenticate"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (named(line, len, names[i], strlen(names[i])))
            return 1;
    return 0;
}

/* 1 if the @len bytes at @line hold the @n bytes at @s, in any case. */
static int shows(const char *line, size_t len, const char *s, size_t n)
{
    for (size_t i = 0; n && i + n <= len; i++)
        if (strncasecmp(line + i, s, n) == 0)
            return 1;
    return 0;
}

/* What of the header line @h (one a rule adds) must not reach the cell:
 * its value, and the value's last word when it is 8 bytes or more (the
 * credential after a scheme, "Bearer TOKEN", which a server may echo
 * alone: a Location with ?token=TOKEN); *@wlen 0 for no such word. */
static void secret_parts(const char *h, const char **value, size_t *vlen, const char **word,
                         size_t *wlen)
{
    const char *v = strchr(h, ':') + 1, *end, *w;

    while (*v == ' ' || *v == '\t')
        v++;
    end = v + strlen(v);
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    for (w = end; w > v && w[-1] != ' ' && w[-1] != '\t'; w--)
        ;
    *value = v;
    *vlen = (size_t)(end - v);
    *word = w;
    *wlen = end - w >= 8 ? (size_t)(end - w) : 0;
}

/* 1 if @line (@len bytes) has the name of one of the headers @rule adds,
 * or shows, in any case, what of them must not reach the cell. */
static int injected(const struct ci_url_rule *rule, const char *line, size_t len)
{
    for (size_t i = 0; i < rule->header_count; i++) {
        const char *h = rule->headers[i], *value, *word;
        size_t vlen, wlen;

        secret_parts(h, &value, &vlen, &word, &wlen);
        if (named(line, len, h, (size_t)(strchr(h, ':') - h)) || shows(line, len, value, vlen) ||
            (wlen && shows(line, len, word, wlen)))
            return 1;
    }
    return 0;
}

/* 1 if the body @p (@len bytes) holds, in any case, what of a header
 * @rule adds must not reach the cell: a server that echoes the request. */
static int body_shows_secret(const struct ci_url_rule *rule, const void *p, size_t len)
{
    if (len == 0) /* and p NULL: no body came */
        return 0;
    for (size_t i = 0; i < rule->header_count; i++) {
        const char *value, *word;
        size_t vlen, wlen;

        secret_parts(rule->headers[i], &value, &vlen, &word, &wlen);
        if ((vlen && shows(p, len, value, vlen)) || (wlen && shows(p, len, word, wlen)))
            return 1;
    }
    return 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    struct transfer *t = arg;
    size_t len = size * n, line = len;

    while (line > 0 && (data[line - 1] == '\n' || data[line - 1] == '\r'))
        line--;
    if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        t->head.len = 0; /* a new response: an interim one (100) ended */
        return len;
    }
    if (line == 0 || !ci_http_header_valid(data, line) || hop_header(data, line) ||
        injected(t->rule, data, line))
        return len;
    if (named(data, line, "content-encoding", 16)) {
        const char *v = data + 17, *end = data + line;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        t->encoded |= !((size_t)(end - v) == 8 && strncasecmp(v, "identity", 8) == 0);
    }
    if (t->head.len + line + 2 > CI_FETCH_HEAD_MAX) {
        t->over_head = 1;
        return 0;
    }
    if (grow_put(&t->head, data, line) < 0 || grow_put(&t->head, "\r\n", 2) < 0) {
        t->no_memory = 1;
        return 0;
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    struct transfer *t = arg;
    size_t len = size * n;

    if (len > t->cfg->urls.response_limit - t->body.len) {
        t->over_body = 1;
        return 0;
    }
    if (grow_put(&t->body, data, len) < 0) {
        t->no_memory = 1;
        return 0;
    }
    return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct transfer *t = arg;
    (void)dt, (void)dn, (void)ut, (void)un;
    return t->stop(t->arg) ? 1 : 0;
}

/* libcurl's socket for a connection to the address it resolved: refused
 * unless the address policy allows it (a name that resolves to a private
 * address is refused here, after the resolution libcurl connects with). */
static curl_socket_t on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct transfer *t = arg;

    (void)purpose;
    if (!ci_url_address_allowed(t->rule, &a->addr)) {
        void *where = a->family == AF_INET6
                          ? (void *)&((struct sockaddr_in6 *)&a->addr)->sin6_addr
                          : (void *)&((struct sockaddr_in *)&a->addr)->sin_addr;
        if (!inet_ntop(a->family, where, t->refused_addr, sizeof t->refused_addr))
            snprintf(t->refused_addr, sizeof t->refused_addr, "an address of family %d",
                     a->family);
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* Appends @line to *@list; 0, or -1 when memory ran out (*@list kept). */
static int append(struct curl_slist **list, const char *line)
{
    struct curl_slist *grown = curl_slist_append(*list, line);
    if (!grown)
        return -1;
    *list = grown;
    return 0;
}

/* The request's headers for libcurl in *@list: the cell's, less those the
 * host sets and those the prefix adds, then the prefix's. 0, or -1 when
 * memory ran out (the caller frees *@list either way). */
static int request_headers(const struct ci_fetch_request *req, const struct ci_url_rule *rule,
                           struct curl_slist **list)
{
    const char *p = req->head, *end = req->head + req->head_len;
    int typed = 0;

    while (p < end) {
        size_t n = (size_t)((const char *)memchr(p, '\r', (size_t)(end - p)) - p);
        typed |= named(p, n, "content-type", 12);
        if (!hop_header(p, n) && !injected(rule, p, n) &&
            !(rule->header_count && named(p, n, "accept-encoding", 15))) {
            char *line = strndup(p, n);
            int rc = line ? append(list, line) : -1;
            free(line);
            if (rc < 0)
                return -1;
        }
        p += n + 2;
    }
    for (size_t i = 0; i < rule->header_count; i++)
        if (append(list, rule->headers[i]) < 0)
            return -1;
    /* The body of a prefix that adds headers is checked for them (a server
     * that echoes the request), which an encoded body would hide. */
    if (rule->header_count && append(list, "Accept-Encoding: identity") < 0)
        return -1;
    /* No "Expect: 100-continue" wait, and no form type the cell never set. */
    if (append(list, "Expect:") < 0 || (!typed && req->body_len && append(list, "Content-Type:") < 0))
        return -1;
    return 0;
}

/* Sets @h up for @t's request @req to the URL @u. CURLE_OK or libcurl's error. */
static CURLcode setup(CURL *h, struct transfer *t, const struct ci_fetch_request *req,
                      const struct ci_url *u, struct curl_slist *headers, int64_t deadline_ms)
{
    int64_t left = deadline_ms - ci_now_ms();
    long timeout = (long)t->cfg->urls.timeout_ms;
    CURLcode rc = CURLE_OK;

    if (left < timeout)
        timeout = left > 1 ? (long)left : 1;
#define SET(opt, value) \
    if (rc == CURLE_OK) \
    rc = curl_easy_setopt(h, opt, value)
    SET(CURLOPT_URL, u->url);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_PROXY, ""); /* never the host's proxy variables */
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_HTTP_CONTENT_DECODING, 0L); /* the cell's client decodes */
    SET(CURLOPT_TIMEOUT_MS, timeout);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)t->cfg->urls.response_limit);
    SET(CURLOPT_HTTPHEADER, headers);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, t);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, t);
    SET(CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    SET(CURLOPT_OPENSOCKETDATA, t);
    SET(CURLOPT_XFERINFOFUNCTION, on_progress);
    SET(CURLOPT_XFERINFODATA, t);
    SET(CURLOPT_NOPROGRESS, 0L);
    if (strcmp(t->method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else {
        if (req->body_len || strcmp(t->method, "POST") == 0 || strcmp(t->method, "PUT") == 0 ||
            strcmp(t->method, "PATCH") == 0) {
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
            SET(CURLOPT_POSTFIELDS, req->body_len ? req->body : "");
        }
        if (strcmp(t->method, "GET") != 0 && strcmp(t->method, "POST") != 0)
            SET(CURLOPT_CUSTOMREQUEST, t->method);
    }
#undef SET
    return rc;
}

/*
 * libcurl under CURLOPT_NOSIGNAL changes no signal disposition (the host's
 * to keep), but a write to a connection the server closed can then raise
 * SIGPIPE (a TLS write, curl says) and end the host. So SIGPIPE is
 * blocked on this thread alone for the transfer, and one the transfer
 * raised is taken before the mask is restored.
 */
static CURLcode perform_without_sigpipe(CURL *h)
{
    sigset_t only, old, pending;
    int was_pending;
    CURLcode rc;

    sigemptyset(&only);
    sigaddset(&only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &only, &old);
    was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    rc = curl_easy_perform(h);
    if (!was_pending && !sigismember(&old, SIGPIPE) && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGPIPE)) {
        struct timespec now = {0, 0};
        sigtimedwait(&only, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* ------------------------------------------------------------ outcome */

static void reply_text(struct ci_fetch_reply *out, uint32_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reply_text(struct ci_fetch_reply *out, uint32_t status, const char *fmt, ...)
{
    char msg[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    out->status = status;
    out->data = (unsigned char *)ci_strdup(msg);
    out->len = out->data ? strlen(msg) : 0;
}

static void reply_response(struct ci_fetch_reply *out, long code, const struct transfer *t)
{
    uint32_t head[2] = {(uint32_t)code, (uint32_t)t->head.len};

    out->len = sizeof head + t->head.len + t->body.len;
    if (!(out->data = malloc(out->len))) {
        out->len = 0;
        return; /* CI_FETCH_FAILED with no message */
    }
    out->status = CI_FETCH_DONE;
    out->http_status = (int)code;
    out->body_bytes = t->body.len;
    memcpy(out->data, head, sizeof head);
    if (t->head.len)
        memcpy(out->data + sizeof head, t->head.p, t->head.len);
    if (t->body.len)
        memcpy(out->data + sizeof head + t->head.len, t->body.p, t->body.len);
}

/*
 * The one place a request's outcome is known: the method, the URL, the
 * transfer's end (@rc, with @code the HTTP status and t->body.len the
 * bytes received) or its refusal (@refusal), made into the reply.
 */
static void fetch_done(const struct transfer *t, const char *refusal, CURLcode rc, long code,
                       const char *detail, struct ci_fetch_reply *out)
{
    char size[32];

    if (refusal)
        reply_text(out, CI_FETCH_REFUSED, "%s", refusal);
    else if (t->refused_addr[0]) {
        char why[256], msg[4096];
        snprintf(why, sizeof why, "its host resolves to %s, a loopback, link-local, private "
                 "or reserved address, which only a prefix naming that address allows",
                 t->refused_addr);
        ci_url_refusal(&t->cfg->urls, t->url, why, msg, sizeof msg);
        reply_text(out, CI_FETCH_REFUSED, "%s", msg);
    } else if (rc == CURLE_OK && code >= 100 && code <= 599 && t->rule->header_count &&
               t->encoded)
        reply_text(out, CI_FETCH_FAILED, "the response from %.300s is encoded "
                   "(Content-Encoding), which this sandbox refuses from a prefix the host adds "
                   "headers to: the host checks such a body for them, and cannot in an "
                   "encoded one", t->url);
    else if (rc == CURLE_OK && code >= 100 && code <= 599 && t->rule->header_count &&
             body_shows_secret(t->rule, t->body.p, t->body.len))
        reply_text(out, CI_FETCH_FAILED, "the response from %.300s holds a header value the "
                   "host added to the request (a server that echoes its requests); it is not "
                   "given to the cell", t->url);
    else if (rc == CURLE_OK && code >= 100 && code <= 599)
        reply_response(out, code, t);
    else if (rc == CURLE_ABORTED_BY_CALLBACK && !t->over_body && !t->over_head)
        reply_text(out, CI_FETCH_STOPPED, "%s", "");
    else if (t->over_body || rc == CURLE_FILESIZE_EXCEEDED) {
        ci_format_size(size, sizeof size, t->cfg->urls.response_limit);
        reply_text(out, CI_FETCH_FAILED, "the response from %.300s is over this sandbox's "
                   "response limit of %s", t->url, size);
    } else if (t->over_head)
        reply_text(out, CI_FETCH_FAILED, "the response from %.300s has over %u bytes of "
                   "headers", t->url, CI_FETCH_HEAD_MAX);
    else if (rc == CURLE_OPERATION_TIMEDOUT)
        reply_text(out, CI_FETCH_TIMED_OUT, "the request to %.300s timed out (%s)", t->url,
                   detail && detail[0] ? detail : curl_easy_strerror(rc));
    else
        reply_text(out, CI_FETCH_FAILED, "the request to %.300s failed: %s", t->url,
                   detail && detail[0] ? detail : curl_easy_strerror(rc));
    if (out->status == CI_FETCH_STOPPED) {
        free(out->data);
        out->data = NULL;
        out->len = 0;
    }
}

void ci_fetch_perform(const struct ci_config *cfg, const struct ci_fetch_request *req,
                      int64_t deadline_ms, int (*stop)(void *), void *arg,
                      struct ci_fetch_reply *out)
{
    char method[CI_FETCH_METHOD_MAX + 1], url[CI_FETCH_URL_MAX + 1], msg[4096];
    char detail[CURL_ERROR_SIZE] = "";
    struct transfer t = {.cfg = cfg, .method = method, .url = url, .stop = stop, .arg = arg};
    struct curl_slist *headers = NULL;
    struct ci_url u;
    CURL *h = NULL;
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    long code = 0;

    /* What memory running out leaves: a failure without a message. */
    *out = (struct ci_fetch_reply){CI_FETCH_FAILED, NULL, 0, 0, 0};
    memcpy(method, req->method, req->method_len);
    method[req->method_len] = '\0';
    memcpy(url, req->url, req->url_len);
    url[req->url_len] = '\0';
    if (!(t.rule = ci_url_check(&cfg->urls, url, &u, msg, sizeof msg))) {
        if (msg[0])
            fetch_done(&t, msg, CURLE_OK, 0, NULL, out);
        return;
    }
    /* A server answers TRACE (TRACK, IIS's) with the request it got, the
     * headers the host added too. */
    if (strcmp(method, "TRACE") == 0 || strcmp(method, "TRACK") == 0) {
        snprintf(msg, sizeof msg, "the HTTP method %s is not allowed in this sandbox: the "
                 "server would answer with the request the host made", method);
        fetch_done(&t, msg, CURLE_OK, 0, NULL, out);
        ci_url_clear(&u);
        return;
    }
    if (request_headers(req, t.rule, &headers) == 0 && (h = curl_easy_init()) &&
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail) == CURLE_OK &&
        (rc = setup(h, &t, req, &u, headers, deadline_ms)) == CURLE_OK) {
        rc = perform_without_sigpipe(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    }
    if (!t.no_memory && rc != CURLE_OUT_OF_MEMORY)
        fetch_done(&t, NULL, rc, code, detail, out);
    curl_easy_cleanup(h);
    curl_slist_free_all(headers);
    ci_url_clear(&u);
    free(t.head.p);
    free(t.body.p);
}
