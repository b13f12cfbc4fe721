//! HTTP through the host: Config::allow_url and Config::url_limits
//! against a server of the test's own on loopback.
use codeinterp::{Config, Session, Status};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn a_cell_fetches_an_allowed_url_with_the_hosts_header() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let prefix = format!("http://{}/v1/", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut s = stream.unwrap();
            let mut buf = vec![0u8; 65536];
            let mut have = 0;
            while !buf[..have].windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut buf[have..]).unwrap();
                if n == 0 {
                    break;
                }
                have += n;
            }
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..have]).into_owned());
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            );
        }
    });

    let bad = Session::new(Config::new().allow_url(&prefix, &["X-Key: k-4d1e\r\nX: y"]));
    let err = bad.expect_err("a header with CR LF is refused");
    assert!(!err.to_string().contains("k-4d1e"), "{}", err);
    let cfg = Config::new()
        .allow_url(&prefix, &["X-Key: k-4d1e"])
        .url_limits(4096, 1 << 20, Duration::from_secs(20));
    assert!(!format!("{:?}", cfg).contains("k-4d1e"));
    let mut s = Session::new(cfg).unwrap();
    let code = format!(
        "import urllib.request\nprint(urllib.request.urlopen('{p}x').read())\n\
         try:\n    urllib.request.urlopen('{q}')\nexcept OSError as e:\n    print(e)\n",
        p = prefix,
        q = prefix.replace("/v1/", "/v2/")
    );
    let r = s.run(&code).unwrap();
    assert_eq!(r.status, Status::Ok, "{:?}", r.error);
    let out = r.stdout_lossy();
    assert!(out.contains("b'hello'"), "{}", out);
    assert!(
        out.contains(&format!(
            "is not allowed in this sandbox; allowed: {}",
            prefix
        )),
        "{}",
        out
    );
    assert!(!out.contains("k-4d1e"));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].starts_with("GET /v1/x HTTP/1.1\r\n") && seen[0].contains("X-Key: k-4d1e\r\n"),
        "{}",
        seen[0]
    );
}
