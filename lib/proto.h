/*
 * The frame format between the host library and codeinterp-worker.
 * Shared by both sides and by nothing else.
 *
 * Descriptors the worker is started with (and no others):
 *   0  /dev/null, read-only          (no stdin: a cell's input() is an
 *                                    INPUT_REQUEST, below)
 *   1  pipe to the host              (the cell's stdout, read raw by the host)
 *   2  pipe to the host              (the cell's stderr)
 *   3  AF_UNIX SOCK_STREAM socket    (this protocol's frames)
 *
 * Every frame is a header followed by `len` payload bytes. Both ends run on
 * one machine, so integers are in host byte order. The worker is untrusted:
 * the host checks every length against the caps below before it allocates.
 *
 * Worker -> host
 *   READY   once, after the lockdown and before reading any cell.
 *           payload: u32 CI_PROTO_VERSION, u32 the sandbox layers applied
 *           (CI_LAYER_* bits), u32 the descriptor of the seccomp listener
 *           a worker with rollback holds until it reads its first frame
 *           (the host takes it first, with pidfd_getfd(2)), or
 *           CI_READY_NO_LISTENER.
 *   RESULT  once per RUN. payload: a sequence of fields, each
 *           u32 tag (CI_FIELD_*), u32 len, len bytes. Text fields are UTF-8
 *           without NUL bytes; each is at most the output limit. The
 *           OUTPUTS field is bounded by the display limits.
 *   VIOLATION  at most once, from the SIGSYS handler when a cell made a
 *           system call the filter traps; the worker then dies by SIGSYS.
 *           payload: u32 syscall number (below CI_VIOLATION_NR_MAX), then
 *           its name, 1 to CI_VIOLATION_NAME_MAX bytes of [a-z0-9_], no
 *           NUL. Never a result: the host still waits for the death.
 *   INPUT_REQUEST  a cell's input() or getpass(), as Jupyter's
 *           input_request: only during a run whose RUN has
 *           CI_RUN_FLAG_INPUT, only from the worker's main thread, and
 *           never a second one before the worker has read the
 *           INPUT_REPLY to the first. payload: u32 flags
 *           (CI_INPUT_FLAG_PASSWORD: getpass(), the reply is a secret),
 *           then the prompt, UTF-8 without NUL, at most
 *           CI_INPUT_PROMPT_MAX bytes (the worker cuts a longer one).
 *   CALL    a cell's call of a host function (ci_config_add_function):
 *           only during a run, to a name the FUNCTIONS frame gave, and
 *           never a second request (CALL or INPUT_REQUEST) before the
 *           worker has read the reply to the first. payload: u32 name
 *           length (1 to CI_FUNCTION_NAME_MAX), the name, then the
 *           arguments: a JSON object (RFC 8259, UTF-8) of exactly two
 *           members, "args" an array and "kwargs" an object, without
 *           duplicate keys, at most the FUNCTIONS frame's argument limit.
 *   FETCH   an HTTP request a cell's client wrote (lib/worker/fetch.py):
 *           only during a run of a worker sent NETWORK, and one request at
 *           a time as for CALL. payload: u32 method length (1 to
 *           CI_FETCH_METHOD_MAX), u32 URL length (1 to CI_FETCH_URL_MAX),
 *           u32 header length (at most CI_FETCH_HEAD_MAX), the method (an
 *           HTTP token), the absolute URL, the header lines ("Name:
 *           value\r\n" each), then the body (at most the request limit).
 *           The host checks the URL against the allow list and every
 *           byte of the rest before it makes the request.
 *   ROLLED_BACK  from a session with rollback (ci_config_set_rollback):
 *           once, when the checkpoint a RUN with CI_RUN_FLAG_CHECKPOINT
 *           made has taken over from a worker that died in that cell.
 *           payload: u32 that RUN's execution count. Its interpreter is
 *           as it was before that cell; it then reads RUNs as the worker
 *           did (lib/worker/checkpoint.c).
 *   CHECKPOINTED  from a session with rollback: once a RUN with
 *           CI_RUN_FLAG_CHECKPOINT has its checkpoint, before the cell
 *           runs; the host approves the checkpoint's fork until then (a
 *           signal can make the kernel restart it). payload: u32 that
 *           RUN's execution count.
 *   ENDED   from a session with rollback: the reaper, pid 1 of the PID
 *           namespace, once it has reaped a worker (lib/worker/reaper.c),
 *           which is how the host learns of that death. payload: u32 the
 *           worker's wait status (wait4(2)), u32 0, u64 the CPU time it
 *           used in all, microseconds.
 *   INSTALL  a cell's %pip install (lib/worker/pip.py): only during a
 *           run, one request at a time as for CALL. payload: u32 op
 *           (CI_INSTALL_LIST, CI_INSTALL_WHEEL), then for WHEEL the wheel's
 *           file name as the manifest lists it (1 to CI_INSTALL_ARG_MAX
 *           bytes); nothing for LIST.
 * Host -> worker
 *   RUN     payload: u32 execution count, u32 flags (CI_RUN_FLAG_*), then
 *           the cell's UTF-8 source (at most CI_MAX_CODE_BYTES). Two
 *           flags make a run that is no cell (lib/worker/snapshot.py),
 *           numbered as no cell is (CI_RUN_COUNT_INTERNAL), answered by
 *           a RESULT as a cell is:
 *           SNAPSHOT: no source; the RESULT has, for OUTCOME_OK, the
 *             STATE, PACKAGES and (if any) LEFT_OUT fields.
 *           RESTORE: instead of a source, u32 package-set length, the
 *             package set (a PACKAGES field's text, at most
 *             CI_PACKAGES_MAX), then the state (a STATE field's bytes,
 *             at most CI_STATE_MAX): the worker loads it, or its RESULT
 *             says why not.
 *           CHECKPOINT: on a cell, in a session with rollback: before
 *             the cell the worker forks a copy of itself (a clone that
 *             only the host approves, through the seccomp listener it
 *             holds: docs/rollback.md), which takes over if the worker
 *             dies in the cell and is killed once it ends.
 *   CPU_BUDGET  to a checkpoint that took over (ROLLED_BACK), before any
 *           RUN, when the session has a CPU limit: the limit is the
 *           session's, and the dead worker's CPU time is spent. payload:
 *           u64 the seconds the worker sets as its RLIMIT_CPU, soft and
 *           hard, 1 to its current hard limit. The host reads
 *           /proc/PID/limits until it shows them.
 *   INPUT_REPLY  exactly one for each INPUT_REQUEST, sent before the host
 *           reads another frame. payload: u32 status (CI_INPUT_*), then
 *           for CI_INPUT_ANSWERED the reply, UTF-8 without NUL, at most
 *           CI_INPUT_REPLY_MAX bytes; nothing for the others. A worker
 *           interrupted while it waits gives up on the request, but still
 *           reads the reply (and drops it) before its next request or the
 *           next RUN.
 *   FUNCTIONS  the host functions, once, before a worker's first RUN, when
 *           the session has any. payload: u32 count (1 to
 *           CI_FUNCTIONS_MAX), u32 argument limit, u32 result limit (bytes
 *           of JSON), then for each function u32 name length, u32
 *           description length, the name (a Python identifier, at most
 *           CI_FUNCTION_NAME_MAX bytes) and its description (UTF-8 without
 *           NUL, at most CI_FUNCTION_DOC_MAX bytes; 0 for none).
 *   CALL_REPLY  exactly one for each CALL, sent before the host reads
 *           another frame. payload: u32 status (CI_CALL_*), then for
 *           RETURNED the value's JSON, at most the result limit; for
 *           RAISED u32 exception name length (1 to CI_CALL_ENAME_MAX), the
 *           name (identifiers joined by dots) and the message; for FAILED
 *           the message; nothing for STOPPED. Messages are UTF-8 without
 *           NUL, at most CI_CALL_MESSAGE_MAX bytes. A worker interrupted
 *           while it waits gives up on the call, and drops its reply as it
 *           drops an INPUT_REPLY.
 *   NETWORK  once, before a worker's first RUN, when the session allows
 *           any URL (ci_config_allow_url): the cell's HTTP clients then
 *           send their requests as FETCH frames. payload: u32 request
 *           body limit, u32 response body limit (bytes, each 1 to
 *           CI_URL_LIMIT_MAX).
 *   FETCH_REPLY  exactly one for each FETCH, sent before the host reads
 *           another frame. payload: u32 status (CI_FETCH_*), then for
 *           DONE u32 HTTP status (100 to 599), u32 header length, the
 *           response's header lines ("Name: value\r\n" each, at most
 *           CI_FETCH_HEAD_MAX bytes, printable ASCII), then the body (at
 *           most the response limit); for REFUSED, FAILED and TIMED_OUT the message
 *           (UTF-8 without NUL, at most CI_CALL_MESSAGE_MAX bytes);
 *           nothing for STOPPED. Dropped by an interrupted worker as it
 *           drops a CALL_REPLY.
 *   INSTALL_REPLY  exactly one for each INSTALL, sent before the host
 *           reads another frame. payload: u32 status (CI_INSTALL_*), then
 *           for DONE a JSON object (LIST: "site", the site directory, and
 *           "wheels", each listed wheel's "file", "name", "version" and
 *           "requires"; WHEEL: "installed", "version", "files", "bytes"),
 *           at most CI_INSTALL_REPLY_MAX bytes; for REFUSED and FAILED the
 *           message (UTF-8 without NUL, at most CI_CALL_MESSAGE_MAX bytes);
 *           nothing for STOPPED. Dropped by an interrupted worker as it
 *           drops a CALL_REPLY.
 *
 * Interrupts travel out of band: the host sends SIGINT to the worker's
 * main thread with rt_tgsigqueueinfo(2), si_code SI_QUEUE and the RUN's
 * execution count in si_value.sival_int; the worker turns only the one
 * for the running cell into KeyboardInterrupt (a late one for the
 * previous cell is dropped, an early one for this cell kept).
 */
