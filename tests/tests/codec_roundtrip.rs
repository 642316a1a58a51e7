//! `NetCodec` round trips (proptest), pinned wire bytes, every `DecodeError` case, decoding of
//! random bytes, and the schema-hash properties of `#[derive(NetCodec)]`.

use std::fmt::Debug;
use std::marker::PhantomData;

use glam::{Quat, Vec2, Vec3, Vec4};
use mf_net::codec::{self, NetCodec};
use mf_net::wire::{DecodeError, NetReader, NetWriter, MAX_STRING_BYTES};
use proptest::prelude::*;
use smallvec::SmallVec;

// ---------------------------------------------------------------------------------------------
// Derived types under test
// ---------------------------------------------------------------------------------------------

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Player {
    name: String,
    health: i32,
    position: Vec3,
    tags: Vec<u16>,
    #[net(skip)]
    cache: Option<String>,
}

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Pair<A, B>(A, B);

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Ping;

#[derive(NetCodec, Debug, Clone, PartialEq, Default)]
struct Nothing {}

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Tagged<T> {
    id: u32,
    value: T,
    #[net(skip)]
    _marker: PhantomData<fn() -> T>,
}

#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Grid<const N: usize> {
    cells: [u8; N],
}

#[derive(NetCodec, Debug, Clone, PartialEq)]
enum Command {
    Idle,
    Move(i16, i16),
    Say {
        text: String,
        #[net(skip)]
        local: u32,
    },
    Batch(Box<[Pair<u8, String>]>),
}

#[derive(NetCodec, Debug, Clone, PartialEq)]
enum Wrapper<T> {
    Empty,
    Full { value: T },
}

#[derive(NetCodec, Debug)]
enum Never {}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Encodes, checks the length against `MIN_SIZE`, decodes with `from_slice` (so every byte
/// must be consumed) and returns the decoded value.
fn through_wire<T: NetCodec>(value: &T) -> Result<T, TestCaseError> {
    let bytes = codec::to_vec(value);
    prop_assert!(
        bytes.len() >= T::MIN_SIZE,
        "{} encoded to {} bytes, below its MIN_SIZE {}",
        T::NAME,
        bytes.len(),
        T::MIN_SIZE
    );
    codec::from_slice(&bytes).map_err(|e| TestCaseError::fail(format!("{}: {e}", T::NAME)))
}

fn roundtrip<T: NetCodec + PartialEq + Debug>(value: &T) -> Result<(), TestCaseError> {
    let back = through_wire(value)?;
    prop_assert_eq!(&back, value);
    Ok(())
}

fn encode<T: NetCodec>(value: &T) -> Vec<u8> {
    codec::to_vec(value)
}

fn decode<T: NetCodec>(bytes: &[u8]) -> Result<T, DecodeError> {
    codec::from_slice(bytes)
}

fn vec3() -> impl Strategy<Value = Vec3> {
    prop::array::uniform3(-1.0e6f32..1.0e6).prop_map(Vec3::from_array)
}

fn player() -> impl Strategy<Value = Player> {
    (
        ".{0,12}",
        any::<i32>(),
        vec3(),
        prop::collection::vec(any::<u16>(), 0..8),
        prop::option::of(".{0,4}"),
    )
        .prop_map(|(name, health, position, tags, cache)| Player {
            name,
            health,
            position,
            tags,
            cache,
        })
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        Just(Command::Idle),
        (any::<i16>(), any::<i16>()).prop_map(|(x, y)| Command::Move(x, y)),
        (".{0,16}", any::<u32>()).prop_map(|(text, local)| Command::Say { text, local }),
        prop::collection::vec((any::<u8>(), ".{0,6}"), 0..5).prop_map(|items| {
            Command::Batch(items.into_iter().map(|(a, b)| Pair(a, b)).collect())
        }),
    ]
}

/// What a value looks like after the wire: skipped fields come back as their default.
fn without_skipped_player(p: &Player) -> Player {
    Player {
        cache: None,
        ..p.clone()
    }
}

