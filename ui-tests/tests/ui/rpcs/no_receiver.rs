use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC needs a receiver.
#[rpcs]
impl Player {
    #[rpc(server)]
    fn announce(text: String) {
        let _ = text;
    }
}

fn main() {}
