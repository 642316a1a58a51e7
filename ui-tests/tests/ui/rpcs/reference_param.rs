use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// RPC parameters are sent by value.
#[rpcs]
impl Player {
    #[rpc]
    fn rename(&mut self, name: &str, scores: &[i32]) {
        let _ = (name, scores);
    }
}

fn main() {}
