use glam::{Quat, Vec3};
use mf_net::Replicated;

#[derive(Replicated)]
struct Probe {
    // A rotation with a linear range: `smallest_three` is the rotation spelling.
    #[replicated(quantize(min = -1.0, max = 1.0, bits = 12))]
    a: Quat,
    // `smallest_three` on a vector.
    #[replicated(quantize(smallest_three, bits = 12))]
    b: Vec3,
}

fn main() {}
