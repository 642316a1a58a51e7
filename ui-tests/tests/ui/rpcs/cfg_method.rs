use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC's wire id is its position in the block: it cannot exist in some builds only.
#[rpcs]
impl Player {
    #[rpc]
    #[cfg(debug_assertions)]
    fn teleport(&mut self, x: i32) {
        self.x = x;
    }

    #[cfg_attr(test, allow(dead_code))]
    #[rpc(server)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
