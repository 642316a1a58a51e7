//! Quantized values coded at the bit level against a baseline: the difference of bucket
//! indexes from a value the receiver holds, which both ends turn back into the same indexes.
//!
//! The grammar is in the [`quantize` module documentation](super#deltas-at-the-bit-level).

use crate::codec::quantize::{Buckets, Quantization, SMALLEST_THREE_BITS};
use crate::wire::{unzigzag32, zigzag32, BitReader, BitWriter, DecodeError};

/// The zig-zag widths of the delta classes 0, 1 and 2 of a vector; class 3 is absolute.
const CLASS_WIDTHS: [u32; 3] = [3, 5, 8];
/// The class of an absolute vector.
const ABSOLUTE: u64 = 3;

/// The zig-zag difference of index `now` from `base`, modulo 2³².
#[inline]
fn difference(base: u32, now: u32) -> u32 {
    #[allow(clippy::cast_possible_wrap)]
    zigzag32(now.wrapping_sub(base) as i32)
}

/// The index a zig-zag difference `zz` leads to from `base`, modulo 2³².
#[inline]
fn apply(base: u32, zz: u32) -> u32 {
    #[allow(clippy::cast_sign_loss)]
    base.wrapping_add(unzigzag32(zz) as u32)
}

/// Whether `zz` fits `width` bits.
#[inline]
fn fits(zz: u32, width: u32) -> bool {
    fits_u64(u64::from(zz), width)
}

/// Whether `v` fits `width` bits (below 64).
#[inline]
fn fits_u64(v: u64, width: u32) -> bool {
    v >> width == 0
}

impl Quantization {
    /// The narrowest delta class holding every difference `zz`, if one is narrower than the
    /// index itself.
    #[inline]
    fn delta_class(&self, zz: &[u32]) -> Option<usize> {
        self.narrowest_class(zz.iter().fold(0, |widest, &d| widest | d))
    }

    /// The narrowest delta class holding the difference `widest`, if one is narrower than the
    /// index itself (without a branch on `widest`: it varies from value to value).
    #[inline]
    fn narrowest_class(&self, widest: u32) -> Option<usize> {
        let class = CLASS_WIDTHS
            .iter()
            .map(|&width| usize::from(!fits(widest, width)))
            .sum::<usize>();
        CLASS_WIDTHS
            .get(class)
            .filter(|&&width| width < self.bits)
            .map(|_| class)
    }

    /// Appends the first `components` (1 to 4) bucket indexes of `now` coded against `base`
    /// (see [the grammar](super#deltas-at-the-bit-level)). For a rotation's packed encoding use
    /// [`write_rotation_delta`](Self::write_rotation_delta).
    pub fn write_delta(&self, base: &Buckets, now: &Buckets, components: usize, w: &mut BitWriter) {
        // One body per component count, its loops unrolled (see `read_delta_into`).
        match components {
            0 => self.write_delta_of::<0>(base, now, w),
            1 => self.write_delta_of::<1>(base, now, w),
            2 => self.write_delta_of::<2>(base, now, w),
            3 => self.write_delta_of::<3>(base, now, w),
            _ => self.write_delta_of::<4>(base, now, w),
        }
    }

    /// [`write_delta`](Self::write_delta) of `N` components.
    #[inline(always)]
    fn write_delta_of<const N: usize>(&self, base: &Buckets, now: &Buckets, w: &mut BitWriter) {
        let zz: [u32; N] = std::array::from_fn(|i| difference(base.0[i], now.0[i]));
        match self.delta_class(&zz) {
            Some(class) => {
                // The class and the differences, least significant first, in one write (at
                // most 2 + 4 × 8 bits).
                let width = CLASS_WIDTHS[class];
                let (mut code, mut len) = (class as u64, 2);
                for &d in &zz {
                    code |= u64::from(d) << len;
                    len += width;
                }
                w.write_clean_bits(code, len);
            }
            None => self.write_absolute(now, N, w),
        }
    }

