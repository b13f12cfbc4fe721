/*
 * The built-in module _codeinterp: what the worker's Python files
 * (runner.py, stdin.py, manifest_finder.py) share with its C side. Its
 * constants are made here from lib/proto.h and codeinterp.h, so each has
 * one source; its functions are input_request() (stdin.py's way to the
 * host, over main.c's channel), host_call() (functions.py's) and the signed package manifest's checks
 * (manifest.c). test/python/conftest.py builds the same module from the
 * same headers for the runner's unit tests.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "manifest.h"
#include "worker.h"

/* Waits until the host's reply is readable, with the GIL released, and
 * runs the cell's signal handlers at each wake-up: 0, or -1 with the
 * exception one raised (KeyboardInterrupt). SIGINT is blocked but while
 * ppoll(2) waits, so one that comes after the check still wakes it. */
static int wait_for_host(void)
{
    struct pollfd p = {.fd = CI_FD_CHANNEL, .events = POLLIN};
    sigset_t sigint, old;
    int r, err;

    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigint, &old);
    for (;;) {
        if (PyErr_CheckSignals() < 0) {
            r = -1;
            break;
        }
        Py_BEGIN_ALLOW_THREADS
        r = ppoll(&p, 1, NULL, &old);
        err = errno;
        Py_END_ALLOW_THREADS
        if (r > 0) {
            r = 0;
            break;
        }
        if (r < 0 && err != EINTR) {
            errno = err;
            PyErr_SetFromErrno(PyExc_OSError);
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

/* Takes ci_channel_lock without holding the GIL (worker.h), in slices
 * in the main thread, so that an interrupt still stops its wait: 0, or
 * -1 with the exception a signal handler raised. */
static _Thread_local int holding; /* this thread holds ci_channel_lock */

static int lock_channel(void)
{
    int main_thread = _PyOS_IsMainThread(), r;

    if (holding) { /* a signal handler's call, while this thread waits */
        PyErr_SetString(PyExc_RuntimeError,
                        "this thread is already waiting for the host's answer");
        return -1;
    }
    for (;;) {
        struct timespec until;

        if (main_thread && PyErr_CheckSignals() < 0)
            return -1;
        Py_BEGIN_ALLOW_THREADS
        if (main_thread) {
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 20 * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            r = pthread_mutex_timedlock(&ci_channel_lock, &until);
        } else {
            r = pthread_mutex_lock(&ci_channel_lock);
        }
        Py_END_ALLOW_THREADS
        if (r == 0) {
            holding = 1;
            return 0;
        }
    }
}

static void unlock_channel(void)
{
    holding = 0;
    pthread_mutex_unlock(&ci_channel_lock);
}

/*
 * input_request(prompt, password): asks the host for a line (proto.h's
 * INPUT_REQUEST) and returns (status, text), status a CI_INPUT_* value
 * and text the answer ('' unless INPUT_ANSWERED); None when the host was
 * not asked: the run takes no input, or this is not the main thread.
 * The prompt is a str of at most INPUT_PROMPT_MAX bytes of UTF-8 without
 * NUL (ValueError). Raises what the cell's signal handler raised while it
 * waited (KeyboardInterrupt), and RuntimeError if called again from that
 * handler.
 */
static PyObject *py_input_request(PyObject *self, PyObject *args)
{
    static int asking;
    PyObject *prompt, *reply, *text;
    const char *p;
    Py_ssize_t n;
    uint32_t status;
    size_t len;
    int password, rc;

    (void)self;
    if (!PyArg_ParseTuple(args, "Up", &prompt, &password) ||
        !(p = PyUnicode_AsUTF8AndSize(prompt, &n)))
        return NULL;
    if ((size_t)n > CI_INPUT_PROMPT_MAX || memchr(p, '\0', (size_t)n)) {
        PyErr_Format(PyExc_ValueError, "the prompt must be at most %u bytes of UTF-8 without NUL",
                     CI_INPUT_PROMPT_MAX);
        return NULL;
    }
    if (asking) {
        PyErr_SetString(PyExc_RuntimeError, "input() is already waiting for the host's answer");
        return NULL;
    }
    if (!ci_input_allowed())
        Py_RETURN_NONE;
    if (lock_channel() < 0)
        return NULL;
    asking = 1;
    rc = ci_input_ask(password ? CI_INPUT_FLAG_PASSWORD : 0, p, (size_t)n, wait_for_host,
                      &status, &len);
    asking = 0;
    reply = rc < 0 ? NULL : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (rc == 0)
        ci_input_read(reply ? PyBytes_AS_STRING(reply) : NULL, len);
    unlock_channel();
    if (!reply)
        return NULL;
    text = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(reply), (Py_ssize_t)len, "strict");
    Py_DECREF(reply);
    return text ? Py_BuildValue("(IN)", (unsigned)status, text) : NULL;
}

/* The reply to a call as host_call() returns it, from its @len bytes at
 * @p after the status (checked by the host: UTF-8, the lengths). */
static PyObject *call_value(uint32_t status, const char *p, size_t len)
{
    uint32_t nl;

    switch (status) {
    case CI_CALL_RETURNED:
        return Py_BuildValue("(Iy#O)", (unsigned)status, p, (Py_ssize_t)len, Py_None);
    case CI_CALL_RAISED:
        memcpy(&nl, p, sizeof nl);
        if (nl > len - sizeof nl)
            break;
        return Py_BuildValue("(Is#s#)", (unsigned)status, p + sizeof nl, (Py_ssize_t)nl,
                             p + sizeof nl + nl, (Py_ssize_t)(len - sizeof nl - nl));
    case CI_CALL_FAILED:
        return Py_BuildValue("(Is#O)", (unsigned)status, p, (Py_ssize_t)len, Py_None);
    case CI_CALL_STOPPED:
        return Py_BuildValue("(IOO)", (unsigned)status, Py_None, Py_None);
    }
    PyErr_SetString(PyExc_SystemError, "a malformed reply to a host call");
    return NULL;
}

/*
 * Under ci_channel_lock while a cell runs: @ask(@arg) sends a request and
 * reads its reply's header. The bytes of the reply after its status, with
 * the status in *@status; NULL with an exception: RuntimeError saying
 * "@what can only be ... while a cell runs", or what the cell's signal
 * handler raised while the main thread waited (the request is then given
 * up on).
 */
static PyObject *ask_locked(int (*ask)(const void *arg, uint32_t *status, size_t *len),
                          const void *arg, const char *what, uint32_t *status)
{
    PyObject *reply = NULL;
    size_t len;

    if (lock_channel() < 0)
        return NULL;
    if (!ci_calls_open()) {
        unlock_channel();
        PyErr_Format(PyExc_RuntimeError, "%s while a cell runs", what);
        return NULL;
    }
    if (ask(arg, status, &len) == 0) {
        reply = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
        ci_input_read(reply ? PyBytes_AS_STRING(reply) : NULL, len);
    }
    unlock_channel();
    return reply;
}

/* A host function's call: its name and its JSON arguments. */
struct call {
    const char *name, *json;
    size_t name_len, json_len;
};

static int ask_call(const void *arg, uint32_t *status, size_t *len)
{
    const struct call *c = arg;
    return ci_call_ask(c->name, c->name_len, c->json, c->json_len, wait_for_host, status, len);
}

/*
 * host_call(name, args): calls host function @name (a str) with @args,
 * the bytes of its JSON arguments (functions.py checked and encoded them),
 * and returns (status, a, b): (CALL_RETURNED, the value's JSON as bytes,
 * None), (CALL_RAISED, exception name, message), (CALL_FAILED, message,
 * None) or (CALL_STOPPED, None, None). From any of the cell's threads,
 * one call at a time, as ask_locked() says.
 */
static PyObject *py_host_call(PyObject *self, PyObject *args)
{
    struct call c;
    Py_ssize_t nlen;
    PyObject *bytes, *reply, *value;
    uint32_t status;

    (void)self;
    if (!PyArg_ParseTuple(args, "s#S", &c.name, &nlen, &bytes))
        return NULL;
    if (nlen == 0 || (size_t)nlen > CI_FUNCTION_NAME_MAX) {
        PyErr_SetString(PyExc_ValueError, "no host function has that name");
        return NULL;
    }
    c.name_len = (size_t)nlen;
    c.json = PyBytes_AS_STRING(bytes);
    c.json_len = (size_t)PyBytes_GET_SIZE(bytes);
    if (!(reply = ask_locked(ask_call, &c, "a host function can only be called", &status)))
        return NULL;
    value = call_value(status, PyBytes_AS_STRING(reply), (size_t)PyBytes_GET_SIZE(reply));
    Py_DECREF(reply);
    return value;
}

static int ask_fetch(const void *arg, uint32_t *status, size_t *len)
{
    PyObject *request = (PyObject *)arg;
    return ci_fetch_ask(PyBytes_AS_STRING(request), (size_t)PyBytes_GET_SIZE(request),
                        wait_for_host, status, len);
}

/*
 * host_fetch(request): sends @request, the bytes of a FETCH's payload
 * (fetch.py wrote them; the host checks them all), and returns (status,
 * the bytes of the reply after its status). As host_call(), one request
 * at a time.
 */
static PyObject *py_host_fetch(PyObject *self, PyObject *args)
{
    PyObject *bytes, *reply, *value;
    uint32_t status;

    (void)self;
    if (!PyArg_ParseTuple(args, "S", &bytes))
        return NULL;
    if (!(reply = ask_locked(ask_fetch, bytes, "an HTTP request can only be made", &status)))
        return NULL;
    value = Py_BuildValue("(IO)", (unsigned)status, reply);
    Py_DECREF(reply);
    return value;
}

/* An INSTALL: its op and argument. */
struct install {
    uint32_t op;
    const char *arg;
    size_t len;
};

static int ask_install(const void *arg, uint32_t *status, size_t *len)
{
    const struct install *in = arg;
    return ci_install_ask(in->op, in->arg, in->len, wait_for_host, status, len);
}

/*
 * host_install(op, arg): asks the host to list its wheelhouse (op "list",
 * arg "") or to install the listed wheel file @arg (op "wheel"), and
 * returns (status, text): "done" with the reply's JSON, "refused" or
 * "failed" with the host's message, "stopped" with "". One request at a
 * time, as host_call().
 */
static PyObject *py_host_install(PyObject *self, PyObject *args)
{
    static const char *const names[] = {"done", "refused", "failed", "stopped"};
    struct install in;
    const char *op;
    Py_ssize_t n;
    PyObject *reply, *value;
    uint32_t status;

    (void)self;
    if (!PyArg_ParseTuple(args, "ss#", &op, &in.arg, &n))
        return NULL;
    in.len = (size_t)n;
    if (memchr(in.arg, '\0', in.len)) {
        PyErr_SetString(PyExc_ValueError, "host_install(): a wheel's file name holds no NUL");
        return NULL;
    }
    if (!strcmp(op, "list") && n == 0)
        in.op = CI_INSTALL_LIST;
    else if (!strcmp(op, "wheel") && n > 0 && (size_t)n <= CI_INSTALL_ARG_MAX)
        in.op = CI_INSTALL_WHEEL;
    else {
        PyErr_SetString(PyExc_ValueError, "host_install(op, arg): op is 'list' (arg '') or "
                        "'wheel' (arg a wheel's file name of 1 to 255 bytes)");
        return NULL;
    }
    if (!(reply = ask_locked(ask_install, &in, "a package can only be installed", &status)))
        return NULL;
    value = Py_BuildValue("(sN)", names[status],
                          PyUnicode_DecodeUTF8(PyBytes_AS_STRING(reply),
                                               PyBytes_GET_SIZE(reply), "replace"));
    Py_DECREF(reply);
    return value;
}

static PyMethodDef methods[] = {
    {"input_request", py_input_request, METH_VARARGS,
     "Asks the host for a line: (status, text), or None if it cannot be asked."},
    {"host_call", py_host_call, METH_VARARGS,
     "Calls a host function with JSON arguments: (status, a, b)."},
    {"host_fetch", py_host_fetch, METH_VARARGS,
     "Sends an HTTP request to the host: (status, the reply's bytes)."},
    {"host_install", py_host_install, METH_VARARGS,
     "Asks the host to list its wheelhouse or install a wheel: (status, text)."},
    {NULL, NULL, 0, NULL},
};

/* The path of str @arg in the filesystem encoding, or NULL. */
static PyObject *fs_path(PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "a path must be a str");
        return NULL;
    }
    return PyUnicode_EncodeFSDefault(arg);
}

