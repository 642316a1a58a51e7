use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

#[rpcs]
impl Player {
    #[rpc]
    fn move_by(&mut self, dx: i32) {
        self.x += dx;
    }
}

// One `#[rpcs]` block per type: its RPCs' wire ids are their positions in that block.
#[rpcs]
impl Player {
    #[rpc(server)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
