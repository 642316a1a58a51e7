//! The server's buffer of one client's inputs: a ring of the ticks ahead of the one being
//! simulated, filled from input messages (each input arrives several times; the first copy
//! counts), emptied one tick at a time as the server simulates.

use crate::replication::shared::input_wire::{ReadInput, ViewAt, MAX_VIEW_BEHIND};
use crate::replication::shared::prediction_stats::InputStats;
use crate::tick::{tick_after, tick_diff};

/// Ticks of inputs the buffer holds ahead of the server (a power of two): inputs further ahead
/// are dropped (a client runs a few ticks ahead, not seconds).
pub(crate) const INPUT_BUFFER_TICKS: usize = 128;

/// One tick's slot.
#[derive(Debug, Default)]
struct Slot {
    tick: u32,
    /// Whether the input of `tick` arrived.
    received: bool,
    bytes: Vec<u8>,
    view: Option<ViewAt>,
}

/// What [`InputBuffer::take`] found for a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken<'a> {
    /// The client's input for the tick, and the view it was sampled at.
    Input(&'a [u8], Option<ViewAt>),
    /// It has not arrived (lost, or late): the last input that did, if there was one, and how
    /// many ticks in a row (this one included) have been missing.
    Missing(Option<&'a [u8]>, u32),
    /// The client never sent an input.
    None,
}

/// One client's inputs on the server (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct InputBuffer {
    slots: Box<[Slot]>,
    /// The newest tick an input arrived for.
    newest: Option<u32>,
    /// The last tick taken (simulated).
    taken: Option<u32>,
    /// The last input taken that had arrived, for repeating.
    last: Vec<u8>,
    has_last: bool,
    /// Ticks in a row taken without their input.
    missing_run: u32,
    /// The lowest lead seen since the last ack (ticks the newest input was ahead of the tick
    /// taken); `None` when none was taken since.
    lead: Option<i32>,
    pub(crate) counts: InputStats,
}

impl Default for InputBuffer {
    fn default() -> Self {
        Self {
            slots: (0..INPUT_BUFFER_TICKS).map(|_| Slot::default()).collect(),
            newest: None,
            taken: None,
            last: Vec::new(),
            has_last: false,
            missing_run: 0,
            lead: None,
            counts: InputStats::default(),
        }
    }
}

impl InputBuffer {
    #[cfg(test)]
    fn slot(&self, tick: u32) -> &Slot {
        &self.slots[tick as usize & (INPUT_BUFFER_TICKS - 1)]
    }

    fn slot_mut(&mut self, tick: u32) -> &mut Slot {
        &mut self.slots[tick as usize & (INPUT_BUFFER_TICKS - 1)]
    }

    /// The newest tick an input arrived for.
    pub(crate) fn newest(&self) -> Option<u32> {
        self.newest
    }

    /// Inputs received ahead of the last tick taken.
    pub(crate) fn depth(&self) -> u32 {
        match (self.newest, self.taken) {
            (Some(newest), Some(taken)) => u32::try_from(tick_diff(newest, taken)).unwrap_or(0),
            _ => 0,
        }
    }

    /// Stores one received input (a copy that arrived already is ignored). An input for a tick
    /// simulated already is late (counted once, and the newest if it is: acks report the lead of
    /// the inputs that arrived, late ones included); one too far ahead is dropped.
    pub(crate) fn receive(&mut self, input: ReadInput<'_>) {
        if let Some(taken) = self.taken {
            if !tick_after(input.tick, taken) {
                // The newest still: the lead the next ack reports says how late it came.
                self.note_newest(input.tick);
                let slot = self.slot_mut(input.tick);
                if !(slot.tick == input.tick && slot.received)
                    && tick_diff(taken, input.tick) < INPUT_BUFFER_TICKS as i32
                {
                    slot.tick = input.tick;
                    slot.received = true;
                    slot.bytes.clear();
                    self.counts.late += 1;
                }
                return;
            }
            if tick_diff(input.tick, taken) >= INPUT_BUFFER_TICKS as i32 {
                self.counts.dropped += 1;
                return;
            }
        }
        self.note_newest(input.tick);
        let slot = self.slot_mut(input.tick);
        if slot.tick == input.tick && slot.received {
            return;
        }
        slot.tick = input.tick;
        slot.received = true;
        slot.bytes.clear();
        slot.bytes.extend_from_slice(input.bytes);
        slot.view = input.view;
    }

    /// An input of `tick` arrived (on time or late).
    fn note_newest(&mut self, tick: u32) {
        if self.newest.map_or(true, |n| tick_after(tick, n)) {
            self.newest = Some(tick);
        }
    }

