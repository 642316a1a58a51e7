//! The replication layer's own messages: encoding and decoding (the layouts are documented on
//! [`message_ids`](super::message_ids)).

pub(crate) use super::message_ids::*;
use crate::bus::{MessageRegistry, RegistryError};
use crate::scene::SceneShape;
use crate::schema;
use crate::store::Link;
use crate::wire::{DecodeError, NetReader, NetWriter, ProtocolViolation};

/// The fewest ticks [`baseline_depth`] gives.
pub(crate) const MIN_BASELINE_DEPTH: usize = 32;
/// The most ticks [`baseline_depth`] gives (a ring of a node's records counts them in a byte).
pub(crate) const MAX_BASELINE_DEPTH: usize = 128;

/// How many ticks back a bit-packed entry's baseline may be at `tick_rate`, and how many
/// records of each node's values the server keeps: a client holds a record for each of its
/// last `depth` ticks that carried the node, so one at most `depth - 1` ticks before a
/// snapshot is still there when the snapshot arrives. About half a second of ticks (32 up to
/// 64 Hz, 64 at 128 Hz, 128 at 255 Hz), so that a client whose acknowledgements take up to
/// that long is sent deltas at any rate; a power of two (it divides 2³²), so that the tick
/// modulo it stays consecutive across the tick's wrap.
pub(crate) fn baseline_depth(tick_rate: u8) -> usize {
    (usize::from(tick_rate) / 2)
        .next_power_of_two()
        .clamp(MIN_BASELINE_DEPTH, MAX_BASELINE_DEPTH)
}
/// The fewest of the snapshots it sent a client the server remembers (see
/// [`snapshot_memory`]).
pub(crate) const MIN_SNAPSHOT_MEMORY: usize = 64;
const _: () = assert!(MIN_SNAPSHOT_MEMORY.is_power_of_two());

/// How many of the snapshots it sent a client the server remembers at `tick_rate` ticks a
/// second: about two seconds' worth, at least [`MIN_SNAPSHOT_MEMORY`] (64 at 30 Hz, 256 at
/// 128 Hz). An ack arriving after its snapshot was forgotten counts for nothing, so this bounds
/// the round trip a client may have; a predicting client keeps as many ticks of history at
/// least, since a confirmation can be that old. A power of two (it divides 2³²), so that the
/// tick modulo it stays consecutive across the tick's wrap.
pub(crate) fn snapshot_memory(tick_rate: u8) -> usize {
    (2 * usize::from(tick_rate.max(1)))
        .next_power_of_two()
        .max(MIN_SNAPSHOT_MEMORY)
}

/// Scene index of a spawn message that binds a node every peer loads.
pub(crate) const SCENE_BIND: i32 = -1;
/// Scene index of a spawn message made by a spawner.
pub(crate) const SCENE_SPAWNER: i32 = -2;
/// The scene index of a typed spawn ([`Multiplayer::replicate`](crate::replication::Multiplayer::replicate)):
/// a group of nodes ([`Store::group`](crate::store::Store::group)), each made by the client's
/// storage from its type, named by its schema hash, and placed by its [`Link`].
pub(crate) const SCENE_TYPED: i32 = -3;

/// One node of a typed spawn: its type's schema hash, and how it relates to a node before it
/// in the group (by index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TypedNode {
    pub(crate) schema: u64,
    pub(crate) link: Link<u32>,
}

impl TypedNode {
    /// The bytes it takes at least: the schema hash and a one-byte link.
    const MIN_SIZE: usize = 9;

    fn write(&self, w: &mut NetWriter) {
        w.write_u64(self.schema);
        // 0: the root; 2j + 1: a child of node j; 2j + 2: beside node j (for the root, 2:
        // beside the group's parent).
        let code = match self.link {
            Link::Root => 0,
            Link::ChildOf(j) => u64::from(j) * 2 + 1,
            Link::Beside(j) => u64::from(j) * 2 + 2,
        };
        w.write_var_u64(code);
    }

