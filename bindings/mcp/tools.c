/*
 * The tools a client sees: their schemas and descriptions (written for a
 * model to read), the session they share, and every tool but run_python
 * (run.c). A tool's failure is a result with isError set, as MCP asks,
 * so the model reads why; only an unknown tool is a JSON-RPC error.
 */
#include "mcp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* list_files stops after this many entries (files and directories) and
 * this depth. */
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

/* The modules of the preload list, matplotlib.pyplot among them (the
 * library always imports it), separated by ", ". */
static void add_preload(struct buf *b)
{
    const char *p = srv.preload;
    int pyplot = 0;
    while (*p) {
        size_t n = strcspn(p, ",");
        pyplot |= n == 17 && strncmp(p, "matplotlib.pyplot", n) == 0;
        buf_printf(b, "%s%.*s", p == srv.preload ? "" : ", ", (int)n, p);
        p += n + (p[n] == ',');
    }
    if (!pyplot)
        buf_printf(b, ", matplotlib.pyplot");
}

/* run_python's description: what the session has and its limits, as this
 * server set them, so that a model knows them before it meets them. */
static char *run_python_description(void)
{
    char memory[32], file[32], output[32], result[32], chars[32];
    struct buf b = {0};
    buf_printf(&b, "Runs Python code in a persistent, sandboxed Python 3.11 session, as a Jupyter "
               "notebook runs a cell: variables, imports and functions stay defined for later "
               "calls, and IPython's magics work (%%time, %%timeit...); !shell commands, %s"
               "the network do not. The working directory holds the uploaded files.\n",
               srv.wheelhouse ? "" : "pip and ");
    if (srv.restore_file)
        buf_printf(&b, "This session was started from a saved snapshot: variables, functions "
                   "and files of earlier work may be defined already (%%who lists the "
                   "variables, list_files the files).\n");
    if (srv.url_count) {
        buf_printf(&b, "HTTP: urllib.request, requests and pandas (read_csv of a URL) can fetch "
                   "the URLs under");
        for (size_t i = 0; i < srv.url_count; i++)
            buf_printf(&b, "%s %s", i ? "," : "", srv.urls[i]);
        buf_printf(&b, " (the host makes the request); any other URL is refused.\n");
    }
    buf_printf(&b, "Packages: ");
    add_preload(&b);
    buf_printf(&b, " are imported before the first cell, so importing them is instant; %s\n",
               srv.manifest ? "only the packages the operator's signed package manifest lists "
                              "can be imported, and an import of any other fails, saying so."
                            : "for any other, try to import it.");
    if (srv.wheelhouse)
        buf_printf(&b, "Installing: %%pip install NAME (or NAME==VERSION) installs a package "
                   "and what it requires from the wheels the operator approved, and only "
                   "those (for another, the error lists what can be installed); import it "
                   "in the next line. %%pip list shows what is installed.\n");
    if (srv.rollback)
        buf_printf(&b, "A cell that kills the Python process (os._exit, a crash in C code, a "
                   "forbidden system call) is undone: the session goes back to its state "
                   "before that cell, its variables kept (files the cell wrote stay as it left "
                   "them).\n");
    buf_printf(&b, "Limits of this session: a cell may run %lu ms (timeout_ms changes that for "
               "one call), then it is interrupted, its variables kept. Memory: %s of address "
               "space, past which MemoryError. A file a cell writes: at most %s. A cell's "
               "stdout, and its stderr, keep %s each; past that they are cut, and the result "
               "says so. ", srv.timeout_ms, fmt_size(memory, srv.memory_limit),
               fmt_size(file, srv.file_limit), fmt_size(output, srv.output_limit));
    if (srv.max_output_chars)
        buf_printf(&b, "This tool's result shows at most %s characters of stdout and stderr "
                   "together, and half as much of the value and of the error each: of longer "
                   "output the beginning and the end, and between them a line saying how many "
                   "characters (bytes, when the output limit had cut it first) and lines were "
                   "left out (and, when the whole output was kept in a file, its name, to read "
                   "in the next cell). Print summaries rather than whole data.\n",
                   fmt_count(chars, srv.max_output_chars));
    else
        buf_printf(&b, "This tool's result shows stdout and stderr whole, up to the %s one "
                   "result may take.\n", fmt_size(result, srv.max_result));
    buf_printf(&b, "Returns text with labelled sections: [stdout], [stderr], [value] (the repr "
               "of a final expression), [error] (the traceback), [files changed]; each "
               "matplotlib figure left open comes back as an image, after a line saying what "
               "it is. A value or display with a text form, such as a DataFrame, comes back "
               "as that text%s. display() shows what a notebook would once the cell ends: a "
               "display handle's update() replaces what that display shows, and "
               "clear_output() drops what was displayed before it (with wait=True only once "
               "something else is displayed); printed text is kept.",
               srv.html ? " and as its HTML" : " (its HTML only when it has no other form)");
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

json_t *tools_list(void)
{
    char *run = run_python_description(), upload[32], download[32], file[32];
    struct buf up = {0}, down = {0};
    /* base64 takes 4/3 of a file's bytes in one message. */
    ci_uint64 most = srv.max_message / 4 * 3 < srv.file_limit ? srv.max_message / 4 * 3
                                                               : srv.file_limit;
    buf_printf(&up, "Writes a file into the session's working directory, replacing any file of "
               "that name, so that Python code can open it by name. Files up to about %s.",
               fmt_size(upload, most));
    buf_printf(&down, "Reads a file from the session's working directory, such as one that "
               "Python code wrote, and returns it as an embedded resource: text for text files "
               "(CSV, JSON, Markdown, HTML...), base64 for others (PNG...). Files up to about "
               "%s (text files up to about %s).",
               fmt_size(download, srv.max_result / 4 * 3), fmt_size(file, srv.max_result));
    json_t *list = !run || up.failed || down.failed ? NULL : json_pack(
        "[o, o, o, o, o]",
        tool("run_python", "Run Python", run,
             json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:i, s:s}}",
                       "code", "type", "string", "description",
                       "The Python source of the cell. End it with an expression to see its value.",
                       "timeout_ms", "type", "integer", "minimum", 1, "maximum", 86400000,
                       "description",
                       "Wall-clock limit for this cell in milliseconds (default: the server's). "
                       "At the limit the cell is interrupted; variables are kept."),
             json_pack("[s]", "code"), 0),
        tool("upload_file", "Upload a file", up.data,
             json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}",
                       "name", "type", "string", "description",
                       "File name relative to the working directory, such as \"data.csv\" or "
                       "\"sub/data.csv\" (the directory must exist). No absolute paths, no \"..\".",
                       "content_base64", "type", "string", "description",
                       "The file's bytes, base64-encoded."),
             json_pack("[s, s]", "name", "content_base64"), 0),
        tool("download_file", "Download a file", down.data,
             json_pack("{s:{s:s, s:s}}", "name", "type", "string", "description",
                       "File name relative to the working directory."),
             json_pack("[s]", "name"), 1),
        tool("list_files", "List files",
             "Lists the files in the session's working directory and its subdirectories, with "
             "their sizes in bytes: one a line, the name, a tab, the size. A name that holds a "
             "control character (newline, tab...) or starts with a double quote is shown as a "
             "JSON string: in double quotes, with \\n, \\t, \\\" and \\\\ escapes.",
             json_object(), NULL, 1),
        tool("reset", "Reset the interpreter",
             srv.restore_file
                 ? "Replaces the Python interpreter with a fresh one, not the snapshot the "
                   "session started from: every variable, import and function is gone. Files "
                   "in the working directory are kept."
                 : "Replaces the Python interpreter with a fresh one: every variable, import and "
                   "function is gone. Files in the working directory are kept.",
             json_object(), NULL, 0));
    if (list && srv.snapshot_file)
        json_array_append_new(list, tool(
            "save_snapshot", "Save a snapshot of the session",
            "Saves the whole session as a snapshot, replacing the one saved before, so that the "
            "operator can start a later session from it that goes on from here: the variables, "
            "the functions and classes defined in cells, the imports, the input and output "
            "history, and the files of the working directory. The operator chose where it "
            "goes. Saving runs as a cell does, within the cell time limit. Returns the bytes "
            "written and what could not be carried, one a line with the reason: generators "
            "and coroutines in flight, files, sockets, threads and memory maps (by the "
            "variable that holds one), anything pickle refuses, symbolic links and special "
            "files.",
            json_object(), NULL, 0));
    free(run);
    free(up.data);
    free(down.data);
    return list;
}

