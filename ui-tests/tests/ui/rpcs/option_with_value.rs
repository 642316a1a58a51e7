use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// Word options take no value.
#[rpcs]
impl Player {
    #[rpc(call_local = true)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
