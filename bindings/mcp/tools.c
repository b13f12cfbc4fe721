/*
 * The tools a client sees: their schemas and descriptions (written for a
 * model to read), the session they share, and every tool but run_python
 * (run.c). A tool's failure is a result with isError set, as MCP asks,
 * so the model reads why; only an unknown tool is a JSON-RPC error.
 */
#include "mcp.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* list_files stops after this many entries and this depth. */
#define LIST_MAX_ENTRIES 1000
#define LIST_MAX_DEPTH 16

/* ------------------------------------------------------------- schemas */

static json_t *tool(const char *name, const char *title, const char *description,
                    json_t *properties, json_t *required, int read_only)
{
    json_t *schema = json_pack("{s:s, s:o}", "type", "object", "properties", properties);
    if (schema && required)
        json_object_set_new(schema, "required", required);
    return json_pack("{s:s, s:s, s:s, s:o, s:{s:b, s:b}}", "name", name, "title", title,
                     "description", description, "inputSchema", schema, "annotations",
                     "readOnlyHint", read_only, "openWorldHint", 0);
}

json_t *tools_list(void)
{
    return json_pack(
        "[o, o, o, o, o]",
        tool("run_python", "Run Python",
             "Runs Python code in a persistent, sandboxed Python 3.11 session, like a Jupyter "
             "notebook cell: variables, imports and functions stay defined for later calls. "
             "numpy, pandas and matplotlib are installed; there is no network and no pip. The "
             "working directory holds the uploaded files. Returns text with labelled sections: "
             "[stdout], [stderr], [value] (the repr of a final expression), [error] (the "
             "traceback), [files changed]; each matplotlib figure left open comes back as an "
             "image, and a DataFrame as the final expression also as HTML. Plain Python, not "
             "IPython: no %magics or !shell commands; display() works.",
             json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:i, s:s}}",
                       "code", "type", "string", "description",
                       "The Python source of the cell. End it with an expression to see its value.",
                       "timeout_ms", "type", "integer", "minimum", 1, "maximum", 86400000,
                       "description",
                       "Wall-clock limit for this cell in milliseconds (default: the server's). "
                       "At the limit the cell is interrupted; variables are kept."),
             json_pack("[s]", "code"), 0),
        tool("upload_file", "Upload a file",
             "Writes a file into the session's working directory, replacing any file of that "
             "name, so that Python code can open it by name.",
             json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}",
                       "name", "type", "string", "description",
                       "File name relative to the working directory, such as \"data.csv\" or "
                       "\"sub/data.csv\" (the directory must exist). No absolute paths, no \"..\".",
                       "content_base64", "type", "string", "description",
                       "The file's bytes, base64-encoded."),
             json_pack("[s, s]", "name", "content_base64"), 0),
        tool("download_file", "Download a file",
             "Reads a file from the session's working directory, such as one that Python code "
             "wrote, and returns it as an embedded resource: text for text files (CSV, JSON, "
             "Markdown, HTML...), base64 for others (PNG...).",
             json_pack("{s:{s:s, s:s}}", "name", "type", "string", "description",
                       "File name relative to the working directory."),
             json_pack("[s]", "name"), 1),
        tool("list_files", "List files",
             "Lists the files in the session's working directory and its subdirectories, with "
             "their sizes in bytes.",
             json_object(), NULL, 1),
        tool("reset", "Reset the interpreter",
             "Replaces the Python interpreter with a fresh one: every variable, import and "
             "function is gone. Files in the working directory are kept.",
             json_object(), NULL, 0));
}

