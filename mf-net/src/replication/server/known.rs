//! [`Known`]: where one client stands with each node it has ([`NodeSend`]), kept dense and in
//! net id order, so that the walks over a client's nodes (its refresh, snapshot and acks, all
//! in net id order) read one small array front to back instead of one cache line per node of a
//! per-slot table as large as the world. The walks search a second array of the net ids alone
//! (sixteen to a cache line), a block at a time, and read an entry only where they stop.
//!
//! Nodes the client gains between two walks wait in a short sorted list and nodes it loses are
//! marked; [`settle`](Known::settle) merges both into the array in one pass, once per tick.
//!
//! An acknowledged snapshot that carried every node with state the client had, or every node
//! it had something to send, is not marked node by node: the list keeps its tick
//! ([`acknowledge_all`](Known::acknowledge_all)) and every entry is read through it
//! ([`NodeSend::with_all_acked`]), so that a client whose snapshots carry all they owe costs
//! no walk over its nodes per ack. (Nodes without state, which no snapshot carries and no
//! entry is written for, are read through it too: their ticks only bound what the sweep
//! ages.) A bit per entry tells the entries that read as that tick alone (live, owing no
//! resync, acknowledged no later) from the others, so that a walk finds most of the nodes it
//! asks for in the id array and its bits, without a read of their entries, which are spread
//! over many more cache lines.

use crate::replication::server::alike::Alike;
use crate::replication::server::node_table::NodeKey;
use crate::replication::shared::sorted_ids::first_from;
use crate::tick::{tick_after, tick_max};

/// One node as one client stands with it: eight bytes, so that an entry of [`Known`] (with its
/// key) takes a quarter of a cache line and, in an array the allocator aligns to 16 bytes (as
/// the system's does), never straddles two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NodeSend {
    /// The newest tick of an acknowledged snapshot that carried it (or from which the client
    /// has its state otherwise: its join, the group's spawn).
    pub(crate) acked: u32,
    /// The resync owed, if any (see [`resync`](Self::resync)): its tick, or [`NO_RESYNC`].
    resync: u32,
}

/// [`NodeSend::resync`] stored: none owed. (A resync after this very tick is stored as owed
/// after the next one, which completes it one snapshot later at most, once in 2³² ticks.)
const NO_RESYNC: u32 = u32::MAX;

impl Default for NodeSend {
    /// Acknowledged at tick 0, owing no resync.
    fn default() -> Self {
        NodeSend::new(0, None)
    }
}

impl NodeSend {
    /// A node acknowledged up to `acked`, owing `resync`.
    #[inline]
    pub(crate) fn new(acked: u32, resync: Option<u32>) -> Self {
        let mut n = NodeSend {
            acked,
            resync: NO_RESYNC,
        };
        n.set_resync(resync);
        n
    }

    /// A resync owed (its next entries carry everything the client receives): its authority
    /// moved to or from this client, so members of another owner condition became visible to
    /// it, or its group, dormant, came back without a spawn.
    /// Completed by an ack of a snapshot after this tick that carried it.
    #[inline(always)]
    pub(crate) fn resync(&self) -> Option<u32> {
        (self.resync != NO_RESYNC).then_some(self.resync)
    }

    /// Sets the resync owed (see [`resync`](Self::resync)).
    #[inline(always)]
    pub(crate) fn set_resync(&mut self, resync: Option<u32>) {
        self.resync = match resync {
            None => NO_RESYNC,
            Some(NO_RESYNC) => NO_RESYNC.wrapping_add(1),
            Some(after) => after,
        };
    }

    /// The state as it stands once the snapshot of tick `all` (which carried this node) is
    /// acknowledged: acknowledged up to `all` at least, and a resync asked for before `all`
    /// done.
    #[inline(always)]
    pub(crate) fn with_all_acked(self, all: Option<u32>) -> NodeSend {
        let Some(all) = all else {
            return self;
        };
        let done = self.resync != NO_RESYNC && tick_after(all, self.resync);
        NodeSend {
            acked: tick_max(self.acked, all),
            resync: if done { NO_RESYNC } else { self.resync },
        }
    }

    /// The `since` its next entry is written with: `None` (everything) while a resync is owed.
    #[inline]
    pub(crate) fn since(&self) -> Option<u32> {
        match self.resync() {
            Some(_) => None,
            None => Some(self.acked),
        }
    }
}

