//! Snapshot entries encoded once per tick and copied into every client's packet.
//!
//! An entry's bytes (net id, length, the state's members changed since a tick) depend only on
//! the node, the `since` it is written with (`None`: everything, for a resync) and the audience
//! (owner or not) at this tick, not on the client. Snapshots ask with the `since` of the
//! client's class ([`NetNode::since_class`]): clients that acknowledged any tick after the same
//! change get the same bytes. [`EntryCache`] encodes each distinct entry once, ahead of the
//! snapshots in one pass per type ([`EncodeBatch`]) or the first time a snapshot asks for it,
//! and lends the bytes to every later one, until the next tick.

use std::mem::take;
use std::ops::Range;

use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{NetNode, NodeKey};
use crate::replication::server::shadow_column::{StateRequest, StateWritten};
use crate::replication::server::slot_records::SlotRecords;
use crate::replication::shared::by_column::ByColumn;
use crate::replication::shared::protocol;
use crate::replication::Audience;
use crate::wire::NetWriter;

/// One entry encoded this tick.
#[derive(Debug, Clone, Copy, Default)]
struct Record {
    since: Option<u32>,
    audience: Audience,
    /// Its bytes in [`EntryCache::bytes`].
    start: u32,
    end: u32,
}

/// The entries encoded this tick, shared by every client's snapshot (see the
/// [module documentation](self)). Allocates nothing once its buffers have grown.
pub(crate) struct EntryCache {
    /// This tick's entries, by node slot.
    records: SlotRecords<Record>,
    /// Every record's bytes, back to back.
    bytes: NetWriter,
    /// Makes room for the length of states of 128 bytes or more.
    scratch: NetWriter,
    /// Whether this tick's entries are shared (more than one client gets a snapshot); when
    /// not, entries are written straight into the one packet, with no copy.
    sharing: bool,
    /// How many entries were written straight into a packet this tick.
    direct: usize,
    /// Nodes whose entry was refused since the last [`take_refused`](Self::take_refused) (see
    /// [`refuse`](Self::refuse)).
    refused: Vec<NodeKey>,
    /// An [`EncodeBatch`]'s entries, each with its column; then by column, and what came of
    /// each.
    requests: Vec<(u32, (NodeKey, StateRequest))>,
    sort: ByColumn,
    by_column: Vec<(NodeKey, StateRequest)>,
    run: Vec<StateRequest>,
    written: Vec<StateWritten>,
}

impl Default for EntryCache {
    fn default() -> Self {
        Self {
            records: SlotRecords::default(),
            bytes: NetWriter::with_capacity(1024),
            scratch: NetWriter::with_capacity(256),
            sharing: true,
            direct: 0,
            refused: Vec::new(),
            requests: Vec::new(),
            sort: ByColumn::default(),
            by_column: Vec::new(),
            run: Vec::new(),
            written: Vec::new(),
        }
    }
}

impl EntryCache {
    /// A new tick (after capture): forgets every entry, and makes room for `slots` node slots.
    /// With `sharing` false (one client gets a snapshot this tick) nothing is cached: see
    /// [`write_direct`](Self::write_direct).
    pub(crate) fn begin(&mut self, slots: usize, sharing: bool) {
        self.sharing = sharing;
        self.records.begin(slots);
        self.bytes.clear();
        self.direct = 0;
    }

