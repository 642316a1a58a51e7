//! One column of the server's shadow states: for every networked node holding a `T`, the typed
//! copy of what was last captured, each member stamped with the tick it changed
//! ([`Replicated::State`]), and the node's change ticks as snapshots read them.
//!
//! The server reaches a column through [`ErasedShadows`], one dynamic call per column per pass
//! (capture every row, write a run of entries) or per entry; the loops inside are
//! monomorphized. Capture borrows the engine's values of `T` for the pass
//! ([`lend`]); the writes read the shadow states alone.

use crate::codec::quantize::Buckets;
use crate::codec::state_bits;
use crate::codec::state_coder::Coding;
use crate::refs;
use crate::replicated::{Audience, Capture, Replicated};
use crate::replication::shared::columns::{RuntimeColumn, ValueAt};
use crate::replication::shared::each_value::{each_value, Aligned, HintedRow};
use crate::store::{lend, NodeId, Store};
use crate::wire::{NetReader, NetWriter};

/// A row's change ticks as snapshots read them, for the node's owner and for any other client
/// (in that order): the newest tick stamped on a member that a snapshot for them carries (0:
/// none), and how far before it the newest change before it is ([`Capture::changed_before`]):
/// 0 for none, at most [`MAX_CHANGE_GAP`] (a change further back is counted as that far, which
/// only groups fewer `since`s as one entry). Twelve bytes, not twenty: the node records the
/// snapshots walk stay small.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LastChanged {
    pub(crate) last: [u32; 2],
    pub(crate) gap: [u16; 2],
}

/// The largest gap a [`LastChanged`] records.
pub(crate) const MAX_CHANGE_GAP: u16 = u16::MAX;

/// A row whose shadow state changed at a capture: its tag and its new change ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changed {
    /// The row's tag (the node's net id).
    pub(crate) tag: u32,
    /// The row's change ticks after the capture.
    pub(crate) last_changed: LastChanged,
    /// Where the row is (column and row).
    pub(crate) at: ValueAt,
}

/// A snapshot entry the server writes in its column's pass: the row and node it is for (a
/// hint: the row is checked), the tag it is written with (the net id) and which members
/// ([`Capture::write_since_for`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StateRequest {
    pub(crate) row: u32,
    pub(crate) node: NodeId,
    pub(crate) tag: u32,
    pub(crate) since: Option<u32>,
    pub(crate) audience: Audience,
}

/// What a column's pass wrote for one [`StateRequest`], in the requests' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StateWritten {
    /// The entry, up to this length of the writer.
    Entry { end: u32 },
    /// Nothing: the entry holds a string longer than any reader accepts
    /// ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)).
    OverLimit,
    /// Nothing: the row is not the node's (a stale hint).
    Stale,
}

/// Makes the shadow column of one type: the registry entry's runtime part the server asks for.
pub(crate) type NewShadows = fn() -> Box<dyn ErasedShadows>;

/// The [`NewShadows`] of `T`.
pub(crate) fn new_shadows<T: Replicated>() -> Box<dyn ErasedShadows> {
    Box::new(ShadowColumn::<T> {
        rows: Vec::new(),
        aligned: Aligned::default(),
    })
}

/// One networked node's shadow state.
struct ShadowRow<T: Replicated> {
    node: NodeId,
    /// The store's hint for the node's value ([`Rows::get_hinted`](crate::store::Rows::get_hinted)).
    hint: u32,
    /// When the hint was last found valid ([`HintedRow::checked`]).
    checked: u64,
    /// The node's net id.
    tag: u32,
    state: T::State,
    last_changed: LastChanged,
}

impl<T: Replicated> HintedRow for ShadowRow<T> {
    fn node(&self) -> NodeId {
        self.node
    }

    fn hint(&mut self) -> &mut u32 {
        &mut self.hint
    }

    fn checked(&mut self) -> &mut u64 {
        &mut self.checked
    }
}

/// The shadow states of every networked node holding a `T` (see the [module docs](self)).
struct ShadowColumn<T: Replicated> {
    rows: Vec<ShadowRow<T>>,
    /// Whether the rows sit beside the storage's values ([`Aligned`]).
    aligned: Aligned,
}

/// The change ticks of a shadow state `S` of a `T`.
fn last_changed_of<S, T: Capture<S> + Replicated>(state: &S) -> LastChanged {
    let of = |audience| {
        let last = T::last_changed_for(state, audience);
        let gap = change_gap(last, T::changed_before(state, last, audience));
        (last, gap)
    };
    let others = of(Audience::NonOwner);
    // Without owner conditions the owner receives what others do.
    let owner = match T::OWNER_CONDITIONS {
        false => others,
        true => of(Audience::Owner),
    };
    LastChanged {
        last: [owner.0, others.0],
        gap: [owner.1, others.1],
    }
}

