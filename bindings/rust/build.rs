//! codeinterp-sys links libcodeinterp and says where it found it
//! (`DEP_CODEINTERP_LIB_DIR`, from `$CODEINTERP_LIB_DIR` or pkg-config);
//! this writes that directory into the rpath of this package's own tests
//! and examples, so they run against the build tree's library without
//! LD_LIBRARY_PATH. These link arguments never reach crates that depend
//! on this one.
use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(dir) = env::var("DEP_CODEINTERP_LIB_DIR") {
        if !dir.is_empty() {
            // Every linked target of this package (its unit and
            // integration tests, examples), never a dependent's.
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        }
    }
}
