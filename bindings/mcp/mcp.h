/*
 * codeinterp-mcp: an MCP server (Model Context Protocol, stdio transport)
 * that gives a client one codeinterp session.
 *
 * Two threads share the work:
 *  - the reader (server.c) reads stdin line by line, answers what needs
 *    no session (initialize, ping, tools/list, logging/setLevel) at once,
 *    handles cancellation, and queues tools/call requests;
 *  - the main thread (main.c) takes queued calls one at a time and runs
 *    them on the session (tools.c, run.c), which only it touches, except
 *    for ci_session_interrupt(), which the library allows from any thread.
 * A third thread (stream.c) sends a running cell's output when it goes
 * quiet. Every message out goes through mcp_send() (transport.c), one
 * whole line at a time under one lock.
 */
#ifndef CODEINTERP_MCP_H
#define CODEINTERP_MCP_H

#include <codeinterp.h>
#include <jansson.h>
#include <pthread.h>
#include <stddef.h>

#define MCP_SERVER_NAME "codeinterp-mcp"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
#define RPC_SERVER_BUSY -32000 /* implementation-defined: the queue is full */

/* How many tools/call requests may wait while one runs. */
#define MCP_QUEUE_MAX 16

/* The most JSON values (arrays, objects, and the elements and members in
 * them) one input message may hold: jansson takes some 45 times a small
 * value's text in memory, so a line of a million "[]," is refused before
 * it is parsed. MCP's own messages hold a few dozen. */
#define MCP_MAX_VALUES 10000

/* The longest string id, or progressToken, a request may carry, in bytes:
 * every answer repeats the id, and must fit --max-result-bytes. */
#define MCP_MAX_ID 1024

/* MCP's logging levels (RFC 5424 severities), least severe first. */
enum mcp_log_level { MCP_LOG_DEBUG, MCP_LOG_INFO, MCP_LOG_NOTICE, MCP_LOG_WARNING,
                     MCP_LOG_ERROR, MCP_LOG_CRITICAL, MCP_LOG_ALERT, MCP_LOG_EMERGENCY };

/* What cell runs, and what may interrupt it. */
enum running_cell { CELL_NONE, CELL_CANCELLABLE, CELL_UNTIL_SHUTDOWN };

/* A request waiting for the main thread: its line as read, parsed again
 * when it runs (parsed, a small message takes up to 45 times its size). */
struct job {
    char *line;    /* the request's text, NUL-terminated; owned by the job */
    size_t bytes;  /* its length, counted against the budget */
    json_t *id;    /* its id, to match a cancellation; owned by the job */
};

/* The server's state; one instance, `srv`, defined in main.c. */
struct server {
    /* Set once by the command line, read-only afterwards. */
    ci_config *cfg;            /* holds every limit below that is the session's */
    unsigned long timeout_ms;  /* the session's, for messages */
    ci_uint64 memory_limit;    /* the session's, for the tools' descriptions */
    ci_uint64 file_limit;      /* the session's: the largest file a cell writes */
    ci_uint64 disk_quota;      /* the session's (0: none), for restore_cap() */
    size_t output_limit;       /* the session's, for messages */
    const char *preload;       /* the session's preload list */
    int manifest;              /* a signed package manifest limits imports */
    int wheelhouse;            /* cells may %pip install the manifest's wheels */
    size_t max_message;        /* longest accepted input line, in bytes */
    size_t max_result;         /* longest output line, newline included */
    size_t max_output_chars;   /* stdout and stderr a result shows; 0: no limit */
    int html;                  /* send text/html also when there is a text form */
    int rollback;              /* --rollback, and the session has it (ci_session_rollback_active) */
    const char *urls[256];     /* --allow-url's prefixes, for run_python's description */
    size_t url_count;
    const char *snapshot_file; /* --snapshot: what save_snapshot replaces; NULL: no such tool */
    const char *restore_file;  /* --restore: the snapshot the session starts from, or NULL */

    /* Touched by the main thread only. */
    ci_session *session;       /* NULL while none could be started */

