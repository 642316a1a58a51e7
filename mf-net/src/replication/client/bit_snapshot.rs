//! [`BitSnapshots`]: a client's reading of bit-packed snapshots
//! ([`SnapshotEncoding::Bits`](crate::replication::SnapshotEncoding::Bits)): each entry's state
//! decoded against the values its node had in the snapshot the entry names as its baseline,
//! back into the byte form, which the client then applies as it applies byte snapshots.
//!
//! The values each decoded entry gives are kept by the snapshot's tick ([`Baselines`]), as
//! later entries' baselines: a baseline tick names the node's values as of that tick, its
//! newest entry then or before. An entry whose baseline is not kept (the client never decoded
//! an entry of the node by that tick, or no longer holds it) is passed over and the snapshot
//! left unacknowledged: the server goes on sending what the client lacks against the baseline
//! it last knew acknowledged, and from zero once that one is too old.

use crate::codec::quantize::Buckets;
use crate::codec::state_bits::{self, StateLayout};
use crate::replicated::registry::{ReplicatedTypeId, ReplicationRegistry};
use crate::replication::client::baselines::Baselines;
use crate::replication::shared::protocol;
use crate::wire::{BitReader, DecodeError, NetReader, NetWriter, ProtocolViolation};

/// A replicated type as bit-packed entries name it: how its states travel, and its number in
/// the replication registry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StateType {
    pub(crate) layout: &'static StateLayout,
    pub(crate) number: u16,
}

/// What a client knows of a net id, as a bit-packed entry needs it.
pub(crate) enum Known {
    /// It does not have the node: the byte entry goes on (empty), for the byte reading to
    /// decide whether the snapshot can be acknowledged.
    Absent,
    /// It has the node, which holds no replicated state: the entry is passed over.
    Stateless,
    /// It has the node, whose value is of this type.
    State(StateType),
}

/// Finds the layout of the states of the type of a number, as [`layout_of_type`] does.
pub(crate) type Layouts = fn(u16) -> Option<&'static StateLayout>;

/// The layout of the states of the type numbered `number` in the replication registry, if it
/// has one: how a client passes over an entry of a node it does not have.
pub(crate) fn layout_of_type(number: u16) -> Option<&'static StateLayout> {
    let ty = ReplicatedTypeId::new(number)?;
    Some(ReplicationRegistry::global().get(ty)?.layout())
}

/// The error of an entry naming a type the client does not have, or not its node's.
const WRONG_TYPE: DecodeError = DecodeError::Protocol(ProtocolViolation::WrongType);

/// How a bit-packed body read: whether every entry had its baseline, and the error that cut
/// it short, if one did (the entries before it are in the byte form all the same).
pub(crate) struct Transcoded {
    pub(crate) complete: bool,
    pub(crate) broken: Option<DecodeError>,
}

/// A client's bit-packed snapshot reading (see the [module documentation](self)). Allocates
/// nothing once its buffers have grown.
#[derive(Default)]
pub(crate) struct BitSnapshots {
    history: Baselines,
    /// The byte form of the last body read: entries and the terminating 0.
    bytes: NetWriter,
    /// Scratch: one state's values; the entry framing.
    values: Vec<Buckets>,
    scratch: NetWriter,
}

impl BitSnapshots {
    /// The byte form of the last body [`transcode`](Self::transcode) read.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// Forgets every node.
    pub(crate) fn clear(&mut self) {
        self.history.clear();
    }

    /// How many ticks back a baseline may be (the server's tick rate's
    /// [`baseline_depth`](crate::replication::shared::protocol::baseline_depth)).
    pub(crate) fn set_depth(&mut self, depth: usize) {
        self.history.set_depth(depth);
    }

    /// Node `id`, whose states have `layout`, was spawned with `state` (its byte form, as of
    /// `tick`): the values it gives are the node's baseline from then on.
    pub(crate) fn spawned(&mut self, (id, tick): (u32, u32), layout: &StateLayout, state: &[u8]) {
        self.values.clear();
        self.values.resize(layout.slots(), Buckets::default());
        if state_bits::state_values(layout, &mut NetReader::new(state), &mut self.values).is_ok() {
            self.history.spawned(id, tick, &self.values);
        }
    }

    /// Forgets the nodes `ids` (despawned).
    pub(crate) fn forget(&mut self, ids: &[u32]) {
        self.history.forget(ids);
    }