/// The per-node send state of one client's nodes (see the [module documentation](self)).
#[derive(Default)]
pub(crate) struct Known {
    /// By net id, each id once. An entry of a node the client lost keeps its id under a key
    /// no record has ([`lost_key`]): it answers to no key, and goes at the next
    /// [`settle`](Self::settle).
    sorted: Vec<(NodeKey, NodeSend)>,
    /// The net id of each entry of `sorted`, in the same order: what searches read.
    ids: Vec<u32>,
    /// Entries added since the last settle, by net id (none of their ids is live in `sorted`).
    arrived: Vec<(NodeKey, NodeSend)>,
    /// How many entries of `sorted` are lost.
    lost: usize,
    /// The net ids of the nodes the client has that have no state (fixed at their spawn: no
    /// snapshot carries them), sorted; mostly none.
    stateless: Vec<u32>,
    /// The other buffer of `sorted`'s rebuild (its capacity is kept).
    spare: Vec<(NodeKey, NodeSend)>,
    /// The other buffer of `ids`'s rebuild.
    spare_ids: Vec<u32>,
    /// The newest tick of an acknowledged snapshot that carried every node with state the
    /// client had when it was written: each entry stands as [`NodeSend::with_all_acked`] of it says. (A node
    /// added since has an acknowledged tick of its own from its spawn on, the server's tick
    /// then, which is not before it.)
    all_acked: Option<u32>,
    /// The entries as stored: their changes, and the copy they were last found equal to.
    alike: Alike,
    /// A bit per entry of `sorted` (by place) that may not read as `all_acked` alone (see
    /// [`plain`](Self::plain)): a clear bit says the entry is live, owes no resync and was
    /// acknowledged no later than `all_acked`, which is set.
    apart: Vec<u64>,
    /// Entries of `sorted` (place, acknowledged tick) set apart only for being acknowledged
    /// after `all_acked` (nodes the client got since): each joins the others once `all_acked`
    /// reaches its tick, if nothing else set it apart since.
    later: Vec<(u32, u32)>,
    /// No tick stored in a live entry (acknowledged, resync) is before it (`None`: none
    /// stored): the server's sweep asks a client about a node only once a floor passed it.
    oldest: Option<u32>,
    /// A floor passed `oldest` once: from then on (a client kept 2³⁰ ticks) the sweep asks
    /// about every node, as `oldest` itself may grow too old to compare.
    outlived: bool,
    /// Changes whenever entries of `sorted` move (a settle, a fill, a clear): a place in it
    /// found before ([`seek_placed`](Known::seek_placed)) names the same entry while this
    /// stays as it was.
    layout: u32,
}

/// How many lines of ids [`Known::prefetch_ids`] asks for at most: about as many reads as a
/// core keeps in flight.
const PREFETCHED_ID_LINES: usize = 32;

/// The place [`Known::seek_placed`] gives a node that arrived since the last settle (not in
/// the array yet).
pub(crate) const NOT_PLACED: u32 = u32::MAX;

/// What two clients' snapshots depend on of their [`Known`] lists (see
/// [`Known::standing`]): the same for two clients that stand alike with every node.
#[derive(Clone, Copy)]
pub(crate) struct Standing<'a> {
    /// Every entry, as stored.
    pub(crate) entries: &'a [(NodeKey, NodeSend)],
    /// The tick of the last acknowledged snapshot that carried them all.
    pub(crate) all_acked: Option<u32>,
    /// The entries' memory of a copy they equal.
    pub(crate) alike: &'a Alike,
}

/// How many arrivals wait before a [`set`](Known::set) settles them, for a client that has
/// `nodes` nodes: at least 64, an eighth of its nodes on a client that has many, so that an
/// evaluation adding hundreds of nodes does not shift a long list for each.
fn arrivals_before_settling(nodes: usize) -> usize {
    (nodes / 8).max(64)
}

