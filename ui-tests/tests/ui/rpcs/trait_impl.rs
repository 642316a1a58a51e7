use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// `#[rpcs]` goes on an inherent impl block.
trait Movable {
    fn move_by(&mut self, dx: i32);
}

#[rpcs]
impl Movable for Player {
    #[rpc]
    fn move_by(&mut self, dx: i32) {
        self.x += dx;
    }
}

fn main() {}
