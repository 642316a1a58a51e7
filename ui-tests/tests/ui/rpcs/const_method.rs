use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC cannot be a `const fn`.
#[rpcs]
impl Player {
    #[rpc]
    const fn reset(&mut self) {
        self.x = 0;
    }
}

fn main() {}
