/*
 * codeinterp-mcp: the command line, the start, the main loop that runs
 * queued tool calls one at a time, and the end.
 *
 *     codeinterp-mcp [--timeout-ms MS] [--memory BYTES] ... (see --help)
 *     codeinterp-mcp --manifest FILE --public-key FILE [--wheelhouse DIR] ...
 *
 * It starts one session before it reads anything, so a misconfiguration
 * shows at once (exit 1, the reason on stderr). At end of input it runs
 * and answers the calls already received, then frees the session (which
 * removes its workspace) and exits 0. SIGINT, SIGTERM, SIGHUP, or stdout
 * closed end it sooner: the running cell is interrupted and the calls
 * waiting are dropped.
 */
#include "mcp.h"

#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct server srv = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    /* The session's limits: parse_options() sets every one on the config,
     * so that what the tools' descriptions say is what the session has. */
    .timeout_ms = 30000,
    .memory_limit = 2ull << 30,
    .file_limit = 1ull << 30,
    .disk_quota = 512ull << 20,
    .output_limit = 1u << 20,
    .preload = "numpy,pandas,matplotlib.pyplot",
    .max_message = 16u << 20,
    .max_result = 8u << 20,     /* under the 10 MiB a TypeScript SDK client takes */
    .max_output_chars = 20000,  /* some 5,000 tokens of a model's context */
    .log_level = MCP_LOG_DEBUG, /* every notification until setLevel */
};

