// The book's import: the trait is named `NetCodec`, as the user knows it (not
// `mf_net::codec::NetCodec`), and every note points at the user's code, none into mf-net.
// (In a crate that also derives `NetCodec` through the glob, rustc prints the full path all
// the same: it never shortens a name that was used through a glob import.)
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