    /// The absolute form of a vector's first `n` indexes `now`: its class, then each index.
    fn write_absolute(&self, now: &Buckets, n: usize, w: &mut BitWriter) {
        w.write_bits(ABSOLUTE, 2);
        for &index in &now.0[..n] {
            w.write_bits(u64::from(index), self.bits);
        }
    }

    /// Reads what [`write_delta`](Self::write_delta) wrote against the same `base`, refusing
    /// an index past the last bucket ([`DecodeError::BadQuantized`]) and any form other than
    /// the one the writer picks ([`DecodeError::NonCanonical`]). Fields that fit one load (every
    /// delta, and absolute indexes up to 18 bits for three components) are taken from one
    /// [window](BitReader::window). A refused or cut value leaves the position where it was.
    pub fn read_delta(
        &self,
        base: &Buckets,
        components: usize,
        r: &mut BitReader<'_>,
    ) -> Result<Buckets, DecodeError> {
        let mut now = Buckets::default();
        self.read_delta_into(base, components, r, &mut now)?;
        Ok(now)
    }

    /// [`read_delta`](Self::read_delta), the value written into `into` (which a refused one
    /// leaves unspecified): a value returned through memory, written a part at a time and read
    /// back whole, stalls the read on the writes.
    pub(crate) fn read_delta_into(
        &self,
        base: &Buckets,
        components: usize,
        r: &mut BitReader<'_>,
        into: &mut Buckets,
    ) -> Result<(), DecodeError> {
        // One body per component count, its loops unrolled: a vector's count is the
        // member's, fixed by its type.
        match components {
            0 => self.read_delta_of::<0>(base, r, into),
            1 => self.read_delta_of::<1>(base, r, into),
            2 => self.read_delta_of::<2>(base, r, into),
            3 => self.read_delta_of::<3>(base, r, into),
            _ => self.read_delta_of::<4>(base, r, into),
        }
    }

    /// [`read_delta_into`](Self::read_delta_into) of `N` components.
    #[inline(always)]
    fn read_delta_of<const N: usize>(
        &self,
        base: &Buckets,
        r: &mut BitReader<'_>,
        into: &mut Buckets,
    ) -> Result<(), DecodeError> {
        let mut window = r.window();
        let class = window.take(2);
        let field = self.field_width(class);
        #[allow(clippy::cast_possible_truncation)]
        let fields = field * N as u32;
        if !window.fits(fields) {
            return self.read_wide_delta(base, N, r, into);
        }
        // Each field from the same word, none waiting for the one before.
        let word = window.take(fields);
        // A field is at most 32 bits wide.
        let mask = (1u64 << field) - 1;
        let mut raw = [0u32; 4];
        for (i, v) in (0u32..).zip(&mut raw[..N]) {
            #[allow(clippy::cast_possible_truncation)]
            let f = (word >> (i * field) & mask) as u32;
            *v = f;
        }
        self.delta_value(base, N, class, raw, into)?;
        r.commit(window)
    }

    /// [`read_delta_into`](Self::read_delta_into) of absolute indexes wider than one load
    /// holds (or a vector cut by the end): read on a copy, kept if accepted. Out of line: no
    /// vector of the usual widths takes it.
    #[inline(never)]
    fn read_wide_delta(
        &self,
        base: &Buckets,
        n: usize,
        r: &mut BitReader<'_>,
        into: &mut Buckets,
    ) -> Result<(), DecodeError> {
        let mut ahead = r.clone();
        let class = ahead.read_bits(2)?;
        let field = self.field_width(class);
        let mut raw = [0u32; 4];
        for v in &mut raw[..n] {
            #[allow(clippy::cast_possible_truncation)]
            let index = ahead.read_bits(field)? as u32;
            *v = index;
        }
        self.delta_value(base, n, class, raw, into)?;
        *r = ahead;
        Ok(())
    }

    /// Reads past what [`write_delta`](Self::write_delta) wrote for `components` (1 to 4)
    /// components, against any baseline: its class, then its fields, no value checked.
    pub(crate) fn skip_delta(
        &self,
        components: usize,
        r: &mut BitReader<'_>,
    ) -> Result<(), DecodeError> {
        let field = self.field_width(r.read_bits(2)?);
        r.skip_bits(field as usize * components.min(4))
    }

