//! `codeinterp::sys` against include/codeinterp.h: every CI_API function is
//! declared, and every constant has the header's value. Runs in the
//! source tree only (the header is two directories up).
use codeinterp::sys;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn read(rel: &str) -> Option<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(path).ok()
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim().trim_end_matches(['u', 'U']);
    let (neg, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => s.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// Every integer constant of the header: #defines, X(...) error codes and
/// enumerators (implicit values counted as C does).
fn header_constants(h: &str) -> BTreeMap<String, i64> {
    let mut map = BTreeMap::new();
    let mut in_enum = false;
    let mut next = 0i64;
    for line in h.lines() {
        let t = line.trim().trim_end_matches('\\').trim();
        if let Some(rest) = t.strip_prefix("#define ") {
            let mut parts = rest.splitn(2, char::is_whitespace);
            let name = parts.next().unwrap();
            if let Some(v) = parts.next().and_then(parse_int) {
                map.insert(name.to_string(), v);
            }
        } else if let Some(rest) = t.strip_prefix("X(") {
            let mut parts = rest.split(',');
            let name = parts.next().unwrap().trim();
            let v = parse_int(parts.next().unwrap()).unwrap();
            map.insert(name.to_string(), v);
        } else if t == "typedef enum {" {
            in_enum = true;
            next = 0;
        } else if in_enum && t.starts_with('}') {
            in_enum = false;
        } else if in_enum && t.starts_with("CI_") {
            let t = t.trim_end_matches(',');
            let (name, v) = match t.split_once('=') {
                Some((n, v)) => (n.trim(), parse_int(v).unwrap()),
                None => (t, next),
            };
            map.insert(name.to_string(), v);
            next = v + 1;
        }
    }
    map
}

#[test]
fn every_function_is_declared() {
    let (h, rs) = match (read("../../include/codeinterp.h"), read("codeinterp-sys/src/lib.rs")) {
        (Some(h), Some(rs)) => (h, rs),
        _ => {
            eprintln!("header not found: not in the source tree, skipped");
            return;
        }
    };
    let mut n = 0;
    for line in h.lines().filter(|l| l.starts_with("CI_API")) {
        let before_paren = &line[..line.find('(').unwrap()];
        let name = before_paren
            .rsplit([' ', '*'])
            .next()
            .unwrap();
        assert!(name.starts_with("ci_"), "{}", line);
        assert!(
            rs.contains(&format!("pub fn {}(", name)),
            "sys.rs lacks {}",
            name
        );
        n += 1;
    }
    assert!(n >= 50, "only {} CI_API functions found", n);
    assert_eq!(rs.matches("pub fn ci_").count(), n, "sys.rs declares functions the header lacks");
}

#[test]
fn every_constant_has_the_header_value() {
    let h = match read("../../include/codeinterp.h") {
        Some(h) => h,
        None => {
            eprintln!("header not found: not in the source tree, skipped");
            return;
        }
    };
    let header = header_constants(&h);
    let rust: BTreeMap<&str, i64> = [
        ("CI_VERSION_MAJOR", sys::CI_VERSION_MAJOR as i64),
        ("CI_VERSION_MINOR", sys::CI_VERSION_MINOR as i64),
        ("CI_VERSION_PATCH", sys::CI_VERSION_PATCH as i64),
        ("CI_OK", sys::CI_OK as i64),
        ("CI_EINVAL", sys::CI_EINVAL as i64),
        ("CI_ENOMEM", sys::CI_ENOMEM as i64),
        ("CI_ESPAWN", sys::CI_ESPAWN as i64),
        ("CI_EDEAD", sys::CI_EDEAD as i64),
        ("CI_EBUSY", sys::CI_EBUSY as i64),
        ("CI_EPROTO", sys::CI_EPROTO as i64),
        ("CI_EIO", sys::CI_EIO as i64),
        ("CI_ENOENT", sys::CI_ENOENT as i64),
        ("CI_ETOOBIG", sys::CI_ETOOBIG as i64),
        ("CI_EUNSAFE", sys::CI_EUNSAFE as i64),
        ("CI_ESANDBOX", sys::CI_ESANDBOX as i64),
        ("CI_EMANIFEST", sys::CI_EMANIFEST as i64),
        ("CI_STATUS_OK", sys::CI_STATUS_OK as i64),
        ("CI_STATUS_ERROR", sys::CI_STATUS_ERROR as i64),
        ("CI_STATUS_TIMEOUT", sys::CI_STATUS_TIMEOUT as i64),
        ("CI_STATUS_MEMORY", sys::CI_STATUS_MEMORY as i64),
        ("CI_STATUS_KILLED", sys::CI_STATUS_KILLED as i64),
        ("CI_STATUS_INTERRUPTED", sys::CI_STATUS_INTERRUPTED as i64),
        ("CI_SANDBOX_SECCOMP", sys::CI_SANDBOX_SECCOMP as i64),
        ("CI_SANDBOX_RLIMITS", sys::CI_SANDBOX_RLIMITS as i64),
        ("CI_SANDBOX_NO_NEW_PRIVS", sys::CI_SANDBOX_NO_NEW_PRIVS as i64),
        ("CI_SANDBOX_LANDLOCK", sys::CI_SANDBOX_LANDLOCK as i64),
        ("CI_SANDBOX_UNPRIVILEGED", sys::CI_SANDBOX_UNPRIVILEGED as i64),
        ("CI_SANDBOX_USERNS", sys::CI_SANDBOX_USERNS as i64),
        ("CI_SANDBOX_NETNS", sys::CI_SANDBOX_NETNS as i64),
        ("CI_SANDBOX_IPCNS", sys::CI_SANDBOX_IPCNS as i64),
        ("CI_SANDBOX_UTSNS", sys::CI_SANDBOX_UTSNS as i64),
        ("CI_SANDBOX_MNTNS", sys::CI_SANDBOX_MNTNS as i64),
        ("CI_SANDBOX_PIDNS", sys::CI_SANDBOX_PIDNS as i64),
        ("CI_SANDBOX_TASK_LIMIT", sys::CI_SANDBOX_TASK_LIMIT as i64),
        ("CI_SANDBOX_DISK_QUOTA", sys::CI_SANDBOX_DISK_QUOTA as i64),
        ("CI_STREAM_STDOUT", sys::CI_STREAM_STDOUT as i64),
        ("CI_STREAM_STDERR", sys::CI_STREAM_STDERR as i64),
        ("CI_TRUNCATED_STDOUT", sys::CI_TRUNCATED_STDOUT as i64),
        ("CI_TRUNCATED_STDERR", sys::CI_TRUNCATED_STDERR as i64),
        ("CI_TRUNCATED_TEXT", sys::CI_TRUNCATED_TEXT as i64),
        ("CI_TRUNCATED_OUTPUTS", sys::CI_TRUNCATED_OUTPUTS as i64),
        ("CI_TRUNCATED_FILES", sys::CI_TRUNCATED_FILES as i64),
        ("CI_MAX_OUTPUTS", sys::CI_MAX_OUTPUTS as i64),
        ("CI_OUTPUT_DISPLAY_DATA", sys::CI_OUTPUT_DISPLAY_DATA as i64),
        ("CI_OUTPUT_EXECUTE_RESULT", sys::CI_OUTPUT_EXECUTE_RESULT as i64),
        ("CI_OUTPUT_UPDATE_DISPLAY_DATA", sys::CI_OUTPUT_UPDATE_DISPLAY_DATA as i64),
        ("CI_OUTPUT_CLEAR_OUTPUT", sys::CI_OUTPUT_CLEAR_OUTPUT as i64),
        ("CI_RUN_OPTIONS_VERSION", sys::CI_RUN_OPTIONS_VERSION as i64),
    ]
    .iter()
    .copied()
    .collect();
    for (name, value) in &header {
        assert_eq!(rust.get(name.as_str()), Some(value), "{} in sys.rs", name);
    }
    for name in rust.keys() {
        assert!(header.contains_key(*name), "{} is not in the header", name);
    }
    assert_eq!(sys::CI_VERSION_NUMBER, 100);
}

#[test]
fn run_options_layout_and_init() {
    use std::mem::{align_of, size_of};
    // unsigned int, unsigned long, three pointers on LP64.
    assert_eq!(size_of::<sys::ci_run_options>(), 40);
    assert_eq!(align_of::<sys::ci_run_options>(), 8);
    let mut opts = sys::ci_run_options {
        version: 0,
        timeout_ms: 77,
        on_output: None,
        payload: std::ptr::null_mut(),
        on_input: None,
    };
    // SAFETY: a valid, writable struct.
    let rc = unsafe { sys::ci_run_options_init(&mut opts, sys::CI_RUN_OPTIONS_VERSION) };
    assert_eq!(rc, sys::CI_OK);
    assert_eq!(opts.version, sys::CI_RUN_OPTIONS_INIT.version);
    assert_eq!(opts.timeout_ms, sys::CI_RUN_OPTIONS_INIT.timeout_ms);
    assert!(opts.on_output.is_none() && opts.payload.is_null());
    // SAFETY: as above.
    assert_eq!(unsafe { sys::ci_run_options_init(&mut opts, 99) }, sys::CI_EINVAL);
}