/* @test of the str path @arg, as a bool. */
static PyObject *path_test(PyObject *arg, int (*test)(const char *))
{
    PyObject *b = fs_path(arg);
    int r;

    if (!b)
        return NULL;
    r = test(PyBytes_AS_STRING(b));
    Py_DECREF(b);
    return PyBool_FromLong(r);
}

static PyObject *py_listed(PyObject *self, PyObject *arg)
{
    (void)self;
    return path_test(arg, ci_manifest_listed);
}

static PyObject *py_listed_beneath(PyObject *self, PyObject *arg)
{
    (void)self;
    return path_test(arg, ci_manifest_listed_beneath);
}

/* manifest_matches(path, data): ci_manifest_matches() of a str path and
 * bytes: 1 the bytes are the listed file's, 0 they are not, -1 the path
 * is not listed. */
static PyObject *py_matches(PyObject *self, PyObject *args)
{
    PyObject *path, *b;
    Py_buffer data;
    int r;

    (void)self;
    if (!PyArg_ParseTuple(args, "Uy*", &path, &data))
        return NULL;
    b = fs_path(path);
    if (!b) {
        PyBuffer_Release(&data);
        return NULL;
    }
    r = ci_manifest_matches(PyBytes_AS_STRING(b), data.buf, (size_t)data.len);
    Py_DECREF(b);
    PyBuffer_Release(&data);
    return PyLong_FromLong(r);
}

