use mf_net::{NetCodec, Replicated};

#[derive(NetCodec, Clone, PartialEq)]
struct Stats {
    strength: u8,
}

#[derive(Replicated)]
struct Player {
    #[replicated(flatten)]
    stats: Stats,
}

fn main() {}
