#![allow(clippy::unwrap_used)]
//! `#[derive(Replicated)]`: change capture, masked writes and reads, pinned bytes, schema
//! hashes, stable names, the link-time registry, and zero allocations in steady state.
//!
//! This binary links, on purpose, several types with the stable name `hash::Player` (to compare
//! their schema hashes), so its full link-time table has duplicates: the registry tests build
//! their registry from the table without those, and one test checks that `from_inventory`
//! refuses the duplicates.

use glam::Vec3;
use mf_net::prelude::*;
use mf_net::replication::{
    MemberCondition, MemberInfo, RegisteredType, ReplicatedTypeId, ReplicationRegistry,
    ReplicationRegistryError,
};
use mf_net_tests::alloc_counter::assert_no_alloc;

// ---------------------------------------------------------------------------------------------
// Types under test
// ---------------------------------------------------------------------------------------------

/// Three plain numbers: masks and pinned bytes.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Counters {
    #[replicated]
    a: i32,
    #[replicated]
    b: i32,
    #[replicated]
    c: i32,
}

mod world {
    use super::*;

    /// A base type, flattened into others.
    #[derive(Replicated, Debug, Default, Clone, PartialEq)]
    pub(crate) struct Actor {
        #[replicated]
        pub(crate) id: u16,
        pub(crate) cache: u64,
    }
}
use world::Actor;

/// A base declared after the own member: its state still goes first.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Pawn {
    #[replicated]
    hp: i32,
    #[replicated(flatten)]
    actor: Actor,
}

/// The example of the design: members, an interpolated one, a base and a local field.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Player {
    #[replicated]
    health: i32,
    #[replicated(interpolate)]
    position: Vec3,
    #[replicated(flatten)]
    base: Pawn,
    #[replicated]
    name: String,
    speed: f32,
}

#[derive(Replicated, Debug, Default)]
#[replicated(name = "game::Door")]
struct Door {
    #[replicated]
    open: bool,
}

/// No members at all: one empty state.
#[derive(Replicated, Debug, Default)]
struct Marker {
    _local: u8,
}

/// Exactly the most members a type may have.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
struct Wide {
    #[replicated]
    m0: u8,
    #[replicated]
    m1: u8,
    #[replicated]
    m2: u8,
    #[replicated]
    m3: u8,
    #[replicated]
    m4: u8,
    #[replicated]
    m5: u8,
    #[replicated]
    m6: u8,
    #[replicated]
    m7: u8,
    #[replicated]
    m8: u8,
    #[replicated]
    m9: u8,
    #[replicated]
    m10: u8,
    #[replicated]
    m11: u8,
    #[replicated]
    m12: u8,
    #[replicated]
    m13: u8,
    #[replicated]
    m14: u8,
    #[replicated]
    m15: u8,
    #[replicated]
    m16: u8,
    #[replicated]
    m17: u8,
    #[replicated]
    m18: u8,
    #[replicated]
    m19: u8,
    #[replicated]
    m20: u8,
    #[replicated]
    m21: u8,
    #[replicated]
    m22: u8,
    #[replicated]
    m23: u8,
    #[replicated]
    m24: u8,
    #[replicated]
    m25: u8,
    #[replicated]
    m26: u8,
    #[replicated]
    m27: u8,
    #[replicated]
    m28: u8,
    #[replicated]
    m29: u8,
    #[replicated]
    m30: u8,
    #[replicated]
    m31: u8,
    #[replicated]
    m32: u8,
    #[replicated]
    m33: u8,
    #[replicated]
    m34: u8,
    #[replicated]
    m35: u8,
    #[replicated]
    m36: u8,
    #[replicated]
    m37: u8,
    #[replicated]
    m38: u8,
    #[replicated]
    m39: u8,
    #[replicated]
    m40: u8,
    #[replicated]
    m41: u8,
    #[replicated]
    m42: u8,
    #[replicated]
    m43: u8,
    #[replicated]
    m44: u8,
    #[replicated]
    m45: u8,
    #[replicated]
    m46: u8,
    #[replicated]
    m47: u8,
    #[replicated]
    m48: u8,
    #[replicated]
    m49: u8,
    #[replicated]
    m50: u8,
    #[replicated]
    m51: u8,
    #[replicated]
    m52: u8,
    #[replicated]
    m53: u8,
    #[replicated]
    m54: u8,
    #[replicated]
    m55: u8,
    #[replicated]
    m56: u8,
    #[replicated]
    m57: u8,
    #[replicated]
    m58: u8,
    #[replicated]
    m59: u8,
    #[replicated]
    m60: u8,
    #[replicated]
    m61: u8,
    #[replicated]
    m62: u8,
    #[replicated]
    m63: u8,
}

