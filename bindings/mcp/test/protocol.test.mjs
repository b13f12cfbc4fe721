// codeinterp-mcp at the wire: a raw child process fed newline-delimited
// JSON-RPC, without the SDK, for what a well-behaved client never sends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshRoot, leftIn, libraryVersion, peakMiB, RawPeer, SERVER, sleep, TMP } from './helpers.mjs';

async function withPeer(t, args, fn) {
    if (typeof args === 'function') { fn = args; args = []; }
    const peer = new RawPeer(args);
    try {
        await fn(peer);
    } catch (e) {
        if (peer.stderr) t.diagnostic(`server stderr: ${peer.stderr}`);
        throw e;
    } finally {
        peer.cleanup();
    }
}

const errorCode = (m) => m.error?.code;

test('initialize negotiates the protocol revision', async (t) => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
        await withPeer(t, async (peer) => {
            const r = await peer.initialize(version);
            assert.equal(r.jsonrpc, '2.0');
            assert.equal(r.result.protocolVersion, version, `asked for ${version}`);
            assert.match(r.result.serverInfo.name, /codeinterp/i);
            assert.equal(r.result.serverInfo.version, libraryVersion());
            assert.ok(r.result.capabilities.tools);
            const list = await peer.request(1, 'tools/list', {});
            assert.equal(list.result.tools.length, 5);
        });
    }
    // A revision the server does not know: it answers with one it supports.
    await withPeer(t, async (peer) => {
        const r = await peer.initialize('2099-01-01');
        assert.ok(['2025-11-25', '2025-06-18'].includes(r.result.protocolVersion),
                  `answered ${r.result.protocolVersion}`);
    });
});

test('malformed input gets JSON-RPC errors and the server keeps serving', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        let seen = peer.messages.length;
        const nextError = async (what) => {
            const m = await peer.next((x) => 'error' in x, 30000, seen);
            seen = peer.messages.indexOf(m) + 1;
            assert.equal(m.jsonrpc, '2.0', `${what}: ${JSON.stringify(m)}`);
            assert.equal(typeof m.error.message, 'string');
            return m;
        };

        peer.send('this is not JSON {');
        let m = await nextError('garbage');
        assert.equal(errorCode(m), -32700, `garbage: ${JSON.stringify(m)}`);
        assert.equal(m.id, null);

        peer.send('{"jsonrpc": "2.0", "id": 5, "method": "ping"');   // cut short
        m = await nextError('truncated object');
        assert.equal(errorCode(m), -32700);

        peer.send('42');
        m = await nextError('a number');
        assert.equal(errorCode(m), -32600, `a number: ${JSON.stringify(m)}`);
        assert.equal(m.id, null);

        peer.send('"ping"');
        m = await nextError('a string');
        assert.equal(errorCode(m), -32600);

        peer.send({ jsonrpc: '2.0', id: 7, method: 'no/such/method', params: {} });
        m = await nextError('unknown method');
        assert.equal(errorCode(m), -32601, `unknown method: ${JSON.stringify(m)}`);
        assert.equal(m.id, 7);

        peer.send({ jsonrpc: '2.0', id: 8 });   // no method
        m = await nextError('no method');
        assert.equal(errorCode(m), -32600);

        peer.send({ jsonrpc: '2.0', id: 9, method: 42 });
        m = await nextError('a number for the method');
        assert.equal(errorCode(m), -32600);

        // A notification gets no answer, even an unknown one.
        peer.send({ jsonrpc: '2.0', method: 'notifications/whatever', params: {} });
        const before = peer.messages.length;
        const pong = await peer.request(10, 'ping');
        assert.deepEqual(pong.result, {});
        assert.equal(peer.messages.indexOf(pong), before, 'something answered the notification');

        // Ids may be strings; the answer carries the same id.
        const s = await peer.request('str-id', 'ping');
        assert.deepEqual(s.result, {});

        // A tools/call with params of the wrong shape.
        const bad = await peer.request(11, 'tools/call', { name: 42 });
        assert.ok(bad.error || bad.result?.isError, JSON.stringify(bad));
        if (bad.error) assert.equal(bad.error.code, -32602);

        // And it still runs cells.
        const r = await peer.request(12, 'tools/call', { name: 'run_python', arguments: { code: '6*7' } });
        assert.match(JSON.stringify(r.result.content), /42/);
        assert.deepEqual(peer.badLines, [], 'the server wrote lines that are not JSON');
    });
});