    /// The width of each field of a vector of `class` (0 to 3): its delta width, or the
    /// index's for an absolute vector.
    #[inline]
    fn field_width(&self, class: u64) -> u32 {
        #[allow(clippy::cast_possible_truncation)]
        CLASS_WIDTHS
            .get(class as usize)
            .copied()
            .unwrap_or(self.bits)
    }

    /// The first `n` indexes of a vector delta of `class` whose fields are `raw` (differences,
    /// or absolute indexes), against `base`, checked, written into `now` (the others 0).
    #[inline(always)]
    fn delta_value(
        &self,
        base: &Buckets,
        n: usize,
        class: u64,
        raw: [u32; 4],
        now: &mut Buckets,
    ) -> Result<(), DecodeError> {
        let absolute = class == ABSOLUTE;
        *now = Buckets::default();
        let mut widest = 0;
        let mut past = false;
        for ((k, &field), &from) in now.0.iter_mut().zip(&raw).zip(&base.0).take(n) {
            let (index, zz) = match absolute {
                true => (field, difference(from, field)),
                false => (apply(from, field), field),
            };
            *k = index;
            widest = widest.max(zz);
            past |= index > self.max_index();
        }
        if past {
            return Err(DecodeError::BadQuantized);
        }
        let canonical = match self.narrowest_class(widest) {
            Some(narrowest) => narrowest as u64 == class,
            None => absolute,
        };
        match canonical {
            true => Ok(()),
            false => Err(DecodeError::NonCanonical),
        }
    }

    /// Bits per component of a rotation (those of a
    /// [`smallest_three`](Self::smallest_three) quantization: 9 to 16).
    fn rotation_bits(&self) -> u32 {
        self.bits
            .clamp(*SMALLEST_THREE_BITS.start(), *SMALLEST_THREE_BITS.end())
    }

    /// The widths of a rotation component's short and long differences.
    fn rotation_widths(&self) -> [u32; 2] {
        let n = self.rotation_bits();
        [n.div_ceil(2), n - 2]
    }

    /// Appends the packed smallest-three rotation `now` coded against `base` (see
    /// [the grammar](super#deltas-at-the-bit-level)); `self` is a [`smallest_three`](Self::smallest_three)
    /// quantization.
    pub fn write_rotation_delta(&self, base: &Buckets, now: &Buckets, w: &mut BitWriter) {
        let packed = now.packed_value();
        let (base, now) = (Rotation::of(self, base), Rotation::of(self, now));
        // Each form in one write, least significant first: at most 3 + 3 × 16 bits absolute,
        // 1 + 3 × 16 as a delta.
        let Some(zz) = self.rotation_differences(&base, &now) else {
            // A clear flag, then the packed rotation.
            return w.write_bits(packed << 1, 3 + 3 * self.rotation_bits());
        };
        let [short, long] = self.rotation_widths();
        // A set flag, then each difference: 0 alone (a clear bit), or a set bit, a bit that
        // says which width, and the difference. Chosen by selects, not branches: which form
        // a component takes is as random as the motion.
        let (mut code, mut len) = (1, 1);
        for d in zz {
            let set = d != 0;
            let wide = !fits(d, short);
            let tag = u64::from(set) | u64::from(wide) << 1;
            let field = if set { tag | u64::from(d) << 2 } else { 0 };
            let width = if set {
                2 + if wide { long } else { short }
            } else {
                1
            };
            code |= field << len;
            len += width;
        }
        w.write_clean_bits(code, len);
    }

    /// The zig-zag differences of `now`'s three components from `base`'s, if `now` can be
    /// coded as a delta: same largest component, every difference within the long width.
    fn rotation_differences(&self, base: &Rotation, now: &Rotation) -> Option<[u32; 3]> {
        if base.largest != now.largest {
            return None;
        }
        let zz = [0, 1, 2].map(|i| difference(base.components[i], now.components[i]));
        let [_, long] = self.rotation_widths();
        zz.iter().all(|&d| fits(d, long)).then_some(zz)
    }

