/*
 * The host against a hostile worker. This program is its own fake worker:
 * started as codeinterp-worker (argv[1] == "--parent", through
 * $CODEINTERP_WORKER), it speaks the protocol badly in the way the cell's
 * source names. Each case checks that the host gives a clear status within
 * the run's deadline, keeps its memory bounded, and can restart.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fake_worker.h"
#include "helpers.h"
#include "proto.h"

/* ------------------------------------------------------------ the fake */

static uint32_t run_count; /* the execution count of the RUN being answered */

/* The two fields every RESULT needs: the echoed count and the outcome. */
static size_t outcome(unsigned char *buf, size_t at, uint32_t o)
{
    at = fw_field(buf, at, CI_FIELD_COUNT, &run_count, 4);
    return fw_field(buf, at, CI_FIELD_OUTCOME, &o, 4);
}

/* Appends an output without flags or display id to @buf at @at; returns
 * the new end. */
static size_t output(unsigned char *buf, size_t at, uint32_t type, uint32_t message,
                     const char *mime, uint32_t mime_len, const void *data, uint32_t len)
{
    return fw_output(buf, at, type, message, 0, "", 0, mime, mime_len, data, len);
}

/* The PNG of the well-formed case: binary, with NUL bytes. */
static const unsigned char fake_png[] = "\x89PNG\r\n\x1a\n"
                                        "\0\0\0\rIHDR\0\0\0\x07\0\0\0\x05\x08\x02\0\0\0";
#define FAKE_PNG_LEN (sizeof fake_png - 1)

/* Answers an "out-..." cell: a RESULT with an OUTPUTS (and OMITTED) field
 * built as the mode says, most of them broken in one way. The sessions of
 * these cases have display limits of 1024 bytes per output and 4096 per
 * run, except the "out-10000" and "out-10001" ones. */
