//! Snapshots: Session::snapshot, Session::restore, snapshot_left_out,
//! Session::fork and Session::left_out.
mod common;

use codeinterp::{snapshot_left_out, Config, Error, ErrorKind, Session, Status};
use common::session;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// The config restored sessions get: a 20 s cell timeout, as common's.
fn config() -> Config {
    Config::new().timeout(Duration::from_secs(20))
}

fn restore(data: &[u8]) -> Session {
    Session::restore(config(), data).unwrap_or_else(|e| panic!("Session::restore failed: {}", e))
}

fn snapshot(s: &Session) -> Vec<u8> {
    let data = s.snapshot().unwrap_or_else(|e| panic!("Session::snapshot failed: {}", e));
    assert!(data.starts_with(b"\x89CISNAP\n"), "{} bytes without the magic number", data.len());
    data
}

/// The value of @code in @s; fails unless the cell ran to its end.
fn value(s: &mut Session, code: &str) -> String {
    let r = s.run(code).unwrap();
    assert_eq!(r.status, Status::Ok, "{}: {:?}", code, r.error);
    r.value.unwrap_or_default()
}

/// The cell of test/cells/snapshot_state.py, which test_snapshot.c runs
/// too: a lambda, a class and a function defined in a cell, shared
/// references, a DataFrame, the generators' states and files in
/// subdirectories, one executable.
fn snapshot_state_cell() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/cells/snapshot_state.py");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e))
}

#[test]
fn a_restored_session_has_the_state_files_and_count() {
    let mut s = session();
    value(&mut s, &snapshot_state_cell());
    s.put_file("put.txt", b"put by the host").unwrap();
    let doubled = s.run("count * 2").unwrap();
    assert_eq!(doubled.value.as_deref(), Some("82"));
    let last = s.run("None").unwrap();
    let data = snapshot(&s);
    // The cell's `with open(...) as f` leaves a closed file in f.
    assert_eq!(snapshot_left_out(&data).unwrap(), vec!["f: a closed file".to_string()]);

    let mut t = restore(&data);
    let r = t
        .run("add_one(count), scaled(2), p.norm2(), type(p).__name__, pair[0] is pair[1]")
        .unwrap();
    assert_eq!(r.value.as_deref(), Some("(42, 82, 25, 'Point', True)"), "{:?}", r.error);
    // The execution count goes on from the snapshot's.
    assert_eq!(r.execution_count, last.execution_count + 1);
    let n = doubled.execution_count;
    assert_eq!(value(&mut t, &format!("Out[{}], In[{}]", n, n)), "(82, 'count * 2')");
    // The frame, and the generators drawing on from the same state.
    for expr in [
        "int(pd.util.hash_pandas_object(frame).sum()), frame.shape",
        "random.random(), float(np.random.rand())",
    ] {
        assert_eq!(value(&mut s, expr), value(&mut t, expr), "{}", expr);
    }
    assert_eq!(t.get_file("notes.txt").unwrap(), b"hello");
    assert_eq!(t.get_file("put.txt").unwrap(), b"put by the host");
    assert_eq!(t.get_file("sub/deep/data.bin").unwrap(), (0..=255u8).collect::<Vec<u8>>());
    assert_eq!(
        value(
            &mut t,
            "oct(os.stat('run.sh').st_mode & 0o777), oct(os.stat('notes.txt').st_mode & 0o777)"
        ),
        "('0o700', '0o600')"
    );
    assert_ne!(t.workspace(), s.workspace());
    assert_ne!(t.pid(), s.pid());
    assert_eq!(t.sandbox(), s.sandbox());
    // A restored function's globals are the new session's, and each
    // session goes its own way.
    assert_eq!(value(&mut t, "count = 10\nscaled(2)"), "20");
    t.put_file("notes.txt", b"restored only").unwrap();
    assert_eq!(value(&mut t, "shared.append(3); shared"), "[1, 2, 3]");
    assert_eq!(
        value(&mut s, "scaled(2), open('notes.txt').read(), shared"),
        "(82, 'hello', [1, 2])"
    );
}

