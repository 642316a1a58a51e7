use mf_net::Replicated;

#[derive(Replicated)]
#[replicated(nmae = "game::Player")]
struct Player {
    #[replicated(interpolat)]
    position: f32,
    #[replicated(reliable)]
    health: i32,
}

fn main() {}
