//! Compile-fail and compile-pass cases pinning the diagnostics of mf-net's macros.
//!
//! The cases live in `tests/ui/`, one file per diagnostic, each with the compiler output it must
//! produce in a `.stderr` file beside it; `tests/ui.rs` runs them with `trybuild`. After changing
//! a message on purpose, regenerate the expected output with
//! `TRYBUILD=overwrite cargo test -p mf-net-ui-tests` and read every changed `.stderr`.
