use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC takes `&mut self`, not `self`.
#[rpcs]
impl Player {
    #[rpc]
    fn consume(self) {}
}

fn main() {}