static const char usage[] =
    "usage: codeinterp-mcp [OPTION]...\n"
    "An MCP server over stdio (JSON-RPC 2.0, one message a line) that gives the client\n"
    "one sandboxed, stateful Python session with the tools run_python, upload_file,\n"
    "download_file, list_files and reset (and save_snapshot, with --snapshot). Logs go\n"
    "to stderr. At end of input it answers the calls received, then exits; SIGINT or\n"
    "SIGTERM interrupt the running cell first. Either way the session's workspace is\n"
    "removed.\n"
    "\n"
    "  --timeout-ms MS          wall-clock limit of one cell, 1 to 86400000 ms; a call's\n"
    "                           timeout_ms argument overrides it (default 30000)\n"
    "  --memory BYTES           the worker's address-space limit, at least 512M\n"
    "                           (default 2G)\n"
    "  --output-limit BYTES     how much stdout, and separately stderr, a cell keeps,\n"
    "                           1K to 256M; it also caps the value's repr and the\n"
    "                           traceback (default 1M)\n"
    "  --task-limit N           the most processes and threads the worker may have at\n"
    "                           once, 16 to 65536 (default 256)\n"
    "  --disk-quota BYTES       the most the session's directory holds, 0 for none or\n"
    "                           1M or more, a tmpfs of its own where the server runs as\n"
    "                           root (default 512M)\n"
    "  --inode-quota N          the most files and directories in it, 64 to 4294967295\n"
    "                           (default 65536)\n"
    "  --workspace-root DIR     absolute directory under which the session's private\n"
    "                           directory is made (default $TMPDIR, else /tmp)\n"
    "  --preload MODULES        comma-separated modules every interpreter imports before\n"
    "                           its first cell (ci_config_set_preload), so a cell's\n"
    "                           import of them is instant; names are not bound, as in\n"
    "                           a notebook. matplotlib.pyplot is always imported\n"
    "                           (default numpy,pandas,matplotlib.pyplot); a module\n"
    "                           that fails to import stops the start.\n"
    "  --manifest FILE          a signed package manifest (codeinterp-manifest(1) makes\n"
    "                           it): every interpreter may import only the packages it\n"
    "                           lists, whose files are checked before any cell runs\n"
    "                           (ci_config_set_manifest; it needs Landlock). A manifest\n"
    "                           that cannot be read, is badly signed or does not match\n"
    "                           the installed files stops the start. Needs --public-key.\n"
    "  --public-key FILE        the public key file that must have signed the manifest\n"
    "                           (the NAME.pub of \"codeinterp-manifest keygen NAME\");\n"
    "                           only with --manifest.\n"
    "  --wheelhouse DIR         a directory of wheel files cells may install from with\n"
    "                           %pip install NAME: only the wheels the manifest lists,\n"
    "                           each checked against its SHA-256 (codeinterp-manifest\n"
    "                           create --wheelhouse DIR lists them), into the session's\n"
    "                           own site directory (ci_config_set_wheelhouse). Needs\n"
    "                           --manifest; one that is not a directory stops the\n"
    "                           start.\n"
    "  --audit-log FILE         append one JSON line for each event of the session (its\n"
    "                           start, each cell with its SHA-256, status and changed\n"
    "                           files, each file uploaded or downloaded, each HTTP\n"
    "                           request, each refusal (a system call, a path, a\n"
    "                           socket), each reset), chained by SHA-256\n"
    "                           (ci_config_set_audit_log; codeinterp-audit verify\n"
    "                           checks it). A log that\n"
    "                           cannot be opened or written stops the start; one that\n"
    "                           fails later makes run_python and upload_file fail\n"
    "                           until a reset is logged.\n"
    "  --max-message-bytes BYTES  the longest input message, 4K to 1G; a longer line is\n"
    "                           discarded and answered with an error. upload_file takes\n"
    "                           files up to about 3/4 of it, base64 being 4/3 of the\n"
    "                           bytes (default 16M: files up to about 12M)\n"
    "  --max-result-bytes BYTES  the longest output message, 64K to 1G. Figures and HTML\n"
    "                           tables that would make a run_python result longer are\n"
    "                           left out (its text says which), long text is cut, and\n"
    "                           download_file refuses a file whose base64 would not fit\n"
    "                           (default 8M: the official TypeScript SDK's stdio client\n"
    "                           drops the connection on a message over 10M)\n"
    "  --max-output-chars N     how many characters (Unicode code points) of a cell's\n"
    "                           stdout and stderr together a run_python result shows,\n"
    "                           1000 to 268435456, or 0 for no limit but\n"
    "                           --max-result-bytes. Of longer output it shows the first\n"
    "                           and the last half, with a line between them saying how\n"
    "                           much was left out (default 20000); the value and the\n"
    "                           error get half of it each, cut alike\n"
    "  --allow-url PREFIX       lets cells fetch the http or https URLs under PREFIX\n"
    "                           (scheme, host, port and path: https://api.example.com/v1/)\n"
    "                           with urllib, requests or pandas; the host makes each\n"
    "                           request (ci_config_allow_url). Repeatable; without it\n"
    "                           there is no network\n"
    "  --url-header HEADER      adds HEADER (\"Authorization: Bearer ...\") to the requests\n"
    "                           under the --allow-url before it, never shown to the\n"
    "                           cell; @FILE reads the header from the first line of FILE,\n"
    "                           which keeps a secret off the command line. Repeatable\n"
    "  --snapshot FILE          adds the tool save_snapshot, which writes the session's\n"
    "                           snapshot (its variables, functions, imports and files:\n"
    "                           ci_session_snapshot) to FILE, replacing it atomically\n"
    "                           (a new file of mode 0600 in FILE's directory, renamed\n"
    "                           over it), and says what it could not carry. The model\n"
    "                           names no path. FILE's directory must exist\n"
    "  --restore FILE           start the session from the snapshot in FILE\n"
    "                           (ci_session_restore) instead of a fresh one; FILE takes\n"
    "                           at most --memory plus --disk-quota (4G when 0) plus 16M.\n"
    "                           A file that cannot be read, or a snapshot the library\n"
    "                           refuses, stops the start. reset still starts a fresh\n"
    "                           interpreter. With --snapshot of the same FILE, the\n"
    "                           session outlives the server: each start goes on from\n"
    "                           the last save_snapshot (create FILE with a first server\n"
    "                           started with --snapshot alone)\n"
    "  --rollback               a cell that kills the Python process (os._exit, a crash,\n"
    "                           a forbidden system call, an interrupt ignored past the\n"
    "                           grace period) leaves the session as it was just before\n"
    "                           that cell instead of restarting it (ci_config_set_rollback;\n"
    "                           it needs a PID namespace, else the server starts without\n"
    "                           it and says so on stderr)\n"
    "  --html                   send a value's or display's text/html form (a\n"
    "                           DataFrame's table) also when it has a text form; by\n"
    "                           default HTML goes only when it is the only form\n"
    "  --help                   this text\n"
    "  --version                the version\n"
    "BYTES takes a suffix K, M or G (powers of 1024).\n"
    "\n"
    "Exit status: 0 after end of input or a signal, 1 if the session cannot start\n"
    "(or be restored), 2 for a bad option.\n";

