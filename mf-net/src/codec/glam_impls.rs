use glam::{Quat, Vec2, Vec3, Vec4};

use super::quantize::Buckets;
use super::state_bits::CodecBits;
use super::NetCodec;
use crate::schema::hash_name;
use crate::wire::{DecodeError, NetReader, NetWriter};

macro_rules! float_vector {
    ($($ty:ty, $name:literal, $n:literal, $from:path;)*) => {$(
        impl NetCodec for $ty {
            const NAME: &'static str = $name;
            const SCHEMA_HASH: u64 = hash_name($name);
            const MIN_SIZE: usize = 4 * $n;
            const BITS: CodecBits = CodecBits::Floats { components: $n };

            #[inline]
            fn encode(&self, w: &mut NetWriter) {
                // One append of all components (one capacity check and length update, not
                // one per component); the bytes are the same as `write_f32` per component.
                let mut bytes = [0u8; 4 * $n];
                for (chunk, c) in bytes.chunks_exact_mut(4).zip(self.to_array()) {
                    chunk.copy_from_slice(&c.to_le_bytes());
                }
                w.write_bytes(&bytes);
            }

            #[inline]
            fn decode(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
                // One bounds check for all components, then the same bytes as `read_f32` each.
                let bytes: [u8; 4 * $n] = r.read_array()?;
                let mut c = [0.0f32; $n];
                for (slot, chunk) in c.iter_mut().zip(bytes.chunks_exact(4)) {
                    *slot = f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                }
                Ok($from(c))
            }

            #[inline]
            fn same_encoding(&self, other: &Self) -> Option<bool> {
                Some(self.to_array().map(f32::to_bits) == other.to_array().map(f32::to_bits))
            }

            #[inline]
            fn bit_value(&self) -> Option<Buckets> {
                let mut words = [0; 4];
                for (word, c) in words.iter_mut().zip(self.to_array()) {
                    *word = c.to_bits();
                }
                Some(Buckets::from_words(words))
            }
        }
    )*};
}

float_vector! {
    Vec2, "Vec2", 2, Vec2::from_array;
    Vec3, "Vec3", 3, Vec3::from_array;
    Vec4, "Vec4", 4, Vec4::from_array;
    Quat, "Quat", 4, Quat::from_array;
}
