/*
 * CPython inside the worker: an isolated start-up, the warm imports, and
 * the cell runner, which gives a cell notebook semantics and turns its
 * fate into the fields of a RESULT.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "manifest.h"
#include "proto.h"
#include "worker.h"

/* Debian's python3 lives under /usr. Naming its home skips the search
 * next to the executable, so a stray pyvenv.cfg or lib/python3.11 near
 * build/ cannot redirect the standard library. */
#ifndef CI_PYTHON_HOME
#define CI_PYTHON_HOME L"/usr"
#endif

/*
 * The worker's Python, each a real file beside this one, embedded at
 * build time (tools/embed.sh): the cell runner (runner.py) with the
 * run's outputs (outputs.py), the sandbox's messages (refusals.py),
 * input() as Jupyter's input_request (stdin.py), host functions
 * (functions.py), IPython's shell
 * (shell.py), the tracebacks' folding (tracebacks.py), session
 * snapshots (snapshot.py), and the signed package manifest's import hook
 * (manifest_finder.py). Each is compiled as "<codeinterp>", the
 * name by which the runner cuts their frames from every traceback.
 */
#include "fetch_py.h"
#include "functions_py.h"
#include "manifest_finder_py.h"
#include "outputs_py.h"
#include "pip_py.h"
#include "refusals_py.h"
#include "runner_py.h"
#include "shell_py.h"
#include "stdin_py.h"
#include "snapshot_py.h"
#include "tracebacks_py.h"

#define EMBEDDED_NAME "<codeinterp>"

static PyObject *run_fn;        /* the runner's run() */
static PyThreadState *main_ts;  /* parked here while no cell runs */

static _Noreturn void python_failed(const char *what)
{
    if (PyErr_Occurred())
        PyErr_Print();
    ci_fatal(CI_EXIT_PYTHON, "%s", what);
}

static void check_status(PyStatus st)
{
    if (PyStatus_Exception(st))
        ci_fatal(CI_EXIT_PYTHON, "%s: %s", st.func ? st.func : "python",
                 st.err_msg ? st.err_msg : "initialisation failed");
}

static void init_python(void)
{
    PyPreConfig pre;
    PyConfig cfg;
    PyStatus st;

    /* The isolated configuration ignores the locale; without UTF-8 mode
     * stdout would be ASCII and print('\u2713') would fail. */
    ci_pymodule_register();
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    check_status(Py_PreInitialize(&pre));

    /* Isolated: no PYTHON* variables, no user site. */
    PyConfig_InitIsolatedConfig(&cfg);
    cfg.install_signal_handlers = 1; /* SIGINT -> KeyboardInterrupt */
    cfg.buffered_stdio = 0;          /* output reaches the host as written */
    st = PyConfig_SetString(&cfg, &cfg.home, CI_PYTHON_HOME);
    /* With a manifest: no site, so no .pth file runs and no
     * sitecustomize; CPython starts on the standard library's own
     * directories only (what it imports while it starts, encodings,
     * comes from there), and install_finder() sets the manifest's search
     * path once its hook is in place. */
    if (ci_manifest())
        cfg.site_import = 0;
    if (!PyStatus_Exception(st))
        st = Py_InitializeFromConfig(&cfg);
    PyConfig_Clear(&cfg);
    check_status(st);
}

#define DENIED_TAIL "the signed package manifest does not list it"

static PyObject *manifest_finder; /* NULL without a manifest */

/* Compiles the embedded source @src as module @name, in sys.modules,
 * and returns it; exits saying @what on failure. Needs the GIL. */
static PyObject *load_embedded(const char *name, const char *src, const char *what)
{
    PyObject *code = Py_CompileString(src, EMBEDDED_NAME, Py_file_input), *m = NULL;

    if (code)
        m = PyImport_ExecCodeModule(name, code);
    if (!m)
        python_failed(what);
    Py_DECREF(code);
    return m;
}

/* A new reference to @m's attribute @name; exits saying @what if none. */
static PyObject *attribute(PyObject *m, const char *name, const char *what)
{
    PyObject *a = PyObject_GetAttrString(m, name);

    if (!a)
        python_failed(what);
    return a;
}

