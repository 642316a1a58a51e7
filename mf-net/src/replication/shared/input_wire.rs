//! The two messages of the input pipeline, encoded and decoded (ids and layouts on
//! [`message_ids`](crate::replication::shared::message_ids)):
//!
//! - `input`, client → server, unreliable, once per simulated tick: the newest inputs (the
//!   newest tick's and the ones before it, so that a lost packet is covered by the next), oldest
//!   first, each the input's `NetCodec` bytes or "the same as the one before";
//! - `input ack`, server → client, unreliable, once per server frame that consumed its input:
//!   the newest input tick received and how many ticks early (negative: late) inputs arrived.

use crate::tick::tick_diff;
use crate::wire::{DecodeError, NetReader, NetWriter};

/// Most inputs one input message carries (the newest and the ones before it).
pub const MAX_INPUT_REDUNDANCY: usize = 32;

/// Longest encoded input the server accepts (and a client sends): one tick's input is a few
/// buttons and axes, not a payload.
pub const MAX_INPUT_BYTES: usize = 256;

/// Most ticks a view is behind its input's tick: what the longest
/// [`LagHistory`](crate::prediction::LagHistory) holds. A client clamps its views to
/// `0..=MAX_VIEW_BEHIND` ticks behind; the server clamps what it reads to that window.
pub(crate) const MAX_VIEW_BEHIND: u32 = 1 << 16;

/// Where a client showed remote nodes when it sampled an input: the whole render tick's offset
/// behind the input's tick, and the fraction past it in 256ths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ViewAt {
    /// `input tick − floor(render tick)` (wrapping).
    pub(crate) behind: u32,
    /// The render tick's fraction, in 256ths.
    pub(crate) fraction: u8,
}

impl ViewAt {
    /// The view of a client rendering at `render_tick` (unwrapped) while sampling the input of
    /// `tick`, within the window: a render tick ahead of the input's (the client's clock is
    /// behind its interpolation, after a stall) is the input's tick, one more than
    /// [`MAX_VIEW_BEHIND`] ticks behind is that many.
    pub(crate) fn of(tick: u32, render_tick: f64) -> Self {
        let floor = render_tick.floor();
        // Render ticks are unwrapped near the input's tick: the whole part taken modulo 2³².
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole = (floor.rem_euclid(4_294_967_296.0)) as u32;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let fraction = ((render_tick - floor) * 256.0).clamp(0.0, 255.0) as u8;
        match tick_diff(tick, whole) {
            behind if behind < 0 => Self::at_most(0),
            behind if behind.unsigned_abs() > MAX_VIEW_BEHIND => Self::at_most(MAX_VIEW_BEHIND),
            behind => Self {
                behind: behind.unsigned_abs(),
                fraction,
            },
        }
    }

    /// The view `behind` ticks behind its input's tick, on the tick.
    fn at_most(behind: u32) -> Self {
        Self {
            behind,
            fraction: 0,
        }
    }

    /// The render tick this view names, for the input of `tick`, unwrapped near `tick`.
    pub(crate) fn render_tick(self, tick: u32) -> f64 {
        let whole = tick.wrapping_sub(self.behind);
        crate::tick::unwrap_near(whole, f64::from(tick)) + f64::from(self.fraction) / 256.0
    }
}

/// Writes an input message: `inputs` are the encoded inputs of the ticks up to `newest`, oldest
/// first (at most [`MAX_INPUT_REDUNDANCY`], at least one), each with the view it was sampled at.
pub(crate) fn write_inputs<'a>(
    w: &mut NetWriter,
    newest: u32,
    inputs: impl ExactSizeIterator<Item = (&'a [u8], Option<ViewAt>)>,
) {
    w.write_var_u32(newest);
    let count = inputs.len().min(MAX_INPUT_REDUNDANCY);
    // `count <= MAX_INPUT_REDUNDANCY`, which fits a byte.
    #[allow(clippy::cast_possible_truncation)]
    w.write_u8(count as u8);
    let mut previous: Option<&[u8]> = None;
    for (bytes, view) in inputs.take(count) {
        if previous == Some(bytes) {
            w.write_var_u32(0);
        } else {
            w.write_len(bytes.len() + 1);
            w.write_bytes(bytes);
        }
        previous = Some(bytes);
        match view {
            Some(view) => {
                w.write_var_u32(view.behind.saturating_add(1));
                w.write_u8(view.fraction);
            }
            None => w.write_var_u32(0),
        }
    }
}

/// One input of an input message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadInput<'a> {
    pub(crate) tick: u32,
    pub(crate) bytes: &'a [u8],
    pub(crate) view: Option<ViewAt>,
}

/// Reads an input message, calling `each` for every input, oldest first.
///
/// # Errors
///
/// A truncated message, no input or more than [`MAX_INPUT_REDUNDANCY`], an input longer than
/// [`MAX_INPUT_BYTES`], "the same as before" for the first input, or trailing bytes. Inputs
/// before the error were passed to `each` already; the caller drops the message.
pub(crate) fn read_inputs<'a>(
    r: &mut NetReader<'a>,
    mut each: impl FnMut(ReadInput<'a>),
) -> Result<(), DecodeError> {
    let newest = r.read_var_u32()?;
    let count = usize::from(r.read_u8()?);
    if count == 0 || count > MAX_INPUT_REDUNDANCY {
        return Err(DecodeError::OutOfRange);
    }
    let mut previous: Option<&'a [u8]> = None;
    for k in 0..count {
        let n = r.read_len()?;
        let bytes = if n == 0 {
            previous.ok_or(DecodeError::InvalidValue)?
        } else if n - 1 > MAX_INPUT_BYTES {
            return Err(DecodeError::StringTooLong {
                len: n - 1,
                limit: MAX_INPUT_BYTES,
            });
        } else {
            r.read_bytes(n - 1)?
        };
        previous = Some(bytes);
        let view = match r.read_var_u32()? {
            0 => None,
            behind => Some(ViewAt {
                behind: behind - 1,
                fraction: r.read_u8()?,
            }),
        };
        // `k < count <= 32`.
        #[allow(clippy::cast_possible_truncation)]
        let back = (count - 1 - k) as u32;
        each(ReadInput {
            tick: newest.wrapping_sub(back),
            bytes,
            view,
        });
    }
    r.finish()
}

