// The book's import: every note points at the user's code, none into mf-net's source. (rustc
// still names the trait `mf_net::codec::NetCodec` in its help line under the prelude glob,
// which imports both the trait and the derive macro `NetCodec`: not fixed yet.)
use mf_net::prelude::*;

#[derive(Debug, Clone, PartialEq)]
struct Texture(u32);

#[derive(Replicated)]
struct Sprite {
    #[replicated]
    position: (f32, f32),
    #[replicated]
    texture: Texture,
}

fn main() {}