/* The manifest's search path, a list of str. */
static PyObject *search_path(void)
{
    const struct ci_manifest_policy *mf = ci_manifest();
    PyObject *list = PyList_New(0);

    for (size_t i = 0; list && i < mf->n_search; i++) {
        PyObject *d = PyUnicode_DecodeFSDefault(mf->search_path[i]);

        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

static void install_finder(void)
{
    static const char what[] = "manifest: cannot install its import hook";
    PyObject *m = load_embedded("_codeinterp_manifest_finder", manifest_finder_py, what);
    PyObject *search = search_path(), *r = NULL;

    if (search)
        r = PyObject_CallMethod(m, "install", "O", search);
    if (!r)
        python_failed(what);
    manifest_finder = attribute(m, "finder", what);
    Py_DECREF(r);
    Py_DECREF(search);
    Py_DECREF(m);
}

/* An import the manifest refused: the start fails naming the module. */
static void check_denied(const char *name)
{
    PyObject *type, *value, *tb, *str = NULL;
    const char *text;

    if (!manifest_finder || !PyErr_ExceptionMatches(PyExc_ModuleNotFoundError))
        return;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value)
        str = PyObject_Str(value);
    text = str ? PyUnicode_AsUTF8(str) : NULL;
    if (text && strstr(text, DENIED_TAIL))
        ci_fatal(CI_EXIT_MANIFEST, "manifest: the preloaded module %s cannot be imported: %s",
                 name, text);
    PyErr_Clear();
    Py_XDECREF(str);
    PyErr_Restore(type, value, tb);
}

static PyObject *warm_import(const char *name)
{
    PyObject *m = PyImport_ImportModule(name);

    if (!m) {
        check_denied(name);
        PyErr_Print();
        ci_fatal(CI_EXIT_PYTHON, "warm-up: cannot import %s", name);
    }
    return m;
}

/* Imports each module of @list (a comma-separated list, checked by the
 * host): a failure ends the worker unless @optional, when the module is
 * left out (not installed, or not in the package manifest). */
static void import_list(const char *list, int optional)
{
    char name[256];

    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");

        if (n == 0 || n >= sizeof name)
            ci_fatal(CI_EXIT_USAGE, "--preload: bad module name in '%s'", list);
        memcpy(name, p, n);
        name[n] = '\0';
        if (!optional) {
            Py_DECREF(warm_import(name));
        } else {
            PyObject *m = PyImport_ImportModule(name);
            if (!m)
                PyErr_Clear();
            Py_XDECREF(m);
        }
        p += n + (p[n] == ',');
    }
}

/* Imports each module of @preload, then matplotlib on the Agg backend and
 * pyplot, which the runner needs whatever the list says; a zygote with
 * the default list also imports what it can of CI_ZYGOTE_EXTRAS. */
static void warm(const char *preload, int zygote)
{
    PyObject *mpl, *r;

    import_list(preload, 0);
    mpl = warm_import("matplotlib");
    r = PyObject_CallMethod(mpl, "use", "s", "Agg");
    if (!r)
        python_failed("warm-up: matplotlib.use('Agg') failed");
    Py_DECREF(r);
    Py_DECREF(mpl);
    Py_DECREF(warm_import("matplotlib.pyplot"));
    if (zygote && !strcmp(preload, CI_DEFAULT_PRELOAD))
        import_list(CI_ZYGOTE_EXTRAS, 1);
}

static PyObject *configure_fn; /* the runner's _configure() */
static PyObject *rehearse_fn;  /* the runner's _rehearse() */

static PyObject *prime_fn;     /* the runner's prime() */
static PyObject *define_fn;    /* functions.py's define() */
static PyObject *network_fn;   /* fetch.py's enable() */
static PyObject *take_fn;      /* snapshot.py's take() */
static PyObject *restore_fn;   /* snapshot.py's restore() */

/* The runner's helpers, and IPython's shell, made before any package of
 * the preload list is imported: pandas asks get_ipython() at its import
 * whether it runs in a kernel. */
