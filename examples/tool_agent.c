/*
 * tool_agent: an agent host that lets a model's code call the host's
 * tools and reach one service, never their credentials.
 *
 *     tool_agent CELLS ORDERS.csv RATES.csv
 *
 * The host owns two things a cell may use but not hold:
 *
 * - a table (ORDERS.csv, read here, never uploaded), offered as the host
 *   function query_orders(region=None, month=None), which answers with
 *   the matching rows as a list of objects: the cell gets rows, not the
 *   table (ci_config_add_function);
 * - an internal FX-rate service, a small HTTP server this program runs
 *   on the loopback that serves RATES.csv to requests carrying its
 *   token: the session may fetch that one URL prefix, the host makes the
 *   request and adds the token, and the cell sees neither the token nor
 *   any other address (ci_config_allow_url, ci_config_set_url_header).
 *
 * The service's URL (without the token) goes into the workspace as
 * services.json; then the *.py files of CELLS run as one cell each, in
 * the order of their names, as a model would send them, and each
 * result is printed.
 *
 * Exit status: 0 if every cell ran to the end, 1 otherwise, 2 for a
 * wrong command line.
 */
#include <codeinterp.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* What the service wants and the host adds; no cell ever sees it. */
#define SERVICE_TOKEN "Bearer fx-service-token-for-the-host-only"

/* ------------------------------------------------------ the host's table */

struct order {
    long id;
    char region[16], month[16], product[64], currency[8];
    long units;
    double unit_price;
};

static struct order *orders;
static size_t n_orders;

/* Reads ORDERS.csv: a header line, then
 * order_id,region,month,product,units,unit_price,currency. */
static int load_orders(const char *path)
{
    char line[512];
    FILE *f = fopen(path, "r");

    if (!f || !fgets(line, sizeof line, f)) {
        fprintf(stderr, "tool_agent: cannot read %s\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        struct order o;
        struct order *grown;

        if (sscanf(line, "%ld,%15[^,],%15[^,],%63[^,],%ld,%lf,%7[^,\n]", &o.id, o.region,
                   o.month, o.product, &o.units, &o.unit_price, o.currency) != 7)
            continue;
        if (!(grown = realloc(orders, (n_orders + 1) * sizeof *orders)))
            break;
        orders = grown;
        orders[n_orders++] = o;
    }
    fclose(f);
    return 0;
}

/* A string argument by position or keyword, NULL when not given; -1 when
 * it is given but is not a string. */
static int string_arg(json_t *args, json_t *kwargs, size_t pos, const char *name,
                      const char **out)
{
    json_t *v = json_object_get(kwargs, name);

    if (!v)
        v = json_array_get(args, pos);
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    *out = json_string_value(v);
    return 0;
}

/* query_orders(region=None, month=None): the rows that match, as JSON. */
static void query_orders(void *payload, const char *name, const char *args_json,
                         size_t args_len, ci_reply *reply)
{
    json_t *call = json_loadb(args_json, args_len, 0, NULL);
    json_t *args = json_object_get(call, "args"), *kwargs = json_object_get(call, "kwargs");
    const char *region, *month, *key;
    json_t *rows, *v;
    char *text;

    (void)payload;
    (void)name;
    json_object_foreach(kwargs, key, v) {
        if (strcmp(key, "region") && strcmp(key, "month")) {
            char msg[160];
            snprintf(msg, sizeof msg, "query_orders() got an unexpected keyword argument '%.64s'",
                     key);
            ci_reply_error(reply, "TypeError", msg);
            json_decref(call);
            return;
        }
    }
    if (json_array_size(args) > 2 || string_arg(args, kwargs, 0, "region", &region) < 0 ||
        string_arg(args, kwargs, 1, "month", &month) < 0) {
        ci_reply_error(reply, "TypeError", "query_orders(region=None, month=None) takes strings");
        json_decref(call);
        return;
    }
    rows = json_array();
    for (size_t i = 0; i < n_orders; i++) {
        const struct order *o = &orders[i];
        if ((region && strcmp(region, o->region)) || (month && strcmp(month, o->month)))
            continue;
        json_array_append_new(rows, json_pack("{s:I, s:s, s:s, s:s, s:I, s:f, s:s}", "order_id",
                                              (json_int_t)o->id, "region", o->region, "month",
                                              o->month, "product", o->product, "units",
                                              (json_int_t)o->units, "unit_price", o->unit_price,
                                              "currency", o->currency));
    }
    text = json_dumps(rows, JSON_COMPACT);
    if (text)
        ci_reply_json(reply, text, strlen(text));
    else
        ci_reply_error(reply, "MemoryError", "out of memory");
    free(text);
    json_decref(rows);
    json_decref(call);
}

/* --------------------------------------------- the loopback FX service */

struct service {
    int listener;
    unsigned short port;
    char *body; /* RATES.csv */
    size_t body_len;
    pthread_t thread;
};

static void reply(int fd, const char *status, const char *body, size_t len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %s\r\nContent-Type: text/csv\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     status, len);

    if (write(fd, head, (size_t)n) == n && len)
        (void)!write(fd, body, len);
}