static PyMethodDef manifest_methods[] = {
    {"manifest_listed", py_listed, METH_O, "Whether the manifest lists this file."},
    {"manifest_listed_beneath", py_listed_beneath, METH_O,
     "Whether the manifest lists a file beneath this directory."},
    {"manifest_matches", py_matches, METH_VARARGS,
     "1 if the bytes are the listed file's, 0 if not, -1 if it is not listed."},
    {NULL, NULL, 0, NULL},
};

/* The manifest's search path as a tuple of str; () without a manifest. */
static PyObject *search_dirs(const struct ci_manifest_policy *mf)
{
    size_t n = mf ? mf->n_search : 0;
    PyObject *dirs = PyTuple_New((Py_ssize_t)n);

    for (size_t i = 0; dirs && i < n; i++) {
        PyObject *d = PyUnicode_DecodeFSDefault(mf->search_path[i]);

        if (!d) {
            Py_CLEAR(dirs);
            break;
        }
        PyTuple_SET_ITEM(dirs, (Py_ssize_t)i, d);
    }
    return dirs;
}

static int add_manifest(PyObject *m)
{
    const struct ci_manifest_policy *mf = ci_manifest();
    PyObject *dirs = search_dirs(mf);
    int rc = dirs ? PyModule_AddObjectRef(m, "MANIFEST_DIRS", dirs) : -1;

    Py_XDECREF(dirs);
    if (rc == 0)
        rc = PyModule_AddObjectRef(m, "MANIFEST", mf ? Py_True : Py_False);
    if (rc == 0 && mf)
        rc = PyModule_AddFunctions(m, manifest_methods);
    return rc;
}

