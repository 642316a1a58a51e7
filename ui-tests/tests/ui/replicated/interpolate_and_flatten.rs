use mf_net::Replicated;

#[derive(Replicated)]
struct Actor {
    #[replicated(interpolate)]
    position: f32,
}

#[derive(Replicated)]
struct Player {
    #[replicated(flatten, interpolate)]
    actor: Actor,
}

fn main() {}
