use mf_net::{NetCodec, Replicated};

#[derive(NetCodec, Clone)]
struct Inventory {
    slots: Vec<u32>,
}

#[derive(Replicated)]
struct Player {
    #[replicated]
    inventory: Inventory,
}

fn main() {}
