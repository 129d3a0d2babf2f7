//! Gives the shared library a SONAME on Linux, so a program linked against an installed
//! `libweight_manifest_ffi.so` records that name rather than the path it was linked from.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libweight_manifest_ffi.so");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
