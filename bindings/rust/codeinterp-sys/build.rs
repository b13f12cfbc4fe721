//! Tells rustc where libcodeinterp is.
//!
//! 1. `CODEINTERP_LIB_DIR` (a directory holding libcodeinterp.so, such as
//!    the C tree's `build/`): searched first.
//! 2. Otherwise `pkg-config --libs-only-L codeinterp`, when pkg-config and an
//!    installed codeinterp.pc are there.
//! 3. Otherwise the linker's default directories.
//!
//! The directory used (1 or 2) goes to dependents' build scripts as
//! `DEP_CODEINTERP_LIB_DIR` (`links = "codeinterp"`), so the safe crate can
//! write it into the rpath of its own tests and examples: no rpath is given
//! to anything else (`cargo:rustc-link-arg` reaches only its own package's
//! targets).
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CODEINTERP_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");

    let dirs = match env::var("CODEINTERP_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => vec![dir],
        _ => pkg_config_dirs(),
    };
    for dir in &dirs {
        println!("cargo:rustc-link-search=native={}", dir);
    }
    println!("cargo:rustc-link-lib=dylib=codeinterp");
    println!("cargo:lib_dir={}", dirs.first().map(String::as_str).unwrap_or(""));
}

/// The -L directories pkg-config gives for codeinterp; empty when pkg-config
/// is missing or does not know the package.
fn pkg_config_dirs() -> Vec<String> {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let out = match Command::new(pkg_config)
        .args(["--libs-only-L", "codeinterp"])
        .output()
    {
        Ok(out) if out.status.success() => out,
        _ => return Vec::new(),
    };
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("-L"))
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .collect()
}
