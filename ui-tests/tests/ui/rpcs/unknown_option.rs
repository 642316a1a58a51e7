use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// Unknown options get a suggestion.
#[rpcs]
impl Player {
    #[rpc(call_locl)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }

    #[rpc(unrelaible)]
    fn reset(&mut self) {
        self.x = 0;
    }
}

fn main() {}
