use mf_net::Replicated;

#[derive(Replicated)]
struct Actor {
    #[replicated]
    id: u16,
}

impl Actor {
    fn changed(&mut self) {}
}

#[derive(Replicated)]
struct Player {
    #[replicated(flatten, owner_only, skip_owner, initial_only, on_change = Actor::changed)]
    actor: Actor,
}

fn main() {}
