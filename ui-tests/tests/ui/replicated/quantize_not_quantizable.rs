use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    #[replicated(quantize(min = 0.0, max = 100.0, bits = 8))]
    health: i32,
}

fn main() {}
