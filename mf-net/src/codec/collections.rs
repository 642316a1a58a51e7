use smallvec::{Array, SmallVec};

use super::NetCodec;
use crate::schema::{hash_name, hash_u64};
use crate::wire::{DecodeError, NetReader, NetWriter};

const fn container_hash(name: &str, element: u64) -> u64 {
    hash_u64(hash_name(name), element)
}

/// Most bytes a decoder reserves up front for a collection's elements.
///
/// A count is already checked against the bytes left (`count * MIN_SIZE`), but an element can
/// be much larger in memory than its smallest encoding (`Option<[u8; 1024]>` takes 1 byte when
/// `None`), so a hostile count could still reserve far more than the packet could fill. Past
/// this cap the collection grows as elements actually decode.
const MAX_PREALLOC_BYTES: usize = 1 << 20;

/// `count`, capped so that the reservation stays under [`MAX_PREALLOC_BYTES`].
fn cautious_capacity<T>(count: usize) -> usize {
    count.min(MAX_PREALLOC_BYTES / size_of::<T>().max(1))
}

/// [`NetCodec::same_encoding`] of two slices: the same length and each element the same.
fn same_slice<T: NetCodec>(a: &[T], b: &[T]) -> Option<bool> {
    if a.len() != b.len() {
        return Some(false);
    }
    super::all_same(a.iter().zip(b).map(|(x, y)| x.same_encoding(y)))
}

fn encode_slice<T: NetCodec>(items: &[T], w: &mut NetWriter) {
    w.write_len(items.len());
    for item in items {
        item.encode(w);
    }
}

impl<T: NetCodec> NetCodec for Vec<T> {
    const NAME: &'static str = "Vec";
    const SCHEMA_HASH: u64 = container_hash("Vec", T::SCHEMA_HASH);
    const MIN_SIZE: usize = 1;
    const NODE_REFS: bool = T::NODE_REFS;

    fn encode(&self, w: &mut NetWriter) {
        encode_slice(self, w);
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        let count = r.read_count(T::MIN_SIZE)?;
        let mut out = Vec::with_capacity(cautious_capacity::<T>(count));
        for _ in 0..count {
            out.push(T::decode(r)?);
        }
        Ok(out)
    }

    fn same_encoding(&self, other: &Self) -> Option<bool> {
        same_slice(self, other)
    }
}

impl<T: NetCodec> NetCodec for Box<[T]> {
    const NAME: &'static str = "Vec";
    const SCHEMA_HASH: u64 = <Vec<T> as NetCodec>::SCHEMA_HASH;
    const MIN_SIZE: usize = 1;
    const NODE_REFS: bool = T::NODE_REFS;

    fn encode(&self, w: &mut NetWriter) {
        encode_slice(self, w);
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        Vec::<T>::decode(r).map(Vec::into_boxed_slice)
    }

    fn same_encoding(&self, other: &Self) -> Option<bool> {
        same_slice(self, other)
    }
}

impl<A> NetCodec for SmallVec<A>
where
    A: Array,
    A::Item: NetCodec,
{
    const NAME: &'static str = "Vec";
    const SCHEMA_HASH: u64 = <Vec<A::Item> as NetCodec>::SCHEMA_HASH;
    const MIN_SIZE: usize = 1;
    const NODE_REFS: bool = <A::Item as NetCodec>::NODE_REFS;

    fn encode(&self, w: &mut NetWriter) {
        encode_slice(self, w);
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        let count = r.read_count(<A::Item as NetCodec>::MIN_SIZE)?;
        let mut out = SmallVec::with_capacity(cautious_capacity::<A::Item>(count));
        for _ in 0..count {
            out.push(<A::Item as NetCodec>::decode(r)?);
        }
        Ok(out)
    }

    fn same_encoding(&self, other: &Self) -> Option<bool> {
        same_slice(self, other)
    }
}

impl<T: NetCodec, const N: usize> NetCodec for [T; N] {
    const NAME: &'static str = "Array";
    const SCHEMA_HASH: u64 = hash_u64(container_hash("Array", T::SCHEMA_HASH), N as u64);
    const MIN_SIZE: usize = T::MIN_SIZE * N;
    const NODE_REFS: bool = T::NODE_REFS;

    fn encode(&self, w: &mut NetWriter) {
        for item in self {
            item.encode(w);
        }
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        // Decode into an inline SmallVec of exactly N (no heap), then move the array out.
        let mut items: SmallVec<[T; N]> = SmallVec::new();
        for _ in 0..N {
            items.push(T::decode(r)?);
        }
        items.into_inner().map_err(|_| DecodeError::InvalidValue)
    }

    fn same_encoding(&self, other: &Self) -> Option<bool> {
        same_slice(self, other)
    }
}

impl<T: NetCodec> NetCodec for Option<T> {
    const NAME: &'static str = "Option";
    const SCHEMA_HASH: u64 = container_hash("Option", T::SCHEMA_HASH);
    const MIN_SIZE: usize = 1;
    const NODE_REFS: bool = T::NODE_REFS;

    fn encode(&self, w: &mut NetWriter) {
        match self {
            Some(v) => {
                w.write_bool(true);
                v.encode(w);
            }
            None => w.write_bool(false),
        }
    }

    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        if r.read_bool()? {
            T::decode(r).map(Some)
        } else {
            Ok(None)
        }
    }

    fn same_encoding(&self, other: &Self) -> Option<bool> {
        match (self, other) {
            (Some(a), Some(b)) => a.same_encoding(b),
            (None, None) => Some(true),
            _ => Some(false),
        }
    }
}
