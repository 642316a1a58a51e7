use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC cannot have an `extern` ABI.
#[rpcs]
impl Player {
    #[rpc]
    extern "C" fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
