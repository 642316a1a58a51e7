use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// A rate limit of 0 would drop every call; other wrong values.
#[rpcs]
impl Player {
    #[rpc(any_peer, rate_limit = 0)]
    fn a(&mut self) {}

    #[rpc(any_peer, rate_limit = "5")]
    fn b(&mut self) {}

    #[rpc(any_peer, rate_limit = 5000000000)]
    fn c(&mut self) {}
}

fn main() {}
