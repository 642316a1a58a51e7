// Built without mf-net's `glam` feature (tests/no_glam.rs): a glam vector member lacks
// `NetCodec` and `Interpolate`, and the first of the two errors already says to turn the
// feature on.
use mf_net::prelude::*;

#[derive(Replicated)]
struct Ship {
    #[replicated(interpolate)]
    position: glam::Vec3,
}

fn main() {}
