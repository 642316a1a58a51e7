use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// RPC parameters must be plain names.
#[rpcs]
impl Player {
    #[rpc]
    fn teleport(&mut self, (x, _y): (i32, i32), _: u8) {
        self.x = x;
    }
}

fn main() {}
