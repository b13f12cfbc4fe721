//! Helpers shared by the integration tests.
#![allow(dead_code)]

use codeinterp::{Config, Session};

/// A session with the defaults but a 20 s cell timeout, so a hang fails
/// the test instead of stalling it.
pub fn session() -> Session {
    session_with(Config::new())
}

pub fn session_with(config: Config) -> Session {
    Session::new(config.timeout(std::time::Duration::from_secs(20)))
        .unwrap_or_else(|e| panic!("Session::new failed: {}", e))
}

/// Like `session_with`, but keeps the config's own timeout.
pub fn session_exact(config: Config) -> Session {
    Session::new(config).unwrap_or_else(|e| panic!("Session::new failed: {}", e))
}

pub const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Width and height from a PNG's IHDR chunk.
pub fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(PNG_SIGNATURE), "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}
