// codeinterp-mcp driven by the official MCP TypeScript SDK: its Client over
// its StdioClientTransport, as an agent application would use the server.
// Each test starts its own server (about a second) so that one failure
// cannot leave state behind for the next.
import { test } from 'node:test';
import { readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import assert from 'node:assert/strict';
import { EmptyResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
    childrenOf, connect, expectFailure, expectOk, FAKE_WORKER, freshRoot, leftIn, libraryVersion,
    peakMiB, PNG_MAGIC, pngSize, run, settle, sleep, SERVER, textOf, withServer,
} from './helpers.mjs';

const word = (s) => new RegExp(`(^|[^\\w.])${s}([^\\w.]|$)`);

test('initialize: the SDK connects, server name, version and capabilities', async (t) => {
    await withServer(t, async ({ client, transport }) => {
        const info = client.getServerVersion();
        assert.match(info.name, /codeinterp/i);
        assert.equal(info.version, libraryVersion());
        const caps = client.getServerCapabilities();
        assert.ok(caps.tools, 'no tools capability');
        assert.ok(caps.logging, 'no logging capability, yet output streams as logging');
        // The SDK asks for its latest revision; the server must accept it.
        const init = transport.received.find((r) => r.message.id === 0)?.message;
        assert.equal(init.result.protocolVersion, '2025-11-25');
        assert.deepEqual(await client.ping(), {});
    });
});

test('tools/list: the five tools with object input schemas', async (t) => {
    await withServer(t, async ({ client }) => {
        const { tools } = await client.listTools();
        const byName = Object.fromEntries(tools.map((x) => [x.name, x]));
        assert.deepEqual(Object.keys(byName).sort(),
                         ['download_file', 'list_files', 'reset', 'run_python', 'upload_file']);
        const required = {
            run_python: ['code'],
            upload_file: ['content_base64', 'name'],
            download_file: ['name'],
            list_files: [],
            reset: [],
        };
        for (const [name, req] of Object.entries(required)) {
            const tool = byName[name];
            assert.ok(tool.description && tool.description.length > 10, `${name} has no description`);
            assert.equal(tool.inputSchema.type, 'object', `${name}'s schema is not an object`);
            assert.deepEqual([...(tool.inputSchema.required || [])].sort(), req, `${name}'s required`);
            for (const field of req) {
                assert.ok(tool.inputSchema.properties?.[field], `${name} does not describe ${field}`);
            }
        }
        const timeout = byName.run_python.inputSchema.properties.timeout_ms;
        assert.ok(timeout, 'run_python does not describe timeout_ms');
        assert.ok(['integer', 'number'].includes(timeout.type), `timeout_ms is a ${timeout.type}`);
        assert.equal(byName.run_python.inputSchema.properties.code.type, 'string');
    });
});

test('tools/list: the descriptions name the limits and packages this server set', async (t) => {
    const described = async (args) => {
        let out;
        await withServer(t, args, async ({ client }) => {
            const { tools } = await client.listTools();
            out = Object.fromEntries(tools.map((x) => [x.name, x.description]));
        });
        return out;
    };
    const d = await described([]);
    for (const want of ['a cell may run 30000 ms', 'Memory: 2 GiB', 'at most 1 GiB',
                        'keep 1 MiB each', 'at most 20,000 characters of stdout and stderr',
                        'numpy, pandas, matplotlib.pyplot are imported', 'try to import it',
                        'its HTML only when it has no other form']) {
        assert.ok(d.run_python.includes(want), `run_python's description lacks "${want}": ${d.run_python}`);
    }
    assert.match(d.upload_file, /Files up to about 12 MiB\./);
    assert.match(d.download_file, /Files up to about 6 MiB /);

    const o = await described(['--timeout-ms', '4321', '--memory', '768M', '--output-limit', '64K',
                               '--max-output-chars', '3000', '--preload', 'json', '--html',
                               '--max-message-bytes', '4M', '--max-result-bytes', '1M']);
    for (const want of ['a cell may run 4321 ms', 'Memory: 768 MiB', 'keep 64 KiB each',
                        'at most 3,000 characters', 'json, matplotlib.pyplot are imported',
                        'and as its HTML']) {
        assert.ok(o.run_python.includes(want), `run_python's description lacks "${want}": ${o.run_python}`);
    }
    assert.doesNotMatch(o.run_python, /30000|2 GiB|20,000|numpy/);
    assert.match(o.upload_file, /Files up to about 3 MiB\./);
    assert.match(o.download_file, /Files up to about 768 KiB /);
});

test('run_python: state persists from one call to the next', async (t) => {
    await withServer(t, async ({ client }) => {
        const first = await run(client, 'x = 6 * 7');
        expectOk(first, 'x = 6 * 7');
        assert.doesNotMatch(textOf(first), word('42'), 'an assignment has no value');
        const second = await run(client, 'x');
        expectOk(second, 'x');
        assert.match(textOf(second), word('42'));
        const third = await run(client, 'def f(n):\n    return n * x\nf(2)');
        expectOk(third, 'f(2)');
        assert.match(textOf(third), word('84'));
    });
});

test('run_python: stdout and stderr come back, each labelled', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client,
            "import sys\nprint('hello from the cell')\nprint('a warning', file=sys.stderr)\n'done'");
        expectOk(r, 'print');
        const text = textOf(r);
        assert.match(text, /hello from the cell/);
        assert.match(text, /a warning/);
        assert.match(text, /'done'/);
        assert.match(text, /stdout/i, 'stdout is not labelled');
        assert.match(text, /stderr/i, 'stderr is not labelled');
        // The labels sit before what they label.
        assert.ok(text.search(/stdout/i) < text.indexOf('hello from the cell'));
        assert.ok(text.search(/stderr/i) < text.indexOf('a warning'));
    });
});

