//! Typed values on the wire: the [`NetCodec`] trait and its implementations.
//!
//! Every codec type has a **stable name** and a **schema hash**, both constants. The schema hash
//! covers the name and, for composite types, every field's name and schema hash, so two builds
//! agree on a message's shape exactly when their fingerprints agree.
//!
//! | type | encoding |
//! | --- | --- |
//! | `bool`, `u8`, `i8` | 1 byte (bool is 0 or 1) |
//! | `u16`/`i16`, `u32`/`i32`, `u64`/`i64`, `u128`/`i128` | fixed width, little-endian |
//! | `usize` / `isize` | varint / zig-zag varint (checked against the target's width) |
//! | `f32` / `f64` | IEEE 754 bits, little-endian |
//! | `char` | varint of the scalar value (surrogates and values past U+10FFFF refused) |
//! | `String` | varint UTF-8 byte count + bytes (at most [`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)) |
//! | `Vec<T>`, `Box<[T]>`, `SmallVec<[T; N]>` | varint count + elements (count checked against the bytes left before allocating) |
//! | `[T; N]` | the N elements, no count |
//! | `Option<T>` | bool, then the value if present |
//! | tuples up to 6 | the elements in order |
//! | `glam::{Vec2, Vec3, Vec4, Quat}` (feature `glam`) | 2 / 3 / 4 / 4 × `f32` |
//! | [`NetRef<T>`](crate::scene::NetRef) | varint net id of the node, 0 for none (mapped to the receiver's node) |
//!
//! Replicated members can instead be sent quantized (`#[replicated(quantize(..))]`): see
//! [`quantize`]. For bit-packed formats, quantized values, integers ([`IntDelta`]) and `f32`
//! components (their bits, as integers) also code as differences from a baseline the receiver
//! holds.

mod collections;
mod float_delta;
#[cfg(feature = "glam")]
mod glam_impls;
mod int_delta;
mod primitives;
pub mod quantize;
pub(crate) mod skipped;
pub mod state_bits;
pub(crate) mod state_coder;
mod tuples;

pub use int_delta::IntDelta;

use crate::wire::{DecodeError, NetReader, NetWriter};

/// A value that can travel in an mf-net message.
///
/// Implement it with `#[derive(NetCodec)]`; hand-written implementations must keep `decode`
/// strict (every read checked, no panics) and `encode` infallible.
///
/// ```
/// use mf_net::codec::NetCodec;
/// use mf_net::wire::{NetReader, NetWriter};
///
/// #[derive(NetCodec, Debug, PartialEq)]
/// struct Chat {
///     from: String,
///     text: String,
/// }
///
/// let mut w = NetWriter::new();
/// Chat { from: "ann".into(), text: "hi".into() }.encode(&mut w);
/// let mut r = NetReader::new(w.as_slice());
/// let back = Chat::decode(&mut r).unwrap();
/// r.finish().unwrap();
/// assert_eq!(back.text, "hi");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent by mf-net: it does not implement `NetCodec`",
    label = "not a `NetCodec` type",
    note = "derive it with `#[derive(NetCodec)]`, implement `NetCodec` by hand, or use a type that \
            has it (`String` for `&str`, `Vec<T>` for other collections)",
    note = "a struct field that need not be sent can be left out with `#[net(skip)]`"
)]
pub trait NetCodec: Sized {
    /// The type's stable name, part of every fingerprint that covers it. Generic containers
    /// name only themselves (`"Vec"`); their parameters enter through [`Self::SCHEMA_HASH`].
    const NAME: &'static str;
    /// Hash of the name and the shape (fields, variants, element types). Two types with the
    /// same schema hash encode the same way.
    const SCHEMA_HASH: u64;
    /// The fewest bytes an encoded value can take; used to validate element counts before
    /// allocating. Zero is allowed (it is treated as one byte when checking counts).
    ///
    /// Because of that, a collection of a type whose encoding can be empty (`()`, a unit
    /// struct, a struct whose fields are all `#[net(skip)]`) decodes only if no more elements
    /// are claimed than bytes follow the count; send a count field instead of such a list.
    const MIN_SIZE: usize = 0;
    /// Whether a value can hold node references ([`NetRef`](crate::scene::NetRef)s): such
    /// values are mapped between peers' nodes as they travel (see the book's chapter on
    /// references). `#[derive(NetCodec)]` and the containers set it from their parts.
    const NODE_REFS: bool = false;

    /// How the type travels in a replicated state's bit-packed form
    /// ([`state_bits`]): its byte encoding (the default), or for
    /// integers, `bool`, `f32` and (feature `glam`) `f32` vectors and quaternions a form of
    /// their own.
    const BITS: state_bits::CodecBits = state_bits::CodecBits::Bytes;

    /// Appends the value's encoding.
    fn encode(&self, w: &mut NetWriter);

    /// Reads a value, refusing anything malformed.
    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError>;

    /// The value as a replicated state's bit-packed form codes it, for the types whose
    /// [`BITS`](Self::BITS) is a form of their own other than bytes (integers: their encoding's
    /// little-endian bytes as one number; `f32` components: their bits; `bool`: 0 or 1), so
    /// that the server codes it without encoding it first. `None` (the default) codes the value
    /// from its encoding.
    #[doc(hidden)]
    #[inline]
    fn bit_value(&self) -> Option<quantize::Buckets> {
        None
    }

    /// Whether `self` and `other` have the same encoding, told without encoding them: floats
    /// compare by their bits (a NaN equals itself, `-0.0` differs from `0.0`), everything else
    /// by value. `None` (the default, for a hand-written impl that does not say) leaves the
    /// comparison to `PartialEq`. Replication's change detection and `on_change` hooks use it,
    /// so that a NaN member is not resent every tick and a sign change is not missed.
    /// `#[derive(NetCodec)]` implements it field by field (fields with `#[net(skip)]`, which are
    /// not sent, do not count).
    #[inline]
    fn same_encoding(&self, other: &Self) -> Option<bool> {
        let _ = other;
        None
    }
}

/// Combines the [`same_encoding`](NetCodec::same_encoding) answers of a value's parts: `false`
/// if any part differs, `true` if every part says it is the same, `None` if no part differs
/// but some part does not say.
#[doc(hidden)]
#[inline]
pub fn all_same(parts: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    let mut known = true;
    for part in parts {
        match part {
            Some(false) => return Some(false),
            Some(true) => {}
            None => known = false,
        }
    }
    known.then_some(true)
}

pub use mf_net_derive::NetCodec;

/// Encodes `value` into a fresh byte vector (convenience for tests and tools; allocates).
pub fn to_vec<T: NetCodec>(value: &T) -> Vec<u8> {
    let mut w = NetWriter::new();
    value.encode(&mut w);
    w.into_vec()
}

/// Decodes a whole buffer into one value, refusing trailing bytes.
pub fn from_slice<T: NetCodec>(bytes: &[u8]) -> Result<T, DecodeError> {
    let mut r = NetReader::new(bytes);
    let value = T::decode(&mut r)?;
    r.finish()?;
    Ok(value)
}
