//! The output callback.
mod common;

use codeinterp::{Config, RunOptions, Status, Stream};
use common::{session, session_with};
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

#[test]
fn callback_sees_output_as_it_comes() {
    let mut s = session();
    let mut chunks: Vec<(Stream, Vec<u8>, Instant)> = Vec::new();
    let mut collect = |stream: Stream, data: &[u8]| {
        assert!(!data.is_empty());
        chunks.push((stream, data.to_vec(), Instant::now()));
    };
    let r = s
        .run_with(
            "import sys, time\n\
             print('first', flush=True)\n\
             time.sleep(0.6)\n\
             print('oops', file=sys.stderr, flush=True)\n\
             print('second', flush=True)\n\
             'done'",
            RunOptions::new().on_output(&mut collect),
        )
        .unwrap();
    let ended = Instant::now();
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(r.value.as_deref(), Some("'done'"));

    let joined = |which: Stream| -> Vec<u8> {
        chunks
            .iter()
            .filter(|c| c.0 == which)
            .flat_map(|c| c.1.iter().copied())
            .collect()
    };
    // The callback gets exactly the bytes the result keeps.
    assert_eq!(joined(Stream::Stdout), b"first\nsecond\n");
    assert_eq!(joined(Stream::Stdout), r.stdout);
    assert_eq!(joined(Stream::Stderr), b"oops\n");
    assert_eq!(joined(Stream::Stderr), r.stderr);
    // 'first' came while the cell still slept, not with the result.
    let first = &chunks[0];
    assert_eq!(first.0, Stream::Stdout);
    assert!(first.1.starts_with(b"first"));
    assert!(
        ended.duration_since(first.2) >= Duration::from_millis(400),
        "first chunk only {:?} before the end",
        ended.duration_since(first.2)
    );
}

#[test]
fn callback_gets_whole_lines() {
    let mut s = session();
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut collect = |_: Stream, data: &[u8]| chunks.push(data.to_vec());
    let r = s
        .run_with(
            // One write a line: print() writes its text and its end apart,
            // which a loaded machine can part by more than the 5 ms a
            // partial line waits.
            "import sys, time\nsys.stdout.write('a\\n')\n\
             sys.stdout.write('progress'); sys.stdout.flush()\ntime.sleep(0.3)\n\
             sys.stdout.write(' done\\n')\nsys.stdout.write('x' + '\\u00e9' * 20000 + '\\n')\n\
             sys.stdout.write('b\\n')",
            RunOptions::new().on_output(&mut collect),
        )
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(chunks.concat(), r.stdout);
    // A partial line left waiting is given on its own.
    assert_eq!(chunks[..3], [b"a\n".to_vec(), b"progress".to_vec(), b" done\n".to_vec()]);
    // Then the 40002-byte line, in pieces of at least 16 KiB less a
    // character as it is read, each cut after a whole character, and b.
    let long = format!("x{}\nb\n", "\u{e9}".repeat(20000));
    assert_eq!(chunks[3..].concat(), long.as_bytes());
    for c in &chunks[3..] {
        assert!(std::str::from_utf8(c).is_ok(), "a piece of {} bytes splits a character", c.len());
        assert!(c.ends_with(b"\n") || c.len() >= 16381, "a piece of {} bytes", c.len());
    }
}

#[test]
fn callback_gets_one_note_past_the_limit() {
    let mut s = session_with(Config::new().output_limit(4096));
    let mut streamed: Vec<u8> = Vec::new();
    let mut collect = |stream: Stream, data: &[u8]| {
        assert_eq!(stream, Stream::Stdout);
        streamed.extend_from_slice(data);
    };
    let r = s
        .run_with("for i in range(2000):\n    print(i)", RunOptions::new().on_output(&mut collect))
        .unwrap();
    let whole: String = (0..2000).map(|i| format!("{}\n", i)).collect();
    // The first 4 KiB, then one line that says where the rest goes.
    assert_eq!(&streamed[..4096], &whole.as_bytes()[..4096]);
    let note = String::from_utf8_lossy(&streamed[4096..]).into_owned();
    assert!(note.starts_with("\n[... stdout passed the output limit of 4 KiB"), "{note}");
    assert!(note.ends_with("the whole output goes to .outputs/cell-1.stdout ...]\n"), "{note}");
    assert_eq!(note.matches('\n').count(), 2, "{note}");
    assert_eq!(r.spill_file(Stream::Stdout), Some(".outputs/cell-1.stdout"));
}

#[test]
fn callback_with_its_own_timeout() {
    let mut s = session();
    let mut n = 0usize;
    let mut count = |_: Stream, data: &[u8]| n += data.iter().filter(|&&b| b == b'\n').count();
    let r = s
        .run_with(
            "import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.05)",
            RunOptions::new()
                .timeout(Duration::from_millis(500))
                .on_output(&mut count),
        )
        .unwrap();
    assert_eq!(r.status, Status::Timeout);
    let lines = r.stdout.iter().filter(|&&b| b == b'\n').count();
    assert!(lines >= 3, "{} lines", lines);
    assert_eq!(n, lines);
}

#[test]
fn panic_in_callback_interrupts_the_cell_and_resumes_after() {
    let mut s = session();
    let start = Instant::now();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut explode = |_: Stream, _: &[u8]| panic!("boom from the callback");
        s.run_with(
            "import time\nprint('x', flush=True)\ntime.sleep(15)\nprint('never')",
            RunOptions::new().on_output(&mut explode),
        )
    }));
    let payload = caught.expect_err("the panic reaches the caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom from the callback"));
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    // The cell was interrupted, not left running: the session is usable.
    let r = s.run("1 + 1").unwrap();
    assert_eq!(r.value.as_deref(), Some("2"));
}
