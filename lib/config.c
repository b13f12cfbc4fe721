/* Session settings: defaults, validated setters, copies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "config.h"
#include "functions.h"
#include "proto.h"
#include "result.h"
#include "worker_start.h"

#define MIB (1024ULL * 1024)
#define GIB (1024 * MIB)

void ci_config_defaults(struct ci_config *cfg)
{
    cfg->timeout_ms = 30000;
    cfg->grace_ms = 2000;
    cfg->startup_ms = 60000;
    cfg->memory_limit = 2 * GIB;
    cfg->file_limit = 1 * GIB;
    cfg->task_limit = CI_TASK_LIMIT_DEFAULT;
    cfg->disk_quota = 512 * MIB;
    cfg->inode_quota = 65536;
    cfg->cpu_limit_s = 0;
    cfg->output_limit = 1 * MIB;
    cfg->spill_limit = 16 * MIB; /* 8 kept: 128 MiB a session at most */
    cfg->display_output_limit = 16 * MIB;
    cfg->display_run_limit = 64 * MIB;
    cfg->figure_dpi = 100;
    cfg->required_layers = CI_SANDBOX_SECCOMP | CI_SANDBOX_RLIMITS | CI_SANDBOX_NO_NEW_PRIVS;
    cfg->workspace_root = NULL;
    cfg->preload = NULL;
    cfg->zygote = 1;
    cfg->manifest = NULL;
    cfg->manifest_key_path = NULL;
    memset(cfg->manifest_key, 0, sizeof cfg->manifest_key);
    cfg->wheelhouse = NULL;
    cfg->functions = NULL;
    cfg->function_count = 0;
    cfg->call_args_limit = 1 * MIB;
    cfg->call_result_limit = 1 * MIB;
    ci_urls_defaults(&cfg->urls);
    cfg->audit = NULL;
}

int ci_config_copy(struct ci_config *dst, const struct ci_config *src)
{
    *dst = *src;
    dst->workspace_root = NULL;
    dst->preload = NULL;
    dst->manifest = NULL;
    dst->manifest_key_path = NULL;
    dst->wheelhouse = NULL;
    dst->urls.rules = NULL;
    dst->urls.count = 0;
    dst->audit = ci_audit_ref(src->audit);
    if (ci_functions_copy(dst, src) != CI_OK || ci_urls_copy(&dst->urls, &src->urls) != CI_OK ||
        (src->workspace_root && !(dst->workspace_root = ci_strdup(src->workspace_root))) ||
        (src->preload && !(dst->preload = ci_strdup(src->preload))) ||
        (src->manifest && !(dst->manifest = ci_strdup(src->manifest))) ||
        (src->manifest_key_path && !(dst->manifest_key_path = ci_strdup(src->manifest_key_path))) ||
        (src->wheelhouse && !(dst->wheelhouse = ci_strdup(src->wheelhouse)))) {
        ci_config_clear(dst);
        return CI_ENOMEM;
    }
    return CI_OK;
}

void ci_config_clear(struct ci_config *cfg)
{
    free(cfg->workspace_root);
    free(cfg->preload);
    free(cfg->manifest);
    free(cfg->manifest_key_path);
    free(cfg->wheelhouse);
    cfg->workspace_root = NULL;
    cfg->preload = NULL;
    cfg->manifest = NULL;
    cfg->manifest_key_path = NULL;
    cfg->wheelhouse = NULL;
    ci_audit_unref(cfg->audit);
    cfg->audit = NULL;
    ci_functions_clear(cfg);
    ci_urls_clear(&cfg->urls);
}

const char *ci_config_preload(const struct ci_config *cfg)
{
    return cfg->preload ? cfg->preload : CI_DEFAULT_PRELOAD;
}

CI_API int ci_config_set_preload(ci_config *cfg, const char *modules)
{
    char *copy;

    if (!cfg || !modules || !ci_preload_valid(modules))
        return CI_EINVAL;
    if (!(copy = ci_strdup(modules)))
        return CI_ENOMEM;
    free(cfg->preload);
    cfg->preload = copy;
    return CI_OK;
}