static void fake_outputs(const char *mode)
{
    static unsigned char outs[1 << 19], res[(1 << 19) + 256];
    static unsigned char big[1100];
    size_t o = 0, n;
    uint32_t t1 = CI_OUTPUT_DISPLAY_DATA, t2 = CI_OUTPUT_EXECUTE_RESULT;
    uint32_t t3 = CI_OUTPUT_UPDATE_DISPLAY_DATA, t4 = CI_OUTPUT_CLEAR_OUTPUT;
    uint32_t wait = CI_OUTPUT_FLAG_WAIT;
    char mime[200], id[CI_DISPLAY_ID_MAX + 2];
    memset(big, 0xAB, sizeof big);
    memset(id, 'i', sizeof id);

    if (!strcmp(mode, "out-good")) {
        o = output(outs, o, t1, 0, "image/png", 9, fake_png, FAKE_PNG_LEN);
        o = output(outs, o, t2, 1, "text/html", 9, "<b>\xc3\xa9</b>", 9);
    } else if (!strcmp(mode, "out-jupyter")) {
        /* display(HTML, display_id='d1'); h.update('b'); clear_output(wait=True);
         * display('c'); clear_output(); a DataFrame as the value. */
        o = fw_output(outs, o, t1, 0, 0, "d1", 2, "text/html", 9, "<b>a</b>", 8);
        o = fw_output(outs, o, t1, 0, 0, "d1", 2, "text/plain", 10, "'a'", 3);
        o = fw_output(outs, o, t3, 1, 0, "d1", 2, "text/plain", 10, "'b'", 3);
        o = fw_output(outs, o, t4, 2, wait, "", 0, "", 0, "", 0);
        o = fw_output(outs, o, t1, 3, 0, "\xc3\xa9", 2, "text/plain", 10, "'c'", 3);
        o = fw_output(outs, o, t4, 4, 0, "", 0, "", 0, "", 0);
        o = output(outs, o, t2, 5, "text/html", 9, "<table/>", 8);
    } else if (!strcmp(mode, "out-type-0")) {
        o = output(outs, o, 0, 0, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-type-5")) {
        o = output(outs, o, 5, 0, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-update-without-id")) {
        o = output(outs, o, t3, 0, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-id-on-execute-result")) {
        o = fw_output(outs, o, t2, 0, 0, "d", 1, "text/html", 9, "x", 1);
    } else if (!strcmp(mode, "out-id-on-clear")) {
        o = fw_output(outs, o, t4, 0, 0, "d", 1, "", 0, "", 0);
    } else if (!strcmp(mode, "out-wait-on-display")) {
        o = fw_output(outs, o, t1, 0, wait, "", 0, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-unknown-flag")) {
        o = fw_output(outs, o, t4, 0, 2, "", 0, "", 0, "", 0);
    } else if (!strcmp(mode, "out-id-nul")) {
        o = fw_output(outs, o, t1, 0, 0, "d\0e", 3, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-id-bad-utf8")) {
        o = fw_output(outs, o, t3, 0, 0, "\xed\xa0\x80", 3, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-id-255") || !strcmp(mode, "out-id-256")) {
        uint32_t len = !strcmp(mode, "out-id-255") ? CI_DISPLAY_ID_MAX : CI_DISPLAY_ID_MAX + 1;
        o = fw_output(outs, o, t3, 0, 0, id, len, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-mixed-types")) {
        o = fw_output(outs, o, t1, 0, 0, "d", 1, "text/html", 9, "x", 1);
        o = fw_output(outs, o, t3, 0, 0, "d", 1, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-mixed-ids")) {
        o = fw_output(outs, o, t1, 0, 0, "d", 1, "text/html", 9, "x", 1);
        o = fw_output(outs, o, t1, 0, 0, "e", 1, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-clear-twice-in-a-message")) {
        o = fw_output(outs, o, t4, 0, 0, "", 0, "", 0, "", 0);
        o = fw_output(outs, o, t4, 0, 0, "", 0, "", 0, "", 0);
    } else if (!strcmp(mode, "out-clear-with-data")) {
        o = fw_output(outs, o, t4, 0, wait, "", 0, "", 0, "x", 1);
    } else if (!strcmp(mode, "out-clear-with-mime")) {
        o = fw_output(outs, o, t4, 0, 0, "", 0, "text/plain", 10, "", 0);
    } else if (!strcmp(mode, "out-id-past-field")) {
        o = fw_output(outs, o, t1, 0, 0, "d", 1, "text/plain", 10, "x", 1);
        uint32_t lie = 100;
        memcpy(outs + 12, &lie, 4);
    } else if (!strcmp(mode, "out-first-message-1")) {
        o = output(outs, o, t1, 1, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-message-skips")) {
        o = output(outs, o, t1, 0, "text/plain", 10, "x", 1);
        o = output(outs, o, t1, 2, "text/plain", 10, "y", 1);
    } else if (!strcmp(mode, "out-message-goes-down")) {
        o = output(outs, o, t1, 0, "text/plain", 10, "x", 1);
        o = output(outs, o, t1, 1, "text/plain", 10, "y", 1);
        o = output(outs, o, t1, 0, "text/plain", 10, "z", 1);
    } else if (!strcmp(mode, "out-mime-empty")) {
        o = output(outs, o, t1, 0, "", 0, "x", 1);
    } else if (!strcmp(mode, "out-mime-127") || !strcmp(mode, "out-mime-128")) {
        uint32_t len = !strcmp(mode, "out-mime-127") ? 127 : 128;
        memcpy(mime, "application/", 12);
        memset(mime + 12, 'x', len - 12);
        o = output(outs, o, t1, 0, mime, len, "\xff\0", 2);
    } else if (!strcmp(mode, "out-mime-no-slash")) {
        o = output(outs, o, t1, 0, "imagepng", 8, "x", 1);
    } else if (!strcmp(mode, "out-mime-no-subtype")) {
        o = output(outs, o, t1, 0, "image/", 6, "x", 1);
    } else if (!strcmp(mode, "out-mime-no-type")) {
        o = output(outs, o, t1, 0, "/png", 4, "x", 1);
    } else if (!strcmp(mode, "out-mime-two-slashes")) {
        o = output(outs, o, t1, 0, "image/png/x", 11, "x", 1);
    } else if (!strcmp(mode, "out-mime-space")) {
        o = output(outs, o, t1, 0, "image/p ng", 10, "x", 1);
    } else if (!strcmp(mode, "out-mime-nul")) {
        o = output(outs, o, t1, 0, "image/p\0ng", 10, "x", 1);
    } else if (!strcmp(mode, "out-mime-non-ascii")) {
        o = output(outs, o, t1, 0, "image/p\xc3\xa9", 9, "x", 1);
    } else if (!strcmp(mode, "out-data-past-field")) {
        o = output(outs, o, t1, 0, "image/png", 9, "0123456789", 10);
        uint32_t lie = 100;
        memcpy(outs + 20, &lie, 4);
    } else if (!strcmp(mode, "out-mime-past-field")) {
        o = output(outs, o, t1, 0, "image/png", 9, "", 0);
        uint32_t lie = 100;
        memcpy(outs + 16, &lie, 4);
    } else if (!strcmp(mode, "out-header-past-field")) {
        o = output(outs, o, t1, 0, "image/png", 9, "x", 1);
        o = 10; /* the field ends inside the output's header */
    } else if (!strcmp(mode, "out-html-bad-utf8")) {
        o = output(outs, o, t1, 0, "text/html", 9, "<b>\xc0\xaf</b>", 9);
    } else if (!strcmp(mode, "out-html-nul")) {
        o = output(outs, o, t1, 0, "text/html", 9, "<b>\0</b>", 8);
    } else if (!strcmp(mode, "out-json-bad-utf8")) {
        o = output(outs, o, t1, 0, "application/json", 16, "\"\xff\"", 3);
    } else if (!strcmp(mode, "out-svg-nul")) {
        o = output(outs, o, t1, 0, "image/svg+xml", 13, "<svg>\0</svg>", 12);
    } else if (!strcmp(mode, "out-at-output-limit")) {
        o = output(outs, o, t1, 0, "image/png", 9, big, 1024);
    } else if (!strcmp(mode, "out-over-output-limit")) {
        o = output(outs, o, t1, 0, "image/png", 9, big, 1025);
    } else if (!strcmp(mode, "out-at-run-limit") || !strcmp(mode, "out-over-run-limit")) {
        /* Four outputs of 1024 bytes: 4096. Over: one byte more. */
        for (uint32_t i = 0; i < 4; i++)
            o = output(outs, o, t1, i, "image/png", 9, big, 1024);
        if (!strcmp(mode, "out-over-run-limit"))
            o = output(outs, o, t1, 4, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-10000") || !strcmp(mode, "out-10001")) {
        uint32_t count = !strcmp(mode, "out-10000") ? 10000 : 10001;
        for (uint32_t i = 0; i < count; i++)
            o = output(outs, o, t1, i, "text/plain", 10, "x", 1);
    } else if (!strcmp(mode, "out-omitted") || !strncmp(mode, "out-omitted-", 12) ||
               !strcmp(mode, "out-repeated")) {
        o = output(outs, o, t1, 0, "text/plain", 10, "x", 1);
    } else {
        _exit(94);
    }

    /* OUTPUTS before VALUE: a length that runs past the OUTPUTS field
     * still lands inside the frame, so only the field's bound catches it. */
    n = outcome(res, 0, CI_OUTCOME_OK);
    n = fw_field(res, n, CI_FIELD_OUTPUTS, outs, (uint32_t)o);
    memset(mime, 'v', sizeof mime);
    n = fw_field(res, n, CI_FIELD_VALUE, mime, strstr(mode, "past-field") ? sizeof mime : 1);
    if (!strcmp(mode, "out-repeated"))
        n = fw_field(res, n, CI_FIELD_OUTPUTS, outs, (uint32_t)o);
    if (!strcmp(mode, "out-omitted")) {
        uint32_t omitted = 3;
        n = fw_field(res, n, CI_FIELD_OMITTED, &omitted, 4);
    } else if (!strcmp(mode, "out-omitted-short")) {
        n = fw_field(res, n, CI_FIELD_OMITTED, "\3\0", 2);
    } else if (!strcmp(mode, "out-omitted-long")) {
        uint64_t omitted = 3;
        n = fw_field(res, n, CI_FIELD_OMITTED, &omitted, 8);
    } else if (!strcmp(mode, "out-omitted-empty")) {
        n = fw_field(res, n, CI_FIELD_OMITTED, "", 0);
    }
    fw_frame(CI_FRAME_RESULT, res, (uint32_t)n);
}

/* Answers an "input-..." cell: an INPUT_REQUEST built as the mode says,
 * most of them broken in one way; for a well-formed one, the RUN's flags
 * and the reply's status and text are the cell's value. */
static void fake_input(const char *mode, uint32_t run_flags)
{
    static unsigned char req[2 * (8 + 4 + CI_INPUT_PROMPT_MAX + 1)], res[256];
    static char prompt[CI_INPUT_PROMPT_MAX + 1], text[64];
    uint32_t flags = !strcmp(mode, "input-password")       ? CI_INPUT_FLAG_PASSWORD
                     : !strcmp(mode, "input-unknown-flag") ? 2
                                                           : 0;
    uint32_t status = 99, h[2] = {CI_FRAME_INPUT_REQUEST, 0};
    size_t plen = 3, n;
    char value[128];

    memcpy(prompt, "n? ", 3);
    if (!strcmp(mode, "input-bad-utf8"))
        memcpy(prompt, "\xc0\xaf?", 3); /* an overlong '/' */
    else if (!strcmp(mode, "input-nul"))
        memcpy(prompt, "n\0?", 3);
    else if (!strcmp(mode, "input-4096") || !strcmp(mode, "input-4097"))
        memset(prompt, 'p', plen = !strcmp(mode, "input-4096") ? CI_INPUT_PROMPT_MAX
                                                               : CI_INPUT_PROMPT_MAX + 1);
    h[1] = !strcmp(mode, "input-short") ? 2 : (uint32_t)(4 + plen);
    memcpy(req, h, 8);
    memcpy(req + 8, &flags, 4);
    memcpy(req + 12, prompt, plen);
    n = 8 + h[1];
    if (!strcmp(mode, "input-twice")) { /* both in one write: the second waits */
        memcpy(req + n, req, n);
        n *= 2;
    }
    if (!strcmp(mode, "input-after-violation"))
        fw_frame(CI_FRAME_VIOLATION, "\x65\0\0\0ptrace", 10); /* 101, little-endian */
    fw_put(req, n);
    if (fw_get_input_reply(&status, text, sizeof text) < 0)
        pause(); /* killed, as a broken request should be */
    snprintf(value, sizeof value, "flags=%u status=%u text=%s", (unsigned)run_flags,
             (unsigned)status, text);
    n = outcome(res, 0, CI_OUTCOME_OK);
    n = fw_field(res, n, CI_FIELD_VALUE, value, (uint32_t)strlen(value));
    fw_frame(CI_FRAME_RESULT, res, (uint32_t)n);
}

static int fake_worker(void)
{
    static unsigned char buf[1 << 16];
    char cwd[PATH_MAX], code[256];
    struct ci_frame_header h;
    uint32_t ready[3] = {CI_PROTO_VERSION, CI_LAYER_ALL, CI_READY_NO_LISTENER};
    size_t n;

    signal(SIGINT, SIG_IGN); /* a worker that ignores interrupts */
    if (getcwd(cwd, sizeof cwd) && strstr(cwd, "bad-ready")) {
        fw_frame(CI_FRAME_RESULT, ready, sizeof ready);
        pause();
    }
    if (getcwd(cwd, sizeof cwd) && strstr(cwd, "silent-start"))
        pause();
    if (getcwd(cwd, sizeof cwd) && strstr(cwd, "no-layers"))
        ready[1] = CI_LAYER_RLIMITS;
    fw_frame(CI_FRAME_READY, ready, sizeof ready);
    for (;;) {
        uint32_t flags;

        fw_get_run(&run_count, &flags, code, sizeof code);

        if (!strcmp(code, "good")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = fw_field(buf, n, CI_FIELD_VALUE, "42", 2);
            if (write(1, "out", 3) != 3 || write(2, "err", 3) != 3)
                _exit(97);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "huge-length")) {
            struct ci_frame_header big = {CI_FRAME_RESULT, 0xFFFFFFF0u};
            fw_put(&big, sizeof big);
            pause();
        } else if (!strcmp(code, "field-past-frame")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            uint32_t tag = CI_FIELD_VALUE, len = 1000;
            memcpy(buf + n, &tag, 4);
            memcpy(buf + n + 4, &len, 4);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n + 8 + 10);
        } else if (!strcmp(code, "bad-utf8")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = fw_field(buf, n, CI_FIELD_VALUE, "\xc0\xaf", 2); /* overlong '/' */
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "nul-in-text")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = fw_field(buf, n, CI_FIELD_VALUE, "a\0b", 3);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "unknown-tag")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = fw_field(buf, n, 29, "x", 1);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "repeated-field")) {
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = outcome(buf, n, CI_OUTCOME_OK);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "no-outcome")) {
            n = fw_field(buf, 0, CI_FIELD_COUNT, &run_count, 4);
            n = fw_field(buf, n, CI_FIELD_VALUE, "1", 1);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "no-count")) {
            uint32_t ok = CI_OUTCOME_OK;
            n = fw_field(buf, 0, CI_FIELD_OUTCOME, &ok, 4);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "answer-twice")) {
            /* A forged early answer, then the real one: the second lands
             * while the host waits for the next cell. */
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = fw_field(buf, n, CI_FIELD_VALUE, "1", 1);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "bad-outcome")) {
            n = outcome(buf, 0, 77);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "error-without-name")) {
            n = outcome(buf, 0, CI_OUTCOME_ERROR);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "wrong-type")) {
            fw_frame(CI_FRAME_READY, ready, sizeof ready);
        } else if (!strcmp(code, "over-output-limit")) {
            static unsigned char big[8192];
            memset(big, 'v', sizeof big);
            n = outcome(buf, 0, CI_OUTCOME_OK);
            n = fw_field(buf, n, CI_FIELD_VALUE, big, sizeof big); /* limit is 4096 */
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strncmp(code, "traceback-", 10)) {
            /* traceback-only, -and-full, -full-alone, -full-over-limit,
             * -full-bad-utf8 */
            static unsigned char big[8192];
            int full = strstr(code, "full") != NULL, alone = strstr(code, "alone") != NULL;
            n = outcome(buf, 0, CI_OUTCOME_ERROR);
            n = fw_field(buf, n, CI_FIELD_ENAME, "KeyError", 8);
            if (!alone)
                n = fw_field(buf, n, CI_FIELD_TRACEBACK, "folded", 6);
            memset(big, 't', sizeof big);
            if (strstr(code, "over-limit"))
                n = fw_field(buf, n, CI_FIELD_TRACEBACK_FULL, big, sizeof big);
            else if (strstr(code, "bad-utf8"))
                n = fw_field(buf, n, CI_FIELD_TRACEBACK_FULL, "\xed\xa0\x80", 3);
            else if (full)
                n = fw_field(buf, n, CI_FIELD_TRACEBACK_FULL, "whole", 5);
            fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
        } else if (!strcmp(code, "half-frame-then-stall")) {
            fw_put(&(struct ci_frame_header){CI_FRAME_RESULT, 100}, sizeof h);
            fw_put("abc", 3);
            pause();
        } else if (!strncmp(code, "violation-", 10)) {
            /* u32 syscall number, then its name */
            uint32_t nr = !strcmp(code, "violation-unknown-number") ? 100000 : 101;
            const char *name = !strcmp(code, "violation-bad-name") ? "pt race" : "ptrace";
            size_t len = 4 + strlen(name);
            memcpy(buf, &nr, 4);
            memcpy(buf + 4, name, strlen(name));
            if (!strcmp(code, "violation-wrong-length"))
                len = 3;
            else if (!strcmp(code, "violation-too-long"))
                memset(buf + 4, 'a', len = 4 + 64);
            fw_frame(CI_FRAME_VIOLATION, buf, (uint32_t)len);
            if (!strcmp(code, "violation-then-result")) {
                n = outcome(buf, 0, CI_OUTCOME_OK);
                fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
            }
            if (!strcmp(code, "violation-then-sigsys")) {
                struct rlimit no_core = {0, 0};
                setrlimit(RLIMIT_CORE, &no_core);
                signal(SIGSYS, SIG_DFL);
                raise(SIGSYS);
            }
            pause();
        } else if (!strncmp(code, "signaled-", 9)) {
            /* u32 signal number, then exit as pid 1 of a PID namespace
             * does for a signal the kernel did not deliver (init.c) */
            uint32_t sig = !strcmp(code, "signaled-zero")      ? 0
                           : !strcmp(code, "signaled-65")      ? 65
                           : !strcmp(code, "signaled-sigsys-then-exit") ? SIGSYS
                                                                : SIGKILL;
            memcpy(buf, &sig, 4);
            fw_frame(CI_FRAME_SIGNALED, buf, !strcmp(code, "signaled-wrong-length") ? 2 : 4);
            if (!strcmp(code, "signaled-twice"))
                fw_frame(CI_FRAME_SIGNALED, buf, 4);
            if (!strcmp(code, "signaled-then-result")) {
                n = outcome(buf, 0, CI_OUTCOME_OK);
                fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
            }
            if (!strcmp(code, "signaled-then-exit") || !strcmp(code, "signaled-sigsys-then-exit"))
                _exit(128 + (int)sig);
            if (!strcmp(code, "signaled-then-other-exit"))
                _exit(5);
            pause();
        } else if (!strcmp(code, "stall")) {
            pause();
        } else if (!strcmp(code, "flood")) {
            memset(buf, 'x', sizeof buf);
            for (;;)
                if (write(1, buf, sizeof buf) < 0)
                    _exit(96);
        } else if (!strcmp(code, "exit-5")) {
            _exit(5);
        } else if (!strcmp(code, "close-channel-and-live")) {
            close(CI_FD_CHANNEL);
            pause();
        } else if (!strncmp(code, "out-", 4)) {
            fake_outputs(code);
        } else if (!strncmp(code, "input-", 6)) {
            fake_input(code, flags);
        } else {
            _exit(95);
        }
    }
}