#[test]
fn a_generator_is_named_in_the_left_out_list() {
    let mut s = session();
    value(&mut s, "gen = (i for i in range(3))\nnext(gen)\nkept = 'still here'");
    let data = snapshot(&s);
    assert_eq!(snapshot_left_out(&data).unwrap(), vec!["gen: a generator in flight".to_string()]);
    let mut t = restore(&data);
    assert_eq!(value(&mut t, "kept, 'gen' in globals()"), "('still here', False)");
    // The source keeps its generator.
    assert_eq!(value(&mut s, "next(gen)"), "1");
}

#[test]
fn nothing_left_out_is_an_empty_list() {
    let mut s = session();
    value(&mut s, "x = 1");
    assert_eq!(snapshot_left_out(&snapshot(&s)).unwrap(), Vec::<String>::new());
}

/// Asserts @e's kind and display, and that its op is the display's first
/// part.
fn assert_error(e: &Error, kind: ErrorKind, display: &str) {
    assert_eq!(e.to_string(), display);
    assert_eq!((e.op(), e.kind()), (display.split(": ").next().unwrap(), kind));
}

#[test]
fn a_cut_snapshot_is_refused() {
    let mut s = session();
    value(&mut s, "cut_me = list(range(100))\nopen('cut.txt', 'w').write('x' * 1000)");
    let data = snapshot(&s);
    let refused = "invalid argument: the snapshot is refused: a snapshot whose SHA-256 does not \
                   match (cut, changed or damaged)";
    let restore_refused = format!("Session::restore: {}", refused);
    let half = &data[..data.len() / 2];
    let e = Session::restore(config(), half).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, &restore_refused);
    let e = snapshot_left_out(half).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, &format!("snapshot_left_out: {}", refused));

    let mut flipped = data.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    let e = Session::restore(config(), &flipped).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, &restore_refused);
    let no_magic = "invalid argument: the snapshot is refused: not a snapshot (no magic number)";
    let junk = b"not a snapshot at all, but long enough to hold the header and a hash";
    for bytes in [&b""[..], junk] {
        let e = Session::restore(config(), bytes).unwrap_err();
        assert_error(&e, ErrorKind::InvalidArgument, &format!("Session::restore: {}", no_magic));
        let e = snapshot_left_out(bytes).unwrap_err();
        assert_error(&e, ErrorKind::InvalidArgument, &format!("snapshot_left_out: {}", no_magic));
    }
    // The whole snapshot, which the failed calls did not change, restores.
    let mut t = restore(&data);
    assert_eq!(value(&mut t, "len(cut_me), open('cut.txt').read(3)"), "(100, 'xxx')");
}

#[test]
fn restore_takes_the_config_of_new() {
    let mut s = session();
    value(&mut s, "big = 'x' * 1000\nopen('big.txt', 'w').write(big)");
    let data = snapshot(&s);
    let e = Session::restore(Config::new().figure_dpi(5), &data).unwrap_err();
    let want = "Session::restore: invalid argument: Config::figure_dpi(5) refused: must be 10 \
                to 600";
    assert_error(&e, ErrorKind::InvalidArgument, want);
    let e = Session::restore(Config::new().file_limit(100), &data).unwrap_err();
    let want = "Session::restore: size over the limit: a file of the snapshot (1000 bytes) is \
                over the file limit of 100";
    assert_error(&e, ErrorKind::TooBig, want);
    let double = config().function("double", "", |args| {
        // {"args":["ab"],"kwargs":{}} -> "abab"
        let arg = args.split('"').nth(3).unwrap_or("");
        Ok(format!("\"{}{}\"", arg, arg))
    });
    let mut t = Session::restore(double, &data).unwrap();
    assert_eq!(value(&mut t, "double('ab'), len(big)"), "('abab', 1000)");
}