#ifndef CI_PROTO_H
#define CI_PROTO_H

#include <stdint.h>
#include <sys/uio.h>

#define CI_PROTO_VERSION 7u

#define CI_FD_STDIN 0
#define CI_FD_STDOUT 1
#define CI_FD_STDERR 2
#define CI_FD_CHANNEL 3

/* The largest cell the host sends (bytes of source). */
#define CI_MAX_CODE_BYTES (16u * 1024 * 1024)

enum ci_frame_type {
    CI_FRAME_READY = 1,
    CI_FRAME_RUN = 2,
    CI_FRAME_RESULT = 3,
    CI_FRAME_VIOLATION = 4,
    CI_FRAME_SIGNALED = 5,
    CI_FRAME_INPUT_REQUEST = 6,
    CI_FRAME_INPUT_REPLY = 7,
    CI_FRAME_FUNCTIONS = 8,
    CI_FRAME_CALL = 9,
    CI_FRAME_CALL_REPLY = 10,
    CI_FRAME_NETWORK = 11,
    CI_FRAME_FETCH = 12,
    CI_FRAME_FETCH_REPLY = 13,
    CI_FRAME_INSTALL = 14,
    CI_FRAME_INSTALL_REPLY = 15,
    CI_FRAME_ROLLED_BACK = 16,
    CI_FRAME_ENDED = 17,
    CI_FRAME_CHECKPOINTED = 18,
    CI_FRAME_CPU_BUDGET = 19,
};