test('run_python: a matplotlib figure comes back as PNG image content', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client,
            'import matplotlib.pyplot as plt\n' +
            'fig, ax = plt.subplots()\n' +
            'ax.plot([1, 2, 3], [4, 1, 9])\n' +
            "ax.set_title('three points');");
        expectOk(r, 'the plot');
        const images = r.content.filter((c) => c.type === 'image');
        assert.equal(images.length, 1, `expected one image, got ${JSON.stringify(r.content.map((c) => c.type))}`);
        assert.equal(images[0].mimeType, 'image/png');
        const png = Buffer.from(images[0].data, 'base64');
        assert.ok(png.length > 1000, `a ${png.length}-byte PNG`);
        assert.deepEqual(png.subarray(0, 8), PNG_MAGIC, 'not a PNG');
        const { width, height } = pngSize(png);
        assert.ok(width > 100 && height > 100, `a ${width}x${height} image`);
        // Next to the image, before it, a line for a model that cannot see it.
        assert.deepEqual(r.content.map((c) => c.type), ['text', 'text', 'image']);
        assert.equal(r.content[1].text, `[image of display 1: image/png, ${width}x${height} pixels, ` +
                     `${png.length.toLocaleString('en-US')} bytes, drawn by matplotlib: ` +
                     '<Figure size 640x480 with 1 Axes>]');

        // Two figures in one cell: two images; the next cell starts with none.
        const two = await run(client,
            'for k in range(2):\n    plt.figure()\n    plt.plot([k, k + 1])');
        expectOk(two, 'two figures');
        assert.equal(two.content.filter((c) => c.type === 'image').length, 2);
        assert.deepEqual(two.content.map((c) => c.type), ['text', 'text', 'image', 'text', 'image']);
        assert.match(two.content[3].text, /^\[image of display 2: image\/png, \d+x\d+ pixels, [\d,]+ bytes/);
        // An image that is not a figure: its text form says what it is.
        const pil = await run(client, "from PIL import Image\nImage.new('RGB', (30, 20))");
        assert.match(pil.content[1].text, /^\[image of the value: image\/png, 30x20 pixels, [\d,]+ bytes, its text form: <PIL\.Image\.Image image mode=RGB size=30x20>\]$/);
        const none = await run(client, '1 + 1');
        assert.equal(none.content.filter((c) => c.type === 'image').length, 0);
    });
});

test('run_python: a DataFrame comes back as text only; HTML only when it is the only form', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client,
            "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [4, 19]})\ndf");
        expectOk(r, 'the DataFrame');
        assert.deepEqual(r.content.map((c) => c.type), ['text']);
        assert.match(textOf(r), /^\[value\]\n +city +temp\n0 +Oslo +4\n1 +Lima +19\n$/);
        const shown = await run(client, 'display(df)');
        assert.match(textOf(shown), /^\[display 1\]\n +city +temp\n0 +Oslo/);
        assert.doesNotMatch(JSON.stringify(shown), /<table|<style/);

        // HTML whose text form is a default repr is all there is to show.
        const html = await run(client,
            "from IPython.display import HTML\ndisplay(HTML('<b>bold</b>'))\nHTML('<i>it</i>')");
        const texts = html.content.map((c) => c.text);
        assert.ok(texts.includes('[text/html of display 1]\n<b>bold</b>'), JSON.stringify(texts));
        assert.ok(texts.includes('[text/html of the value]\n<i>it</i>'), JSON.stringify(texts));
    });
});

test('--html: a DataFrame also comes back as its HTML table', async (t) => {
    await withServer(t, ['--html'], async ({ client }) => {
        const r = await run(client,
            "import pandas as pd\npd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [4, 19]})");
        expectOk(r, 'the DataFrame');
        const texts = r.content.filter((c) => c.type === 'text').map((c) => c.text);
        const html = texts.find((s) => /<table/i.test(s));
        assert.ok(html, `no text content holds an HTML table: ${JSON.stringify(texts)}`);
        assert.match(html, /^\[text\/html of the value\]\n/);
        assert.match(html, /Oslo/);
        assert.match(html, /<\/table>/i);
        // The plain repr is there as well, for a model that reads text.
        assert.ok(texts.some((s) => /Lima/.test(s) && !/<table/i.test(s)), 'no plain-text value');
    });
});

// Needs the worker that sends update_display_data and clear_output
// (lib/worker/runner.py, proto.h version 2).
test('run_python: display updates fold in, clear_output drops what came before', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client,
            'from IPython.display import display, clear_output\n' +
            "h = display('first', display_id=True)\n" +
            "display('other')\n" +
            "h.update('second')");
        expectOk(r, 'the update');
        assert.match(textOf(r), /^\[display 1\]\n'second'\n\[display 2\]\n'other'\n$/);
        // An update of a display of an earlier call shows on its own.
        const later = await run(client, "h.update('third')");
        assert.match(textOf(later), /^\[display 1\]\n'third'\n$/);

        const cleared = await run(client, "display('gone')\nclear_output()\ndisplay('after')");
        assert.match(textOf(cleared), /^\[display 1\]\n'after'\n$/);
        // With wait, the clear waits for the next output: none came, so
        // what was shown stays; one came, so it alone is shown.
        const waiting = await run(client, "display('kept')\nclear_output(wait=True)");
        assert.match(textOf(waiting), /^\[display 1\]\n'kept'\n$/);
        const frames = await run(client,
            "for i in range(3):\n    clear_output(wait=True)\n    display(f'frame {i}')");
        assert.match(textOf(frames), /^\[display 1\]\n'frame 2'\n$/);
    });
});

test('run_python: how updates and clears fold, from a worker that sends them as told', async (t) => {
    const D = 1, V = 2, U = 3, C = 4;
    const cell = (outputs) => JSON.stringify(outputs);
    await withServer(t, [], async ({ client }) => {
        // Two displays of one id both take its update, shown once; an
        // update while a clear waits does not end the wait, the next
        // display does, and the value comes after it.
        const r = await run(client, cell([
            [D, 0, false, 'p', 'text/plain', "'a'"],
            [D, 1, false, 'p', 'text/html', '<i>b</i>'],
            [D, 1, false, 'p', 'text/plain', "'b'"],
            [U, 2, false, 'p', 'text/html', '<b>new</b>'],
            [U, 2, false, 'p', 'text/plain', "'new'"],
        ]));
        expectOk(r, 'two displays of one id');
        // (Their HTML is not sent: they have a text form.)
        assert.deepEqual(r.content.map((c) => c.text),
                         ["[display 1]\n'new'\n[display 2: the same as display 1]\n"]);

        const waited = await run(client, cell([
            [D, 0, false, 'q', 'text/plain', "'shown'"],
            [C, 1, true, null, '', ''],
            [U, 2, false, 'q', 'text/plain', "'updated'"],
        ]));
        assert.match(textOf(waited), /^\[display 1\]\n'updated'\n$/);
        const ended = await run(client, cell([
            [D, 0, false, 'q', 'text/plain', "'shown'"],
            [C, 1, true, null, '', ''],
            [U, 2, false, 'q', 'text/plain', "'updated'"],
            [D, 3, false, null, 'text/plain', "'next'"],
            [V, 4, false, null, 'text/html', '<table></table>'],
        ]));
        assert.match(ended.content[0].text,
                     /^\[display 1\]\n'next'\n\[the value: text\/html, attached as text\]\n$/);
        // A clear alone leaves nothing to show.
        const alone = await run(client, cell([[C, 0, false, null, '', '']]));
        assert.equal(textOf(alone), '[no output]\n');
    }, { env: { CODEINTERP_WORKER: FAKE_WORKER } });
});

