//! Starting, closing, interrupting and configuring sessions.
mod common;

use codeinterp::{Config, ErrorKind, Sandbox, Session, Status};
use common::session;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

#[test]
fn drop_kills_the_worker_and_removes_the_workspace() {
    let mut s = session();
    let pid = s.pid().expect("pid");
    let proc_dir = format!("/proc/{}", pid);
    let workspace = s.workspace().to_path_buf();
    assert!(workspace.is_absolute());
    assert!(Path::new(&proc_dir).exists());
    assert!(workspace.is_dir());
    s.put_file("left.txt", b"behind").unwrap();
    s.run("open('also.txt', 'w').write('x')").unwrap();

    drop(s);
    // A worker the kernel is slow to tear down (a loaded machine) is
    // reaped a little later by the library's reaper thread.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&proc_dir).exists() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    assert!(!Path::new(&proc_dir).exists(), "{} still exists", proc_dir);
    assert!(!workspace.exists(), "{} still exists", workspace.display());
}

#[test]
fn interrupt_from_another_thread() {
    let mut s = session();
    let interrupter = s.interrupter();
    assert!(!interrupter.interrupt(), "nothing is running yet");

    let handle = thread::spawn(move || {
        let start = Instant::now();
        thread::sleep(Duration::from_millis(200));
        while !interrupter.interrupt() {
            assert!(start.elapsed() < Duration::from_secs(15), "the cell never ran");
            thread::sleep(Duration::from_millis(20));
        }
        start.elapsed()
    });
    let r = s
        .run("import time\nn = 0\nwhile True:\n    n += 1\n    time.sleep(0.01)")
        .unwrap();
    let waited = handle.join().unwrap();
    assert_eq!(r.status, Status::Interrupted);
    assert_eq!(r.error.unwrap().name, "KeyboardInterrupt");
    assert!(waited < Duration::from_secs(15));
    // The interpreter state survived the interrupt.
    assert_eq!(s.run("n > 0").unwrap().value.as_deref(), Some("True"));
}

#[test]
fn interrupter_outliving_its_session_does_nothing() {
    let s = session();
    let interrupter = s.interrupter();
    let copy = interrupter.clone();
    drop(s);
    assert!(!interrupter.interrupt());
    assert!(!thread::spawn(move || copy.interrupt()).join().unwrap());
}

#[test]
fn session_moves_to_another_thread() {
    let mut s = session();
    s.run("who = 'main'").unwrap();
    let mut s = thread::spawn(move || {
        assert_eq!(s.run("who").unwrap().value.as_deref(), Some("'main'"));
        s.run("who = 'thread'").unwrap();
        s
    })
    .join()
    .unwrap();
    assert_eq!(s.run("who").unwrap().value.as_deref(), Some("'thread'"));
}

#[test]
fn sandbox_layers_are_reported() {
    let s = session();
    let layers = s.sandbox();
    assert!(layers.contains(Sandbox::DEFAULT_REQUIRED), "{:#x}", layers.bits());
    assert!(layers.contains(Sandbox::UNPRIVILEGED), "{:#x}", layers.bits());
    assert_eq!(
        Sandbox::SECCOMP | Sandbox::RLIMITS | Sandbox::NO_NEW_PRIVS,
        Sandbox::DEFAULT_REQUIRED
    );
}

#[test]
fn pid_namespace_only_from_the_zygote() {
    const IDS: &str = "import os\n(os.getpid(), os.getppid())";
    // Best effort from the zygote: where the bit is set, the cell's process
    // is pid 1 of its own namespace, whose parent is outside it.
    let mut s = session();
    let layers = s.sandbox();
    let has = layers.contains(Sandbox::PIDNS);
    let ids = s.run(IDS).unwrap().value.unwrap();
    assert_eq!(ids == "(1, 0)", has, "{:#x}: {}", layers.bits(), ids);
    if std::env::var_os("CODEINTERP_WORKER").is_some() {
        assert!(!has, "no zygote, yet {:#x}", layers.bits());
    }

    // A worker started by exec never has one.
    let mut s = common::session_with(Config::new().zygote(false));
    assert!(!s.sandbox().contains(Sandbox::PIDNS), "{:#x}", s.sandbox().bits());
    let pid = s.run("import os\nos.getpid()").unwrap().value.unwrap();
    assert_ne!(pid, "1");
}

