//! The audit trail: the events of a session in one chain, which
//! codeinterp-audit verify finds intact, and failing closed.
mod common;

use codeinterp::{Config, ErrorKind, Session};
use common::session_with;
use std::path::PathBuf;
use std::process::Command;

/// A fresh directory of this test's own under the build directory.
fn test_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// codeinterp-audit, built beside the library.
fn audit_tool() -> PathBuf {
    let build = std::env::var_os("CODEINTERP_LIB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build"));
    build.join("codeinterp-audit")
}

/// The value of the string member @key of a line, as the log writes it.
fn member<'a>(line: &'a str, key: &str) -> &'a str {
    let at = line.find(&format!("\"{}\":\"", key)).unwrap_or_else(|| panic!("no {} in {}", key, line));
    let rest = &line[at + key.len() + 4..];
    &rest[..rest.find('"').unwrap()]
}

#[test]
fn a_session_logs_its_events_in_one_chain_that_verify_finds_intact() {
    let dir = test_dir("audit-chain");
    let log = dir.join("audit.log");
    let mut s = session_with(Config::new().audit_log(&log));
    let r = s.run("open('out.txt', 'w').write('hi')").unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    s.put_file("in.txt", b"abc").unwrap();
    drop(s);

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let events: Vec<&str> = lines.iter().map(|l| member(l, "event")).collect();
    assert_eq!(events, ["session_start", "cell_start", "cell", "file_put", "session_end"]);
    for (i, line) in lines.iter().enumerate() {
        assert!(line.starts_with(&format!("{{\"seq\":{},", i + 1)), "line {}: {}", i + 1, line);
        assert_eq!(member(line, "session"), member(lines[0], "session"));
    }
    assert_eq!(member(lines[0], "prev"), "0".repeat(64));
    assert_eq!(member(lines[2], "status"), "ok");
    assert!(lines[2].contains("\"files\":[\"out.txt\"]"), "{}", lines[2]);
    // SHA-256 of "abc".
    assert_eq!(
        member(lines[3], "sha256"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );

    let out = Command::new(audit_tool()).arg("verify").arg(&log).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", said);
    assert!(said.contains("intact: 5 lines"), "{}", said);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_audit_log_that_cannot_be_opened_fails_the_start_with_io() {
    let dir = test_dir("audit-missing");
    let log = dir.join("no-such-dir").join("audit.log");
    let e = match Session::new(Config::new().audit_log(&log)) {
        Ok(_) => panic!("the session started"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains(log.to_str().unwrap()), "{}", e);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn on_event_gets_the_lines_the_file_gets_and_a_refusal_or_panic_fails_closed() {
    use std::sync::{Arc, Mutex};
    let dir = test_dir("audit-events");
    let log = dir.join("audit.log");
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let mine = Arc::clone(&seen);
    let mut s = session_with(Config::new().audit_log(&log).on_event(move |line| {
        mine.lock().unwrap().push(line.to_string());
        true
    }));
    assert!(s.run("6 * 7").unwrap().is_ok());
    drop(s);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "{}", text);
    assert_eq!(*seen.lock().unwrap(), lines);

    // A closure that refuses the start: no session.
    let e = match Session::new(Config::new().on_event(|_| false)) {
        Ok(_) => panic!("the session started"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Io);

    // A closure that panics at a cell's start: that cell never runs (a
    // cell the log cannot record is not sent), nor do the next ones.
    let mut s = session_with(Config::new().on_event(|line| {
        if line.contains("\"event\":\"cell_start\"") {
            panic!("the event sink is down");
        }
        true
    }));
    for code in ["open('ran.txt', 'w')", "2"] {
        assert_eq!(s.run(code).unwrap_err().kind(), ErrorKind::Io);
    }
    assert!(!s.workspace().join("ran.txt").exists());
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}