static void load_shell(void)
{
    static const char what[] = "cannot start IPython's shell";
    PyObject *m, *r;

    Py_DECREF(load_embedded("_codeinterp_outputs", outputs_py, what));
    Py_DECREF(load_embedded("_codeinterp_refusals", refusals_py, what));
    Py_DECREF(load_embedded("_codeinterp_stdin", stdin_py, what));
    m = load_embedded("_codeinterp_functions", functions_py, what);
    define_fn = attribute(m, "define", what);
    Py_DECREF(m);
    m = load_embedded("_codeinterp_fetch", fetch_py, what);
    network_fn = attribute(m, "enable", what);
    Py_DECREF(m);
    Py_DECREF(load_embedded("_codeinterp_pip", pip_py, what));
    m = load_embedded("_codeinterp_shell", shell_py, what);
    r = PyObject_CallMethod(m, "create", NULL);
    if (!r)
        python_failed(what);
    Py_DECREF(r);
    Py_DECREF(m);
}

static void load_runner(void)
{
    static const char what[] = "cannot start the cell runner";
    PyObject *m, *r, *done;

    Py_DECREF(load_embedded("_codeinterp_tracebacks", tracebacks_py, what));
    m = load_embedded("_codeinterp_runner", runner_py, what);
    r = attribute(m, "install", what);
    done = PyObject_CallNoArgs(r);

    if (!done)
        python_failed(what);
    Py_DECREF(done);
    Py_DECREF(r);
    run_fn = attribute(m, "run", what);
    configure_fn = attribute(m, "_configure", what);
    rehearse_fn = attribute(m, "_rehearse", what);
    prime_fn = attribute(m, "prime", what);
    Py_DECREF(m);
    m = load_embedded("_codeinterp_snapshot", snapshot_py, what);
    take_fn = attribute(m, "take", what);
    restore_fn = attribute(m, "restore", what);
    Py_DECREF(m);
}

void ci_interp_warm(const char *preload, int zygote)
{
    /* Python starts and warms up away from any workspace: this all runs
     * before Landlock and seccomp, so it must read nothing a cell wrote,
     * and matplotlib looks for a matplotlibrc in the working directory
     * first. (Each worker, and the zygote, gets HOME and MPLCONFIGDIR
     * directories of its own for the same reason.) */
    int back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

    if (back < 0 || chdir("/") != 0)
        ci_fatal(CI_EXIT_PYTHON, "cannot leave the working directory for the warm-up: %s",
                 strerror(errno));
    init_python();
    if (ci_manifest())
        install_finder();
    load_shell();
    warm(preload, zygote);
    load_runner();
    if (zygote) { /* the first frame and figure, then gc.freeze() */
        PyObject *r = PyObject_CallNoArgs(prime_fn);

        if (!r)
            python_failed("warm-up: the first frame and figure failed");
        Py_DECREF(r);
    }
    if (fchdir(back) != 0)
        ci_fatal(CI_EXIT_PYTHON, "cannot return from the warm-up: %s", strerror(errno));
    close(back);
    main_ts = PyEval_SaveThread();
}

void ci_interp_prefault(void)
{
    static const char *const var[] = {"HOME", "MPLCONFIGDIR", "TMPDIR"};
    PyObject *env, *r;

    PyEval_RestoreThread(main_ts);
    /* The session's own environment replaces this one's. */
    env = PyDict_New();
    for (size_t i = 0; env && i < sizeof var / sizeof *var; i++) {
        PyObject *v = getenv(var[i]) ? PyUnicode_DecodeFSDefault(getenv(var[i])) : NULL;

        if (v && PyDict_SetItemString(env, var[i], v) < 0)
            python_failed("spare: the prefault failed");
        Py_XDECREF(v);
    }
    r = env ? PyObject_CallOneArg(rehearse_fn, env) : NULL;
    if (!r)
        python_failed("spare: the prefault failed");
    Py_DECREF(r);
    Py_DECREF(env);
    main_ts = PyEval_SaveThread();
}

pid_t ci_interp_fork(unsigned long flags)
{
    long pid;
    int err;

    PyEval_RestoreThread(main_ts);
    PyOS_BeforeFork();
    pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    err = errno;
    if (pid == 0)
        PyOS_AfterFork_Child(); /* the at-fork hooks: random reseeds itself */
    else
        PyOS_AfterFork_Parent();
    main_ts = PyEval_SaveThread();
    return pid < 0 ? -err : (pid_t)pid;
}