/* ------------------------------------------------------------ the tests */

static char self_path[PATH_MAX];

static int use_fake(void **state)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    assert_true(n > 0);
    self_path[n] = '\0';
    return setenv("CODEINTERP_WORKER", self_path, 1);
}

static int unuse_fake(void **state)
{
    return unsetenv("CODEINTERP_WORKER");
}

static const struct h_limits fast = {.timeout_ms = 800, .grace_ms = 300, .output = 4096};

/* Runs @mode with @opts (NULL: none) on a fresh fake session; asserts
 * KILLED with @name, within the deadline, and that the session restarts
 * and works. */
static void expect_killed_with(const char *mode, const ci_run_options *opts, const char *name,
                               const char *why)
{
    ci_session *s = h_session(&fast);
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run_ex(s, mode, opts, &r), CI_OK);
    assert_true(h_now_ms() - t0 <= 800 + 300 + 1000);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), name);
    if (why)
        h_assert_contains(ci_result_error_value(r), why);
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(s), -1);
    assert_int_equal(ci_run(s, "good", &r), CI_EDEAD);
    assert_null(r);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "good", "42", "out");
    ci_session_free(s);
}

static void expect_killed(const char *mode, const char *name, const char *why)
{
    expect_killed_with(mode, NULL, name, why);
}

