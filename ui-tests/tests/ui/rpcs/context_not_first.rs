use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// The context comes first, right after `&mut self`.
#[rpcs]
impl Player {
    #[rpc(any_peer)]
    fn wave(&mut self, times: u8, ctx: &RpcContext) {
        let _ = (times, ctx.sender());
    }
}

fn main() {}
