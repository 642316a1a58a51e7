//! Every member option, combined where they may be; hooks given by relative, `Self` and
//! module paths.
use mf_net::Replicated;

mod hooks {
    pub fn on_name(player: &mut super::Player) {
        player.renamed = true;
    }
}

#[derive(Replicated, Default)]
struct Actor {
    #[replicated(owner_only, on_change = Actor::touched)]
    id: u16,
}

impl Actor {
    fn touched(&mut self) {}
}

#[derive(Replicated, Default)]
struct Player {
    #[replicated(flatten)]
    actor: Actor,
    #[replicated(interpolate, skip_owner, on_change = Self::moved)]
    x: f32,
    #[replicated(initial_only, owner_only)]
    class: u8,
    #[replicated(initial_only, on_change = hooks::on_name)]
    name: String,
    #[replicated(predict, interpolate, owner_only, on_change = Self::moved)]
    stamina: f32,
    renamed: bool,
}

impl Player {
    fn moved(&mut self) {}
}

fn main() {
    use mf_net::replication::Replicated as _;
    assert_eq!(Player::OWNER_EXCLUDED, 0b001);
    assert_eq!(Player::SNAPSHOT_EXCLUDED, 0b110);
    assert_eq!(Player::NON_OWNER_EXCLUDED, 0b1010);
    assert_eq!(Player::PREDICTED, 0b1000);
    assert!(Player::OWNER_CONDITIONS && Player::ON_CHANGE && Player::PREDICTS);
    let _ = Player::default().renamed;
}
