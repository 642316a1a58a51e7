#![allow(clippy::unwrap_used)]
//! The bit-packed form of derived types' states (`mf_net::codec::state_bits`), driven by the
//! layout the derive emits: every member kind (a quantized vector and rotation, integers, a
//! `bool`, unquantized floats and vectors, a string in its byte encoding), a flattened base and an `owner_only`
//! member. The bits read back as exactly the bytes the type wrote, chained over ticks, each
//! state coded against the last; the bytes apply to the client's copy as the byte form does.

use glam::{Quat, Vec3};
use mf_net::codec::quantize::Buckets;
use mf_net::codec::state_bits::{bits_to_bytes, bytes_to_bits, MemberBits};
use mf_net::prelude::*;
use mf_net::replication::{Apply, Audience, Capture};
use mf_net::wire::{BitReader, BitWriter, NetReader, NetWriter};
use mf_net_tests::rng::Rng;

#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Vitals {
    #[replicated]
    hp: i32,
    #[replicated]
    alive: bool,
    #[replicated]
    tag: String,
}

#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Unit {
    #[replicated(flatten)]
    vitals: Vitals,
    #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
    position: Vec3,
    #[replicated(quantize(smallest_three, bits = 12))]
    rotation: Quat,
    #[replicated(owner_only)]
    ammo: u16,
    #[replicated]
    mass: f32,
    #[replicated]
    velocity: Vec3,
}

#[test]
fn the_derive_lays_out_each_member_by_its_kind() {
    let layout = <Unit as Replicated>::LAYOUT;
    assert_eq!(layout.slots(), 8);
    let base: Vec<String> = layout.bases[0].members.iter().map(kind).collect();
    assert_eq!(base, ["int 4", "bool", "bytes"]);
    let own: Vec<String> = layout.members.iter().map(kind).collect();
    assert_eq!(
        own,
        [
            "quantized 3 of 16 bits",
            "rotation",
            "int 2",
            "floats 1",
            "floats 3"
        ]
    );
}

fn kind(m: &MemberBits) -> String {
    match m {
        MemberBits::Quantized { q, components } => {
            format!("quantized {components} of {} bits", q.bits())
        }
        MemberBits::Rotation { .. } => "rotation".into(),
        MemberBits::Int { bytes } => format!("int {bytes}"),
        MemberBits::Floats { components } => format!("floats {components}"),
        MemberBits::Bool => "bool".into(),
        MemberBits::Bytes { .. } => "bytes".into(),
    }
}

/// Moves `unit` a little (each member with its own chance), as a game tick would.
fn step(unit: &mut Unit, rng: &mut Rng) {
    let small = |rng: &mut Rng| (rng.below(200) as f32 - 100.0) / 100.0;
    if rng.below(10) < 9 {
        unit.position += Vec3::new(small(rng), small(rng), small(rng));
        unit.velocity = Vec3::new(small(rng), 0.0, small(rng)) * 3.0;
    }
    if rng.below(10) < 8 {
        unit.rotation = (unit.rotation * Quat::from_rotation_y(small(rng))).normalize();
    }
    if rng.below(10) == 0 {
        unit.vitals.hp -= rng.below(30) as i32;
        unit.vitals.alive = unit.vitals.hp > 0;
        unit.ammo = unit.ammo.wrapping_sub(1);
    }
    if rng.below(40) == 0 {
        unit.vitals.tag = format!("unit-{}", rng.below(1000));
        unit.mass = small(rng) * 50.0;
    }
}

/// The bit form of `bytes` (a state of `Unit`) against `base`, and what it reads back as.
fn transcode(bytes: &[u8], base: &[Buckets]) -> (usize, Vec<u8>, Vec<Buckets>) {
    let layout = <Unit as Replicated>::LAYOUT;
    let mut w = BitWriter::new();
    let mut sent = vec![Buckets::default(); layout.slots()];
    bytes_to_bits(layout, &mut NetReader::new(bytes), base, &mut w, &mut sent).unwrap();
    let bits = w.bit_len();
    let packed = w.finish().to_vec();
    let mut out = NetWriter::new();
    let mut now = vec![Buckets::default(); layout.slots()];
    let mut r = BitReader::new(&packed);
    bits_to_bytes(layout, &mut r, base, &mut out, &mut now).unwrap();
    r.finish().unwrap();
    assert_eq!(sent, now, "both ends hold the same values after it");
    (bits, out.into_vec(), now)
}

#[test]
fn states_chained_over_ticks_read_back_as_their_bytes_and_apply_alike() {
    for (seed, owner) in [(1, false), (2, true), (3, false)] {
        let mut rng = Rng(seed);
        let mut unit = Unit {
            vitals: Vitals {
                hp: 100,
                alive: true,
                tag: "unit".into(),
            },
            position: Vec3::new(10.0, 0.0, -20.0),
            rotation: Quat::from_rotation_y(0.3),
            ammo: 30,
            mass: 80.0,
            velocity: Vec3::ZERO,
        };
        let audience = Audience::of(owner);
        let mut state = unit.new_state(1);
        // The spawn: the full state, from no baseline.
        let mut w = NetWriter::new();
        <Unit as Capture<_>>::write_full_for(&state, audience, &mut w);
        let full = w.into_vec();
        let (full_bits, bytes, mut base) = transcode(&full, &[]);
        assert_eq!(bytes, full);
        assert!(
            full_bits < full.len() * 8,
            "{full_bits} bits for {} bytes",
            full.len()
        );
        let mut client = Unit::default();
        client.read(&mut NetReader::new(&bytes)).unwrap();
        let (mut delta_bits, mut byte_bits) = (0, 0);
        for tick in 2..200u32 {
            step(&mut unit, &mut rng);
            if !unit.capture(&mut state, tick) {
                continue;
            }
            // Each state carries what changed since the last, coded against it.
            let mut w = NetWriter::new();
            <Unit as Capture<_>>::write_since_for(&state, Some(tick - 1), audience, &mut w);
            let since = w.into_vec();
            let (bits, bytes, now) = transcode(&since, &base);
            assert_eq!(bytes, since, "seed {seed}, tick {tick}");
            client.read(&mut NetReader::new(&bytes)).unwrap();
            (delta_bits, byte_bits, base) = (delta_bits + bits, byte_bits + since.len() * 8, now);
        }
        // The client has the server's values (quantized, and without what it does not get).
        let mut w = NetWriter::new();
        <Unit as Capture<_>>::write_full_for(&state, audience, &mut w);
        let mut expected = Unit::default();
        expected.read(&mut NetReader::new(w.as_slice())).unwrap();
        assert_eq!(client, expected, "seed {seed}");
        assert_eq!(client.ammo == unit.ammo, owner);
        assert!(
            delta_bits * 3 < byte_bits * 2,
            "{delta_bits} bits against {byte_bits}"
        );
    }
}