/// Writes an input ack: the newest input tick received and the lead (ticks early; negative:
/// late) the client's inputs arrived with.
pub(crate) fn write_input_ack(w: &mut NetWriter, newest: u32, lead: i32) {
    w.write_var_u32(newest);
    w.write_var_i32(lead);
}

/// Reads an input ack: `(newest input tick received, lead)`.
///
/// # Errors
///
/// A truncated message or trailing bytes.
pub(crate) fn read_input_ack(r: &mut NetReader<'_>) -> Result<(u32, i32), DecodeError> {
    let newest = r.read_var_u32()?;
    let lead = r.read_var_i32()?;
    r.finish()?;
    Ok((newest, lead))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Read = Vec<(u32, Vec<u8>, Option<ViewAt>)>;

    fn read_all(bytes: &[u8]) -> Result<Read, DecodeError> {
        let mut out = Vec::new();
        read_inputs(&mut NetReader::new(bytes), |i| {
            out.push((i.tick, i.bytes.to_vec(), i.view));
        })?;
        Ok(out)
    }

    #[test]
    fn repeated_inputs_cost_one_byte_and_views_two() {
        let view = ViewAt {
            behind: 5,
            fraction: 128,
        };
        let inputs: [(&[u8], Option<ViewAt>); 3] =
            [(&[7, 7], None), (&[7, 7], Some(view)), (&[9], None)];
        let mut w = NetWriter::new();
        write_inputs(&mut w, 100, inputs.iter().copied());
        assert_eq!(
            w.as_slice(),
            &[100, 3, 3, 7, 7, 0, 0, 6, 128, 2, 9, 0],
            "newest · count · (len+1 · bytes | 0) · (behind+1 · fraction | 0)"
        );
        let read = read_all(w.as_slice()).unwrap();
        assert_eq!(
            read,
            vec![
                (98, vec![7, 7], None),
                (99, vec![7, 7], Some(view)),
                (100, vec![9], None)
            ]
        );
    }

    #[test]
    fn ticks_wrap_below_the_newest() {
        let mut w = NetWriter::new();
        write_inputs(&mut w, 1, [(&[1u8][..], None); 3].into_iter());
        let ticks: Vec<u32> = read_all(w.as_slice())
            .unwrap()
            .iter()
            .map(|i| i.0)
            .collect();
        assert_eq!(ticks, [u32::MAX, 0, 1]);
    }

    #[test]
    fn malformed_messages_are_refused() {
        // No input; too many; a repeat first; over the byte limit; trailing bytes; truncated.
        assert!(read_all(&[5, 0]).is_err());
        assert!(read_all(&[5, 33]).is_err());
        assert!(read_all(&[5, 1, 0, 0]).is_err());
        let mut long = NetWriter::new();
        long.write_var_u32(5);
        long.write_u8(1);
        long.write_len(MAX_INPUT_BYTES + 2);
        long.write_bytes(&[0; MAX_INPUT_BYTES + 1]);
        long.write_var_u32(0);
        assert!(matches!(
            read_all(long.as_slice()),
            Err(DecodeError::StringTooLong { .. })
        ));
        assert!(read_all(&[5, 1, 2, 9, 0, 0]).is_err());
        assert!(read_all(&[5, 1, 4, 9]).is_err());
        assert_eq!(read_all(&[5, 1, 2, 9, 0]).unwrap().len(), 1);
    }

    #[test]
    fn views_round_trip_to_the_256th_across_the_wrap() {
        for (tick, render) in [
            (100_u32, 93.5_f64),
            (2, -3.25),
            (u32::MAX, 4_294_967_290.75),
        ] {
            let view = ViewAt::of(tick, render);
            let back = view.render_tick(tick);
            assert!(
                (back - render).abs() < 1.0 / 256.0,
                "{tick} {render} -> {back}"
            );
        }
    }

    #[test]
    fn views_ahead_of_their_input_or_too_far_behind_are_clamped_and_sent() {
        // A render tick ahead of the input's (the clock behind after a stall), across the wrap.
        for (tick, render) in [(100_u32, 130.5_f64), (u32::MAX, 4_294_967_300.25)] {
            let view = ViewAt::of(tick, render);
            assert_eq!((view.behind, view.fraction), (0, 0), "{tick} {render}");
            let mut w = NetWriter::new();
            write_inputs(&mut w, tick, [(&[1u8][..], Some(view))].into_iter());
            assert_eq!(read_all(w.as_slice()).unwrap()[0].2, Some(view));
        }
        let far = ViewAt::of(1_000_000, 10.5);
        assert_eq!((far.behind, far.fraction), (MAX_VIEW_BEHIND, 0));
    }

    #[test]
    fn input_acks_round_trip() {
        let mut w = NetWriter::new();
        write_input_ack(&mut w, 70_000, -3);
        assert_eq!(
            read_input_ack(&mut NetReader::new(w.as_slice())).unwrap(),
            (70_000, -3)
        );
        assert!(read_input_ack(&mut NetReader::new(&[1])).is_err());
    }
}