    /// Reads what [`write_rotation_delta`](Self::write_rotation_delta) wrote against the same
    /// `base`, refusing a component past the last bucket ([`DecodeError::BadQuantized`]) and
    /// any form other than the one the writer picks ([`DecodeError::NonCanonical`]). Every
    /// form fits one [window](BitReader::window); a refused value leaves the position where it
    /// was.
    pub fn read_rotation_delta(
        &self,
        base: &Buckets,
        r: &mut BitReader<'_>,
    ) -> Result<Buckets, DecodeError> {
        let mut now = Buckets::default();
        self.read_rotation_delta_into(base, r, &mut now)?;
        Ok(now)
    }

    /// [`read_rotation_delta`](Self::read_rotation_delta), the value written into `into`
    /// (which a refused one leaves as it was), as [`read_delta_into`](Self::read_delta_into).
    pub(crate) fn read_rotation_delta_into(
        &self,
        base: &Buckets,
        r: &mut BitReader<'_>,
        into: &mut Buckets,
    ) -> Result<(), DecodeError> {
        let base = Rotation::of(self, base);
        let mut window = r.window();
        let delta = window.take_bit();
        let (now, canonical) = match delta {
            false => {
                let now = Rotation::of_packed(self, window.take(2 + 3 * self.rotation_bits()));
                (now, self.rotation_differences(&base, &now).is_none())
            }
            true => {
                let (now, canonical, used) = self.rotation_components(&base, window.peek());
                window.take(used);
                (now, canonical)
            }
        };
        if !window.fits(0) {
            return Err(DecodeError::EndOfStream);
        }
        if now.components.iter().any(|&k| k > self.rotation_top()) {
            return Err(DecodeError::BadQuantized);
        }
        if !canonical {
            return Err(DecodeError::NonCanonical);
        }
        r.commit(window)?;
        *into = now.buckets(self);
        Ok(())
    }

    /// Reads past what [`write_rotation_delta`](Self::write_rotation_delta) wrote, against any
    /// baseline: its flag, then the packed rotation or each component's form and difference,
    /// no value checked.
    pub(crate) fn skip_rotation_delta(&self, r: &mut BitReader<'_>) -> Result<(), DecodeError> {
        if !r.read_bit()? {
            return r.skip_bits(2 + 3 * self.rotation_bits() as usize);
        }
        let [short, long] = self.rotation_widths();
        for _ in 0..3 {
            if r.read_bit()? {
                let width = if r.read_bit()? { long } else { short };
                r.skip_bits(width as usize)?;
            }
        }
        Ok(())
    }

    /// Takes the three component differences of a rotation delta from `base` out of `rest`
    /// (the stream's next bits, as many as a window holds; zeros past them); also whether
    /// each took the narrowest field that holds it, and how many bits they took.
    fn rotation_components(&self, base: &Rotation, mut rest: u64) -> (Rotation, bool, u32) {
        let [short, long] = self.rotation_widths();
        let mut now = *base;
        let mut canonical = true;
        let mut used = 0;
        for k in &mut now.components {
            // Decided by selects, as the writer's (a branch per form would be mispredicted
            // as often as the motion changes which form a component takes).
            let set = rest & 1 == 1;
            let wide = rest & 2 != 0;
            let width = if wide { long } else { short };
            let d = if set {
                rest >> 2 & ((1 << width) - 1)
            } else {
                0
            };
            // At most 2 + 14 bits.
            let taken = if set { 2 + width } else { 1 };
            rest >>= taken;
            used += taken;
            // A set bit carries a difference that needs its width: not 0, and not one the
            // short width holds when the long one was used.
            canonical &= !set || if wide { !fits_u64(d, short) } else { d != 0 };
            #[allow(clippy::cast_possible_truncation)]
            let d = d as u32;
            *k = apply(*k, d);
        }
        (now, canonical, used)
    }