    /* Shared: everything below is under `lock`. */
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* a job was queued, or shutdown */
    struct job queue[MCP_QUEUE_MAX];
    size_t queue_head, queue_len, queue_bytes;
    json_t *running_id;        /* id of the tools/call being run, or NULL */
    int running_cell;          /* enum running_cell */
    int interrupt_pending;     /* an interrupt was asked and not yet taken */
    int cancelled;             /* running_id was cancelled by the client */
    int input_done;            /* EOF: run what is queued, then stop */
    int shutdown;              /* a signal or a write error: stop now */
    int log_level;             /* enum mcp_log_level; what notifications pass */
};

extern struct server srv;

/* transport.c: lines in, lines out. */
struct line_reader;
struct line_reader *line_reader_new(int fd, size_t max_line);
void line_reader_free(struct line_reader *lr);
/* Reads the next line into *@line (NUL-terminated, without its newline;
 * valid until the next call). Returns 1 for a line, 0 at EOF, -1 for a
 * read error; a line over the cap is skipped whole and returned as
 * *@line = NULL with *@len set to the bytes it had. */
int line_reader_next(struct line_reader *lr, char **line, size_t *len);
/* Whether bytes are buffered already, so poll(2) on the fd would lie. */
int line_reader_buffered(const struct line_reader *lr);
/* Sends @msg (stolen) as one line; 0, or -1 after a write error. A line
 * over srv.max_result is not sent: a result becomes an error saying so,
 * anything else is dropped with a note on stderr. */
int mcp_send(json_t *msg);
void mcp_send_result(const json_t *id, json_t *result);
void mcp_send_error(const json_t *id, int code, const char *message);
void mcp_send_notification(const char *method, json_t *params);

/* server.c: the reader thread and the queue. */
void *reader_main(void *unused);
/* Blocks for the next job and makes it the running call (srv.running_id);
 * NULL at shutdown, or at end of input once the queue is empty. */
struct job *queue_take(void);
void request_shutdown(const char *why);
void try_interrupt(void); /* under srv.lock: interrupt the running cell */
int log_enabled(int level);

/* tools.c: the tools' schemas and the calls. */
json_t *tools_list(void);
int tool_known(const char *name);
/* Whether @args (an object) holds only arguments @tool takes; if not,
 * @why says which one it does not. */
int tool_args_known(const char *tool, const json_t *args, char *why, size_t why_size);
/* @budget: the bytes the result's content items (serialized, with the
 * commas between them) may take; see result_budget(). */
json_t *tool_call(const char *name, json_t *args, const json_t *progress_token, size_t budget);
/* A result of one content item (stolen); @is_error sets isError. */
json_t *tool_result(json_t *content, int is_error);
json_t *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
json_t *text_content(const char *text, size_t len);
/* What is left of --max-result-bytes for the content items of a result
 * answering @id, once the envelope around them is counted. */
size_t result_budget(const json_t *id);
/* The bytes a text item {"type":"text","text":...} takes, given the
 * json_text_cost() of its text. */
#define TEXT_ITEM_COST(text_cost) (sizeof "{\"type\":\"text\",\"text\":}" - 1 + (text_cost))
/* Makes sure there is a session, and with @need_worker a live worker:
 * 0 if there was, 1 if a dead worker was replaced (its variables are
 * gone), -1 with @why when none could be started. */
int session_ensure(int need_worker, char *why, size_t why_size);
/* A fresh interpreter in the same workspace: 0, or -1 with @why. */
int session_restart(char *why, size_t why_size);

/* run.c: run_python, and running a cell as the current request's. */
json_t *run_python(json_t *args, const json_t *progress_token, size_t budget);
/* ci_run_ex() on srv.session, interrupted at shutdown and, if
 * @cancellable, when the client cancels the request. Returns as
 * ci_run_ex(), but CI_OK with *@out NULL when it was cancelled (or the
 * server is stopping) before the cell started. */
int run_cell(const char *code, const ci_run_options *opts, int cancellable, ci_result **out);
/* Around a run on srv.session that a cancellation (with @cancellable) or
 * the shutdown may interrupt, as run_cell's: cell_begin() returns 0, and
 * nothing is to run, when the call was cancelled or the server is
 * stopping; else the run follows, then cell_end(). */
int cell_begin(int cancellable);
void cell_end(void);

/* snapshot.c: --snapshot's tool, save_snapshot, and --restore's start. */
json_t *save_snapshot(size_t budget);
/* Starts srv.session from --restore's file: 0, or -1 with @why, one line
 * that names the file. */
