use mf_net::Replicated;

#[derive(Replicated)]
enum State {
    Idle,
    Moving { speed: f32 },
}

fn main() {}