test('a line over --max-message-bytes is discarded as it comes, not held', async (t) => {
    await withPeer(t, ['--max-message-bytes', '1M'], async (peer) => {
        await peer.initialize();
        const pid = peer.proc.pid;
        // 64 MiB on one line, written in 1 MiB pieces, against a 1 MiB cap.
        const piece = 'x'.repeat(1 << 20);
        for (let i = 0; i < 64; i++) {
            if (!peer.proc.stdin.write(piece)) await new Promise((r) => peer.proc.stdin.once('drain', r));
        }
        peer.send('');
        const err = await peer.next((m) => 'error' in m, 60000);
        assert.equal(err.id, null);
        assert.equal(errorCode(err), -32600, JSON.stringify(err));
        assert.match(err.error.message, /limit|too (long|big|large)/i);
        // Just under the cap: read whole, and a parse error.
        peer.send('y'.repeat(1000 * 1000));
        const parse = await peer.next((m) => m.error?.code === -32700, 60000);
        assert.equal(parse.id, null);
        const pong = await peer.request(1, 'ping', undefined, 60000);
        assert.deepEqual(pong.result, {});
        const mib = peakMiB(pid);
        t.diagnostic(`server peak RSS after a 64 MiB line: ${mib.toFixed(1)} MiB`);
        assert.ok(mib < 48, `the server grew to ${mib.toFixed(1)} MiB`);
        // A message under the cap still works after all that.
        const r = await peer.request(2, 'tools/call', { name: 'run_python', arguments: { code: "'ok'" } });
        assert.match(r.result.content[0].text, /'ok'/);
    });
});

// Parsed, a line of small values takes some 45 times its size (a 63 MB
// line of "[]," grew the server to 3 GB): such a line is refused unparsed,
// and a queued call waits as the text it came as. Measured: a 4 MiB line
// of "[]," peaked at 187 MiB before, 6 MiB now; two queued 4 MiB calls
// behind a running cell at about 35 MiB.
test('a line of many small JSON values is refused unparsed; queued calls cost their size', async (t) => {
    await withPeer(t, ['--max-message-bytes', '4M'], async (peer) => {
        await peer.initialize();
        const bytes = 4 << 20;
        const arrays = (head, tail) => {
            const n = Math.floor((bytes - head.length - tail.length - 3) / 3);
            return `${head}${'[],'.repeat(n)}[]${tail}`;
        };
        let seen = peer.messages.length;
        for (const line of [
            arrays('{"jsonrpc":"2.0","id":1,"method":"ping","params":[', ']}'),
            arrays('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_python",' +
                   '"arguments":{"code":"1","x":[', ']}}}'),
        ]) {
            assert.ok(line.length > bytes - 8 && line.length < bytes, `a ${line.length}-byte line`);
            peer.send(line);
            const m = await peer.next((x) => 'error' in x, 60000, seen);
            seen = peer.messages.indexOf(m) + 1;
            assert.equal(m.id, null);
            assert.equal(errorCode(m), -32600, JSON.stringify(m));
            assert.match(m.error.message, /at most 10000 JSON values/);
        }
        const small = peakMiB(peer.proc.pid);
        t.diagnostic(`server peak RSS after two 4 MiB lines of []: ${small.toFixed(1)} MiB`);
        assert.ok(small < 32, `the server grew to ${small.toFixed(1)} MiB`);

        // Calls of 4 MiB (code that is one long comment) wait behind a
        // running cell: each costs about its size while it waits.
        const call = (id, code) => ({ jsonrpc: '2.0', id, method: 'tools/call',
                                      params: { name: 'run_python', arguments: { code } } });
        peer.send(call(10, "import time\ntime.sleep(2)\n'slept'"));
        const comment = '#' + 'c'.repeat(bytes - 200);
        peer.send(call(11, comment));
        peer.send(call(12, comment + '\n6 * 7'));
        assert.match((await peer.reply(10, 60000)).result.content[0].text, /'slept'/);
        assert.notEqual((await peer.reply(11, 60000)).result.isError, true);
        assert.match((await peer.reply(12, 60000)).result.content[0].text, /\[value\]\n42\n/);
        const queued = peakMiB(peer.proc.pid);
        t.diagnostic(`server peak RSS after two queued 4 MiB calls: ${queued.toFixed(1)} MiB`);
        // About 35 MiB; 110 under ASan, whose quarantine keeps what is freed.
        assert.ok(queued < 160, `the server grew to ${queued.toFixed(1)} MiB`);
    });
});

