use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// `validate` takes a path, not a string.
#[rpcs]
impl Player {
    #[rpc(validate = "Self::check")]
    fn reset(&mut self) {
        self.x = 0;
    }

    fn check(&self, _ctx: &RpcContext) -> bool {
        self.x > 0
    }
}

fn main() {}
