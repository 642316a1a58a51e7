use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    #[replicated(quantize(min = -1.0, max = 1.0))]
    a: f32,
    #[replicated(quantize)]
    b: f32,
    #[replicated(quantize(bits = 8, step = 0.5))]
    c: f32,
}

fn main() {}
