use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// Every mistake in one block is reported in one build.
#[rpcs(fast)]
impl Player {
    #[rpc(server, any_peer, rate_limit = 0, unreliabel)]
    async fn a<T>(&self, name: &str, ctx: &RpcContext) -> i32 {
        let _ = (name, ctx);
        0
    }

    #[rpc]
    #[rpc(call_local)]
    fn b(self, (x, y): (i32, i32)) {
        let _ = (x, y);
    }

    #[rpc]
    fn a(&mut self) {}

    fn helper(&self) {}
}

fn main() {}