/// How far `before` is before `last` (0: no change before it), at most [`MAX_CHANGE_GAP`].
pub(crate) fn change_gap(last: u32, before: Option<u32>) -> u16 {
    before.map_or(0, |b| {
        u16::try_from(last.wrapping_sub(b)).unwrap_or(MAX_CHANGE_GAP)
    })
}

/// The indexes of the rows whose state, written for either audience, encodes a reference to
/// one of `renamed` (sorted).
fn rows_naming<T: Replicated>(rows: &[ShadowRow<T>], renamed: &[NodeId]) -> Vec<usize> {
    let (mut asked, mut w) = (Vec::new(), NetWriter::new());
    let mut hits = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        w.clear();
        refs::asked(&mut asked, || {
            T::write_full_for(&row.state, Audience::Owner, &mut w);
            T::write_full_for(&row.state, Audience::NonOwner, &mut w);
        });
        if asked.iter().any(|n| renamed.binary_search(n).is_ok()) {
            hits.push(index);
        }
    }
    hits
}

fn row_index(index: usize) -> u32 {
    u32::try_from(index).unwrap_or_else(|_| panic!("a column holds more than u32::MAX rows"))
}

/// A [`ShadowColumn`] without its type: what the server calls.
pub(crate) trait ErasedShadows: RuntimeColumn {
    /// Gives `node` a shadow state of its value in `store`, every member stamped `tick`, tagged
    /// `tag`: in `row` if given (the node's row already), else in a new row. Returns its change
    /// ticks and row; `None` if the store holds no `T` for the node.
    fn start(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        row: Option<u32>,
        tag: u32,
        tick: u32,
    ) -> Option<(LastChanged, u32)>;
    /// Asks for the lines of `row`.
    fn prefetch_row(&self, row: u32);
    /// Compares every row with its node's value in `store`, stamps changed members with
    /// `tick`, and appends each changed row to `changed` (`column`: this column's index).
    fn capture(
        &mut self,
        store: &mut dyn Store,
        tick: u32,
        column: u32,
        changed: &mut Vec<Changed>,
    );
    /// Gives every row whose state names one of `renamed` (sorted: a reference in it is
    /// encoded to one of them) a new shadow state of its value in `store`, every member
    /// stamped `tick`, and appends each to `changed`: its whole state goes out again. Runs
    /// in the runtime's reference scope. A type without node references has none.
    fn restamp_naming(
        &mut self,
        store: &mut dyn Store,
        tick: u32,
        column: u32,
        renamed: &[NodeId],
        changed: &mut Vec<Changed>,
    );
    /// Moves every change tick of `row`'s shadow state older than `floor` up to it
    /// ([`Capture::age`]). Returns its change ticks.
    fn age(&mut self, row: u32, floor: u32) -> Option<LastChanged>;
    /// A snapshot entry's state of `row` ([`Capture::write_since_for`]) if `row` is `node`'s;
    /// returns whether it was (a stale row writes nothing).
    fn write_since_for(
        &self,
        row: u32,
        node: NodeId,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) -> bool;
    /// The bit form of that state ([`Capture::write_bits_since_for`]) against `base`, into
    /// `coding`, if `row` is `node`'s: whether it can be sent (no member over a limit).
    fn write_bits_since_for(
        &self,
        at: (u32, NodeId),
        since: Option<u32>,
        audience: Audience,
        base: &[Buckets],
        coding: &mut Coding,
    ) -> Option<bool>;
    /// Writes the snapshot entries `requests` (framed with their tags) to `w` in one pass,
    /// and what came of each to `written`; `scratch` is for the framing.
    fn write_states(
        &self,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    );
    /// A spawn's full state of `row` ([`Capture::write_full_for`]).
    fn write_full_for(&self, row: u32, audience: Audience, w: &mut NetWriter);
    /// The bit form of that state coded from zero (no baseline: what
    /// [`state_bits::bytes_to_bits`] makes of it), appended to `coding`'s bits (its values
    /// are left as they were), with `scratch` for the byte form: whether it can be sent (no
    /// member over a limit); `None` if there is no such row.
    fn write_bits_full_for(
        &self,
        row: u32,
        audience: Audience,
        scratch: &mut NetWriter,
        coding: &mut Coding,
    ) -> Option<bool>;
}

impl<T: Replicated> RuntimeColumn for ShadowColumn<T> {
    fn swap_remove(&mut self, row: u32) -> Option<NodeId> {
        let row = row as usize;
        if row >= self.rows.len() {
            return None;
        }
        self.aligned.reset();
        self.rows.swap_remove(row);
        self.rows.get(row).map(|r| r.node)
    }

    fn clear(&mut self) {
        self.rows.clear();
        self.aligned.reset();
    }
}

impl<T: Replicated> ErasedShadows for ShadowColumn<T> {
    fn prefetch_row(&self, row: u32) {
        // The row's first line, and the line the next row starts in, which holds its end
        // (unless the row ends on a line's end, or spans more than two lines).
        crate::cache_hint::prefetch(&self.rows, row as usize);
        crate::cache_hint::prefetch(&self.rows, row as usize + 1);
    }

