/*
 * The network, always to listeners the test opens itself on loopback:
 * TCP and UDP on 127.0.0.1 and ::1, a resolve-then-connect, a DNS query
 * sent by hand, urllib, unix sockets by path and in the abstract
 * namespace, a socket made by raw system call; and the kernel's own
 * families, netlink and packet sockets. After each attack the host polls
 * its listener briefly: it must have seen no connection and no datagram.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "attack.h"

#define NET_ERRORS                                                            \
    "PermissionError|OSError|ConnectionRefusedError|ConnectionResetError|"   \
    "TimeoutError|BlockingIOError|gaierror|URLError|FileNotFoundError"

struct listener {
    const char *name;
    int fd;   /* -1 when this machine cannot have it (no ::1) */
    int port; /* for inet ones */
    int stream;
};

enum { TCP4, TCP6, UDP4, UDP6, DNS4, HTTP4, UNIXPATH, ABSTRACT, N_LISTENERS };
static struct listener L[N_LISTENERS] = {
    [TCP4] = {"tcp 127.0.0.1", -1, 0, 1},  [TCP6] = {"tcp ::1", -1, 0, 1},
    [UDP4] = {"udp 127.0.0.1", -1, 0, 0},  [UDP6] = {"udp ::1", -1, 0, 0},
    [DNS4] = {"dns 127.0.0.1", -1, 0, 0},  [HTTP4] = {"http 127.0.0.1", -1, 0, 1},
    [UNIXPATH] = {"unix path", -1, 0, 1},  [ABSTRACT] = {"unix abstract", -1, 0, 1},
};

static ci_session *S;
static char *dir;       /* test-owned, 0755, holds the unix socket */
static char *sock_path;
static char abstract_name[64];

/* Binds an inet listener on loopback @v6 ? ::1 : 127.0.0.1. */
static int inet_listener(struct listener *l, int v6)
{
    int fd = socket(v6 ? AF_INET6 : AF_INET, (l->stream ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK,
                    0);
    if (fd < 0)
        return v6 ? 0 : -1;
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || (l->stream && listen(fd, 16) != 0) ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        close(fd);
        return v6 ? 0 : -1; /* no ::1 here: its tests skip */
    }
    l->port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    l->fd = fd;
    return 0;
}

static int unix_listener(struct listener *l, const char *path, int abstract)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    socklen_t len;
    if (abstract) {
        memcpy(a.sun_path + 1, path, strlen(path)); /* sun_path[0] is NUL */
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
    } else {
        snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
        len = sizeof a;
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, 16) != 0)
        return -1;
    /* Connecting needs write permission on the socket: anyone may. */
    if (!abstract && chmod(path, 0777) != 0)
        return -1;
    l->fd = fd;
    return 0;
}

static int group_setup(void **state)
{
    dir = a_tmpdir(0755);
    sock_path = h_fmt("%s/listener.sock", dir);
    snprintf(abstract_name, sizeof abstract_name, "ci-attack-%d-", (int)getpid());
    a_random_hex(abstract_name + strlen(abstract_name), 6);
    if (inet_listener(&L[TCP4], 0) || inet_listener(&L[TCP6], 1) || inet_listener(&L[UDP4], 0) ||
        inet_listener(&L[UDP6], 1) || inet_listener(&L[DNS4], 0) || inet_listener(&L[HTTP4], 0) ||
        unix_listener(&L[UNIXPATH], sock_path, 0) || unix_listener(&L[ABSTRACT], abstract_name, 1)) {
        fprintf(stderr, "network setup: cannot open the test's listeners: %s\n", strerror(errno));
        return -1;
    }
    return a_group_session(&S, &(struct h_limits){.timeout_ms = 10000, .grace_ms = 500});
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    for (int i = 0; i < N_LISTENERS; i++)
        if (L[i].fd >= 0)
            close(L[i].fd);
    h_rmtree(dir);
    free(sock_path);
    free(dir);
    return 0;
}

