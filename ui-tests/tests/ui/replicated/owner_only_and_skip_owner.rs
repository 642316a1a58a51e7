use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(owner_only, skip_owner)]
    ammo: u16,
}

fn main() {}