    /// A batch of entries to encode ahead, one pass per column (see [`EncodeBatch`]).
    pub(crate) fn batch(&mut self) -> EncodeBatch<'_> {
        self.requests.clear();
        EncodeBatch { cache: self }
    }

    /// Whether this tick's entries are shared (see [`begin`](Self::begin)): snapshots then
    /// take them from [`range`](Self::range), else write them with
    /// [`write_direct`](Self::write_direct).
    #[inline]
    pub(crate) fn sharing(&self) -> bool {
        self.sharing
    }

    /// Where the snapshot entry of the node `key` written with `since` for `audience` (net id,
    /// length, then the state `state` appends) lies in the cache's [`bytes`](Self::bytes):
    /// encoded on the first request this tick, found on every later one.
    #[inline]
    pub(crate) fn range(
        &mut self,
        key: NodeKey,
        since: Option<u32>,
        audience: Audience,
        state: impl FnOnce(&mut NetWriter),
    ) -> Range<usize> {
        let record = match self.find(key, since, audience) {
            Some(r) => r,
            None => {
                let start = self.bytes.len();
                protocol::write_entry(&mut self.bytes, key.id(), &mut self.scratch, state);
                if self.bytes.take_over_limit() {
                    // No client could read it: cached as empty, never sent.
                    self.bytes.truncate(start);
                }
                let end = self.bytes.len();
                self.record(key, since, audience, start, end)
            }
        };
        record.start as usize..record.end as usize
    }

    /// The cached bytes in `range` (from [`range`](Self::range)).
    #[inline]
    pub(crate) fn bytes(&self, range: Range<usize>) -> &[u8] {
        &self.bytes.as_slice()[range]
    }

    /// Appends the snapshot entry of the node `key` (the state `state` appends) straight to
    /// `w`, caching nothing: for a tick whose entries are not shared. Returns `false`, with
    /// `w` as it was, for an entry no client could read (see [`range`](Self::range)).
    #[inline]
    pub(crate) fn write_direct(
        &mut self,
        w: &mut NetWriter,
        key: NodeKey,
        state: impl FnOnce(&mut NetWriter),
    ) -> bool {
        let start = w.len();
        protocol::write_entry(w, key.id(), &mut self.scratch, state);
        if w.take_over_limit() {
            w.truncate(start);
            return false;
        }
        self.direct += 1;
        true
    }

    /// Records that the entry of `node` (the node `key`) was refused: it holds a string
    /// longer than any client accepts ([`MAX_STRING_BYTES`](crate::wire::MAX_STRING_BYTES)),
    /// so it is not sent. Reported once until an entry of the node goes out again
    /// ([`accept`](Self::accept)).
    #[inline]
    pub(crate) fn refuse(&mut self, node: &NetNode, key: NodeKey) {
        if !node.over_limit.replace(true) {
            self.refused.push(key);
        }
    }

    /// An entry of `node` went out: a later refusal is reported again.
    #[inline]
    pub(crate) fn accept(node: &NetNode) {
        // A read, not a write, on the common path: the flag is almost never set.
        if node.over_limit.get() {
            node.over_limit.set(false);
        }
    }

    /// The nodes refused since the last call, each once (see [`refuse`](Self::refuse)).
    pub(crate) fn take_refused(&mut self) -> std::vec::Drain<'_, NodeKey> {
        self.refused.drain(..)
    }

    /// The record of `key` written with `since` for `audience` this tick.
    #[inline]
    fn find(&self, key: NodeKey, since: Option<u32>, audience: Audience) -> Option<Record> {
        self.records
            .find(key, |r| r.since == since && r.audience == audience)
    }

    /// Records the entry encoded at `start..end` as the newest of `key`'s slot, and returns
    /// it.
    fn record(
        &mut self,
        key: NodeKey,
        since: Option<u32>,
        audience: Audience,
        start: usize,
        end: usize,
    ) -> Record {
        let record = Record {
            since,
            audience,
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end).unwrap_or(u32::MAX),
        };
        self.records.push(key, record);
        record
    }

    /// How many entries were encoded this tick.
    pub(crate) fn encoded(&self) -> usize {
        self.records.len() + self.direct
    }
}

/// Entries encoded ahead of the snapshots that carry them: collected with
/// [`push`](Self::push), then [written](Self::write) one pass per column, each found by
/// [`EntryCache::range`] like an entry encoded on request.
pub(crate) struct EncodeBatch<'a> {
    cache: &'a mut EntryCache,
}

