use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(on_change = "Player::hit")]
    health: i32,
    #[replicated(on_change = |p: &mut Player| p.health += 1)]
    armor: i32,
    #[replicated(on_change)]
    mana: i32,
}

fn main() {}
