use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// The error of a failing RPC must be `Display` (it is logged).
#[derive(Debug)]
struct Oops;

#[rpcs]
impl Player {
    #[rpc]
    fn set(&mut self, x: i32) -> Result<(), Oops> {
        self.x = x;
        Err(Oops)
    }
}

fn main() {}
