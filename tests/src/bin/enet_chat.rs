//! The chat example (`mf_net_examples::chat`) as a binary of this crate, so the multi-process
//! test can launch it (`CARGO_BIN_EXE_enet_chat`): `--host [ADDR:]PORT` or
//! `--join ADDR:PORT --name NAME`.

fn main() -> std::process::ExitCode {
    mf_net_examples::chat::main(std::env::args().skip(1))
}