/* A number of bytes with an optional K, M or G suffix; 0 if invalid. */
static unsigned long long parse_bytes(const char *s)
{
    char *end;
    if (!isdigit((unsigned char)s[0]))
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    }
    if (*end != '\0' || v > (~0ULL >> shift))
        return 0;
    return v << shift;
}

static void bad_option(const char *what, const char *value)
{
    fprintf(stderr, MCP_SERVER_NAME ": %s: %s\nTry 'codeinterp-mcp --help'.\n", what, value);
    exit(2);
}

/* out of memory: the one failure of a setter that is not the option's. */
static void check_memory(int rc)
{
    if (rc == CI_ENOMEM) {
        fprintf(stderr, MCP_SERVER_NAME ": out of memory\n");
        exit(1);
    }
}

/* --allow-url PREFIX. */
static void allow_url(const char *prefix)
{
    int rc = srv.url_count < sizeof srv.urls / sizeof *srv.urls
                 ? ci_config_allow_url(srv.cfg, prefix) : CI_ETOOBIG;
    check_memory(rc);
    if (rc != CI_OK)
        bad_option(rc == CI_ETOOBIG ? "--allow-url is given at most 256 times"
                                    : ci_session_errmsg(NULL), prefix);
    srv.urls[srv.url_count++] = prefix;
}

/* --url-header HEADER or @FILE, for the last --allow-url. */
static void url_header(const char *arg)
{
    char line[8194];
    const char *header = arg;
    int rc;

    if (srv.url_count == 0)
        bad_option("--url-header needs an --allow-url before it", "(the header given)");
    if (arg[0] == '@') {
        FILE *f = fopen(arg + 1, "re");
        if (!f || !fgets(line, sizeof line, f))
            bad_option("--url-header cannot read a header line from", arg + 1);
        fclose(f);
        line[strcspn(line, "\r\n")] = '\0';
        header = line;
    }
    rc = ci_config_set_url_header(srv.cfg, srv.urls[srv.url_count - 1], header);
    check_memory(rc);
    if (rc != CI_OK) /* the message says what is wrong, never the header itself */
        bad_option(ci_session_errmsg(NULL), arg[0] == '@' ? arg : "(the header given)");
}

/* --snapshot FILE: a file name whose directory is there, for
 * save_snapshot to make a new file in and rename over FILE. */
static void snapshot_option(const char *file)
{
    const char *slash = strrchr(file, '/');
    char dir[PATH_MAX];
    struct stat st;
    size_t len = strlen(file);
    if (len == 0 || len >= PATH_MAX || file[len - 1] == '/')
        bad_option("--snapshot takes a file name, not a directory", file);
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) + (slash == file) : 1,
             slash ? file : ".");
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        bad_option("--snapshot: the file's directory does not exist", file);
    if (stat(file, &st) == 0 && S_ISDIR(st.st_mode))
        bad_option("--snapshot takes a file name, not a directory", file);
    srv.snapshot_file = file;
}

