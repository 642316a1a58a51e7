use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(predict, skip_owner)]
    aim: f32,
}

fn main() {}
