use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// Each option once.
#[rpcs]
impl Player {
    #[rpc(server, call_local, call_local)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