test('upload_file, then compute on the CSV with pandas', async (t) => {
    await withServer(t, async ({ client }) => {
        const csv = 'region,amount\nnorth,10\nsouth,20\neast,12\n';
        const up = await client.callTool({
            name: 'upload_file',
            arguments: { name: 'sales.csv', content_base64: Buffer.from(csv).toString('base64') },
        });
        expectOk(up, 'upload_file');
        assert.match(textOf(up), /sales\.csv/);
        const r = await run(client,
            "import pandas as pd\ndf = pd.read_csv('sales.csv')\n(len(df), int(df['amount'].sum()))");
        expectOk(r, 'read_csv');
        assert.match(textOf(r), /\(3, 42\)/);
        // The bytes arrived unchanged.
        const raw = await run(client, "open('sales.csv').read()");
        assert.match(textOf(raw), /region,amount\\nnorth,10\\nsouth,20\\neast,12\\n/);
    });
});

test('upload_file refuses names outside the workspace and bad base64', async (t) => {
    await withServer(t, async ({ client, root }) => {
        const b64 = Buffer.from('x').toString('base64');
        for (const name of ['../escape.txt', '/etc/escape.txt', '', 'no/such/dir/f.txt']) {
            const s = await settle(client.callTool({ name: 'upload_file', arguments: { name, content_base64: b64 } }));
            expectFailure(s, `upload_file ${JSON.stringify(name)}`);
        }
        const bad = await settle(client.callTool({
            name: 'upload_file', arguments: { name: 'bad.bin', content_base64: '***not base64***' },
        }));
        expectFailure(bad, 'upload_file with invalid base64');
        assert.deepEqual(leftIn(root).filter((n) => n.startsWith('escape')), []);
        const files = await client.callTool({ name: 'list_files', arguments: {} });
        assert.doesNotMatch(textOf(files), /escape|bad\.bin/);
    });
});

test('download_file: an embedded resource with its MIME type; list_files', async (t) => {
    await withServer(t, async ({ client }) => {
        const w = await run(client,
            "with open('report.csv', 'w') as f:\n    f.write('quarter,growth\\nQ1,1.5\\nQ2,-0.25\\n')\n" +
            "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('chart.png')\nplt.close('all')");
        expectOk(w, 'writing files');

        const d = await client.callTool({ name: 'download_file', arguments: { name: 'report.csv' } });
        expectOk(d, 'download_file report.csv');
        const res = d.content.find((c) => c.type === 'resource');
        assert.ok(res, `no resource content: ${JSON.stringify(d.content)}`);
        assert.equal(res.resource.mimeType, 'text/csv');
        assert.match(res.resource.uri, /report\.csv$/);
        const body = res.resource.text ?? Buffer.from(res.resource.blob, 'base64').toString('utf8');
        assert.equal(body, 'quarter,growth\nQ1,1.5\nQ2,-0.25\n');

        const p = await client.callTool({ name: 'download_file', arguments: { name: 'chart.png' } });
        expectOk(p, 'download_file chart.png');
        const img = p.content.find((c) => c.type === 'resource');
        assert.equal(img.resource.mimeType, 'image/png');
        assert.ok(img.resource.blob, 'a PNG must come back as a blob');
        assert.deepEqual(Buffer.from(img.resource.blob, 'base64').subarray(0, 8), PNG_MAGIC);

        const missing = await settle(client.callTool({ name: 'download_file', arguments: { name: 'nope.csv' } }));
        assert.match(expectFailure(missing, 'download of a missing file'), /nope\.csv|no such|not found|exist/i);
        const esc = await settle(client.callTool({ name: 'download_file', arguments: { name: '../lock' } }));
        expectFailure(esc, 'download_file ../lock');

        const l = await client.callTool({ name: 'list_files', arguments: {} });
        expectOk(l, 'list_files');
        const listing = textOf(l);
        assert.match(listing, /report\.csv/);
        assert.match(listing, /chart\.png/);
        assert.doesNotMatch(listing, /nope\.csv/);
    });
});

test('run_python: a NUL byte in stdout hides nothing after it', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client, "print('a\\x00b')\nopen('f.txt', 'w').write('x')\n1/0");
        assert.equal(r.isError, true);
        const text = textOf(r);
        assert.match(text, /^\[stdout\]\na\u0000b\n\[error\]\nTraceback/);
        assert.match(text, /ZeroDivisionError: division by zero\n/);
        assert.match(text, /\[files changed\]\nf\.txt\n$/);
    });
});

test('download_file: a cell swapping names cannot make the server read a big file', async (t) => {
    await withServer(t, async ({ client, pid }) => {
        // A thread exchanges small.txt and a sparse 1 GiB file, over and
        // over: whatever name download_file opens, it must check and read
        // that same file.
        expectOk(await run(client,
            'import ctypes, os, threading\n' +
            'libc = ctypes.CDLL(None, use_errno=True)\n' +
            "open('small.txt', 'w').write('small\\n')\n" +
            "open('big.bin', 'w').close()\n" +
            "os.truncate('big.bin', 1 << 30)\n" +
            'swaps = 0\nstop = False\n' +
            'def swap():\n' +
            '    global swaps\n' +
            '    while not stop:\n' +
            "        if libc.renameat2(-100, b'small.txt', -100, b'big.bin', 2) != 0:\n" +  // RENAME_EXCHANGE
            "            raise OSError(ctypes.get_errno(), 'renameat2')\n" +
            '        swaps += 1\n' +
            'threading.Thread(target=swap, daemon=True).start()'), 'the swapping thread');
        // Between cells the library stops the worker (SIGSTOP), and the
        // thread with it: continued, it swaps while the server reads, as
        // any other process of the worker's uid could.
        for (const child of childrenOf(pid)) process.kill(child, 'SIGCONT');
        // 200 downloads, and more (up to 2000) until both answers are
        // seen: on a loaded machine the swapping thread may hardly run.
        let small = 0, big = 0;
        for (let i = 0; i < 2000 && (i < 200 || small === 0 || big === 0); i++) {
            const d = await settle(client.callTool({ name: 'download_file', arguments: { name: 'small.txt' } }));
            assert.ok(d.result, `download ${i} failed: ${d.error}`);
            if (d.result.isError) {
                assert.match(textOf(d.result),
                             /^download_file: small\.txt is 1073741824 bytes, too big for one result: .* \(--max-result-bytes\)$/);
                big++;
            } else {
                const res = d.result.content[0].resource;
                assert.equal(res.text ?? Buffer.from(res.blob, 'base64').toString(), 'small\n');
                small++;
            }
        }
        // How many swaps a machine's load allows varies (under 1000 in
        // 1.4 s was seen); that both files were read under the name, below,
        // is what shows the race was run.
        const stopped = await run(client, 'stop = True\nswaps > 0');
        assert.match(textOf(stopped), /\[value\]\nTrue\n/, 'the names were never swapped');
        const peak = peakMiB(pid);
        t.diagnostic(`${small} small, ${big} refused as too big; server peak RSS ${peak.toFixed(1)} MiB`);
        assert.ok(small > 0 && big > 0, `${small} small, ${big} big: did the swap run?`);
        assert.ok(peak < 100, `the server grew to ${peak.toFixed(1)} MiB`);
    });
});