/* The signal mask the checkpoint's fork blocked, restored after it. */
static sigset_t fork_mask;

pid_t ci_interp_fork_checkpoint(void)
{
    sigset_t all;
    pid_t pid;
    int err;

    /* With the GIL, so the child has a thread state to go on with, but
     * no Python code: CPython's fork hooks (PyOS_BeforeFork) would run a
     * cell's os.register_at_fork() functions, and a signal handler a
     * cell installed could run here, on the main thread, while the host
     * approves this thread's fork (lib/rollback.c). */
    PyEval_RestoreThread(main_ts);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &fork_mask);
    pid = fork();
    err = errno;
    if (pid != 0) {
        pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
        main_ts = PyEval_SaveThread();
    }
    errno = err;
    return pid;
}

void ci_interp_take_over(void)
{
    PyObject *name = PyUnicode_FromString("random");
    PyObject *random = name ? PyImport_GetModule(name) : NULL, *inst = NULL, *state = NULL, *r;

    /* The threads the fork did not copy, the import lock, the GIL; and
     * the at-fork hooks, of which random's reseeds its generator: its
     * state goes back to what the cell found. */
    if (random && (inst = PyObject_GetAttrString(random, "_inst")))
        state = PyObject_CallMethod(inst, "getstate", NULL);
    PyErr_Clear();
    PyOS_AfterFork_Child();
    if (state && (r = PyObject_CallMethod(inst, "setstate", "(O)", state)))
        Py_DECREF(r);
    PyErr_Clear();
    Py_XDECREF(state);
    Py_XDECREF(inst);
    Py_XDECREF(random);
    Py_XDECREF(name);
    pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
    main_ts = PyEval_SaveThread();
}

void ci_interp_configure(const struct ci_limits *limits, const char *session_dir)
{
    PyObject *env, *r;

    PyEval_RestoreThread(main_ts);
    env = PyDict_New();
    if (!env)
        python_failed("cannot configure the cell runner");
    if (session_dir) {
        static const char *const var[][2] = {
            {"HOME", "config"}, {"MPLCONFIGDIR", "config"}, {"TMPDIR", "tmp"}};

        for (size_t i = 0; i < sizeof var / sizeof *var; i++) {
            PyObject *v = PyUnicode_FromFormat("%s/%s", session_dir, var[i][1]);

            if (!v || PyDict_SetItemString(env, var[i][0], v) < 0)
                python_failed("cannot configure the cell runner");
            Py_DECREF(v);
        }
    }
    r = PyObject_CallFunction(configure_fn, "nnIOi", (Py_ssize_t)limits->display_limit,
                              (Py_ssize_t)limits->display_run_limit, limits->dpi, env,
                              limits->quota_dev != 0);
    if (!r)
        python_failed("cannot configure the cell runner");
    Py_DECREF(r);
    /* The cell's own modules: anything beneath the session directory,
     * the parent of the workspace (the cwd), as a path ending in '/'. */
    if (manifest_finder) {
        char cwd[PATH_MAX], *slash;
        PyObject *dir;

        if (!getcwd(cwd, sizeof cwd - 1) || !(slash = strrchr(cwd, '/')) || slash == cwd)
            ci_fatal(CI_EXIT_PYTHON, "cannot configure the import hook: no session directory");
        slash[1] = '\0';
        dir = PyUnicode_DecodeFSDefault(cwd);
        if (!dir || PyObject_SetAttrString(manifest_finder, "_session", dir) < 0)
            python_failed("cannot configure the import hook");
        Py_DECREF(dir);
    }
    Py_DECREF(env);
    main_ts = PyEval_SaveThread();
}

void ci_interp_start(const struct ci_limits *limits)
{
    ci_interp_warm(limits->preload, 0);
    ci_interp_configure(limits, NULL);
}

/* Reads field @tag of the runner's @fields as a u32; 0 if it is missing
 * or not an int in range. */