    /// Reads the node at `index` of its group: the root first (a root, or beside the group's
    /// parent), every other one linked to a node before it.
    fn read(r: &mut NetReader<'_>, index: u32) -> Result<Self, DecodeError> {
        let schema = r.read_u64()?;
        let code = r.read_var_u64()?;
        let to = u32::try_from(code.saturating_sub(1) / 2).map_err(|_| DecodeError::OutOfRange)?;
        let link = match code {
            0 if index == 0 => Link::Root,
            2 if index == 0 => Link::Beside(0),
            c if c % 2 == 1 && to < index => Link::ChildOf(to),
            c if c > 0 && c % 2 == 0 && to < index => Link::Beside(to),
            _ => return Err(DecodeError::InvalidValue),
        };
        Ok(Self { schema, link })
    }
}

/// Snapshot flag: some changed nodes did not fit the byte budget and follow in later ticks.
pub(crate) const SNAPSHOT_TRUNCATED: u8 = 1;

/// Longest node or scene name or path the replication messages accept.
pub const MAX_NAME_BYTES: usize = 4096;

/// Appends one snapshot entry to `w`: `net_id` varint, the length of the state varint, then
/// the state that `state` appends. The length is written as a 1-byte placeholder and patched
/// (a state under 128 bytes, the common case, costs no copy); a longer state is moved through
/// `scratch` to make room for its longer length.
#[inline(always)]
pub fn write_entry(
    w: &mut NetWriter,
    net_id: u32,
    scratch: &mut NetWriter,
    state: impl FnOnce(&mut NetWriter),
) {
    w.write_tagged(net_id, scratch, state);
}

/// Reads the next snapshot entry: its net id and its state's bytes, or `None` at the
/// terminating 0.
///
/// # Errors
///
/// A truncated entry, or a length past the end of the packet.
#[inline]
pub fn read_entry<'a>(r: &mut NetReader<'a>) -> Result<Option<(u32, &'a [u8])>, DecodeError> {
    let id = r.read_var_u32()?;
    if id == 0 {
        return Ok(None);
    }
    let len = r.read_len()?;
    Ok(Some((id, r.read_bytes(len)?)))
}

/// Adds the replication messages ([`MESSAGES`], each under a schema hash of its name and
/// layout version) to `registry` at their reserved ids (idempotent). Both ends must do it
/// before the registry's fingerprint becomes the transport's connect data;
/// [`connect_data`](crate::replication::connect_data) does it on a copy.
///
/// # Errors
///
/// [`RegistryError::IdTaken`] if something else holds a reserved id.
pub(crate) fn prepare_registry(registry: &mut MessageRegistry) -> Result<(), RegistryError> {
    register_messages(registry, &MESSAGES)
}

/// Adds `messages` to `registry` at their reserved ids.
fn register_messages(
    registry: &mut MessageRegistry,
    messages: &[Message],
) -> Result<(), RegistryError> {
    for m in messages {
        let hash = schema::hash_u64(schema::hash_name(m.name), m.layout);
        registry.register_reserved_raw(m.id - crate::bus::FIRST_RESERVED_ID, m.name, hash)?;
    }
    Ok(())
}

/// Writes a hello payload.
pub(crate) fn write_hello(w: &mut NetWriter, fingerprint: u64, shapes: &[SceneShape]) {
    w.write_u64(fingerprint);
    w.write_len(shapes.len());
    for shape in shapes {
        w.write_str(&shape.name);
        w.write_len(shape.types.len());
        for &(name, hash) in &shape.types {
            w.write_str(name);
            w.write_u64(hash);
        }
    }
}

/// A peer's scene shape as read from a hello (owned strings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RemoteShape {
    pub(crate) name: String,
    pub(crate) types: Vec<(String, u64)>,
}

/// Reads a hello's shapes (after the fingerprint). Counts are checked against the bytes left
/// before allocating.
pub(crate) fn read_shapes(r: &mut NetReader<'_>) -> Result<Vec<RemoteShape>, DecodeError> {
    // A scene is at least a name length and a count; a node a name length and a hash.
    let scenes = r.read_count(2)?;
    let mut shapes = Vec::with_capacity(scenes);
    for _ in 0..scenes {
        let name = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
        let nodes = r.read_count(9)?;
        let mut types = Vec::with_capacity(nodes);
        for _ in 0..nodes {
            let ty = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
            types.push((ty, r.read_u64()?));
        }
        shapes.push(RemoteShape { name, types });
    }
    Ok(shapes)
}