test('at the SDK defaults, 12 MiB of figures or a 12 MiB file keep the connection up', async (t) => {
    await withServer(t, async ({ client, transport }) => {
        // 24 figures of noise, each about 500 KB as base64: over the SDK's
        // 10 MiB line limit together.
        const r = await run(client,
            'import matplotlib.pyplot as plt, numpy as np\n' +
            'for k in range(24):\n' +
            '    plt.figure(figsize=(6, 4))\n' +
            '    plt.imshow(np.random.rand(200, 300))\n');
        expectOk(r, '24 figures');
        const images = r.content.filter((c) => c.type === 'image');
        const bytes = images.reduce((n, c) => n + c.data.length, 0);
        const line = Buffer.byteLength(JSON.stringify(transport.received.at(-1).message)) + 1;
        t.diagnostic(`${images.length} of 24 figures kept, ${bytes} bytes of base64, a ${line}-byte line`);
        assert.ok(line <= 8 << 20, `a ${line}-byte result`);
        assert.ok(images.length >= 4 && images.length < 24, `${images.length} images`);
        assert.equal((textOf(r).match(/left out: the result would exceed --max-result-bytes\]/g) || []).length,
                     24 - images.length);

        expectOk(await run(client, "import os\nopen('big.bin', 'wb').write(os.urandom(12 << 20))\n" +
                                   "open('mid.bin', 'wb').write(os.urandom(5 << 20))\n" +
                                   "open('big.csv', 'w').write('x,y\\n' * (1 << 20))\nplt.close('all')"),
                 'writing the files');
        const big = await client.callTool({ name: 'download_file', arguments: { name: 'big.bin' } });
        assert.equal(big.isError, true);
        assert.match(textOf(big), /^download_file: big\.bin is 12582912 bytes, too big for one result: as base64 .* over the 8388608 bytes one message may take \(--max-result-bytes\)$/);
        // Under the limit it still comes, whole.
        const mid = await client.callTool({ name: 'download_file', arguments: { name: 'mid.bin' } });
        expectOk(mid, 'download_file mid.bin');
        assert.equal(Buffer.from(mid.content[0].resource.blob, 'base64').length, 5 << 20);
        const csv = await client.callTool({ name: 'download_file', arguments: { name: 'big.csv' } });
        expectOk(csv, 'download_file big.csv');
        assert.equal(csv.content[0].resource.text, 'x,y\n'.repeat(1 << 20));
        // The SDK is still connected.
        const after = await run(client, '6 * 7');
        assert.match(textOf(after), word('42'));
    });
});

test('run_python: an exception is a tool error with its name and traceback', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client, 'def g(d):\n    return 1 / d\ng(0)');
        assert.equal(r.isError, true);
        const text = textOf(r);
        assert.match(text, /ZeroDivisionError/);
        assert.match(text, /division by zero/);
        assert.match(text, /Traceback/);
        assert.match(text, /return 1 \/ d/, 'the traceback does not show the failing line');

        const syn = await run(client, 'def (:');
        assert.equal(syn.isError, true);
        assert.match(textOf(syn), /SyntaxError/);

        // Output printed before the error still comes back; the session lives on.
        const partial = await run(client, "print('before')\nraise ValueError('custom message')");
        assert.equal(partial.isError, true);
        assert.match(textOf(partial), /before/);
        assert.match(textOf(partial), /ValueError/);
        assert.match(textOf(partial), /custom message/);
        const after = await run(client, '2 ** 10');
        expectOk(after, 'a cell after errors');
        assert.match(textOf(after), word('1024'));
    });
});

