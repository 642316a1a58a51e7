use mf_net::Replicated;

#[derive(Replicated)]
#[replicated(name = "game::Player", name = "game::Hero")]
struct Player {
    #[replicated(interpolate, interpolate)]
    position: f32,
}

fn main() {}
