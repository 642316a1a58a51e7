use mf_net::prelude::*;

// `#[rpcs]` needs a `Replicated` type.
#[derive(Default)]
struct Door {
    open: bool,
}

#[rpcs]
impl Door {
    #[rpc(any_peer)]
    fn toggle(&mut self) {
        self.open = !self.open;
    }
}

fn main() {}
