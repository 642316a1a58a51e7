use glam::Quat;
use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    #[replicated(quantize(smallest_three, min = -1.0, max = 1.0, bits = 12))]
    a: Quat,
    #[replicated(quantize(smallest_three, smallest_three, bits = 12))]
    b: Quat,
    #[replicated(quantize(bits = 12))]
    c: Quat,
}

fn main() {}
