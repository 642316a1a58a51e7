//! Integration tests for mf-net: shared helpers for the test binaries in `tests/`.

pub mod alloc_counter;
pub mod echo;
pub mod harness;
pub mod rng;
pub mod send_hook;
pub mod tap;