int tool_known(const char *name)
{
    static const char *const names[] = {"run_python", "upload_file", "download_file",
                                        "list_files", "reset"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------- results */

json_t *text_content(const char *text)
{
    return json_pack("{s:s, s:o}", "type", "text", "text", json_text(text, strlen(text)));
}

static json_t *tool_result(json_t *content, int is_error)
{
    return json_pack("{s:[o], s:b}", "content", content, "isError", is_error);
}

json_t *tool_error(const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return tool_result(text_content(text), 1);
}

/* A string argument without NUL bytes; NULL if missing or not one. */
static const char *string_arg(const json_t *args, const char *key)
{
    const json_t *v = json_object_get(args, key);
    const char *s = json_string_value(v);
    return s && strlen(s) == json_string_length(v) ? s : NULL;
}

/* A library failure on a file of the session, as a tool error. */
static json_t *file_error(const char *what, int rc)
{
    if (rc == CI_EINVAL)
        return tool_error("%s: invalid file name: a name is relative to the working directory, "
                          "not empty, without a leading \"/\" and without \".\" or \"..\" "
                          "components", what);
    return tool_error("%s: %s: %s", what, ci_strerror(rc), ci_session_errmsg(srv.session));
}

/* ------------------------------------------------------------- session */

/* Replaces the interpreter (dead or alive). 0, or -1 with @why; the
 * workspace stays either way. */
int session_restart(char *why, size_t why_size)
{
    int rc = ci_session_restart(srv.session);
    if (rc != CI_OK) {
        snprintf(why, why_size, "the Python interpreter could not be restarted: %s: %s",
                 ci_strerror(rc), ci_session_errmsg(srv.session));
        return -1;
    }
    return 0;
}

int session_ensure(int need_worker, char *why, size_t why_size)
{
    if (!srv.session) {
        ci_session *s;
        int rc = ci_session_new(&s, srv.cfg);
        if (rc != CI_OK) {
            snprintf(why, why_size, "the Python session could not be started: %s: %s",
                     ci_strerror(rc), ci_session_errmsg(NULL));
            return -1;
        }
        pthread_mutex_lock(&srv.lock);
        srv.session = s;
        pthread_mutex_unlock(&srv.lock);
        return 0;
    }
    if (need_worker && ci_session_pid(srv.session) < 0)
        return session_restart(why, why_size) < 0 ? -1 : 1;
    return 0;
}

/* --------------------------------------------------------------- files */

static json_t *upload_file(const json_t *args)
{
    const char *name = string_arg(args, "name");
    const char *b64 = string_arg(args, "content_base64");
    void *data;
    size_t len;
    char why[1024];
    if (!name || !b64)
        return tool_error("upload_file: \"name\" and \"content_base64\" must be strings");
    int rc = base64_decode(b64, strlen(b64), &data, &len);
    if (rc == -1)
        return tool_error("upload_file: content_base64 is not valid base64");
    if (rc < 0)
        return tool_error("upload_file: out of memory");
    if (session_ensure(0, why, sizeof why) < 0) {
        free(data);
        return tool_error("upload_file: %s", why);
    }
    rc = ci_session_put_file(srv.session, name, data, len);
    free(data);
    if (rc != CI_OK)
        return file_error("upload_file", rc);
    snprintf(why, sizeof why, "Uploaded %zu bytes to %s in the working directory.", len, name);
    return tool_result(text_content(why), 0);
}

static json_t *download_file(const json_t *args)
{
    const char *name = string_arg(args, "name");
    char why[1024];
    struct stat st;
    void *data;
    size_t len;
    if (!name)
        return tool_error("download_file: \"name\" must be a string");
    if (session_ensure(0, why, sizeof why) < 0)
        return tool_error("download_file: %s", why);
    /* Refuse what would not fit in one message before the library reads
     * it all. Only a look beneath the workspace, as the library's own
     * (where openat2 is missing, the library's file limit still holds). */
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS};
    int dir = open(ci_session_workspace(srv.session), O_PATH | O_DIRECTORY | O_CLOEXEC);
    int fd = dir < 0 ? -1 : (int)syscall(SYS_openat2, dir, name, &how, sizeof how);
    int too_big = fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size > srv.max_message / 4 * 3;
    if (fd >= 0)
        close(fd);
    if (dir >= 0)
        close(dir);
    if (too_big)
        return tool_error("download_file: %s is %lld bytes, over the %zu bytes that fit in one "
                          "message (--max-message-bytes)", name, (long long)st.st_size,
                          srv.max_message / 4 * 3);
    int rc = ci_session_get_file(srv.session, name, &data, &len);
    if (rc != CI_OK)
        return file_error("download_file", rc);

    const char *mime = mime_type_of(name);
    char *uri = file_uri(ci_session_workspace(srv.session), name);
    json_t *resource = json_pack("{s:s?, s:s}", "uri", uri, "mimeType", mime);
    free(uri);
    if (resource && mime_is_text(mime) && utf8_valid(data, len)) {
        json_object_set_new(resource, "text", json_stringn_nocheck(data, len));
    } else if (resource) {
        char *b64 = base64_encode(data, len, NULL);
        json_object_set_new(resource, "blob", b64 ? json_string_nocheck(b64) : NULL);
        free(b64);
    }
    ci_free(data);
    return tool_result(json_pack("{s:s, s:o}", "type", "resource", "resource", resource), 0);
}

/* One workspace entry for list_files. */
struct entry {
    char *name;
    long long size; /* -1: not a regular file */
    char kind;      /* 'f' regular file, 'l' link, 'o' other */
};

struct listing {
    struct entry *v;
    size_t n;
    int cut; /* more entries, or deeper ones, than were listed */
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* Walks @fd (a directory, consumed) as @prefix, following no link. */
static void walk(int fd, const char *prefix, int depth, struct listing *l)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    if (!d) {
        close(fd);
        return;
    }
    while ((e = readdir(d))) {
        struct stat st;
        char path[4096];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        snprintf(path, sizeof path, "%s%s", prefix, e->d_name);
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            strncat(path, "/", sizeof path - strlen(path) - 1);
            if (depth >= LIST_MAX_DEPTH) {
                l->cut = 1;
                if (sub >= 0)
                    close(sub);
            } else if (sub >= 0) {
                walk(sub, path, depth + 1, l);
            }
            continue;
        }
        if (l->n == LIST_MAX_ENTRIES) {
            l->cut = 1;
            break;
        }
        struct entry *en = &l->v[l->n];
        if (!(en->name = strdup(path)))
            break;
        en->size = (long long)st.st_size;
        en->kind = S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : 'o';
        l->n++;
    }
    closedir(d);
}

