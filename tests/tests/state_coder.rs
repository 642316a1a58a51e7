#![allow(clippy::unwrap_used)]
//! The server's bit coder, generated per type (`Capture::write_bits_since_for`), against the
//! transcoding of the byte form it replaced (`state_bits::bytes_to_bits` of
//! `Capture::write_since_for`), which clients still read with: for random values, change
//! histories, baselines, `since`s and audiences, the same bits and the same values; a string
//! over the limit refuses the state in both.

use glam::{EulerRot, Quat, Vec3};
use mf_net::__private::Coding;
use mf_net::codec::quantize::Buckets;
use mf_net::codec::state_bits::bytes_to_bits;
use mf_net::prelude::*;
use mf_net::replication::{Audience, Capture};
use mf_net::wire::{BitWriter, MAX_STRING_BYTES};
use proptest::prelude::*;

/// A base with an owner-only member.
#[derive(Replicated, Debug, Default, Clone)]
struct Stats {
    #[replicated]
    hp: i32,
    #[replicated]
    alive: bool,
    #[replicated(owner_only)]
    secret: u64,
}

/// Every form a member takes in the bit form: quantized vectors, floats and rotations,
/// unquantized floats, vectors and quaternions, integers of each width and sign, a `bool` (in
/// the base), a string
/// hidden from the owner, an `initial_only` member, and a flattened base.
#[derive(Replicated, Debug, Default, Clone)]
struct Rich {
    #[replicated(flatten)]
    stats: Stats,
    #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
    at: Vec3,
    #[replicated(quantize(smallest_three, bits = 12))]
    turn: Quat,
    #[replicated(quantize(min = 0.0, max = 10.0, bits = 8))]
    heat: f32,
    #[replicated]
    velocity: Vec3,
    #[replicated]
    speed: f32,
    #[replicated]
    ammo: u16,
    #[replicated]
    small: i8,
    #[replicated]
    big: u64,
    #[replicated]
    wide: i64,
    #[replicated]
    mid: i16,
    #[replicated]
    count: u32,
    #[replicated]
    spin: Quat,
    #[replicated(skip_owner)]
    name: String,
    #[replicated(initial_only)]
    kind: u8,
}

type State = <Rich as Replicated>::State;

/// The reference: the byte form transcoded against `base`. `None` if the byte form went over a
/// limit.
fn transcoded(
    state: &State,
    which: (Option<u32>, Audience),
    base: &[Buckets],
) -> Option<(Vec<u8>, usize, Vec<Buckets>)> {
    let mut bytes = NetWriter::new();
    Rich::write_since_for(state, which.0, which.1, &mut bytes);
    if bytes.over_limit() {
        return None;
    }
    let mut w = BitWriter::new();
    let mut now = vec![Buckets::default(); Rich::LAYOUT.slots()];
    let mut r = NetReader::new(bytes.as_slice());
    bytes_to_bits(Rich::LAYOUT, &mut r, base, &mut w, &mut now).unwrap();
    assert_eq!(r.remaining(), 0, "the whole byte form transcoded");
    let bits = w.bit_len();
    Some((w.finish().to_vec(), bits, now))
}

/// The server's coding of `state` for `which` from zero: whether it can be sent.
fn code(coding: &mut Coding, state: &State, (since, audience): (Option<u32>, Audience)) -> bool {
    coding.code(Rich::LAYOUT, &[], |c| {
        Rich::write_bits_since_for(state, since, audience, c);
    })
}

fn float() -> impl Strategy<Value = f32> {
    prop_oneof![
        -600.0f32..600.0,
        any::<f32>(),
        Just(-0.0f32),
        Just(f32::NAN),
        Just(f32::INFINITY),
    ]
}

fn vec3() -> impl Strategy<Value = Vec3> {
    (float(), float(), float()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn rich() -> impl Strategy<Value = Rich> {
    let stats = (any::<i32>(), any::<bool>(), any::<u64>());
    let turn = (-3.2f32..3.2, -3.2f32..3.2, -3.2f32..3.2)
        .prop_map(|(a, b, c)| Quat::from_euler(EulerRot::XYZ, a, b, c));
    let ints = (any::<u16>(), any::<i8>(), any::<u64>(), any::<u8>());
    let more = (
        any::<i64>(),
        any::<i16>(),
        any::<u32>(),
        (float(), float(), float(), float()),
    );
    let name = prop_oneof![Just(String::new()), "[a-z]{1,12}"];
    (
        stats,
        vec3(),
        turn,
        float(),
        vec3(),
        float(),
        (ints, more),
        name,
    )
        .prop_map(
            |((hp, alive, secret), at, turn, heat, velocity, speed, (ints, more), name)| Rich {
                stats: Stats { hp, alive, secret },
                at,
                turn,
                heat,
                velocity,
                speed,
                ammo: ints.0,
                small: ints.1,
                big: ints.2,
                wide: more.0,
                mid: more.1,
                count: more.2,
                spin: Quat::from_xyzw(more.3 .0, more.3 .1, more.3 .2, more.3 .3),
                name,
                kind: ints.3,
            },
        )
}

fn audience() -> impl Strategy<Value = Audience> {
    prop_oneof![
        Just(Audience::All),
        Just(Audience::Owner),
        Just(Audience::NonOwner)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A node's values at ticks 0 to `n`, each captured; a client's baseline (none, or the
    /// values of an earlier whole state) and `since` (none, or a tick): the coder's bits and
    /// values are the transcoding's.
    #[test]
    fn the_coder_writes_the_bits_the_byte_form_transcodes_to(
        history in prop::collection::vec(rich(), 1..5),
        since in prop::option::of(0u32..6),
        base_at in prop::option::of(0usize..5),
        audience in audience(),
    ) {
        let mut state = history[0].new_state(0);
        let mut bases = Vec::new();
        for (tick, value) in history.iter().enumerate() {
            let tick = u32::try_from(tick).unwrap();
            value.capture(&mut state, tick);
            let (_, _, whole) = transcoded(&state, (None, Audience::All), &[]).unwrap();
            bases.push(whole);
        }
        let base = base_at.and_then(|i| bases.get(i)).map_or(&[][..], Vec::as_slice);
        let (bytes, bits, values) = transcoded(&state, (since, audience), base).unwrap();
        let mut coding = Coding::default();
        prop_assert!(coding.code(Rich::LAYOUT, base, |c| Rich::write_bits_since_for(&state, since, audience, c)));
        prop_assert_eq!(coding.bit_len(), bits);
        prop_assert_eq!(coding.values(), &values[..]);
        prop_assert_eq!(coding.bits(), &bytes[..]);
    }
}

#[test]
fn a_string_over_the_limit_refuses_the_state_as_the_byte_form_does() {
    let mut value = Rich::default();
    let mut state = value.new_state(0);
    value.name = "x".repeat(MAX_STRING_BYTES + 1);
    value.capture(&mut state, 1);
    let mut coding = Coding::default();
    let which = (Some(0), Audience::All);
    assert!(transcoded(&state, which, &[]).is_none());
    assert!(!code(&mut coding, &state, which));
    // Not sent to the owner, whom the member skips: both read it.
    let owner = (Some(0), Audience::Owner);
    assert!(transcoded(&state, owner, &[]).is_some());
    assert!(code(&mut coding, &state, owner));
    value.name.truncate(MAX_STRING_BYTES);
    value.capture(&mut state, 2);
    assert!(code(&mut coding, &state, which));
}
