use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// RPC names are unique, and do not collide with the generated `_to` senders.
#[rpcs]
impl Player {
    #[rpc]
    fn hit(&mut self, damage: i32) {
        self.x -= damage;
    }

    #[rpc]
    fn hit_to(&mut self, damage: i32) {
        self.x -= damage;
    }
}

fn main() {}
