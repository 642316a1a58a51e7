// The book's import: nothing points into mf-net's source.
use mf_net::prelude::*;

#[derive(Replicated)]
struct Player {
    #[replicated(interpolate)]
    position: f32,
    #[replicated(interpolate)]
    health: i32,
}

fn main() {}