/* A tool's entry in tools_list(), within @tools; NULL if none. */
static const json_t *tool_entry(const json_t *tools, const char *name)
{
    size_t i;
    const json_t *t;
    json_array_foreach(tools, i, t)
        if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
            return t;
    return NULL;
}

int tool_args_known(const char *name, const json_t *args, char *why, size_t why_size)
{
    json_t *tools = tools_list();
    const json_t *props = json_object_get(json_object_get(tool_entry(tools, name), "inputSchema"),
                                          "properties");
    const char *key;
    const json_t *v;
    int ok = 1;
    json_object_foreach((json_t *)args, key, v) {
        if (json_object_get(props, key))
            continue;
        struct buf b = {0};
        const char *known;
        json_t *unused;
        json_object_foreach((json_t *)props, known, unused)
            buf_printf(&b, "%s%s", b.len ? ", " : "", known);
        snprintf(why, why_size, "tools/call: %s takes no argument \"%.60s\" (%s%s)", name, key,
                 b.len ? "its arguments: " : "it takes none", b.len ? b.data : "");
        free(b.data);
        ok = 0;
        break;
    }
    json_decref(tools);
    return ok;
}

int tool_known(const char *name)
{
    static const char *const names[] = {"run_python", "upload_file", "download_file",
                                        "list_files", "reset"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return srv.snapshot_file && strcmp(name, "save_snapshot") == 0;
}

/* ------------------------------------------------------------- results */

json_t *text_content(const char *text, size_t len)
{
    return json_pack("{s:s, s:o}", "type", "text", "text", json_text(text, len));
}

size_t result_budget(const json_t *id)
{
    /* The answer around the items, and its newline. */
    size_t around = sizeof "{\"jsonrpc\":\"2.0\",\"id\":,\"result\":"
                           "{\"content\":[],\"isError\":false}}\n" - 1 + json_cost(id);
    return srv.max_result > around ? srv.max_result - around : 0;
}

json_t *tool_result(json_t *content, int is_error)
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
    return tool_result(text_content(text, strlen(text)), 1);
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
                          "not empty, without a leading \"/\", without \".\" or \"..\" "
                          "components, and each part at most %d bytes", what, NAME_MAX);
    return tool_error("%s: %s: %s", what, ci_strerror(rc), ci_session_errmsg(srv.session));
}