/* RUN flags. */
#define CI_RUN_FLAG_INPUT 1u /* the host answers INPUT_REQUEST (ci_run_options.on_input) */
#define CI_RUN_FLAG_SNAPSHOT 2u /* pickle the interpreter state */
#define CI_RUN_FLAG_RESTORE 4u  /* load a pickled state */
#define CI_RUN_FLAG_CHECKPOINT 8u /* fork a checkpoint before the cell (rollback) */

/* READY's listener when there is none. */
#define CI_READY_NO_LISTENER 0xffffffffu
/* A run that is no cell has a count with this bit, each its own, so an
 * interrupt meant for it can never stop a cell (nor one for a cell it). */
#define CI_RUN_COUNT_INTERNAL 0x80000000u

/* Snapshots (ci_session_snapshot): the largest pickled state, package
 * set and list of what was left out, in bytes. The state also stays
 * within the worker's memory limit, which the host checks. */
#define CI_STATE_MAX 0xC0000000u
#define CI_PACKAGES_MAX 1048576u
#define CI_LEFT_OUT_MAX 1048576u

/* INPUT_REQUEST: its flags, and the most bytes of its prompt. */
#define CI_INPUT_FLAG_PASSWORD 1u
#define CI_INPUT_PROMPT_MAX 4096u

