use mf_net::prelude::*;

#[derive(Replicated, Default)]
struct Probe {
    #[replicated(quantize(min = -100.0, max = 100.0, bits = 16))]
    a: f32,
    #[replicated(quantize(min = -1, max = (1), bits = 32), owner_only)]
    b: f64,
    #[replicated(interpolate, quantize(min = 0.0, max = 1.0, bits = 1))]
    c: f32,
    #[replicated(initial_only, quantize(min = -0.5, max = 0.5, bits = 24))]
    d: f64,
}

fn main() {
    let p = Probe::default();
    let s = p.new_state(0);
    let mut w = NetWriter::new();
    Probe::write_full(&s, &mut w);
    assert_eq!(w.len(), 1 + 2 + 4 + 1 + 3);
}
