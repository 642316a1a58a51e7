use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// `reliable` is the default written out; it cannot be combined with `unreliable`.
#[rpcs]
impl Player {
    #[rpc(reliable)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }

    #[rpc(server, reliable, unreliable)]
    fn reset(&mut self) {
        self.x = 0;
    }
}

fn main() {}
