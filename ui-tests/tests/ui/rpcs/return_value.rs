use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// An RPC returns nothing or `Result<(), E>`.
#[rpcs]
impl Player {
    #[rpc]
    fn get(&mut self) -> i32 {
        self.x
    }

    #[rpc]
    fn try_get(&mut self) -> Result<i32, String> {
        Ok(self.x)
    }
}

fn main() {}
