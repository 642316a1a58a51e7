use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// One mode per RPC.
#[rpcs]
impl Player {
    #[rpc(server, any_peer)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }

    #[rpc(authority, server)]
    fn reset(&mut self) {
        self.x = 0;
    }
}

fn main() {}