impl Known {
    /// Every node, in net id order, as stored, and what they are read through, if none arrived
    /// since the last settle (lost ones under their lost keys): two clients whose standings
    /// are equal stand alike with every node.
    pub(crate) fn standing(&self) -> Option<Standing<'_>> {
        self.arrived.is_empty().then_some(Standing {
            entries: self.sorted.as_slice(),
            all_acked: self.all_acked,
            alike: &self.alike,
        })
    }

    /// Forgets every node (keeps the capacity).
    pub(crate) fn clear(&mut self) {
        self.alike.changed();
        self.moved();
        self.oldest = None;
        self.outlived = false;
        self.sorted.clear();
        self.ids.clear();
        self.arrived.clear();
        self.lost = 0;
        self.stateless.clear();
        self.all_acked = None;
        self.apart.clear();
        self.later.clear();
    }

    /// A snapshot of `tick` that carried every node with state the client had when it was
    /// written (or every node it had something to send, none owing a resync: each of the
    /// others stands as it did at `tick`) is acknowledged: each node is acknowledged up to
    /// `tick`, and each resync asked for before `tick` is done. Costs nothing per node but for
    /// the nodes the client got after the last such tick, which it reads apart until then.
    pub(crate) fn acknowledge_all(&mut self, tick: u32) {
        let all = self.all_acked.map_or(tick, |t| tick_max(t, tick));
        self.all_acked = Some(all);
        if self.later.is_empty() {
            return;
        }
        let (sorted, apart) = (&self.sorted, &mut self.apart);
        self.later.retain(|&(place, acked)| {
            if tick_after(acked, all) {
                return true;
            }
            let entry = sorted.get(place as usize);
            if entry.is_some_and(|&(key, n)| plain_as_of(key, n, all)) {
                clear_bit(apart, place as usize);
            }
            false
        });
    }

    /// Keeps the tick of [`acknowledge_all`](Self::acknowledge_all) within
    /// [`HORIZON`](crate::tick::HORIZON): once it is before `floor`, it goes into every entry
    /// (which the server's sweep then ages as any other). Notes, once a floor passes the oldest
    /// tick stored, that entries may hold ticks before floors from then on
    /// ([`may_hold_before`](Self::may_hold_before)). Call it once per capture, before the sweep.
    pub(crate) fn age_all_acked(&mut self, floor: u32) {
        self.outlived |= self.oldest.is_some_and(|t| tick_after(floor, t));
        let Some(all) = self.all_acked.filter(|&t| tick_after(floor, t)) else {
            return;
        };
        self.all_acked = None;
        self.alike.changed();
        for entry in self.sorted.iter_mut().chain(&mut self.arrived) {
            entry.1 = entry.1.with_all_acked(Some(all));
        }
        self.reckon_apart();
    }

    /// Holds exactly the nodes `keys` (in net id order, as a table lists them), each with
    /// `value`, marked stateless where `stateless` says so.
    pub(crate) fn fill(
        &mut self,
        keys: impl IntoIterator<Item = NodeKey>,
        value: NodeSend,
        stateless: impl Fn(NodeKey) -> bool,
    ) {
        self.clear();
        self.sorted.extend(keys.into_iter().map(|key| (key, value)));
        self.ids.extend(self.sorted.iter().map(|e| e.0.id()));
        let bare = self
            .sorted
            .iter()
            .map(|e| e.0)
            .filter(|&key| stateless(key));
        self.stateless.extend(bare.map(NodeKey::id));
        if !self.sorted.is_empty() {
            self.lower_oldest(value);
        }
        self.reckon_apart();
        debug_assert!(self.ids.windows(2).all(|w| w[0] < w[1]));
    }

    /// Makes room for `n` nodes, so that setting and settling them allocates nothing.
    pub(crate) fn reserve(&mut self, n: usize) {
        for list in [&mut self.sorted, &mut self.spare] {
            list.reserve_exact(n.saturating_sub(list.len()));
        }
        for list in [&mut self.ids, &mut self.spare_ids] {
            list.reserve_exact(n.saturating_sub(list.len()));
        }
        let words = n.div_ceil(64);
        self.apart
            .reserve_exact(words.saturating_sub(self.apart.len()));
        self.later.reserve_exact(n.saturating_sub(self.later.len()));
        let arrivals = n.min(arrivals_before_settling(n));
        self.arrived
            .reserve(arrivals.saturating_sub(self.arrived.len()));
    }

    /// The state of the node `key`, if the client has it.
    pub(crate) fn get(&self, key: NodeKey) -> Option<NodeSend> {
        self.get_stored(key)
            .map(|n| n.with_all_acked(self.all_acked))
    }

    /// The state of the node `key` as stored (not read through the last snapshot acknowledged
    /// whole): what the server's sweep keeps within [`HORIZON`](crate::tick::HORIZON).
    pub(crate) fn get_stored(&self, key: NodeKey) -> Option<&NodeSend> {
        match find(&self.arrived, key) {
            Some(at) => Some(&self.arrived[at].1),
            None => self.find_sorted(key).map(|at| &self.sorted[at].1),
        }
    }

    /// Changes the state of the node `key` with `f` (as [`get`](Self::get) reads it), if the
    /// client has it; returns what `f` returns.
    pub(crate) fn update<R>(
        &mut self,
        key: NodeKey,
        f: impl FnOnce(&mut NodeSend) -> R,
    ) -> Option<R> {
        self.alike.changed();
        let all = self.all_acked;
        let n = match find(&self.arrived, key) {
            Some(at) => &mut self.arrived[at].1,
            None => {
                let at = self.find_sorted(key)?;
                set_bit(&mut self.apart, at);
                &mut self.sorted[at].1
            }
        };
        *n = n.with_all_acked(all);
        let out = f(n);
        let now = *n;
        self.lower_oldest(now);
        Some(out)
    }

    /// Whether an entry may hold a tick before `floor` (see [`age_all_acked`](Self::age_all_acked)).
    pub(crate) fn may_hold_before(&self, floor: u32) -> bool {
        self.outlived || self.oldest.is_some_and(|t| tick_after(floor, t))
    }

    /// Keeps [`oldest`](Self::may_hold_before) a bound of the ticks stored with `n`'s.
    fn lower_oldest(&mut self, n: NodeSend) {
        for t in std::iter::once(n.acked).chain(n.resync()) {
            self.oldest = Some(match self.oldest {
                Some(old) if !tick_after(old, t) => old,
                _ => t,
            });
        }
    }

    /// The state of the node `key`, for a walk over keys in ascending net id order: `at` is
    /// where the walk stands in the array (0 to begin with), moved past `key`. A key below the
    /// last one (a walk that wrapped around) is looked up from the start.
    #[inline(always)]
    pub(crate) fn seek(&self, at: &mut usize, key: NodeKey) -> Option<NodeSend> {
        self.seek_placed(at, key).map(|(n, _)| n)
    }

    /// [`seek`](Self::seek), with the entry's place in the array ([`NOT_PLACED`] for a node
    /// that arrived since the last settle): an ack of a snapshot that carried the node finds
    /// it there without a search, while the [`layout`](Self::layout) stands.
    #[inline(always)]
    pub(crate) fn seek_placed(&self, at: &mut usize, key: NodeKey) -> Option<(NodeSend, u32)> {
        let found = seek_id_in(&self.ids, at, key.id());
        if let Some(plain) = found.and_then(|i| self.plain(i)) {
            debug_assert_eq!(self.sorted[plain.1 as usize].0, key, "one node per id");
            return Some(plain);
        }
        let (n, place) = match found.filter(|&i| self.sorted[i].0 == key) {
            Some(i) => (&self.sorted[i].1, i as u32),
            None if self.arrived.is_empty() => return None,
            None => (
                &find(&self.arrived, key).map(|i| &self.arrived[i])?.1,
                NOT_PLACED,
            ),
        };
        Some((n.with_all_acked(self.all_acked), place))
    }

    /// Asks the processor for the start of the id array (up to [`PREFETCHED_ID_LINES`] lines of
    /// sixteen ids) and of the entries' bits, for a walk asking for `asked` nodes: if it asks
    /// for one a line or more, it reads the array front to back, and after another client's
    /// walk finds none of it cached.
    #[inline]
    pub(crate) fn prefetch_ids(&self, asked: usize) {
        let len = self.ids.len();
        if asked.saturating_mul(16) < len {
            return;
        }
        for at in (0..len.min(PREFETCHED_ID_LINES * 16)).step_by(16) {
            crate::cache_hint::prefetch(&self.ids, at);
        }
        crate::cache_hint::prefetch(&self.apart, 0);
    }

    /// Where the entries of the array stand: a place found while it was the same names the
    /// same entry.
    pub(crate) fn layout(&self) -> u32 {
        self.layout
    }

    /// Whether every place in the array fits two bytes below `u16::MAX` (the array is shorter
    /// than that).
    pub(crate) fn places_fit(&self) -> bool {
        self.sorted.len() < usize::from(u16::MAX)
    }

    /// Notes that entries of the array moved.
    fn moved(&mut self) {
        self.layout = self.layout.wrapping_add(1);
    }

    /// [`seek`](Self::seek) by net id, mutably: the node with `id` the client has (not one it
    /// lost), with its key.
    #[inline(always)]
    pub(crate) fn seek_id_mut(
        &mut self,
        at: &mut usize,
        id: u32,
    ) -> Option<(NodeKey, &mut NodeSend)> {
        let place = match seek_id_in(&self.ids, at, id) {
            Some(i) => i as u32,
            None => NOT_PLACED,
        };
        self.placed_mut(place, id)
    }

    /// The node with `id` the client has (not one it lost), with its key, found at `place`
    /// by [`seek_placed`](Self::seek_placed) while the [`layout`](Self::layout) stood as it
    /// does now (a node it had not placed is looked up among those that arrived since).
    #[inline(always)]
    pub(crate) fn placed_mut(&mut self, place: u32, id: u32) -> Option<(NodeKey, &mut NodeSend)> {
        self.alike.changed();
        let (list, i) = match place {
            NOT_PLACED => {
                let i = find_id(&self.arrived, id)?;
                (&mut self.arrived, i)
            }
            _ => {
                let i = place as usize;
                if self.ids.get(i) != Some(&id) {
                    return None;
                }
                set_bit(&mut self.apart, i);
                (&mut self.sorted, i)
            }
        };
        let (key, send) = &mut list[i];
        *send = send.with_all_acked(self.all_acked);
        (!lost(*key)).then_some((*key, send))
    }

    /// Sets the state of the node `key` (a node the client now has, `stateless` if it has no
    /// state), replacing whatever was kept for its id.
    pub(crate) fn set(&mut self, key: NodeKey, value: NodeSend, stateless: bool) {
        debug_assert!(
            self.all_acked.map_or(true, |all| !tick_after(all, value.acked)),
            "a node set from before the last snapshot acknowledged whole would read as carried by it"
        );
        self.alike.changed();
        self.lower_oldest(value);
        let id = key.id();
        match (self.stateless.binary_search(&id), stateless) {
            (Err(at), true) => self.stateless.insert(at, id),
            (Ok(at), false) => {
                self.stateless.remove(at);
            }
            _ => {}
        }
        if let Ok(at) = self.ids.binary_search(&id) {
            let entry = &mut self.sorted[at];
            self.lost -= usize::from(lost(entry.0));
            *entry = (key, value);
            set_bit(&mut self.apart, at);
            return;
        }
        match self.arrived.binary_search_by_key(&id, |e| e.0.id()) {
            Ok(at) => self.arrived[at] = (key, value),
            Err(at) => self.arrived.insert(at, (key, value)),
        }
        if self.arrived.len() >= arrivals_before_settling(self.sorted.len()) {
            self.settle();
        }
    }

    /// The client no longer has the node `key` (nothing if it had no state for it).
    pub(crate) fn remove(&mut self, key: NodeKey) {
        self.alike.changed();
        if let Some(at) = find(&self.arrived, key) {
            self.arrived.remove(at);
        } else if let Some(at) = self.find_sorted(key) {
            self.sorted[at].0 = lost_key(key.id());
            self.lost += 1;
            set_bit(&mut self.apart, at);
        } else {
            return;
        }
        if let Ok(at) = self.stateless.binary_search(&key.id()) {
            self.stateless.remove(at);
        }
    }

    /// Forgets the nodes with the net ids `gone` (sorted): nodes that left the node table.
    pub(crate) fn forget(&mut self, gone: &[u32]) {
        if gone.is_empty() {
            return;
        }
        self.alike.changed();
        self.arrived
            .retain(|e| gone.binary_search(&e.0.id()).is_err());
        if !self.stateless.is_empty() {
            self.stateless.retain(|id| gone.binary_search(id).is_err());
        }
        let mut mark = |k: &mut NodeKey| {
            self.lost += usize::from(!lost(*k));
            *k = lost_key(k.id());
        };
        if gone.len().saturating_mul(16) < self.sorted.len() {
            for &id in gone {
                if let Ok(at) = self.ids.binary_search(&id) {
                    mark(&mut self.sorted[at].0);
                    set_bit(&mut self.apart, at);
                }
            }
        } else {
            for (at, entry) in self.sorted.iter_mut().enumerate() {
                if gone.binary_search(&entry.0.id()).is_ok() {
                    mark(&mut entry.0);
                    set_bit(&mut self.apart, at);
                }
            }
        }
    }

    /// How the entry at `place` reads, if it reads as the tick acknowledged whole alone (its
    /// bit in `apart` is clear): acknowledged then, owing no resync; found without a read of
    /// the entry.
    #[inline(always)]
    fn plain(&self, place: usize) -> Option<(NodeSend, u32)> {
        let all = self.all_acked?;
        let word = *self.apart.get(place / 64)?;
        if word >> (place % 64) & 1 != 0 {
            return None;
        }
        let n = NodeSend::new(all, None);
        debug_assert_eq!(self.sorted[place].1.with_all_acked(Some(all)), n);
        debug_assert!(!lost(self.sorted[place].0));
        Some((n, place as u32))
    }

    /// Sets the bit of every entry of `sorted` that may not read as the tick acknowledged
    /// whole alone (see [`plain`](Self::plain)), and clears the others'; lists the entries set
    /// apart only for being acknowledged after that tick.
    fn reckon_apart(&mut self) {
        self.apart.clear();
        self.later.clear();
        self.apart.resize(self.sorted.len().div_ceil(64), 0);
        let Some(all) = self.all_acked else {
            self.apart.fill(!0);
            return;
        };
        for (at, &(key, n)) in self.sorted.iter().enumerate() {
            if plain_as_of(key, n, all) {
                continue;
            }
            set_bit(&mut self.apart, at);
            if !lost(key) && n.resync().is_none() {
                // Acknowledged after `all`: plain once it is acknowledged whole again.
                self.later
                    .push((u32::try_from(at).unwrap_or(u32::MAX), n.acked));
            }
        }
    }

    /// Where in `sorted` the entry of `key` is, if it is there for that very key.
    fn find_sorted(&self, key: NodeKey) -> Option<usize> {
        let at = self.ids.binary_search(&key.id()).ok()?;
        (self.sorted[at].0 == key).then_some(at)
    }

    /// Merges the arrivals into the array and drops the lost entries: one pass, nothing when
    /// there are neither. The entries take the tick acknowledged whole, if any.
    pub(crate) fn settle(&mut self) {
        if self.arrived.is_empty() && self.lost == 0 {
            return;
        }
        self.alike.changed();
        self.moved();
        self.spare.clear();
        // The runs of entries between two arrivals, copied whole (no arrival's id is in
        // `sorted`, lost or not).
        let mut from = 0;
        for &new in &self.arrived {
            let to = from + first_from(&self.ids[from..], new.0.id());
            keep(&self.sorted[from..to], self.lost, &mut self.spare);
            self.spare.push(new);
            from = to;
        }
        keep(&self.sorted[from..], self.lost, &mut self.spare);
        // Every entry is rewritten anyway: it takes the tick acknowledged whole (which reads
        // still apply to those told apart from it).
        if let Some(all) = self.all_acked {
            for entry in &mut self.spare {
                entry.1 = entry.1.with_all_acked(Some(all));
            }
        }
        self.arrived.clear();
        self.spare_ids.clear();
        self.spare_ids.extend(self.spare.iter().map(|e| e.0.id()));
        std::mem::swap(&mut self.sorted, &mut self.spare);
        std::mem::swap(&mut self.ids, &mut self.spare_ids);
        self.lost = 0;
        self.reckon_apart();
    }

    /// The nodes the client has, in net id order (after a [`settle`](Self::settle): before
    /// one, those added since the last are left out).
    pub(crate) fn keys(&self) -> impl Iterator<Item = NodeKey> + '_ {
        self.sorted.iter().map(|e| e.0).filter(|&key| !lost(key))
    }

    /// How many nodes the client has.
    pub(crate) fn len(&self) -> usize {
        self.sorted.len() - self.lost + self.arrived.len()
    }

    /// How many nodes with state the client has: those a snapshot can carry.
    pub(crate) fn len_with_state(&self) -> usize {
        self.len() - self.stateless.len()
    }
}

