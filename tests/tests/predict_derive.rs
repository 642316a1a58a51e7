#![allow(clippy::unwrap_used)]
//! `#[replicated(predict)]` through the derive: the `PREDICTED` / `PREDICTS` constants,
//! `restore_predicted`, `predicted_difference`, `smooth_predicted`, `MemberInfo::predict`,
//! `RegisteredType::predicts`, and the schema hash (unchanged for types without `predict`).

use glam::Vec3;
use mf_net::codec::NetCodec;
use mf_net::prelude::*;
use mf_net::replication::RegisteredType;
use mf_net::schema::{hash_name, hash_str, hash_u64};

/// A base with one predicted member and one plain one.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Body {
    #[replicated(predict)]
    velocity: f32,
    #[replicated]
    mass: u16,
}

/// A predicted vector, a predicted and interpolated float, a plain integer, and a flattened
/// base with a predicted member.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Craft {
    #[replicated(flatten)]
    body: Body,
    #[replicated(predict)]
    position: Vec3,
    #[replicated(predict, interpolate)]
    heading: f32,
    #[replicated]
    score: i32,
    #[replicated(predict, owner_only, on_change = Craft::fuel_changed)]
    fuel: f32,
    local: u8,
}

impl Craft {
    fn fuel_changed(&mut self) {
        self.local += 1;
    }
}

/// No predicted member anywhere.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Plain {
    #[replicated(interpolate)]
    x: f32,
    #[replicated(owner_only)]
    y: i32,
}

/// Predicted only through its base.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Carrier {
    #[replicated]
    id: u8,
    #[replicated(flatten)]
    body: Body,
}

fn craft() -> Craft {
    Craft {
        body: Body {
            velocity: 1.5,
            mass: 7,
        },
        position: Vec3::new(1.0, 2.0, 3.0),
        heading: 10.0,
        score: 4,
        fuel: 0.5,
        local: 0,
    }
}

#[test]
fn constants_mark_the_predicted_members() {
    assert_eq!(Body::PREDICTED, 0b01);
    const { assert!(Body::PREDICTS) };
    // position, heading, fuel: bits 0, 1 and 3 of Craft's own members (score is bit 2).
    assert_eq!(Craft::PREDICTED, 0b1011);
    const { assert!(Craft::PREDICTS) };
    assert_eq!(Plain::PREDICTED, 0);
    const { assert!(!Plain::PREDICTS) };
    // Only the base predicts: the own mask is empty, the chain predicts.
    assert_eq!(Carrier::PREDICTED, 0);
    const { assert!(Carrier::PREDICTS) };

    let predict: Vec<(&str, bool)> = Craft::MEMBERS.iter().map(|m| (m.name, m.predict)).collect();
    assert_eq!(
        predict,
        [
            ("position", true),
            ("heading", true),
            ("score", false),
            ("fuel", true)
        ]
    );
    assert!(Craft::MEMBERS[1].interpolate);
    assert!(Plain::MEMBERS.iter().all(|m| !m.predict));

    let entry = |name: &str| {
        RegisteredType::linked()
            .find(|t| t.name() == name)
            .copied()
            .unwrap()
    };
    assert!(entry("Craft").predicts());
    assert!(entry("Carrier").predicts());
    assert!(entry("Body").predicts());
    assert!(!entry("Plain").predicts());
}

#[test]
fn restore_predicted_assigns_only_the_predicted_members() {
    let saved = craft();
    let state = saved.new_state(3);
    let mut now = Craft {
        body: Body {
            velocity: -8.0,
            mass: 99,
        },
        position: Vec3::new(-1.0, -1.0, -1.0),
        heading: 270.0,
        score: 55,
        fuel: 0.0,
        local: 9,
    };
    now.restore_predicted(&state);
    assert_eq!(
        now,
        Craft {
            body: Body {
                velocity: 1.5, // predicted, in the base
                mass: 99,
            },
            position: Vec3::new(1.0, 2.0, 3.0),
            heading: 10.0,
            score: 55,
            fuel: 0.5,
            local: 9,
        }
    );

    // A type without predicted members is left as it is.
    let mut plain = Plain { x: 1.0, y: 2 };
    let plain_state = Plain { x: 5.0, y: 6 }.new_state(0);
    plain.restore_predicted(&plain_state);
    assert_eq!(plain, Plain { x: 1.0, y: 2 });
}

#[test]
fn restore_predicted_follows_captured_values() {
    let mut c = craft();
    let mut state = c.new_state(0);
    c.heading = 20.0;
    c.score = 5;
    assert!(c.capture(&mut state, 1));
    let mut other = Craft::default();
    other.restore_predicted(&state);
    assert_eq!(other.heading, 20.0);
    assert_eq!(other.score, 0, "not predicted: untouched");
    assert_eq!(other.body.velocity, 1.5);
    assert_eq!(other.body.mass, 0, "not predicted: untouched");
}

