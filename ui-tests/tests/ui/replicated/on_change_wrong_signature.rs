use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(on_change = Player::health_changed)]
    health: i32,
    #[replicated(on_change = Self::armor_changed)]
    armor: i32,
}

impl Player {
    fn health_changed(&mut self, _old: &i32) {}

    fn armor_changed(&self) {}
}

fn main() {}