static int field_u32(PyObject *fields, unsigned tag, uint32_t *v)
{
    PyObject *key = PyLong_FromUnsignedLong(tag);
    PyObject *o = key ? PyDict_GetItemWithError(fields, key) : NULL;
    unsigned long n;

    Py_XDECREF(key);
    if (!o || !PyLong_CheckExact(o)) {
        PyErr_Clear();
        return 0;
    }
    n = PyLong_AsUnsignedLong(o);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (n > UINT32_MAX)
        return 0;
    *v = (uint32_t)n;
    return 1;
}

/* Reads field @tag of @fields as bytes of at most @max into @t, absent
 * (NULL) if it is None or missing and @optional; 0 if it is not that. */
static int field_bytes(PyObject *fields, unsigned tag, uint64_t max, int optional,
                       struct ci_text *t)
{
    PyObject *key = PyLong_FromUnsignedLong(tag);
    PyObject *o = key ? PyDict_GetItemWithError(fields, key) : NULL;

    Py_XDECREF(key);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (!o || o == Py_None)
        return optional;
    if (!PyBytes_CheckExact(o) || (uint64_t)PyBytes_GET_SIZE(o) > max)
        return 0;
    t->data = PyBytes_AS_STRING(o);
    t->len = (size_t)PyBytes_GET_SIZE(o);
    return 1;
}

/* Takes the runner's fields apart (a dict keyed by CI_FIELD_* tags, see
 * runner.py's run()). Returns 0 if they are not what run() returns (a
 * cell can reach the runner's globals and replace them). Only the sizes
 * that keep the frame within its u32 length are checked here; the host
 * checks the outputs' content as it checks everything. */
static int unpack(PyObject *fields, const struct ci_limits *limits, int snapshot,
                  struct ci_cell *out)
{
    static const unsigned text_tags[5] = {CI_FIELD_VALUE, CI_FIELD_ENAME, CI_FIELD_EVALUE,
                                          CI_FIELD_TRACEBACK, CI_FIELD_TRACEBACK_FULL};
    struct ci_text *texts[5] = {&out->value, &out->ename, &out->evalue, &out->traceback,
                                &out->traceback_full};

    if (!PyDict_CheckExact(fields))
        return 0;
    if (!field_u32(fields, CI_FIELD_OUTCOME, &out->outcome) ||
        !field_u32(fields, CI_FIELD_FLAGS, &out->flags) ||
        !field_u32(fields, CI_FIELD_OMITTED, &out->omitted))
        return 0;
    if (out->outcome > CI_OUTCOME_INTERRUPT || out->flags > CI_FLAG_TRUNCATED)
        return 0;
    for (int i = 0; i < 5; i++)
        if (!field_bytes(fields, text_tags[i], limits->output_limit, 1, texts[i]))
            return 0;
    if (!field_bytes(fields, CI_FIELD_OUTPUTS, CI_OUTPUTS_MAX(limits->display_run_limit), 0,
                     &out->outputs))
        return 0;
    if (out->outputs.len == 0) /* an empty OUTPUTS field is not sent */
        out->outputs.data = NULL;
    if (!field_bytes(fields, CI_FIELD_REFUSALS, CI_REFUSALS_FIELD_MAX, 1, &out->refusals))
        return 0;
    /* A snapshot's, and only a snapshot's: the RESULT of any other run
     * never has them. */
    if (snapshot && out->outcome == CI_OUTCOME_OK &&
        (!field_bytes(fields, CI_FIELD_STATE, CI_STATE_MAX, 0, &out->state) ||
         !field_bytes(fields, CI_FIELD_PACKAGES, CI_PACKAGES_MAX, 0, &out->packages) ||
         !field_bytes(fields, CI_FIELD_LEFT_OUT, CI_LEFT_OUT_MAX, 1, &out->left_out)))
        return 0;
    out->owner = fields;
    return 1;
}

/* The runner itself failed (interrupted or out of memory while
 * reporting, or tampered with): say what we can without allocating. */
#define ASCII_NAME "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"

