use mf_net::Replicated;

#[derive(Replicated)]
struct Actor {
    #[replicated]
    position: f32,
}

#[derive(Replicated)]
struct Player {
    #[replicated(flatten, quantize(min = 0.0, max = 1.0, bits = 8))]
    actor: Actor,
}

fn main() {}
