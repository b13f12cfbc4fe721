/*
 * Streaming: a running cell's stdout and stderr go out as notifications
 * while it runs (notifications/message, logger "stdout" or "stderr", at
 * level info; and notifications/progress when the call carried a
 * progressToken). A cell printing in a loop hands the library thousands
 * of tiny chunks, so output goes out at once, but then no sooner than
 * FLUSH_MS later (or once FLUSH_BYTES wait): what comes meanwhile is
 * gathered, and sent by the callback or, if the cell goes quiet, by a
 * flusher thread. A switch of stream sends what
 * the other stream had first, keeping their order. The library gives
 * whole lines (ci_output_fn), and a notification too ends at a line break
 * where a line fits in one; a chunk may end inside a UTF-8 character (a
 * long line's piece, or a partial line): that tail waits for the rest.
 */
#include "mcp.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define FLUSH_MS 50
#define FLUSH_BYTES 16384
/* The most a notification's text may take, serialized: with the envelope
 * and a progressToken of MCP_MAX_ID bytes, well under the least
 * --max-result-bytes (64K). */
#define PIECE_COST 16384

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* output is due */
    json_t *token;           /* the running call's progressToken, or NULL */
    json_int_t progress;     /* notifications/progress sent for it */
    struct buf out[2];       /* waiting stdout, stderr */
    int due;                 /* out[] holds whole characters to send */
    struct timespec last;    /* when output was last sent */
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Sends stream @k's waiting text, but for an unfinished character at its
 * end unless @all, in notifications of at most PIECE_COST bytes of text
 * each (escaped: a chunk of control characters takes six times its size).
 * Under st.lock, which orders the notifications. */
static void flush(int k, int all)
{
    struct buf *b = &st.out[k];
    size_t n = all ? b->len : utf8_complete_prefix(b->data, b->len), done = 0;
    while (done < n) {
        size_t piece = json_text_fit(b->data + done, n - done, PIECE_COST);
        const char *nl;
        /* Whole lines, as the library gives them, where one fits. */
        if (piece < n - done && (nl = memrchr(b->data + done, '\n', piece)))
            piece = (size_t)(nl + 1 - (b->data + done));
        json_t *text = json_text(b->data + done, piece);
        if (!text)
            break;
        if (log_enabled(MCP_LOG_INFO))
            mcp_send_notification("notifications/message",
                                  json_pack("{s:s, s:s, s:O}", "level", "info", "logger",
                                            k ? "stderr" : "stdout", "data", text));
        if (st.token)
            mcp_send_notification("notifications/progress",
                                  json_pack("{s:O, s:I, s:O}", "progressToken", st.token,
                                            "progress", ++st.progress, "message", text));
        json_decref(text);
        done += piece;
    }
    if (done == 0)
        return;
    memmove(b->data, b->data + done, b->len - done);
    b->len -= done;
}

static void flush_both(int all)
{
    flush(0, all);
    flush(1, all);
    st.due = 0;
    clock_gettime(CLOCK_MONOTONIC, &st.last);
}

static int64_t ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

void stream_output(int stream, const char *data, size_t len, void *unused)
{
    int k = stream == CI_STREAM_STDERR;
    (void)unused;
    pthread_mutex_lock(&st.lock);
    if (st.out[!k].len > 0)
        flush(!k, 0);
    buf_add(&st.out[k], data, len);
    if (st.out[k].failed) { /* out of memory: this chunk is not streamed */
        st.out[k].failed = 0;
        st.out[k].len = 0;
    }
    st.due = 1;
    if (st.out[k].len >= FLUSH_BYTES || ms_since(&st.last) >= FLUSH_MS)
        flush_both(0);
    else
        pthread_cond_signal(&st.wake);
    pthread_mutex_unlock(&st.lock);
}

void stream_begin(const json_t *token)
{
    pthread_mutex_lock(&st.lock);
    st.token = json_incref((json_t *)token);
    st.progress = 0;
    st.last = (struct timespec){0}; /* the first output goes at once */
    pthread_mutex_unlock(&st.lock);
}

void stream_end(void)
{
    pthread_mutex_lock(&st.lock);
    flush_both(1);
    json_decref(st.token);
    st.token = NULL;
    for (int k = 0; k < 2; k++) { /* a large cell's buffers go back */
        free(st.out[k].data);
        st.out[k] = (struct buf){0};
    }
    pthread_mutex_unlock(&st.lock);
}

/* Sends output the cell left waiting when it went quiet. */
static void *flusher_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&st.lock);
    for (;;) {
        while (!st.due)
            pthread_cond_wait(&st.wake, &st.lock);
        struct timespec at = st.last;
        at.tv_nsec += FLUSH_MS * 1000000L;
        if (at.tv_nsec >= 1000000000L) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&st.wake, &st.lock, &at) == ETIMEDOUT && st.due)
            flush_both(0);
    }
    return NULL;
}

int stream_start(void)
{
    pthread_condattr_t attr;
    pthread_t t;
    if (pthread_condattr_init(&attr) != 0 ||
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&st.wake, &attr) != 0 ||
        pthread_create(&t, NULL, flusher_main, NULL) != 0)
        return -1;
    pthread_condattr_destroy(&attr);
    pthread_detach(t);
    return 0;
}