static void test_well_formed_result_is_taken_as_sent(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = h_run_status(s, "good", CI_STATUS_OK);
    size_t len;
    h_assert_str(ci_result_value(r), "42");
    assert_string_equal(ci_result_stdout(r, &len), "out");
    assert_int_equal(len, 3);
    assert_string_equal(ci_result_stderr(r, &len), "err");
    assert_int_equal(ci_result_execution_count(r), 1);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_frame_length_over_cap_is_refused_before_allocating(void **state)
{
    expect_killed("huge-length", "ProtocolError", "size limit");
}

static void test_field_longer_than_frame_is_refused(void **state)
{
    expect_killed("field-past-frame", "ProtocolError", "field longer than its frame");
}

static void test_invalid_utf8_is_refused(void **state)
{
    expect_killed("bad-utf8", "ProtocolError", "UTF-8");
}

static void test_nul_in_text_is_refused(void **state)
{
    expect_killed("nul-in-text", "ProtocolError", "UTF-8 without NUL");
}

static void test_unknown_and_repeated_fields_are_refused(void **state)
{
    expect_killed("unknown-tag", "ProtocolError", "unknown field");
    expect_killed("repeated-field", "ProtocolError", "repeated field");
}

static void test_the_whole_traceback_comes_with_the_folded_one(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = h_run_status(s, "traceback-and-full", CI_STATUS_ERROR);
    h_assert_str(ci_result_traceback(r), "folded");
    h_assert_str(ci_result_traceback_full(r), "whole");
    ci_result_free(r);
    /* Nothing folded, nothing more sent: the same text. */
    r = h_run_status(s, "traceback-only", CI_STATUS_ERROR);
    h_assert_str(ci_result_traceback(r), "folded");
    assert_ptr_equal(ci_result_traceback_full(r), ci_result_traceback(r));
    ci_result_free(r);
    r = h_run_status(s, "good", CI_STATUS_OK);
    assert_null(ci_result_traceback_full(r));
    ci_result_free(r);
    assert_null(ci_result_traceback_full(NULL));
    ci_session_free(s);
}

static void test_a_whole_traceback_is_checked_as_the_traceback(void **state)
{
    expect_killed("traceback-full-alone", "ProtocolError", "a full traceback without the traceback");
    expect_killed("traceback-full-over-limit", "ProtocolError", "over the output limit");
    expect_killed("traceback-full-bad-utf8", "ProtocolError", "UTF-8");
}

static void test_missing_or_bad_outcome_is_refused(void **state)
{
    expect_killed("no-outcome", "ProtocolError", "no outcome");
    expect_killed("bad-outcome", "ProtocolError", "unknown outcome");
    expect_killed("error-without-name", "ProtocolError", "without a name");
}

static void test_missing_execution_count_is_refused(void **state)
{
    expect_killed("no-count", "ProtocolError", "no execution count");
}

static void test_answer_for_another_cell_is_refused(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = h_run_status(s, "answer-twice", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "1");
    ci_result_free(r);
    /* The second answer to cell 1 must not pass for cell 2's: it is
     * seen waiting before cell 2 is sent or, if it is still in flight
     * then, by its count. */
    r = h_run_status(s, "good", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "ProtocolError");
    if (!strstr(ci_result_error_value(r), "while no cell was running"))
        h_assert_contains(ci_result_error_value(r), "a result for another cell");
    assert_int_equal(ci_result_execution_count(r), 2);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_bogus_violation_frames_are_refused(void **state)
{
    expect_killed("violation-wrong-length", "ProtocolError", "violation report of the wrong length");
    expect_killed("violation-too-long", "ProtocolError", "violation report of the wrong length");
    expect_killed("violation-unknown-number", "ProtocolError", "unknown system call");
    expect_killed("violation-bad-name", "ProtocolError", "malformed name");
    expect_killed("violation-then-result", "ProtocolError", "a result after a violation report");
}

/* The frame names the call only once the worker dies by SIGSYS. */
static void test_violation_frame_names_the_call_of_a_sigsys_death(void **state)
{
    expect_killed("violation-then-sigsys", "SandboxViolation",
                  "the cell made a forbidden system call (ptrace); the worker was killed");
}

static void test_bogus_signal_frames_are_refused(void **state)
{
    expect_killed("signaled-wrong-length", "ProtocolError", "signal report of the wrong length");
    expect_killed("signaled-zero", "ProtocolError", "signal report for an unknown signal");
    expect_killed("signaled-65", "ProtocolError", "signal report for an unknown signal");
    expect_killed("signaled-twice", "ProtocolError", "a second signal report");
    expect_killed("signaled-then-result", "ProtocolError", "a result after a signal report");
}

/* The report turns an exit with 128 + the signal into death by it, and
 * nothing else: not another exit status, and never SIGSYS, which only
 * the seccomp filter's kill may claim (a SandboxViolation). */
static void test_signal_frame_names_the_signal_of_a_matching_exit(void **state)
{
    expect_killed("signaled-then-exit", "WorkerDied",
                  "the worker was killed by signal 9 (SIGKILL)");
    expect_killed("signaled-then-other-exit", "WorkerDied", "the worker exited with status 5");
    expect_killed("signaled-sigsys-then-exit", "WorkerDied",
                  "the worker exited with status 159");
}

/* A violation report is no result: a worker that sends one and lives on
 * is killed at the deadline, and the call is not named. */
static void test_violation_frame_alone_is_not_a_result(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = NULL;
    assert_int_equal(ci_run(s, "violation-then-live", &r), CI_OK);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    h_assert_not_contains(ci_result_error_value(r), "ptrace");
    ci_result_free(r);
    ci_session_free(s);
}

static void test_unexpected_frame_type_is_refused(void **state)
{
    expect_killed("wrong-type", "ProtocolError", "unexpected frame type");
}

/* The host's on_input: answers "42" (or @payload's answer), keeping the
 * password flag and the prompt's length. */
struct asked {
    const char *answer;
    int password, calls;
    size_t prompt_len;
};

static int answer(const char *prompt, int password, char **reply, void *payload)
{
    struct asked *a = payload;
    a->calls++;
    a->password = password;
    a->prompt_len = strlen(prompt);
    *reply = a->answer ? strdup(a->answer) : NULL;
    return 0;
}

static ci_run_options with_input(struct asked *a)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    opts.on_input = answer;
    opts.payload = a;
    return opts;
}

static void test_well_formed_input_request_is_answered(void **state)
{
    ci_session *s = h_session(&fast);
    struct asked a = {"42", -1, 0, 0};
    ci_run_options opts = with_input(&a);
    ci_result *r = NULL;
    const char *modes[] = {"input-good", "input-password", "input-4096"};

    for (int i = 0; i < 3; i++) {
        assert_int_equal(ci_run_ex(s, modes[i], &opts, &r), CI_OK);
        if (ci_result_status(r) != CI_STATUS_OK)
            h_dump(r);
        assert_int_equal(ci_result_status(r), CI_STATUS_OK);
        h_assert_str(ci_result_value(r), "flags=1 status=0 text=42");
        assert_int_equal(a.password, i == 1);
        assert_int_equal(a.prompt_len, i == 2 ? CI_INPUT_PROMPT_MAX : 3);
        ci_result_free(r);
    }
    /* A refusal is a status, with no text. */
    a.answer = NULL;
    assert_int_equal(ci_run_ex(s, "input-good", &opts, &r), CI_OK);
    h_assert_str(ci_result_value(r), "flags=1 status=1 text=");
    ci_result_free(r);
    assert_int_equal(a.calls, 4);
    ci_session_free(s);
}

static void test_forged_or_malformed_input_requests_are_refused(void **state)
{
    struct asked a = {"42", -1, 0, 0};
    ci_run_options opts = with_input(&a);

    /* A RUN without CI_RUN_FLAG_INPUT takes no input. */
    expect_killed("input-good", "ProtocolError", "an input request in a run that takes no input");
    expect_killed_with("input-4097", &opts, "ProtocolError", "an input request of the wrong length");
    expect_killed_with("input-short", &opts, "ProtocolError", "an input request of the wrong length");
    expect_killed_with("input-unknown-flag", &opts, "ProtocolError",
                       "an input request with unknown flags");
    expect_killed_with("input-bad-utf8", &opts, "ProtocolError",
                       "whose prompt is not UTF-8 without NUL");
    expect_killed_with("input-nul", &opts, "ProtocolError", "whose prompt is not UTF-8 without NUL");
    expect_killed_with("input-twice", &opts, "ProtocolError",
                       "a second input request before the reply to the first");
    expect_killed_with("input-after-violation", &opts, "ProtocolError",
                       "an input request after a violation report");
    /* Only the first of input-twice's requests reached the host's callback. */
    assert_int_equal(a.calls, 1);
}

static void test_text_over_output_limit_is_refused(void **state)
{
    expect_killed("over-output-limit", "ProtocolError", "over the output limit");
}

static void test_half_a_frame_then_silence_is_killed_at_the_deadline(void **state)
{
    expect_killed("half-frame-then-stall", "TimeoutError", "did not stop within 300 ms");
}

static void test_silent_worker_ignoring_sigint_is_killed_at_the_deadline(void **state)
{
    expect_killed("stall", "TimeoutError", "800 ms timeout");
}

static void test_endless_output_is_capped_and_killed(void **state)
{
    ci_session *s = h_session(&fast);
    ci_result *r = NULL;
    size_t len;
    assert_int_equal(ci_run(s, "flood", &r), CI_OK);
    assert_int_equal(ci_result_status(r), CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    /* Its head and tail, the marker between them naming the spill file. */
    h_assert_cut(r, CI_STREAM_STDOUT, 4096);
    h_assert_contains(ci_result_stdout(r, &len), " .outputs/cell-1.stdout ...]\n");
    h_assert_str(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL), ".outputs/cell-1.stdout");
    ci_result_free(r);
    ci_session_free(s);
}

static void test_exit_status_is_reported(void **state)
{
    expect_killed("exit-5", "WorkerDied", "exited with status 5");
}

static void test_worker_closing_its_channel_is_dead(void **state)
{
    expect_killed("close-channel-and-live", "WorkerDied", NULL);
}

/* ------------------------------------------------------ rich outputs */

/* A fake session with display limits of 1024 bytes per output and 4096
 * per run when @limited, else the defaults. */
static ci_session *fake_display_session(int limited)
{
    ci_config *cfg = h_config(&fast);
    ci_session *s = NULL;
    if (limited)
        assert_int_equal(ci_config_set_display_limits(cfg, 1024, 4096), CI_OK);
    int rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %d (%s): %s", rc, ci_strerror(rc), ci_session_errmsg(NULL));
    return s;
}

/* Runs the "out-..." @mode on a fresh fake session; asserts that the host
 * refused the result as a ProtocolError in time (its message naming @why,
 * unless NULL), kept nothing of it, and that the session restarts and
 * works. */
static void expect_outputs_refused(const char *mode, int limited, const char *why)
{
    ci_session *s = fake_display_session(limited);
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run(s, mode, &r), CI_OK);
    assert_true(h_now_ms() - t0 <= 800 + 300 + 1000);
    const char *name = ci_result_error_name(r);
    if (ci_result_status(r) != CI_STATUS_KILLED || !name || strcmp(name, "ProtocolError") != 0) {
        h_dump(r);
        h_dump_rich(r);
        fail_msg("%s: expected a ProtocolError", mode);
    }
    if (why)
        h_assert_contains(ci_result_error_value(r), why);
    assert_int_equal(ci_result_output_count(r), 0);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(s), -1);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "good", "42", "out");
    ci_session_free(s);
}

