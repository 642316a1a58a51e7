//! Boxes on a bad network: `cargo run --example boxes [-- --seconds N --loss P --clients N
//! --boxes N --seed N]` runs a server and several clients in one process, each end behind a
//! seeded network simulator, shows a live terminal dashboard (or, with `--plain` or when stdout
//! is not a terminal, prints per-second statistics for every peer) and checks that every client
//! converges on the server's state. See `mf_net_examples::boxes`.

fn main() -> std::process::ExitCode {
    mf_net_examples::boxes::main(std::env::args().skip(1))
}