test('names are compared whole: a NUL byte in a method, tool or version is no match', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        let m = await peer.request(1, 'tools/call\u0000zzz',
                                   { name: 'run_python', arguments: { code: "open('ran', 'w')" } });
        assert.equal(errorCode(m), -32601, JSON.stringify(m));
        m = await peer.request(2, 'ping\u0000');
        assert.equal(errorCode(m), -32601, JSON.stringify(m));
        m = await peer.request(3, 'tools/call', { name: 'run_python\u0000x', arguments: { code: '1' } });
        assert.equal(errorCode(m), -32602, JSON.stringify(m));
        assert.match(m.error.message, /unknown tool/);
        peer.send('{"jsonrpc":"2.0\\u0000","id":4,"method":"ping"}');
        m = await peer.reply(4);
        assert.equal(errorCode(m), -32600, JSON.stringify(m));
        m = await peer.request(5, 'logging/setLevel', { level: 'info\u0000' });
        assert.equal(errorCode(m), -32602, JSON.stringify(m));
        // Nothing ran: the cell of the first request never wrote its file.
        const files = await peer.request(6, 'tools/call', { name: 'list_files', arguments: {} });
        assert.match(files.result.content[0].text, /is empty/);
    });
});

test('an argument a tool does not take is refused at once, before the call queues', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        const call = (id, name, args) => ({ jsonrpc: '2.0', id, method: 'tools/call',
                                            params: { name, arguments: args } });
        peer.send(call(1, 'run_python', { code: "import time\ntime.sleep(3)\n'slow done'" }));
        await sleep(500);
        peer.send(call(2, 'run_python', { code: '1', extra: [1, 2, 3] }));
        const m = await peer.reply(2, 10000);
        assert.equal(errorCode(m), -32602, JSON.stringify(m));
        assert.match(m.error.message, /run_python takes no argument "extra" \(its arguments: code, timeout_ms\)/);
        assert.equal(peer.messages.find((x) => x.id === 1), undefined, 'the refusal waited for the cell');
        peer.send(call(3, 'list_files', { recursive: true }));
        const none = await peer.reply(3, 10000);
        assert.equal(errorCode(none), -32602);
        assert.match(none.error.message, /list_files takes no argument "recursive" \(it takes none\)/);
        assert.match((await peer.reply(1, 60000)).result.content[0].text, /'slow done'/);
        const ok = await peer.request(4, 'tools/call', { name: 'run_python', arguments: { code: '6 * 7', timeout_ms: 5000 } });
        assert.match(ok.result.content[0].text, /\[value\]\n42\n/);
    });
});

test('a string id or progressToken over 1024 bytes is refused: every answer repeats it', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        const long = 'i'.repeat(1025);
        let seen = peer.messages.length;
        peer.send({ jsonrpc: '2.0', id: long, method: 'ping' });
        const m = await peer.next((x) => 'error' in x, 30000, seen);
        seen = peer.messages.indexOf(m) + 1;
        assert.equal(m.id, null);
        assert.equal(errorCode(m), -32600);
        assert.match(m.error.message, /id takes at most 1024 bytes/);
        assert.deepEqual((await peer.request('i'.repeat(1024), 'ping')).result, {});
        const token = await peer.request(1, 'tools/call', {
            name: 'run_python', arguments: { code: '1' }, _meta: { progressToken: long },
        });
        assert.equal(errorCode(token), -32602);
        assert.match(token.error.message, /progressToken takes at most 1024 bytes/);
    });
});