static void test_well_formed_outputs_are_taken_as_sent(void **state)
{
    ci_session *s = fake_display_session(1);
    ci_result *r = h_run_status(s, "out-good", CI_STATUS_OK);
    size_t len = 0;
    h_assert_str(ci_result_value(r), "v");
    assert_int_equal(ci_result_output_count(r), 2);

    h_assert_str(ci_result_output_mime(r, 0), "image/png");
    const unsigned char *png = ci_result_output_data(r, 0, &len);
    assert_non_null(png);
    assert_int_equal(len, FAKE_PNG_LEN);
    assert_memory_equal(png, fake_png, FAKE_PNG_LEN);
    assert_int_equal(png[len], 0);
    assert_int_equal(ci_result_output_type(r, 0), CI_OUTPUT_DISPLAY_DATA);
    assert_int_equal(ci_result_output_message(r, 0), 0);

    h_assert_str(ci_result_output_mime(r, 1), "text/html");
    const char *html = ci_result_output_data(r, 1, &len);
    assert_int_equal(len, 9);
    assert_string_equal(html, "<b>\xc3\xa9</b>");
    assert_int_equal(ci_result_output_type(r, 1), CI_OUTPUT_EXECUTE_RESULT);
    assert_int_equal(ci_result_output_message(r, 1), 1);

    assert_null(ci_result_output_mime(r, 2));
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);

    /* The worker's count of omitted outputs is reported. */
    r = h_run_status(s, "out-omitted", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 1);
    assert_int_equal(ci_result_outputs_omitted(r), 3);
    assert_int_equal(ci_result_truncated(r), CI_TRUNCATED_OUTPUTS);
    ci_result_free(r);

    /* A result without the fields has no outputs. */
    r = h_run_status(s, "good", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 0);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    ci_result_free(r);
    ci_session_free(s);
}

