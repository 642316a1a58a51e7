//! Boxes as Bevy apps: `cargo run --example bevy_boxes [-- --seconds N --loss P --clients N
//! --boxes N --seed N]` runs a headless Bevy server and clients in one process over a seeded
//! bad network and checks that every client converges; `-- --server PORT` and
//! `-- --client HOST:PORT` run one end each over ENet. See `mf_net_examples::bevy_boxes`.

fn main() -> std::process::ExitCode {
    mf_net_examples::bevy_boxes::main(std::env::args().skip(1))
}