#[test]
fn one_snapshot_restores_on_many_threads() {
    let mut s = session();
    value(&mut s, "branch = 'start'");
    let data = Arc::new(snapshot(&s));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let data = Arc::clone(&data);
            thread::spawn(move || {
                if i == 3 {
                    // A cut one alongside: its detail is its own.
                    let e = Session::restore(config(), &data[..data.len() - 1]).unwrap_err();
                    assert!(e.detail().contains("SHA-256"), "{}", e);
                    return;
                }
                let mut t = restore(&data);
                let code = format!("was, branch = branch, 'b{}'\nwas, branch", i);
                assert_eq!(value(&mut t, &code), format!("('start', 'b{}')", i));
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(value(&mut s, "branch"), "'start'");
}

#[test]
fn a_dead_session_has_no_snapshot_nor_fork() {
    let mut s = session();
    let r = s.run("import os\nos._exit(3)").unwrap();
    assert_eq!(r.status, Status::Killed);
    let e = s.snapshot().unwrap_err();
    assert_eq!((e.op(), e.kind()), ("Session::snapshot", ErrorKind::Dead), "{}", e);
    let e = s.fork().unwrap_err();
    assert_eq!((e.op(), e.kind()), ("Session::fork", ErrorKind::Dead), "{}", e);
    s.restart().unwrap();
    value(&mut s, "after = 'restart'");
    assert_eq!(value(&mut restore(&snapshot(&s)), "after"), "'restart'");
    assert_eq!(value(&mut s.fork().unwrap(), "after"), "'restart'");
}

#[test]
fn an_interrupter_stops_a_snapshot() {
    let mut s = session();
    value(
        &mut s,
        "import time\nclass Slow:\n    def __reduce__(self):\n        time.sleep(30)\n\
         slow = Slow()",
    );
    let stop = s.interrupter();
    let handle = thread::spawn(move || {
        let start = Instant::now();
        while !stop.interrupt() {
            assert!(start.elapsed() < Duration::from_secs(15), "the snapshot never ran");
            thread::sleep(Duration::from_millis(20));
        }
    });
    let start = Instant::now();
    let e = s.snapshot().unwrap_err();
    handle.join().unwrap();
    assert_eq!(e.kind(), ErrorKind::Io, "{}", e);
    assert_eq!(e.detail(), "taking the interpreter state was interrupted");
    assert!(start.elapsed() < Duration::from_secs(10));
    // Interrupted like a cell: the session lives on, state and all.
    assert_eq!(value(&mut s, "del slow\n6 * 7"), "42");
}

#[test]
fn no_host_function_runs_while_a_snapshot_is_taken_or_loaded() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let boom = move || {
        let counted = Arc::clone(&counted);
        config().function("boom", "", move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            panic!("boom")
        })
    };
    let mut s = Session::new(boom()).unwrap();
    // obj calls boom as it is pickled; f holds boom itself.
    value(
        &mut s,
        "class Pickled:\n\
         \x20   def __reduce__(self):\n\
         \x20       return (str, (boom(),))\n\
         obj = Pickled()\nf = boom\nkept = 'here'",
    );
    let data = snapshot(&s);
    let refused = "RuntimeError: a host function can only be called while a cell runs";
    assert_eq!(snapshot_left_out(&data).unwrap(), vec![format!("obj: {}", refused)]);
    // f is carried by its name: it loads where a function of that name is.
    let mut t = Session::restore(boom(), &data).unwrap();
    assert_eq!(value(&mut t, "kept, f is boom, 'obj' in globals()"), "('here', True, False)");
    let e = Session::restore(config(), &data).unwrap_err();
    let want = "Session::restore: invalid argument: a variable could not be loaded (the variable \
                after 'Pickled'): ModuleNotFoundError: No module named 'codeinterp_host'; it \
                holds a host function this session does not have: give it the functions of the \
                session the snapshot was taken in";
    assert_error(&e, ErrorKind::InvalidArgument, want);

    // A state that calls one as it loads does not load, nor fork.
    value(
        &mut s,
        "class Later:\n\
         \x20   def __reduce__(self):\n\
         \x20       return (boom, ())\n\
         later = Later()",
    );
    let unloaded = format!(
        "invalid argument: a variable could not be loaded (the variable after 'kept'): {}",
        refused
    );
    let e = Session::restore(boom(), &snapshot(&s)).unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, &format!("Session::restore: {}", unloaded));
    let e = s.fork().unwrap_err();
    assert_error(&e, ErrorKind::InvalidArgument, &format!("Session::fork: {}", unloaded));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    // A cell's own call runs it.
    assert_eq!(panic_of(|| s.run("boom()")), "boom");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// @s.fork(), which must succeed.
fn fork(s: &Session) -> Session {
    s.fork().unwrap_or_else(|e| panic!("Session::fork failed: {}", e))
}