/* Each constant as its C name without "CI_": CI_FIELD_VALUE is
 * FIELD_VALUE. (test/python/conftest.py reads this list.) */
#define CONSTANT(name) {#name + 3, (long)(name)}

static const struct {
    const char *name;
    long value;
} constants[] = {
    CONSTANT(CI_OUTCOME_OK),
    CONSTANT(CI_OUTCOME_ERROR),
    CONSTANT(CI_OUTCOME_MEMORY),
    CONSTANT(CI_OUTCOME_INTERRUPT),
    CONSTANT(CI_FLAG_TRUNCATED),
    CONSTANT(CI_FIELD_OUTCOME),
    CONSTANT(CI_FIELD_VALUE),
    CONSTANT(CI_FIELD_ENAME),
    CONSTANT(CI_FIELD_EVALUE),
    CONSTANT(CI_FIELD_TRACEBACK),
    CONSTANT(CI_FIELD_FLAGS),
    CONSTANT(CI_FIELD_OUTPUTS),
    CONSTANT(CI_FIELD_OMITTED),
    CONSTANT(CI_FIELD_TRACEBACK_FULL),
    CONSTANT(CI_FIELD_REFUSALS),
    CONSTANT(CI_FIELD_STATE),
    CONSTANT(CI_FIELD_PACKAGES),
    CONSTANT(CI_FIELD_LEFT_OUT),
    CONSTANT(CI_REFUSAL_NETWORK),
    CONSTANT(CI_REFUSAL_PROCESS),
    CONSTANT(CI_REFUSAL_SIGNAL),
    CONSTANT(CI_REFUSAL_SYMLINK),
    CONSTANT(CI_REFUSAL_PATH),
    CONSTANT(CI_REFUSAL_MODE),
    CONSTANT(CI_REFUSALS_MAX),
    CONSTANT(CI_REFUSAL_DETAIL_MAX),
    CONSTANT(CI_OUTPUT_DISPLAY_DATA),
    CONSTANT(CI_OUTPUT_EXECUTE_RESULT),
    CONSTANT(CI_OUTPUT_UPDATE_DISPLAY_DATA),
    CONSTANT(CI_OUTPUT_CLEAR_OUTPUT),
    CONSTANT(CI_OUTPUT_HEADER_SIZE),
    CONSTANT(CI_OUTPUT_FLAG_WAIT),
    CONSTANT(CI_DISPLAY_ID_MAX),
    CONSTANT(CI_MAX_OUTPUTS),
    CONSTANT(CI_MIME_MAX),
    CONSTANT(CI_INPUT_PROMPT_MAX),
    CONSTANT(CI_INPUT_REPLY_MAX),
    CONSTANT(CI_INPUT_ANSWERED),
    CONSTANT(CI_INPUT_REFUSED),
    CONSTANT(CI_INPUT_INVALID),
    CONSTANT(CI_INPUT_STOPPED),
    CONSTANT(CI_CALL_RETURNED),
    CONSTANT(CI_CALL_RAISED),
    CONSTANT(CI_CALL_FAILED),
    CONSTANT(CI_CALL_STOPPED),
    CONSTANT(CI_FETCH_DONE),
    CONSTANT(CI_FETCH_REFUSED),
    CONSTANT(CI_FETCH_FAILED),
    CONSTANT(CI_FETCH_STOPPED),
    CONSTANT(CI_FETCH_TIMED_OUT),
    CONSTANT(CI_FETCH_METHOD_MAX),
    CONSTANT(CI_FETCH_URL_MAX),
    CONSTANT(CI_FETCH_HEAD_MAX),
};

static int exec_module(PyObject *m)
{
    for (size_t i = 0; i < sizeof constants / sizeof *constants; i++)
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0)
            return -1;
    if (PyModule_AddFunctions(m, methods) < 0)
        return -1;
    return add_manifest(m);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_codeinterp",
    .m_doc = "codeinterp-worker's constants and checks, shared with its C side.",
    .m_size = 0,
    .m_slots = slots,
};

static PyObject *init_module(void)
{
    return PyModuleDef_Init(&module_def);
}

void ci_pymodule_register(void)
{
    if (PyImport_AppendInittab("_codeinterp", init_module) < 0)
        ci_fatal(CI_EXIT_PYTHON, "cannot register the module _codeinterp");
}