/* Jupyter's display ids, update_display_data and clear_output, with and
 * without wait, come through as the worker sent them. */
static void test_display_updates_and_clears_are_taken_as_sent(void **state)
{
    ci_session *s = fake_display_session(1);
    ci_result *r = h_run_status(s, "out-jupyter", CI_STATUS_OK);
    size_t len = 99;
    assert_int_equal(ci_result_output_count(r), 7);
    h_assert_output(r, 0, "text/html", "<b>a</b>", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/plain", "'a'", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 2, "text/plain", "'b'", CI_OUTPUT_UPDATE_DISPLAY_DATA, 1);
    h_assert_output(r, 3, "", "", CI_OUTPUT_CLEAR_OUTPUT, 2);
    h_assert_output(r, 4, "text/plain", "'c'", CI_OUTPUT_DISPLAY_DATA, 3);
    h_assert_output(r, 5, "", "", CI_OUTPUT_CLEAR_OUTPUT, 4);
    h_assert_output(r, 6, "text/html", "<table/>", CI_OUTPUT_EXECUTE_RESULT, 5);
    const char *want_id[] = {"d1", "d1", "d1", NULL, "\xc3\xa9", NULL, NULL};
    const int want_wait[] = {0, 0, 0, 1, 0, 0, 0};
    for (size_t i = 0; i < 7; i++) {
        const char *id = ci_result_output_display_id(r, i);
        if (want_id[i])
            h_assert_str(id, want_id[i]);
        else
            assert_null(id);
        assert_int_equal(ci_result_output_wait(r, i), want_wait[i]);
    }
    const char *clear = ci_result_output_data(r, 3, &len);
    assert_non_null(clear);
    assert_int_equal(len, 0);
    assert_int_equal(clear[0], '\0');
    /* Out of range and NULL. */
    assert_null(ci_result_output_display_id(r, 7));
    assert_int_equal(ci_result_output_wait(r, 7), 0);
    assert_null(ci_result_output_display_id(NULL, 0));
    assert_int_equal(ci_result_output_wait(NULL, 0), 0);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_outputs_at_the_limits_are_accepted(void **state)
{
    ci_session *s = fake_display_session(1);
    size_t len = 0;
    ci_result *r = h_run_status(s, "out-mime-127", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 1);
    assert_int_equal(strlen(ci_result_output_mime(r, 0)), 127);
    const char *d = ci_result_output_data(r, 0, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(d, "\xff\0", 2);
    ci_result_free(r);

    r = h_run_status(s, "out-id-255", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 1);
    assert_int_equal(strlen(ci_result_output_display_id(r, 0)), CI_DISPLAY_ID_MAX);
    ci_result_free(r);

    r = h_run_status(s, "out-at-output-limit", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 1);
    ci_result_output_data(r, 0, &len);
    assert_int_equal(len, 1024);
    ci_result_free(r);

    r = h_run_status(s, "out-at-run-limit", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), 4);
    assert_int_equal(ci_result_output_message(r, 3), 3);
    ci_result_free(r);
    ci_session_free(s);

    s = fake_display_session(0);
    r = h_run_status(s, "out-10000", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), CI_MAX_OUTPUTS);
    assert_int_equal(ci_result_output_message(r, CI_MAX_OUTPUTS - 1), CI_MAX_OUTPUTS - 1);
    h_assert_str(ci_result_output_data(r, CI_MAX_OUTPUTS - 1, NULL), "x");
    ci_result_free(r);
    ci_session_free(s);
}

static void test_output_of_unknown_type_is_refused(void **state)
{
    expect_outputs_refused("out-type-0", 1, "output type");
    expect_outputs_refused("out-type-5", 1, "output type");
}

static void test_display_ids_where_proto_h_wants_them_only(void **state)
{
    expect_outputs_refused("out-update-without-id", 1, "update_display_data without a display id");
    expect_outputs_refused("out-id-on-execute-result", 1, "a display id on an execute_result");
    expect_outputs_refused("out-id-on-clear", 1, "a display id on an execute_result or clear_output");
}

static void test_display_id_must_be_short_utf8_without_nul(void **state)
{
    expect_outputs_refused("out-id-nul", 1, "display id is not UTF-8 without NUL");
    expect_outputs_refused("out-id-bad-utf8", 1, "display id is not UTF-8 without NUL");
    expect_outputs_refused("out-id-256", 1, "longer than CI_DISPLAY_ID_MAX");
    expect_outputs_refused("out-id-past-field", 1, "longer than its field");
}

static void test_wait_flag_only_on_clear_output(void **state)
{
    expect_outputs_refused("out-wait-on-display", 1, "flags other than the wait of a clear_output");
    expect_outputs_refused("out-unknown-flag", 1, "flags other than the wait of a clear_output");
}

static void test_clear_output_has_no_mime_type_or_data(void **state)
{
    expect_outputs_refused("out-clear-with-data", 1, "clear_output with a MIME type or data");
    expect_outputs_refused("out-clear-with-mime", 1, "clear_output with a MIME type or data");
}

static void test_outputs_of_one_message_share_type_and_id(void **state)
{
    expect_outputs_refused("out-mixed-types", 1, "outputs of one message differ");
    expect_outputs_refused("out-mixed-ids", 1, "outputs of one message differ");
    expect_outputs_refused("out-clear-twice-in-a-message", 1, "a clear_output of more than one output");
}

static void test_output_message_numbers_must_count_up_by_one(void **state)
{
    expect_outputs_refused("out-first-message-1", 1, "message numbers");
    expect_outputs_refused("out-message-skips", 1, "message numbers");
    expect_outputs_refused("out-message-goes-down", 1, "message numbers");
}

static void test_malformed_mime_type_is_refused(void **state)
{
    expect_outputs_refused("out-mime-empty", 1, "MIME type");
    expect_outputs_refused("out-mime-128", 1, "MIME type");
    expect_outputs_refused("out-mime-no-slash", 1, "MIME type");
    expect_outputs_refused("out-mime-no-subtype", 1, "MIME type");
    expect_outputs_refused("out-mime-no-type", 1, "MIME type");
    expect_outputs_refused("out-mime-two-slashes", 1, "MIME type");
    expect_outputs_refused("out-mime-space", 1, "MIME type");
    expect_outputs_refused("out-mime-nul", 1, "MIME type");
    expect_outputs_refused("out-mime-non-ascii", 1, "MIME type");
}

static void test_output_lengths_past_the_field_are_refused(void **state)
{
    expect_outputs_refused("out-data-past-field", 1, "longer than its field");
    expect_outputs_refused("out-mime-past-field", 1, NULL);
    expect_outputs_refused("out-header-past-field", 1, NULL);
}

static void test_text_output_must_be_utf8_without_nul(void **state)
{
    expect_outputs_refused("out-html-bad-utf8", 1, "UTF-8");
    expect_outputs_refused("out-html-nul", 1, "UTF-8");
    expect_outputs_refused("out-json-bad-utf8", 1, "UTF-8");
    expect_outputs_refused("out-svg-nul", 1, "UTF-8");
}

static void test_outputs_over_the_display_limits_are_refused(void **state)
{
    expect_outputs_refused("out-over-output-limit", 1, "display limits");
    expect_outputs_refused("out-over-run-limit", 1, "display limits");
    expect_outputs_refused("out-10001", 0, "CI_MAX_OUTPUTS");
}

static void test_bad_omitted_or_repeated_output_fields_are_refused(void **state)
{
    expect_outputs_refused("out-omitted-short", 1, "wrong size");
    expect_outputs_refused("out-omitted-long", 1, "wrong size");
    expect_outputs_refused("out-omitted-empty", 1, "wrong size");
    expect_outputs_refused("out-repeated", 1, "repeated field");
}

static void test_bad_ready_fails_session_new_with_eproto(void **state)
{
    char *root = h_tmpdir(), *dir = h_fmt("%s/bad-ready", root);
    ci_config *cfg = ci_config_new();
    ci_session *s = (ci_session *)1;
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(ci_config_set_workspace_root(cfg, dir), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_EPROTO);
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL), "READY");
    ci_config_free(cfg);
    h_rmtree(root);
    free(dir);
    free(root);
}