int session_restore(char *why, size_t why_size);
/* The most bytes a --restore file may hold. */
unsigned long long restore_cap(void);

/* stream.c: a running cell's output as notifications. */
int stream_start(void); /* the flusher thread; 0 or -1 */
void stream_begin(const json_t *progress_token);
void stream_output(int stream, const char *data, size_t len, void *unused); /* ci_output_fn */
void stream_end(void); /* sends what waits; before the call's result */

/* cut.c: the head and tail of long output (see there). */
struct buf;
/* What of a text a result shows: [0, head) and [tail, len). */
struct cut {
    size_t head, tail;         /* both the text's length when it is shown whole */
    unsigned long long left;   /* characters left out, or bytes when @bytes */
    unsigned long long lines;  /* line breaks left out */
    int bytes;                 /* @left counts bytes: the library's own cut is in it */
    int library;               /* the text holds the library's line saying it cut */
    int worker_cut;            /* the worker had cut the text (CI_TRUNCATED_TEXT) */
};
/* The characters of @s, as cut_text() counts them. */
size_t text_chars(const char *s, size_t len);
/* Where to cut @s so that what is shown takes at most @max_chars
 * characters and @max_cost bytes of JSON text (SIZE_MAX: no limit).
 * @r, @stream: the result and stream (CI_STREAM_*) @s is, to count a cut
 * of the library's (ci_result_cut) in; @r NULL for other text. */
void cut_text(const char *s, size_t len, size_t max_chars, size_t max_cost, const ci_result *r,
              int stream, struct cut *c);
/* Adds the head, the line saying what was left out, and the tail. */
/* @spill: the library's spill file of the stream (NULL: none), @whole
 * whether it holds all of it (ci_result_spill_file). */
void cut_write(struct buf *b, const char *s, size_t len, const struct cut *c, const char *spill,
               int whole);
/* How many characters of stdout and of stderr a result shows (SIZE_MAX:
 * all), when they have @out_chars and @err_chars and may take @budget
 * together (0: no limit): a stream under half of it is shown whole and
 * the other gets the rest; else each gets half. */
void split_budget(size_t budget, size_t out_chars, size_t err_chars, size_t *out_cap,
                  size_t *err_cap);

/* text.c: encodings. */
char *base64_encode(const void *data, size_t len, size_t *out_len);
int base64_decode(const char *text, size_t len, void **out, size_t *out_len);
json_t *json_text(const char *data, size_t len); /* invalid UTF-8 replaced */
/* The bytes jansson writes for json_text(@data, @len), quotes included. */
size_t json_text_cost(const char *data, size_t len);
/* The longest prefix of @data whose json_text() takes at most @cost bytes
 * (quotes included), cut between characters. */
size_t json_text_fit(const char *data, size_t len, size_t cost);
/* The length in bytes of the character that starts @data (an invalid
 * byte is one character, which json_text() makes U+FFFD), and in *@cost
 * the bytes jansson writes for it. @len > 0. */
size_t utf8_next(const char *data, size_t len, size_t *cost);
/* @n in decimal with commas between thousands ("181,234"); returns @out. */
const char *fmt_count(char out[32], unsigned long long n);
/* @bytes in the largest binary unit that divides it ("2 GiB", "1536 KiB",
 * "1000 bytes"); returns @out. */
const char *fmt_size(char out[32], unsigned long long bytes);
/* The bytes @v takes serialized compactly, as mcp_send writes it. */
size_t json_cost(const json_t *v);
size_t utf8_complete_prefix(const char *data, size_t len);
int utf8_valid(const char *data, size_t len);
const char *mime_type_of(const char *name);
int mime_is_text(const char *mime);
char *file_uri(const char *dir, const char *name);

/* A growable string for building the text of a result. */
struct buf {
    char *data;
    size_t len, cap;
    int failed; /* an allocation failed; the text is cut there */
};
void buf_add(struct buf *b, const char *data, size_t len);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A file name, for a list with one a line: as is or, when it holds a
 * control character (newline, tab...) or starts with a double quote, as
 * a JSON string ("a\nb", with \n, \t, \r, \", \\ and \u00XX escapes). */
void buf_add_name(struct buf *b, const char *name);

#endif