#[test]
fn restart_gives_a_fresh_interpreter() {
    let mut s = session();
    s.put_file("kept.txt", b"still here").unwrap();
    s.run("secret = 1").unwrap();
    let old = s.pid().unwrap();
    s.restart().unwrap();
    assert_ne!(s.pid().unwrap(), old);
    let r = s.run("secret").unwrap();
    assert_eq!(r.error.unwrap().name, "NameError");
    assert_eq!(
        s.run("open('kept.txt').read()").unwrap().value.as_deref(),
        Some("'still here'")
    );
}

#[test]
fn bad_settings_are_errors() {
    let e = Session::new(Config::new().figure_dpi(5)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.detail().contains("figure_dpi"), "{}", e);
    assert_eq!(
        e.to_string(),
        "Session::new: invalid argument: Config::figure_dpi(5) refused: must be 10 to 600"
    );
    let e = Session::new(Config::new().require_sandbox(Sandbox(0x2000))).unwrap_err();
    assert_eq!(
        e.detail(),
        "Config::require_sandbox(0x2000) refused: must be made of the layers this library \
         knows: seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|ipcns|utsns|\
         mntns|pidns|task_limit|disk_quota"
    );
    let e = Session::new(Config::new().disk_quota(1024)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = Session::new(Config::new().task_limit(15)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let e = Session::new(Config::new().workspace_root("relative/dir")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.detail().contains("workspace_root"), "{}", e);

    let e = Session::new(Config::new().spill_limit(5)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "Session::new: invalid argument: Config::spill_limit(5) refused: must be 0 (no spill \
         files), or 1024 bytes to 4 GiB (4294967296 bytes)"
    );
    for bad in [1023, (4 << 30) + 1] {
        let e = Session::new(Config::new().spill_limit(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.detail().contains(&format!("spill_limit({})", bad)), "{}", e);
    }

    let e = Session::new(Config::new().memory_limit(1 << 20)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let e = Session::new(Config::new().timeout(Duration::ZERO)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    // A layer a worker started by exec never has: it starts, then is refused.
    let e = Session::new(
        Config::new()
            .zygote(false)
            .require_sandbox(Sandbox::DEFAULT_REQUIRED | Sandbox::PIDNS),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Sandbox);
    assert_eq!(e.code(), -11);
    assert!(!e.detail().is_empty(), "{}", e);
    let shown = e.to_string();
    assert!(
        shown.starts_with("Session::new: a required sandbox layer is not available: "),
        "{}",
        shown
    );
}

#[test]
fn workspace_root_is_used() {
    let root = std::env::temp_dir().join(format!("codeinterp-rust-test-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    {
        let mut s = common::session_with(Config::new().workspace_root(&root));
        assert!(s.workspace().starts_with(&root), "{}", s.workspace().display());
        let r = s.run("import os\nos.getcwd()").unwrap();
        let cwd = r.value.unwrap();
        assert_eq!(cwd, format!("'{}'", s.workspace().display()));
    }
    // The session's directory went with it; the root stays.
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir(&root).unwrap();
}

/// Which of these modules a fresh session has imported, as Python's list
/// of booleans.
const IMPORTED: &str = "import sys\n[m in sys.modules for m in \
    ('wave', 'sched', 'email.mime.text', 'pandas', 'matplotlib.pyplot')]";

#[test]
fn preload_sets_what_is_imported() {
    // The default list: pandas and matplotlib, none of the three below.
    let mut s = session();
    assert_eq!(
        s.run(IMPORTED).unwrap().value.as_deref(),
        Some("[False, False, False, True, True]")
    );
    drop(s);

    // A list of its own (a zygote of its own): its modules, dotted names
    // included, and matplotlib.pyplot always; pandas no longer.
    let cfg = Config::new().preload("wave,sched,email.mime.text");
    for _ in 0..2 {
        let mut s = common::session_with(cfg.clone());
        assert_eq!(
            s.run(IMPORTED).unwrap().value.as_deref(),
            Some("[True, True, True, False, True]")
        );
        assert_eq!(s.run("import pandas\n2 * 21").unwrap().value.as_deref(), Some("42"));
    }

    // The same list without the zygote.
    let cfg = cfg.zygote(false);
    let mut s = common::session_with(cfg);
    assert_eq!(
        s.run(IMPORTED).unwrap().value.as_deref(),
        Some("[True, True, True, False, True]")
    );
}

#[test]
fn bad_preload_lists_are_refused() {
    for bad in [
        "numpy, pandas",
        "",
        "numpy,,pandas",
        "numpy,",
        "numpy..linalg",
        "scipy.",
        "9lives",
        "nump\u{fc}",
        "numpy;import os",
    ] {
        let e = Session::new(Config::new().preload(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{:?}: {}", bad, e);
        assert!(e.detail().contains("preload"), "{:?}: {}", bad, e);
    }
    let long = vec!["m"; 600].join(","); // 1199 bytes
    let e = Session::new(Config::new().preload(&long)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = Session::new(Config::new().preload("numpy\0")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.detail().contains("NUL"), "{}", e);

    // Well formed, but nothing by that name: the worker does not start.
    let cfg = Config::new().preload("numpy,codeinterp_no_such_module");
    let e = Session::new(cfg).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Spawn, "{}", e);
    assert!(e.detail().contains("codeinterp_no_such_module"), "{}", e);
}

#[test]
fn zygote_off_starts_each_worker_by_exec() {
    let hash = "hash('codeinterp')";
    // Forked from one zygote (the default list's), sessions share its hash
    // seed, restarted ones too. $CODEINTERP_WORKER turns the zygote off.
    let zygote = std::env::var_os("CODEINTERP_WORKER").is_none();
    let mut c = common::session_with(Config::new().zygote(true));
    let mut d = session();
    let hc = c.run(hash).unwrap().value.unwrap();
    if zygote {
        assert_eq!(d.run(hash).unwrap().value.unwrap(), hc);
        d.restart().unwrap();
        assert_eq!(d.run(hash).unwrap().value.unwrap(), hc);
    }

    let mut a = common::session_with(Config::new().zygote(false));
    assert_eq!(a.run("1+1").unwrap().value.as_deref(), Some("2"));
    // The default preload list, as from the zygote.
    assert_eq!(
        a.run("import sys\n'pandas' in sys.modules").unwrap().value.as_deref(),
        Some("True")
    );
    // Each worker started by exec draws a hash seed of its own, restarted
    // ones too.
    let mut b = common::session_with(Config::new().zygote(false));
    let ha = a.run(hash).unwrap().value.unwrap();
    let hb = b.run(hash).unwrap().value.unwrap();
    assert_ne!(ha, hb);
    assert_ne!(ha, hc);
    assert_ne!(hb, hc);
    let old = a.pid().unwrap();
    a.restart().unwrap();
    assert_ne!(a.pid().unwrap(), old);
    assert_eq!(a.run("1+1").unwrap().value.as_deref(), Some("2"));
    let again = a.run(hash).unwrap().value.unwrap();
    assert_ne!(again, ha);
    assert_ne!(again, hc);
}

/// The standard base64 of @bytes (the crate has no dependencies).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn missing_manifest_is_a_manifest_error() {
    let dir = std::env::temp_dir().join(format!("codeinterp-rust-manifest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key: Vec<u8> = (0..32).collect();
    // A well-formed public key file (the NAME.pub of "codeinterp-manifest
    // keygen NAME"), so that what fails is the manifest, which is missing.
    let key_file = dir.join("test.pub");
    let line = format!("codeinterp-manifest-public-key {}\n", base64(&key));
    std::fs::write(&key_file, line).unwrap();
    let missing = dir.join("no-such-manifest.json");
    let shown = missing.to_str().unwrap();
    for cfg in [
        Config::new().manifest(&missing, &key_file),
        Config::new().manifest_key(&missing, &key),
        // the last setting wins
        Config::new().manifest_key("/elsewhere.json", &key).manifest(&missing, &key_file),
    ] {
        let e = Session::new(cfg.timeout(Duration::from_secs(20))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Manifest, "{}", e);
        assert_eq!(e.code(), -12);
        assert!(e.detail().contains(shown), "{}", e);
        assert!(e.to_string().starts_with(&format!("Session::new: {}", e.message())), "{}", e);
        assert!(e.message().contains("manifest"), "{}", e);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_manifest_settings_are_refused() {
    let key = [7u8; 32];
    let long = format!("/{}", "m".repeat(4096));
    for (what, cfg) in [
        ("31-byte key", Config::new().manifest_key("/m.json", &key[..31])),
        ("33-byte key", Config::new().manifest_key("/m.json", &[7u8; 33])),
        ("empty key", Config::new().manifest_key("/m.json", &[])),
        ("empty path, key bytes", Config::new().manifest_key("", &key)),
        ("long path, key bytes", Config::new().manifest_key(&long, &key)),
        ("NUL in the path, key bytes", Config::new().manifest_key("/m\0.json", &key)),
        ("empty path", Config::new().manifest("", "/k.pub")),
        ("empty key path", Config::new().manifest("/m.json", "")),
        ("long path", Config::new().manifest(&long, "/k.pub")),
        ("NUL in the path", Config::new().manifest("/m\0.json", "/k.pub")),
        ("NUL in the key path", Config::new().manifest("/m.json", "/k\0.pub")),
    ] {
        let e = Session::new(cfg).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}: {}", what, e);
        assert!(
            e.detail().contains("manifest") || e.detail().contains("key"),
            "{}: {}",
            what,
            e
        );
    }
}

#[test]
fn wheelhouse_without_manifest_is_a_manifest_error() {
    // A real directory, so that what fails is the missing manifest.
    let dir = std::env::temp_dir().join(format!("codeinterp-rust-wheels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shown = dir.to_str().unwrap();
    let e = Session::new(Config::new().timeout(Duration::from_secs(20)).wheelhouse(&dir))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Manifest, "{}", e);
    assert_eq!(e.code(), -12);
    assert!(e.detail().contains(shown) && e.detail().contains("manifest"), "{}", e);
    assert!(e.to_string().starts_with(&format!("Session::new: {}", e.message())), "{}", e);

    // no_wheelhouse undoes it: the session starts without a manifest.
    let cfg = Config::new().timeout(Duration::from_secs(20)).wheelhouse(&dir).no_wheelhouse();
    let mut s = Session::new(cfg).unwrap();
    assert_eq!(s.run("6 * 7").unwrap().value.as_deref(), Some("42"));
    drop(s);

    let long = format!("/{}", "w".repeat(4096));
    for (what, cfg) in [
        ("empty path", Config::new().wheelhouse("")),
        ("long path", Config::new().wheelhouse(&long)),
        ("NUL in the path", Config::new().wheelhouse("/wheels\0")),
    ] {
        let e = Session::new(cfg).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}: {}", what, e);
        assert!(e.detail().contains("wheelhouse"), "{}: {}", what, e);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sandbox_layers_print_by_name() {
    assert_eq!(
        Sandbox::ALL.to_string(),
        "seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|ipcns|utsns|mntns|pidns|\
         task_limit|disk_quota"
    );
    assert_eq!(Sandbox::ALL.bits(), 0x1fff);
    assert_eq!(format!("{:?}", Sandbox::SECCOMP | Sandbox::USERNS), "Sandbox(seccomp|userns)");
    assert_eq!(Sandbox(0).to_string(), "none");
    assert_eq!(format!("{}", Sandbox::PIDNS | Sandbox(0x2000)), "pidns|0x2000");
    assert_eq!(
        Sandbox::DEFAULT_REQUIRED.to_string(),
        "seccomp|rlimits|no_new_privs"
    );
    let t = codeinterp::Truncated(codeinterp::Truncated::STDOUT.0 | codeinterp::Truncated::FILES.0);
    assert_eq!(format!("{} {:?}", t, codeinterp::Truncated(0)), "stdout|files Truncated(none)");
}