test('--max-result-bytes 1M: 30 figures in one cell, the result fits and says what was left out', async (t) => {
    await withPeer(t, ['--max-result-bytes', '1M'], async (peer) => {
        await peer.initialize();
        // Noise does not compress: each PNG is some 100 KB.
        const r = await peer.request(1, 'tools/call', { name: 'run_python', arguments: { code:
            'import matplotlib.pyplot as plt, numpy as np\n' +
            'for k in range(30):\n' +
            '    plt.figure(figsize=(3, 2))\n' +
            '    plt.imshow(np.random.rand(60, 90))\n' } }, 120000);
        const size = peer.sizeOf(r);
        t.diagnostic(`the result of 30 figures: ${size} bytes`);
        assert.ok(size <= 1 << 20, `a ${size}-byte result line`);
        assert.notEqual(r.result.isError, true, JSON.stringify(r).slice(0, 2000));
        const images = r.result.content.filter((c) => c.type === 'image');
        const text = r.result.content[0].text;
        const attached = text.match(/^\[display \d+: image\/png, \d+x\d+, attached as an image\]$/gm) || [];
        const left = text.match(/^\[display \d+: image\/png, \d+x\d+, left out: the result would exceed --max-result-bytes\]$/gm) || [];
        t.diagnostic(`${images.length} images kept, ${left.length} left out`);
        assert.ok(images.length >= 3 && images.length < 30, `${images.length} images kept`);
        assert.equal(attached.length, images.length);
        assert.equal(left.length, 30 - images.length);
        const total = images.reduce((n, c) => n + c.data.length, 0);
        assert.ok(total > (1 << 20) - 200000, `only ${total} bytes of images in a 1 MiB result`);
        for (const c of images) assert.equal(Buffer.from(c.data, 'base64').readUInt32BE(0), 0x89504e47);
    });
});

test('--max-result-bytes 64K: output of control characters streams and returns within it', async (t) => {
    await withPeer(t, ['--max-result-bytes', '64K'], async (peer) => {
        await peer.initialize();
        // Escaped, each byte of this output takes six ("\u0001").
        const r = await peer.request(1, 'tools/call', {
            name: 'run_python',
            arguments: { code: "import sys\nsys.stdout.write('\\x01' * 200000)\nsys.stdout.flush()\n" +
                               "open('after.txt', 'w').write('x')\n1 / 0" },
            _meta: { progressToken: 'p'.repeat(1024) },
        }, 60000);
        t.diagnostic(`result ${peer.sizeOf(r)} bytes, longest line ${peer.longestLine}`);
        assert.ok(peer.longestLine <= 64 << 10, `a ${peer.longestLine}-byte line`);
        const text = r.result.content[0].text;
        assert.equal(r.result.isError, true);
        // Cut to its head and tail, shorter than --max-output-chars to fit.
        const cut = text.match(/^\[stdout\]\n(\u0001+)\n\[\.\.\. ([\d,]+) characters of one line left out of this tool result \.\.\.\]\n(\u0001+)\n/);
        assert.ok(cut, JSON.stringify(text.slice(0, 100)));
        assert.equal(cut[2], (200000 - cut[1].length - cut[3].length).toLocaleString('en-US'));
        assert.ok(cut[1].length + cut[3].length < 65536 / 6, 'not cut to fit the bytes');
        assert.match(text, /\[error\]\nTraceback[\s\S]*ZeroDivisionError/);
        assert.match(text, /\[files changed\]\nafter\.txt\n/);
        // The notifications carried all of it, in pieces.
        const streamed = peer.messages.filter((m) => m.method === 'notifications/message')
            .map((m) => m.params.data).join('');
        assert.equal(streamed, '\u0001'.repeat(200000));
        const progress = peer.messages.filter((m) => m.method === 'notifications/progress');
        assert.equal(progress.map((m) => m.params.message).join(''), '\u0001'.repeat(200000));
    });
});