    fn start(
        &mut self,
        store: &mut dyn Store,
        node: NodeId,
        row: Option<u32>,
        tag: u32,
        tick: u32,
    ) -> Option<(LastChanged, u32)> {
        let (mut state, mut hint) = (None, 0);
        lend::<T>(store, &mut |values| {
            state = values
                .get_hinted(node, &mut hint)
                .map(|value| value.new_state(tick));
        });
        let state = state?;
        let last_changed = last_changed_of::<_, T>(&state);
        self.aligned.reset();
        let new = ShadowRow {
            node,
            hint,
            checked: 0,
            tag,
            state,
            last_changed,
        };
        let row = match row.and_then(|r| self.rows.get_mut(r as usize).map(|old| (r, old))) {
            Some((row, old)) => {
                *old = new;
                row
            }
            None => {
                self.rows.push(new);
                row_index(self.rows.len() - 1)
            }
        };
        Some((last_changed, row))
    }

    fn capture(
        &mut self,
        store: &mut dyn Store,
        tick: u32,
        column: u32,
        changed: &mut Vec<Changed>,
    ) {
        let (rows, aligned) = (&mut self.rows, &mut self.aligned);
        lend::<T>(store, &mut |values| {
            each_value(
                values,
                rows,
                aligned,
                |_| true,
                |index, row, value| {
                    if value.capture(&mut row.state, tick) {
                        row.last_changed = last_changed_of::<_, T>(&row.state);
                        changed.push(Changed {
                            tag: row.tag,
                            last_changed: row.last_changed,
                            at: ValueAt {
                                column,
                                row: row_index(index),
                            },
                        });
                    }
                },
            );
        });
    }

    fn restamp_naming(
        &mut self,
        store: &mut dyn Store,
        tick: u32,
        column: u32,
        renamed: &[NodeId],
        changed: &mut Vec<Changed>,
    ) {
        if !T::NODE_REFS {
            return;
        }
        for index in rows_naming::<T>(&self.rows, renamed) {
            let (node, tag) = (self.rows[index].node, self.rows[index].tag);
            let restarted = self.start(store, node, Some(row_index(index)), tag, tick);
            if let Some((last_changed, row)) = restarted {
                let at = ValueAt { column, row };
                changed.push(Changed {
                    tag,
                    last_changed,
                    at,
                });
            }
        }
    }

    fn age(&mut self, row: u32, floor: u32) -> Option<LastChanged> {
        let row = self.rows.get_mut(row as usize)?;
        T::age(&mut row.state, floor);
        row.last_changed = last_changed_of::<_, T>(&row.state);
        Some(row.last_changed)
    }

    #[inline]
    fn write_since_for(
        &self,
        row: u32,
        node: NodeId,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) -> bool {
        match self.rows.get(row as usize) {
            Some(r) if r.node == node => {
                T::write_since_for(&r.state, since, audience, w);
                true
            }
            _ => false,
        }
    }

    #[inline]
    fn write_bits_since_for(
        &self,
        (row, node): (u32, NodeId),
        since: Option<u32>,
        audience: Audience,
        base: &[Buckets],
        coding: &mut Coding,
    ) -> Option<bool> {
        let r = self.rows.get(row as usize).filter(|r| r.node == node)?;
        Some(coding.code_after(T::LAYOUT, base, |coder| {
            T::write_bits_since_for(&r.state, since, audience, coder);
        }))
    }

    fn write_states(
        &self,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    ) {
        for r in requests {
            let Some(row) = self.rows.get(r.row as usize).filter(|m| m.node == r.node) else {
                written.push(StateWritten::Stale);
                continue;
            };
            let start = w.len();
            w.write_tagged(r.tag, scratch, |w| {
                T::write_since_for(&row.state, r.since, r.audience, w);
            });
            written.push(match w.take_over_limit() {
                true => {
                    w.truncate(start);
                    StateWritten::OverLimit
                }
                false => StateWritten::Entry {
                    end: u32::try_from(w.len()).unwrap_or(u32::MAX),
                },
            });
        }
    }

    fn write_full_for(&self, row: u32, audience: Audience, w: &mut NetWriter) {
        if let Some(row) = self.rows.get(row as usize) {
            T::write_full_for(&row.state, audience, w);
        }
    }

    fn write_bits_full_for(
        &self,
        row: u32,
        audience: Audience,
        scratch: &mut NetWriter,
        coding: &mut Coding,
    ) -> Option<bool> {
        let row = self.rows.get(row as usize)?;
        scratch.clear();
        T::write_full_for(&row.state, audience, scratch);
        if scratch.take_over_limit() {
            return Some(false);
        }
        let mut r = NetReader::new(scratch.as_slice());
        let coded = state_bits::bytes_to_bits(T::LAYOUT, &mut r, &[], &mut coding.bits, &mut []);
        Some(coded.is_ok())
    }
}