static json_t *list_files(void)
{
    char why[1024];
    struct listing l = {0};
    struct buf b = {0};
    if (session_ensure(0, why, sizeof why) < 0)
        return tool_error("list_files: %s", why);
    const char *ws = ci_session_workspace(srv.session);
    int fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || !(l.v = calloc(LIST_MAX_ENTRIES, sizeof *l.v))) {
        if (fd >= 0)
            close(fd);
        return tool_error("list_files: cannot read the working directory %s", ws);
    }
    walk(fd, "", 0, &l);
    qsort(l.v, l.n, sizeof *l.v, by_name);
    if (l.n == 0)
        buf_printf(&b, "The working directory (%s) is empty.\n", ws);
    else
        buf_printf(&b, "%zu file%s in the working directory (%s):\n", l.n, l.n == 1 ? "" : "s", ws);
    for (size_t i = 0; i < l.n; i++) {
        if (l.v[i].kind == 'f')
            buf_printf(&b, "%s\t%lld byte%s\n", l.v[i].name, l.v[i].size, l.v[i].size == 1 ? "" : "s");
        else
            buf_printf(&b, "%s\t(%s)\n", l.v[i].name,
                       l.v[i].kind == 'l' ? "symbolic link" : "not a regular file");
        free(l.v[i].name);
    }
    free(l.v);
    if (l.cut)
        buf_printf(&b, "[the list is incomplete: over %d entries or %d directories deep]\n",
                   LIST_MAX_ENTRIES, LIST_MAX_DEPTH);
    json_t *result = b.failed ? tool_error("list_files: out of memory")
                              : tool_result(text_content(b.data), 0);
    free(b.data);
    return result;
}

static json_t *reset(void)
{
    char why[1024];
    int rc = session_ensure(0, why, sizeof why);
    if (rc == 0)
        rc = session_restart(why, sizeof why);
    if (rc < 0)
        return tool_error("reset: %s", why);
    return tool_result(text_content("A fresh Python interpreter is running: every variable, "
                                    "import and function is gone. The files in the working "
                                    "directory are kept."), 0);
}

json_t *tool_call(const char *name, json_t *args, const json_t *progress_token)
{
    json_t *empty = NULL, *result;
    if (!args)
        args = empty = json_object();
    if (strcmp(name, "run_python") == 0)
        result = run_python(args, progress_token);
    else if (strcmp(name, "upload_file") == 0)
        result = upload_file(args);
    else if (strcmp(name, "download_file") == 0)
        result = download_file(args);
    else if (strcmp(name, "list_files") == 0)
        result = list_files();
    else
        result = reset();
    json_decref(empty);
    return result;
}