    /// The largest component index of a smallest-three rotation, `2^bits − 2`.
    fn rotation_top(&self) -> u32 {
        #[allow(clippy::cast_possible_truncation)]
        let top = (1u64 << self.rotation_bits()) - 2;
        top as u32
    }
}

/// A packed smallest-three rotation taken apart.
#[derive(Debug, Clone, Copy)]
struct Rotation {
    /// The index of the largest component (dropped from the encoding).
    largest: u64,
    /// The other three, as bucket indexes.
    components: [u32; 3],
}

impl Rotation {
    /// The rotation a shadow state keeps (packed in the first two slots).
    fn of(q: &Quantization, b: &Buckets) -> Self {
        Self::of_packed(q, b.packed_value())
    }

    /// Takes `packed` apart (`2 + 3 · bits` bits; any above are ignored).
    fn of_packed(q: &Quantization, packed: u64) -> Self {
        let n = q.rotation_bits();
        let mask = (1u64 << n) - 1;
        #[allow(clippy::cast_possible_truncation)]
        let components = [0, 1, 2].map(|i| (packed >> (2 + i * n) & mask) as u32);
        Self {
            largest: packed & 3,
            components,
        }
    }

    /// Packs it again, as a shadow state keeps it.
    fn buckets(&self, q: &Quantization) -> Buckets {
        let mut packed = self.largest;
        for (i, &k) in (0u32..).zip(&self.components) {
            packed |= u64::from(k) << (2 + i * q.rotation_bits());
        }
        Buckets::packed(packed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::*;

    const POSITION: Quantization = Quantization::new(-512.0, 512.0, 16);
    const ROTATION: Quantization = Quantization::smallest_three(12);

    fn b(indexes: [u32; 3]) -> Buckets {
        Buckets([indexes[0], indexes[1], indexes[2], 0])
    }

    /// A packed 12-bit smallest-three rotation.
    fn rot(largest: u64, c: [u32; 3]) -> Buckets {
        let r = Rotation {
            largest,
            components: c,
        };
        r.buckets(&ROTATION)
    }

    /// `now` coded against `base`: its bytes and bit length; checks that it reads back.
    fn vector(q: &Quantization, base: [u32; 3], now: [u32; 3]) -> (Vec<u8>, usize) {
        let mut w = BitWriter::new();
        q.write_delta(&b(base), &b(now), 3, &mut w);
        let bits = w.bit_len();
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes);
        assert_eq!(q.read_delta(&b(base), 3, &mut r), Ok(b(now)));
        assert_eq!(r.finish(), Ok(()));
        (bytes, bits)
    }

    fn rotation(base: Buckets, now: Buckets) -> (Vec<u8>, usize) {
        let mut w = BitWriter::new();
        ROTATION.write_rotation_delta(&base, &now, &mut w);
        let bits = w.bit_len();
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes);
        assert_eq!(ROTATION.read_rotation_delta(&base, &mut r), Ok(now));
        assert_eq!(r.finish(), Ok(()));
        (bytes, bits)
    }

    /// Bits written one `(value, width)` field after the other.
    fn fields(fields: &[(u64, u32)]) -> Vec<u8> {
        let mut w = BitWriter::new();
        for &(value, width) in fields {
            w.write_bits(value, width);
        }
        w.finish().to_vec()
    }

    #[test]
    fn vector_classes_golden() {
        // +2, 0, −3 steps: class 0, zig-zag 4, 0, 5 in 3 bits each.
        let (bytes, bits) = vector(&POSITION, [100, 200, 300], [102, 200, 297]);
        assert_eq!((bytes.as_slice(), bits), (&[0x10, 0x05][..], 11));
        // −10: class 1 (zig-zag 19 in 5 bits).
        let (bytes, bits) = vector(&POSITION, [100, 200, 300], [90, 200, 300]);
        assert_eq!(bits, 17);
        assert_eq!(bytes, fields(&[(1, 2), (19, 5), (0, 5), (0, 5)]));
        // +100: class 2 (zig-zag 200 in 8 bits).
        let (bytes, bits) = vector(&POSITION, [100, 200, 300], [100, 300, 300]);
        assert_eq!(
            (bytes, bits),
            (fields(&[(2, 2), (0, 8), (200, 8), (0, 8)]), 26)
        );
        // +128 is past class 2: absolute, 16 bits each.
        let (bytes, bits) = vector(&POSITION, [100, 200, 300], [228, 200, 300]);
        assert_eq!(
            (bytes, bits),
            (fields(&[(3, 2), (228, 16), (200, 16), (300, 16)]), 50)
        );
    }