#[test]
fn predicted_difference_names_the_first_differing_predicted_member() {
    let base = craft();
    let a = base.new_state(0);
    assert_eq!(Craft::predicted_difference(&a, &base.new_state(5)), None);

    // Members that are not predicted never count.
    let mut c = base.clone();
    c.score = 100;
    c.body.mass = 1;
    c.local = 3;
    assert_eq!(Craft::predicted_difference(&a, &c.new_state(0)), None);

    let differs = |change: fn(&mut Craft)| {
        let mut c = base.clone();
        change(&mut c);
        Craft::predicted_difference(&a, &c.new_state(0))
    };
    assert_eq!(differs(|c| c.position.y += 1.0), Some("position"));
    assert_eq!(differs(|c| c.heading = 11.0), Some("heading"));
    assert_eq!(differs(|c| c.fuel = 0.25), Some("fuel"));
    assert_eq!(differs(|c| c.body.velocity = 0.0), Some("velocity"));
    // Bases first, then own members in declaration order.
    assert_eq!(
        differs(|c| {
            c.fuel = 2.0;
            c.heading = 2.0;
            c.body.velocity = 2.0;
        }),
        Some("velocity")
    );
    assert_eq!(
        differs(|c| {
            c.fuel = 2.0;
            c.heading = 2.0;
        }),
        Some("heading")
    );
    // Through the base's own impl too.
    assert_eq!(
        Carrier::predicted_difference(
            &Carrier {
                id: 1,
                body: Body::default()
            }
            .new_state(0),
            &Carrier {
                id: 2,
                body: Body {
                    velocity: 1.0,
                    mass: 0
                }
            }
            .new_state(0),
        ),
        Some("velocity")
    );
    assert_eq!(
        Plain::predicted_difference(
            &Plain { x: 1.0, y: 1 }.new_state(0),
            &Plain { x: 2.0, y: 2 }.new_state(0)
        ),
        None
    );
}

#[test]
fn predicted_difference_compares_floats_by_bits() {
    let mut c = craft();
    c.heading = f32::NAN;
    c.position = Vec3::new(f32::NAN, 0.0, 1.0);
    let a = c.new_state(0);
    let b = c.clone().new_state(1);
    assert_eq!(
        Craft::predicted_difference(&a, &b),
        None,
        "NaN == NaN by bits"
    );

    let mut zero = craft();
    zero.heading = 0.0;
    let mut negative = craft();
    negative.heading = -0.0;
    assert_eq!(
        Craft::predicted_difference(&zero.new_state(0), &negative.new_state(0)),
        Some("heading"),
        "-0.0 differs from 0.0"
    );
    let mut negative = craft();
    negative.position.z = -0.0;
    let mut zero = craft();
    zero.position.z = 0.0;
    assert_eq!(
        Craft::predicted_difference(&zero.new_state(0), &negative.new_state(0)),
        Some("position")
    );
}

#[test]
fn smooth_predicted_moves_interpolated_predicted_members_by_the_weighted_offset() {
    // The correction: the server's value was 8 where the client had predicted 10, so the
    // error `from − to` is 2.
    let mut from = craft();
    from.heading = 10.0;
    let mut to = craft();
    to.heading = 8.0;
    // Every other member differs between `from` and `to` too: only `heading` is smoothed.
    to.position = Vec3::new(9.0, 9.0, 9.0);
    to.fuel = 9.0;
    to.body.velocity = 9.0;
    let (from, to) = (from.new_state(0), to.new_state(0));

    let start = Craft {
        heading: 5.0,
        ..craft()
    };
    let smoothed = |weight: f32| {
        let mut c = start.clone();
        c.smooth_predicted(&from, &to, weight);
        c
    };
    assert_eq!(smoothed(0.0), start, "weight 0: unchanged");
    assert_eq!(
        smoothed(1.0),
        Craft {
            heading: 7.0,
            ..start.clone()
        },
        "weight 1: the whole offset"
    );
    assert_eq!(
        smoothed(0.5),
        Craft {
            heading: 6.0,
            ..start.clone()
        },
        "weight 0.5: half the offset"
    );

    // The same result as written out with `Interpolate`.
    use mf_net::interpolation::Interpolate;
    let shifted = 8.0_f32.interpolate(&10.0_f32.interpolate(&5.0, 0.5), 2.0);
    assert_eq!(shifted, 7.0);
    assert_eq!(smoothed(0.25).heading, 5.0_f32.interpolate(&shifted, 0.25));

    // A type without predicted members is untouched.
    let mut plain = Plain { x: 1.0, y: 2 };
    plain.smooth_predicted(
        &Plain { x: 4.0, y: 0 }.new_state(0),
        &Plain { x: 0.0, y: 0 }.new_state(0),
        1.0,
    );
    assert_eq!(plain, Plain { x: 1.0, y: 2 });
}

#[test]
fn hooks_of_predicted_members_still_run() {
    let c = craft();
    let state = c.new_state(0);
    let mut w = NetWriter::new();
    Craft::write_full(&state, &mut w);
    let mut back = Craft::default();
    let mut changed = [0u64; 2];
    back.read_tracked(&mut NetReader::new(w.as_slice()), &mut changed)
        .unwrap();
    back.run_on_change(&changed);
    assert_eq!(back.local, 1);
    assert_eq!(back.fuel, 0.5);
}

#[test]
fn schema_hash_of_types_without_predict_is_unchanged() {
    // The recipe as it was before `predict`: option bits interpolate = 1, owner_only = 2.
    let h = hash_name("Plain");
    let h = hash_str(h, "x");
    let h = hash_u64(h, <f32 as NetCodec>::SCHEMA_HASH);
    let h = hash_u64(h, 0b1);
    let h = hash_str(h, "y");
    let h = hash_u64(h, <i32 as NetCodec>::SCHEMA_HASH);
    let h = hash_u64(h, 0b10);
    assert_eq!(Plain::SCHEMA_HASH, h);

    // `predict` is bit 7 of the options.
    let h = hash_name("Body");
    let h = hash_str(h, "velocity");
    let h = hash_u64(h, <f32 as NetCodec>::SCHEMA_HASH);
    let h = hash_u64(h, 1 << 7);
    let h = hash_str(h, "mass");
    let h = hash_u64(h, <u16 as NetCodec>::SCHEMA_HASH);
    let h = hash_u64(h, 0);
    assert_eq!(Body::SCHEMA_HASH, h);
}