/* One request a connection: GET /fx/rates.csv with the token, or 401/404. */
static void *serve(void *arg)
{
    struct service *sv = arg;

    for (;;) {
        char req[8192];
        size_t have = 0;
        int fd = accept(sv->listener, NULL, NULL);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL; /* the listener was shut down */
        }
        while (have < sizeof req - 1) {
            ssize_t n = read(fd, req + have, sizeof req - 1 - have);
            if (n <= 0)
                break;
            have += (size_t)n;
            req[have] = '\0';
            if (strstr(req, "\r\n\r\n"))
                break;
        }
        req[have] = '\0';
        if (strncmp(req, "GET /fx/rates.csv ", 18) != 0)
            reply(fd, "404 Not Found", "", 0);
        else if (!strstr(req, "\r\nAuthorization: " SERVICE_TOKEN "\r\n"))
            reply(fd, "401 Unauthorized", "", 0);
        else
            reply(fd, "200 OK", sv->body, sv->body_len);
        close(fd);
    }
}

static int service_start(struct service *sv, const char *rates)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    FILE *f = fopen(rates, "r");

    if (!f) {
        fprintf(stderr, "tool_agent: cannot read %s\n", rates);
        return -1;
    }
    sv->body = malloc(1 << 16);
    sv->body_len = sv->body ? fread(sv->body, 1, 1 << 16, f) : 0;
    fclose(f);
    sv->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!sv->body || sv->listener < 0 || bind(sv->listener, (struct sockaddr *)&a, sizeof a) ||
        listen(sv->listener, 8) || getsockname(sv->listener, (struct sockaddr *)&a, &alen) ||
        pthread_create(&sv->thread, NULL, serve, sv)) {
        perror("tool_agent: the FX service");
        return -1;
    }
    sv->port = ntohs(a.sin_port);
    return 0;
}

static void service_stop(struct service *sv)
{
    shutdown(sv->listener, SHUT_RDWR);
    pthread_join(sv->thread, NULL);
    close(sv->listener);
    free(sv->body);
}

/* --------------------------------------------------------- the session */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    long n;

    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) && fread(text, 1, (size_t)n, f) == (size_t)n)
        text[n] = '\0';
    else {
        free(text);
        text = NULL;
    }
    if (f)
        fclose(f);
    return text;
}

static int is_cell(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return n > 3 && !strcmp(d->d_name + n - 3, ".py");
}

/* Runs each *.py of @dir as a cell; 0 if all ended well. */
static int run_cells(ci_session *s, const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, is_cell, alphasort), failed = n < 0;

    for (int i = 0; i < n; i++) {
        char path[4096];
        char *code;
        ci_result *r = NULL;

        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (!(code = read_file(path)) || ci_run(s, code, &r) != CI_OK) {
            fprintf(stderr, "tool_agent: %s: %s\n", path, code ? ci_session_errmsg(s) : "unreadable");
            failed = 1;
        } else {
            printf("== %s (%s)\n%s", names[i]->d_name, ci_status_name(ci_result_status(r)),
                   ci_result_stdout(r, NULL));
            if (ci_result_status(r) != CI_STATUS_OK) {
                printf("%s\n", ci_result_traceback(r) ? ci_result_traceback(r) : "");
                failed = 1;
            }
        }
        ci_result_free(r);
        free(code);
        free(names[i]);
    }
    free(n >= 0 ? names : NULL);
    return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct service sv = {.listener = -1};
    char prefix[64], services[160];
    ci_config *cfg;
    ci_session *s = NULL;
    int rc = 1;

    if (argc != 4) {
        fprintf(stderr, "usage: tool_agent CELLS ORDERS.csv RATES.csv\n");
        return 2;
    }
    if (load_orders(argv[2]) < 0 || service_start(&sv, argv[3]) < 0)
        return 1;
    snprintf(prefix, sizeof prefix, "http://127.0.0.1:%u/fx/", sv.port);
    snprintf(services, sizeof services, "{\"fx_rates\": \"%srates.csv\"}\n", prefix);
    if (!(cfg = ci_config_new()) ||
        ci_config_add_function(cfg, "query_orders",
                               "query_orders(region=None, month=None) -> list of dict\n\n"
                               "The orders of the host's table, those of a region "
                               "(EMEA, AMER, APAC) and month (YYYY-MM) when given.",
                               query_orders, NULL) != CI_OK ||
        ci_config_allow_url(cfg, prefix) != CI_OK ||
        ci_config_set_url_header(cfg, prefix, "Authorization: " SERVICE_TOKEN) != CI_OK) {
        fprintf(stderr, "tool_agent: config: %s\n", ci_session_errmsg(NULL));
        goto out;
    }
    if (ci_session_new(&s, cfg) != CI_OK) {
        fprintf(stderr, "tool_agent: %s\n", ci_session_errmsg(NULL));
        goto out;
    }
    printf("the host's FX service: %s (the token stays in the host)\n", prefix);
    if (ci_session_put_file(s, "services.json", services, strlen(services)) != CI_OK) {
        fprintf(stderr, "tool_agent: %s\n", ci_session_errmsg(s));
        goto out;
    }
    rc = run_cells(s, argv[1]) == 0 ? 0 : 1;
out:
    ci_session_free(s);
    ci_config_free(cfg);
    service_stop(&sv);
    free(orders);
    return rc;
}
