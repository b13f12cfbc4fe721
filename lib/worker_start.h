/*
 * What the host and the worker agree on outside the channel's frames
 * (proto.h): how a worker's exit status reads, the ids a root host's
 * worker takes, and the modules it imports before READY. Shared by both
 * sides and by nothing else.
 */
#ifndef CI_WORKER_START_H
#define CI_WORKER_START_H

/* The worker's exit status when the installed files are not those of its
 * package manifest, or it cannot enforce it (lib/worker/manifest.c); its
 * stderr then says why, and the host reports CI_EMANIFEST. */
#define CI_WORKER_EXIT_MANIFEST 18
/* Its exit status when it saw the host's end of its channel close: no
 * one is left to serve (0 would read as a success). */
#define CI_WORKER_EXIT_HOST_GONE 19

/* The user and group a worker started as root switches to ("nobody" and
 * "nogroup" on Debian). A root host hands the session directory to them. */
#define CI_WORKER_UID 65534u
#define CI_WORKER_GID 65534u

/* The tasks (processes and threads) a session's worker may have at once
 * (ci_config_set_task_limit): the worker needs its main thread, the
 * channel's watchdog and a few for the libraries it imports. */
#define CI_TASK_LIMIT_DEFAULT 256u
#define CI_TASK_LIMIT_MIN 16u
#define CI_TASK_LIMIT_MAX 65536u

/* The longest CPU limit (ci_config_set_cpu_limit, the worker's --cpu):
 * a year, in seconds. */
#define CI_CPU_LIMIT_MAX_S 31536000UL

/* What a worker imports before READY unless told otherwise
 * (ci_config_set_preload()). */
#define CI_DEFAULT_PRELOAD "numpy,pandas,matplotlib.pyplot"
#define CI_PRELOAD_MAX 1024u

/* What a zygote with the default list also imports when it can: the
 * analyst's set's modules whose first import costs more than 150 ms
 * (docs/benchmark.md), so a session finds them loaded and shares their
 * pages with the zygote. Each is skipped if it is not installed or the
 * package manifest does not list it; a worker started by exec, which
 * would pay for them at every start, imports none. */
#define CI_ZYGOTE_EXTRAS "statsmodels.api,sklearn,seaborn,sympy"

/* 1 if @list is Python module names (identifiers as the language
 * reference defines them, ASCII only here) joined by dots, the names
 * joined by commas, at most CI_PRELOAD_MAX bytes. */
static inline int ci_preload_valid(const char *list)
{
    int start = 1;
    unsigned len = 0;

    for (const char *p = list; *p; p++, len++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
            (!start && *p >= '0' && *p <= '9'))
            start = 0;
        else if ((*p == '.' || *p == ',') && !start && p[1])
            start = 1;
        else
            return 0;
    }
    return len > 0 && len <= CI_PRELOAD_MAX;
}

#endif /* CI_WORKER_START_H */