/* Empties every listener, so one attack that got through does not fail
 * the tests after it. */
static int teardown(void **state)
{
    for (int i = 0; i < N_LISTENERS; i++) {
        char buf[512];
        int fd;
        if (L[i].fd < 0)
            continue;
        if (L[i].stream)
            while ((fd = accept(L[i].fd, NULL, NULL)) >= 0)
                close(fd);
        else
            while (recv(L[i].fd, buf, sizeof buf, MSG_DONTWAIT) >= 0)
                ;
    }
    return a_teardown(state);
}

/* Skips the test when the machine has no such listener (no ::1). */
#define need(which) need_(__func__, (which))
static void need_(const char *test, int which)
{
    if (L[which].fd < 0)
        h_skip_because_(test, "no %s listener could be made on this machine", L[which].name);
}

/* Asserts listener @which saw nothing within a short wait. */
static void assert_no_contact(int which)
{
    struct listener *l = &L[which];
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    if (poll(&p, 1, 300) > 0) {
        char buf[256] = "";
        if (l->stream) {
            int c = accept(l->fd, NULL, NULL);
            if (c >= 0) {
                ssize_t n = recv(c, buf, sizeof buf - 1, MSG_DONTWAIT);
                buf[n > 0 ? n : 0] = '\0';
                close(c);
            }
            fail_msg("ATTACK SUCCEEDED: the %s listener accepted a connection (\"%.60s\")",
                     l->name, buf);
        }
        ssize_t n = recv(l->fd, buf, sizeof buf - 1, MSG_DONTWAIT);
        fail_msg("ATTACK SUCCEEDED: the %s listener received a %zd-byte datagram", l->name, n);
    }
}

/* Runs @cell (a format with the port as %d) against listener @which. */
static void attack(int which, const char *cell)
{
    need(which);
    a_cell = h_fmt(cell, L[which].port);
    a_stopped(S, a_cell, NET_ERRORS);
    assert_no_contact(which);
}

/* attack() of the cell @name, after the cell @first (NULL: none) and a
 * line PORT = <the port of listener @which>. */
static void attack_cell(int which, const char *first, const char *name)
{
    need(which);
    char *cell = first ? h_cells(first, name) : h_cell(name);
    a_cell = h_fmt("PORT = %d\n%s", L[which].port, cell);
    free(cell);
    a_stopped(S, a_cell, NET_ERRORS);
    assert_no_contact(which);
}

/* ------------------------------------------------------------ inet */

static void test_tcp_to_127_0_0_1(void **state)
{
    attack(TCP4, "import socket\n"
                 "s = socket.create_connection(('127.0.0.1', %d), timeout=2)\n"
                 "s.sendall(b'exfiltrated')");
}

static void test_tcp_to_ipv6_loopback(void **state)
{
    attack(TCP6, "import socket\n"
                 "s = socket.create_connection(('::1', %d), timeout=2)\n"
                 "s.sendall(b'exfiltrated')");
}