test('calls queue while a cell runs; ping is answered at once; a full queue says busy', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        const call = (id, code) => ({ jsonrpc: '2.0', id, method: 'tools/call',
                                      params: { name: 'run_python', arguments: { code } } });
        peer.send(call(1, "import time\ntime.sleep(3)\n'slow done'"));
        await sleep(500);
        peer.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
        const pong = await peer.reply(2, 10000);
        assert.deepEqual(pong.result, {});
        assert.equal(peer.messages.find((m) => m.id === 1), undefined, 'ping waited for the cell');

        // 24 more calls while the first runs: the queue holds some, the rest are refused.
        for (let i = 0; i < 24; i++) peer.send(call(100 + i, `${i} * 2`));
        const first = await peer.reply(1, 60000);
        assert.match(first.result.content[0].text, /'slow done'/);
        let busy = 0, done = 0;
        for (let i = 0; i < 24; i++) {
            const m = await peer.reply(100 + i, 60000);
            if (m.error) {
                assert.equal(m.error.code, -32000, JSON.stringify(m));
                assert.match(m.error.message, /busy/i);
                busy++;
            } else {
                assert.match(m.result.content[0].text, new RegExp(`\\[value\\]\\n${i * 2}\\n`));
                done++;
            }
        }
        t.diagnostic(`${done} queued calls ran, ${busy} were refused as busy`);
        assert.ok(busy >= 1, 'no call was refused: is the queue bounded?');
        assert.ok(done >= 8, `only ${done} calls were queued`);
        // Every request got exactly one answer.
        const ids = peer.messages.filter((m) => 'id' in m && m.id !== null).map((m) => m.id);
        assert.equal(new Set(ids).size, ids.length, 'a request was answered twice');
    });
});

test('cancelling a queued call drops it; the running one goes on', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        const call = (id, code) => ({ jsonrpc: '2.0', id, method: 'tools/call',
                                      params: { name: 'run_python', arguments: { code } } });
        peer.send(call(1, "import time\ntime.sleep(2)\nran = ['first']\n'first done'"));
        peer.send(call(2, "ran.append('second')"));
        await sleep(500);
        peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'test' } });
        const first = await peer.reply(1, 60000);
        assert.match(first.result.content[0].text, /'first done'/);
        const third = await peer.request(3, 'tools/call', { name: 'run_python', arguments: { code: 'ran' } });
        assert.match(third.result.content[0].text, /\['first'\]/, 'the cancelled call ran');
        assert.equal(peer.messages.find((m) => m.id === 2), undefined, 'the dropped call was answered');
        // A cancellation of something unknown is ignored.
        peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 999 } });
        assert.deepEqual((await peer.request(4, 'ping')).result, {});
    });
});

test('SIGTERM interrupts the running cell, removes the workspace, exits 0', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call',
                    params: { name: 'run_python', arguments: { code: 'import time\ntime.sleep(60)' } } });
        await sleep(1000);
        assert.equal(leftIn(peer.root).length, 1);
        const sent = Date.now();
        peer.proc.kill('SIGTERM');
        const t0 = setTimeout(() => peer.kill(), 60000);
        const { code, signal } = await peer.exited;
        clearTimeout(t0);
        assert.equal(signal, null, `killed by ${signal}`);
        assert.equal(code, 0);
        assert.ok(Date.now() - sent < 30000, 'SIGTERM waited for the 60 s cell');
        assert.deepEqual(leftIn(peer.root), []);
    });
});

test('stdin EOF: the server exits 0 and removes its workspace', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        const r = await peer.request(1, 'tools/call', {
            name: 'run_python', arguments: { code: "open('left.txt', 'w').write('x')" },
        });
        assert.notEqual(r.result.isError, true, JSON.stringify(r));
        assert.equal(leftIn(peer.root).length, 1, 'no session directory under the workspace root');
        const { code, signal } = await peer.finish(60000);
        assert.equal(signal, null, `killed by ${signal}`);
        assert.equal(code, 0);
        assert.deepEqual(leftIn(peer.root), [], 'the session directory is still there');
    });
});

test('stdin EOF while a cell runs: the call is answered, then exit 0 and cleanup', async (t) => {
    await withPeer(t, async (peer) => {
        await peer.initialize();
        peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call',
                    params: { name: 'run_python', arguments: { code: "import time\ntime.sleep(3)\n'answered'" } } });
        await sleep(500);
        const { code, signal } = await peer.finish(60000);
        assert.equal(signal, null, `killed by ${signal} (hung after EOF?)`);
        assert.equal(code, 0);
        const r = peer.messages.find((m) => m.id === 1);
        assert.ok(r, 'the call received before EOF was not answered');
        assert.match(r.result.content[0].text, /'answered'/);
        assert.deepEqual(leftIn(peer.root), []);
    });
});

