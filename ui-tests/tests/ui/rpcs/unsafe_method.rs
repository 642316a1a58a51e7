use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC cannot be `unsafe`.
#[rpcs]
impl Player {
    #[rpc]
    unsafe fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