/// Describes the first difference between our shapes and a client's, from the server's side
/// ("here" is the server): the scene, and if the scene names agree the first differing node
/// type. Falls back to a generic text when the lists are equal but the fingerprints were not.
pub(crate) fn describe_difference(ours: &[SceneShape], theirs: &[RemoteShape]) -> String {
    for (index, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a.name != b.name {
            return format!(
                "spawnable scene {index} is `{}` on the server but `{}` on the client",
                a.name, b.name
            );
        }
        for (node, (x, y)) in a.types.iter().zip(&b.types).enumerate() {
            if x.0 != y.0 || x.1 != y.1 {
                return format!(
                    "scene `{}`, networked node {node}: type `{}` (schema {:#018x}) on the server \
                     but `{}` (schema {:#018x}) on the client",
                    a.name, x.0, x.1, y.0, y.1
                );
            }
        }
        if a.types.len() != b.types.len() {
            let first_extra = a
                .types
                .get(b.types.len())
                .map(|t| t.0.to_owned())
                .or_else(|| b.types.get(a.types.len()).map(|t| t.0.clone()))
                .unwrap_or_default();
            return format!(
                "scene `{}` has {} networked nodes on the server and {} on the client (first \
                 extra: `{first_extra}`)",
                a.name,
                a.types.len(),
                b.types.len()
            );
        }
    }
    if ours.len() != theirs.len() {
        let extra = ours
            .get(theirs.len())
            .map(|s| s.name.clone())
            .or_else(|| theirs.get(ours.len()).map(|s| s.name.clone()))
            .unwrap_or_default();
        return format!(
            "{} spawnable scenes on the server and {} on the client (first extra: `{extra}`)",
            ours.len(),
            theirs.len()
        );
    }
    "replication fingerprints differ".to_owned()
}

/// How a spawn names its parent on the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParentRef {
    /// A networked node.
    Net(u32),
    /// A node at this absolute path (one every peer loads).
    Path(String),
}

impl ParentRef {
    /// Writes it as a spawn (and a move, [`PARENT`]) names a parent: the net id, or 0 then the
    /// path.
    pub(crate) fn write(&self, w: &mut NetWriter) {
        match self {
            ParentRef::Net(id) => w.write_var_u32(*id),
            ParentRef::Path(path) => {
                w.write_var_u32(0);
                w.write_str(path);
            }
        }
    }
}

/// What a spawner spawn carries besides the header: which spawner, and its encoded data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SpawnerPayload {
    /// The spawner's index (registration order).
    pub(crate) index: u32,
    /// The spawn data's `NetCodec` encoding.
    pub(crate) data: Vec<u8>,
}

/// The fixed part of a spawn message (everything before the absent list and the states).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpawnHeader {
    pub(crate) first_net_id: u32,
    pub(crate) scene: i32,
    pub(crate) parent: ParentRef,
    pub(crate) name: String,
    pub(crate) authority: u64,
    pub(crate) count: u32,
    /// Present exactly when `scene` is [`SCENE_SPAWNER`].
    pub(crate) spawner: Option<SpawnerPayload>,
    /// The group's nodes, when `scene` is [`SCENE_TYPED`] (`count` of them; none otherwise).
    pub(crate) typed: Vec<TypedNode>,
}

/// A [`SpawnHeader`] borrowing its name, parent and spawner data (what the server writes from
/// its groups without cloning them per peer).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpawnHeaderRef<'a> {
    pub(crate) first_net_id: u32,
    pub(crate) scene: i32,
    pub(crate) parent: &'a ParentRef,
    pub(crate) name: &'a str,
    pub(crate) authority: u64,
    pub(crate) count: u32,
    /// Present exactly when `scene` is [`SCENE_SPAWNER`].
    pub(crate) spawner: Option<&'a SpawnerPayload>,
    /// The group's nodes, when `scene` is [`SCENE_TYPED`].
    pub(crate) typed: &'a [TypedNode],
}