/* INPUT_REPLY: the most bytes of a reply (1 MiB), and its statuses. */
#define CI_INPUT_REPLY_MAX 1048576u
enum ci_input_status {
    CI_INPUT_ANSWERED = 0, /* the host's answer follows */
    CI_INPUT_REFUSED = 1,  /* the host would not answer (on_input failed) */
    CI_INPUT_INVALID = 2,  /* its answer was not UTF-8 or over CI_INPUT_REPLY_MAX */
    CI_INPUT_STOPPED = 3,  /* the cell is being interrupted (timeout or request) */
};

/* Host functions: the most a session defines, the longest name and
 * description, and the bounds of a CALL_REPLY's parts. */
#define CI_FUNCTIONS_MAX 256u
#define CI_FUNCTION_NAME_MAX 64u
#define CI_FUNCTION_DOC_MAX 65536u
#define CI_CALL_ENAME_MAX 128u
#define CI_CALL_MESSAGE_MAX 65536u
/* The bounds of the argument and result limits (ci_config_set_call_limits). */
#define CI_CALL_LIMIT_MIN 1024u
#define CI_CALL_LIMIT_MAX (64u * 1024 * 1024)
enum ci_call_status {
    CI_CALL_RETURNED = 0, /* the function's value, as JSON */
    CI_CALL_RAISED = 1,   /* the function raised: exception name and message */
    CI_CALL_FAILED = 2,   /* no answer, or none the host could pass on: why */
    CI_CALL_STOPPED = 3,  /* the cell is being interrupted (timeout or request) */
};

/* HTTP through the host: the bounds of a FETCH's parts, of the body
 * limits (ci_config_set_url_limits), and a FETCH_REPLY's statuses. */
#define CI_FETCH_METHOD_MAX 32u
#define CI_FETCH_URL_MAX 8192u
#define CI_FETCH_HEAD_MAX 65536u
#define CI_URL_LIMIT_MAX (256u * 1024 * 1024)
enum ci_fetch_status {
    CI_FETCH_DONE = 0,    /* the server's response */
    CI_FETCH_REFUSED = 1, /* the allow list or the address policy refused it: why */
    CI_FETCH_FAILED = 2,  /* the request failed (a timeout, a cap, the server): why */
    CI_FETCH_STOPPED = 3, /* the cell is being interrupted (timeout or request) */
    CI_FETCH_TIMED_OUT = 4, /* the request's time limit passed: why */
};

/* %pip install through the host (ci_config_set_wheelhouse, wheel.c):
 * INSTALL's operations, the longest argument, the largest DONE reply
 * (a listing of every wheel a manifest may hold), and the statuses. */
enum ci_install_op {
    CI_INSTALL_LIST = 1,  /* the wheelhouse's listed wheels, as JSON */
    CI_INSTALL_WHEEL = 2, /* install the wheel the argument names */
};
#define CI_INSTALL_ARG_MAX 255u
#define CI_INSTALL_REPLY_MAX (32u * 1024 * 1024)
enum ci_install_status {
    CI_INSTALL_DONE = 0,    /* JSON follows */
    CI_INSTALL_REFUSED = 1, /* not enabled, not listed, a changed wheel, a shadowing one: why */
    CI_INSTALL_FAILED = 2,  /* it could not be done (the quota, a read error): why */
    CI_INSTALL_STOPPED = 3, /* the cell is being interrupted (timeout or request) */
};

/*
 * SIGNALED: u32 signal number, 1 to CI_SIGNAL_MAX. A worker that is pid 1
 * of its PID namespace sends it when a signal that would end any other
 * process arrives, which the kernel does not deliver to a namespace's
 * init (pid_namespaces(7)); it then exits with status 128 + that number
 * and the host reports the death as that signal (lib/worker/init.c).
 * In a session with rollback the worker is pid 2, under the reaper,
 * which says how it ended in an ENDED frame instead.
 */
#define CI_SIGNAL_MAX 64u

/* Bounds of a VIOLATION frame's syscall number and name. */
#define CI_VIOLATION_NR_MAX 512u
#define CI_VIOLATION_NAME_MAX 32u

struct ci_frame_header {
    uint32_t type;
    uint32_t len;
};