    #[test]
    fn narrow_quantizations_and_wrapping() {
        // 3 bits: no class is narrower than the index, so every value is absolute.
        let q = Quantization::new(0.0, 1.0, 3);
        assert_eq!(vector(&q, [1, 2, 3], [2, 2, 3]).1, 2 + 9);
        // 5 bits: only class 0 is narrower.
        let q = Quantization::new(0.0, 1.0, 5);
        assert_eq!(vector(&q, [1, 2, 3], [2, 2, 3]).1, 2 + 9);
        assert_eq!(vector(&q, [1, 2, 3], [31, 2, 3]).1, 2 + 15);
        // 32 bits: differences wrap, both ways.
        let q = Quantization::new(0.0, 1.0, 32);
        assert_eq!(vector(&q, [0, u32::MAX, 7], [u32::MAX, 0, 7]).1, 2 + 9);
        // A difference leading past the last bucket of 16 bits.
        let bytes = fields(&[(0, 2), (1, 3), (0, 3), (0, 3)]);
        let read = POSITION.read_delta(&b([0, 0, 0]), 3, &mut BitReader::new(&bytes));
        assert_eq!(read, Err(DecodeError::BadQuantized));
    }

    #[test]
    fn vector_forms_the_writer_does_not_pick_are_refused() {
        let base = b([100, 200, 300]);
        for (form, why) in [
            (
                fields(&[(1, 2), (4, 5), (0, 5), (0, 5)]),
                "class 1 where 0 fits",
            ),
            (
                fields(&[(2, 2), (4, 8), (0, 8), (0, 8)]),
                "class 2 where 0 fits",
            ),
            (
                fields(&[(3, 2), (102, 16), (200, 16), (300, 16)]),
                "absolute where 0 fits",
            ),
            (
                fields(&[(3, 2), (100, 16), (200, 16), (300, 16)]),
                "absolute for no change",
            ),
        ] {
            let mut r = BitReader::new(&form);
            assert_eq!(
                POSITION.read_delta(&base, 3, &mut r),
                Err(DecodeError::NonCanonical),
                "{why}"
            );
            assert_eq!(
                r.bit_position(),
                0,
                "{why}: a refused value is not read past"
            );
        }
        let q = Quantization::new(0.0, 1.0, 5);
        let form = fields(&[(1, 2), (9, 5)]);
        let read = q.read_delta(&b([10, 0, 0]), 1, &mut BitReader::new(&form));
        assert_eq!(
            read,
            Err(DecodeError::NonCanonical),
            "class 1 as wide as 5 bits"
        );
        let mut r = BitReader::new(&[0x10]);
        assert_eq!(
            POSITION.read_delta(&base, 3, &mut r),
            Err(DecodeError::EndOfStream)
        );
        assert_eq!(r.bit_position(), 0);
        // Absolute 32-bit indexes take more than one load: read field by field.
        let wide = Quantization::new(0.0, 1.0, 32);
        let far = b([7, u32::MAX, 1 << 31]);
        let mut w = BitWriter::new();
        wide.write_delta(&b([0, 0, 0]), &far, 3, &mut w);
        assert_eq!(w.bit_len(), 2 + 3 * 32);
        let bytes = w.finish().to_vec();
        let mut r = BitReader::new(&bytes);
        assert_eq!(wide.read_delta(&b([0, 0, 0]), 3, &mut r), Ok(far));
        let cut = &bytes[..bytes.len() - 1];
        let mut r = BitReader::new(cut);
        assert_eq!(
            wide.read_delta(&b([0, 0, 0]), 3, &mut r),
            Err(DecodeError::EndOfStream)
        );
        assert_eq!(r.bit_position(), 0);
    }

