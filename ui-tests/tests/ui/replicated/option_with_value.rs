use mf_net::Replicated;

#[derive(Replicated)]
#[replicated(name)]
struct Player {
    #[replicated(interpolate = true)]
    position: f32,
    #[replicated = "yes"]
    health: i32,
    #[replicated(flatten(all))]
    base: Base,
}

#[derive(Replicated)]
#[replicated(name = Base)]
struct Base {
    #[replicated]
    x: u8,
}

fn main() {}