/* Fields of a RESULT frame. OUTCOME and COUNT are required; the rest are
 * optional; each may appear at most once. COUNT lets the host tell a late
 * answer to an earlier cell (or one a cell forged on descriptor 3) from
 * the answer to the cell it is waiting for. */
enum ci_field_tag {
    CI_FIELD_OUTCOME = 1,   /* u32, one of enum ci_outcome */
    CI_FIELD_VALUE = 2,     /* repr of the last expression */
    CI_FIELD_ENAME = 3,     /* exception class name */
    CI_FIELD_EVALUE = 4,    /* str(exception) */
    CI_FIELD_TRACEBACK = 5, /* formatted traceback, cell frames only, and
                             * other code's frames folded (runner.py) */
    CI_FIELD_FLAGS = 6,     /* u32, CI_FLAG_* */
    CI_FIELD_COUNT = 7,     /* u32, the RUN's execution count, echoed */
    CI_FIELD_OUTPUTS = 8,   /* the rich outputs, see below */
    CI_FIELD_OMITTED = 9,   /* u32, outputs left out for the display limits */
    CI_FIELD_TRACEBACK_FULL = 10, /* the traceback with nothing folded; sent
                                   * only with TRACEBACK and only when it
                                   * differs from it */
    CI_FIELD_REFUSALS = 11, /* what the sandbox refused the cell, see below */
    CI_FIELD_STATE = 12,    /* a SNAPSHOT run's pickle: 1 byte or more, never read by the host */
    CI_FIELD_PACKAGES = 13, /* a SNAPSHOT run's package set: UTF-8 lines, not empty */
    CI_FIELD_LEFT_OUT = 14, /* a SNAPSHOT run's "name: reason" lines, UTF-8, not empty */
};

/*
 * The REFUSALS field: the refusals the worker saw the cell meet and
 * survive (lib/worker/refusals.py), for the audit trail. The worker is
 * untrusted, so this is what it says, not a boundary: the host checks the
 * form and records it as the worker's report. Sent only when not empty.
 *   u32 refusals left out: attempts past the first CI_REFUSALS_MAX
 *       distinct ones
 * then 1 to CI_REFUSALS_MAX entries, each
 *   u32 kind (enum ci_refusal_kind)
 *   u32 times: 1 or more, the attempts of that kind and detail
 *   u32 detail length: 1 to CI_REFUSAL_DETAIL_MAX
 *   the detail: UTF-8 without NUL (what was asked: a path, a socket, a
 *       program), cut by the worker to fit
 */
enum ci_refusal_kind {
    CI_REFUSAL_NETWORK = 1, /* a socket or a name lookup */
    CI_REFUSAL_PROCESS = 2, /* a new process: subprocess, os.fork, exec */
    CI_REFUSAL_SIGNAL = 3,  /* a signal to another process */
    CI_REFUSAL_SYMLINK = 4, /* a symbolic link */
    CI_REFUSAL_PATH = 5,    /* a path outside what the session may read or write */
    CI_REFUSAL_MODE = 6,    /* a file mode that would let another user in */
};
#define CI_REFUSALS_MAX 32u
#define CI_REFUSAL_DETAIL_MAX 512u
/* The most a REFUSALS field holds. */
#define CI_REFUSALS_FIELD_MAX (4u + CI_REFUSALS_MAX * (12u + CI_REFUSAL_DETAIL_MAX))

/*
 * The OUTPUTS field: a sequence of outputs (at most CI_MAX_OUTPUTS, from
 * codeinterp.h), each a header of six u32
 *   output type (ci_output_type: 1 display_data, 2 execute_result,
 *       3 update_display_data, 4 clear_output)
 *   message number (0 for the first, then equal to the previous
 *       output's or one more; the outputs of one message are consecutive
 *       and share their type, flags and display id)
 *   flags: CI_OUTPUT_FLAG_WAIT for a clear_output with wait=True; no
 *       other bit, and none for the other types
 *   display id length: 0 for none, else 1 to CI_DISPLAY_ID_MAX; never 0
 *       for update_display_data, always 0 for execute_result and
 *       clear_output
 *   MIME type length: 1 to CI_MIME_MAX; 0 for clear_output, which is a
 *       message of one output with no MIME type and no data
 *   data length: at most the per-output display limit; 0 for clear_output
 * then the MIME type, the data and the display id:
 *   the MIME type: type "/" subtype, each 1 or more of [a-z0-9!#$&^_.+-]
 *       (lower case: MIME types are case-insensitive, RFC 2045)
 *   the data: for text types (ci_mime_is_text) UTF-8 without NUL bytes,
 *       otherwise any bytes.
 *   the display id: UTF-8 without NUL bytes (Jupyter's transient
 *       display_id, which a cell may choose).
 * The data of all outputs together is at most the per-run display limit.
 */
