use mf_net::Replicated;

#[derive(Replicated)]
struct Player {
    #[replicated(predict, quantize(min = -100.0, max = 100.0, bits = 16))]
    height: f32,
}

fn main() {}
