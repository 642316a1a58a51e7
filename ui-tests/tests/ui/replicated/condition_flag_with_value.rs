use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(owner_only = true)]
    ammo: u16,
}

fn main() {}