#define CI_OUTPUT_HEADER_SIZE 24u
#define CI_OUTPUT_FLAG_WAIT 1u
#define CI_DISPLAY_ID_MAX 255u
#define CI_MIME_MAX 127u

/* The most an OUTPUTS field holds under a per-run display limit of @run:
 * the data, and a header, a MIME type and a display id for each output. */
#define CI_OUTPUTS_MAX(run) \
    ((uint64_t)(run) + (uint64_t)CI_MAX_OUTPUTS * \
                           (CI_OUTPUT_HEADER_SIZE + CI_MIME_MAX + CI_DISPLAY_ID_MAX))

/* Text MIME types carry UTF-8 without NUL: text/..., application/json,
 * application/javascript (text in Jupyter's messages too, as IPython's
 * Javascript object makes it), and any type whose subtype ends in +json
 * or +xml. */
static inline int ci_mime_is_text(const char *mime, uint32_t len)
{
    static const char text[] = "text/", json[] = "application/json",
                      js[] = "application/javascript";
    if (len >= sizeof(text) - 1 && __builtin_memcmp(mime, text, sizeof(text) - 1) == 0)
        return 1;
    if (len == sizeof(json) - 1 && __builtin_memcmp(mime, json, len) == 0)
        return 1;
    if (len == sizeof(js) - 1 && __builtin_memcmp(mime, js, len) == 0)
        return 1;
    if (len >= 5 && (__builtin_memcmp(mime + len - 5, "+json", 5) == 0 ||
                     __builtin_memcmp(mime + len - 4, "+xml", 4) == 0))
        return 1;
    return 0;
}

/* Moves the iovec array *@iov of *@n entries (a msghdr's msg_iov and
 * msg_iovlen) past @sent bytes that sendmsg(2) wrote, dropping the
 * entries it finished and any empty ones after them; *@n is 0 when all
 * is sent. Host and worker alike send frames this way. */
static inline void ci_iov_advance(struct iovec **iov, size_t *n, size_t sent)
{
    while (*n > 0 && sent >= (*iov)->iov_len) {
        sent -= (*iov)->iov_len;
        (*iov)++;
        (*n)--;
    }
    if (*n > 0) {
        (*iov)->iov_base = (char *)(*iov)->iov_base + sent;
        (*iov)->iov_len -= sent;
    }
}

enum ci_outcome {
    CI_OUTCOME_OK = 0,
    CI_OUTCOME_ERROR = 1,     /* the cell raised */
    CI_OUTCOME_MEMORY = 2,    /* the cell raised MemoryError */
    CI_OUTCOME_INTERRUPT = 3, /* the cell raised KeyboardInterrupt */
};

/* READY's layer bits; the same values as the public CI_SANDBOX_* bits. */
#define CI_LAYER_SECCOMP 0x1u
#define CI_LAYER_RLIMITS 0x2u
#define CI_LAYER_NO_NEW_PRIVS 0x4u
#define CI_LAYER_LANDLOCK 0x8u
#define CI_LAYER_UNPRIVILEGED 0x10u
#define CI_LAYER_USERNS 0x20u
#define CI_LAYER_NETNS 0x40u
#define CI_LAYER_IPCNS 0x80u
#define CI_LAYER_UTSNS 0x100u
#define CI_LAYER_MNTNS 0x200u
#define CI_LAYER_PIDNS 0x400u
#define CI_LAYER_TASK_LIMIT 0x800u
#define CI_LAYER_DISK_QUOTA 0x1000u
#define CI_LAYER_ALL 0x1FFFu

/* FLAGS bits. */
#define CI_FLAG_TRUNCATED 1u /* a text field was cut at the output limit */

#endif /* CI_PROTO_H */