CI_API int ci_config_set_zygote(ci_config *cfg, int enabled)
{
    if (!cfg || (enabled != 0 && enabled != 1))
        return CI_EINVAL;
    cfg->zygote = enabled;
    return CI_OK;
}

CI_API int ci_config_set_rollback(ci_config *cfg, int enabled)
{
    if (!cfg || (enabled != 0 && enabled != 1))
        return CI_EINVAL;
    cfg->rollback = enabled;
    return CI_OK;
}

static int path_ok(const char *path)
{
    return path && path[0] && strlen(path) <= 4096;
}

/* Sets the manifest and its key: a key file's path (@key_path) or the
 * key's bytes (@key). */
static int set_manifest(ci_config *cfg, const char *path, const char *key_path,
                        const unsigned char *key)
{
    char *copy = NULL, *key_copy = NULL;

    if ((path && !(copy = ci_strdup(path))) || (key_path && !(key_copy = ci_strdup(key_path)))) {
        free(copy);
        return CI_ENOMEM;
    }
    free(cfg->manifest);
    free(cfg->manifest_key_path);
    cfg->manifest = copy;
    cfg->manifest_key_path = key_copy;
    if (key)
        memcpy(cfg->manifest_key, key, sizeof cfg->manifest_key);
    else
        memset(cfg->manifest_key, 0, sizeof cfg->manifest_key);
    return CI_OK;
}

CI_API int ci_config_set_manifest(ci_config *cfg, const char *manifest_path,
                                  const char *public_key_path)
{
    if (!cfg || (manifest_path && (!path_ok(manifest_path) || !path_ok(public_key_path))))
        return CI_EINVAL;
    if (!manifest_path)
        return set_manifest(cfg, NULL, NULL, NULL);
    return set_manifest(cfg, manifest_path, public_key_path, NULL);
}

CI_API int ci_config_set_manifest_key(ci_config *cfg, const char *manifest_path,
                                      const unsigned char *public_key, size_t key_len)
{
    if (!cfg || !path_ok(manifest_path) || !public_key || key_len != sizeof cfg->manifest_key)
        return CI_EINVAL;
    return set_manifest(cfg, manifest_path, NULL, public_key);
}

CI_API int ci_config_set_wheelhouse(ci_config *cfg, const char *dir)
{
    char *copy = NULL;

    if (!cfg || (dir && !path_ok(dir)))
        return CI_EINVAL;
    if (dir && !(copy = ci_strdup(dir)))
        return CI_ENOMEM;
    free(cfg->wheelhouse);
    cfg->wheelhouse = copy;
    return CI_OK;
}

CI_API ci_config *ci_config_new(void)
{
    ci_config *cfg = calloc(1, sizeof *cfg);
    if (cfg)
        ci_config_defaults(cfg);
    return cfg;
}

CI_API void ci_config_free(ci_config *cfg)
{
    if (!cfg)
        return;
    ci_config_clear(cfg);
    free(cfg);
}

CI_API int ci_config_set_timeout_ms(ci_config *cfg, unsigned long ms)
{
    if (!cfg || ms == 0 || ms > CI_TIMEOUT_MAX_MS)
        return CI_EINVAL;
    cfg->timeout_ms = ms;
    return CI_OK;
}

CI_API int ci_config_set_grace_ms(ci_config *cfg, unsigned long ms)
{
    if (!cfg || ms == 0 || ms > 600000UL)
        return CI_EINVAL;
    cfg->grace_ms = ms;
    return CI_OK;
}

CI_API int ci_config_set_startup_timeout_ms(ci_config *cfg, unsigned long ms)
{
    if (!cfg || ms == 0 || ms > 600000UL)
        return CI_EINVAL;
    cfg->startup_ms = ms;
    return CI_OK;
}

CI_API int ci_config_set_memory_limit(ci_config *cfg, unsigned long long bytes)
{
    if (!cfg || bytes < 512 * MIB || bytes > INT64_MAX)
        return CI_EINVAL;
    cfg->memory_limit = bytes;
    return CI_OK;
}

CI_API int ci_config_set_output_limit(ci_config *cfg, size_t bytes)
{
    if (!cfg || bytes < 1024 || bytes > 256 * MIB)
        return CI_EINVAL;
    cfg->output_limit = bytes;
    return CI_OK;
}