static void describe_failure(struct ci_cell *out)
{
    static char name[128];
    static const char why[] = "the cell runner failed; no more is known";
    PyObject *type, *value, *tb;
    const char *n = "SystemError", *dot;

    PyErr_Fetch(&type, &value, &tb);
    out->outcome = CI_OUTCOME_ERROR;
    if (type && PyType_Check(type)) {
        n = ((PyTypeObject *)type)->tp_name;
        dot = strrchr(n, '.');
        n = dot ? dot + 1 : n;
        if (PyErr_GivenExceptionMatches(type, PyExc_MemoryError)) {
            out->outcome = CI_OUTCOME_MEMORY;
            n = "MemoryError"; /* as the runner names every subclass */
        } else if (PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) {
            out->outcome = CI_OUTCOME_INTERRUPT;
        }
    }
    /* Copied: the type, and its name, may go away with the reference. A
     * name too long for it could be cut inside a character, which the host
     * would refuse: only an ASCII name that fits is copied. */
    if (strlen(n) >= sizeof(name) || strspn(n, ASCII_NAME) != strlen(n))
        n = "SystemError";
    snprintf(name, sizeof(name), "%s", n);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    out->ename = (struct ci_text){name, strlen(name)};
    out->evalue = (struct ci_text){why, sizeof(why) - 1};
}

/*
 * Interrupts. The host sends SIGINT with rt_tgsigqueueinfo(2), the number
 * of the cell it means in si_value (SI_QUEUE). A signal for the previous
 * cell can arrive after that cell ended, and one for the next cell before
 * it started (while its source is still being read): only the number
 * tells them apart, so this handler, not Python's, receives SIGINT and
 * passes on to Python (PyErr_SetInterruptEx, async-signal-safe) only the
 * one meant for the running cell. A SIGINT the cell sends itself
 * (os.kill, signal.raise_signal) is not queued and passes as always, and
 * so does a host's whose number the kernel dropped: when the signals
 * queued for the worker's user reach RLIMIT_SIGPENDING, SIGINT still
 * comes, but as SI_USER from pid 0 (signal(7)). One that reaches the
 * worker while a cell runs was sent for it, since the host sends no
 * interrupt for a cell once the next one is sent; those still pending
 * when a cell starts (the cell before blocked SIGINT) are dropped then,
 * but for a numbered one for the new cell, so that none lands in a later
 * cell whatever the queue holds.
 */
static volatile sig_atomic_t running_cell; /* 0 between cells */
static volatile sig_atomic_t asked_cell;   /* the last cell the host interrupted */

static void on_sigint(int sig, siginfo_t *info, void *context)
{
    int saved = errno;

    (void)context;
    if (info->si_code != SI_QUEUE) {
        PyErr_SetInterruptEx(sig);
    } else {
        asked_cell = info->si_value.sival_int;
        if (asked_cell != 0 && asked_cell == running_cell)
            PyErr_SetInterruptEx(sig);
    }
    errno = saved;
}

/* Takes every SIGINT pending as cell @count starts, keeping only one the
 * host numbered for it (in asked_cell). */
static void drop_stale_interrupts(uint32_t count)
{
    static const struct timespec now = {0, 0};
    sigset_t sigint, old;
    siginfo_t info;

    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigint, &old);
    while (sigtimedwait(&sigint, &info, &now) == SIGINT)
        if (info.si_code == SI_QUEUE && info.si_value.sival_int == (int)count)
            asked_cell = (sig_atomic_t)count;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* (Re)installs on_sigint, unless a cell chose to ignore SIGINT or reset
 * it to the default; a Python-level handler a cell installed still runs,
 * called by Python for the interrupts on_sigint passes on. */
static void claim_sigint(void)
{
    struct sigaction now, mine;

    if (sigaction(SIGINT, NULL, &now) != 0 || now.sa_handler == SIG_IGN ||
        now.sa_handler == SIG_DFL || now.sa_sigaction == on_sigint)
        return;
    memset(&mine, 0, sizeof(mine));
    mine.sa_sigaction = on_sigint;
    mine.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&mine.sa_mask);
    sigaction(SIGINT, &mine, NULL);
}

/* snapshot.py's restore() of a RESTORE payload (proto.h): its package
 * set and its state apart, so the state is copied once; a payload too
 * short for its own length gives both empty, which restore() refuses. */