impl SpawnHeaderRef<'_> {
    pub(crate) fn write(&self, w: &mut NetWriter) {
        w.write_var_u32(self.first_net_id);
        w.write_var_i32(self.scene);
        self.parent.write(w);
        w.write_str(self.name);
        w.write_var_u64(self.authority);
        w.write_var_u32(self.count);
        if self.scene == SCENE_SPAWNER {
            let (index, data) = self
                .spawner
                .map_or((0, &[][..]), |p| (p.index, p.data.as_slice()));
            w.write_var_u32(index);
            w.write_len(data.len());
            w.write_bytes(data);
        }
        if self.scene == SCENE_TYPED {
            for node in self.typed {
                node.write(w);
            }
        }
    }
}

impl SpawnHeader {
    /// Writes the header (the server writes a [`SpawnHeaderRef`]; this owned form is read by
    /// clients, and written only by tests).
    #[cfg(test)]
    pub(crate) fn write(&self, w: &mut NetWriter) {
        SpawnHeaderRef {
            first_net_id: self.first_net_id,
            scene: self.scene,
            parent: &self.parent,
            name: &self.name,
            authority: self.authority,
            count: self.count,
            spawner: self.spawner.as_ref(),
            typed: &self.typed,
        }
        .write(w);
    }

    pub(crate) fn read(r: &mut NetReader<'_>) -> Result<Self, DecodeError> {
        let first_net_id = r.read_var_u32()?;
        if first_net_id == 0 {
            return Err(DecodeError::Protocol(ProtocolViolation::ZeroNetId));
        }
        let scene = r.read_var_i32()?;
        let parent = match r.read_var_u32()? {
            0 => ParentRef::Path(r.read_str_max(MAX_NAME_BYTES)?.to_owned()),
            id => ParentRef::Net(id),
        };
        let name = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
        let authority = r.read_var_u64()?;
        let count = r.read_var_u32()?;
        if first_net_id.checked_add(count).is_none() {
            return Err(DecodeError::Protocol(ProtocolViolation::NetIdOverflow));
        }
        let spawner = if scene == SCENE_SPAWNER {
            let index = r.read_var_u32()?;
            let len = r.read_len()?;
            let data = r.read_bytes(len)?.to_vec();
            Some(SpawnerPayload { index, data })
        } else {
            None
        };
        let mut typed = Vec::new();
        if scene == SCENE_TYPED {
            // The count is checked against the bytes left before anything is allocated.
            let enough = (count as usize).checked_mul(TypedNode::MIN_SIZE);
            if enough.map_or(true, |n| n > r.remaining()) {
                return Err(DecodeError::CountPastEnd);
            }
            typed.reserve_exact(count as usize);
            for index in 0..count {
                typed.push(TypedNode::read(r, index)?);
            }
        }
        Ok(Self {
            first_net_id,
            scene,
            parent,
            name,
            authority,
            count,
            spawner,
            typed,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_baseline_reaches_back_about_half_a_second_at_any_tick_rate() {
        let depths: Vec<usize> = [0, 1, 30, 60, 64, 100, 128, 200, 255]
            .iter()
            .map(|&rate| baseline_depth(rate))
            .collect();
        assert_eq!(depths, [32, 32, 32, 32, 32, 64, 64, 128, 128]);
    }

    #[test]
    fn a_typed_spawn_header_carries_each_nodes_schema_hash_and_link() {
        let typed = vec![
            TypedNode {
                schema: 0x0102_0304_0506_0708,
                link: Link::Root,
            },
            TypedNode {
                schema: 0x11,
                link: Link::Beside(0),
            },
            TypedNode {
                schema: 0x22,
                link: Link::ChildOf(1),
            },
        ];
        let header = SpawnHeader {
            first_net_id: 9,
            scene: SCENE_TYPED,
            parent: ParentRef::Path(String::new()),
            name: String::new(),
            authority: 1,
            count: 3,
            spawner: None,
            typed,
        };
        let mut w = NetWriter::new();
        header.write(&mut w);
        // first id, scene −3 (zig-zag 5), parent by path (0, empty), name, authority, count,
        // then per node its schema hash (8 bytes, little-endian) and its link (0: the root;
        // 2j + 1: a child of node j; 2j + 2: beside node j).
        let bytes = [
            9, 5, 0, 0, 0, 1, 3, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 2, 0x22, 0,
            0, 0, 0, 0, 0, 0, 3,
        ];
        assert_eq!(w.as_slice(), bytes);
        let mut r = NetReader::new(w.as_slice());
        assert_eq!(SpawnHeader::read(&mut r).unwrap(), header);
        for len in 0..bytes.len() {
            assert!(SpawnHeader::read(&mut NetReader::new(&bytes[..len])).is_err());
        }
        // A root that is not first, a link to itself or a later node, a count past the bytes.
        for (at, code) in [(15, 1), (24, 0), (33, 5), (33, 6)] {
            let mut bad = bytes.to_vec();
            bad[at] = code;
            assert!(
                SpawnHeader::read(&mut NetReader::new(&bad)).is_err(),
                "{at}: {code}"
            );
        }
        // A root beside the group's parent (2), read back so; never beside another node (4).
        let mut beside = bytes.to_vec();
        beside[15] = 2;
        let read = SpawnHeader::read(&mut NetReader::new(&beside)).unwrap();
        assert_eq!(read.typed[0].link, Link::Beside(0));
        beside[15] = 4;
        assert!(SpawnHeader::read(&mut NetReader::new(&beside)).is_err());
        let mut many = bytes.to_vec();
        many[6] = 100;
        assert_eq!(
            SpawnHeader::read(&mut NetReader::new(&many)),
            Err(DecodeError::CountPastEnd)
        );
    }

    #[test]
    fn entries_round_trip_across_the_length_boundary() {
        let (mut w, mut scratch) = (NetWriter::new(), NetWriter::new());
        for (id, len) in [(1, 0), (2, 127), (300, 128), (7, 20_000)] {
            write_entry(&mut w, id, &mut scratch, |w| {
                w.write_bytes(&vec![u8::try_from(id % 251).unwrap(); len]);
            });
        }
        w.write_var_u32(0);
        // A 127-byte state takes a 1-byte length, a 128-byte one 2 bytes.
        assert_eq!(&w.as_slice()[..3], &[1, 0, 2]);
        assert_eq!(w.as_slice()[3], 127);
        let mut r = NetReader::new(w.as_slice());
        let mut seen = Vec::new();
        while let Some((id, bytes)) = read_entry(&mut r).unwrap() {
            assert!(bytes.iter().all(|&b| u32::from(b) == id % 251));
            seen.push((id, bytes.len()));
        }
        r.finish().unwrap();
        assert_eq!(seen, [(1, 0), (2, 127), (300, 128), (7, 20_000)]);
    }

    #[test]
    fn a_length_past_the_packet_is_refused() {
        let mut r = NetReader::new(&[5, 10, 1, 2]);
        assert!(read_entry(&mut r).is_err());
        assert_eq!(read_entry(&mut NetReader::new(&[0])).unwrap(), None);
    }

    /// A client whose replication messages differ from the server's only in the input
    /// message's layout connects over loopback: refused, and told which message differs.
    #[test]
    fn a_peer_with_another_input_layout_is_refused_naming_it() {
        use crate::bus::{BusEvent, MessageBus};
        use crate::transport::loopback::LoopbackNetwork;
        use crate::transport::DisconnectReason;

        let mut server_registry = MessageRegistry::new(1);
        prepare_registry(&mut server_registry).unwrap();
        let mut theirs = MESSAGES;
        for m in &mut theirs {
            if m.id == INPUT {
                m.layout += 1;
            }
        }
        let mut client_registry = MessageRegistry::new(1);
        register_messages(&mut client_registry, &theirs).unwrap();
        assert_ne!(server_registry.fingerprint(), client_registry.fingerprint());

        let net = LoopbackNetwork::new();
        let listen = net.listen("game", 4).unwrap();
        let connect = net.connect("game", client_registry.fingerprint());
        let mut server: MessageBus<_> = MessageBus::server(listen, server_registry);
        let mut client: MessageBus<_> = MessageBus::client(connect, client_registry);
        let mut reason = None;
        for _ in 0..20 {
            server.poll(&mut ());
            server.flush();
            client.poll(&mut ());
            client.flush();
            while let Some(event) = client.next_event() {
                if let BusEvent::PeerDisconnected { reason: r, .. } = event {
                    reason = Some(r);
                }
            }
        }
        assert_eq!(reason, Some(DisconnectReason::ProtocolMismatch));
        assert_eq!(
            client.refusal(),
            Some(
                "message `mf_net::replication::Input` (id 4089) has another schema on the server \
                 (its fields or their types differ)"
            )
        );
    }
}
