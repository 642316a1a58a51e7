//! The inferred bounds are on the sent fields' types, not on the type parameters they
//! mention: `NetRef<T>` needs `T: Replicated` (no node type is `NetCodec`), and `K::Id` needs
//! `K::Id: NetCodec` (not `K: NetCodec`).
#![deny(warnings)]

use mf_net::codec::{from_slice, to_vec};
use mf_net::prelude::*;

trait Kind {
    type Id;
}

#[derive(Debug, PartialEq)]
struct Ammo;

impl Kind for Ammo {
    type Id = u16;
}

#[derive(NetCodec, Debug, PartialEq)]
struct Targeted<T: Replicated> {
    target: NetRef<T>,
    damage: u8,
}

#[derive(NetCodec, Debug, PartialEq)]
struct Pick<K: Kind> {
    id: K::Id,
    more: Vec<<K as Kind>::Id>,
}

#[derive(NetCodec, Debug, PartialEq, Default)]
struct Private<T>(Vec<T>);

/// A public type whose sent field is a private generic type: the bound names it, and that is
/// no `private_bounds` warning.
#[derive(NetCodec, Debug, PartialEq)]
pub struct Wrap<T> {
    inner: Private<T>,
    again: Private<T>,
}

#[derive(Replicated, Debug, Default, PartialEq)]
struct Player {
    #[replicated]
    x: i32,
}

fn main() {
    let targeted = Targeted::<Player> {
        target: NetRef::unresolved(),
        damage: 3,
    };
    let back: Targeted<Player> = from_slice(&to_vec(&targeted)).unwrap();
    assert_eq!(back, targeted);

    let pick = Pick::<Ammo> {
        id: 7,
        more: vec![1, 2],
    };
    let back: Pick<Ammo> = from_slice(&to_vec(&pick)).unwrap();
    assert_eq!(back, pick);

    let wrap = Wrap {
        inner: Private(vec![1u8]),
        again: Private(vec![]),
    };
    let back: Wrap<u8> = from_slice(&to_vec(&wrap)).unwrap();
    assert_eq!(back, wrap);
    let _ = Player::default().x;
}