impl EncodeBatch<'_> {
    /// Adds the entry of `node` (the node `key`) written with `since` for `audience`, unless
    /// it is encoded already.
    #[inline]
    pub(crate) fn push(
        &mut self,
        key: NodeKey,
        node: &NetNode,
        since: Option<u32>,
        audience: Audience,
    ) {
        if self.cache.find(key, since, audience).is_some() {
            return;
        }
        let request = StateRequest {
            row: node.value_at.row,
            node: node.node,
            tag: key.id(),
            since,
            audience,
        };
        self.cache
            .requests
            .push((node.value_at.column, (key, request)));
    }

    /// How many entries wait to be written.
    pub(crate) fn len(&self) -> usize {
        self.cache.requests.len()
    }

    /// The bytes encoded this tick so far.
    pub(crate) fn bytes(&self) -> usize {
        self.cache.bytes.len()
    }

    /// Encodes the entries pushed since the last call, one pass per column of `states`, and
    /// records each. An entry whose row was stale is left out (encoded on request, found
    /// anew); one over the string limit is recorded as empty (see [`EntryCache::range`]).
    pub(crate) fn write(&mut self, states: &impl NodeStates) {
        let cache = &mut *self.cache;
        // Taken out while the records are written (and put back: no allocation).
        let (mut sort, mut by_column) = (take(&mut cache.sort), take(&mut cache.by_column));
        sort.sort(
            &cache.requests,
            states.column_count(),
            &mut by_column,
            |_| {},
        );
        for (column, run) in sort.runs() {
            let keys = &by_column[run];
            cache.run.clear();
            cache.run.extend(keys.iter().map(|&(_, r)| r));
            cache.written.clear();
            let start = cache.bytes.len();
            let (w, scratch) = (&mut cache.bytes, &mut cache.scratch);
            states.write_states(column, &cache.run, w, scratch, &mut cache.written);
            let mut at = start;
            for (i, &(key, r)) in keys.iter().enumerate() {
                let end = match cache.written.get(i) {
                    Some(&StateWritten::Entry { end }) => end as usize,
                    Some(StateWritten::OverLimit) => at,
                    Some(StateWritten::Stale) | None => continue,
                };
                cache.record(key, r.since, r.audience, at, end);
                at = end;
            }
        }
        (cache.sort, cache.by_column) = (sort, by_column);
        cache.requests.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::EntryCache;
    use crate::replication::server::node_table::{NodeKey, NodeTable};
    use crate::replication::server::test_support::{node, FakeState};
    use crate::replication::Audience;
    use crate::transport::PeerId;
    use crate::wire::NetWriter;

    /// What a snapshot wrote for an entry before entries were shared: written straight into
    /// the packet after what it holds already.
    fn per_client(
        table: &NodeTable,
        states: &HashMap<u32, FakeState>,
        key: NodeKey,
        since: Option<u32>,
        audience: Audience,
    ) -> Vec<u8> {
        let node = table.get(key).unwrap();
        let state = &states[&node.net_id];
        let mut w = NetWriter::with_capacity(16);
        w.write_bytes(b"header");
        let entry_at = w.len();
        w.write_var_u32(node.net_id);
        let len_at = w.len();
        w.write_u8(0);
        state.write_since_for(since, audience, &mut w);
        let len = w.len() - len_at - 1;
        let mut scratch = NetWriter::with_capacity(0);
        if len < 0x80 {
            w.patch(len_at, &[len as u8]);
        } else {
            scratch.write_bytes(&w.as_slice()[len_at + 1..]);
            w.truncate(len_at);
            w.write_len(len);
            w.write_bytes(scratch.as_slice());
        }
        w.as_slice()[entry_at..].to_vec()
    }

    #[test]
    fn an_entry_encoded_once_is_the_bytes_each_client_would_have_written() {
        let mut table = NodeTable::default();
        let mut states = HashMap::new();
        // Small and large (3 × 60 bytes: a 2-byte length) states, with and without owner
        // conditions, net ids of one and two varint bytes.
        let keys: Vec<NodeKey> = [
            (5, 1, false),
            (6, 60, true),
            (300, 60, false),
            (301, 2, true),
        ]
        .into_iter()
        .map(|(id, len, conditional)| {
            states.insert(id, FakeState::new(&[3, 7, 9], len, conditional));
            table.push(id, node(id, None, PeerId(2)))
        })
        .collect();
        let mut cache = EntryCache::default();
        cache.begin(table.slot_count(), true);
        let variants = [
            (Some(0), Audience::Owner),
            (Some(0), Audience::NonOwner),
            (Some(7), Audience::NonOwner),
            (None, Audience::Owner),
            (None, Audience::NonOwner),
        ];
        // Three "clients" asking in turn: the first encodes, the others copy.
        for client in 0..3 {
            for &key in &keys {
                for (since, audience) in variants {
                    let expected = per_client(&table, &states, key, since, audience);
                    let state = &states[&key.id()];
                    let got = cache.range(key, since, audience, |w| {
                        state.write_since_for(since, audience, w);
                    });
                    assert_eq!(
                        cache.bytes(got),
                        expected,
                        "client {client}, {key:?}, {since:?}"
                    );
                }
            }
        }
        assert_eq!(cache.encoded(), keys.len() * variants.len());
        // The large state's length took two bytes.
        assert_eq!(
            per_client(&table, &states, keys[2], None, Audience::Owner)[2..4],
            [0xb5, 0x01]
        );
    }

    #[test]
    fn a_new_tick_forgets_the_entries_and_a_reused_slot_gets_its_own() {
        let mut table = NodeTable::default();
        let mut states = HashMap::new();
        states.insert(1, FakeState::new(&[3], 4, false));
        states.insert(2, FakeState::new(&[5], 9, false));
        let a = table.push(1, node(1, None, PeerId(2)));
        let mut cache = EntryCache::default();
        cache.begin(table.slot_count(), true);
        let write = |id: u32| {
            let state = &states[&id];
            move |w: &mut NetWriter| state.write_since_for(Some(0), Audience::Owner, w)
        };
        let first = cache.range(a, Some(0), Audience::Owner, write(1));
        let first = cache.bytes(first).to_vec();
        // Next tick: the node's slot now holds another node, whose entry is its own.
        table.retain(|_, _| false);
        let b = table.push(2, node(2, None, PeerId(2)));
        assert_eq!(b.slot(), a.slot());
        cache.begin(table.slot_count(), true);
        let second = cache.range(b, Some(0), Audience::Owner, write(2));
        let second = cache.bytes(second).to_vec();
        assert_ne!(first, second);
        assert_eq!(
            second,
            per_client(&table, &states, b, Some(0), Audience::Owner)
        );
        assert_eq!(cache.encoded(), 1);
    }
}