CI_API int ci_config_set_spill_limit(ci_config *cfg, unsigned long long bytes)
{
    if (!cfg || (bytes != 0 && bytes < 1024) || bytes > 4 * GIB)
        return CI_EINVAL;
    cfg->spill_limit = bytes;
    return CI_OK;
}

CI_API int ci_config_set_display_limits(ci_config *cfg, size_t per_output, size_t per_run)
{
    if (!cfg || per_output < 1024 || per_run < per_output || per_run > 1 * GIB)
        return CI_EINVAL;
    cfg->display_output_limit = per_output;
    cfg->display_run_limit = per_run;
    return CI_OK;
}

CI_API int ci_config_set_figure_dpi(ci_config *cfg, unsigned dpi)
{
    if (!cfg || dpi < 10 || dpi > 600)
        return CI_EINVAL;
    cfg->figure_dpi = dpi;
    return CI_OK;
}

CI_API int ci_config_set_file_limit(ci_config *cfg, unsigned long long bytes)
{
    if (!cfg || bytes == 0 || bytes > INT64_MAX)
        return CI_EINVAL;
    cfg->file_limit = bytes;
    return CI_OK;
}

CI_API int ci_config_set_task_limit(ci_config *cfg, unsigned long tasks)
{
    if (!cfg || tasks < CI_TASK_LIMIT_MIN || tasks > CI_TASK_LIMIT_MAX)
        return CI_EINVAL;
    cfg->task_limit = tasks;
    return CI_OK;
}

CI_API int ci_config_set_disk_quota(ci_config *cfg, unsigned long long bytes)
{
    if (!cfg || (bytes != 0 && bytes < 1 * MIB) || bytes > INT64_MAX)
        return CI_EINVAL;
    cfg->disk_quota = bytes;
    return CI_OK;
}

CI_API int ci_config_set_inode_quota(ci_config *cfg, unsigned long long inodes)
{
    if (!cfg || inodes < 64 || inodes > UINT32_MAX)
        return CI_EINVAL;
    cfg->inode_quota = inodes;
    return CI_OK;
}

CI_API int ci_config_set_cpu_limit(ci_config *cfg, unsigned long seconds)
{
    if (!cfg || seconds > CI_CPU_LIMIT_MAX_S)
        return CI_EINVAL;
    cfg->cpu_limit_s = seconds;
    return CI_OK;
}

CI_API int ci_config_require_sandbox(ci_config *cfg, unsigned mask)
{
    if (!cfg || (mask & ~(unsigned)CI_LAYER_ALL))
        return CI_EINVAL;
    cfg->required_layers = mask;
    return CI_OK;
}

CI_API int ci_config_set_workspace_root(ci_config *cfg, const char *dir)
{
    char *copy;
    if (!cfg || !dir || dir[0] != '/' || strlen(dir) > CI_WORKSPACE_ROOT_MAX)
        return CI_EINVAL;
    if (!(copy = ci_strdup(dir)))
        return CI_ENOMEM;
    free(cfg->workspace_root);
    cfg->workspace_root = copy;
    return CI_OK;
}

/* Replaces the config's log with one of @path and @fn: sessions started
 * before keep theirs. */
static int set_audit(ci_config *cfg, const char *path, ci_event_fn fn, void *payload)
{
    struct ci_audit *a = NULL;

    if (path || fn) {
        if (!(a = ci_audit_new(path, fn, payload)))
            return CI_ENOMEM;
    }
    ci_audit_unref(cfg->audit);
    cfg->audit = a;
    return CI_OK;
}

CI_API int ci_config_set_audit_log(ci_config *cfg, const char *path)
{
    void *payload;
    ci_event_fn fn;

    if (!cfg || (path && !path_ok(path)))
        return CI_EINVAL;
    fn = ci_audit_fn(cfg->audit, &payload);
    return set_audit(cfg, path, fn, payload);
}

CI_API int ci_config_set_event_fn(ci_config *cfg, ci_event_fn fn, void *payload)
{
    if (!cfg)
        return CI_EINVAL;
    return set_audit(cfg, ci_audit_path(cfg->audit), fn, fn ? payload : NULL);
}
