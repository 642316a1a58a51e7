#![forbid(unsafe_code)]
#![deny(missing_docs, unreachable_pub, unused_qualifications)]
//! Derived types compile in a crate that forbids `unsafe` and denies the workspace's lints,
//! next to user items with the names the generated code uses.

use mf_net::prelude::*;

#[allow(dead_code)]
fn __s() {}
#[allow(dead_code)]
fn __tick() {}
#[allow(dead_code)]
fn __mask() {}
#[allow(dead_code)]
struct State;
#[allow(dead_code)]
type Result = ();

/// A base.
#[derive(Replicated, Default)]
pub struct Actor {
    #[replicated]
    r#type: u8,
}

/// Uses every option.
#[derive(Replicated, Default)]
#[replicated(name = "game::Player")]
pub struct Player {
    #[replicated(interpolate)]
    position: f32,
    #[replicated]
    name: String,
    #[replicated(flatten)]
    actor: Actor,
    speed: f32,
}

/// No members.
#[derive(Replicated)]
pub struct Empty {}

fn main() {
    let p = Player::default();
    let _ = (p.speed, <Empty as Replicated>::NAME);
    assert_eq!(<Player as Replicated>::NAME, "game::Player");
    assert_eq!(<Actor as Replicated>::NAME, "Actor");
    assert_eq!(<Player as Replicated>::STATE_COUNT, 2);
    assert_eq!(<Actor as Replicated>::MEMBERS[0].name, "type");
}