/// The panic message of @f, which must panic.
fn panic_of<R>(f: impl FnOnce() -> R) -> String {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("no panic"),
        Err(p) => p.downcast_ref::<&str>().map(|s| s.to_string()).unwrap_or_default(),
    }
}

#[test]
fn a_fork_is_a_copy_that_outlives_its_parent() {
    let pings = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&pings);
    let cfg = config()
        .file_limit(1000)
        .function("ping", "", move |args| {
            counted.fetch_add(1, Ordering::SeqCst);
            // {"args":["b"],"kwargs":{}} -> "pong b"
            Ok(format!("\"pong {}\"", args.split('"').nth(3).unwrap_or("")))
        })
        .function("boom", "", |_| panic!("boom"));
    let mut p = Session::new(cfg).unwrap();
    let last = p
        .run("import os\nx = 'parent'\nf = ping\nopen('notes.txt', 'w').write('from the parent')")
        .unwrap();
    assert_eq!(p.left_out(), Vec::<String>::new());

    let mut b = fork(&p);
    // f holds a host function: the branch has it, the parent's config.
    let r = b.run("x, open('notes.txt').read(), f('b')").unwrap();
    let want = "('parent', 'from the parent', 'pong b')";
    assert_eq!(r.value.as_deref(), Some(want), "{:?}", r.error);
    assert_eq!(r.execution_count, last.execution_count + 1);
    assert_eq!(b.left_out(), Vec::<String>::new());
    assert_ne!(b.workspace(), p.workspace());
    assert_ne!(b.pid(), p.pid());
    assert_eq!(b.sandbox(), p.sandbox());
    // Each goes its own way, in state and in files.
    value(&mut b, "x = 'branch'\nonly_branch = 1");
    b.put_file("notes.txt", b"from the branch").unwrap();
    value(&mut p, "only_parent = 2\nopen('parent.txt', 'w').write('p')");
    assert_eq!(
        value(&mut p, "x, open('notes.txt').read(), 'only_branch' in globals()"),
        "('parent', 'from the parent', False)"
    );
    assert_eq!(
        value(
            &mut b,
            "x, open('notes.txt').read(), 'only_parent' in globals(), os.path.exists('parent.txt')"
        ),
        "('branch', 'from the branch', False, False)"
    );
    // The branch has the parent's config: its file limit.
    let e = b.put_file("big.bin", &[0u8; 1001]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooBig, "{}", e);
    // A host function's panic is resumed by the session whose cell ran it.
    assert_eq!(panic_of(|| p.run("boom()")), "boom");
    assert_eq!(value(&mut b, "6 * 7"), "42");

    // The parent dropped, the branch runs on, its host functions too.
    drop(p);
    assert_eq!(value(&mut b, "x, ping('after')"), "('branch', 'pong after')");
    assert_eq!(pings.load(Ordering::SeqCst), 2);
    assert_eq!(panic_of(|| b.run("boom()")), "boom");
    // A branch of the branch, on another thread, the same config again.
    let c = fork(&b);
    drop(b);
    let got = thread::spawn(move || {
        let mut c = c;
        value(&mut c, "x, ping('c')")
    });
    assert_eq!(got.join().unwrap(), "('branch', 'pong c')");
}

#[test]
fn a_fork_leaves_out_a_generator_and_left_out_names_it() {
    let mut p = session();
    value(&mut p, "gen = (i for i in range(3))\nnext(gen)\nkept = 'still here'");
    let mut b = fork(&p);
    let want = vec!["gen: a generator in flight".to_string()];
    assert_eq!(b.left_out(), want);
    assert_eq!(value(&mut b, "kept, 'gen' in globals()"), "('still here', False)");
    assert_eq!(value(&mut p, "next(gen)"), "1");
    assert_eq!(p.left_out(), Vec::<String>::new());
    // A restored session's is its snapshot's list.
    let data = snapshot(&p);
    assert_eq!(restore(&data).left_out(), snapshot_left_out(&data).unwrap());
    assert_eq!(restore(&data).left_out(), want);
    // A fresh interpreter lacks nothing it was given.
    b.restart().unwrap();
    assert_eq!(b.left_out(), Vec::<String>::new());
}