test('list_files: directories count against the limit; odd names are quoted', async (t) => {
    await withServer(t, async ({ client }) => {
        expectOk(await run(client,
            "open('bad\\nname.txt', 'w').write('ab')\n" +
            "open('tab\\tname.txt', 'w').write('a')\n" +
            "open('\"quoted\".txt', 'w').write('')\n" +
            "open('plain.txt', 'w').write('abc')"), 'odd names');
        let text = textOf(await client.callTool({ name: 'list_files', arguments: {} }));
        const lines = text.split('\n');
        assert.ok(lines.includes('"bad\\nname.txt"\t2 bytes'), text);
        assert.ok(lines.includes('"tab\\tname.txt"\t1 byte'), text);
        assert.ok(lines.includes('"\\"quoted\\".txt"\t0 bytes'), text);
        assert.ok(lines.includes('plain.txt\t3 bytes'), text);
        assert.equal(JSON.parse(lines.find((l) => l.startsWith('"bad')).split('\t')[0]), 'bad\nname.txt');
        assert.doesNotMatch(text, /incomplete/);
        const changed = await run(client, "open('new\\nfile', 'w').write('x')");
        assert.match(textOf(changed), /\[files changed\]\n"new\\nfile"\n$/);

        // 1500 empty directories: the walk stops at the limit.
        expectOk(await run(client, "import os\nfor k in range(1500):\n    os.mkdir(f'd{k:04}')"), 'mkdir');
        text = textOf(await client.callTool({ name: 'list_files', arguments: {} }));
        assert.match(text, /\[the list is incomplete: over 1000 entries \(files and directories\)/);
    });
});

test('file names with a part over 255 bytes get the name rules, not an I/O error', async (t) => {
    await withServer(t, async ({ client }) => {
        const name = 'n'.repeat(256);
        const rule = /invalid file name: .* each part at most 255 bytes/;
        const up = await client.callTool({ name: 'upload_file', arguments: { name, content_base64: 'eA==' } });
        assert.equal(up.isError, true);
        assert.match(textOf(up), rule);
        const down = await client.callTool({ name: 'download_file', arguments: { name: `sub/${name}` } });
        assert.equal(down.isError, true);
        assert.match(textOf(down), rule);
        // 255 is fine.
        expectOk(await client.callTool({ name: 'upload_file',
                                         arguments: { name: name.slice(1), content_base64: 'eA==' } }), '255 bytes');
        const back = await client.callTool({ name: 'download_file', arguments: { name: name.slice(1) } });
        assert.equal(Buffer.from(back.content[0].resource.blob, 'base64').toString(), 'x');
    });
});

test('run_python: timeout_ms stops a runaway cell; the state survives', async (t) => {
    await withServer(t, async ({ client }) => {
        expectOk(await run(client, "kept = 'still here'"), 'kept = ...');
        const started = Date.now();
        const r = await run(client, 'while True:\n    pass', { timeout_ms: 1000 });
        const took = Date.now() - started;
        assert.equal(r.isError, true);
        assert.match(textOf(r), /time(d)?[ _-]?out|TimeoutError/i);
        assert.ok(took < 60000, `the timed-out call took ${took} ms`);
        // CI_STATUS_TIMEOUT keeps the session and its state.
        const next = await run(client, 'kept');
        expectOk(next, 'the call after a timeout');
        assert.match(textOf(next), /'still here'/);
    });
});

test('cancellation: aborting a call interrupts the cell; the session survives', async (t) => {
    await withServer(t, async ({ client, transport, errors }) => {
        expectOk(await run(client, "marker = 'before'"), 'marker = before');
        const controller = new AbortController();
        const call = run(client,
            "import time\nmarker = 'started'\ntime.sleep(30)\nmarker = 'finished'",
            {}, { signal: controller.signal });
        await sleep(1000);
        const aborted = Date.now();
        controller.abort('test cancels the cell');
        await assert.rejects(call, (e) => /test cancels the cell/.test(String(e?.message)));
        assert.ok(Date.now() - aborted < 5000, 'the SDK did not reject the aborted call promptly');
        const cancelSent = transport.sent.find((s) => s.message.method === 'notifications/cancelled');
        assert.ok(cancelSent, 'the SDK sent no notifications/cancelled');
        const cancelledId = cancelSent.message.params.requestId;

        // The cell was interrupted, not left to run: marker never became 'finished'.
        const next = await run(client, 'marker');
        expectOk(next, 'the call after a cancellation');
        assert.match(textOf(next), /'started'/);
        assert.ok(Date.now() - aborted < 25000, 'the next call waited for the sleeping cell');
        // The spec says a cancelled request gets no response.
        assert.equal(transport.received.filter((r) => r.message.id === cancelledId).length, 0,
                     'the server answered the cancelled request');
        assert.deepEqual(errors.map(String), []);
    });
});

test('streaming: output arrives as logging and progress notifications while the cell runs', async (t) => {
    await withServer(t, async ({ client }) => {
        const logs = [];
        client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
            logs.push({ at: performance.now(), params: n.params });
        });
        const progress = [];
        const r = await run(client,
            "import sys, time\nprint('line one', flush=True)\ntime.sleep(1.5)\n" +
            "print('oops', file=sys.stderr, flush=True)\ntime.sleep(1.5)\nprint('line three')",
            {}, { onprogress: (p) => progress.push({ at: performance.now(), p }) });
        const returned = performance.now();
        expectOk(r, 'the streaming cell');
        assert.match(textOf(r), /line one[\s\S]*line three/);

        const dataOf = (l) => (typeof l.params.data === 'string' ? l.params.data : JSON.stringify(l.params.data));
        const first = logs.find((l) => /line one/.test(dataOf(l)));
        assert.ok(first, `no logging notification with the first line: ${JSON.stringify(logs)}`);
        assert.equal(first.params.logger, 'stdout');
        assert.ok(first.at < returned, 'the first line came after the result');
        // It came while the cell slept (3 s after it), not with the result.
        assert.ok(returned - first.at >= 1000,
                  `the first line came only ${Math.round(returned - first.at)} ms before the result`);
        const err = logs.find((l) => /oops/.test(dataOf(l)));
        assert.ok(err, 'no logging notification with the stderr line');
        assert.equal(err.params.logger, 'stderr');
        assert.ok(err.at < returned - 500, 'the stderr line was not streamed');

        assert.ok(progress.length >= 1, 'no progress notification for a request with a progressToken');
        const firstProgress = progress.find((x) => /line one/.test(x.p.message || ''));
        assert.ok(firstProgress, `no progress message with the first line: ${JSON.stringify(progress)}`);
        assert.ok(returned - firstProgress.at >= 1000, 'progress came only with the result');
        for (let i = 1; i < progress.length; i++) {
            assert.ok(progress[i].p.progress > progress[i - 1].p.progress, 'progress must increase');
        }
    });
});