    /// The input for `tick`, the next tick the server simulates: the client's if it arrived,
    /// else missing (with the last one that did). Records the lead it arrived with.
    pub(crate) fn take(&mut self, tick: u32) -> Taken<'_> {
        let Some(newest) = self.newest else {
            return Taken::None;
        };
        let lead = tick_diff(newest, tick);
        self.lead = Some(self.lead.map_or(lead, |l| l.min(lead)));
        self.taken = Some(tick);
        let index = tick as usize & (INPUT_BUFFER_TICKS - 1);
        let slot = &self.slots[index];
        if slot.tick == tick && slot.received {
            self.counts.on_time += 1;
            self.last.clear();
            self.last.extend_from_slice(&slot.bytes);
            self.has_last = true;
            self.missing_run = 0;
            let view = self.slots[index].view.map(|view| self.within_window(view));
            return Taken::Input(&self.slots[index].bytes, view);
        }
        self.counts.missing += 1;
        self.missing_run = self.missing_run.saturating_add(1);
        Taken::Missing(
            self.has_last.then_some(self.last.as_slice()),
            self.missing_run,
        )
    }

    /// `view` if lag compensation can serve it, else the nearest tick it can (counted): the
    /// input's own for a view after it (in serial order), the oldest for one too far back. A
    /// client claims where it showed the world; a modified one, anything.
    fn within_window(&mut self, view: ViewAt) -> ViewAt {
        if view.behind <= MAX_VIEW_BEHIND {
            return view;
        }
        self.counts.views_out_of_window += 1;
        let ahead = i32::try_from(view.behind).is_err();
        ViewAt {
            behind: if ahead { 0 } else { MAX_VIEW_BEHIND },
            fraction: 0,
        }
    }

    /// Its counters, with the current depth.
    pub(crate) fn stats(&self) -> InputStats {
        InputStats {
            buffered: self.depth(),
            ..self.counts
        }
    }

    /// The lowest lead since the last call, for the client's ack (`None`: nothing taken since).
    pub(crate) fn take_lead(&mut self) -> Option<i32> {
        self.lead.take()
    }

    /// Whether the input of `tick` arrived (tests).
    #[cfg(test)]
    fn has(&self, tick: u32) -> bool {
        let slot = self.slot(tick);
        slot.tick == tick && slot.received
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(tick: u32, byte: u8) -> ReadInput<'static> {
        let bytes: &'static [u8] = Box::leak(Box::new([byte]));
        ReadInput {
            tick,
            bytes,
            view: None,
        }
    }

    #[test]
    fn inputs_are_taken_at_their_tick_and_missing_ones_repeat_the_last() {
        let mut b = InputBuffer::default();
        assert_eq!(b.take(1), Taken::None);
        b.receive(input(3, 30));
        b.receive(input(4, 40));
        b.receive(input(4, 41));
        assert_eq!(b.take(3), Taken::Input(&[30], None));
        assert_eq!(
            b.take(4),
            Taken::Input(&[40], None),
            "the first copy counts"
        );
        assert_eq!(b.take(5), Taken::Missing(Some(&[40]), 1));
        assert_eq!(b.take(6), Taken::Missing(Some(&[40]), 2));
        assert_eq!(
            b.take_lead(),
            Some(-2),
            "tick 6 was taken with tick 4 the newest"
        );
        assert_eq!(b.take_lead(), None);
        b.receive(input(5, 50));
        b.receive(input(5, 50));
        assert_eq!(
            (
                b.counts.on_time,
                b.counts.late,
                b.counts.missing,
                b.counts.dropped
            ),
            (2, 1, 2, 0)
        );
    }

    #[test]
    fn far_future_inputs_are_dropped_and_ticks_wrap() {
        let mut b = InputBuffer::default();
        b.receive(input(u32::MAX, 1));
        assert_eq!(b.take(u32::MAX), Taken::Input(&[1], None));
        b.receive(input(0, 2));
        b.receive(input(INPUT_BUFFER_TICKS as u32, 3));
        assert!(b.has(0));
        assert_eq!(b.counts.dropped, 1);
        assert_eq!(b.depth(), 1);
        assert_eq!(b.take(0), Taken::Input(&[2], None));
    }

    #[test]
    fn a_late_input_is_the_newest_and_the_next_lead_says_how_late() {
        let mut b = InputBuffer::default();
        b.receive(input(1, 1));
        for tick in 1..=10 {
            b.take(tick);
        }
        assert_eq!(b.take_lead(), Some(-9));
        b.receive(input(5, 5));
        assert_eq!((b.newest(), b.counts.late), (Some(5), 1));
        b.take(11);
        assert_eq!(
            b.take_lead(),
            Some(-6),
            "not -10: the client learns where it is"
        );
    }
}