fn without_skipped_command(c: &Command) -> Command {
    match c {
        Command::Say { text, .. } => Command::Say {
            text: text.clone(),
            local: 0,
        },
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn integers_roundtrip(
        a in any::<u8>(), b in any::<i8>(), c in any::<u16>(), d in any::<i16>(),
        e in any::<u32>(), f in any::<i32>(), g in any::<u64>(), h in any::<i64>(),
        i in any::<u128>(), j in any::<i128>(), k in any::<usize>(), l in any::<isize>(),
    ) {
        roundtrip(&a)?; roundtrip(&b)?; roundtrip(&c)?; roundtrip(&d)?;
        roundtrip(&e)?; roundtrip(&f)?; roundtrip(&g)?; roundtrip(&h)?;
        roundtrip(&i)?; roundtrip(&j)?; roundtrip(&k)?; roundtrip(&l)?;
    }

    #[test]
    fn bool_char_unit_roundtrip(b in any::<bool>(), c in any::<char>()) {
        roundtrip(&b)?;
        roundtrip(&c)?;
        roundtrip(&())?;
    }

    #[test]
    fn floats_roundtrip_bit_exact(a in any::<f32>(), b in any::<f64>()) {
        // NaN != NaN, so compare the bits: the wire carries them unchanged.
        prop_assert_eq!(through_wire(&a)?.to_bits(), a.to_bits());
        prop_assert_eq!(through_wire(&b)?.to_bits(), b.to_bits());
    }

    #[test]
    fn strings_roundtrip(s in ".{0,64}", big in prop::collection::vec(any::<char>(), 0..300)) {
        roundtrip(&s)?;
        roundtrip(&big.into_iter().collect::<String>())?;
    }

    #[test]
    fn collections_roundtrip(
        v in prop::collection::vec(any::<u32>(), 0..40),
        strings in prop::collection::vec(".{0,8}", 0..10),
        nested in prop::collection::vec(prop::collection::vec(any::<i8>(), 0..5), 0..5),
        boxed in prop::collection::vec(any::<i64>(), 0..20),
        small in prop::collection::vec(any::<u16>(), 0..12),
    ) {
        roundtrip(&v)?;
        roundtrip(&strings)?;
        roundtrip(&nested)?;
        roundtrip(&boxed.into_boxed_slice())?;
        let small: SmallVec<[u16; 4]> = small.into_iter().collect();
        roundtrip(&small)?;
        let big: SmallVec<[String; 2]> = strings.iter().cloned().collect();
        roundtrip(&big)?;
    }

    #[test]
    fn arrays_options_tuples_roundtrip(
        arr in any::<[u16; 7]>(),
        strs in prop::array::uniform3(".{0,6}"),
        opt in prop::option::of(any::<u64>()),
        opt_str in prop::option::of(".{0,6}"),
        t1 in any::<(u8,)>(),
        t3 in any::<(u8, i32, bool)>(),
        t6 in any::<(u8, u16, u32, u64, i8, char)>(),
        mixed in (".{0,5}", prop::option::of(any::<i16>())),
    ) {
        roundtrip(&arr)?;
        roundtrip(&strs)?;
        roundtrip(&[0u8; 0])?;
        roundtrip(&opt)?;
        roundtrip(&opt_str)?;
        roundtrip(&t1)?;
        roundtrip(&t3)?;
        roundtrip(&t6)?;
        roundtrip(&mixed)?;
        roundtrip(&Some(Some(opt)))?;
    }

    #[test]
    fn glam_roundtrip(
        a in any::<[f32; 2]>(), b in any::<[f32; 3]>(), c in any::<[f32; 4]>(),
        q in any::<[f32; 4]>(),
    ) {
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&through_wire(&Vec2::from_array(a))?.to_array()), bits(&a));
        prop_assert_eq!(bits(&through_wire(&Vec3::from_array(b))?.to_array()), bits(&b));
        prop_assert_eq!(bits(&through_wire(&Vec4::from_array(c))?.to_array()), bits(&c));
        prop_assert_eq!(bits(&through_wire(&Quat::from_array(q))?.to_array()), bits(&q));
    }

    #[test]
    fn derived_structs_roundtrip(
        p in player(),
        pair in (any::<u8>(), ".{0,8}"),
        id in any::<u32>(),
        value in prop::collection::vec(any::<i32>(), 0..6),
        cells in any::<[u8; 5]>(),
    ) {
        prop_assert_eq!(through_wire(&p)?, without_skipped_player(&p));
        roundtrip(&Pair(pair.0, pair.1))?;
        roundtrip(&Ping)?;
        roundtrip(&Nothing {})?;
        roundtrip(&Tagged { id, value, _marker: PhantomData })?;
        roundtrip(&Grid { cells })?;
        roundtrip(&Grid::<0> { cells: [] })?;
    }

    #[test]
    fn derived_enums_roundtrip(
        c in command(),
        list in prop::collection::vec(command(), 0..6),
        w in prop::option::of(".{0,8}"),
    ) {
        prop_assert_eq!(through_wire(&c)?, without_skipped_command(&c));
        let expected: Vec<Command> = list.iter().map(without_skipped_command).collect();
        prop_assert_eq!(through_wire(&list)?, expected);
        let w = match w {
            Some(value) => Wrapper::Full { value },
            None => Wrapper::Empty,
        };
        roundtrip(&w)?;
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        // Only "does not panic" matters here: any Result is fine.
        let _ = decode::<u32>(&bytes);
        let _ = decode::<usize>(&bytes);
        let _ = decode::<isize>(&bytes);
        let _ = decode::<char>(&bytes);
        let _ = decode::<f64>(&bytes);
        let _ = decode::<String>(&bytes);
        let _ = decode::<Vec<String>>(&bytes);
        let _ = decode::<Option<Vec<u8>>>(&bytes);
        let _ = decode::<[u16; 3]>(&bytes);
        let _ = decode::<(u8, String, bool)>(&bytes);
        let _ = decode::<SmallVec<[u32; 2]>>(&bytes);
        let _ = decode::<Box<[Vec3]>>(&bytes);
        let _ = decode::<Quat>(&bytes);
        let _ = decode::<Player>(&bytes);
        let _ = decode::<Command>(&bytes);
        let _ = decode::<Vec<Command>>(&bytes);
        let _ = decode::<Wrapper<Vec<Ping>>>(&bytes);
        let _ = decode::<Never>(&bytes);
        // Reading a prefix with a plain reader must not panic either.
        let mut r = NetReader::new(&bytes);
        let _ = r.read_var_u64();
        let _ = r.read_var_i32();
        let _ = r.read_str_max(8);
        let _ = r.read_count(4);
    }

    #[test]
    fn varints_roundtrip_and_have_the_predicted_length(v in any::<u64>(), s in any::<i64>()) {
        let mut w = NetWriter::new();
        w.write_var_u64(v);
        prop_assert_eq!(w.len(), mf_net::wire::varint_len(v));
        w.write_var_i64(s);
        let mut r = NetReader::new(w.as_slice());
        prop_assert_eq!(r.read_var_u64(), Ok(v));
        prop_assert_eq!(r.read_var_i64(), Ok(s));
        prop_assert!(r.finish().is_ok());
    }
}

