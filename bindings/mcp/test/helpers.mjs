// Shared helpers of the codeinterp-mcp tests: where the server is, fresh
// workspace roots, an SDK client on a recording transport, and a raw
// newline-delimited JSON-RPC peer for the protocol tests.
//
// CODEINTERP_MCP       the server binary (default: ../../../build/codeinterp-mcp)
// CODEINTERP_MCP_TMP   a directory for the servers' workspace roots (default:
//                      build/mcp-test); every directory down to it must be
//                      searchable by uid 65534 when the tests run as root.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const TOP = resolve(HERE, '../../..');
export const SERVER = resolve(process.env.CODEINTERP_MCP || join(TOP, 'build', 'codeinterp-mcp'));
export const TMP = resolve(process.env.CODEINTERP_MCP_TMP || join(TOP, 'build', 'mcp-test'));
/** A worker that sends the rich outputs a cell lists as JSON (its header says how). */
export const FAKE_WORKER = join(TOP, 'test', 'fake_worker.py');

if (!existsSync(SERVER)) {
    throw new Error(`${SERVER} not found: run make first (or set CODEINTERP_MCP)`);
}

/** The library's version, "MAJOR.MINOR.PATCH", from include/codeinterp.h. */
export function libraryVersion() {
    const h = readFileSync(join(TOP, 'include', 'codeinterp.h'), 'utf8');
    const part = (n) => h.match(new RegExp(`#define CI_VERSION_${n} (\\d+)`))[1];
    return `${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
}

/** A new, empty directory for one server's --workspace-root, mode 0755. */
export function freshRoot() {
    mkdirSync(TMP, { recursive: true, mode: 0o755 });
    const dir = mkdtempSync(join(TMP, 'root-'));
    chmodSync(dir, 0o755); // the worker's uid (65534 under root) searches it
    return dir;
}

/** The entries a server left in its workspace root. */
export function leftIn(root) {
    return existsSync(root) ? readdirSync(root) : [];
}

export const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(buf) {
    return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** An SDK stdio transport that also records every message with its time. */
export class RecordingTransport extends StdioClientTransport {
    constructor(params) {
        super(params);
        this.received = []; // { at, message }
        this.sent = [];
    }
    async start() {
        const inner = this.onmessage;
        this.onmessage = (message, extra) => {
            this.received.push({ at: performance.now(), message });
            inner?.(message, extra);
        };
        return super.start();
    }
    async send(message, options) {
        this.sent.push({ at: performance.now(), message });
        return super.send(message, options);
    }
}

/**
 * Starts the server with the SDK's Client over its StdioClientTransport.
 * Returns { client, transport, root, stderr(), errors, close() }; close()
 * ends the connection as the SDK does (stdin EOF, then SIGTERM after 2 s)
 * and waits for the process to go; protocol.test.mjs tests EOF alone.
 * @env: variables for the server besides the SDK's default ones.
 */
export async function connect(args = [], { env } = {}) {
    const root = freshRoot();
    const transport = new RecordingTransport({
        command: SERVER,
        args: ['--workspace-root', root, ...args],
        env,
        stderr: 'pipe',
        cwd: TMP,
    });
    let err = '';
    transport.stderr.on('data', (d) => { err += d; });
    const client = new Client({ name: 'codeinterp-mcp-tests', version: '1.0.0' });
    const errors = [];
    client.onerror = (e) => errors.push(e);
    await client.connect(transport);
    const pid = transport.pid;
    return {
        client, transport, root, errors, pid,
        stderr: () => err,
        async close() {
            const gone = pid && processAlive(pid) ? waitExit(pid, 30000) : Promise.resolve(true);
            await client.close();
            return gone;
        },
    };
}

/** Runs @fn with a client connected by connect(@args, @options) (@args
 * may be left out); closes it and checks the cleanup. */
export async function withServer(t, args, fn, options) {
    if (typeof args === 'function') { fn = args; args = []; }
    const s = await connect(args, options);
    let ok = false;
    try {
        await fn(s);
        ok = true;
    } finally {
        const gone = await s.close();
        const left = leftIn(s.root);
        rmSync(s.root, { recursive: true, force: true });
        if (!ok && s.stderr()) t.diagnostic(`server stderr: ${s.stderr()}`);
        if (ok) {
            // The SDK reports here what it could not make sense of. Except
            // one thing of its own: it runs notification handlers a
            // microtask late but handles a response at once, so a progress
            // notification read in the same chunk as its request's result
            // (output printed just before a cell ends) finds its handler
            // gone. The server sent them in order; that is not its fault.
            const errors = s.errors.map(String)
                .filter((e) => !/progress notification for an unknown token/.test(e));
            assert.deepEqual(errors, [], 'the SDK client reported errors');
            assert.ok(gone, 'the server did not exit when the SDK closed the connection');
            assert.deepEqual(left, [], 'the server left its session directory behind');
        }
    }
}

export const expectOk = (r, what) =>
    assert.equal(r.isError ?? false, false, `${what} failed: ${JSON.stringify(r.content)}`);

/** Asserts that a call failed, as a tool error or a JSON-RPC error; its text. */
export function expectFailure(settled, what) {
    if (settled.error) return String(settled.error.message);
    assert.equal(settled.result.isError, true,
                 `${what} should have failed: ${JSON.stringify(settled.result)}`);
    return textOf(settled.result);
}

function processAlive(pid) {
    try { process.kill(pid, 0); return true; } catch { return false; }
}

/** Resolves true once @pid is gone (or a zombie), false after @ms. */
export async function waitExit(pid, ms) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
        if (!processAlive(pid)) return true;
        try {
            const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
            if (/\) Z /.test(st)) return true;
        } catch { return true; }
        await sleep(50);
    }
    return false;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The pids of process @pid's children, from /proc/PID/task/TID/children. */
export function childrenOf(pid) {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
        readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
}

/** The peak resident memory (VmHWM) of process @pid so far, in MiB. */
export function peakMiB(pid) {
    const hwm = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/);
    return Number(hwm[1]) / 1024;
}

/** The text items of a tool result, joined by newlines. */
export function textOf(result) {
    return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/** Runs a cell through run_python; asserts nothing. */
export function run(client, code, extra = {}, options = {}) {
    return client.callTool({ name: 'run_python', arguments: { code, ...extra } }, undefined,
                           { timeout: 90000, ...options });
}

/** Calls a tool; resolves { result } or { error } (an McpError). */
export async function settle(promise) {
    try {
        return { result: await promise };
    } catch (error) {
        return { error };
    }
}

/** A raw JSON-RPC peer on the server's stdio: no SDK in the way. */
export class RawPeer {
    constructor(args = [], { root } = {}) {
        this.root = root || freshRoot();
        this.proc = spawn(SERVER, ['--workspace-root', this.root, ...args], {
            stdio: ['pipe', 'pipe', 'pipe'], cwd: TMP,
        });
        this.messages = [];   // parsed lines
        this.sizes = [];      // their sizes in bytes, newline included
        this.badLines = [];   // lines that were not JSON
        this.longestLine = 0; // in bytes, newline included
        this.stderr = '';
        this.waiters = [];
        let buf = '';
        this.proc.stdout.setEncoding('utf8');
        this.proc.stdout.on('data', (chunk) => {
            buf += chunk;
            let nl;
            while ((nl = buf.indexOf('\n')) >= 0) {
                const line = buf.slice(0, nl);
                buf = buf.slice(nl + 1);
                const size = Buffer.byteLength(line) + 1;
                this.longestLine = Math.max(this.longestLine, size);
                if (line.trim() === '') continue;
                try {
                    this.messages.push(JSON.parse(line));
                    this.sizes.push(size);
                } catch {
                    this.badLines.push(line);
                }
                this.wake();
            }
        });
        this.proc.stderr.setEncoding('utf8');
        this.proc.stderr.on('data', (d) => { this.stderr += d; });
        this.proc.stdin.on('error', () => {});
        this.exited = once(this.proc, 'exit').then(([code, signal]) => ({ code, signal }));
        this.proc.on('exit', () => this.wake());
    }
    wake() {
        for (const w of this.waiters.splice(0)) w();
    }
    send(obj) {
        this.proc.stdin.write((typeof obj === 'string' ? obj : JSON.stringify(obj)) + '\n');
    }
    /** The first message (after index @from) that @pred accepts. */
    async next(pred, ms = 60000, from = 0) {
        const end = Date.now() + ms;
        for (;;) {
            const i = this.messages.findIndex((m, k) => k >= from && pred(m));
            if (i >= 0) return this.messages[i];
            if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
                throw new Error(`server exited (${this.proc.exitCode ?? this.proc.signalCode}) ` +
                                `before the expected message; stderr: ${this.stderr}`);
            }
            const left = end - Date.now();
            if (left <= 0) {
                throw new Error(`no expected message within ${ms} ms; got ${JSON.stringify(this.messages)}`);
            }
            await new Promise((r) => {
                const t = setTimeout(r, Math.min(left, 1000));
                this.waiters.push(() => { clearTimeout(t); r(); });
            });
        }
    }
    reply(id, ms) {
        return this.next((m) => m.id === id && ('result' in m || 'error' in m), ms);
    }
    /** The size in bytes of the line that carried @message. */
    sizeOf(message) {
        return this.sizes[this.messages.indexOf(message)];
    }
    async request(id, method, params, ms) {
        this.send({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
        return this.reply(id, ms);
    }
    async initialize(protocolVersion = '2025-06-18') {
        const r = await this.request(0, 'initialize', {
            protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test', version: '0' },
        });
        this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        return r;
    }
    endInput() {
        this.proc.stdin.end();
    }
    kill() {
        if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
    }
    /** Ends stdin, waits for the exit; SIGKILL after @ms. */
    async finish(ms = 60000) {
        this.endInput();
        const t = setTimeout(() => this.kill(), ms);
        const r = await this.exited;
        clearTimeout(t);
        return r;
    }
    cleanup() {
        this.kill();
        unmountUnder(this.root);
        rmSync(this.root, { recursive: true, force: true });
    }
}

/**
 * Unmounts what a killed server left mounted under @root: a root host's
 * session directory is a tmpfs of its own (the disk quota), which a host
 * that dies without freeing its session leaves mounted.
 */
export function unmountUnder(root) {
    let mounts = '';
    try {
        mounts = readFileSync('/proc/self/mounts', 'utf8');
    } catch {
        return;
    }
    for (const line of mounts.split('\n')) {
        const at = (line.split(' ')[1] || '').replace(/\\040/g, ' ');
        if (at.startsWith(`${root}/`))
            spawnSync('umount', ['-l', at]);
    }
}