// Same stable name, different shapes: for schema hashes (see the module docs).
mod hash {
    use super::*;

    #[derive(Replicated, Default)]
    #[replicated(name = "hash::Player")]
    pub(crate) struct Base {
        #[replicated]
        pub(crate) health: i32,
    }

    #[derive(Replicated, Default)]
    #[replicated(name = "hash::Player")]
    pub(crate) struct Renamed {
        #[replicated]
        pub(crate) hp: i32,
    }

    #[derive(Replicated, Default)]
    #[replicated(name = "hash::Player")]
    pub(crate) struct Retyped {
        #[replicated]
        pub(crate) health: i64,
    }

    #[derive(Replicated, Default)]
    #[replicated(name = "hash::Player")]
    pub(crate) struct WithLocal {
        #[replicated]
        pub(crate) health: i32,
        pub(crate) _local: String,
    }

    #[derive(Replicated, Default)]
    #[replicated(name = "hash::Interpolated")]
    pub(crate) struct Snapped {
        #[replicated]
        pub(crate) x: f32,
    }

    #[derive(Replicated, Default)]
    #[replicated(name = "hash::Interpolated")]
    pub(crate) struct Blended {
        #[replicated(interpolate)]
        pub(crate) x: f32,
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn since<T: Replicated>(state: &T::State, tick: u32) -> Vec<u8> {
    let mut w = NetWriter::new();
    T::write_since(state, tick, &mut w);
    w.into_vec()
}

fn full<T: Replicated>(state: &T::State) -> Vec<u8> {
    let mut w = NetWriter::new();
    T::write_full(state, &mut w);
    w.into_vec()
}

/// Reads `bytes` into `value`, requiring every byte to be used.
fn read_all<T: Replicated>(value: &mut T, bytes: &[u8]) -> Result<(), DecodeError> {
    let mut r = NetReader::new(bytes);
    value.read(&mut r)?;
    r.finish()
}

fn le(v: i32) -> [u8; 4] {
    v.to_le_bytes()
}

// ---------------------------------------------------------------------------------------------
// Capture and masks
// ---------------------------------------------------------------------------------------------

#[test]
fn capture_stamps_only_changed_members() {
    let mut c = Counters::default();
    let mut s = c.new_state(0);
    assert_eq!(Counters::last_changed(&s), 0);
    assert!(!c.capture(&mut s, 1), "nothing changed");
    assert_eq!(Counters::last_changed(&s), 0);

    c.b = 7;
    assert!(c.capture(&mut s, 4));
    assert_eq!(Counters::last_changed(&s), 4);
    assert_eq!(since::<Counters>(&s, 0), [&[0b010][..], &le(7)].concat());
    assert_eq!(since::<Counters>(&s, 4), [0], "stamped at 4, not after it");

    // The shadow now holds 7: the same value again is no change.
    c.b = 7;
    assert!(!c.capture(&mut s, 5));
    assert_eq!(Counters::last_changed(&s), 4);

    // Changed and changed back before a capture: no change either.
    c.a = 1;
    c.a = 0;
    assert!(!c.capture(&mut s, 6));
}

#[test]
fn local_fields_are_not_captured() {
    let mut p = Player::default();
    let mut s = p.new_state(0);
    p.speed = 3.5;
    p.base.actor.cache = 99;
    assert!(!p.capture(&mut s, 1));
    assert_eq!(Player::last_changed(&s), 0);
}

#[test]
fn write_since_masks_members_changed_after_the_tick() {
    let mut c = Counters::default();
    let mut s = c.new_state(0);
    c.a = 1;
    c.capture(&mut s, 3);
    c.b = 2;
    c.capture(&mut s, 5);
    c.c = 3;
    c.capture(&mut s, 7);

    let mask = |tick| since::<Counters>(&s, tick)[0];
    assert_eq!(mask(0), 0b111);
    assert_eq!(mask(2), 0b111);
    assert_eq!(mask(3), 0b110);
    assert_eq!(mask(4), 0b110);
    assert_eq!(mask(5), 0b100);
    assert_eq!(mask(7), 0b000);
    assert_eq!(since::<Counters>(&s, 7), [0], "no change: the mask alone");
    assert_eq!(Counters::last_changed(&s), 7);
}

#[test]
fn pinned_bytes_of_two_changed_members() {
    let mut c = Counters::default();
    let mut s = c.new_state(0);
    c.a = 0x0102_0304;
    c.c = -2;
    assert!(c.capture(&mut s, 1));
    assert_eq!(
        since::<Counters>(&s, 0),
        [0b101, 0x04, 0x03, 0x02, 0x01, 0xfe, 0xff, 0xff, 0xff]
    );
}

#[test]
fn pinned_bytes_of_a_flattened_type_put_the_base_first() {
    let mut p = Pawn::default();
    let mut s = p.new_state(0);
    p.hp = 5;
    p.actor.id = 0x0201;
    assert!(p.capture(&mut s, 1));
    assert_eq!(Pawn::last_changed(&s), 1);
    // Actor's state (mask 0b1, id u16), then Pawn's (mask 0b1, hp i32).
    assert_eq!(
        since::<Pawn>(&s, 0),
        [0b1, 0x01, 0x02, 0b1, 0x05, 0x00, 0x00, 0x00]
    );

    // Only the base changed: Pawn's own state is an empty mask.
    p.actor.id = 3;
    assert!(p.capture(&mut s, 2));
    assert_eq!(Pawn::last_changed(&s), 2);
    assert_eq!(since::<Pawn>(&s, 1), [0b1, 0x03, 0x00, 0b0]);
    // Only the outer changed.
    p.hp = 6;
    assert!(p.capture(&mut s, 3));
    assert_eq!(since::<Pawn>(&s, 2), [0b0, 0b1, 0x06, 0x00, 0x00, 0x00]);
    assert_eq!(since::<Pawn>(&s, 3), [0, 0]);
}

#[test]
fn constants_describe_the_type() {
    assert_eq!(Counters::STATE_COUNT, 1);
    assert_eq!(Pawn::STATE_COUNT, 2);
    assert_eq!(Player::STATE_COUNT, 3);
    assert_eq!(Marker::STATE_COUNT, 1);
    assert_eq!(
        Player::MEMBERS,
        &[
            MemberInfo {
                name: "health",
                type_name: <i32 as NetCodec>::NAME,
                schema_hash: <i32 as NetCodec>::SCHEMA_HASH,
                interpolate: false,
                predict: false,
                condition: MemberCondition::Always,
                initial_only: false,
                on_change: None,
                quantize: None,
            },
            MemberInfo {
                name: "position",
                type_name: <Vec3 as NetCodec>::NAME,
                schema_hash: <Vec3 as NetCodec>::SCHEMA_HASH,
                interpolate: true,
                predict: false,
                condition: MemberCondition::Always,
                initial_only: false,
                on_change: None,
                quantize: None,
            },
            MemberInfo {
                name: "name",
                type_name: <String as NetCodec>::NAME,
                schema_hash: <String as NetCodec>::SCHEMA_HASH,
                interpolate: false,
                predict: false,
                condition: MemberCondition::Always,
                initial_only: false,
                on_change: None,
                quantize: None,
            },
        ]
    );
    assert!(Marker::MEMBERS.is_empty());
    assert_eq!(Wide::MEMBERS.len(), 64);
}

// ---------------------------------------------------------------------------------------------
// Full writes and reads
// ---------------------------------------------------------------------------------------------

#[test]
fn write_full_then_read_into_a_default_value() {
    let p = Player {
        health: -40,
        position: Vec3::new(1.0, 2.5, -3.0),
        base: Pawn {
            hp: 12,
            actor: Actor { id: 9, cache: 77 },
        },
        name: "ann".to_owned(),
        speed: 4.0,
    };
    let s = p.new_state(0);
    let bytes = full::<Player>(&s);
    let mut back = Player::default();
    read_all(&mut back, &bytes).unwrap();
    assert_eq!(back.health, p.health);
    assert_eq!(back.position, p.position);
    assert_eq!(back.base.hp, 12);
    assert_eq!(back.base.actor.id, 9);
    assert_eq!(back.name, "ann");
    // Local fields keep their own values.
    assert_eq!(back.speed, 0.0);
    assert_eq!(back.base.actor.cache, 0);

    // write_since(0) of a fresh state at tick 0 writes nothing; at tick 1, everything.
    let fresh = p.new_state(1);
    assert_eq!(since::<Player>(&fresh, 0), bytes);
}

#[test]
fn read_applies_only_the_masked_members() {
    let mut server = Counters { a: 1, b: 2, c: 3 };
    let mut s = server.new_state(0);
    server.b = 20;
    server.capture(&mut s, 1);
    let mut client = Counters {
        a: 100,
        b: 200,
        c: 300,
    };
    read_all(&mut client, &since::<Counters>(&s, 0)).unwrap();
    assert_eq!(
        client,
        Counters {
            a: 100,
            b: 20,
            c: 300
        }
    );
}

#[test]
fn sixty_four_members_use_every_mask_bit() {
    let mut wide = Wide::default();
    let s = wide.new_state(1);
    let bytes = full::<Wide>(&s);
    // u64::MAX as a varint is 10 bytes, then 64 one-byte values.
    assert_eq!(bytes.len(), 10 + 64);
    let mut back = Wide::default();
    read_all(&mut back, &bytes).unwrap();

    let mut s = wide.new_state(0);
    wide.m63 = 1;
    assert!(wide.capture(&mut s, 1));
    let bytes = since::<Wide>(&s, 0);
    assert_eq!(
        bytes,
        [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1]
    );
    read_all(&mut back, &bytes).unwrap();
    assert_eq!(back.m63, 1);
}

#[test]
fn read_refuses_mask_bits_past_the_last_member() {
    let mut c = Counters::default();
    assert_eq!(read_all(&mut c, &[0b1000]), Err(DecodeError::BadMask));
    let mut m = Marker::default();
    assert!(read_all(&mut m, &[0]).is_ok());
    assert_eq!(read_all(&mut m, &[1]), Err(DecodeError::BadMask));
    // In the base's state too.
    let mut p = Pawn::default();
    assert_eq!(read_all(&mut p, &[0b10, 0b0]), Err(DecodeError::BadMask));
}

#[test]
fn read_refuses_truncated_input_without_panicking() {
    let mut c = Counters::default();
    assert_eq!(read_all(&mut c, &[]), Err(DecodeError::EndOfStream));
    assert_eq!(
        read_all(&mut c, &[0b101, 1, 0, 0]),
        Err(DecodeError::EndOfStream)
    );

    let p = Player {
        name: "a longer name".to_owned(),
        ..Player::default()
    };
    let bytes = full::<Player>(&p.new_state(0));
    for len in 0..bytes.len() {
        let mut back = Player::default();
        assert!(
            read_all(&mut back, &bytes[..len]).is_err(),
            "a prefix of {len} bytes was accepted"
        );
    }
    // Garbage never panics either.
    let mut rng = 0x1234_5678_u32;
    for _ in 0..2000 {
        let mut garbage = [0u8; 24];
        for b in &mut garbage {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            *b = rng as u8;
        }
        let len = (rng % 24) as usize;
        let mut back = Player::default();
        let _ = read_all(&mut back, &garbage[..len]);
    }
}

// ---------------------------------------------------------------------------------------------
// Names and schema hashes
// ---------------------------------------------------------------------------------------------

#[test]
fn stable_names_default_to_module_path_and_ident() {
    assert_eq!(Counters::NAME, "Counters");
    assert_eq!(Actor::NAME, "world::Actor");
    assert_eq!(Door::NAME, "game::Door");
    assert_eq!(hash::Base::NAME, "hash::Player");
}

#[test]
fn schema_hash_covers_member_names_types_and_options_only() {
    let base = hash::Base::SCHEMA_HASH;
    assert_ne!(base, hash::Renamed::SCHEMA_HASH, "member renamed");
    assert_ne!(base, hash::Retyped::SCHEMA_HASH, "member retyped");
    assert_eq!(base, hash::WithLocal::SCHEMA_HASH, "local field added");
    assert_ne!(
        hash::Snapped::SCHEMA_HASH,
        hash::Blended::SCHEMA_HASH,
        "interpolate added"
    );
    // A base's shape is part of the outer type's hash.
    assert_ne!(Pawn::SCHEMA_HASH, Counters::SCHEMA_HASH);
}

#[test]
fn schema_hash_follows_the_documented_recipe() {
    use mf_net::schema::{hash_name, hash_str, hash_u64};
    let h = hash_name("Pawn");
    let h = hash_u64(h, Actor::SCHEMA_HASH);
    let h = hash_str(h, "hp");
    let h = hash_u64(h, <i32 as NetCodec>::SCHEMA_HASH);
    let h = hash_u64(h, 0);
    assert_eq!(Pawn::SCHEMA_HASH, h);
}

// ---------------------------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------------------------

/// The link-time table without the `hash::` types that share names on purpose.
fn registry() -> ReplicationRegistry {
    ReplicationRegistry::from_types(
        RegisteredType::linked().filter(|t| !t.name().starts_with("hash::")),
    )
    .unwrap()
}

#[test]
fn registry_holds_the_linked_types_sorted_by_name() {
    let reg = registry();
    let names: Vec<&str> = reg.iter().map(|(_, t)| t.name()).collect();
    assert_eq!(
        names,
        [
            "Counters",
            "Marker",
            "Pawn",
            "Player",
            "Wide",
            "game::Door",
            "world::Actor"
        ]
    );
    for (index, (id, ty)) in reg.iter().enumerate() {
        assert_eq!(usize::from(id.get()), index + 1, "ids count from 1");
        assert_eq!(reg.get(id).unwrap().name(), ty.name());
        assert_eq!(reg.by_name(ty.name()).unwrap().0, id);
    }
    let pawn = reg.id_of::<Pawn>().unwrap();
    assert_eq!(pawn.get(), 3);
    let entry = reg.get(pawn).unwrap();
    assert_eq!(entry.schema_hash(), Pawn::SCHEMA_HASH);
    assert_eq!(entry.members(), Pawn::MEMBERS);
    assert_eq!(entry.state_count(), 2);
    assert!(entry.rust_name().ends_with("Pawn"));
    assert_eq!(reg.id_of::<hash::Base>(), None);
    assert!(reg.get(ReplicatedTypeId::new(100).unwrap()).is_none());
    assert_eq!(ReplicatedTypeId::new(0), None);
    assert!(reg.by_name("Nope").is_none());
}

#[test]
fn registry_ids_and_fingerprint_do_not_depend_on_link_order() {
    let reg = registry();
    let mut reversed: Vec<&'static RegisteredType> = RegisteredType::linked()
        .filter(|t| !t.name().starts_with("hash::"))
        .collect();
    reversed.reverse();
    let other = ReplicationRegistry::from_types(reversed).unwrap();
    assert_eq!(reg.fingerprint(), other.fingerprint());
    assert_eq!(reg.dump(), other.dump());
    assert_eq!(reg.id_of::<Player>(), other.id_of::<Player>());

    // A schema change changes the fingerprint.
    static BASE: RegisteredType = RegisteredType::of::<hash::Base>();
    static RETYPED: RegisteredType = RegisteredType::of::<hash::Retyped>();
    let a = ReplicationRegistry::from_types([&BASE]).unwrap();
    let b = ReplicationRegistry::from_types([&RETYPED]).unwrap();
    assert_ne!(a.fingerprint(), b.fingerprint());
}

#[test]
fn dump_lists_types_ids_and_members() {
    let dump = registry().dump();
    println!("{dump}");
    assert!(dump.starts_with("7 replicated types, fingerprint 0x"));
    assert!(dump.contains("#3 Pawn ("), "{dump}");
    assert!(dump.contains("hp: i32"), "{dump}");
    assert!(dump.contains("position: Vec3"), "{dump}");
    assert!(dump.contains(", interpolate"), "{dump}");
    assert!(dump.contains("#6 game::Door"), "{dump}");
    assert!(
        dump.contains(&format!("{:#018x}", Pawn::SCHEMA_HASH)),
        "{dump}"
    );
}

#[test]
fn duplicate_names_are_refused_naming_both_types() {
    static BASE: RegisteredType = RegisteredType::of::<hash::Base>();
    static RENAMED: RegisteredType = RegisteredType::of::<hash::Renamed>();
    static DOOR: RegisteredType = RegisteredType::of::<Door>();
    let error = ReplicationRegistry::from_types([&DOOR, &RENAMED, &BASE]).unwrap_err();
    let ReplicationRegistryError::DuplicateName {
        name,
        first,
        second,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(*name, "hash::Player");
    let mut both = [*first, *second];
    both.sort();
    assert!(both[0].ends_with("hash::Base"), "{error}");
    assert!(both[1].ends_with("hash::Renamed"), "{error}");
    let message = error.to_string();
    assert!(message.contains("`hash::Player`"), "{message}");
    assert!(
        message.contains("hash::Base") && message.contains("hash::Renamed"),
        "{message}"
    );
    assert!(message.contains("#[replicated(name"), "{message}");
}

#[test]
fn from_inventory_sees_the_duplicates_linked_into_this_binary() {
    let error = ReplicationRegistry::from_inventory().unwrap_err();
    assert!(
        matches!(
            error,
            ReplicationRegistryError::DuplicateName { name, .. }
                if name == "hash::Interpolated" || name == "hash::Player"
        ),
        "{error}"
    );
}

// ---------------------------------------------------------------------------------------------
// Allocations
// ---------------------------------------------------------------------------------------------

#[test]
fn capture_write_and_read_do_not_allocate() {
    let mut server = Pawn::default();
    let mut state = server.new_state(0);
    let mut client = Pawn::default();
    let mut w = NetWriter::with_capacity(256);
    assert_no_alloc("capture, write_since, read", || {
        for tick in 1..=500u32 {
            server.hp = server.hp.wrapping_add(1);
            if tick % 3 == 0 {
                server.actor.id = server.actor.id.wrapping_add(1);
            }
            assert!(server.capture(&mut state, tick));
            w.clear();
            Pawn::write_since(&state, tick - 1, &mut w);
            let mut r = NetReader::new(w.as_slice());
            client.read(&mut r).unwrap();
            assert_eq!(r.remaining(), 0);
            w.clear();
            Pawn::write_full(&state, &mut w);
        }
    });
    assert_eq!(client, server);

    let mut counters = Counters::default();
    let mut state = counters.new_state(0);
    let mut copy = Counters::default();
    assert_no_alloc("three i32 members", || {
        for tick in 1..=100u32 {
            counters.a = tick as i32;
            counters.c = -(tick as i32);
            counters.capture(&mut state, tick);
            w.clear();
            Counters::write_since(&state, tick - 1, &mut w);
            copy.read(&mut NetReader::new(w.as_slice())).unwrap();
        }
    });
    assert_eq!(copy, counters);
}