test('a cell that kills its worker: a tool error, then a restarted session', async (t) => {
    await withServer(t, async ({ client }) => {
        expectOk(await run(client, 'x = 1'), 'x = 1');
        const r = await run(client, 'import os\nos._exit(3)');
        assert.equal(r.isError, true);
        assert.match(textOf(r), /worker|died|exit|killed/i);
        assert.match(textOf(r), word('3'), 'the exit code is not reported');
        assert.match(textOf(r), /A fresh interpreter was started/);
        assert.doesNotMatch(textOf(r), /rolled back/);

        const fresh = await settle(run(client, 'x'));
        assert.match(expectFailure(fresh, 'x in the restarted session'), /NameError/);
        const works = await run(client, '6 * 7');
        expectOk(works, 'a cell in the restarted session');
        assert.match(textOf(works), word('42'));

        // A worker killed by a signal is reported too, and replaced again.
        const sig = await run(client, 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
        assert.equal(sig.isError, true);
        assert.match(textOf(sig), /signal|SIGKILL|killed|died/i);
        const again = await run(client, "'alive'");
        expectOk(again, 'a cell after the second death');
        assert.match(textOf(again), /'alive'/);
    });
});

test('--rollback: a cell that kills its worker is a tool error, and the session is as before it', async (t) => {
    await withServer(t, ['--rollback'], async ({ client, stderr }) => {
        assert.match(stderr(), /session ready, worker pid \d+, workspace .*, rollback on\n/);
        const { tools } = await client.listTools();
        const described = tools.find((x) => x.name === 'run_python').description;
        assert.match(described, /A cell that kills the Python process .* is undone: the session goes back to its state before that cell/);

        expectOk(await run(client, 'x = 5'), 'x = 5');
        const r = await run(client, 'import os\nos._exit(1)');
        assert.equal(r.isError, true);
        const text = textOf(r);
        assert.match(text, /^\[killed\]\nThe Python process died \(WorkerDied: the worker exited with status 1;/m);
        assert.match(text, /the session was rolled back to its state before the cell\)\. Its variables and imports are as they were before this cell/);
        assert.doesNotMatch(text, /fresh interpreter/);

        const kept = await run(client, 'x');
        expectOk(kept, 'x after the rollback');
        assert.match(textOf(kept), word('5'));
        assert.doesNotMatch(textOf(kept), /\[note\]/, 'the rolled back session was restarted');
    });
});

test('--rollback without a PID namespace: said so at start, not promised, and a kill restarts', async (t) => {
    // $CODEINTERP_WORKER turns the zygote off: the worker is started by
    // exec, without the PID namespace that rollback needs.
    const worker = join(dirname(SERVER), 'codeinterp-worker');
    await withServer(t, ['--rollback'], async ({ client, stderr }) => {
        assert.match(stderr(), /--rollback is not in effect: it needs a worker in a PID namespace/);
        const { tools } = await client.listTools();
        assert.doesNotMatch(tools.find((x) => x.name === 'run_python').description, /is undone/);
        expectOk(await run(client, 'x = 5'), 'x = 5');
        const r = await run(client, 'import os\nos._exit(1)');
        assert.equal(r.isError, true);
        assert.match(textOf(r), /A fresh interpreter was started/);
        assert.doesNotMatch(textOf(r), /rolled back/);
        assert.match(expectFailure(await settle(run(client, 'x')), 'x after the restart'), /NameError/);
    }, { env: { CODEINTERP_WORKER: worker } });
});

test('reset: a fresh interpreter with the same workspace', async (t) => {
    await withServer(t, async ({ client }) => {
        expectOk(await run(client, "y = 123\nopen('keep.txt', 'w').write('kept')"), 'setup');
        const r = await client.callTool({ name: 'reset', arguments: {} });
        expectOk(r, 'reset');
        assert.ok(textOf(r).length > 0, 'reset says nothing');
        const gone = await settle(run(client, 'y'));
        assert.match(expectFailure(gone, 'y after reset'), /NameError/);
        const file = await run(client, "open('keep.txt').read()");
        expectOk(file, 'reading the file after reset');
        assert.match(textOf(file), /'kept'/);
        const l = await client.callTool({ name: 'list_files', arguments: {} });
        assert.match(textOf(l), /keep\.txt/);
    });
});

test('bad tool calls: unknown tool, missing or mistyped arguments', async (t) => {
    await withServer(t, async ({ client }) => {
        expectFailure(await settle(client.callTool({ name: 'no_such_tool', arguments: {} })), 'an unknown tool');
        expectFailure(await settle(client.callTool({ name: 'run_python', arguments: {} })), 'run_python without code');
        expectFailure(await settle(client.callTool({ name: 'run_python', arguments: { code: 42 } })),
                      'run_python with a number for code');
        expectFailure(await settle(run(client, '1', { timeout_ms: 'soon' })), 'a string timeout_ms');
        expectFailure(await settle(client.callTool({ name: 'download_file', arguments: {} })), 'download_file without name');
        const ok = await run(client, "'still serving'");
        expectOk(ok, 'a call after the bad ones');
        assert.match(textOf(ok), /still serving/);
    });
});

test('--timeout-ms sets the default limit of a cell', async (t) => {
    await withServer(t, ['--timeout-ms', '1500'], async ({ client }) => {
        const r = await run(client, 'while True:\n    pass');
        assert.equal(r.isError, true);
        assert.match(textOf(r), /time(d)?[ _-]?out|TimeoutError/i);
        // A per-call timeout_ms still lets a cell run longer than the default.
        const longer = await run(client, "import time\ntime.sleep(2)\n'slept'", { timeout_ms: 10000 });
        expectOk(longer, 'a 2 s cell with timeout_ms 10000');
        assert.match(textOf(longer), /'slept'/);
    });
});

test('--output-limit caps what a cell prints, and says so', async (t) => {
    await withServer(t, ['--output-limit', '2048'], async ({ client }) => {
        const r = await run(client, "print('x' * 100000)");
        const text = textOf(r);
        const xs = (text.match(/x{100,}/g) || []).join('').length;
        assert.ok(xs > 0 && xs <= 2048, `${xs} of the 100000 bytes came back`);
        assert.match(text, /truncat|cut|limit|omitted|discarded/i, 'the cut is not marked');
    });
});

/** The characters (code points) of @s, as the server counts them. */
const chars = (s) => [...s].length;
const lineBreaks = (s) => s.split('\n').length - 1;
/** A number as the server's marker writes it, "181,234". */
const count = (n) => n.toLocaleString('en-US');
// The line between a cut stream's head and tail: what it left out, in
// characters, or in bytes when the library's own cut is counted in; and
// the file holding the whole stream, when the library kept one.
const MARKER = /^\[\.\.\. ([\d,]+) (characters|bytes) (?:\(([\d,]+) lines?\)|of one line) left out of this tool result(?:; the whole output is in (\S+): read it with open\(\) in the next cell)? \.\.\.\]$/m;

/**
 * What the @label section of a result's @text shows of @printed, the whole
 * stream: { head, tail, marker, left, lines, file }, after checking that
 * the head and tail are the stream's own and the marker counts exactly
 * what lies between them. @next: what follows the section ('' at the end).
 */
function cutSection(text, label, printed, next = '') {
    const start = text.indexOf(`[${label}]\n`);
    assert.ok(start >= 0, `no [${label}] section in ${text.slice(0, 300)}`);
    const end = next ? text.indexOf(next, start) : text.length;
    const body = text.slice(start + label.length + 3, end);
    const m = body.match(MARKER);
    assert.ok(m, `no marker in [${label}]: ${body.slice(0, 200)} ... ${body.slice(-200)}`);
    let head = body.slice(0, m.index);
    // A head cut inside a line gets a line break before the marker.
    if (!printed.startsWith(head)) head = head.slice(0, -1);
    let tail = body.slice(m.index + m[0].length + 1);
    if (!printed.endsWith(tail)) tail = tail.slice(0, -1); // the newline a section ends with
    assert.ok(printed.startsWith(head), `[${label}]'s head is not the stream's`);
    assert.ok(printed.endsWith(tail), `[${label}]'s tail is not the stream's`);
    const size = m[2] === 'bytes' ? Buffer.byteLength : chars;
    const left = size(printed) - size(head) - size(tail);
    const lines = lineBreaks(printed) - lineBreaks(head) - lineBreaks(tail);
    assert.equal(m[1], count(left), `the marker's ${m[2]}: ${m[0]}`);
    if (lines === 0) assert.equal(m[3], undefined, m[0]);
    else assert.equal(m[3], count(lines), `the marker's lines: ${m[0]}`);
    return { head, tail, marker: m[0], left, lines, file: m[4] };
}

const rows = (n, prefix = 'row') => Array.from({ length: n }, (_, i) => `${prefix} ${i}\n`).join('');

test('run_python: 200,000 printed lines come back as their head and tail, 20,000 characters', async (t) => {
    // An output limit the print fits in: the server alone cuts.
    await withServer(t, ['--output-limit', '4M'], async ({ client }) => {
        const r = await run(client, "for i in range(200000):\n    print(f'row {i}')");
        expectOk(r, 'the print');
        const text = textOf(r);
        const printed = rows(200000);
        t.diagnostic(`${printed.length} characters printed, a ${text.length}-character result`);
        assert.ok(text.length < 20400, `a ${text.length}-character result`);
        const { head, tail, marker } = cutSection(text, 'stdout', printed);
        t.diagnostic(marker);
        assert.match(head, /^row 0\nrow 1\n/);
        assert.match(tail, /\nrow 199999\n$/);
        // Half each, cut at line breaks.
        assert.ok(head.length <= 10000 && head.length > 10000 - 12, `a ${head.length}-character head`);
        assert.ok(tail.length <= 10000 && tail.length > 10000 - 12, `a ${tail.length}-character tail`);
        assert.ok(head.endsWith('\n') && tail.startsWith('row '), 'not cut at line breaks');
        assert.doesNotMatch(marker, /whole output is in/, 'a file named that the library did not keep');
    });
});

test('run_python: at the default limits a 200,000-line print gives a result of some 20 KB', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client, "for i in range(200000):\n    print(f'row {i}')");
        const text = textOf(r);
        t.diagnostic(`a ${text.length}-character result`);
        assert.ok(text.length < 20400, `a ${text.length}-character result`);
        assert.match(text, /^\[stdout\]\nrow 0\nrow 1\n/);
        const marker = text.match(MARKER);
        assert.ok(marker, `no marker: ${text.slice(0, 100)}`);
        t.diagnostic(marker[0]);
        // The library kept the stream's head and tail, and all of it in a
        // file: the one line counts both cuts, exactly.
        assert.equal(marker[4], '.outputs/cell-1.stdout', marker[0]);
        const { tail, file } = cutSection(text, 'stdout', rows(200000), '[files changed]\n');
        assert.match(tail, /\nrow 199999\n$/);
        const whole = await run(client, `import os\nprint(os.path.getsize('${file}'), ` +
                                        `sum(1 for _ in open('${file}')))`);
        assert.equal(textOf(whole), `[stdout]\n${Buffer.byteLength(rows(200000))} 200000\n`);
    });
});

