use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC cannot be generic.
#[rpcs]
impl Player {
    #[rpc]
    fn set<T: Into<i32>>(&mut self, x: T) {
        self.x = x.into();
    }
}

fn main() {}
