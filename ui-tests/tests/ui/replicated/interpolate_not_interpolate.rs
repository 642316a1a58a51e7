use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(interpolate)]
    position: f32,
    #[replicated(interpolate)]
    health: i32,
}

fn main() {}