test('the server answers ping before initialize and exits on EOF right away', async (t) => {
    await withPeer(t, async (peer) => {
        const pong = await peer.request(1, 'ping');
        assert.deepEqual(pong.result, {});
        const { code } = await peer.finish(60000);
        assert.equal(code, 0);
        assert.deepEqual(leftIn(peer.root), []);
    });
});

test('--help documents the options; a bad option is refused', () => {
    const version = spawnSync(SERVER, ['--version'], { encoding: 'utf8', timeout: 30000 });
    assert.equal(version.status, 0);
    assert.ok(version.stdout.includes(libraryVersion()), version.stdout);
    const help = spawnSync(SERVER, ['--help'], { encoding: 'utf8', timeout: 30000 });
    assert.equal(help.status, 0, help.stderr);
    for (const opt of ['--timeout-ms', '--memory', '--output-limit', '--task-limit', '--disk-quota', '--inode-quota', '--workspace-root', '--preload',
                       '--manifest', '--public-key', '--wheelhouse', '--max-message-bytes', '--max-result-bytes',
                       '--max-output-chars', '--html', '--rollback', '--snapshot', '--restore', '--help']) {
        assert.ok(help.stdout.includes(opt), `--help does not mention ${opt}`);
    }
    for (const args of [['--no-such-option'], ['--timeout-ms', 'soon'], ['--timeout-ms'], ['--timeout-ms', ''], ['--memory', '1M'],
                        ['--output-limit', '10'], ['--workspace-root', 'relative/dir'],
                        ['--task-limit', '15'], ['--task-limit', '65537'], ['--task-limit', '1K'],
                        ['--disk-quota', '1K'], ['--disk-quota', 'x'], ['--inode-quota', '63'],
                        ['--inode-quota', '1K'],
                        ['--preload', 'not a module'], ['--max-result-bytes', '63K'],
                        ['--max-result-bytes', '2G'], ['stray-argument'],
                        ['--max-output-chars', '999'], ['--max-output-chars', '20K'],
                        ['--max-output-chars', ''], ['--max-output-chars', '268435457'],
                        // --snapshot takes a file in a directory that exists
                        ['--snapshot'], ['--snapshot', ''], ['--snapshot', '/'],
                        ['--snapshot', '/nonexistent/codeinterp-mcp-test/s.snap'],
                        ['--snapshot', TMP], ['--snapshot', `${TMP}/`],
                        ['--restore'], ['--restore', ''],
                        // --manifest and --public-key go together, and take paths
                        ['--manifest', '/m.json'], ['--public-key', '/k.pub'],
                        ['--manifest', '', '--public-key', '/k.pub'],
                        ['--manifest', '/m.json', '--public-key', ''],
                        ['--manifest', '/' + 'm'.repeat(4096), '--public-key', '/k.pub'],
                        ['--manifest'],
                        // --wheelhouse needs --manifest, and takes a path
                        ['--wheelhouse', '/wheels'], ['--wheelhouse'],
                        ['--manifest', '/m.json', '--public-key', '/k.pub', '--wheelhouse', ''],
                        ['--manifest', '/m.json', '--public-key', '/k.pub',
                         '--wheelhouse', '/' + 'w'.repeat(4096)]]) {
        const bad = spawnSync(SERVER, args, { encoding: 'utf8', timeout: 30000, input: '' });
        assert.equal(bad.status, 2, `${args.join(' ')}: exit ${bad.status}, not 2`);
        assert.ok(bad.stderr.length > 0, `${args.join(' ')}: nothing on stderr`);
        assert.equal(bad.stdout, '', `${args.join(' ')}: stdout is the protocol channel`);
    }
});