    #[test]
    fn rotation_golden() {
        let base = rot(3, [2047, 2047, 2047]);
        // Unchanged, +3 (zig-zag 6: short), −57 (zig-zag 113: long).
        let (bytes, bits) = rotation(base, rot(3, [2047, 2050, 1990]));
        assert_eq!(bits, 1 + 1 + (2 + 6) + (2 + 10));
        assert_eq!(
            bytes,
            fields(&[(1, 1), (0, 1), (0b01, 2), (6, 6), (0b11, 2), (113, 10)])
        );
        // Another largest component: absolute, 2 + 36 bits.
        let now = rot(1, [2047, 2050, 1990]);
        let (bytes, bits) = rotation(base, now);
        assert_eq!(bits, 1 + 38);
        assert_eq!(bytes, fields(&[(0, 1), (now.packed_value(), 38)]));
        // A difference past the long width (zig-zag 1024 > 10 bits): absolute.
        assert_eq!(rotation(base, rot(3, [2559, 2047, 2047])).1, 39);
        assert_eq!(rotation(base, rot(3, [2558, 2047, 2047])).1, 1 + 12 + 2);
    }

    #[test]
    fn rotation_forms_the_writer_does_not_pick_are_refused() {
        let base = rot(3, [2047, 2047, 2047]);
        let refused = |form: Vec<u8>, error, why: &str| {
            let mut r = BitReader::new(&form);
            assert_eq!(
                ROTATION.read_rotation_delta(&base, &mut r),
                Err(error),
                "{why}"
            );
            assert_eq!(
                r.bit_position(),
                0,
                "{why}: a refused value is not read past"
            );
        };
        let nc = DecodeError::NonCanonical;
        refused(
            fields(&[(1, 1), (0b01, 2), (0, 6), (0, 2)]),
            nc,
            "short zero",
        );
        refused(
            fields(&[(1, 1), (0b11, 2), (63, 10), (0, 2)]),
            nc,
            "long where short fits",
        );
        let same = base.packed_value();
        refused(
            fields(&[(0, 1), (same, 38)]),
            nc,
            "absolute where a delta fits",
        );
        // −2048 from 2047 wraps past the first bucket; 4095 is past the last one.
        let past = fields(&[(1, 1), (0b11, 2), (511, 10), (0, 2)]);
        let read = ROTATION.read_rotation_delta(&rot(3, [0, 0, 0]), &mut BitReader::new(&past));
        assert_eq!(read, Err(DecodeError::BadQuantized));
        let top = fields(&[(0, 1), (3 | 4095 << 2, 38)]);
        refused(
            top,
            DecodeError::BadQuantized,
            "a component past the last bucket",
        );
        let mut cut = fields(&[(0, 1), (3 | 7 << 2, 38)]);
        cut.truncate(4);
        refused(cut, DecodeError::EndOfStream, "an absolute form cut short");
        let cut = fields(&[(1, 1), (0b11, 2), (15, 4)]);
        refused(cut, DecodeError::EndOfStream, "a long field cut short");
    }

