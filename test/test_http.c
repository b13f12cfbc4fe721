/*
 * HTTP through the host (ci_config_allow_url): a cell's urllib.request,
 * http.client, requests and pandas reach an HTTP server of this test's own
 * on 127.0.0.1, allowed by its prefix, and nothing else. The server
 * records the last request it was sent, so a test can check what reached
 * it (the header the host adds) against what the cell saw.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"
#include "config.h"
#include "fetch.h"
#include "proto.h"
#include "urls.h"

#define SECRET "s3cret-token-0f9e"
#define RESPONSE_LIMIT (1024 * 1024)
#define URL_TIMEOUT_MS 1500

/* ------------------------------------------------------------ the server */

static struct {
    int fd, port;
    pthread_t thread;
    pthread_mutex_t lock;
    char last[65536]; /* the last request's head and body, NUL-terminated */
    int requests;
} srv = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void put_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, const char *status, const char *headers, const char *body)
{
    char head[1024];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %s\r\nContent-Length: %zu\r\n%s"
                     "Connection: close\r\n\r\n", status, strlen(body), headers);
    put_all(fd, head, (size_t)n);
    put_all(fd, body, strlen(body));
}

/* Reads one request (head, then the body its Content-Length gives) into
 * srv.last; its length, or -1. */
static int read_request(int fd, char *buf, size_t size)
{
    size_t have = 0;
    char *end, *cl;
    long body = 0;

    for (;;) {
        ssize_t r = recv(fd, buf + have, size - 1 - have, 0);
        if (r <= 0)
            return -1;
        have += (size_t)r;
        buf[have] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")))
            break;
        if (have == size - 1)
            return -1;
    }
    if ((cl = strcasestr(buf, "\r\nContent-Length:")) && cl < end)
        body = strtol(cl + 17, NULL, 10);
    while ((long)(have - (size_t)(end + 4 - buf)) < body && have < size - 1) {
        ssize_t r = recv(fd, buf + have, size - 1 - have, 0);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    buf[have] = '\0';
    return (int)have;
}

static void serve_request(int fd, char *req, size_t req_size, char *body, size_t body_size);

static void serve_one(int fd)
{
    char *req = malloc(65536), *body = malloc(70000);

    if (req && body)
        serve_request(fd, req, 65536, body, 70000);
    free(req);
    free(body);
}

static void serve_request(int fd, char *req, size_t req_size, char *body, size_t body_size)
{
    char path[256] = "";

    if (read_request(fd, req, req_size) < 0)
        return;
    pthread_mutex_lock(&srv.lock);
    snprintf(srv.last, sizeof srv.last, "%s", req);
    srv.requests++;
    pthread_mutex_unlock(&srv.lock);
    sscanf(req, "%*s %255s", path);
    if (strncmp(path, "/v1/echo", 8) == 0) {
        const char *b = strstr(req, "\r\n\r\n") + 4;
        snprintf(body, body_size, "method=%.*s path=%s body=%s", (int)strcspn(req, " "),
                 req, path, b);
        respond(fd, "200 OK", "Content-Type: text/plain\r\nX-Served: yes\r\n", body);
    } else if (strcmp(path, "/v1/data.csv") == 0) {
        respond(fd, "200 OK", "Content-Type: text/csv\r\n", "region,sales\nEMEA,120\nAPAC,80\n");
    } else if (strcmp(path, "/v1/data.json") == 0) {
        respond(fd, "200 OK", "Content-Type: application/json\r\n",
                "[{\"region\": \"EMEA\", \"sales\": 120}, {\"region\": \"APAC\", \"sales\": 80}]");
    } else if (strcmp(path, "/v1/leak") == 0) {
        /* A server that shows the client its credentials. */
        respond(fd, "200 OK", "Authorization: Bearer " SECRET "\r\nX-Your-Auth: Bearer " SECRET
                "\r\nX-Other: kept\r\n", "fine");
    } else if (strcmp(path, "/v1/token") == 0) {
        /* A server that shows the credential alone, or in another case. */
        char headers[512];
        snprintf(headers, sizeof headers, "Location: http://127.0.0.1:%d/v1/echo?t=" SECRET
                 "\r\nX-Token: " SECRET "\r\nX-Echo: BEARER " SECRET "\r\nX-Other: kept\r\n",
                 srv.port);
        respond(fd, "302 Found", headers, "");
    } else if (strcmp(path, "/v1/headers") == 0) {
        /* A server that echoes the request it got, as httpbin does. */
        respond(fd, "200 OK", "Content-Type: text/plain\r\n", req);
    } else if (strcmp(path, "/v1/shout") == 0) {
        /* The credential's last word again, in upper case. */
        char loud[sizeof SECRET];
        for (size_t i = 0; i < sizeof SECRET; i++)
            loud[i] = (char)toupper((unsigned char)SECRET[i]);
        respond(fd, "200 OK", "Content-Type: application/json\r\n", loud);
    } else if (strcmp(path, "/v1/gzip") == 0) {
        /* An encoded body, whatever the request accepts. */
        respond(fd, "200 OK", "Content-Encoding: gzip\r\n", "not really gzip");
    } else if (strcmp(path, "/v1/away") == 0) {
        respond(fd, "302 Found", "Location: http://evil.example/steal\r\n", "");
    } else if (strcmp(path, "/v1/inside") == 0) {
        respond(fd, "302 Found", "Location: /v1/data.csv\r\n", "");
    } else if (strcmp(path, "/v1/huge") == 0) {
        /* No length: read to the end, so only the cap can stop it. */
        put_all(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", 38);
        memset(body, 'x', 65536);
        for (int i = 0; i < 4 * RESPONSE_LIMIT / 65536; i++)
            put_all(fd, body, 65536);
    } else if (strcmp(path, "/v1/slow") == 0) {
        h_sleep_ms(URL_TIMEOUT_MS + 3000);
        respond(fd, "200 OK", "", "late");
    } else {
        respond(fd, "404 Not Found", "", "no such page");
    }
}

static void *connection(void *arg)
{
    int fd = (int)(intptr_t)arg;
    serve_one(fd);
    close(fd);
    return NULL;
}

/* A thread a connection: a slow answer keeps no other waiting. */
static void *server(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_t t;
        int fd = accept4(srv.fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (pthread_create(&t, NULL, connection, (void *)(intptr_t)fd) != 0)
            close(fd);
        else
            pthread_detach(t);
    }
    return NULL;
}

static void start_server(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;

    assert_true((srv.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
    assert_int_equal(bind(srv.fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(srv.fd, 16), 0);
    assert_int_equal(getsockname(srv.fd, (struct sockaddr *)&a, &len), 0);
    srv.port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&srv.thread, NULL, server, NULL), 0);
}

static char *last_request(void)
{
    char *copy;
    pthread_mutex_lock(&srv.lock);
    copy = strdup(srv.last);
    pthread_mutex_unlock(&srv.lock);
    return copy;
}

/* ------------------------------------------------------------ the cells */

static ci_session *S;
static char prefix[64];

/* Runs the cell test/cells/@name.py after the line PORT = <the server's
 * port> (h_cells(@first, @name) if @first is not NULL) and returns its
 * stdout (malloc'ed); asserts it succeeds. */
static char *cell_out_after(const char *first, const char *name)
{
    char *cell = first ? h_cells(first, name) : h_cell(name);
    char *code = h_fmt("PORT = %d\n%s", srv.port, cell);
    free(cell);
    ci_result *r = h_run_status(S, code, CI_STATUS_OK);
    char *out = strdup(ci_result_stdout(r, NULL) ? ci_result_stdout(r, NULL) : "");
    ci_result_free(r);
    free(code);
    return out;
}

static char *cell_out(const char *name)
{
    return cell_out_after(NULL, name);
}

static void test_get_and_post_reach_the_server(void **state)
{
    char *out = cell_out("http_get_and_post");
    h_assert_contains(out, "200 yes method=GET path=/v1/echo?q=1 body=\n");
    h_assert_contains(out, "method=POST path=/v1/echo body=hello body\n");
    h_assert_contains(out, "200 method=POST path=/v1/echo body={\"k\": [1, 2]}\n");
    free(out);
    out = last_request();
    h_assert_contains(out, "Content-Type: application/json\r\n");
    free(out);
}

static void test_the_added_header_reaches_the_server_and_never_the_cell(void **state)
{
    char *out = cell_out("http_added_header_never_in_the_cell");
    char *seen = last_request();

    h_assert_contains(out, "200 fine");
    h_assert_contains(out, "'X-Other': 'kept'");
    h_assert_not_contains(out, SECRET);
    h_assert_contains(seen, "Authorization: Bearer " SECRET "\r\n");
    /* The host's header replaces the cell's of that name. */
    h_assert_not_contains(seen, "mine");
    free(out);
    free(seen);
}

static void test_a_redirect_is_checked_as_a_request(void **state)
{
    char *want = h_fmt("network access to http://evil.example/steal is not allowed in this "
                       "sandbox; allowed: %s", prefix);
    char *out = cell_out("http_redirects");
    h_assert_contains(out, "requests: ");
    h_assert_contains(out, "urllib: ");
    assert_true(strstr(out, want) && strstr(strstr(out, want) + 1, want));
    h_assert_contains(out, "region,sales\nEMEA,120\n");
    free(out);
    free(want);
}

static void test_urls_outside_the_prefixes_are_refused(void **state)
{
    char *want = h_fmt("network access to http://127.0.0.1:%d/other is not allowed in this "
                       "sandbox; allowed: %s", srv.port, prefix);
    int before = srv.requests;
    char *out = cell_out("http_outside_the_prefixes");
    h_assert_contains(out, want);
    h_assert_contains(out, "network access to https://127.0.0.1:");
    h_assert_contains(out, "network access to http://localhost:");
    assert_int_equal(srv.requests, before);
    free(out);
    free(want);
    /* Encoded dot segments, which a decoding server would serve from
     * above the prefix, and a backslash are refused before any request. */
    out = cell_out("http_encoded_dot_segments");
    h_assert_str(out, "refused True\nrefused True\nrefused True\n");
    assert_int_equal(srv.requests, before);
    free(out);
}

static void test_a_huge_response_is_capped(void **state)
{
    int64_t start = h_now_ms();
    char *out = cell_out("http_huge_response");
    h_assert_contains(out, "is over this sandbox's response limit of 1 MiB");
    assert_true(h_now_ms() - start < 60000); /* a hang, not a slow machine */
    free(out);
}

static void test_a_slow_response_times_out(void **state)
{
    int64_t start = h_now_ms();
    char *out = cell_out("http_slow_response");
    int64_t took = h_now_ms() - start;
    h_assert_contains(out, "requests timed out: ");
    h_assert_contains(out, "/v1/slow timed out (Operation timed out after 15");
    assert_true(took >= 2 * URL_TIMEOUT_MS - 200);
    assert_true(took < 2 * URL_TIMEOUT_MS + 30000);
    free(out);
}

static void test_pandas_reads_an_allowed_csv_and_json(void **state)
{
    char *out = cell_out("http_pandas_csv_and_json");
    const char *want = "{'region': ['EMEA', 'APAC'], 'sales': [120, 80]}\n";
    h_assert_contains(out, want);
    h_assert_contains(strstr(out, want) + 1, want);
    free(out);
}

/* What a cell gets past the worker's own client: _codeinterp.host_fetch
 * with bytes of its choosing. A URL the policy refuses is refused; a
 * frame the worker's client never writes ends the worker. */
static void test_forged_requests_are_refused_or_end_the_worker(void **state)
{
    static const char *const killing[][2] = {
        {"struct.pack('=III', 3, 900, 0) + b'GET'", "wrong lengths"},
        {"fetch('get', URL)", "method is not upper-case"},
        {"fetch('GET', URL, b'X-A: 1\\r\\nBad\\r\\n')", "are not \"Name: value\" lines"},
        {"fetch('GET', URL, b'X: ' + b'a' * 70000 + b'\\r\\n')", "wrong lengths"},
        {"fetch('GET', URL + '\\0')", "URL holds a NUL"},
        {"fetch('POST', URL, b'', b'x' * (1024 * 1024 + 1))", "body is over the request limit"},
    };
    char *out = cell_out_after("http_fetch", "http_forged_urls");
    int before = srv.requests;
    char *fetch = h_cell("http_fetch");

    h_assert_contains(out, "1 network access to http://evil.example/ is not allowed");
    h_assert_contains(out, "has userinfo");
    h_assert_contains(out, "a space, a control character");
    h_assert_contains(out, "1 network access to file:///etc/passwd is not allowed");
    h_assert_contains(out, "only http and https are allowed");
    h_assert_contains(out, "/v1/../other is not allowed in this sandbox; allowed:");
    free(out);
    assert_int_equal(srv.requests, before);
    for (size_t i = 0; i < sizeof killing / sizeof *killing; i++) {
        char *code = h_fmt("import _codeinterp as ci\n"
                           "URL = 'http://127.0.0.1:%d/v1/echo'\n"
                           "%s\n"
                           "ci.host_fetch(%s)\n", srv.port, fetch, killing[i][0]);
        ci_result *r = h_run_status(S, code, CI_STATUS_KILLED);
        h_assert_str(ci_result_error_name(r), "ProtocolError");
        h_assert_contains(ci_result_error_value(r), killing[i][1]);
        ci_result_free(r);
        free(code);
        h_ensure_alive(S);
    }
    free(fetch);
    assert_int_equal(srv.requests, before);
}

static void test_an_interrupt_ends_a_request(void **state)
{
    struct h_interrupter in;
    int64_t start = h_now_ms();
    char *code = h_fmt("import urllib.request\n"
                       "urllib.request.urlopen('http://127.0.0.1:%d/v1/slow')\n", srv.port);
    ci_result *r;

    h_interrupt_later(&in, S, 300);
    r = h_run_status(S, code, CI_STATUS_INTERRUPTED);
    assert_int_equal(h_interrupter_join(&in), 1); /* a cell was running */
    assert_true(h_now_ms() - start < URL_TIMEOUT_MS + 30000); /* a hang, not a slow machine */
    ci_result_free(r);
    free(code);
}

/* A prefix that names a host by a name that resolves to loopback (the
 * machine's own name, in /etc/hosts) allows the URL but not the address:
 * the host refuses the connection after it resolves the name. */
static void test_a_name_that_resolves_to_loopback_is_refused(void **state)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    char name[256], *allowed, *code;
    ci_config *cfg;
    ci_session *s;
    ci_result *r;
    int before = srv.requests;

    if (gethostname(name, sizeof name) != 0 || strcmp(name, "localhost") == 0 ||
        getaddrinfo(name, NULL, &hints, &ai) != 0 ||
        (ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >> 24) != 127) {
        if (ai)
            freeaddrinfo(ai);
        h_skip_because("this machine's name (%s) does not resolve to a loopback address", name);
        return;
    }
    freeaddrinfo(ai);
    allowed = h_fmt("http://%s:%d/v1/", name, srv.port);
    cfg = h_config(NULL);
    assert_int_equal(ci_config_allow_url(cfg, allowed), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    code = h_fmt("import urllib.request\nurllib.request.urlopen('%secho')\n", allowed);
    r = h_run_status(s, code, CI_STATUS_ERROR);
    h_assert_contains(ci_result_error_value(r), "is not allowed in this sandbox: its host "
                      "resolves to 127.");
    h_assert_contains(ci_result_error_value(r), "a loopback, link-local, private or reserved "
                      "address");
    assert_int_equal(srv.requests, before);
    ci_result_free(r);
    ci_session_free(s);
    free(code);
    free(allowed);
}

static void test_a_session_without_prefixes_has_no_network(void **state)
{
    ci_session *s = h_session(NULL);
    char *code = h_fmt("import urllib.request\n"
                       "urllib.request.urlopen('http://127.0.0.1:%d/v1/echo')\n", srv.port);
    ci_result *r = h_run_status(s, code, CI_STATUS_ERROR);
    h_assert_contains(ci_result_error_value(r), "network access is disabled in this sandbox");
    ci_result_free(r);
    free(code);
    /* A cell that asks the host anyway breaks the protocol. */
    r = h_run_status(s, "import _codeinterp as ci\nci.host_fetch(b'x' * 12)\n", CI_STATUS_KILLED);
    h_assert_contains(ci_result_error_value(r), "from a worker that was given no network");
    ci_result_free(r);
    ci_session_free(s);
}

/* ------------------------------------------------------------ the policy */

static void test_prefixes_and_headers_are_checked(void **state)
{
    ci_config *cfg = h_config(NULL);
    static const char *const bad[] = {
        "file:///etc/passwd", "ftp://example.com/", "http://user:pw@example.com/",
        "https://api.example.com/v1/?q=1", "https://api.example.com/v1/#x",
        "https://api.example.com/a b", "https://api.example.com/\r\nX: y", "/relative", "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(ci_config_allow_url(cfg, bad[i]), CI_EINVAL);
    assert_int_equal(ci_config_allow_url(cfg, "https://api.example.com/v1/"), CI_OK);
    assert_int_equal(ci_config_set_url_header(cfg, "https://api.example.com/v2/", "A: b"),
                     CI_EINVAL);
    h_assert_contains(ci_session_errmsg(NULL), "not an allowed URL prefix");
    assert_int_equal(ci_config_set_url_header(cfg, "https://api.example.com/v1/", "A: b\r\nC: d"),
                     CI_EINVAL);
    assert_int_equal(ci_config_set_url_header(cfg, "https://api.example.com/v1/", "no colon"),
                     CI_EINVAL);
    assert_int_equal(ci_config_set_url_header(cfg, "https://api.example.com/v1/", "A: b"), CI_OK);
    assert_int_equal(ci_config_set_url_limits(cfg, 0, 1, 1), CI_EINVAL);
    assert_int_equal(ci_config_set_url_limits(cfg, 1, 1, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_url_limits(cfg, 1, CI_URL_LIMIT_MAX + 1ul, 1), CI_EINVAL);
    assert_int_equal(ci_config_set_url_limits(cfg, 1, CI_URL_LIMIT_MAX, 1), CI_OK);
    assert_int_equal(ci_config_allow_url(NULL, "http://a/"), CI_EINVAL);
    assert_int_equal(ci_config_set_url_header(cfg, NULL, "A: b"), CI_EINVAL);
    ci_config_free(cfg);
}

/* With @allow the one prefix allowed, each of @yes (a NULL-ended list)
 * is allowed and each of @no refused with a message that names @allow. */
static void check_matches(const char *allow, const char *const *yes, const char *const *no)
{
    ci_config *cfg = h_config(NULL);
    char *allowed = h_fmt("; allowed: %s", allow);
    struct ci_url u;
    char msg[512];

    assert_int_equal(ci_config_allow_url(cfg, allow), CI_OK);
    for (; *yes; yes++) {
        if (!ci_url_check(&cfg->urls, *yes, &u, msg, sizeof msg))
            fail_msg("%s refused under %s: %s", *yes, allow, msg);
        ci_url_clear(&u);
    }
    for (; *no; no++) {
        if (ci_url_check(&cfg->urls, *no, &u, msg, sizeof msg))
            fail_msg("%s allowed under %s", *no, allow);
        h_assert_contains(msg, "is not allowed in this sandbox");
        h_assert_contains(msg, allowed);
    }
    free(allowed);
    ci_config_free(cfg);
}

static void test_the_allow_list_matches_scheme_host_port_and_path(void **state)
{
    static const char *const yes[] = {
        "https://api.example.com/v1/", "https://API.example.com:443/v1/rates?x=1",
        "https://api.example.com/v1/a/../b", NULL,
    };
    static const char *const no[] = {
        "http://api.example.com/v1/", "https://api.example.com:8443/v1/",
        "https://api.example.com/v2/", "https://api.example.com/v1/../v2/",
        "https://evil.example/v1/", "https://api.example.com.evil.example/v1/",
        "https://x@api.example.com/v1/", "file:///v1/", "https://api.example.com/v1/\r\n",
        NULL,
    };

    check_matches("https://api.example.com/v1/", yes, no);
}

static void test_a_prefix_without_a_slash_matches_whole_segments(void **state)
{
    static const char *const yes[] = {
        "https://api.example.com/v1", "https://api.example.com/v1/rates",
        "https://api.example.com/v1?x=1", "https://api.example.com/v1#top", NULL,
    };
    static const char *const no[] = {
        "https://api.example.com/v1admin", "https://api.example.com/v1beta/rates",
        "https://api.example.com/v", "https://api.example.com/", NULL,
    };

    check_matches("https://api.example.com/v1", yes, no);
}

static void test_private_addresses_need_a_prefix_that_names_them(void **state)
{
    struct ci_url_rule named = {.host = "127.0.0.1"}, name = {.host = "api.example.com"},
                       local = {.host = "localhost"}, v6 = {.host = "[::1]"};
    static const char *const private[] = {"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1",
                                          "169.254.169.254", "0.0.0.0", "100.64.0.1",
                                          "224.0.0.1"};
    struct sockaddr_in a = {.sin_family = AF_INET};
    struct sockaddr_in6 b = {.sin6_family = AF_INET6};

    for (size_t i = 0; i < sizeof private / sizeof *private; i++) {
        inet_pton(AF_INET, private[i], &a.sin_addr);
        assert_false(ci_url_address_allowed(&name, (struct sockaddr *)&a));
    }
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    assert_true(ci_url_address_allowed(&named, (struct sockaddr *)&a));
    assert_true(ci_url_address_allowed(&local, (struct sockaddr *)&a));
    inet_pton(AF_INET, "127.0.0.2", &a.sin_addr);
    assert_false(ci_url_address_allowed(&named, (struct sockaddr *)&a));
    inet_pton(AF_INET, "93.184.216.34", &a.sin_addr);
    assert_true(ci_url_address_allowed(&name, (struct sockaddr *)&a));
    static const char *const private6[] = {"::1", "::", "fe80::1", "fd00::1", "ff02::1",
                                           "::ffff:10.0.0.1", "64:ff9b::7f00:1"};
    for (size_t i = 0; i < sizeof private6 / sizeof *private6; i++) {
        assert_int_equal(inet_pton(AF_INET6, private6[i], &b.sin6_addr), 1);
        assert_false(ci_url_address_allowed(&name, (struct sockaddr *)&b));
    }
    inet_pton(AF_INET6, "::1", &b.sin6_addr);
    assert_true(ci_url_address_allowed(&v6, (struct sockaddr *)&b));
    inet_pton(AF_INET6, "2606:2800:220:1::1", &b.sin6_addr);
    assert_true(ci_url_address_allowed(&name, (struct sockaddr *)&b));
}

/* The credential the host adds is kept from the cell in a response header
 * that shows it without its scheme or in another case, and a TRACE, whose
 * answer is the request the host made, is never sent. */
static void test_a_response_never_shows_the_credential_alone(void **state)
{
    int before;
    char *out = cell_out("http_token_response_headers");

    h_assert_contains(out, "302 ");
    h_assert_contains(out, "('X-Other', 'kept')");
    h_assert_not_contains(out, SECRET);
    h_assert_not_contains(out, "Location");
    free(out);
    before = srv.requests;
    out = cell_out("http_trace_refused");
    h_assert_contains(out, "refused: the HTTP method TRACE is not allowed in this sandbox");
    h_assert_not_contains(out, SECRET);
    free(out);
    assert_int_equal(srv.requests, before);
}

/* A body that holds the credential (a server echoing its request) is not
 * given to the cell, nor an encoded one, which could hide it: the host
 * asks for identity whatever the cell's client accepts. */
static void test_a_body_never_shows_the_credential(void **state)
{
    char *out = cell_out("http_bodies_with_the_credential");
    char *seen = last_request();

    h_assert_not_contains(out, SECRET);
    h_assert_contains(out, "headers refused:");
    h_assert_contains(out, "holds a header value the host added to the request");
    h_assert_contains(out, "shout refused:");
    h_assert_contains(out, "gzip refused:");
    h_assert_contains(out, "is encoded (Content-Encoding)");
    h_assert_contains(out, "echo method=GET path=/v1/echo body=");
    h_assert_contains(seen, "Accept-Encoding: identity\r\n");
    h_assert_not_contains(seen, "br\r\n");
    free(out);
    free(seen);
}

/* Odd forms of an allowed address are that address, as libcurl requests
 * it; a zone, a trailing dot or another family's form of it is refused. */
static void test_odd_address_forms_match_only_what_they_name(void **state)
{
    static const char *const yes4[] = {
        "http://0x7f.1:8080/v1/", "http://2130706433:8080/v1/", "http://0177.0.0.1:8080/v1/",
        "http://127.1:8080/v1/", "http://%31%32%37.0.0.1:8080/v1/x", "HTTP://127.0.0.1:08080/v1/",
        NULL,
    };
    static const char *const no4[] = {
        "http://127.0.0.1.:8080/v1/", "http://[::ffff:127.0.0.1]:8080/v1/",
        "http://127.0.0.2:8080/v1/", "http://127.0.0.1:8080@evil.example/v1/",
        "http://127.0.0.1:80/v1/", "http://127.0.0.1/v1/", NULL,
    };
    static const char *const yes6[] = {"http://[0:0:0:0:0:0:0:1]:8080/", "http://[::01]:8080/",
                                       NULL};
    static const char *const no6[] = {"http://[::1%25lo]:8080/", "http://[::ffff:7f00:1]:8080/",
                                      "http://[::2]:8080/", NULL};
    static const char *const yes_name[] = {"http://API.Example.COM/", "http://api%2eexample.com/",
                                           "http://api.example.com:80/", NULL};
    static const char *const no_name[] = {"http://api.example.com./", "https://api.example.com/",
                                          "http://api.example.com:8080/", NULL};
    ci_config *cfg = h_config(NULL);
    struct ci_url_rule name = {.host = "api.example.com"};
    struct sockaddr_in6 b = {.sin6_family = AF_INET6};

    check_matches("http://127.0.0.1:8080/v1/", yes4, no4);
    check_matches("http://[::1]:8080/", yes6, no6);
    check_matches("http://api.example.com/", yes_name, no_name);
    assert_int_equal(ci_config_allow_url(cfg, "http://[fe80::1%25eth0]:8080/"), CI_EINVAL);
    h_assert_contains(ci_session_errmsg(NULL), "IPv6 zone");
    ci_config_free(cfg);
    /* The local-use NAT64 prefix (RFC 8215) is no public address. */
    assert_int_equal(inet_pton(AF_INET6, "64:ff9b:1::a00:1", &b.sin6_addr), 1);
    assert_false(ci_url_address_allowed(&name, (struct sockaddr *)&b));
}

/* A '.', '/' or '\\' encoded twice, overlong in UTF-8 or as IIS's %u is
 * refused like %2e: a lax server decodes it into a path above the prefix. */
static void test_dots_hidden_in_any_encoding_are_refused(void **state)
{
    static const char *const yes[] = {
        "https://api.example.com/v1/%41%7e", "https://api.example.com/v1/caf%c3%a9",
        "https://api.example.com/v1/%e0%a4%85", "https://api.example.com/v1/%25", NULL,
    };
    static const char *const no[] = {
        "https://api.example.com/v1/%252e%252e/admin", "https://api.example.com/v1/%252F",
        "https://api.example.com/v1/%c0%ae%c0%ae/admin", "https://api.example.com/v1/%C1%9C",
        "https://api.example.com/v1/%e0%80%ae%e0%80%ae/", "https://api.example.com/v1/%f0%80%80%ae",
        "https://api.example.com/v1/%u002e%u002e/", "https://api.example.com/v1/%25u002e", NULL,
    };

    check_matches("https://api.example.com/v1/", yes, no);
}

/* A session allowing the test's prefix (with the credential header if
 * @header), logging to @log; the config is freed. */
static ci_session *logged_session(const char *log, unsigned long timeout_ms, int header)
{
    ci_config *cfg = h_config(&(struct h_limits){.timeout_ms = timeout_ms});
    ci_session *s = NULL;

    assert_int_equal(ci_config_allow_url(cfg, prefix), CI_OK);
    if (header)
        assert_int_equal(ci_config_set_url_header(cfg, prefix, "Authorization: Bearer " SECRET),
                         CI_OK);
    assert_int_equal(ci_config_set_audit_log(cfg, log), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    return s;
}

/* A cell's requests stop at CI_FETCH_PER_RUN_MAX, refused ones too (each
 * is an audit line): the rest are refused unlogged and counted in the
 * cell's event; the next cell starts again. */
static void test_a_cells_requests_stop_at_the_per_run_limit(void **state)
{
    char *dir = h_tmpdir(), *log = h_fmt("%s/flood.log", dir), *text, *line, *save = NULL;
    ci_session *s = logged_session(log, 120000, 0);
    int http = 0, cells = 0;
    size_t len;
    char *cell = h_cell("http_flood_refused");
    char *code = h_fmt("REQUESTS = %u\nPORT = %d\n%s", CI_FETCH_PER_RUN_MAX + 5, srv.port, cell);
    ci_result *r = h_run_status(s, code, CI_STATUS_OK);
    char *want = h_fmt("[('limit', 5), ('list', %u)]\n", CI_FETCH_PER_RUN_MAX);
    h_assert_str(ci_result_stdout(r, NULL), want);
    ci_result_free(r);
    free(code);
    free(cell);
    code = h_fmt("import urllib.request\n"
                 "print(urllib.request.urlopen('http://127.0.0.1:%d/v1/echo').status)", srv.port);
    r = h_run_status(s, code, CI_STATUS_OK);
    h_assert_str(ci_result_stdout(r, NULL), "200\n");
    ci_result_free(r);
    ci_session_free(s);
    assert_non_null(text = h_read_file(log, &len));
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *ev = json_loads(line, 0, NULL);
        const char *event = json_string_value(json_object_get(ev, "event"));
        if (!strcmp(event, "http"))
            http++;
        if (!strcmp(event, "cell"))
            assert_int_equal(json_integer_value(json_object_get(ev, "http_over_limit")),
                             cells++ == 0 ? 5 : 0);
        json_decref(ev);
    }
    assert_int_equal(http, CI_FETCH_PER_RUN_MAX + 1);
    assert_int_equal(cells, 2);
    free(text);
    free(code);
    free(want);
    h_rmtree(dir);
    free(log);
    free(dir);
}

/* Each request by URL is a line of the audit trail, allowed or refused,
 * with its method, URL, status and size, and no trace of the header the
 * host added. */
static void test_each_request_is_in_the_audit_trail(void **state)
{
    char *dir = h_tmpdir(), *log = h_fmt("%s/audit.log", dir), *text, *line, *save = NULL;
    ci_session *s = logged_session(log, 60000, 1);
    int allowed = 0, refused = 0;
    size_t len;
    char *cell = h_cell("http_one_allowed_one_refused");
    char *code = h_fmt("PORT = %d\n%s", srv.port, cell);
    ci_result *r = h_run_status(s, code, CI_STATUS_OK);
    free(cell);
    h_assert_contains(ci_result_stdout(r, NULL), "refused");
    ci_result_free(r);
    ci_session_free(s);
    assert_non_null(text = h_read_file(log, &len));
    h_assert_not_contains(text, SECRET);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *ev = json_loads(line, 0, NULL);
        assert_non_null(ev);
        if (!strcmp(json_string_value(json_object_get(ev, "event")), "http")) {
            const char *url = json_string_value(json_object_get(ev, "url"));
            h_assert_str(json_string_value(json_object_get(ev, "method")), "GET");
            if (json_is_true(json_object_get(ev, "allowed"))) {
                char *want = h_fmt("http://127.0.0.1:%d/v1/echo", srv.port);
                h_assert_str(url, want);
                assert_int_equal(json_integer_value(json_object_get(ev, "status")), 200);
                assert_true(json_integer_value(json_object_get(ev, "bytes")) > 0);
                free(want);
                allowed++;
            } else {
                char *want = h_fmt("http://127.0.0.1:%d/v2/no", srv.port);
                h_assert_str(url, want);
                assert_int_equal(json_integer_value(json_object_get(ev, "status")), 0);
                free(want);
                refused++;
            }
        }
        json_decref(ev);
    }
    assert_int_equal(allowed, 1);
    assert_int_equal(refused, 1);
    free(text);
    free(code);
    h_rmtree(dir);
    free(log);
    free(dir);
}

static int group_setup(void **state)
{
    ci_config *cfg;
    int rc;

    (void)state;
    start_server();
    snprintf(prefix, sizeof prefix, "http://127.0.0.1:%d/v1/", srv.port);
    cfg = h_config(&(struct h_limits){.timeout_ms = 60000});
    if (ci_config_allow_url(cfg, prefix) != CI_OK ||
        ci_config_set_url_header(cfg, prefix, "Authorization: Bearer " SECRET) != CI_OK ||
        ci_config_set_url_limits(cfg, 1024 * 1024, RESPONSE_LIMIT, URL_TIMEOUT_MS) != CI_OK)
        return -1;
    rc = ci_session_new(&S, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "no session: %s\n", ci_session_errmsg(NULL));
        return -1;
    }
    return 0;
}

static int alive(void **state)
{
    h_ensure_alive(S);
    return 0;
}

static int group_teardown(void **state)
{
    ci_session_free(S);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes_and_headers_are_checked),
        cmocka_unit_test(test_the_allow_list_matches_scheme_host_port_and_path),
        cmocka_unit_test(test_a_prefix_without_a_slash_matches_whole_segments),
        cmocka_unit_test(test_private_addresses_need_a_prefix_that_names_them),
        cmocka_unit_test(test_odd_address_forms_match_only_what_they_name),
        cmocka_unit_test(test_dots_hidden_in_any_encoding_are_refused),
        cmocka_unit_test_setup(test_get_and_post_reach_the_server, alive),
        cmocka_unit_test_setup(test_the_added_header_reaches_the_server_and_never_the_cell,
                               alive),
        cmocka_unit_test_setup(test_a_redirect_is_checked_as_a_request, alive),
        cmocka_unit_test_setup(test_a_response_never_shows_the_credential_alone, alive),
        cmocka_unit_test_setup(test_a_body_never_shows_the_credential, alive),
        cmocka_unit_test(test_a_cells_requests_stop_at_the_per_run_limit),
        cmocka_unit_test_setup(test_urls_outside_the_prefixes_are_refused, alive),
        cmocka_unit_test_setup(test_a_huge_response_is_capped, alive),
        cmocka_unit_test_setup(test_a_slow_response_times_out, alive),
        cmocka_unit_test_setup(test_pandas_reads_an_allowed_csv_and_json, alive),
        cmocka_unit_test_setup(test_forged_requests_are_refused_or_end_the_worker, alive),
        cmocka_unit_test(test_each_request_is_in_the_audit_trail),
        cmocka_unit_test_setup(test_an_interrupt_ends_a_request, alive),
        cmocka_unit_test(test_a_name_that_resolves_to_loopback_is_refused),
        cmocka_unit_test(test_a_session_without_prefixes_has_no_network),
    };
    h_watchdog(600);
    return cmocka_run_group_tests_name("http", tests, group_setup, group_teardown);
}