/// Whether the entry `(key, n)` reads as `all` alone (see [`Known::plain`]): live, owing no
/// resync, acknowledged no later.
#[inline]
fn plain_as_of(key: NodeKey, n: NodeSend, all: u32) -> bool {
    !lost(key) && n.resync().is_none() && !tick_after(n.acked, all)
}

/// Clears bit `at` of `bits` (if it has it).
#[inline]
fn clear_bit(bits: &mut [u64], at: usize) {
    if let Some(word) = bits.get_mut(at / 64) {
        *word &= !(1 << (at % 64));
    }
}

/// Sets bit `at` of `bits` (if it has it).
#[inline]
fn set_bit(bits: &mut [u64], at: usize) {
    if let Some(word) = bits.get_mut(at / 64) {
        *word |= 1 << (at % 64);
    }
}

/// Appends to `out` the entries of `run` that are not lost (`lost_count`: how many entries of the
/// whole list are).
#[inline]
fn keep(run: &[(NodeKey, NodeSend)], lost_count: usize, out: &mut Vec<(NodeKey, NodeSend)>) {
    match lost_count {
        0 => out.extend_from_slice(run),
        _ => out.extend(run.iter().filter(|e| !lost(e.0))),
    }
}

/// The slot of a lost entry's key: one no record has, so the key answers to no other.
const LOST_SLOT: u32 = u32::MAX;

