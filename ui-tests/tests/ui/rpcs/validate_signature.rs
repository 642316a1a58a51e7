use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// `validate` names a `fn(&Self, &RpcContext, &Args..) -> bool`.
#[rpcs]
impl Player {
    #[rpc(validate = Self::check)]
    fn set(&mut self, x: i32) {
        self.x = x;
    }

    fn check(&self, x: i32) -> bool {
        x > self.x
    }
}

fn main() {}
