use mf_net::prelude::*;

// `#[rpcs]` goes on an impl block.
#[rpcs]
#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

fn main() {}
