use super::state_bits::CodecBits;
use super::NetCodec;
use crate::schema::hash_name;
use crate::wire::{DecodeError, NetReader, NetWriter};

macro_rules! fixed {
    ($($ty:ty, $name:literal, $size:literal, $write:ident, $read:ident, $same:ident, $bits:expr;)*) => {$(
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
        }
    )*};
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
    bool, "bool", 1, write_bool, read_bool, eq, CodecBits::Bool;
    u8, "u8", 1, write_u8, read_u8, eq, CodecBits::Int { bytes: 1 };
    i8, "i8", 1, write_i8, read_i8, eq, CodecBits::Int { bytes: 1 };
    u16, "u16", 2, write_u16, read_u16, eq, CodecBits::Int { bytes: 2 };
    i16, "i16", 2, write_i16, read_i16, eq, CodecBits::Int { bytes: 2 };
    u32, "u32", 4, write_u32, read_u32, eq, CodecBits::Int { bytes: 4 };
    i32, "i32", 4, write_i32, read_i32, eq, CodecBits::Int { bytes: 4 };
    u64, "u64", 8, write_u64, read_u64, eq, CodecBits::Int { bytes: 8 };
    i64, "i64", 8, write_i64, read_i64, eq, CodecBits::Int { bytes: 8 };
    u128, "u128", 16, write_u128, read_u128, eq, CodecBits::Bytes;
    i128, "i128", 16, write_i128, read_i128, eq, CodecBits::Bytes;
    f32, "f32", 4, write_f32, read_f32, bits, CodecBits::Floats { components: 1 };
    f64, "f64", 8, write_f64, read_f64, bits, CodecBits::Bytes;
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