/// The key a lost entry of net id `id` keeps (its id keeps the list in order).
#[inline]
fn lost_key(id: u32) -> NodeKey {
    NodeKey::new(LOST_SLOT, id)
}

/// Whether `key` marks a lost entry.
#[inline]
fn lost(key: NodeKey) -> bool {
    key == lost_key(key.id())
}

/// Where in `list` (by net id) the entry of `key` is, if it is there for that very key.
#[inline]
fn find(list: &[(NodeKey, NodeSend)], key: NodeKey) -> Option<usize> {
    let at = find_id(list, key.id())?;
    (list[at].0 == key).then_some(at)
}

/// Where in `list` (by net id) the entry of net id `id` is.
#[inline]
fn find_id(list: &[(NodeKey, NodeSend)], id: u32) -> Option<usize> {
    list.binary_search_by_key(&id, |e| e.0.id()).ok()
}

/// Where in `ids` (ascending net ids) the id `id` is, for ascending walks: `at` is where the
/// walk expects the next id (just past the last one found, or where the last one asked for
/// would be). A walk that asks for most of the list reads it once, front to back, which the
/// processor streams in ahead of it (a binary search would wait on a cache line per step); one
/// that asks for a few ids of a long list (the acks of a snapshot that carried a tenth of a
/// client's nodes) skips the gaps a block at a time, and gallops over long ones
/// ([`first_from`]). An id below the last one (a walk that wrapped around) looks again from the
/// start.
#[inline(always)]
fn seek_id_in(ids: &[u32], at: &mut usize, id: u32) -> Option<usize> {
    if ids.get(*at) == Some(&id) {
        *at += 1;
        return Some(*at - 1);
    }
    let from = match (*at).checked_sub(1).and_then(|i| ids.get(i)) {
        Some(&before) if before >= id => 0,
        _ => (*at).min(ids.len()),
    };
    let i = from + first_from(&ids[from..], id);
    let found = ids.get(i) == Some(&id);
    *at = i + usize::from(found);
    found.then_some(i)
}

