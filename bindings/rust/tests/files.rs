//! Files in and out of the workspace.
mod common;

use codeinterp::ErrorKind;
use common::session;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

#[test]
fn csv_in_pandas_file_out() {
    let mut s = session();
    let csv = b"city,temp\nOslo,3\nCairo,25\nLima,18\n";
    s.put_file("weather.csv", csv).unwrap();
    assert_eq!(std::fs::read(s.workspace().join("weather.csv")).unwrap(), csv);
    assert_eq!(s.get_file("weather.csv").unwrap(), csv);

    let r = s
        .run(
            "import pandas as pd\n\
             df = pd.read_csv('weather.csv')\n\
             hot = df[df.temp > 10].sort_values('temp')\n\
             hot.to_csv('hot.csv', index=False)\n\
             len(hot)",
        )
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(r.value.as_deref(), Some("2"));
    // Only what the cell wrote; put_file's upload is not listed.
    assert_eq!(r.files, vec![PathBuf::from("hot.csv")]);
    assert_eq!(s.get_file("hot.csv").unwrap(), b"city,temp\nLima,18\nCairo,25\n");
}

#[test]
fn subdirectories_and_byte_names() {
    let mut s = session();
    let r = s
        .run(
            "import os\n\
             os.makedirs('out/sub', exist_ok=True)\n\
             open('out/sub/r.txt', 'w').write('hi')\n\
             open(b'caf\\xe9.txt', 'wb').write(b'\\x00\\x01\\xff')",
        )
        .unwrap();
    assert!(r.is_ok(), "{:?}", r.error);
    let latin1 = PathBuf::from(OsStr::from_bytes(b"caf\xe9.txt"));
    assert_eq!(r.files, vec![latin1.clone(), PathBuf::from("out/sub/r.txt")]);
    assert_eq!(s.get_file("out/sub/r.txt").unwrap(), b"hi");
    assert_eq!(s.get_file(&latin1).unwrap(), b"\x00\x01\xff");

    s.put_file(Path::new("out/sub/in.bin"), &[0u8, 255, 7]).unwrap();
    let r = s.run("list(open('out/sub/in.bin', 'rb').read())").unwrap();
    assert_eq!(r.value.as_deref(), Some("[0, 255, 7]"));
}

#[test]
fn refused_names_and_missing_files() {
    let mut s = session();
    let e = s.get_file("missing.csv").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(e.message(), "no such file in the workspace");
    assert_eq!(e.op(), "Session::get_file");
    assert!(!e.to_string().contains("ci_"), "{}", e);

    let rule = "a name is a path relative to the workspace, without empty, \".\" or \"..\" \
                components";
    for (name, problem) in [
        ("../x", "has a \"..\" component"),
        ("/etc/passwd", "is absolute"),
        ("", "is empty"),
        ("a//b", "has an empty component (\"//\" or a trailing \"/\")"),
        ("d/", "has an empty component (\"//\" or a trailing \"/\")"),
        ("a/./b", "has a \".\" component"),
    ] {
        let want = format!("name {:?} {}: {}", name, problem, rule);
        let e = s.get_file(name).unwrap_err();
        assert_eq!(e.to_string(), format!("Session::get_file: invalid argument: {}", want));
        let e = s.put_file(name, b"x").unwrap_err();
        assert_eq!(e.to_string(), format!("Session::put_file: invalid argument: {}", want));
        assert_eq!(e.detail(), want);
    }

    for bad in ["../escape", "/etc/passwd", "", "a/../b"] {
        let e = s.put_file(bad, b"x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{:?}: {}", bad, e);
    }
    let e = s.put_file("nul\0name", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.detail().contains("NUL"));
    let e = s.put_file("no/such/dir.txt", b"x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);

    // A link the cell planted is refused, never followed.
    let r = s.run("import os\nos.symlink('/etc/passwd', 'link')").unwrap();
    if r.is_ok() {
        assert_eq!(s.get_file("link").unwrap_err().kind(), ErrorKind::Unsafe);
    } else {
        // Landlock forbids making links at all.
        assert_eq!(r.error.unwrap().name, "PermissionError");
    }
}
