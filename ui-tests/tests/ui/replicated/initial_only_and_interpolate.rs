use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(initial_only, interpolate)]
    spawn_point: f32,
}

fn main() {}
