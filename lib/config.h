/*
 * The session's configuration as the host holds it (config.c): what
 * ci_config_set_* store, copied into each session.
 */
#ifndef CI_CONFIG_H
#define CI_CONFIG_H

#include <stddef.h>

#include "codeinterp.h"
#include "urls.h"

/* A host function (ci_config_add_function, functions.c). */
struct ci_function {
    char *name;
    char *description; /* NULL: none */
    ci_function_fn fn;
    void *payload;
};

struct ci_config {
    unsigned long timeout_ms;
    unsigned long grace_ms;
    unsigned long startup_ms;
    unsigned long long memory_limit;
    unsigned long long file_limit;
    unsigned long task_limit; /* RLIMIT_NPROC in the worker's user namespace */
    unsigned long long disk_quota; /* the session directory's tmpfs size=; 0: none (quota.c) */
    unsigned long long inode_quota; /* its nr_inodes= */
    unsigned long cpu_limit_s; /* a worker's CPU time after its start; 0: none */
    size_t output_limit;
    unsigned long long spill_limit; /* one cut stream's spill file; 0: none */
    size_t display_output_limit; /* one rich output's data */
    size_t display_run_limit;    /* all of a run's rich outputs' data */
    unsigned figure_dpi;
    unsigned required_layers; /* CI_SANDBOX_* */
    char *workspace_root; /* NULL: $TMPDIR, else /tmp */
    char *preload;        /* NULL: CI_DEFAULT_PRELOAD */
    int zygote;           /* 1: fork workers from a warm zygote (zygote.c) */
    int rollback;         /* 1: checkpoint before each cell (rollback.c) */
    char *manifest;       /* NULL: no package manifest (manifest_cache.c) */
    char *manifest_key_path; /* NULL: manifest_key holds the key */
    unsigned char manifest_key[32];
    char *wheelhouse; /* NULL: no wheelhouse, %pip install refused (wheel.c) */
    struct ci_function *functions; /* in the order added */
    size_t function_count;
    size_t call_args_limit;   /* a CALL's JSON arguments (bytes) */
    size_t call_result_limit; /* a host function's JSON value (bytes) */
    struct ci_url_policy urls; /* HTTP through the host (urls.c, fetch.c) */
    struct ci_audit *audit;   /* NULL: no audit trail (audit.h); one reference */
};

void ci_config_defaults(struct ci_config *cfg);
/* Deep copy (the strings and functions; the audit log is shared, one
 * more reference); CI_OK or CI_ENOMEM. */
int ci_config_copy(struct ci_config *dst, const struct ci_config *src);
void ci_config_clear(struct ci_config *cfg);
/* The modules a worker imports before READY, never NULL. */
const char *ci_config_preload(const struct ci_config *cfg);

/* The longest timeout a session or a run may have: a day, in ms
 * (ci_config_set_timeout_ms, ci_run_ex). */
#define CI_TIMEOUT_MAX_MS 86400000UL

/* The longest workspace root, configured or resolved (bytes): the
 * session directory's paths must stay well within PATH_MAX. */
#define CI_WORKSPACE_ROOT_MAX 3000

#endif /* CI_CONFIG_H */