#[cfg(test)]
mod tests {
    use super::Known;
    use super::NodeSend;
    use crate::replication::server::node_table::NodeKey;

    fn key(slot: u32, id: u32) -> NodeKey {
        NodeKey::new(slot, id)
    }

    fn at(acked: u32) -> NodeSend {
        NodeSend::new(acked, None)
    }

    fn acked(known: &Known, k: NodeKey) -> Option<u32> {
        known.get(k).map(|n| n.acked)
    }

    #[test]
    fn an_entry_is_a_quarter_of_a_cache_line_and_keeps_any_resync() {
        assert_eq!(size_of::<(NodeKey, NodeSend)>(), 16);
        for after in [0, 7, u32::MAX - 1] {
            assert_eq!(NodeSend::new(3, Some(after)).resync(), Some(after));
        }
        assert_eq!(NodeSend::new(3, None).resync(), None);
        assert_eq!(NodeSend::default(), NodeSend::new(0, None));
        // The one tick the store cannot hold is owed one tick later: completed by a later ack.
        let last = NodeSend::new(3, Some(u32::MAX));
        assert_eq!(last.resync(), Some(0));
        assert_eq!(last.with_all_acked(Some(0)).resync(), Some(0));
        assert_eq!(last.with_all_acked(Some(1)).resync(), None);
    }