    proptest! {
        #[test]
        fn vectors_round_trip_and_reencode(
            bits in 1u32..=32,
            components in 1usize..=4,
            base in any::<[u32; 4]>(),
            now in any::<[u32; 4]>(),
            near in any::<[i8; 4]>(),
            close in any::<bool>(),
        ) {
            let q = Quantization::new(0.0, 1.0, bits);
            let clamp = |v: [u32; 4]| Buckets(v.map(|i| i & q.max_index()));
            let base = clamp(base);
            #[allow(clippy::cast_sign_loss)]
            let now = match close {
                true => clamp([0, 1, 2, 3].map(|i| base.0[i].wrapping_add(near[i] as u32))),
                false => clamp(now),
            };
            let mut expect = now;
            expect.0[components..].fill(0);
            let mut w = BitWriter::new();
            q.write_delta(&base, &now, components, &mut w);
            let len = w.bit_len();
            let bytes = w.finish().to_vec();
            let mut r = BitReader::new(&bytes);
            prop_assert_eq!(q.read_delta(&base, components, &mut r), Ok(expect));
            prop_assert_eq!(r.finish(), Ok(()));
            // Passed over without the baseline, to the bit.
            let mut r = BitReader::new(&bytes);
            prop_assert_eq!(q.skip_delta(components, &mut r), Ok(()));
            prop_assert_eq!(r.bit_position(), len);
        }

        #[test]
        fn any_accepted_vector_bits_reencode_to_themselves(
            bits in 1u32..=32,
            components in 1usize..=4,
            base in any::<[u32; 4]>(),
            bytes in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            let q = Quantization::new(0.0, 1.0, bits);
            let base = Buckets(base.map(|i| i & q.max_index()));
            let mut r = BitReader::new(&bytes);
            if let Ok(now) = q.read_delta(&base, components, &mut r) {
                let used = r.bit_position();
                let mut w = BitWriter::new();
                q.write_delta(&base, &now, components, &mut w);
                prop_assert_eq!(w.bit_len(), used);
                let mut again = BitWriter::new();
                prop_assert!(again.append_bits(&bytes, 0, used));
                prop_assert_eq!(w.finish(), again.finish());
            }
        }

        #[test]
        fn any_accepted_rotation_bits_reencode_to_themselves(
            bits in SMALLEST_THREE_BITS,
            largest in 0u64..4,
            base in any::<[u32; 3]>(),
            bytes in proptest::collection::vec(any::<u8>(), 0..12),
        ) {
            let q = Quantization::smallest_three(bits);
            let top = q.rotation_top();
            let base = Rotation {
                largest,
                components: base.map(|k| k % (top + 1)),
            }
            .buckets(&q);
            let mut r = BitReader::new(&bytes);
            if let Ok(now) = q.read_rotation_delta(&base, &mut r) {
                let used = r.bit_position();
                let mut w = BitWriter::new();
                q.write_rotation_delta(&base, &now, &mut w);
                prop_assert_eq!(w.bit_len(), used);
                let mut again = BitWriter::new();
                prop_assert!(again.append_bits(&bytes, 0, used));
                prop_assert_eq!(w.finish(), again.finish());
                // And it reads back to the same rotation.
                let written = w.finish().to_vec();
                prop_assert_eq!(q.read_rotation_delta(&base, &mut BitReader::new(&written)), Ok(now));
            }
        }

        #[test]
        fn rotations_round_trip(
            bits in SMALLEST_THREE_BITS,
            largest in 0u64..4,
            other in 0u64..4,
            base in any::<[u32; 3]>(),
            steps in any::<[i16; 3]>(),
        ) {
            let q = Quantization::smallest_three(bits);
            let top = q.rotation_top();
            let make = |largest, c: [u32; 3]| Rotation {
                largest,
                components: c.map(|k| k % (top + 1)),
            }
            .buckets(&q);
            let from = base.map(|k| k % (top + 1));
            #[allow(clippy::cast_sign_loss)]
            let to = [0, 1, 2].map(|i| {
                let k = i64::from(from[i]) + i64::from(steps[i]);
                k.clamp(0, i64::from(top)) as u32
            });
            let (base, now) = (make(largest, from), make(other, to));
            let mut w = BitWriter::new();
            q.write_rotation_delta(&base, &now, &mut w);
            let len = w.bit_len();
            let bytes = w.finish().to_vec();
            let mut r = BitReader::new(&bytes);
            prop_assert_eq!(q.read_rotation_delta(&base, &mut r), Ok(now));
            prop_assert_eq!(r.finish(), Ok(()));
            // Passed over without the baseline, to the bit.
            let mut r = BitReader::new(&bytes);
            prop_assert_eq!(q.skip_rotation_delta(&mut r), Ok(()));
            prop_assert_eq!(r.bit_position(), len);
        }
    }
}
