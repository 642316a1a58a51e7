#![allow(clippy::unwrap_used)]
//! Seeded fuzzing of the values a game may set: NaN, infinities and `-0.0` in every member kind
//! (plain, interpolated, quantized, inside a `NetCodec` value), strings over the limit in
//! members, RPC arguments and spawn names, over a lossy network. Nothing panics, no client is
//! disconnected or rejects an entry, and once the values fit again every client converges.

use std::time::Duration;

use glam::Vec3;
use mf_net::prelude::*;
use mf_net::replication::{MultiplayerError, MAX_NAME_BYTES};
use mf_net::transport::simulated::NetworkConditions;
use mf_net::wire::MAX_STRING_BYTES;
use mf_net_tests::harness::{drain, Mp, World};
use mf_net_tests::rng::Rng;

/// A value holding a float, as one member.
#[derive(NetCodec, Debug, Default, Clone, PartialEq)]
struct Sample {
    value: f64,
    label: String,
}

/// One member of each kind.
#[derive(Replicated, Debug, Default)]
struct Gauge {
    #[replicated(on_change = Gauge::changed)]
    plain: f32,
    #[replicated(interpolate)]
    position: Vec3,
    #[replicated(quantize(min = -100.0, max = 100.0, bits = 12))]
    quantized: f32,
    #[replicated]
    sample: Sample,
    #[replicated]
    text: String,
    hooks: u32,
    /// Local: what `label` said last.
    heard: String,
}

#[rpcs]
impl Gauge {
    /// Anyone tells the others a label.
    #[rpc(any_peer)]
    fn label(&mut self, text: String) {
        self.heard = text;
    }
}

impl Gauge {
    fn changed(&mut self) {
        self.hooks += 1;
    }
}

const GAUGE: SceneIndex = SceneIndex::new(0);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("gauge", |scene, root| {
            scene.set_value(root, Gauge::default()).map(drop)
        })
        .unwrap();
    scenes
}

/// The values the fuzz picks.
trait Values {
    fn float(&mut self) -> f32;
    fn text(&mut self) -> String;
}

impl Values for Rng {
    /// A float, often one that `==` gets wrong.
    fn float(&mut self) -> f32 {
        match self.below(8) {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => -0.0,
            4 => 0.0,
            _ => (self.below(2000) as f32 - 1000.0) / 10.0,
        }
    }

    /// A string, sometimes one over the limit.
    fn text(&mut self) -> String {
        match self.below(6) {
            0 => "x".repeat(MAX_STRING_BYTES + 1),
            1 => "y".repeat(MAX_STRING_BYTES),
            _ => format!("t{}", self.below(100)),
        }
    }
}

fn gauge(mp: &mut Mp, node: NodeId) -> &mut Gauge {
    let handle = mp.scene().net_ref::<Gauge>(node).unwrap();
    mp.scene_mut().get_mut(handle).unwrap()
}

/// One random change to one gauge on the server, or a refused entry point.
fn poke(world: &mut World, rng: &mut Rng, gauges: &[NodeId]) {
    let node = gauges[rng.below(gauges.len() as u64) as usize];
    match rng.below(9) {
        0 => gauge(&mut world.server, node).plain = rng.float(),
        1 => {
            let (x, y, z) = (rng.float(), rng.float(), rng.float());
            gauge(&mut world.server, node).position = Vec3::new(x, y, z);
        }
        2 => gauge(&mut world.server, node).quantized = rng.float(),
        3 => gauge(&mut world.server, node).sample.value = f64::from(rng.float()),
        4 => gauge(&mut world.server, node).sample.label = rng.text(),
        5 => gauge(&mut world.server, node).text = rng.text(),
        6 => {
            let text = rng.text();
            let long = text.len() > MAX_STRING_BYTES;
            let handle = world.server.scene().net_ref::<Gauge>(node).unwrap();
            let sent = world.server.rpc(handle).label(text);
            assert_eq!(sent.is_err(), long, "{sent:?}");
        }
        7 => {
            let root = world.root();
            let name = "n".repeat(MAX_NAME_BYTES + 1 + rng.below(10) as usize);
            let refused = world.server.spawn_named(GAUGE, root, &name, PeerId::SERVER);
            assert!(matches!(refused, Err(MultiplayerError::NameTooLong { .. })));
        }
        _ => {}
    }
}

fn session(seed: u64) {
    let conditions = NetworkConditions {
        loss: 0.2,
        duplication: 0.05,
        latency: Duration::from_millis(30),
        jitter: Duration::from_millis(20),
        reorder: 0.05,
    };
    let mut world = World::with(
        3,
        MultiplayerConfig::default(),
        Some(conditions),
        seed,
        library,
    );
    let root = world.root();
    let gauges: Vec<NodeId> = (0..4)
        .map(|_| world.server.spawn(GAUGE, root, PeerId::SERVER).unwrap())
        .collect();
    let mut rng = Rng(seed | 1);
    for _ in 0..400 {
        for _ in 0..rng.below(4) {
            poke(&mut world, &mut rng, &gauges);
        }
        world.step(1);
    }
    // Everything back under the limit (floats stay whatever they are, NaN included).
    for &node in &gauges {
        let g = gauge(&mut world.server, node);
        g.text.truncate(8);
        g.sample.label.truncate(8);
    }
    world.step(90);
    world.assert_converged();
    assert_eq!(
        world.server.peers().len(),
        3,
        "seed {seed}: nobody was disconnected"
    );
    for client in &mut world.clients {
        assert_eq!(client.stats().entries_rejected, 0, "seed {seed}");
        let events = drain(client);
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, MultiplayerEvent::Disconnected { .. })),
            "seed {seed}"
        );
    }
    assert!(
        world.server.stats().states_over_limit > 0,
        "seed {seed}: the fuzz reached the limit"
    );
}

#[test]
fn seeded_sessions_of_hostile_values_converge() {
    for seed in [1, 2, 3, 0x5eed] {
        session(seed);
    }
}
