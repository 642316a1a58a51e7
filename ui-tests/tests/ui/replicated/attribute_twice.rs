use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated]
    #[replicated(interpolate)]
    position: f32,
}

fn main() {}
