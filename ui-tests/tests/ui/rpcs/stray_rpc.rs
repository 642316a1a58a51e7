use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// `#[rpc]` needs `#[rpcs]` on its impl block.
impl Player {
    #[rpc]
    fn set(&mut self, x: i32) {
        self.x = x;
    }
}

fn main() {}