static PyObject *restore(const char *src, size_t len, const struct ci_limits *limits)
{
    uint32_t n = 0;

    if (len >= sizeof n)
        memcpy(&n, src, sizeof n);
    if (len < sizeof n || n > len - sizeof n)
        return PyObject_CallFunction(restore_fn, "y#y#n", "", (Py_ssize_t)0, "", (Py_ssize_t)0,
                                     (Py_ssize_t)limits->output_limit);
    return PyObject_CallFunction(restore_fn, "y#y#n", src + sizeof n, (Py_ssize_t)n,
                                 src + sizeof n + n, (Py_ssize_t)(len - sizeof n - n),
                                 (Py_ssize_t)limits->output_limit);
}

void ci_interp_run(uint32_t count, uint32_t flags, const char *src, size_t len,
                   const struct ci_limits *limits, struct ci_cell *out)
{
    int snapshot = (flags & CI_RUN_FLAG_SNAPSHOT) != 0;

    PyObject *res;

    PyEval_RestoreThread(main_ts);
    memset(out, 0, sizeof(*out));
    claim_sigint();
    running_cell = (sig_atomic_t)count;
    drop_stale_interrupts(count);
    /* Whatever tripped Python's SIGINT flag since the last cell is stale;
     * an interrupt for this cell that came early is in asked_cell. */
    PyOS_InterruptOccurred();
    if (asked_cell == running_cell)
        PyErr_SetInterruptEx(SIGINT);
    if (snapshot)
        res = PyObject_CallFunction(take_fn, "n", (Py_ssize_t)limits->output_limit);
    else if (flags & CI_RUN_FLAG_RESTORE)
        res = restore(src, len, limits);
    else
        res = PyObject_CallFunction(run_fn, "Iy#n", (unsigned int)count, src,
                                    (Py_ssize_t)len, (Py_ssize_t)limits->output_limit);
    running_cell = 0;
    /* A call a cell's thread is making is answered before the RESULT,
     * and none starts after it. */
    Py_BEGIN_ALLOW_THREADS
    ci_calls_close();
    Py_END_ALLOW_THREADS
    /* Extensions' C stdio buffers, so their output precedes the RESULT. */
    fflush(NULL);
    if (!res) {
        describe_failure(out);
    } else if (!unpack(res, limits, snapshot, out)) {
        Py_DECREF(res);
        memset(out, 0, sizeof(*out));
        PyErr_SetString(PyExc_SystemError, "bad runner result");
        describe_failure(out);
    }
}

void ci_interp_cell_done(struct ci_cell *cell)
{
    Py_XDECREF((PyObject *)cell->owner);
    cell->owner = NULL;
    main_ts = PyEval_SaveThread();
}

void ci_interp_define(const struct ci_function_def *defs, size_t n, uint32_t args_limit,
                      uint32_t result_limit)
{
    static const char what[] = "cannot define the host functions";
    PyObject *list, *r;

    PyEval_RestoreThread(main_ts);
    if (!(list = PyList_New((Py_ssize_t)n)))
        python_failed(what);
    for (size_t i = 0; i < n; i++) {
        PyObject *def = Py_BuildValue("(s#s#)", defs[i].name, (Py_ssize_t)defs[i].name_len,
                                      defs[i].doc, (Py_ssize_t)defs[i].doc_len);
        if (!def)
            python_failed(what);
        PyList_SET_ITEM(list, (Py_ssize_t)i, def);
    }
    r = PyObject_CallFunction(define_fn, "OII", list, (unsigned)args_limit,
                              (unsigned)result_limit);
    if (!r)
        python_failed(what);
    Py_DECREF(r);
    Py_DECREF(list);
    main_ts = PyEval_SaveThread();
}

void ci_interp_enable_network(uint32_t request_limit, uint32_t response_limit)
{
    PyObject *r;

    PyEval_RestoreThread(main_ts);
    r = PyObject_CallFunction(network_fn, "II", (unsigned)request_limit,
                              (unsigned)response_limit);
    if (!r)
        python_failed("cannot give the cell's HTTP clients to the host");
    Py_DECREF(r);
    main_ts = PyEval_SaveThread();
}
