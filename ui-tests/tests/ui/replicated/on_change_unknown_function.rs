use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(on_change = Self::on_health)]
    health: i32,
}

fn main() {}