test('run_python: a long value and a long traceback get half the budget each', async (t) => {
    await withServer(t, async ({ client }) => {
        const r = await run(client, "'ab' * 30000 + 'end'");
        expectOk(r, 'the string');
        const text = textOf(r);
        t.diagnostic(`a ${text.length}-character result`);
        assert.ok(text.length < 10400, `a ${text.length}-character result`);
        const printed = "'" + 'ab'.repeat(30000) + "end'";
        const { head, tail, marker } = cutSection(text, 'value', printed + '\n');
        t.diagnostic(marker);
        assert.ok(head.startsWith("'abab") && tail.endsWith("abend'\n"), 'head or tail');
        assert.equal(head.length + tail.length, 10000 + 1);
        const e = await run(client, "raise ValueError('m' * 50000 + 'end')");
        const etext = textOf(e);
        assert.ok(etext.length < 10400, `a ${etext.length}-character result`);
        assert.match(etext, /^\[error\]\nTraceback \(most recent call last\):\n  File "<cell 2>"/);
        assert.match(etext, /\n\[\.\.\. [\d,]+ characters of one line left out of this tool result \.\.\.\]\n/);
        assert.match(etext, /mmmend\n/);
    });
});

test('--max-output-chars: stdout and stderr share it, a short stream whole; characters, not bytes', async (t) => {
    await withServer(t, ['--max-output-chars', '2000'], async ({ client }) => {
        const r = await run(client,
            "import sys\nfor i in range(5000):\n    print(f'out {i}')\n" +
            "for i in range(3):\n    print(f'err {i}', file=sys.stderr)");
        const text = textOf(r);
        const err = rows(3, 'err');
        assert.ok(text.endsWith(`[stderr]\n${err}`), `stderr is not whole: ${text.slice(-200)}`);
        const { head, tail } = cutSection(text, 'stdout', rows(5000, 'out'), '[stderr]\n');
        assert.ok(chars(head) + chars(tail) <= 2000 - chars(err), 'over the budget');
        assert.ok(chars(head) + chars(tail) > 2000 - chars(err) - 20, 'far under the budget');

        // Both long: half each.
        const both = await run(client,
            "import sys\nfor i in range(5000):\n    print(f'out {i}')\n" +
            "for i in range(5000):\n    print(f'err {i}', file=sys.stderr)");
        const o = cutSection(textOf(both), 'stdout', rows(5000, 'out'), '[stderr]\n');
        const e = cutSection(textOf(both), 'stderr', rows(5000, 'err'));
        assert.ok(chars(o.head) + chars(o.tail) <= 1000 && chars(e.head) + chars(e.tail) <= 1000);

        // One long line of two-byte characters: cut inside it, between
        // characters, counted in characters.
        const wide = await run(client, "print('\u00e9' * 50000)");
        const w = cutSection(textOf(wide), 'stdout', '\u00e9'.repeat(50000) + '\n');
        assert.equal(w.lines, 0);
        assert.equal(chars(w.head), 1000);
        assert.equal(w.left, 50001 - 2000);
        assert.doesNotMatch(textOf(wide), /\ufffd/, 'a character was split');
    });
    await withServer(t, ['--max-output-chars', '0'], async ({ client }) => {
        const r = await run(client, "for i in range(5000):\n    print(f'out {i}')");
        assert.equal(textOf(r), `[stdout]\n${rows(5000, 'out')}`);
    });
});

