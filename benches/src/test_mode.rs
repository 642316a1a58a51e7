//! Benchmarks run as tests: `cargo test --benches` (or `--all-targets`, a common CI habit)
//! builds the bench binaries in debug and runs them without divan's `--bench` flag, and divan
//! then runs each benchmark once to see that it works. Their fixtures are sized for release
//! builds and many samples (64 clients, 10 000 boxes); in that mode they shrink to a few, so
//! that the whole run takes seconds.

use std::sync::OnceLock;

/// Whether this bench binary runs as a test rather than as a benchmark: divan's rule, `--test`
/// given or `--bench` (which `cargo bench` passes) not.
pub fn running_as_test() -> bool {
    static TEST: OnceLock<bool> = OnceLock::new();
    *TEST.get_or_init(|| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench")
    })
}

/// `full` when benchmarking; at most `tiny` when the binary [runs as a test](running_as_test).
pub fn sized(full: usize, tiny: usize) -> usize {
    if running_as_test() {
        full.min(tiny)
    } else {
        full
    }
}
