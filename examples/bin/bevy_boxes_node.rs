//! The `bevy_boxes` example as a binary, for the two-process test (`tests/bevy_enet.rs`).

fn main() -> std::process::ExitCode {
    mf_net_examples::bevy_boxes::main(std::env::args().skip(1))
}
