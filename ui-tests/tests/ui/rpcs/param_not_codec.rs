use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    x: i32,
}

// RPC parameters must be `NetCodec`.
struct Texture(u32);

#[rpcs]
impl Player {
    #[rpc]
    fn paint(&mut self, texture: Texture) {
        self.x = texture.0 as i32;
    }
}

fn main() {}