/* The library's rules for a file name (ci_session_put_file): relative,
 * shorter than PATH_MAX, no empty, "." or ".." part, no trailing "/". And
 * no part over NAME_MAX bytes, which the library would find only as an
 * I/O error (ENAMETOOLONG). */
static int name_valid(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len >= PATH_MAX || name[0] == '/' || name[len - 1] == '/')
        return 0;
    for (const char *p = name; *p; ) {
        size_t n = strcspn(p, "/");
        if (n == 0 || n > NAME_MAX || (n <= 2 && strncmp(p, "..", n) == 0))
            return 0;
        p += n + (p[n] == '/');
    }
    return 1;
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
    if (!name_valid(name))
        return file_error("upload_file", CI_EINVAL);
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
    return tool_result(text_content(why, strlen(why)), 0);
}

/* What a failed open of a workspace file is, as a CI_E* code, as the
 * library's ci_session_get_file() says it: ELOOP is a link on the path,
 * EXDEV a path that leaves the workspace. */
static int open_code(int err)
{
    if (err == ELOOP || err == EXDEV || err == ENOTDIR || err == EISDIR)
        return CI_EUNSAFE;
    return err == ENOENT ? CI_ENOENT : err == ENOMEM ? CI_ENOMEM : CI_EIO;
}

/* Where openat2 is missing (kernels before 5.6, seccomp profiles older
 * than it): a walk from @dir one part of @name at a time, each directory
 * opened without following a link from the one before, so neither a link
 * nor a rename during the walk leads out. */