static void test_missing_required_layer_fails_session_new(void **state)
{
    char *root = h_tmpdir(), *dir = h_fmt("%s/no-layers", root);
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(ci_config_set_workspace_root(cfg, dir), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_ESANDBOX);
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL), "required sandbox layer is not available: seccomp");
    /* Asking for less lets the same worker through. */
    assert_int_equal(ci_config_require_sandbox(cfg, CI_SANDBOX_RLIMITS), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    assert_int_equal(ci_session_sandbox(s), CI_SANDBOX_RLIMITS);
    /* Only pid 1 of a PID namespace has signals to report. */
    ci_result *r = h_run_status(s, "signaled-then-exit", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "ProtocolError");
    h_assert_contains(ci_result_error_value(r), "a signal report from a worker without a PID namespace");
    ci_result_free(r);
    ci_session_free(s);
    assert_int_equal(rmdir(dir), 0); /* nothing left behind */
    ci_config_free(cfg);
    h_rmtree(root);
    free(dir);
    free(root);
}

static void test_silent_start_fails_at_the_startup_timeout(void **state)
{
    char *root = h_tmpdir(), *dir = h_fmt("%s/silent-start", root);
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    int64_t t0;
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(ci_config_set_workspace_root(cfg, dir), CI_OK);
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 500), CI_OK);
    t0 = h_now_ms();
    assert_int_equal(ci_session_new(&s, cfg), CI_ESPAWN);
    assert_true(h_now_ms() - t0 < 500 + 3000);
    h_assert_contains(ci_session_errmsg(NULL), "startup timeout");
    /* Nothing is left behind under the root. */
    assert_int_equal(rmdir(dir), 0);
    ci_config_free(cfg);
    h_rmtree(root);
    free(dir);
    free(root);
}