    #[test]
    fn a_state_answers_only_to_its_key_before_and_after_settling() {
        let mut known = Known::default();
        let (a, b, c) = (key(0, 5), key(1, 3), key(2, 9));
        for (k, tick) in [(a, 50), (b, 30), (c, 90)] {
            known.set(k, at(tick), false);
        }
        for settled in [false, true] {
            if settled {
                known.settle();
            }
            assert_eq!(acked(&known, a), Some(50));
            assert_eq!(acked(&known, b), Some(30));
            // Same id in another slot (a later node): nothing.
            assert_eq!(acked(&known, key(7, 5)), None);
            assert_eq!(acked(&known, key(0, 6)), None);
            assert_eq!(known.len(), 3);
        }
        known.update(c, |n| n.acked = 91).unwrap();
        assert_eq!(acked(&known, c), Some(91));
    }

    #[test]
    fn removed_and_forgotten_nodes_answer_to_nothing_and_leave_at_settling() {
        let mut known = Known::default();
        let keys: Vec<NodeKey> = (1..=40).map(|id| key(id, id)).collect();
        for &k in &keys {
            known.set(k, at(k.id()), false);
        }
        known.settle();
        known.remove(keys[3]);
        known.remove(keys[3]);
        known.forget(&[10, 11, 99]);
        assert_eq!(known.len(), 37);
        assert_eq!(acked(&known, keys[3]), None);
        assert!(known.update(keys[9], |_| ()).is_none());
        // Shown again before settling: it answers again.
        known.set(keys[3], at(100), false);
        assert_eq!(acked(&known, keys[3]), Some(100));
        known.settle();
        assert_eq!(known.len(), 38);
        let mut i = 0;
        let walked: Vec<u32> = keys
            .iter()
            .filter_map(|&k| known.seek(&mut i, k).map(|n| n.acked))
            .collect();
        let expected: Vec<u32> = (1..=40).filter(|id| ![10, 11].contains(id)).collect();
        let expected: Vec<u32> = expected
            .into_iter()
            .map(|id| if id == 4 { 100 } else { id })
            .collect();
        assert_eq!(walked, expected);
    }

    #[test]
    fn a_walk_finds_arrivals_and_wraps_around() {
        let mut known = Known::default();
        let keys: Vec<NodeKey> = (0..20).map(|i| key(i, 2 * i + 1)).collect();
        for &k in &keys[..10] {
            known.set(k, at(k.id()), false);
        }
        known.settle();
        for &k in &keys[10..] {
            known.set(k, at(k.id()), false);
        }
        // From the middle to the end, then from the start: every key found, others not.
        let mut i = 0;
        let order = keys[7..].iter().chain(&keys[..7]);
        for &k in order {
            assert_eq!(known.seek(&mut i, k).map(|n| n.acked), Some(k.id()));
            assert!(known
                .seek(&mut i, key(u32::try_from(k.slot()).unwrap(), k.id() + 1))
                .is_none());
        }
        let mut i = 0;
        let (found, send) = known.seek_id_mut(&mut i, keys[15].id()).unwrap();
        assert_eq!(found, keys[15]);
        send.acked = 7;
        assert_eq!(acked(&known, keys[15]), Some(7));
        // A node the client lost (settled, or arrived since) does not answer to its id.
        known.remove(keys[5]);
        known.remove(keys[16]);
        assert!(known.seek_id_mut(&mut 0, keys[5].id()).is_none());
        assert!(known.seek_id_mut(&mut 0, keys[16].id()).is_none());
        assert!(known.seek_id_mut(&mut 0, keys[6].id()).is_some());
    }

    #[test]
    fn sparse_walks_gallop_to_the_same_answers_as_a_search() {
        // 2 000 nodes with every third id missing; walks that ask for a few keys with gaps of
        // every size (present and absent ones, and ids past the end), wrapping once.
        let mut known = Known::default();
        let keys: Vec<NodeKey> = (0..3000)
            .filter(|i| i % 3 != 0)
            .map(|i| key(i, i))
            .collect();
        known.fill(keys.iter().copied(), at(1), |_| false);
        let mut rng = fastrand::Rng::with_seed(25);
        for _ in 0..200 {
            let mut asked: Vec<u32> = (0..rng.usize(1..80)).map(|_| rng.u32(0..3100)).collect();
            asked.sort_unstable();
            asked.dedup();
            let turn = rng.usize(0..asked.len());
            asked.rotate_left(turn);
            let mut i = 0;
            for &id in &asked {
                let expected = (id % 3 != 0 && id < 3000).then_some(1);
                let found = known.seek(&mut i, key(id, id)).map(|n| n.acked);
                assert_eq!(found, expected, "id {id}");
                // The same id under another slot answers to nothing.
                let mut j = 0;
                assert!(known.seek(&mut j, key(id + 1, id)).is_none());
            }
        }
    }

