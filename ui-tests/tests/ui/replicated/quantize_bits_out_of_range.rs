use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    #[replicated(quantize(min = -1.0, max = 1.0, bits = 0))]
    a: f32,
    #[replicated(quantize(min = -1.0, max = 1.0, bits = 33))]
    b: f32,
    #[replicated(quantize(min = -1.0, max = 1.0, bits = 16.0))]
    c: f32,
}

fn main() {}