static void parse_options(int argc, char **argv)
{
    enum { O_TIMEOUT = 256, O_MEMORY, O_OUTPUT, O_TASKS, O_DISK, O_INODES, O_ROOT, O_PRELOAD,
           O_MANIFEST, O_PUBLIC_KEY, O_WHEELHOUSE, O_AUDIT_LOG, O_MAX_MESSAGE, O_MAX_RESULT,
           O_MAX_OUTPUT_CHARS, O_HTML, O_VERSION, O_ALLOW_URL, O_URL_HEADER, O_SNAPSHOT,
           O_RESTORE, O_ROLLBACK };
    static const struct option options[] = {
        {"timeout-ms", required_argument, NULL, O_TIMEOUT},
        {"memory", required_argument, NULL, O_MEMORY},
        {"output-limit", required_argument, NULL, O_OUTPUT},
        {"task-limit", required_argument, NULL, O_TASKS},
        {"disk-quota", required_argument, NULL, O_DISK},
        {"inode-quota", required_argument, NULL, O_INODES},
        {"workspace-root", required_argument, NULL, O_ROOT},
        {"preload", required_argument, NULL, O_PRELOAD},
        {"manifest", required_argument, NULL, O_MANIFEST},
        {"public-key", required_argument, NULL, O_PUBLIC_KEY},
        {"wheelhouse", required_argument, NULL, O_WHEELHOUSE},
        {"audit-log", required_argument, NULL, O_AUDIT_LOG},
        {"max-message-bytes", required_argument, NULL, O_MAX_MESSAGE},
        {"max-result-bytes", required_argument, NULL, O_MAX_RESULT},
        {"max-output-chars", required_argument, NULL, O_MAX_OUTPUT_CHARS},
        {"html", no_argument, NULL, O_HTML},
        {"rollback", no_argument, NULL, O_ROLLBACK},
        {"snapshot", required_argument, NULL, O_SNAPSHOT},
        {"restore", required_argument, NULL, O_RESTORE},
        {"allow-url", required_argument, NULL, O_ALLOW_URL},
        {"url-header", required_argument, NULL, O_URL_HEADER},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    const char *manifest = NULL, *public_key = NULL, *wheelhouse = NULL;
    int opt;
    if (!(srv.cfg = ci_config_new())) {
        fprintf(stderr, MCP_SERVER_NAME ": out of memory\n");
        exit(1);
    }
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        unsigned long long v = optarg ? parse_bytes(optarg) : 0;
        switch (opt) {
        case O_TIMEOUT: /* a plain number of milliseconds: no suffix */
            if (!optarg[0] || !isdigit((unsigned char)optarg[strlen(optarg) - 1]) || v > 86400000 ||
                ci_config_set_timeout_ms(srv.cfg, (unsigned long)v) != CI_OK)
                bad_option("--timeout-ms takes 1 to 86400000 milliseconds", optarg);
            srv.timeout_ms = (unsigned long)v;
            break;
        case O_MEMORY:
            if (ci_config_set_memory_limit(srv.cfg, v) != CI_OK || v == 0)
                bad_option("--memory takes at least 512M bytes", optarg);
            srv.memory_limit = v;
            break;
        case O_OUTPUT:
            if (v > (1u << 28) || ci_config_set_output_limit(srv.cfg, (size_t)v) != CI_OK)
                bad_option("--output-limit takes 1K to 256M bytes", optarg);
            srv.output_limit = (size_t)v;
            break;
        case O_TASKS: /* a plain number of tasks: no suffix */
            if (!optarg[0] || !isdigit((unsigned char)optarg[strlen(optarg) - 1]) ||
                v > 65536 || ci_config_set_task_limit(srv.cfg, (unsigned long)v) != CI_OK)
                bad_option("--task-limit takes 16 to 65536 tasks", optarg);
            break;
        case O_DISK:
            if ((v == 0 && strspn(optarg, "0") != strlen(optarg)) ||
                ci_config_set_disk_quota(srv.cfg, v) != CI_OK)
                bad_option("--disk-quota takes 0, or 1M bytes or more", optarg);
            srv.disk_quota = v;
            break;
        case O_INODES: /* a plain number of inodes: no suffix */
            if (!optarg[0] || !isdigit((unsigned char)optarg[strlen(optarg) - 1]) ||
                ci_config_set_inode_quota(srv.cfg, v) != CI_OK)
                bad_option("--inode-quota takes 64 to 4294967295 inodes", optarg);
            break;
        case O_ROOT:
            if (ci_config_set_workspace_root(srv.cfg, optarg) != CI_OK)
                bad_option("--workspace-root takes an absolute directory", optarg);
            break;
        case O_PRELOAD:
            if (ci_config_set_preload(srv.cfg, optarg) != CI_OK)
                bad_option("--preload takes module names separated by commas", optarg);
            srv.preload = optarg;
            break;
        case O_MANIFEST:
            manifest = optarg;
            break;
        case O_PUBLIC_KEY:
            public_key = optarg;
            break;
        case O_WHEELHOUSE:
            wheelhouse = optarg;
            break;
        case O_AUDIT_LOG:
            if (ci_config_set_audit_log(srv.cfg, optarg) != CI_OK)
                bad_option("--audit-log takes a file name", optarg);
            break;
        case O_MAX_MESSAGE:
            if (v < 4096 || v > (1u << 30))
                bad_option("--max-message-bytes takes 4K to 1G bytes", optarg);
            srv.max_message = (size_t)v;
            break;
        case O_MAX_RESULT:
            if (v < (64u << 10) || v > (1u << 30))
                bad_option("--max-result-bytes takes 64K to 1G bytes", optarg);
            srv.max_result = (size_t)v;
            break;
        case O_MAX_OUTPUT_CHARS: /* a plain number of characters: no suffix */
            if (!optarg[0] || !isdigit((unsigned char)optarg[strlen(optarg) - 1]) ||
                (v == 0 ? strspn(optarg, "0") != strlen(optarg) : v < 1000 || v > (1u << 28)))
                bad_option("--max-output-chars takes 0, or 1000 to 268435456 characters", optarg);
            srv.max_output_chars = (size_t)v;
            break;
        case O_HTML:
            srv.html = 1;
            break;
        case O_ROLLBACK:
            ci_config_set_rollback(srv.cfg, 1); /* CI_OK: both arguments are valid */
            srv.rollback = 1;
            break;
        case O_SNAPSHOT:
            snapshot_option(optarg);
            break;
        case O_RESTORE:
            if (!optarg[0])
                bad_option("--restore takes a snapshot file", optarg);
            srv.restore_file = optarg;
            break;
        case O_ALLOW_URL:
            allow_url(optarg);
            break;
        case O_URL_HEADER:
            url_header(optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            exit(0);
        case O_VERSION:
            printf(MCP_SERVER_NAME " %s\n", ci_version());
            exit(0);
        default:
            fprintf(stderr, "Try 'codeinterp-mcp --help'.\n");
            exit(2);
        }
    }
    if (optind < argc)
        bad_option("unexpected argument", argv[optind]);
    /* The limits the tools' descriptions name, set whether or not an
     * option changed them (the options' values were checked above). */
    if (ci_config_set_timeout_ms(srv.cfg, srv.timeout_ms) != CI_OK ||
        ci_config_set_memory_limit(srv.cfg, srv.memory_limit) != CI_OK ||
        ci_config_set_file_limit(srv.cfg, srv.file_limit) != CI_OK ||
        ci_config_set_disk_quota(srv.cfg, srv.disk_quota) != CI_OK ||
        ci_config_set_output_limit(srv.cfg, srv.output_limit) != CI_OK ||
        ci_config_set_preload(srv.cfg, srv.preload) != CI_OK) {
        fprintf(stderr, MCP_SERVER_NAME ": out of memory\n");
        exit(1);
    }
    /* Both or neither; the files are read when the session starts. */
    if (manifest && !public_key)
        bad_option("--manifest needs --public-key", manifest);
    if (public_key && !manifest)
        bad_option("--public-key needs --manifest", public_key);
    srv.manifest = manifest != NULL;
    if (manifest) {
        int rc = ci_config_set_manifest(srv.cfg, manifest, public_key);
        if (rc == CI_ENOMEM) {
            fprintf(stderr, MCP_SERVER_NAME ": out of memory\n");
            exit(1);
        }
        if (rc != CI_OK)
            bad_option("--manifest and --public-key take files (paths of 1 to 4096 bytes)",
                       !manifest[0] || strlen(manifest) > 4096 ? manifest : public_key);
    }
    /* The library refuses a wheelhouse without a manifest when the session
     * starts (CI_EMANIFEST); say so as the option it is. The directory is
     * looked at then. */
    if (wheelhouse && !manifest)
        bad_option("--wheelhouse needs --manifest (a signed package manifest that lists its "
                   "wheels: codeinterp-manifest create --wheelhouse DIR)", wheelhouse);
    srv.wheelhouse = wheelhouse != NULL;
    if (wheelhouse) {
        int rc = ci_config_set_wheelhouse(srv.cfg, wheelhouse);
        check_memory(rc);
        if (rc != CI_OK)
            bad_option("--wheelhouse takes a directory (a path of 1 to 4096 bytes)", wheelhouse);
    }
}

/* --rollback, once the session started (before the reader thread reads
 * srv.rollback): the start line's ending, and srv.rollback cleared where
 * the session could not have it, so that run_python's description only
 * promises what is there. */
static const char *rollback_note(void)
{
    if (ci_session_rollback_active(srv.session))
        return ", rollback on";
    srv.rollback = 0;
    return "; --rollback is not in effect: it needs a worker in a PID namespace of its own "
           "(ci_session_rollback_active), and a cell that kills the worker restarts the "
           "interpreter";
}

/* Turns SIGINT, SIGTERM and SIGHUP into an orderly shutdown. */
static void *signal_main(void *set)
{
    int sig;
    if (sigwait(set, &sig) == 0) {
        char why[32];
        snprintf(why, sizeof why, "signal %d (%s)", sig, sig == SIGTERM ? "SIGTERM" :
                 sig == SIGINT ? "SIGINT" : "SIGHUP");
        request_shutdown(why);
    }
    return NULL;
}

/* Runs one queued tools/call (queue_take made it the running one) and
 * answers it. */
static void run_job(struct job *j)
{
    /* The reader parsed it once already: this fails only for memory. */
    json_t *msg = json_loadb(j->line, j->bytes, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    const json_t *id = j->id;
    const json_t *params = json_object_get(msg, "params");
    const json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
    if (token && !json_is_string(token) && !json_is_integer(token))
        token = NULL;
    free(j->line);
    j->line = NULL;

    json_t *result = msg ? tool_call(json_string_value(json_object_get(params, "name")),
                                     json_object_get(params, "arguments"), token,
                                     result_budget(id))
                         : NULL;

    pthread_mutex_lock(&srv.lock);
    int cancelled = srv.cancelled;
    json_decref(srv.running_id);
    srv.running_id = NULL;
    srv.cancelled = 0;
    srv.interrupt_pending = srv.shutdown; /* a late cancel must not hit the next call */
    pthread_mutex_unlock(&srv.lock);
    /* MCP: the receiver of a cancellation SHOULD NOT answer the request. */
    if (cancelled)
        json_decref(result);
    else
        mcp_send_result(id, result);
    json_decref(msg);
    json_decref(j->id);
}

int main(int argc, char **argv)
{
    static sigset_t stop_signals;
    pthread_t reader, signals;
    char why[1024];
    struct job *j;

    signal(SIGPIPE, SIG_IGN); /* a closed stdout is a write error, not death */
    parse_options(argc, argv);

    /* Only the signal thread takes these; the others inherit the mask. */
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    if (pthread_create(&signals, NULL, signal_main, &stop_signals) != 0) {
        fprintf(stderr, MCP_SERVER_NAME ": cannot start a thread\n");
        return 1;
    }
    pthread_detach(signals);
    if (stream_start() < 0) {
        fprintf(stderr, MCP_SERVER_NAME ": cannot start a thread\n");
        return 1;
    }

    if ((srv.restore_file ? session_restore(why, sizeof why)
                          : session_ensure(1, why, sizeof why)) < 0) {
        fprintf(stderr, MCP_SERVER_NAME ": %s\n", why);
        ci_session_free(srv.session);
        return 1;
    }
    fprintf(stderr, MCP_SERVER_NAME " %s: session %s%s, worker pid %d, workspace %s%s\n",
            ci_version(), srv.restore_file ? "restored from " : "ready",
            srv.restore_file ? srv.restore_file : "", ci_session_pid(srv.session),
            ci_session_workspace(srv.session), srv.rollback ? rollback_note() : "");

    if (pthread_create(&reader, NULL, reader_main, NULL) != 0) {
        fprintf(stderr, MCP_SERVER_NAME ": cannot start a thread\n");
        ci_session_free(srv.session);
        return 1;
    }
    pthread_detach(reader);

    while ((j = queue_take()))
        run_job(j);

    /* Shutdown: drop what waits, then the session and its workspace. The
     * reader may still be blocked in read(2); exit ends it. */
    pthread_mutex_lock(&srv.lock);
    ci_session *s = srv.session;
    srv.session = NULL;
    for (; srv.queue_len > 0; srv.queue_len--) {
        free(srv.queue[srv.queue_head].line);
        json_decref(srv.queue[srv.queue_head].id);
        srv.queue_head = (srv.queue_head + 1) % MCP_QUEUE_MAX;
    }
    pthread_mutex_unlock(&srv.lock);
    ci_session_free(s);
    ci_config_free(srv.cfg);
    return 0;
}
