//! [`StateCoder`]: a state's bit form written straight from the server's shadow state, with no
//! byte form in between. `#[derive(Replicated)]` generates, per type,
//! [`Capture::write_bits_since_for`](crate::replicated::Capture::write_bits_since_for): the
//! same members [`write_since_for`](crate::replicated::Capture::write_since_for) selects, each
//! handed to the coder in declaration order (bases first), which codes it against the
//! baseline's value in its slot. The bits are those [`state_bits::bytes_to_bits`] makes of
//! the byte form: a quantized member's bucket indexes (the shadow keeps them) are coded as they
//! are; any other member goes through its byte encoding, one member at a time.

use crate::codec::quantize::{Buckets, Quantization};
use crate::codec::state_bits::{self, MemberBits, StateLayout};
use crate::wire::{BitWriter, NetReader, NetWriter};

/// The buffers one coding fills: the state's bits and values, and a member's bytes. Allocates
/// nothing once they have grown. The server keeps one; tests and benchmarks reach it through
/// the runtime's private module.
#[derive(Default)]
pub struct Coding {
    /// The last coding's bits.
    pub(crate) bits: BitWriter,
    /// The last coding's values, one per slot of its layout.
    pub(crate) values: Vec<Buckets>,
    scratch: NetWriter,
}

impl Coding {
    /// Codes a state of `layout` against `base` with `code` (which hands the coder each
    /// member, as [`Capture::write_bits_since_for`] does) into [`bits`](Self::bits) and
    /// [`values`](Self::values). Returns `false` if a member's encoding went over a limit: no
    /// client could read that state. For a `T`'s shadow state `state`: `code(T::LAYOUT, base,
    /// |coder| T::write_bits_since_for(state, since, audience, coder))`.
    ///
    /// [`Capture::write_bits_since_for`]: crate::replicated::Capture::write_bits_since_for
    pub fn code(
        &mut self,
        layout: &StateLayout,
        base: &[Buckets],
        code: impl FnOnce(&mut StateCoder<'_>),
    ) -> bool {
        self.bits.clear();
        self.code_after(layout, base, code)
    }

    /// [`code`](Self::code), with the bits appended after those [`bits`](Self::bits) holds
    /// (the server codes a tick's states one after another into one buffer, each where its
    /// snapshots copy it from).
    pub(crate) fn code_after(
        &mut self,
        layout: &StateLayout,
        base: &[Buckets],
        code: impl FnOnce(&mut StateCoder<'_>),
    ) -> bool {
        // Every slot is kept by the coding (a member carried or not), so a buffer of the
        // layout's length needs no clearing.
        let slots = layout.slots();
        if self.values.len() != slots {
            self.values.clear();
            self.values.resize(slots, Buckets::default());
        }
        let mut coder = StateCoder {
            base,
            now: &mut self.values,
            slot: 0,
            w: &mut self.bits,
            scratch: &mut self.scratch,
            over_limit: false,
        };
        code(&mut coder);
        debug_assert_eq!(coder.slot, slots, "the coding kept every slot");
        !coder.over_limit
    }

    /// The last coding's bits, padded with zero bits to a whole byte.
    pub fn bits(&mut self) -> &[u8] {
        self.bits.finish()
    }

    /// How many bits the last coding wrote.
    pub fn bit_len(&self) -> usize {
        self.bits.bit_len()
    }

    /// The last coding's values, one per slot: what [`state_bits::bytes_to_bits`] gives.
    pub fn values(&self) -> &[Buckets] {
        &self.values
    }
}

/// Codes one state's members against a baseline into a bit writer, and keeps each member's
/// value as a later state's baseline. Made by the server for each coding; the code
/// `#[derive(Replicated)]` generates for
/// [`Capture::write_bits_since_for`](crate::replicated::Capture::write_bits_since_for) calls
/// its methods, one per member, bases first; the bits are those
/// [`state_bits::bytes_to_bits`] makes of the byte form.
pub struct StateCoder<'a> {
    /// The baseline's values, one per slot (zeros past the end: no baseline).
    base: &'a [Buckets],
    /// The state's values, as [`state_bits::bytes_to_bits`] gives them (up to its length).
    now: &'a mut [Buckets],
    /// The next member's slot.
    slot: usize,
    w: &'a mut BitWriter,
    /// One member's byte encoding.
    scratch: &'a mut NetWriter,
    /// Whether a member's encoding went over a limit (see [`NetWriter::over_limit`]).
    over_limit: bool,
}

impl StateCoder<'_> {
    /// One state's change bits: `mask`'s low `count` bits (at most 64).
    #[inline]
    pub fn mask(&mut self, mask: u64, count: u32) {
        self.w.write_bits(mask, count);
    }

    /// A member the state does not carry: its value stays the baseline's.
    #[inline]
    pub fn unchanged(&mut self) {
        let base = self.base();
        self.keep(base);
    }

    /// A quantized member of `components` bucket indexes `wire` (`q`'s).
    #[inline]
    pub fn quantized(&mut self, q: &Quantization, components: u8, wire: &Buckets) {
        q.write_delta(&self.base(), wire, usize::from(components), self.w);
        self.keep(*wire);
    }

    /// A smallest-three rotation `wire` (`q`'s packed encoding).
    #[inline]
    pub fn rotation(&mut self, q: &Quantization, wire: &Buckets) {
        q.write_rotation_delta(&self.base(), wire, self.w);
        self.keep(*wire);
    }

    /// Any other member, of form `bits`: its bit-packed `value` where its type gives one
    /// ([`NetCodec::bit_value`](crate::codec::NetCodec::bit_value): integers, floats,
    /// `bool`), coded as the transcoding of its bytes would code it, without encoding it;
    /// else through the byte encoding `encode` appends.
    #[inline]
    pub fn member(
        &mut self,
        bits: MemberBits,
        value: Option<Buckets>,
        encode: impl FnOnce(&mut NetWriter),
    ) {
        match value.map(|now| state_bits::code_value(bits, self.base(), now, self.w)) {
            Some(Ok(kept)) => self.keep(kept),
            _ => self.encoded(bits, encode),
        }
    }

    /// A member of form `bits` coded through the byte encoding `encode` appends.
    #[inline]
    fn encoded(&mut self, bits: MemberBits, encode: impl FnOnce(&mut NetWriter)) {
        self.scratch.clear();
        encode(self.scratch);
        self.over_limit |= self.scratch.over_limit();
        let base = self.base();
        let mut r = NetReader::new(self.scratch.as_slice());
        match state_bits::encode_member(&bits, &mut r, base, self.w) {
            Ok(value) => self.keep(value),
            // What the member's own encoding wrote reads back; a value over a limit may not,
            // and the state is refused whole.
            Err(_) => {
                self.over_limit = true;
                self.keep(base);
            }
        }
    }

    /// The baseline's value in the next slot.
    #[inline]
    fn base(&self) -> Buckets {
        self.base.get(self.slot).copied().unwrap_or_default()
    }

    /// Keeps `value` as the next slot's, and moves on.
    #[inline]
    fn keep(&mut self, value: Buckets) {
        if let Some(now) = self.now.get_mut(self.slot) {
            *now = value;
        }
        self.slot += 1;
    }
}
