//! Chat over the mf-net message bus: `cargo run --example chat` runs a server and two clients
//! in one process over loopback; `-- --host PORT` and `-- --join ADDR:PORT --name NAME` run it
//! across processes over ENet. See `mf_net_examples::chat`.

fn main() -> std::process::ExitCode {
    mf_net_examples::chat::main(std::env::args().skip(1))
}
