use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// Only the server sends `server` RPCs, so it never rate-limits them.
#[rpcs]
impl Player {
    #[rpc(server, rate_limit = 5)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