static int open_walk(int dir, const char *name, int flags)
{
    int cur = dup(dir);
    while (cur >= 0) {
        char part[NAME_MAX + 1];
        size_t n = strcspn(name, "/");
        struct stat st;
        int next, err;
        memcpy(part, name, n); /* name_valid: n <= NAME_MAX */
        part[n] = '\0';
        if (!name[n])
            next = openat(cur, part, flags | O_NOFOLLOW);
        else if ((next = openat(cur, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
                 (fstat(next, &st) < 0 || !S_ISDIR(st.st_mode))) {
            close(next);
            next = -1;
            errno = ENOTDIR;
        }
        err = errno;
        close(cur);
        errno = err;
        if (!name[n] || next < 0)
            return next;
        cur = next;
        name += n + 1;
    }
    return -1;
}

/* Opens @name (valid) beneath the workspace for reading, following no
 * link, as the library does; the descriptor, or -1 with errno. */
static int open_in_workspace(const char *name)
{
    const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    struct open_how how = {.flags = flags, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                                      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    int dir = open(ci_session_workspace(srv.session), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int fd = -1, err, tries = 0;
    if (dir < 0)
        return -1;
    do /* EAGAIN: a rename raced the lookup */
        fd = (int)syscall(SYS_openat2, dir, name, &how, sizeof how);
    while (fd < 0 && (errno == EINTR || errno == EAGAIN) && ++tries < 100);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM))
        fd = open_walk(dir, name, flags);
    err = errno;
    close(dir);
    errno = err;
    return fd;
}

/* The message download_file gives a file that cannot fit in a result. */
static json_t *too_big(const char *name, long long size)
{
    return tool_error("download_file: %s is %lld bytes, too big for one result: as base64 (or as "
                      "escaped text) it would be over the %zu bytes one message may take "
                      "(--max-result-bytes)", name, size, srv.max_result);
}

static json_t *download_file(const json_t *args, size_t budget)
{
    const char *name = string_arg(args, "name");
    char why[1024], *data;
    struct stat st;
    size_t len;
    int fd, err;
    if (!name)
        return tool_error("download_file: \"name\" must be a string");
    if (!name_valid(name))
        return file_error("download_file", CI_EINVAL);
    if (session_ensure(0, why, sizeof why) < 0)
        return tool_error("download_file: %s", why);

    /* One open, and every check and the read on it: a cell may swap names
     * between two opens. */
    if ((fd = open_in_workspace(name)) < 0) {
        err = errno;
        return tool_error("download_file: %s: cannot open %s: %s", ci_strerror(open_code(err)),
                          name, strerror(err));
    }
    if (fstat(fd, &st) < 0) {
        err = errno;
        close(fd);
        return tool_error("download_file: %s: cannot stat %s: %s", ci_strerror(CI_EIO), name,
                          strerror(err));
    }
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        return tool_error("download_file: %s: %s: refused, %s", ci_strerror(CI_EUNSAFE), name,
                          !S_ISREG(st.st_mode) ? "not a regular file"
                                               : "it has more than one hard link");
    }

    /* The item around the file's bytes; what is left of the budget is
     * theirs: text takes its bytes and quotes at least, base64 4/3. */
    const char *mime = mime_type_of(name);
    int text = mime_is_text(mime);
    char *uri = file_uri(ci_session_workspace(srv.session), name);
    json_t *resource = json_pack("{s:s?, s:s}", "uri", uri, "mimeType", mime);
    json_t *item = json_pack("{s:s, s:o}", "type", "resource", "resource", resource);
    free(uri);
    if (!item || json_object_set_new(resource, "blob", json_string("")) < 0) {
        close(fd);
        json_decref(item);
        return tool_error("download_file: out of memory");
    }
    size_t around = json_cost(item) - 2, room = budget > around + 2 ? budget - around - 2 : 0;
    size_t cap = text ? room : room / 4 * 3;
    if ((unsigned long long)st.st_size > cap) {
        close(fd);
        json_decref(item);
        return too_big(name, (long long)st.st_size);
    }
    /* The library reads it, recording the get in the audit log, with the
     * room as its limit, checked on the descriptor it reads from: a cell
     * that swapped the name since this open cannot make it read more. */
    close(fd);
    if ((err = ci_session_get_file_max(srv.session, name, cap, (void **)&data, &len)) != CI_OK) {
        json_decref(item);
        if (err == CI_ETOOBIG) /* the size of the file it opened */
            return too_big(name, (long long)len);
        return file_error("download_file", err);
    }

    /* Text that is not UTF-8, or escapes past the room, goes as base64. */
    json_t *value = NULL;
    if (text && utf8_valid(data, len) && json_text_cost(data, len) - 2 <= room) {
        json_object_del(resource, "blob");
        value = json_stringn_nocheck(data, len);
    } else if ((len + 2) / 3 * 4 <= room) {
        char *b64 = base64_encode(data, len, NULL);
        value = b64 ? json_string_nocheck(b64) : NULL;
        free(b64);
    } else {
        ci_free(data);
        json_decref(item);
        return too_big(name, (long long)len);
    }
    ci_free(data);
    if (json_object_set_new(resource, json_object_get(resource, "blob") ? "blob" : "text",
                            value) < 0) {
        json_decref(item);
        return tool_error("download_file: out of memory");
    }
    return tool_result(item, 0);
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
    size_t dirs; /* directories walked, counted against the limit too */
    int cut;     /* more entries, or deeper ones, than were listed */
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
        if (l->n + l->dirs == LIST_MAX_ENTRIES) {
            l->cut = 1;
            break;
        }
        snprintf(path, sizeof path, "%s%s", prefix, e->d_name);
        if (S_ISDIR(st.st_mode)) {
            l->dirs++;
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
        struct entry *en = &l->v[l->n];
        if (!(en->name = strdup(path)))
            break;
        en->size = (long long)st.st_size;
        en->kind = S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : 'o';
        l->n++;
    }
    closedir(d);
}

static json_t *list_files(size_t budget)
{
    char why[1024];
    struct listing l = {0};
    struct buf b = {0};
    size_t shown = 0, room;
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
    /* Room for the item around the text and the notes after it. */
    room = budget > TEXT_ITEM_COST(2) + 1024 ? budget - TEXT_ITEM_COST(2) - 1024 : 0;
    room = room > json_text_cost(b.data, b.len) ? room - json_text_cost(b.data, b.len) : 0;
    for (; shown < l.n; shown++) {
        struct entry *en = &l.v[shown];
        struct buf line = {0};
        buf_add_name(&line, en->name);
        if (en->kind == 'f')
            buf_printf(&line, "\t%lld byte%s\n", en->size, en->size == 1 ? "" : "s");
        else
            buf_printf(&line, "\t(%s)\n", en->kind == 'l' ? "symbolic link" : "not a regular file");
        size_t cost = line.failed ? room + 1 : json_text_cost(line.data, line.len) - 2;
        if (cost <= room)
            buf_add(&b, line.data, line.len);
        free(line.data);
        if (cost > room)
            break;
        room -= cost;
    }
    if (shown < l.n)
        buf_printf(&b, "[%zu more not shown: the result would exceed --max-result-bytes]\n",
                   l.n - shown);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].name);
    free(l.v);
    if (l.cut)
        buf_printf(&b, "[the list is incomplete: over %d entries (files and directories) or %d "
                   "directories deep]\n", LIST_MAX_ENTRIES, LIST_MAX_DEPTH);
    json_t *result = b.failed ? tool_error("list_files: out of memory")
                              : tool_result(text_content(b.data, b.len), 0);
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
    static const char text[] = "A fresh Python interpreter is running: every variable, import "
                               "and function is gone. The files in the working directory are "
                               "kept.";
    return tool_result(text_content(text, sizeof text - 1), 0);
}

json_t *tool_call(const char *name, json_t *args, const json_t *progress_token, size_t budget)
{
    json_t *empty = NULL, *result;
    if (!args)
        args = empty = json_object();
    if (strcmp(name, "run_python") == 0)
        result = run_python(args, progress_token, budget);
    else if (strcmp(name, "upload_file") == 0)
        result = upload_file(args);
    else if (strcmp(name, "download_file") == 0)
        result = download_file(args, budget);
    else if (strcmp(name, "list_files") == 0)
        result = list_files(budget);
    else if (strcmp(name, "save_snapshot") == 0)
        result = save_snapshot(budget);
    else
        result = reset();
    json_decref(empty);
    return result;
}
