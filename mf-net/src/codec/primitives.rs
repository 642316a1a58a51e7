use super::quantize::Buckets;
use super::state_bits::CodecBits;
use super::NetCodec;
use crate::schema::hash_name;
use crate::wire::{DecodeError, NetReader, NetWriter};

macro_rules! fixed {
    ($($ty:ty, $name:literal, $size:literal, $write:ident, $read:ident, $same:ident, $bits:expr, $value:expr;)*) => {$(
        impl NetCodec for $ty {
            const NAME: &'static str = $name;
            const SCHEMA_HASH: u64 = hash_name($name);
            const MIN_SIZE: usize = $size;
            const BITS: CodecBits = $bits;

            #[inline]
            fn encode(&self, w: &mut NetWriter) {
                w.$write(*self);
            }

            #[inline]
            fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
                r.$read()
            }

            #[inline]
            fn same_encoding(&self, other: &Self) -> Option<bool> {
                Some(same!($same, self, other))
            }

            #[inline]
            fn bit_value(&self) -> Option<Buckets> {
                #[allow(clippy::redundant_closure_call, trivial_numeric_casts)]
                ($value)(*self)
            }
        }
    )*};
}

/// An integer's bit-packed value: its encoding's little-endian bytes as one number.
#[inline]
fn int(v: u64) -> Option<Buckets> {
    Some(Buckets::from_low_u64(v))
}

/// Equal encodings: by value (`eq`), or for floats by bits (`bits`).
macro_rules! same {
    (eq, $a:expr, $b:expr) => {
        $a == $b
    };
    (bits, $a:expr, $b:expr) => {
        $a.to_bits() == $b.to_bits()
    };
}

fixed! {
    bool, "bool", 1, write_bool, read_bool, eq, CodecBits::Bool, |v: bool| int(u64::from(v));
    u8, "u8", 1, write_u8, read_u8, eq, CodecBits::Int { bytes: 1 }, |v: u8| int(u64::from(v));
    i8, "i8", 1, write_i8, read_i8, eq, CodecBits::Int { bytes: 1 }, |v: i8| int(u64::from(v as u8));
    u16, "u16", 2, write_u16, read_u16, eq, CodecBits::Int { bytes: 2 }, |v: u16| int(u64::from(v));
    i16, "i16", 2, write_i16, read_i16, eq, CodecBits::Int { bytes: 2 }, |v: i16| int(u64::from(v as u16));
    u32, "u32", 4, write_u32, read_u32, eq, CodecBits::Int { bytes: 4 }, |v: u32| int(u64::from(v));
    i32, "i32", 4, write_i32, read_i32, eq, CodecBits::Int { bytes: 4 }, |v: i32| int(u64::from(v as u32));
    u64, "u64", 8, write_u64, read_u64, eq, CodecBits::Int { bytes: 8 }, int;
    i64, "i64", 8, write_i64, read_i64, eq, CodecBits::Int { bytes: 8 }, |v: i64| int(v as u64);
    u128, "u128", 16, write_u128, read_u128, eq, CodecBits::Bytes, |_| None;
    i128, "i128", 16, write_i128, read_i128, eq, CodecBits::Bytes, |_| None;
    f32, "f32", 4, write_f32, read_f32, bits, CodecBits::Floats { components: 1 }, |v: f32| Some(Buckets::from_words([v.to_bits(), 0, 0, 0]));
    f64, "f64", 8, write_f64, read_f64, bits, CodecBits::Bytes, |_| None;
}

impl NetCodec for usize {
    const NAME: &'static str = "usize";
    const SCHEMA_HASH: u64 = hash_name("usize");
    const MIN_SIZE: usize = 1;

    #[inline]
    fn encode(&self, w: &mut NetWriter) {
        w.write_var_u64(*self as u64);
    }

    #[inline]
    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        usize::try_from(r.read_var_u64()?).map_err(|_| DecodeError::OutOfRange)
    }

    #[inline]
    fn same_encoding(&self, other: &Self) -> Option<bool> {
        Some(self == other)
    }
}

impl NetCodec for isize {
    const NAME: &'static str = "isize";
    const SCHEMA_HASH: u64 = hash_name("isize");
    const MIN_SIZE: usize = 1;

    #[inline]
    fn encode(&self, w: &mut NetWriter) {
        w.write_var_i64(*self as i64);
    }

    #[inline]
    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        isize::try_from(r.read_var_i64()?).map_err(|_| DecodeError::OutOfRange)
    }

    #[inline]
    fn same_encoding(&self, other: &Self) -> Option<bool> {
        Some(self == other)
    }
}

impl NetCodec for char {
    const NAME: &'static str = "char";
    const SCHEMA_HASH: u64 = hash_name("char");
    const MIN_SIZE: usize = 1;

    #[inline]
    fn encode(&self, w: &mut NetWriter) {
        w.write_var_u32(u32::from(*self));
    }

    #[inline]
    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        char::from_u32(r.read_var_u32()?).ok_or(DecodeError::OutOfRange)
    }

    #[inline]
    fn same_encoding(&self, other: &Self) -> Option<bool> {
        Some(self == other)
    }
}

impl NetCodec for String {
    const NAME: &'static str = "String";
    const SCHEMA_HASH: u64 = hash_name("String");
    const MIN_SIZE: usize = 1;

    #[inline]
    fn encode(&self, w: &mut NetWriter) {
        w.write_str(self);
    }

    #[inline]
    fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        r.read_str().map(str::to_owned)
    }

    #[inline]
    fn same_encoding(&self, other: &Self) -> Option<bool> {
        Some(self == other)
    }
}

impl NetCodec for () {
    const NAME: &'static str = "()";
    const SCHEMA_HASH: u64 = hash_name("()");

    #[inline]
    fn encode(&self, _: &mut NetWriter) {}

    #[inline]
    fn decode(_: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        Ok(())
    }

    #[inline]
    fn same_encoding(&self, _: &Self) -> Option<bool> {
        Some(true)
    }
}