    #[test]
    fn many_arrivals_settle_on_their_own() {
        let mut known = Known::default();
        for id in (1..=200).rev() {
            known.set(key(id, id), at(id), false);
        }
        assert!(known.arrived.len() < 64);
        assert_eq!(known.len(), 200);
        let ids: Vec<u32> = known.sorted.iter().map(|e| e.0.id()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_count_of_nodes_with_state_follows_every_change_of_the_list() {
        let mut rng = fastrand::Rng::with_seed(26);
        let mut known = Known::default();
        // What the list should hold: by net id, the key and whether it has no state.
        let mut model = std::collections::BTreeMap::new();
        for _ in 0..3000 {
            // Keys in few slots and ids, so that ids and slots are reused.
            let id = rng.u32(1..60);
            let k = key(rng.u32(0..3) * 100 + id, id);
            match rng.u32(0..10) {
                0..=4 => {
                    let bare = rng.bool();
                    known.set(k, at(1), bare);
                    model.insert(id, (k, bare));
                }
                5 | 6 => {
                    known.remove(k);
                    if model.get(&id).is_some_and(|e| e.0 == k) {
                        model.remove(&id);
                    }
                }
                7 => {
                    let mut gone: Vec<u32> = (0..rng.usize(0..8)).map(|_| rng.u32(1..60)).collect();
                    gone.sort_unstable();
                    gone.dedup();
                    known.forget(&gone);
                    model.retain(|id, _| gone.binary_search(id).is_err());
                }
                8 => known.settle(),
                _ if rng.u32(0..20) == 0 => {
                    let keys: Vec<NodeKey> = (1..rng.u32(1..60)).map(|i| key(i, i)).collect();
                    known.fill(keys.iter().copied(), at(1), |k| k.id() % 3 == 0);
                    model = keys
                        .iter()
                        .map(|&k| (k.id(), (k, k.id() % 3 == 0)))
                        .collect();
                }
                _ => {}
            }
            assert_eq!(known.len(), model.len());
            let with_state = model.values().filter(|e| !e.1).count();
            assert_eq!(known.len_with_state(), with_state);
        }
    }

    #[test]
    fn walks_read_every_node_as_stored_and_acknowledged_whole_through_every_change() {
        {
            let mut rng = fastrand::Rng::with_seed(25);
            let mut known = Known::default();
            // By net id, the key and the state as stored; and the tick acknowledged whole.
            let mut model = std::collections::BTreeMap::<u32, (NodeKey, NodeSend)>::new();
            let mut all: Option<u32> = None;
            let read = |n: NodeSend, all| n.with_all_acked(all);
            let (mut plain, mut reads) = (0, 0);
            for tick in 100..6000u32 {
                let id = rng.u32(1..80);
                let k = key(rng.u32(0..2) * 100 + id, id);
                match rng.u32(0..12) {
                    // A node the client gets now, owing a resync or not.
                    0..=2 => {
                        let n = NodeSend::new(tick, rng.bool().then_some(tick));
                        known.set(k, n, false);
                        model.insert(id, (k, n));
                    }
                    3 => {
                        known.remove(k);
                        if model.get(&id).is_some_and(|e| e.0 == k) {
                            model.remove(&id);
                        }
                    }
                    4 => {
                        known.forget(&[id]);
                        model.remove(&id);
                    }
                    // Snapshots acknowledged whole, some of them long after.
                    5 | 6 => {
                        let t = tick - rng.u32(0..30);
                        known.acknowledge_all(t);
                        all = Some(all.map_or(t, |a| a.max(t)));
                    }
                    // An ack marks a node it carried, or a resync is owed.
                    8 => {
                        let t = tick - rng.u32(0..3);
                        let mut at = 0;
                        if let Some((_, n)) = known.seek_id_mut(&mut at, id) {
                            *n = n.with_all_acked(Some(t));
                        }
                        if let Some(e) = model.get_mut(&id) {
                            e.1 = read(e.1, all).with_all_acked(Some(t));
                        }
                    }
                    9 => {
                        known.update(k, |n| n.set_resync(Some(tick)));
                        if let Some(e) = model.get_mut(&id).filter(|e| e.0 == k) {
                            e.1 = read(e.1, all);
                            e.1.set_resync(Some(tick));
                        }
                    }
                    7 | 10 => known.settle(),
                    _ if rng.u32(0..50) == 0 => {
                        known.age_all_acked(tick);
                        model.values_mut().for_each(|e| e.1 = read(e.1, all));
                        all = None;
                    }
                    _ => {}
                }
                // A walk in net id order asks for every id, those the client does not have too
                // (a net id names one node: the key is the model's where it has one).
                let mut at = 0;
                for id in 1..80 {
                    let Some(&(k, n)) = model.get(&id) else {
                        assert_eq!(known.seek(&mut at, key(id, id)), None);
                        continue;
                    };
                    let found = known.seek_placed(&mut at, k);
                    let found_n = found.map(|(n, _)| n);
                    assert_eq!(found_n, Some(read(n, all)), "node {id} at tick {tick}");
                    reads += 1;
                    let place = found.map(|(_, place)| place as usize);
                    plain += usize::from(place.is_some_and(|p| known.plain(p).is_some()));
                }
            }
            // The reads through the bits are exercised.
            assert!(plain > reads / 4, "{plain} of {reads} reads plain");
        }
    }
}
