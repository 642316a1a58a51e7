use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    #[replicated(quantize(min = 10.0, max = -10.0, bits = 16))]
    a: f32,
    #[replicated(quantize(min = 5, max = 5, bits = 16))]
    b: f64,
    #[replicated(quantize(min = -1.0, max = "1.0", bits = 16))]
    c: f32,
}

fn main() {}