test('--memory: a cell over the limit gets MemoryError; the session survives', async (t) => {
    await withServer(t, ['--memory', '768M'], async ({ client }) => {
        expectOk(await run(client, "kept = 'yes'"), 'kept = yes');
        const r = await run(client, 'big = bytearray(1024 * 1024 * 1024)');
        assert.equal(r.isError, true);
        assert.match(textOf(r), /MemoryError/);
        const next = await run(client, 'kept');
        expectOk(next, 'the call after a MemoryError');
        assert.match(textOf(next), /'yes'/);
        // Under the limit is fine.
        expectOk(await run(client, 'small = bytearray(64 * 1024 * 1024); len(small)'), '64 MiB');
    });
});

test('logging/setLevel: above info the output is no longer logged, progress still comes', async (t) => {
    await withServer(t, async ({ client }) => {
        const logs = [];
        client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
        await client.setLoggingLevel('warning');
        const progress = [];
        // The cell sleeps after printing: the SDK runs notification handlers
        // a tick late, and drops a progress notification that arrives in the
        // same read as its request's result.
        const r = await run(client, "import time\nprint('quiet line', flush=True)\ntime.sleep(0.5)", {},
                            { onprogress: (p) => progress.push(p) });
        expectOk(r, 'print');
        assert.match(textOf(r), /quiet line/);
        assert.equal(logs.filter((l) => /quiet line/.test(JSON.stringify(l.data))).length, 0,
                     'logged above the level set');
        assert.ok(progress.some((p) => /quiet line/.test(p.message || '')), 'no progress message');
        await client.setLoggingLevel('debug');
        await run(client, "import time\nprint('loud line', flush=True)\ntime.sleep(0.5)");
        assert.ok(logs.some((l) => /loud line/.test(JSON.stringify(l.data))), 'not logged at debug');
        await assert.rejects(
            client.request({ method: 'logging/setLevel', params: { level: 'loudest' } }, EmptyResultSchema),
            (e) => e.code === -32602);
    });
});

test('--allow-url lets a cell fetch under the prefix, with --url-header kept from it',
     async (t) => {
    const seen = [];
    const http = await import('node:http');
    const server = http.createServer((req, res) => {
        seen.push({ url: req.url, key: req.headers['x-key'] });
        res.end(`got ${req.url}`);
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const prefix = `http://127.0.0.1:${server.address().port}/ok/`;
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const keyFile = `${mkdtempSync(`${tmpdir()}/ci-mcp-key-`)}/header`;
    writeFileSync(keyFile, 'X-Key: k-5e3c7\n', { mode: 0o600 });
    try {
        await withServer(t, ['--allow-url', prefix, '--url-header', `@${keyFile}`], async (s) => {
            const tools = await s.client.listTools();
            assert.match(tools.tools.find((x) => x.name === 'run_python').description,
                         new RegExp(`fetch the URLs under ${prefix}`));
            const r = await run(s.client, [
                'import urllib.request',
                `print(urllib.request.urlopen('${prefix}x').read().decode())`,
                'try:',
                `    urllib.request.urlopen('${prefix.replace('/ok/', '/no/')}')`,
                'except OSError as e:',
                '    print(e)',
            ].join('\n'));
            const text = textOf(r);
            assert.match(text, /got \/ok\/x/);
            assert.match(text, /network access to http:\/\/127\.0\.0\.1:\d+\/no\/ is not allowed/);
            assert.doesNotMatch(text, /k-5e3c7/);
        });
    } finally {
        server.close();
        rmSync(dirname(keyFile), { recursive: true, force: true });
    }
    assert.deepEqual(seen, [{ url: '/ok/x', key: 'k-5e3c7' }]);
});

test('--audit-log: the start, each cell, upload and download, the end, chained; verify finds it intact', async (t) => {
    const dir = freshRoot(); // outside the server's workspace root
    const log = join(dir, 'audit.log');
    const sha256 = (b) => createHash('sha256').update(b).digest('hex');
    const code = 'x = 6 * 7\nx';
    try {
        await withServer(t, ['--audit-log', log], async ({ client }) => {
            expectOk(await run(client, code), code);
            const up = await client.callTool({
                name: 'upload_file',
                arguments: { name: 'a.csv', content_base64: Buffer.from('a\n1\n').toString('base64') },
            });
            expectOk(up, 'upload_file');
            const down = await client.callTool({ name: 'download_file', arguments: { name: 'a.csv' } });
            expectOk(down, 'download_file');
        });
        const lines = readFileSync(log, 'utf8').split('\n');
        assert.equal(lines.pop(), '', 'the log ends in a newline');
        const events = lines.map((l) => JSON.parse(l));
        assert.deepEqual(events.map((e) => e.event),
            ['session_start', 'cell_start', 'cell', 'file_put', 'file_get', 'session_end']);
        events.forEach((e, i) => {
            assert.equal(e.seq, i + 1);
            assert.equal(e.prev, i ? sha256(lines[i - 1]) : '0'.repeat(64));
            assert.equal(e.session, events[0].session);
        });
        assert.ok(events[0].sandbox.includes('seccomp'));
        assert.equal(events[0].limits.timeout_ms, 30000);
        assert.equal(events[2].sha256, sha256(code));
        assert.equal(events[2].bytes, Buffer.byteLength(code));
        assert.equal(events[2].status, 'ok');
        assert.deepEqual([events[3].name, events[3].bytes, events[3].sha256], ['a.csv', 4, sha256('a\n1\n')]);
        assert.deepEqual([events[4].name, events[4].bytes, events[4].sha256], ['a.csv', 4, sha256('a\n1\n')]);
        const verify = spawnSync(join(dirname(SERVER), 'codeinterp-audit'), ['verify', log],
                                 { encoding: 'utf8', timeout: 60000 });
        assert.equal(verify.status, 0, verify.stdout + verify.stderr);
        assert.match(verify.stdout, /intact: 6 lines/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
