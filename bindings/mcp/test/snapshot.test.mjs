// codeinterp-mcp's snapshots: --snapshot FILE and its tool save_snapshot,
// --restore FILE, and the two together, driven by the SDK's client. Each
// test keeps its snapshot files in a directory of its own under the
// tests' directory and removes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
    lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync,
    truncateSync, writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
    expectFailure, expectOk, freshRoot, leftIn, run, settle, SERVER, textOf, TMP, withServer,
} from './helpers.mjs';

/** Runs @fn with a new directory for snapshot files, removed after it. */
async function inSnapDir(fn) {
    mkdirSync(TMP, { recursive: true, mode: 0o755 });
    const dir = mkdtempSync(join(TMP, 'snap-'));
    try {
        await fn(dir);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

const save = (client) =>
    client.callTool({ name: 'save_snapshot', arguments: {} }, undefined, { timeout: 90000 });

/** Starts a server with --snapshot @file, runs @code and saves the session. */
async function saveAfter(t, file, code) {
    await withServer(t, ['--snapshot', file], async ({ client }) => {
        expectOk(await run(client, code), 'the cell');
        expectOk(await save(client), 'save_snapshot');
    });
}

/** @n as the server writes it: 12,345. */
const commas = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The value section of a run_python result. */
const valueOf = (r) => textOf(r).match(/\[value\]\n([\s\S]*?)\n(\[|$)/)?.[1];

/** Starts a server with @args on no input, as a client that sends nothing would. */
function start(args) {
    const root = freshRoot();
    try {
        const r = spawnSync(SERVER, ['--workspace-root', root, ...args],
                            { encoding: 'utf8', timeout: 60000, input: '' });
        return { ...r, left: leftIn(root) };
    } finally {
        rmSync(root, { recursive: true, force: true });
    }
}

test('save_snapshot writes FILE; a server started with --restore of it has the variables and files back', async (t) => {
    await inSnapDir(async (dir) => {
        const file = join(dir, 'session.snap');
        let saved;
        await withServer(t, ['--snapshot', file], async ({ client }) => {
            const { tools } = await client.listTools();
            assert.equal(tools.length, 6);
            const tool = tools.find((x) => x.name === 'save_snapshot');
            assert.ok(tool, 'save_snapshot is not listed with --snapshot');
            assert.deepEqual(tool.inputSchema, { type: 'object', properties: {} });
            assert.equal(tool.annotations.readOnlyHint, false);
            assert.match(tool.description, /what could not be carried/);
            expectOk(await run(client,
                "total = 6 * 7\n" +
                "def twice(v):\n    return 2 * v\n" +
                "open('notes.txt', 'w').write('kept across servers')\n" +
                "squares = (i * i for i in range(5))\n" +
                "next(squares)"), 'the cell');
            saved = await save(client);
        });
        expectOk(saved, 'save_snapshot');
        const size = statSync(file).size;
        const text = textOf(saved);
        assert.ok(text.startsWith(`Saved the session's snapshot: ${commas(size)} bytes written to ${file}.\n`),
                  text);
        // The generator, and only it, is named as left out.
        assert.deepEqual(text.split('\n').filter((l) => /^\w+: /.test(l)),
                         ['squares: a generator in flight']);
        assert.equal(statSync(file).mode & 0o777, 0o600);
        assert.deepEqual(readFileSync(file).subarray(0, 8), Buffer.from('\x89CISNAP\n', 'latin1'));
        assert.deepEqual(readdirSync(dir), ['session.snap'], 'a temporary file was left');

        await withServer(t, ['--restore', file], async ({ client, stderr }) => {
            assert.match(stderr(), /: the snapshot could not carry 1 thing, missing from this session; the first: squares: a generator in flight\n/);
            const { tools } = await client.listTools();
            assert.deepEqual(tools.map((x) => x.name).sort(),
                             ['download_file', 'list_files', 'reset', 'run_python', 'upload_file'],
                             'save_snapshot is listed without --snapshot');
            assert.match(tools.find((x) => x.name === 'run_python').description,
                         /started from a saved snapshot/);
            let r = await run(client, "total, twice(total), open('notes.txt').read(), 'squares' in dir()");
            expectOk(r, 'the restored session');
            assert.equal(valueOf(r), "(42, 84, 'kept across servers', False)");
            const unknown = expectFailure(await settle(save(client)), 'save_snapshot without --snapshot');
            assert.match(unknown, /unknown tool "save_snapshot"/);
            // reset is a fresh interpreter over the files, not the snapshot again.
            expectOk(await client.callTool({ name: 'reset', arguments: {} }), 'reset');
            r = await run(client, "'total' in dir(), open('notes.txt').read()");
            assert.equal(valueOf(r), "(False, 'kept across servers')");
        });
        assert.deepEqual(readdirSync(dir), ['session.snap'], '--restore changed the directory');
        assert.equal(statSync(file).size, size, '--restore changed the file');
    });
});

test('save_snapshot replaces FILE by a rename; a link at FILE is replaced, not followed', async (t) => {
    await inSnapDir(async (dir) => {
        const file = join(dir, 'session.snap');
        const victim = join(dir, 'victim.txt');
        writeFileSync(victim, 'not a snapshot\n');
        symlinkSync(victim, file);
        await withServer(t, ['--snapshot', file], async ({ client }) => {
            expectOk(await run(client, "small = 'x'"), 'the cell');
            let r = await save(client);
            expectOk(r, 'the first save_snapshot');
            assert.match(textOf(r), /Everything was carried/);
            assert.ok(lstatSync(file).isFile(), 'FILE is still a link');
            assert.equal(readFileSync(victim, 'utf8'), 'not a snapshot\n', 'the link was followed');
            const first = lstatSync(file);

            expectOk(await run(client, "big = 'y' * 100000"), 'the cell');
            r = await save(client);
            expectOk(r, 'the second save_snapshot');
            const second = lstatSync(file);
            assert.notEqual(second.ino, first.ino, 'FILE was written in place, not replaced');
            assert.ok(second.size > first.size + 100000 / 2, `${second.size} vs ${first.size}`);
            assert.ok(textOf(r).includes(`${commas(second.size)} bytes written`), textOf(r));
            assert.deepEqual(readdirSync(dir).sort(), ['session.snap', 'victim.txt']);
        });
    });
});

test('a failed save_snapshot is a tool error and leaves FILE as it was', async (t) => {
    await inSnapDir(async (dir) => {
        const sub = join(dir, 'sub');
        const file = join(sub, 'session.snap');
        mkdirSync(sub);
        await withServer(t, ['--snapshot', file], async ({ client }) => {
            expectOk(await run(client, 'kept = 1'), 'the cell');
            expectOk(await save(client), 'save_snapshot');
            const before = sha256(file);

            // A value whose pickling kills the worker: the library's
            // message, a fresh interpreter, and the old snapshot.
            expectOk(await run(client,
                "class Bomb:\n    def __reduce__(self):\n        import os\n        os._exit(3)\n" +
                "bomb = Bomb()"), 'the cell');
            let text = expectFailure(await settle(save(client)), 'a snapshot that kills the worker');
            assert.match(text, /^save_snapshot: the Python process died: .*exited with status 3/);
            assert.match(text, /Nothing was written: the snapshot file keeps what it held\. A fresh interpreter was started/);
            assert.equal(sha256(file), before, 'the snapshot file changed');
            assert.deepEqual(readdirSync(sub), ['session.snap'], 'a temporary file was left');
            const r = await run(client, "'kept' in dir()");
            expectOk(r, 'the next cell');
            assert.equal(valueOf(r), 'False');

            // FILE's directory gone: the system's reason, and no file.
            rmSync(sub, { recursive: true });
            text = expectFailure(await settle(save(client)), 'a snapshot with nowhere to go');
            assert.equal(text, `save_snapshot: input/output error: cannot open the directory of ${file}: ` +
                               'No such file or directory. The snapshot file keeps what it held.');
            assert.deepEqual(readdirSync(dir), []);
        });
    });
});

test('--restore and --snapshot of one FILE: the session goes on across servers', async (t) => {
    await inSnapDir(async (dir) => {
        const file = join(dir, 'session.snap');
        await saveAfter(t, file, 'def bump(n):\n    return n + 1\ncount = bump(0)');
        for (const want of ['2', '3']) {
            await withServer(t, ['--restore', file, '--snapshot', file], async ({ client }) => {
                const r = await run(client, 'count = bump(count)\ncount');
                expectOk(r, 'a cell after a restart');
                assert.equal(valueOf(r), want);
                expectOk(await save(client), 'save_snapshot');
            });
        }
        await withServer(t, ['--restore', file], async ({ client }) => {
            // The history goes on too: this is the fourth cell.
            const r = await run(client, 'count, len(In) - 1, In[1].splitlines()[0]');
            expectOk(r, 'the last server');
            assert.equal(valueOf(r), "(3, 4, 'def bump(n):')");
        });
        assert.deepEqual(readdirSync(dir), ['session.snap']);
    });
});

test('--restore of a cut, missing, oversized or non-regular file: exit 1, one line naming it', async (t) => {
    await inSnapDir(async (dir) => {
        const file = join(dir, 'good.snap');
        await saveAfter(t, file, "open('data.txt', 'w').write('z' * 5000)");
        const whole = readFileSync(file);
        const cut = join(dir, 'cut.snap');
        writeFileSync(cut, whole.subarray(0, whole.length >> 1));
        const big = join(dir, 'big.snap');
        writeFileSync(big, '');
        truncateSync(big, 530 << 20); // over 512M + 1M + 16M, sparse
        const cases = [
            [cut, [], /the Python session could not be restored from \S+cut\.snap: invalid argument: the snapshot is refused: .*SHA-256 does not match/],
            [join(dir, 'missing.snap'), [], /cannot read the snapshot \S+missing\.snap: No such file or directory/],
            [big, ['--memory', '512M', '--disk-quota', '1M'], /the snapshot \S+big\.snap is over the 529 MiB a --restore file may take/],
            [dir, [], /cannot read the snapshot \S+: not a regular file/],
        ];
        for (const [what, extra, reason] of cases) {
            const r = start(['--restore', what, ...extra]);
            assert.equal(r.status, 1, `${what}: exit ${r.status}; stderr: ${r.stderr}`);
            const lines = r.stderr.split('\n').filter(Boolean);
            assert.equal(lines.length, 1, `${what}: ${r.stderr}`);
            assert.ok(lines[0].startsWith('codeinterp-mcp: '), lines[0]);
            assert.ok(lines[0].includes(what), `${what} is not named: ${lines[0]}`);
            assert.match(lines[0], reason);
            assert.equal(r.stdout, '');
            assert.deepEqual(r.left, [], `${what}: the failed start left its directory`);
        }
        // The whole file still restores, under the same limits.
        const ok = start(['--restore', file, '--memory', '512M', '--disk-quota', '1M']);
        assert.equal(ok.status, 0, ok.stderr);
        assert.match(ok.stderr, /session restored from \S+good\.snap/);
    });
});