test('--preload imports modules in every new interpreter; a bad one stops the start', async (t) => {
    // Modules nothing else imports, and pandas, which the default list
    // has and this one does not: the list replaces the default.
    const probe = "import sys\n[m in sys.modules for m in ('sched', 'email.mime.text', 'pandas')]";
    const loaded = /\[True, True, False\]/;
    await withPeer(t, ['--preload', 'sched,email.mime.text'], async (peer) => {
        await peer.initialize();
        const call = (id, name, args) => peer.request(id, 'tools/call', { name, arguments: args });
        let r = await call(1, 'run_python', { code: probe });
        assert.match(r.result.content[0].text, loaded, 'not preloaded at start');
        await call(2, 'reset', {});
        r = await call(3, 'run_python', { code: probe });
        assert.match(r.result.content[0].text, loaded, 'not preloaded after reset');
        await call(4, 'run_python', { code: 'import os\nos._exit(1)' });
        r = await call(5, 'run_python', { code: probe });
        assert.match(r.result.content[0].text, loaded, 'not preloaded after a crash');
    });
    const root = freshRoot();
    try {
        const bad = spawnSync(SERVER, ['--workspace-root', root, '--preload', 'no_such_module_xyz'],
                              { encoding: 'utf8', timeout: 60000, input: '' });
        assert.equal(bad.status, 1, `exit ${bad.status}; stderr: ${bad.stderr}`);
        assert.match(bad.stderr, /no_such_module_xyz/);
        assert.deepEqual(leftIn(root), [], 'a failed start left its directory');
    } finally {
        rmSync(root, { recursive: true, force: true });
    }
});

test('--manifest that does not exist: exit 1, the path on stderr', () => {
    const root = freshRoot();
    try {
        // A well-formed public key file (the NAME.pub of "codeinterp-manifest
        // keygen NAME"), so that what fails is the manifest, which is missing.
        const key = join(root, 'test.pub');
        const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
        writeFileSync(key, `codeinterp-manifest-public-key ${bytes.toString('base64')}\n`);
        const missing = join(root, 'no-such-manifest.json');
        const bad = spawnSync(SERVER, ['--workspace-root', root, '--manifest', missing, '--public-key', key],
                              { encoding: 'utf8', timeout: 60000, input: '' });
        assert.equal(bad.status, 1, `exit ${bad.status}; stderr: ${bad.stderr}`);
        assert.ok(bad.stderr.includes(missing), `stderr does not name ${missing}: ${bad.stderr}`);
        assert.match(bad.stderr, /manifest/);
        assert.equal(bad.stdout, '');
        assert.deepEqual(leftIn(root), ['test.pub'], 'a failed start left its directory');
    } finally {
        rmSync(root, { recursive: true, force: true });
    }
});

test('--wheelhouse without --manifest: exit 2, saying it needs one', () => {
    const root = freshRoot();
    try {
        // A real directory: what is refused is the missing manifest.
        const bad = spawnSync(SERVER, ['--workspace-root', root, '--wheelhouse', root],
                              { encoding: 'utf8', timeout: 30000, input: '' });
        assert.equal(bad.status, 2, `exit ${bad.status}; stderr: ${bad.stderr}`);
        assert.match(bad.stderr, /--wheelhouse needs --manifest/);
        assert.ok(bad.stderr.includes(root), `stderr does not name ${root}: ${bad.stderr}`);
        assert.equal(bad.stdout, '');
        assert.deepEqual(leftIn(root), [], 'a refused start made a session directory');
    } finally {
        rmSync(root, { recursive: true, force: true });
    }
});

test('a workspace root the session cannot use: exit 1 with the reason', () => {
    const bad = spawnSync(SERVER, ['--workspace-root', '/nonexistent/codeinterp-mcp-test'],
                          { encoding: 'utf8', timeout: 60000, input: '' });
    assert.equal(bad.status, 1, `exit ${bad.status}`);
    assert.match(bad.stderr, /could not be started|workspace|nonexistent/i);
    assert.equal(bad.stdout, '');
});

test('an audit log that cannot be opened: exit 1 naming it', () => {
    const bad = spawnSync(SERVER, ['--audit-log', '/nonexistent/codeinterp-mcp-test/audit.log'],
                          { encoding: 'utf8', timeout: 60000, input: '' });
    assert.equal(bad.status, 1, `exit ${bad.status}`);
    assert.match(bad.stderr, /cannot open the audit log \/nonexistent\/codeinterp-mcp-test\/audit\.log/);
    assert.equal(bad.stdout, '');
});
