use mf_net::prelude::*;

// `#[rpcs]` cannot be used on a generic impl block.
struct Wrapper<T>(T);

#[rpcs]
impl<T> Wrapper<T> {
    #[rpc]
    fn poke(&mut self) {}
}

fn main() {}
