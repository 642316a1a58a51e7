use glam::Quat;
use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    #[replicated(quantize(smallest_three, bits = 8))]
    a: Quat,
    #[replicated(quantize(smallest_three, bits = 17))]
    b: Quat,
    #[replicated(quantize(smallest_three, bits = 1.5))]
    c: Quat,
    #[replicated(quantize(smallest_three))]
    d: Quat,
}

fn main() {}
