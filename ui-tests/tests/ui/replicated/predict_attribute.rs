use mf_net::prelude::*;

// `predict` is an option of `#[replicated]`, not an attribute of its own.
#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    #[predict]
    x: f32,
}

fn main() {}