// ---------------------------------------------------------------------------------------------
// Pinned bytes
// ---------------------------------------------------------------------------------------------

fn var_u32(v: u32) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_var_u32(v);
    w.into_vec()
}

fn var_u64(v: u64) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_var_u64(v);
    w.into_vec()
}

fn var_i32(v: i32) -> Vec<u8> {
    let mut w = NetWriter::new();
    w.write_var_i32(v);
    w.into_vec()
}

#[test]
fn varint_boundaries_are_pinned() {
    assert_eq!(var_u32(0), [0x00]);
    assert_eq!(var_u32(127), [0x7f]);
    assert_eq!(var_u32(128), [0x80, 0x01]);
    assert_eq!(var_u32(16383), [0xff, 0x7f]);
    assert_eq!(var_u32(16384), [0x80, 0x80, 0x01]);
    assert_eq!(var_u32(u32::MAX), [0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert_eq!(
        var_u64(u64::MAX),
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
    );
    for bytes in [
        var_u32(127),
        var_u32(128),
        var_u32(16383),
        var_u32(16384),
        var_u32(u32::MAX),
    ] {
        let mut r = NetReader::new(&bytes);
        let v = r.read_var_u32().expect("a written varint reads back");
        assert_eq!(var_u32(v), bytes);
        assert!(r.finish().is_ok());
    }
    let mut r = NetReader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    assert_eq!(r.read_var_u64(), Ok(u64::MAX));
}

#[test]
fn zigzag_is_pinned() {
    assert_eq!(var_i32(0), [0x00]);
    assert_eq!(var_i32(-1), [0x01]);
    assert_eq!(var_i32(1), [0x02]);
    assert_eq!(var_i32(-2), [0x03]);
    assert_eq!(var_i32(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert_eq!(encode(&-1isize), [0x01]);
    assert_eq!(encode(&1isize), [0x02]);
    assert_eq!(encode(&300usize), [0xac, 0x02]);
}

#[test]
fn strings_are_pinned() {
    assert_eq!(encode(&String::from("hi")), [2, b'h', b'i']);
    assert_eq!(encode(&String::new()), [0]);
    assert_eq!(encode(&String::from("é")), [2, 0xc3, 0xa9]);
    assert_eq!(decode::<String>(&[2, b'h', b'i']).as_deref(), Ok("hi"));
}

#[test]
fn fixed_width_values_are_pinned() {
    assert_eq!(encode(&0x1234u16), [0x34, 0x12]);
    assert_eq!(encode(&-2i16), [0xfe, 0xff]);
    assert_eq!(encode(&0x1234_5678u32), [0x78, 0x56, 0x34, 0x12]);
    assert_eq!(encode(&-1i32), [0xff; 4]);
    assert_eq!(encode(&0x0102_0304_0506_0708u64), [8, 7, 6, 5, 4, 3, 2, 1]);
    assert_eq!(encode(&1u128), [&[1u8][..], &[0u8; 15][..]].concat());
    assert_eq!(encode(&1.0f32), [0x00, 0x00, 0x80, 0x3f]);
    assert_eq!(encode(&-2.5f64), (-2.5f64).to_le_bytes());
    assert_eq!(encode(&true), [1]);
    assert_eq!(encode(&false), [0]);
    assert_eq!(encode(&0xabu8), [0xab]);
    assert_eq!(encode(&-1i8), [0xff]);
    assert_eq!(encode(&'A'), [0x41]);
    assert_eq!(encode(&Vec2::new(1.0, 0.0)), [0, 0, 0x80, 0x3f, 0, 0, 0, 0]);
}

#[test]
fn containers_are_pinned() {
    assert_eq!(encode(&vec![1u16, 2]), [2, 1, 0, 2, 0]);
    assert_eq!(encode(&[1u8, 2, 3]), [1, 2, 3]);
    assert_eq!(encode(&Some(7u8)), [1, 7]);
    assert_eq!(encode(&None::<u8>), [0]);
    assert_eq!(encode(&(1u8, true)), [1, 1]);
    let small: SmallVec<[u8; 4]> = SmallVec::from_slice(&[9, 8]);
    assert_eq!(encode(&small), [2, 9, 8]);
    assert_eq!(encode(&vec![5u8].into_boxed_slice()), [1, 5]);
}

#[test]
fn derived_encodings_are_pinned() {
    // Fields in declaration order; skipped fields absent.
    let p = Player {
        name: "ann".into(),
        health: 1,
        position: Vec3::ZERO,
        tags: vec![7],
        cache: Some("not sent".into()),
    };
    let mut expected = vec![3, b'a', b'n', b'n', 1, 0, 0, 0];
    expected.extend_from_slice(&[0; 12]);
    expected.extend_from_slice(&[1, 7, 0]);
    assert_eq!(encode(&p), expected);
    assert_eq!(encode(&Pair(1u8, 2u16)), [1, 2, 0]);
    assert_eq!(encode(&Ping), [] as [u8; 0]);
    // Enums: the variant index (declaration order) as a varint, then the fields.
    assert_eq!(encode(&Command::Idle), [0]);
    assert_eq!(encode(&Command::Move(-1, 2)), [1, 0xff, 0xff, 2, 0]);
    assert_eq!(
        encode(&Command::Say {
            text: "hi".into(),
            local: 9
        }),
        [2, 2, b'h', b'i']
    );
    assert_eq!(
        encode(&Command::Batch(
            vec![Pair(4, "x".into())].into_boxed_slice()
        )),
        [3, 1, 4, 1, b'x']
    );
    assert_eq!(
        decode::<Command>(&[2, 2, b'h', b'i']),
        Ok(Command::Say {
            text: "hi".into(),
            local: 0
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Every DecodeError case
// ---------------------------------------------------------------------------------------------

#[test]
fn end_of_stream() {
    assert_eq!(decode::<u32>(&[1, 2, 3]), Err(DecodeError::EndOfStream));
    assert_eq!(decode::<u8>(&[]), Err(DecodeError::EndOfStream));
    assert_eq!(decode::<Vec3>(&[0; 11]), Err(DecodeError::EndOfStream));
    assert_eq!(
        decode::<Option<u16>>(&[1, 0]),
        Err(DecodeError::EndOfStream)
    );
    // A varint whose continuation bit promises another byte.
    assert_eq!(
        NetReader::new(&[0x80]).read_var_u32(),
        Err(DecodeError::EndOfStream)
    );
    assert_eq!(decode::<Command>(&[]), Err(DecodeError::EndOfStream));
}

#[test]
fn malformed_varints() {
    assert_eq!(
        NetReader::new(&[0x80, 0x00]).read_var_u32(),
        Err(DecodeError::BadVarint)
    );
    assert_eq!(
        NetReader::new(&[0xff, 0x80, 0x00]).read_var_u64(),
        Err(DecodeError::BadVarint)
    );
    assert_eq!(
        NetReader::new(&[0xff, 0xff, 0xff, 0xff, 0x1f]).read_var_u32(),
        Err(DecodeError::BadVarint)
    );
    assert_eq!(
        NetReader::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]).read_var_u32(),
        Err(DecodeError::BadVarint)
    );
    assert_eq!(
        NetReader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])
            .read_var_u64(),
        Err(DecodeError::BadVarint)
    );
    assert_eq!(
        NetReader::new(&[0x80; 11]).read_var_u64(),
        Err(DecodeError::BadVarint)
    );
}

#[test]
fn bool_byte_must_be_zero_or_one() {
    assert_eq!(decode::<bool>(&[2]), Err(DecodeError::InvalidBool(2)));
    assert_eq!(
        decode::<Option<u8>>(&[2, 0]),
        Err(DecodeError::InvalidBool(2))
    );
}

#[test]
fn invalid_utf8() {
    assert_eq!(
        decode::<String>(&[2, 0xc3, 0x28]),
        Err(DecodeError::InvalidUtf8)
    );
}

#[test]
fn count_larger_than_bytes_left() {
    // Vec<u32> claiming 1000 elements (varint 0xe8 0x07) with 3 bytes behind it.
    assert_eq!(
        decode::<Vec<u32>>(&[0xe8, 0x07, 1, 2, 3]),
        Err(DecodeError::CountPastEnd)
    );
    assert_eq!(decode::<String>(&[5, b'a']), Err(DecodeError::CountPastEnd));
    // A hostile count is refused before anything is allocated.
    assert_eq!(
        decode::<Vec<Vec<u8>>>(&[0xff, 0xff, 0xff, 0xff, 0x0f]),
        Err(DecodeError::CountPastEnd)
    );
}

#[test]
fn large_collections_grow_past_the_preallocation_cap() {
    // 3000 elements of 520 bytes each is past the decoder's 1 MiB up-front reservation.
    let many: Vec<Option<[u64; 64]>> = (0..3000)
        .map(|i| (i % 500 == 0).then_some([i; 64]))
        .collect();
    let back: Vec<Option<[u64; 64]>> = decode(&encode(&many)).expect("round trip");
    assert_eq!(back, many);
}

#[test]
fn empty_encodings_count_as_one_byte_when_checking_counts() {
    // Documented limit (see `NetCodec::MIN_SIZE`): a list of values that encode to nothing
    // cannot claim more elements than bytes follow, so a hostile count cannot loop or
    // allocate without bound.
    assert_eq!(encode(&vec![Ping; 3]), [3]);
    assert_eq!(decode::<Vec<Ping>>(&[3]), Err(DecodeError::CountPastEnd));
    assert_eq!(
        decode::<(Vec<Ping>, [u8; 3])>(&[3, 0, 0, 0]).map(|(v, _)| v.len()),
        Ok(3)
    );
}

#[test]
fn string_over_its_limit() {
    let bytes = encode(&String::from("hello"));
    assert_eq!(
        NetReader::new(&bytes).read_str_max(4),
        Err(DecodeError::StringTooLong { len: 5, limit: 4 })
    );
    assert_eq!(NetReader::new(&bytes).read_str_max(5), Ok("hello"));
    let long = "x".repeat(MAX_STRING_BYTES + 1);
    let mut w = NetWriter::new();
    w.write_str(&long);
    assert_eq!(
        decode::<String>(w.as_slice()),
        Err(DecodeError::StringTooLong {
            len: MAX_STRING_BYTES + 1,
            limit: MAX_STRING_BYTES
        })
    );
}

#[test]
fn trailing_bytes_are_refused() {
    assert_eq!(decode::<u8>(&[1, 2]), Err(DecodeError::TrailingBytes));
    assert_eq!(decode::<Ping>(&[0]), Err(DecodeError::TrailingBytes));
}

#[test]
fn unknown_enum_variant() {
    assert_eq!(decode::<Command>(&[4]), Err(DecodeError::UnknownVariant(4)));
    assert_eq!(
        decode::<Command>(&[0x80, 0x01]),
        Err(DecodeError::UnknownVariant(128))
    );
    assert_eq!(
        decode::<Wrapper<u8>>(&[2, 0]),
        Err(DecodeError::UnknownVariant(2))
    );
    // An enum with no variants has no valid encoding at all.
    assert!(matches!(
        decode::<Never>(&[]),
        Err(DecodeError::InvalidValue)
    ));
    assert!(matches!(
        decode::<Never>(&[0]),
        Err(DecodeError::InvalidValue)
    ));
}

#[test]
fn invalid_char() {
    let reason = DecodeError::OutOfRange;
    assert_eq!(decode::<char>(&var_u32(0xd800)), Err(reason));
    assert_eq!(decode::<char>(&var_u32(0x11_0000)), Err(reason));
    assert_eq!(decode::<char>(&var_u32(0x10_ffff)), Ok('\u{10ffff}'));
}

// ---------------------------------------------------------------------------------------------
// Names, schema hashes and minimum sizes
// ---------------------------------------------------------------------------------------------

mod shapes {
    use mf_net::codec::NetCodec;

    #[derive(NetCodec)]
    #[net(name = "Shape")]
    pub(crate) struct WithX {
        pub(crate) x: u32,
    }

    #[derive(NetCodec)]
    #[net(name = "Shape")]
    pub(crate) struct WithY {
        pub(crate) y: u32,
    }

    #[derive(NetCodec)]
    #[net(name = "Shape")]
    pub(crate) struct WithXI64 {
        pub(crate) x: i64,
    }

    #[derive(NetCodec)]
    #[net(name = "Shape")]
    pub(crate) struct WithXSkipped {
        pub(crate) x: u32,
        #[net(skip)]
        pub(crate) _cache: String,
    }

    #[derive(NetCodec)]
    pub(crate) struct Default;

    #[derive(NetCodec)]
    #[net(name = "game::Renamed")]
    pub(crate) struct Renamed;

    #[derive(NetCodec)]
    #[net(name = "E")]
    pub(crate) enum AB {
        A,
        B(u8),
    }

    #[derive(NetCodec)]
    #[net(name = "E")]
    pub(crate) enum BA {
        B(u8),
        A,
    }

    #[derive(NetCodec)]
    #[net(name = "E")]
    #[allow(dead_code)] // the skipped field is never read: that is the point
    pub(crate) enum ABSkip {
        A,
        B(u8, #[net(skip)] String),
    }
}

#[test]
fn default_name_is_module_path_without_crate() {
    assert_eq!(<Player as NetCodec>::NAME, "Player");
    assert_eq!(<shapes::Default as NetCodec>::NAME, "shapes::Default");
    assert_eq!(<Pair<u8, u8> as NetCodec>::NAME, "Pair");
}

#[test]
fn name_override_changes_name_and_hash() {
    assert_eq!(<shapes::Renamed as NetCodec>::NAME, "game::Renamed");
    assert_eq!(<shapes::WithX as NetCodec>::NAME, "Shape");
    assert_ne!(
        <shapes::Renamed as NetCodec>::SCHEMA_HASH,
        <shapes::Default as NetCodec>::SCHEMA_HASH
    );
}

#[test]
fn schema_hash_covers_field_names_and_types() {
    use shapes::*;
    assert_ne!(WithX::SCHEMA_HASH, WithY::SCHEMA_HASH, "field names differ");
    assert_ne!(
        WithX::SCHEMA_HASH,
        WithXI64::SCHEMA_HASH,
        "field types differ"
    );
    assert_ne!(
        <Pair<u8, u16> as NetCodec>::SCHEMA_HASH,
        <Pair<u16, u8> as NetCodec>::SCHEMA_HASH
    );
    assert_ne!(AB::SCHEMA_HASH, BA::SCHEMA_HASH, "variant order matters");
    assert_ne!(Command::SCHEMA_HASH, <Wrapper<u8> as NetCodec>::SCHEMA_HASH);
}

#[test]
fn skip_does_not_change_the_hash() {
    use shapes::*;
    assert_eq!(WithX::SCHEMA_HASH, WithXSkipped::SCHEMA_HASH);
    assert_eq!(AB::SCHEMA_HASH, ABSkip::SCHEMA_HASH);
    assert_eq!(
        <Tagged<u8> as NetCodec>::SCHEMA_HASH,
        {
            use mf_net::schema::{hash_name, hash_str, hash_u64};
            let h = hash_name("Tagged");
            let h = hash_u64(hash_str(h, "id"), u32::SCHEMA_HASH);
            hash_u64(hash_str(h, "value"), u8::SCHEMA_HASH)
        },
        "the documented recipe: name, then each sent field's name and schema hash"
    );
}

#[test]
fn schema_hash_is_a_constant() {
    const H: u64 = <Player as NetCodec>::SCHEMA_HASH;
    const M: usize = <Player as NetCodec>::MIN_SIZE;
    assert_ne!(H, 0);
    // String 1 + i32 4 + Vec3 12 + Vec 1; the skipped field counts for nothing.
    assert_eq!(M, 18);
    assert_eq!(<Command as NetCodec>::MIN_SIZE, 1);
    assert_eq!(<Ping as NetCodec>::MIN_SIZE, 0);
    assert_eq!(<Grid<4> as NetCodec>::MIN_SIZE, 4);
}

// ---------------------------------------------------------------------------------------------
// Same encoding (change detection)
// ---------------------------------------------------------------------------------------------

#[test]
fn same_encoding_compares_floats_by_bits_everywhere() {
    let nan = f32::NAN;
    assert_eq!(nan.same_encoding(&nan), Some(true));
    assert_eq!(0.0f32.same_encoding(&-0.0), Some(false));
    assert_eq!(1.5f64.same_encoding(&1.5), Some(true));
    assert_eq!(vec![1.0, nan].same_encoding(&vec![1.0, nan]), Some(true));
    assert_eq!(vec![1.0f32].same_encoding(&vec![1.0, 2.0]), Some(false));
    assert_eq!([nan; 3].same_encoding(&[nan; 3]), Some(true));
    assert_eq!(Some(nan).same_encoding(&Some(nan)), Some(true));
    assert_eq!(Some(1.0f32).same_encoding(&None), Some(false));
    assert_eq!((nan, 3u8).same_encoding(&(nan, 3)), Some(true));
    assert_eq!((nan, 3u8).same_encoding(&(nan, 4)), Some(false));
    assert_eq!(Vec3::NAN.same_encoding(&Vec3::NAN), Some(true));
    assert_eq!("a".to_owned().same_encoding(&"a".to_owned()), Some(true));
}

#[test]
fn derived_types_compare_their_sent_fields() {
    #[derive(NetCodec, Debug, Clone, PartialEq)]
    enum Shape {
        Dot,
        Circle { r: f32 },
        Pair(f32, u8),
    }
    #[derive(NetCodec, Debug, Clone, PartialEq)]
    struct Tagged {
        shape: Shape,
        #[net(skip)]
        cache: u32,
    }
    let circle = |r| Tagged {
        shape: Shape::Circle { r },
        cache: 0,
    };
    assert_eq!(
        circle(f32::NAN).same_encoding(&circle(f32::NAN)),
        Some(true)
    );
    assert_eq!(circle(0.0).same_encoding(&circle(-0.0)), Some(false));
    let mut cached = circle(1.0);
    cached.cache = 9;
    assert_eq!(
        circle(1.0).same_encoding(&cached),
        Some(true),
        "skipped fields do not count"
    );
    assert_eq!(Shape::Dot.same_encoding(&Shape::Pair(1.0, 2)), Some(false));
    assert_eq!(
        Shape::Pair(1.0, 2).same_encoding(&Shape::Pair(1.0, 2)),
        Some(true)
    );
}

#[test]
fn a_hand_written_codec_that_does_not_say_leaves_it_to_partial_eq() {
    #[derive(Debug, Clone, PartialEq)]
    struct Opaque(u8);
    impl NetCodec for Opaque {
        const NAME: &'static str = "Opaque";
        const SCHEMA_HASH: u64 = 1;
        fn encode(&self, w: &mut NetWriter) {
            w.write_u8(self.0);
        }
        fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
            r.read_u8().map(Opaque)
        }
    }
    assert_eq!(Opaque(1).same_encoding(&Opaque(1)), None);
    assert_eq!(vec![Opaque(1)].same_encoding(&vec![Opaque(1)]), None);
    assert_eq!(
        vec![Opaque(1)].same_encoding(&vec![Opaque(1), Opaque(2)]),
        Some(false)
    );
    assert_eq!((Opaque(1), 1u8).same_encoding(&(Opaque(1), 2)), Some(false));
}

// ---------------------------------------------------------------------------------------------
// Inferred bounds: on the sent fields' types, not on the parameters they mention
// ---------------------------------------------------------------------------------------------

/// A node type: `Replicated`, not `NetCodec`.
#[derive(mf_net::Replicated, Debug, Default, PartialEq)]
struct Unit {
    #[replicated]
    hp: i32,
}

/// Needs `NetRef<T>: NetCodec` (any replicated `T`), not `T: NetCodec`.
#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Targeted<T: mf_net::replication::Replicated> {
    target: mf_net::scene::NetRef<T>,
    damage: u8,
}

trait Kind {
    type Id;
}

#[derive(Debug, Clone, PartialEq)]
struct Ammo;

impl Kind for Ammo {
    type Id = u16;
}

/// Needs `K::Id: NetCodec`, not `K: NetCodec` (`Ammo` is not a codec).
#[derive(NetCodec, Debug, Clone, PartialEq)]
struct Pick<K: Kind> {
    id: K::Id,
    more: Vec<<K as Kind>::Id>,
}

#[test]
fn bounds_are_on_field_types() {
    let targeted = Targeted::<Unit> {
        target: mf_net::scene::NetRef::unresolved(),
        damage: 9,
    };
    let back = decode::<Targeted<Unit>>(&encode(&targeted)).unwrap();
    assert_eq!(back, targeted);
    assert_eq!(
        <Targeted<Unit> as NetCodec>::MIN_SIZE,
        <mf_net::scene::NetRef<Unit> as NetCodec>::MIN_SIZE + 1
    );
    const { assert!(<Targeted<Unit> as NetCodec>::NODE_REFS) };

    let pick = Pick::<Ammo> {
        id: 300,
        more: vec![1, 2, 3],
    };
    assert_eq!(decode::<Pick<Ammo>>(&encode(&pick)).unwrap(), pick);
    let _ = Unit::default().hp;
}
