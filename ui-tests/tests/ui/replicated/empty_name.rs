use mf_net::Replicated;

#[derive(Replicated)]
#[replicated(name = " ")]
struct Player {
    #[replicated]
    health: i32,
}

fn main() {}
