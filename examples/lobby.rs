//! A game lobby with mf-net: `cargo run --example lobby` runs a scripted server and two clients
//! in one process over loopback; `-- --host PORT` and `-- --join ADDR:PORT --name NAME` run it
//! across processes over ENet. See `mf_net_examples::lobby`.

fn main() -> std::process::ExitCode {
    mf_net_examples::lobby::main(std::env::args().skip(1))
}