    /// Reads the bit-packed body `body` (after the flags) of the snapshot of `tick` into its
    /// byte form ([`bytes`](Self::bytes)), `known` telling what the client has of each net id
    /// and `layouts` the layout of each type number (see [`layout_of_type`]), and keeps each
    /// decoded entry's values by `tick` (at most `nodes`, the client's node count).
    pub(crate) fn transcode(
        &mut self,
        (body, tick, nodes): (&[u8], u32, usize),
        known: impl Fn(u32) -> Known,
        layouts: Layouts,
    ) -> Transcoded {
        self.bytes.clear();
        let mut r = BitReader::new(body);
        let mut complete = true;
        self.history.begin(tick, nodes);
        let read = (tick, &known, layouts);
        let broken = self.entries(&mut r, read, &mut complete).err();
        self.history.end();
        let broken = broken.or_else(|| r.finish().err());
        self.bytes.write_var_u32(0);
        Transcoded { complete, broken }
    }

    /// Reads every entry of `r` (see [`transcode`](Self::transcode)). An entry of a node the
    /// client lacks, or against a baseline it does not hold, is passed over by its type's
    /// grammar; one naming another type than its node's breaks the body.
    fn entries(
        &mut self,
        r: &mut BitReader<'_>,
        (tick, known, layouts): (u32, &impl Fn(u32) -> Known, Layouts),
        complete: &mut bool,
    ) -> Result<(), DecodeError> {
        let default_back = r.read_gamma()?;
        let mut at = state_bits::BodyCursor::default();
        let pass_over =
            |r: &mut BitReader<'_>, ty| state_bits::skip_state(layouts(ty).ok_or(WRONG_TYPE)?, r);
        while let Some(entry) = state_bits::read_entry(r, &mut at, default_back)? {
            let id = entry.id;
            let layout = match known(id) {
                Known::State(ty) if ty.number == entry.ty => ty.layout,
                Known::State(_) => return Err(WRONG_TYPE),
                Known::Absent => {
                    protocol::write_entry(&mut self.bytes, id, &mut self.scratch, |_| {});
                    pass_over(r, entry.ty)?;
                    continue;
                }
                Known::Stateless => {
                    pass_over(r, entry.ty)?;
                    continue;
                }
            };
            let slots = layout.slots();
            let base = match entry.baseline_back {
                0 => &[][..],
                back => match self.history.find(tick.wrapping_sub(back), id, slots) {
                    Some(found) => found,
                    None => {
                        *complete = false;
                        state_bits::skip_state(layout, r)?;
                        continue;
                    }
                },
            };
            // Every slot is written by the decoding (read, or the baseline's): the last entry's
            // values are not cleared first. (Resized only when the length changes: a length
            // just written and read back with the pointer stalls the read.)
            if self.values.len() != slots {
                self.values.resize(slots, Buckets::default());
            }
            // Straight into the byte form, taken back if it does not read.
            let (mark, values) = (self.bytes.len(), &mut self.values);
            let mut read = Ok(());
            protocol::write_entry(&mut self.bytes, id, &mut self.scratch, |w| {
                read = state_bits::bits_to_bytes(layout, r, base, w, values);
            });
            if let Err(error) = read {
                self.bytes.truncate(mark);
                return Err(error);
            }
            self.history.push(id, &self.values);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{BitSnapshots, Known, StateType};
    use crate::codec::quantize::{Buckets, Quantization};
    use crate::codec::state_bits::StateLayout;
    use crate::codec::state_bits::{
        bytes_to_bits, end_entries, write_entry, BodyCursor, MemberBits,
    };
    use crate::codec::NetCodec;
    use crate::replication::shared::protocol;
    use crate::wire::{BitWriter, NetReader, NetWriter};

    static LAYOUT: StateLayout = StateLayout {
        bases: &[],
        members: &[
            MemberBits::Quantized {
                q: Quantization::new(-512.0, 512.0, 16),
                components: 3,
            },
            MemberBits::Int { bytes: 4 },
        ],
    };

    /// A state's byte form: both members, the position's indexes `x` each, the integer `hp`.
    fn state(x: u16, hp: i32) -> Vec<u8> {
        let mut w = NetWriter::new();
        w.write_var_u64(0b11);
        for _ in 0..3 {
            w.write_u16(x);
        }
        w.write_i32(hp);
        w.into_vec()
    }

    /// [`LAYOUT`]'s type number in these tests.
    const TYPE: u16 = 3;

    /// A body of one entry of node 7: `bytes` coded against `base`, `back` ticks back (the
    /// default).
    fn body(bytes: &[u8], base: &[Buckets], back: u32) -> Vec<u8> {
        body_of(&[(7, TYPE, bytes)], base, back)
    }

    /// A body of an entry of each node `(id, type number, state)` of `entries`, every state
    /// coded against `base`, `back` ticks back (the default).
    fn body_of(entries: &[(u32, u16, &[u8])], base: &[Buckets], back: u32) -> Vec<u8> {
        let mut w = BitWriter::new();
        w.write_gamma(back);
        let mut at = BodyCursor::default();
        for &(id, ty, bytes) in entries {
            let mut coded = BitWriter::new();
            let mut r = NetReader::new(bytes);
            bytes_to_bits(&LAYOUT, &mut r, base, &mut coded, &mut []).unwrap();
            write_entry(&mut w, &mut at, (id, ty), back, back, &coded);
        }
        end_entries(&mut w);
        w.finish().to_vec()
    }

    /// The byte form of one entry of node 7 with `state`, terminated.
    fn expected(state: &[u8]) -> Vec<u8> {
        let mut w = NetWriter::new();
        let mut scratch = NetWriter::new();
        protocol::write_entry(&mut w, 7, &mut scratch, |w| w.write_bytes(state));
        w.write_var_u32(0);
        w.into_vec()
    }

    fn known(_: u32) -> Known {
        Known::State(StateType {
            layout: &LAYOUT,
            number: TYPE,
        })
    }

    fn layouts(number: u16) -> Option<&'static StateLayout> {
        match number {
            TYPE => Some(&LAYOUT),
            OTHER_TYPE => Some(&OTHER),
            _ => None,
        }
    }

    /// A second type: two unquantized floats, a `bool`, a string and an `i64`.
    static OTHER: StateLayout = StateLayout {
        bases: &[],
        members: &[
            MemberBits::Floats { components: 2 },
            MemberBits::Bool,
            MemberBits::Bytes { skip: skip_string },
            MemberBits::Int { bytes: 8 },
        ],
    };

    /// [`OTHER`]'s type number in these tests.
    const OTHER_TYPE: u16 = 9;

    fn skip_string(r: &mut NetReader<'_>) -> Result<(), crate::wire::DecodeError> {
        String::decode(r).map(drop)
    }

    /// A random state of either type: which one, its mask (members past the type's last
    /// ignored), and values.
    #[derive(Debug, Clone)]
    struct AnyState {
        other: bool,
        mask: u64,
        x: u16,
        hp: i32,
        floats: [f32; 2],
        alive: bool,
        name: String,
        big: i64,
    }

    impl AnyState {
        fn ty(&self) -> (u16, &'static StateLayout) {
            match self.other {
                false => (TYPE, &LAYOUT),
                true => (OTHER_TYPE, &OTHER),
            }
        }

        /// Its byte form.
        fn bytes(&self) -> Vec<u8> {
            let mut w = NetWriter::new();
            let carried = |i: u32| self.mask >> i & 1 == 1;
            if !self.other {
                w.write_var_u64(self.mask & 0b11);
                if carried(0) {
                    for _ in 0..3 {
                        w.write_u16(self.x);
                    }
                }
                if carried(1) {
                    w.write_i32(self.hp);
                }
                return w.into_vec();
            }
            w.write_var_u64(self.mask & 0b1111);
            if carried(0) {
                self.floats.iter().for_each(|&f| w.write_f32(f));
            }
            if carried(1) {
                w.write_bool(self.alive);
            }
            if carried(2) {
                self.name.encode(&mut w);
            }
            if carried(3) {
                w.write_i64(self.big);
            }
            w.into_vec()
        }
    }

    fn any_state() -> impl Strategy<Value = AnyState> {
        let values = (any::<u16>(), any::<i32>(), any::<[f32; 2]>(), any::<bool>());
        (
            any::<bool>(),
            any::<u64>(),
            values,
            "[a-z]{0,8}",
            any::<i64>(),
        )
            .prop_map(
                |(other, mask, (x, hp, floats, alive), name, big)| AnyState {
                    other,
                    mask,
                    x,
                    hp,
                    floats,
                    alive,
                    name,
                    big,
                },
            )
    }

    #[test]
    fn an_entry_reads_against_the_values_of_the_tick_it_names_and_not_without_them() {
        let mut client = BitSnapshots::default();
        let first = state(1000, 100);
        let read = client.transcode((&body(&first, &[], 0), 10, 10), known, layouts);
        assert!(read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), expected(&first));
        // Coded against tick 10's values, 3 ticks later.
        let mut base = [Buckets::default(); 2];
        crate::codec::state_bits::state_values(&LAYOUT, &mut NetReader::new(&first), &mut base)
            .unwrap();
        let second = state(1003, 99);
        let read = client.transcode((&body(&second, &base, 3), 13, 10), known, layouts);
        assert!(read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), expected(&second));
        // A tick it decoded no entry of the node by (tick 9): passed over, the snapshot
        // incomplete.
        let read = client.transcode((&body(&second, &base, 5), 14, 10), known, layouts);
        assert!(!read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), [0]);
        // A tick whose snapshot did not carry it (tick 11): its values then are tick 10's.
        let read = client.transcode((&body(&second, &base, 3), 14, 10), known, layouts);
        assert!(read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), expected(&second));
        // Tick 13's own entry is a baseline once its snapshot is read: 2 ticks later.
        let mut now = [Buckets::default(); 2];
        crate::codec::state_bits::state_values(&LAYOUT, &mut NetReader::new(&second), &mut now)
            .unwrap();
        let third = state(1004, 99);
        let read = client.transcode((&body(&third, &now, 2), 15, 10), known, layouts);
        assert!(read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), expected(&third));
    }

    #[test]
    fn a_node_the_client_lacks_goes_on_empty_and_a_stateless_one_is_passed_over() {
        let mut client = BitSnapshots::default();
        let bytes = body(&state(5, 5), &[], 0);
        let read = client.transcode((&bytes, 1, 10), |_| Known::Absent, layouts);
        assert!(read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), expected(&[]));
        let read = client.transcode((&bytes, 2, 10), |_| Known::Stateless, layouts);
        assert!(read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), [0]);
    }

    #[test]
    fn an_entry_the_client_cannot_use_is_passed_over_by_its_types_grammar() {
        let (lacked, next) = (state(5, 5), state(9, 1));
        let entries = [(7, TYPE, &lacked[..]), (8, TYPE, &next[..])];
        // Node 7 is not here yet (its spawn in flight): an empty byte entry, then node 8's.
        let mut client = BitSnapshots::default();
        let present = |id| match id {
            7 => Known::Absent,
            _ => known(id),
        };
        let read = client.transcode((&body_of(&entries, &[], 0), 1, 10), present, layouts);
        assert!(read.complete && read.broken.is_none());
        let mut expected = NetWriter::new();
        let mut scratch = NetWriter::new();
        protocol::write_entry(&mut expected, 7, &mut scratch, |_| {});
        protocol::write_entry(&mut expected, 8, &mut scratch, |w| w.write_bytes(&next));
        expected.write_var_u32(0);
        assert_eq!(client.bytes(), expected.as_slice());
        // Against a baseline the client does not hold: passed over, the snapshot incomplete.
        let read = client.transcode((&body_of(&entries, &[], 5), 2, 10), known, layouts);
        assert!(!read.complete && read.broken.is_none());
        assert_eq!(client.bytes(), [0]);
        // Another type than the node's, or a type the client does not have: the body breaks.
        let wrong = crate::wire::DecodeError::Protocol(crate::wire::ProtocolViolation::WrongType);
        let other = [(7, TYPE + 1, &lacked[..])];
        let read = client.transcode((&body_of(&other, &[], 0), 3, 10), known, layouts);
        assert_eq!(read.broken, Some(wrong));
        let read = client.transcode(
            (&body_of(&other, &[], 0), 4, 10),
            |_| Known::Absent,
            layouts,
        );
        assert_eq!(read.broken, Some(wrong));
    }

    proptest! {
        /// Entries of two types, each from zero, some of nodes the client lacks: those go on
        /// empty, passed over by their type's grammar, and every other reads back exactly.
        #[test]
        fn entries_of_nodes_the_client_lacks_are_passed_over_whatever_their_type(
            entries in proptest::collection::vec((any::<bool>(), any_state()), 1..12),
        ) {
            let mut w = BitWriter::new();
            w.write_gamma(0);
            let (mut expected, mut scratch) = (NetWriter::new(), NetWriter::new());
            let mut at = BodyCursor::default();
            for (id, (present, state)) in (1u32..).zip(&entries) {
                let (ty, layout) = state.ty();
                let bytes = state.bytes();
                let mut coded = BitWriter::new();
                bytes_to_bits(layout, &mut NetReader::new(&bytes), &[], &mut coded, &mut [])
                    .unwrap();
                write_entry(&mut w, &mut at, (id, ty), 0, 0, &coded);
                protocol::write_entry(&mut expected, id, &mut scratch, |w| {
                    if *present {
                        w.write_bytes(&bytes);
                    }
                });
            }
            end_entries(&mut w);
            expected.write_var_u32(0);
            let known = |id: u32| {
                let (present, state) = &entries[id as usize - 1];
                let (number, layout) = state.ty();
                match present {
                    true => Known::State(StateType { layout, number }),
                    false => Known::Absent,
                }
            };
            let mut client = BitSnapshots::default();
            let read = client.transcode((w.finish(), 1, 16), known, layouts);
            prop_assert!(read.complete);
            prop_assert_eq!(read.broken, None);
            prop_assert_eq!(client.bytes(), expected.as_slice());
        }

        #[test]
        fn arbitrary_bodies_never_panic_and_always_end_the_byte_form(
            bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 1..8),
        ) {
            let mut client = BitSnapshots::default();
            for (tick, body) in (1u32..).zip(&bodies) {
                let _ = client.transcode((body, tick, 10), known, layouts);
                prop_assert_eq!(client.bytes().last(), Some(&0));
            }
        }
    }
}