static void test_udp_to_127_0_0_1(void **state)
{
    attack(UDP4, "import socket\n"
                 "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                 "s.sendto(b'exfiltrated', ('127.0.0.1', %d))");
}

static void test_udp_to_ipv6_loopback(void **state)
{
    attack(UDP6, "import socket\n"
                 "s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\n"
                 "s.sendto(b'exfiltrated', ('::1', %d))");
}

/*
 * The cell network_no_route_to_resolver stops a cell before a name lookup
 * could leave the machine: the resolver in /etc/resolv.conf is not a
 * listener of the test's, so if the worker has a route to it (a UDP
 * connect sends nothing, it only picks a route), the cell raises RouteOut
 * instead of looking up, and the test fails without a packet sent. A
 * worker that cannot read the file makes glibc ask 127.0.0.1, which is
 * loopback.
 */

static void test_resolve_localhost_then_connect(void **state)
{
    /* Resolving 'localhost' may work from /etc/hosts; the connection to
     * what it resolves to must not. (Without /etc/hosts, glibc would ask
     * the resolver: the guard first.) */
    attack_cell(TCP4, "network_no_route_to_resolver", "network_resolve_localhost_then_connect");
}

static void test_resolve_a_name_through_dns(void **state)
{
    /* A name no hosts file has: resolving it means a query left the
     * worker. The machine's resolver is out of the test's sight (the next
     * test sends a query where the test can see it), so the cell first
     * makes sure no query could reach it. */
    char name[64];
    a_secret_text(name, sizeof name, "ci-attack-", 6);
    char *tail = h_fmt("socket.getaddrinfo('%s.invalid', 80)", name);
    a_cell = h_cell_then("network_no_route_to_resolver", tail);
    free(tail);
    a_stopped(S, a_cell, NET_ERRORS);
}

static void test_dns_query_by_hand_to_the_tests_resolver(void **state)
{
    /* A standard query for example.com, sent to a "resolver" the test
     * runs, as a cell would to its own DNS server to exfiltrate. */
    attack_cell(DNS4, NULL, "network_dns_query_by_hand");
}

static void test_urlopen_of_a_local_http_server(void **state)
{
    attack(HTTP4, "import urllib.request\n"
                  "urllib.request.urlopen('http://127.0.0.1:%d/exfiltrate', timeout=2).read()");
}

static void test_raw_socket_syscall_then_connect(void **state)
{
    /* socket(2) and connect(2) by number, past the socket module. */
    attack_cell(TCP4, "sc", "network_raw_socket_syscall_then_connect");
}

/* ------------------------------------------------------------ unix */

static void test_unix_socket_by_path(void **state)
{
    need(UNIXPATH);
    char *lit = a_pystr(sock_path);
    char *cell = h_cell("network_unix_socket_by_path");
    a_cell = h_fmt("SOCK_PATH = %s\n%s", lit, cell);
    free(cell);
    a_stopped(S, a_cell, NET_ERRORS);
    assert_no_contact(UNIXPATH);
    free(lit);
}

static void test_unix_socket_in_the_abstract_namespace(void **state)
{
    need(ABSTRACT);
    char *cell = h_cell("network_unix_socket_abstract");
    a_cell = h_fmt("ABSTRACT = '\\0%s'\n%s", abstract_name, cell);
    free(cell);
    a_stopped(S, a_cell, NET_ERRORS);
    assert_no_contact(ABSTRACT);
}

/* ------------------------------------------------ the kernel's families */

static void test_netlink_route_dump(void **state)
{
    /* RTM_GETLINK dump: the machine's interfaces; with it, RTM_NEWADDR
     * and friends would follow. */
    a_cell = h_cell("network_netlink_route_dump");
    a_stopped(S,
              a_cell, NET_ERRORS);
}

static void test_packet_socket_sniffs_the_wire(void **state)
{
    a_cell = h_cell("network_packet_socket");
    a_stopped(S,
              a_cell, NET_ERRORS);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
#define T(f) cmocka_unit_test_setup_teardown(f, a_setup_alive, teardown)
    const struct CMUnitTest tests[] = {
        T(test_tcp_to_127_0_0_1),
        T(test_tcp_to_ipv6_loopback),
        T(test_udp_to_127_0_0_1),
        T(test_udp_to_ipv6_loopback),
        T(test_resolve_localhost_then_connect),
        T(test_resolve_a_name_through_dns),
        T(test_dns_query_by_hand_to_the_tests_resolver),
        T(test_urlopen_of_a_local_http_server),
        T(test_raw_socket_syscall_then_connect),
        T(test_unix_socket_by_path),
        T(test_unix_socket_in_the_abstract_namespace),
        T(test_netlink_route_dump),
        T(test_packet_socket_sniffs_the_wire),
    };
#undef T
    return cmocka_run_group_tests_name("attacks: network", tests, group_setup, group_teardown);
}