/* The fake worker says READY without setting RLIMIT_CPU: the host reads
 * the kernel's limits, not the worker's word, and refuses it. */
static void test_a_worker_without_its_cpu_limit_is_refused(void **state)
{
    ci_config *cfg = h_config(&fast);

    assert_int_equal(ci_config_set_cpu_limit(cfg, 5), CI_OK);
    h_start_fails(cfg, CI_ESPAWN, "did not set its CPU limit of 5 s");
    ci_config_free(cfg);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--parent"))
        return fake_worker();

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_well_formed_result_is_taken_as_sent),
        cmocka_unit_test(test_a_worker_without_its_cpu_limit_is_refused),
        cmocka_unit_test(test_frame_length_over_cap_is_refused_before_allocating),
        cmocka_unit_test(test_field_longer_than_frame_is_refused),
        cmocka_unit_test(test_invalid_utf8_is_refused),
        cmocka_unit_test(test_nul_in_text_is_refused),
        cmocka_unit_test(test_unknown_and_repeated_fields_are_refused),
        cmocka_unit_test(test_the_whole_traceback_comes_with_the_folded_one),
        cmocka_unit_test(test_a_whole_traceback_is_checked_as_the_traceback),
        cmocka_unit_test(test_missing_or_bad_outcome_is_refused),
        cmocka_unit_test(test_missing_execution_count_is_refused),
        cmocka_unit_test(test_answer_for_another_cell_is_refused),
        cmocka_unit_test(test_unexpected_frame_type_is_refused),
        cmocka_unit_test(test_well_formed_input_request_is_answered),
        cmocka_unit_test(test_forged_or_malformed_input_requests_are_refused),
        cmocka_unit_test(test_bogus_violation_frames_are_refused),
        cmocka_unit_test(test_violation_frame_names_the_call_of_a_sigsys_death),
        cmocka_unit_test(test_violation_frame_alone_is_not_a_result),
        cmocka_unit_test(test_bogus_signal_frames_are_refused),
        cmocka_unit_test(test_signal_frame_names_the_signal_of_a_matching_exit),
        cmocka_unit_test(test_text_over_output_limit_is_refused),
        cmocka_unit_test(test_half_a_frame_then_silence_is_killed_at_the_deadline),
        cmocka_unit_test(test_silent_worker_ignoring_sigint_is_killed_at_the_deadline),
        cmocka_unit_test(test_endless_output_is_capped_and_killed),
        cmocka_unit_test(test_exit_status_is_reported),
        cmocka_unit_test(test_worker_closing_its_channel_is_dead),
        cmocka_unit_test(test_well_formed_outputs_are_taken_as_sent),
        cmocka_unit_test(test_outputs_at_the_limits_are_accepted),
        cmocka_unit_test(test_display_updates_and_clears_are_taken_as_sent),
        cmocka_unit_test(test_output_of_unknown_type_is_refused),
        cmocka_unit_test(test_display_ids_where_proto_h_wants_them_only),
        cmocka_unit_test(test_display_id_must_be_short_utf8_without_nul),
        cmocka_unit_test(test_wait_flag_only_on_clear_output),
        cmocka_unit_test(test_clear_output_has_no_mime_type_or_data),
        cmocka_unit_test(test_outputs_of_one_message_share_type_and_id),
        cmocka_unit_test(test_output_message_numbers_must_count_up_by_one),
        cmocka_unit_test(test_malformed_mime_type_is_refused),
        cmocka_unit_test(test_output_lengths_past_the_field_are_refused),
        cmocka_unit_test(test_text_output_must_be_utf8_without_nul),
        cmocka_unit_test(test_outputs_over_the_display_limits_are_refused),
        cmocka_unit_test(test_bad_omitted_or_repeated_output_fields_are_refused),
        cmocka_unit_test(test_bad_ready_fails_session_new_with_eproto),
        cmocka_unit_test(test_missing_required_layer_fails_session_new),
        cmocka_unit_test(test_silent_start_fails_at_the_startup_timeout),
    };
    return cmocka_run_group_tests(tests, use_fake, unuse_fake);
}
