use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(initial_only, predict)]
    stamina: f32,
}

fn main() {}
