use mf_net::prediction::Simulation;
use mf_net::prelude::*;

// An input type without `NetCodec`, used as the book does: the error says to derive it.
#[derive(Clone, Default)]
struct Walk {
    dir: i8,
}

fn frame(mp: &mut Multiplayer<Box<dyn Transport>>, sim: &mut Simulation<Walk>) {
    sim.run(mp, |_tick| Walk { dir: 1 }, |_step| {});
}

fn main() {
    let _ = frame;
}
