use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC cannot be `async`.
#[rpcs]
impl Player {
    #[rpc]
    async fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
