//! Shared fixtures of mf-net's benchmarks (`cargo bench -p mf-net-benches`).
//!
//! The benchmarks themselves are the `[[bench]]` targets in `benches/benches/`:
//!
//! - `replication`: server change detection ([`ReplicationScenario::capture`]), encoding the
//!   changed boxes as snapshot entries ([`encode_changed`]) and decoding + applying them on a
//!   client ([`decode_apply`]), then the same through the `Multiplayer` runtime
//!   ([`EncodeSnapshotFixture`], [`DecodeSnapshotFixture`]), for 100, 1000 and 10 000
//!   [`BoxEntity`]s with every box or 10 % of them moving ([`Motion`]); next to them, the
//!   **bitcode reference**: the same values as [`PlainBox`]es, encoded and decoded whole with
//!   `bitcode`;
//! - `bus`: sending a message into a loopback transport ([`SendFixture`]), decoding and
//!   dispatching one ([`DispatchFixture`]), a loopback round trip ([`RoundTripFixture`]);
//! - `wire`: varints of every size ([`varint_u32_values`], [`varint_u64_values`]) and strings
//!   ([`ascii_string`]);
//! - `scale`: one server and [`SCALE_CLIENTS`] clients over loopback that really acknowledge
//!   ([`ScaleWorld`]), 1000 and 10 000 boxes ([`BoxEntity`], [`InterpBox`], [`QuantBox`]), with
//!   and without a byte budget: the server's tick, the clients' frames and the server's ack
//!   processing, each timed apart ([`Stage`]);
//! - `secure`: one packet through the secure layer against the plain path ([`secure`]);
//! - `prediction`: a client frame with and without a rollback, 1 to 256 predicted entities,
//!   4 or 16 ticks deep ([`prediction`]);
//! - `enet_flood` (a measuring program, not divan): spoofed ENet CONNECTs on 127.0.0.1, what
//!   they get back and how many genuine clients get in meanwhile ([`enet_flood`]).
//!
//! Everything here is deterministic: the same scenario always moves the same boxes to the same
//! places, so byte counts are stable (the tests below pin them) and runs compare.
//!
//! # Entry level and snapshot level
//!
//! [`encode_changed`] frames each changed node the way a snapshot entry is framed — varint net
//! id, varint byte length, then [`Capture::write_since`](mf_net::replication::Capture::write_since) — so the `encode` and
//! `decode_apply` benchmarks measure the per-entity work alone. The snapshot-level fixtures
//! ([`EncodeSnapshotFixture`], [`DecodeSnapshotFixture`]) run the real [`Multiplayer`] server
//! and client (handshake and spawns over loopback, then a [`BenchTransport`] that only counts
//! and replays packets), so `encode_snapshot` / `decode_snapshot` add everything around the
//! entries: the frame, capture, the snapshot header and ring, acks, lookups by net id, and
//! interpolation buffering for [`InterpBox`].

pub mod bevy_scale;
pub mod enet_flood;
pub mod prediction;
pub mod secure;
mod test_mode;

pub use test_mode::{running_as_test, sized};

use std::fmt;
use std::time::Duration;

use glam::{Quat, Vec3};
use mf_net::__private as entry;
use mf_net::bus::{MessageBus, MessageRegistry};
use mf_net::prelude::*;
use mf_net::replication::{message_ids, SnapshotEncoding};
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::{Transport, TransportEvent, TransportStats};
use mf_net::wire::ProtocolViolation;
use mf_net_secure::{SecureClient, SecureServer};

// ---------------------------------------------------------------------------------------------
// Replication fixtures
// ---------------------------------------------------------------------------------------------

/// The benchmarks' replicated node: a moving box (`Vec3` position, `Quat` rotation) with a
/// health that rarely changes.
#[derive(Replicated, Debug, Clone, PartialEq)]
pub struct BoxEntity {
    /// Where the box is.
    #[replicated]
    pub position: Vec3,
    /// How it is turned.
    #[replicated]
    pub rotation: Quat,
    /// Changes for about 1 in 100 moving boxes per frame.
    #[replicated]
    pub health: i32,
}

/// The server's shadow state of one [`BoxEntity`].
pub type BoxState = <BoxEntity as Replicated>::State;

/// Health every box spawns with.
pub const START_HEALTH: i32 = 100;

/// The box counts every replication benchmark runs at.
pub const BOX_COUNTS: [usize; 3] = [100, 1000, 10_000];

/// Which boxes a [`step`] moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    /// Every box moves every frame.
    All,
    /// Exactly one box in ten moves each frame (those whose index is the frame number modulo
    /// 10), so a different tenth moves every frame.
    TenPercent,
    /// No box moves.
    Still,
}

impl Motion {
    /// Whether box `index` moves at `frame`.
    #[inline]
    pub fn moves(self, index: usize, frame: u32) -> bool {
        match self {
            Motion::All => true,
            Motion::TenPercent => index % 10 == (frame % 10) as usize,
            Motion::Still => false,
        }
    }
}

impl fmt::Display for Motion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Motion::All => "all",
            Motion::TenPercent => "10%",
            Motion::Still => "none",
        })
    }
}

/// Mixes two integers into a well-spread one (a fixed, seedless hash: deterministic).
#[inline]
fn mix(a: u32, b: u32) -> u32 {
    let mut x = (u64::from(a) << 32 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (x >> 32) as u32
}

/// Where box `index` rests: a grid 100 boxes wide, 2 units apart.
fn home(index: usize) -> Vec3 {
    Vec3::new((index % 100) as f32 * 2.0, 0.0, (index / 100) as f32 * 2.0)
}

/// The pose of box `index` at `frame`: bobbing around its home and turning about Y.
fn pose(index: usize, frame: u32) -> (Vec3, Quat) {
    let t = frame as f32 * 0.05 + index as f32 * 0.37;
    let offset = Vec3::new(t.sin(), 0.5 * (t * 0.7).cos(), 0.25 * (t * 1.3).sin());
    (home(index) + offset, Quat::from_rotation_y(t))
}

/// `count` boxes at their frame-0 pose, full health.
pub fn spawn_boxes(count: usize) -> Vec<BoxEntity> {
    (0..count)
        .map(|i| {
            let (position, rotation) = pose(i, 0);
            BoxEntity {
                position,
                rotation,
                health: START_HEALTH,
            }
        })
        .collect()
}

/// Moves the boxes that `motion` selects to their pose at `frame` (about 1 in 100 of them also
/// loses a point of health). Returns how many boxes moved. Deterministic.
pub fn step(boxes: &mut [BoxEntity], frame: u32, motion: Motion) -> usize {
    let mut moved = 0;
    for (i, b) in boxes.iter_mut().enumerate() {
        if !motion.moves(i, frame) {
            continue;
        }
        let (position, rotation) = pose(i, frame);
        b.position = position;
        b.rotation = rotation;
        if mix(i as u32, frame) % 100 == 0 {
            b.health -= 1;
        }
        moved += 1;
    }
    moved
}

/// Writes one snapshot entry for a node with the runtime's own entry writer
/// (`write_entry`): varint `net_id`, varint byte length, then the node's members
/// changed since `since` ([`Capture::write_since`](mf_net::replication::Capture::write_since)). `scratch` is only used by states of 128
/// bytes or more (never by a box).
#[inline]
pub fn write_entry<T: Replicated>(
    w: &mut NetWriter,
    scratch: &mut NetWriter,
    net_id: u32,
    state: &T::State,
    since: u32,
) {
    entry::write_entry(w, net_id, scratch, |w| T::write_since(state, since, w));
}

/// The net id of the box at `index` (ids start at 1, as the replication layer's do).
#[inline]
pub fn net_id(index: usize) -> u32 {
    index as u32 + 1
}

/// Appends an entry ([`write_entry`]) for every box whose state changed after `since`, skipping
/// the others with [`Capture::last_changed`](mf_net::replication::Capture::last_changed), then the terminating 0 (a snapshot's body
/// without its flags byte). Returns how many entries were written.
#[inline]
pub fn encode_changed(states: &[BoxState], since: u32, w: &mut NetWriter) -> usize {
    let mut written = 0;
    let mut scratch = NetWriter::new();
    for (i, state) in states.iter().enumerate() {
        if BoxEntity::last_changed(state) > since {
            write_entry::<BoxEntity>(w, &mut scratch, net_id(i), state, since);
            written += 1;
        }
    }
    w.write_var_u32(0);
    written
}

/// Reads every entry of `bytes` (up to the terminating 0) with the runtime's entry reader
/// (`read_entry`) and applies it to the client's box with that net id
/// ([`Apply::read`](mf_net::replication::Apply::read) on the entry's bytes). Returns how many entries were applied.
///
/// # Errors
/// A malformed entry, an entry whose state does not use all its bytes, or an unknown net id.
#[inline]
pub fn decode_apply(bytes: &[u8], boxes: &mut [BoxEntity]) -> Result<usize, DecodeError> {
    let mut r = NetReader::new(bytes);
    let mut applied = 0;
    while let Some((id, state)) = entry::read_entry(&mut r)? {
        let mut entry = NetReader::new(state);
        let target = (id as usize)
            .checked_sub(1)
            .and_then(|index| boxes.get_mut(index))
            .ok_or(DecodeError::Protocol(ProtocolViolation::UnknownNode))?;
        target.read(&mut entry)?;
        entry.finish()?;
        applied += 1;
    }
    r.finish()?;
    Ok(applied)
}

/// A server's view of `boxes` boxes under one [`Motion`], set up so that every
/// [`capture`](Self::capture) sees the same number of changed boxes.
///
/// It holds two frames of box values — the spawn (frame 0) and the spawn after one [`step`] —
/// and captures them alternately, so each capture finds exactly the boxes that differ between
/// them changed, with no stepping cost in what is measured.
pub struct ReplicationScenario {
    frames: [Vec<BoxEntity>; 2],
    states: Vec<BoxState>,
    tick: u32,
    changed: usize,
}

impl ReplicationScenario {
    /// `boxes` boxes spawned (shadow states stamped at tick 0), nothing captured yet.
    pub fn new(boxes: usize, motion: Motion) -> Self {
        let spawn = spawn_boxes(boxes);
        let mut moved = spawn.clone();
        let changed = step(&mut moved, 1, motion);
        let states = spawn.iter().map(|b| b.new_state(0)).collect();
        Self {
            frames: [spawn, moved],
            states,
            tick: 0,
            changed,
        }
    }

    /// How many boxes there are.
    pub fn boxes(&self) -> usize {
        self.states.len()
    }

    /// How many boxes every capture finds changed.
    pub fn changed(&self) -> usize {
        self.changed
    }

    /// The tick of the last capture (0 before the first).
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// The server's shadow states.
    pub fn states(&self) -> &[BoxState] {
        &self.states
    }

    /// The box values as of the last capture.
    pub fn server_boxes(&self) -> &[BoxEntity] {
        &self.frames[(self.tick % 2) as usize]
    }

    /// A client's copy of the boxes as spawned (what it holds before the first update).
    pub fn client_boxes(&self) -> Vec<BoxEntity> {
        self.frames[0].clone()
    }

    /// Server change detection for one tick: advances the tick and captures every box of the
    /// other frame into its shadow. Returns how many boxes changed.
    #[inline]
    pub fn capture(&mut self) -> usize {
        self.tick += 1;
        let frame = &self.frames[(self.tick % 2) as usize];
        let mut changed = 0;
        for (b, state) in frame.iter().zip(&mut self.states) {
            changed += usize::from(b.capture(state, self.tick));
        }
        changed
    }

    /// Encodes the boxes changed at the last capture (changed since the tick before, which the
    /// client acknowledged) into `w` ([`encode_changed`]). Returns how many were written.
    #[inline]
    pub fn encode(&self, w: &mut NetWriter) -> usize {
        encode_changed(&self.states, self.tick.saturating_sub(1), w)
    }

    /// The values of the boxes changed at the last capture, as [`PlainBox`]es in net id order:
    /// what the bitcode reference encodes.
    pub fn changed_plain(&self) -> Vec<PlainBox> {
        let since = self.tick.saturating_sub(1);
        self.server_boxes()
            .iter()
            .zip(&self.states)
            .filter(|(_, state)| BoxEntity::last_changed(state) > since)
            .map(|(b, _)| PlainBox::from(b))
            .collect()
    }
}

/// A box as plain data for the `bitcode` reference: the same values, no change detection.
#[derive(bitcode::Encode, bitcode::Decode, Debug, Clone, Copy, PartialEq)]
pub struct PlainBox {
    /// [`BoxEntity::position`] as an array.
    pub position: [f32; 3],
    /// [`BoxEntity::rotation`] as an array (x, y, z, w).
    pub rotation: [f32; 4],
    /// [`BoxEntity::health`].
    pub health: i32,
}

impl From<&BoxEntity> for PlainBox {
    fn from(b: &BoxEntity) -> Self {
        Self {
            position: b.position.to_array(),
            rotation: b.rotation.to_array(),
            health: b.health,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Snapshot fixtures (the `Multiplayer` runtime)
// ---------------------------------------------------------------------------------------------

/// The scene index of [`box_library`]'s only scene, `box`.
pub const BOX_SCENE: SceneIndex = SceneIndex::new(0);

/// A box type the snapshot fixtures replicate: [`BoxEntity`], or [`InterpBox`] (the same
/// members, position and rotation interpolated on clients).
pub trait BenchBox: Replicated + Clone + PartialEq + fmt::Debug {
    /// The same values as `b`.
    fn from_box(b: &BoxEntity) -> Self;
}

impl BenchBox for BoxEntity {
    fn from_box(b: &BoxEntity) -> Self {
        b.clone()
    }
}

/// [`BoxEntity`] with `#[replicated(interpolate)]` position and rotation: the same bytes on
/// the wire, but a client buffers those members per snapshot and blends them every frame.
#[derive(Replicated, Debug, Clone, PartialEq)]
pub struct InterpBox {
    /// Where the box is (interpolated).
    #[replicated(interpolate)]
    pub position: Vec3,
    /// How it is turned (interpolated).
    #[replicated(interpolate)]
    pub rotation: Quat,
    /// Changes for about 1 in 100 moving boxes per frame (snapped).
    #[replicated]
    pub health: i32,
}

impl BenchBox for InterpBox {
    fn from_box(b: &BoxEntity) -> Self {
        Self {
            position: b.position,
            rotation: b.rotation,
            health: b.health,
        }
    }
}

/// The spawnable scenes of the snapshot fixtures (both ends register the same): scene 0,
/// `box`, one `T` at the root.
pub fn box_library<T: BenchBox>() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("box", |scene, root| {
            scene.set_value(
                root,
                T::from_box(&BoxEntity {
                    position: Vec3::ZERO,
                    rotation: Quat::IDENTITY,
                    health: START_HEALTH,
                }),
            )
        })
        .expect("a fresh library takes the scene");
    scenes
}

/// The replication message id of a snapshot (bytes 1–2 of its header).
const SNAPSHOT_ID: u16 = message_ids::SNAPSHOT;

/// The transport of the snapshot fixtures: a [`LoopbackTransport`] for the handshake and the
/// spawns, then switched to **replay** mode, where it takes no part in what is measured:
///
/// - `send` only counts the bytes (no copy into a transport buffer, nothing queued);
/// - `poll_event` hands out one stored snapshot packet per [`arm`](Self::arm), its header tick
///   advanced each time so the client takes it as new (no copy: the bytes are lent);
/// - `flush` and `advance` do nothing.
///
/// In loopback mode it can also keep a copy of the last snapshot packet it received
/// ([`capture_snapshots`](Self::capture_snapshots)), which is what the replay hands out.
pub struct BenchTransport {
    inner: LoopbackTransport,
    replay: bool,
    capture: bool,
    armed: bool,
    packet: Vec<u8>,
    tick: u32,
    stats: TransportStats,
}

impl BenchTransport {
    /// Loopback mode over `inner`.
    pub fn new(inner: LoopbackTransport) -> Self {
        Self {
            inner,
            replay: false,
            capture: false,
            armed: false,
            packet: Vec::new(),
            tick: 0,
            stats: TransportStats::default(),
        }
    }

    /// Keep a copy of every snapshot packet received (loopback mode); the last one is replayed.
    pub fn capture_snapshots(&mut self, on: bool) {
        self.capture = on;
    }

    /// The last snapshot packet captured (empty if none).
    pub fn captured(&self) -> &[u8] {
        &self.packet
    }

    /// Switches to replay mode: sends are counted and dropped; [`arm`](Self::arm) makes the
    /// next poll return the captured snapshot packet with a tick after `tick`.
    pub fn start_replay(&mut self, tick: u32) {
        self.replay = true;
        self.tick = tick;
    }

    /// Makes the next [`poll_event`](Transport::poll_event) return the captured snapshot once,
    /// with the next tick written into its header.
    #[inline]
    pub fn arm(&mut self) {
        self.tick = self.tick.wrapping_add(1);
        self.packet[3..7].copy_from_slice(&self.tick.to_le_bytes());
        self.armed = true;
    }

    /// Bytes and packets handed to `send` in replay mode.
    pub fn replay_stats(&self) -> TransportStats {
        self.stats
    }
}

impl Transport for BenchTransport {
    #[inline]
    fn send(
        &mut self,
        peer: PeerId,
        channel: Channel,
        data: &[u8],
    ) -> Result<(), mf_net::transport::SendError> {
        if !self.replay {
            return self.inner.send(peer, channel, data);
        }
        self.stats.bytes_sent += data.len() as u64;
        self.stats.packets_sent += 1;
        Ok(())
    }

    #[inline]
    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        if self.replay {
            if !std::mem::take(&mut self.armed) {
                return None;
            }
            self.stats.bytes_received += self.packet.len() as u64;
            self.stats.packets_received += 1;
            return Some(TransportEvent::Received {
                peer: PeerId::SERVER,
                channel: Channel::Unreliable,
                data: &self.packet,
            });
        }
        let event = self.inner.poll_event();
        if let Some(TransportEvent::Received { data, .. }) = &event {
            if self.capture && data.len() >= 7 && data[1..3] == SNAPSHOT_ID.to_le_bytes() {
                self.packet.clear();
                self.packet.extend_from_slice(data);
            }
        }
        event
    }

    fn advance(&mut self, dt: Duration) {
        if !self.replay {
            self.inner.advance(dt);
        }
    }

    fn flush(&mut self) {
        if !self.replay {
            self.inner.flush();
        }
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        if !self.replay {
            self.inner.disconnect(peer, reason);
        }
    }

    fn stats(&self) -> TransportStats {
        self.stats
    }
}

/// A [`Multiplayer`] over [`BenchTransport`].
pub type BenchMultiplayer = Multiplayer<BenchTransport>;

/// The frame length of the snapshot fixtures: one network tick at the default 30 Hz.
pub const FRAME: Duration = Duration::from_nanos(1_000_000_000 / 30);

/// A server and one client over loopback, `boxes` boxes spawned on both, then the boxes that
/// `motion` moves at frame 1 moved on the server (not yet captured). The starting point of
/// [`EncodeSnapshotFixture`] and [`DecodeSnapshotFixture`].
pub struct SnapshotWorld<T: BenchBox = BoxEntity> {
    /// The server.
    pub server: BenchMultiplayer,
    /// The client.
    pub client: BenchMultiplayer,
    /// The server's boxes, in net id order.
    pub handles: Vec<NetRef<T>>,
    /// The boxes' values as moved.
    pub moved: Vec<BoxEntity>,
    /// How many boxes moved.
    pub changed: usize,
}

impl<T: BenchBox> SnapshotWorld<T> {
    /// Runs one frame of the server, then of the client.
    pub fn frame(&mut self) {
        for mp in [&mut self.server, &mut self.client] {
            mp.begin_frame(FRAME);
            mp.end_frame();
        }
    }

    /// Connects, spawns `boxes` boxes (their frame-0 pose), lets the client apply the spawns,
    /// then moves the boxes `motion` moves at frame 1 on the server.
    pub fn new(boxes: usize, motion: Motion) -> Self {
        let net = LoopbackNetwork::new();
        let messages = MessageRegistry::new(1);
        // Neither side waits for the other in the benchmarks: no timeouts. The byte format,
        // whose figures these benchmarks have followed since the start (the bit-packed one is
        // measured by `scale -- encoding`).
        let config = MultiplayerConfig {
            peer_timeout: Duration::MAX,
            handshake_timeout: Duration::MAX,
            snapshot_encoding: SnapshotEncoding::Bytes,
            ..MultiplayerConfig::default()
        };
        let mut server = BenchMultiplayer::new(box_library::<T>(), config);
        let listen = net.listen("bench", 4).expect("a fresh network");
        server
            .start_server(BenchTransport::new(listen), messages.clone())
            .expect("the server starts");
        let mut client = BenchMultiplayer::new(box_library::<T>(), config);
        client
            .start_client(
                |data| BenchTransport::new(net.connect("bench", data)),
                messages,
            )
            .expect("the client starts");
        let mut world = Self {
            server,
            client,
            handles: Vec::with_capacity(boxes),
            moved: Vec::new(),
            changed: 0,
        };
        for _ in 0..4 {
            world.frame();
        }
        assert_eq!(world.server.peers().len(), 1, "the client joined");

        let spawn = spawn_boxes(boxes);
        let root = world.server.scene().root();
        for b in &spawn {
            let node = world
                .server
                .spawn(BOX_SCENE, root, PeerId::SERVER)
                .expect("the box scene spawns");
            let handle = world
                .server
                .scene()
                .net_ref::<T>(node)
                .expect("a box at the root");
            *world
                .server
                .scene_mut()
                .get_mut(handle)
                .expect("just spawned") = T::from_box(b);
            world.handles.push(handle);
        }
        for _ in 0..3 {
            world.frame();
        }
        assert_eq!(
            world.client.stats().networked_nodes,
            boxes,
            "spawns applied"
        );

        let mut moved = spawn;
        world.changed = step(&mut moved, 1, motion);
        for (&handle, b) in world.handles.iter().zip(&moved) {
            *world.server.scene_mut().get_mut(handle).expect("alive") = T::from_box(b);
        }
        world.moved = moved;
        world
    }

    /// Whether the client's boxes equal the server's (in net id order).
    pub fn converged(&self) -> bool {
        let values = |mp: &BenchMultiplayer| -> Vec<T> {
            mp.scene().iter::<T>().map(|(_, b)| b.clone()).collect()
        };
        values(&self.server) == values(&self.client)
    }
}

/// A server with one ready client that never acknowledges (`encode_snapshot`).
///
/// The boxes moved once after the client's last ack, and nothing changes afterwards, so every
/// network tick captures nothing new but sends the client the same snapshot: an entry for every
/// moved box, exactly what a client that acknowledged the previous tick gets when those boxes
/// move every tick. The transport is in replay mode: the packet is counted, not copied.
pub struct EncodeSnapshotFixture {
    /// The server and client (the client is no longer run).
    pub world: SnapshotWorld,
}

impl EncodeSnapshotFixture {
    /// `boxes` boxes, `motion` deciding which moved; the first snapshot with them sent.
    pub fn new(boxes: usize, motion: Motion) -> Self {
        let mut world = SnapshotWorld::new(boxes, motion);
        world
            .server
            .bus_mut()
            .expect("running")
            .transport_mut()
            .start_replay(0);
        let mut fixture = Self { world };
        fixture.server_frame();
        fixture
    }

    /// The same server with nothing moved since the client's last ack: every tick sends the
    /// idle snapshot (9 bytes) but still scans every box.
    pub fn idle(boxes: usize) -> Self {
        let mut world = SnapshotWorld::new(boxes, Motion::All);
        let spawn = spawn_boxes(boxes);
        for (&handle, b) in world.handles.iter().zip(&spawn) {
            *world.server.scene_mut().get_mut(handle).expect("alive") = b.clone();
        }
        world.changed = 0;
        world
            .server
            .bus_mut()
            .expect("running")
            .transport_mut()
            .start_replay(0);
        let mut fixture = Self { world };
        fixture.server_frame();
        fixture
    }

    /// One server frame, which is one network tick: `begin_frame` (nothing to receive) and
    /// `end_frame` (despawn check, timeouts, capture of every box, the client's snapshot,
    /// stats). Returns the snapshot's size in bytes, header included.
    #[inline]
    pub fn server_frame(&mut self) -> usize {
        let server = &mut self.world.server;
        server.begin_frame(FRAME);
        server.end_frame();
        server.stats().last_snapshot_bytes
    }

    /// How many boxes each snapshot carries.
    pub fn changed(&self) -> usize {
        self.world.changed
    }
}

/// A client that has every box, fed the same snapshot (every moved box) with a new tick each
/// frame (`decode_snapshot`).
pub struct DecodeSnapshotFixture<T: BenchBox = BoxEntity> {
    /// The server (no longer run) and client.
    pub world: SnapshotWorld<T>,
}

impl<T: BenchBox> DecodeSnapshotFixture<T> {
    /// `boxes` boxes, `motion` deciding which moved: the server sends the snapshot with the
    /// moved boxes, the client applies it (keeping a copy of the packet) and switches to
    /// replaying it.
    pub fn new(boxes: usize, motion: Motion) -> Self {
        let mut world = SnapshotWorld::new(boxes, motion);
        world
            .client
            .bus_mut()
            .expect("running")
            .transport_mut()
            .capture_snapshots(true);
        world.frame();
        // Interpolated members show a blend from the past, not the newest values.
        let snapped = !T::INTERPOLATED;
        assert!(
            !snapped || world.converged(),
            "the client applied the moved boxes"
        );
        // Set the client's boxes back, so the first replay visibly applies.
        let spawn = spawn_boxes(boxes);
        let handles: Vec<NetRef<T>> = world.client.scene().iter::<T>().map(|(h, _)| h).collect();
        for (h, b) in handles.into_iter().zip(&spawn) {
            *world.client.scene_mut().get_mut(h).expect("alive") = T::from_box(b);
        }
        let tick = world.client.tick();
        let transport = world.client.bus_mut().expect("running").transport_mut();
        transport.capture_snapshots(false);
        transport.start_replay(tick);
        let mut fixture = Self { world };
        let applied = fixture.client_frame();
        assert!(applied > 0, "the replayed snapshot applies");
        assert!(
            !snapped || fixture.world.converged(),
            "the replayed snapshot applies"
        );
        fixture
    }

    /// The size of the replayed snapshot packet, header included.
    pub fn snapshot_bytes(&self) -> usize {
        self.world
            .client
            .bus()
            .expect("running")
            .transport()
            .captured()
            .len()
    }

    /// One client frame receiving one snapshot: `begin_frame` (the bus copies the packet,
    /// checks the header; the client reads every entry, finds the node and applies the state —
    /// for [`InterpBox`] the interpolated members go into the node's interpolation buffer and
    /// the frame blends every box —, queues the ack) and `end_frame` (sends the ack, stats). Returns the snapshots applied so
    /// far.
    #[inline]
    pub fn client_frame(&mut self) -> u64 {
        let client = &mut self.world.client;
        client.bus_mut().expect("running").transport_mut().arm();
        client.begin_frame(FRAME);
        client.end_frame();
        client.stats().snapshots_applied
    }

    /// How many boxes each snapshot carries.
    pub fn changed(&self) -> usize {
        self.world.changed
    }
}

// ---------------------------------------------------------------------------------------------
// Scale fixtures (one server, 64 clients, real acknowledgements)
// ---------------------------------------------------------------------------------------------

/// [`BoxEntity`] with a quantized position (16 bits per axis over ±1000) and a smallest-three
/// rotation (12 bits per component): 6 + 5 bytes on the wire instead of 12 + 16.
#[derive(Replicated, Debug, Clone, PartialEq)]
pub struct QuantBox {
    /// Where the box is (quantized: 16 bits per axis over -1000..=1000).
    #[replicated(quantize(min = -1000.0, max = 1000.0, bits = 16))]
    pub position: Vec3,
    /// How it is turned (quantized: smallest three, 12 bits each).
    #[replicated(quantize(smallest_three, bits = 12))]
    pub rotation: Quat,
    /// Changes for about 1 in 100 moving boxes per frame (not quantized).
    #[replicated]
    pub health: i32,
}

impl BenchBox for QuantBox {
    fn from_box(b: &BoxEntity) -> Self {
        Self {
            position: b.position,
            rotation: b.rotation,
            health: b.health,
        }
    }
}

/// How many clients a [`ScaleWorld`] connects.
pub const SCALE_CLIENTS: usize = 64;

/// The box counts the `scale` benchmarks run at.
pub const SCALE_BOXES: [usize; 2] = [1000, 10_000];

/// The byte budgets (`MultiplayerConfig::max_snapshot_bytes`) the `scale` benchmarks run
/// with: none (0) and 1200 bytes (a typical internet MTU).
pub const SCALE_BUDGETS: [usize; 2] = [0, 1200];

/// Frames a [`ScaleWorld`] runs after the spawns before it is handed out: more than the
/// server's ring of 64 snapshots per client, so that every ring entry, packet buffer and
/// queue has reached its steady size.
pub const SCALE_WARM_UP_FRAMES: usize = 70;

/// How many boxes one spawn of [`row_library`]'s scene holds.
pub const SCALE_ROW: usize = 100;

/// The scene index of [`row_library`]'s only scene, `box_row`.
pub const ROW_SCENE: SceneIndex = SceneIndex::new(0);

/// The spawnable scenes of a [`ScaleWorld`] (every peer registers the same): scene 0,
/// `box_row`, [`SCALE_ROW`] `T`s — one at the instance root, the others its children `b1`,
/// `b2`, … — so that one spawn networks a row of boxes with consecutive net ids.
///
/// A [`ScaleWorld`] spawns rows rather than single boxes because a client's spawn handling
/// grows with the nodes it has: each spawn message re-walks the client's networked nodes
/// (interpolation sync) and each new node's name is compared with its siblings', so spawning
/// 10 000 boxes one by one to 64 clients takes minutes; rows of 100 take seconds. What is
/// measured after the spawns does not depend on where the boxes sit in the tree.
pub fn row_library<T: BenchBox>() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("box_row", |scene, root| {
            let value = || {
                T::from_box(&BoxEntity {
                    position: Vec3::ZERO,
                    rotation: Quat::IDENTITY,
                    health: START_HEALTH,
                })
            };
            scene.set_value(root, value())?;
            for k in 1..SCALE_ROW {
                let child = scene.add(root, &format!("b{k}"))?;
                scene.set_value(child, value())?;
            }
            Ok(())
        })
        .expect("a fresh library takes the scene");
    scenes
}

/// A [`Multiplayer`] over a plain [`LoopbackTransport`] (what a [`ScaleWorld`] runs).
pub type ScaleMultiplayer = Multiplayer<LoopbackTransport>;

/// How a [`ScaleWorld`]'s server and clients reach each other over its [`LoopbackNetwork`].
pub trait Link {
    /// The server's transport.
    type Server: Transport + 'static;
    /// A client's transport.
    type Client: Transport + 'static;
    /// The server's transport, listening for `clients` clients.
    fn listen(network: &LoopbackNetwork, clients: usize) -> Self::Server;
    /// Client `index`'s transport (from 0), connecting with `connect_data`.
    fn connect(network: &LoopbackNetwork, index: usize, connect_data: u32) -> Self::Client;
}

/// Plain loopback: packets cost a copy (the default).
pub struct Plain;

impl Link for Plain {
    type Server = LoopbackTransport;
    type Client = LoopbackTransport;

    fn listen(network: &LoopbackNetwork, clients: usize) -> LoopbackTransport {
        network.listen("scale", clients).expect("a fresh network")
    }

    fn connect(network: &LoopbackNetwork, _: usize, connect_data: u32) -> LoopbackTransport {
        network.connect("scale", connect_data)
    }
}

/// The secure layer over loopback ([`secure::server`], [`secure::client`]): every packet
/// sealed by its sender and opened by its receiver, as a deployed game's are.
pub struct Sealed;

impl Link for Sealed {
    type Server = SecureServer<LoopbackTransport>;
    type Client = SecureClient<LoopbackTransport>;

    fn listen(network: &LoopbackNetwork, clients: usize) -> Self::Server {
        secure::server(network, clients)
    }

    fn connect(network: &LoopbackNetwork, index: usize, connect_data: u32) -> Self::Client {
        secure::client(network, index as u64 + 1, connect_data)
    }
}

/// The parts of one [`ScaleWorld`] frame, in order; [`ScaleWorld::next_stage`] is the one
/// that runs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The server moves the boxes the world's [`Motion`] picks ([`step`]).
    Move,
    /// The server's `begin_frame`: receives the 64 clients' acks of the previous tick.
    ServerBegin,
    /// The server's `end_frame`: capture of every box, one snapshot per client.
    ServerEnd,
    /// Every client's `begin_frame` (receive and apply its snapshot, interpolation blending)
    /// and `end_frame` (send the ack).
    Clients,
}

impl Stage {
    fn after(self) -> Self {
        match self {
            Stage::Move => Stage::ServerBegin,
            Stage::ServerBegin => Stage::ServerEnd,
            Stage::ServerEnd => Stage::Clients,
            Stage::Clients => Stage::Move,
        }
    }
}

/// Whether client `client` runs its frame at frame `frame` when the clients run at `paces`
/// different paces: client `i` every `1 + i % paces` frames, at a phase of its own (so that
/// the clients stand 1 to `paces` ticks behind the server, in no particular order).
pub fn client_runs(frame: u32, client: u32, paces: u32) -> bool {
    frame.wrapping_add(client) % (1 + client % paces.max(1)) == 0
}

/// One server and [`SCALE_CLIENTS`] clients, all real [`Multiplayer`] instances over one
/// [`LoopbackNetwork`] (reached through the [`Link`] `L`: [`Plain`], or [`Sealed`] by the
/// secure layer), replicating `boxes` boxes of type `T` that the server moves every frame; the
/// clients really acknowledge (the `scale` benchmarks and the tests crate's `scale_alloc` test).
///
/// One frame is one network tick (the frame length is exactly one tick interval of the
/// config's `tick_rate`) and runs the [`Stage`]s in order: [`Move`](Stage::Move), the server's
/// [`ServerBegin`](Stage::ServerBegin) (the acks the clients sent in the previous frame) and
/// [`ServerEnd`](Stage::ServerEnd) (capture, 64 snapshots), then the
/// [`Clients`](Stage::Clients) (each applies its snapshot and sends its ack). A benchmark
/// runs the stages it does not measure with [`advance_to`](Self::advance_to), untimed, then
/// times one of [`server_tick`](Self::server_tick), [`server_begin`](Self::server_begin) or
/// [`client_frames`](Self::client_frames).
///
/// Deterministic: the boxes' motion is [`step`]'s, time is only the frame length passed in.
pub struct ScaleWorld<T: BenchBox = BoxEntity, L: Link = Plain> {
    /// The server.
    pub server: Multiplayer<L::Server>,
    /// The clients, in connection order.
    pub clients: Vec<Multiplayer<L::Client>>,
    /// The server's boxes, in net id order.
    pub handles: Vec<NetRef<T>>,
    boxes: Vec<BoxEntity>,
    motion: Motion,
    frame: u32,
    dt: Duration,
    next: Stage,
    /// Client `i` runs its frame every `1 + i % paces` frames (see [`set_paces`](Self::set_paces)).
    paces: u32,
}

impl<T: BenchBox, L: Link> ScaleWorld<T, L> {
    /// A server and [`SCALE_CLIENTS`] clients connected, `boxes` boxes spawned (their frame-0
    /// pose) and applied by every client, then [`SCALE_WARM_UP_FRAMES`] frames run (the boxes
    /// `motion` picks moving). `budget` is the server's `max_snapshot_bytes` (0: none); every
    /// other setting is the default (30 Hz, interpolation enabled).
    ///
    /// # Panics
    /// If a client does not join, or does not get every spawn, within a bounded number of
    /// frames.
    pub fn new(boxes: usize, motion: Motion, budget: usize) -> Self {
        Self::with_clients(boxes, motion, budget, SCALE_CLIENTS, SCALE_WARM_UP_FRAMES)
    }

    /// [`new`](Self::new) with `clients` clients and `warm_up` warm-up frames (the `scale`
    /// benchmarks' small world when they run as tests, see [`running_as_test`]).
    ///
    /// # Panics
    /// As [`new`](Self::new).
    pub fn with_clients(
        boxes: usize,
        motion: Motion,
        budget: usize,
        clients: usize,
        warm_up: usize,
    ) -> Self {
        let mut world = Self::spawned_with(boxes, motion, budget, clients);
        world.run_frames(warm_up);
        world
    }

    /// [`new`](Self::new) without the warm-up frames: the boxes spawned and applied by every
    /// client, nothing moved yet. The boxes are spawned [`SCALE_ROW`] at a time
    /// ([`row_library`]); box `i` has net id `i + 1`.
    ///
    /// # Panics
    /// As [`new`](Self::new), and if `boxes` is not a multiple of [`SCALE_ROW`].
    pub fn spawned(boxes: usize, motion: Motion, budget: usize) -> Self {
        Self::spawned_with(boxes, motion, budget, SCALE_CLIENTS)
    }

    /// [`new`](Self::new) with snapshots in `encoding`, no budget, and `clients` clients (and
    /// the short warm-up of [`with_clients`](Self::with_clients) when `clients` is not
    /// [`SCALE_CLIENTS`]).
    ///
    /// # Panics
    /// As [`new`](Self::new).
    pub fn encoded(
        boxes: usize,
        motion: Motion,
        encoding: SnapshotEncoding,
        clients: usize,
    ) -> Self {
        let config = MultiplayerConfig {
            snapshot_encoding: encoding,
            ..MultiplayerConfig::default()
        };
        let mut world = Self::spawned_as(boxes, motion, config, clients);
        let warm_up = match clients {
            SCALE_CLIENTS => SCALE_WARM_UP_FRAMES,
            _ => 4,
        };
        world.run_frames(warm_up);
        world
    }

    fn spawned_with(boxes: usize, motion: Motion, budget: usize, clients: usize) -> Self {
        let config = MultiplayerConfig {
            max_snapshot_bytes: budget,
            snapshot_encoding: SnapshotEncoding::Bytes,
            ..MultiplayerConfig::default()
        };
        Self::spawned_as(boxes, motion, config, clients)
    }

    /// A server and `clients` clients connected over the `encoding`, the server having just
    /// spawned `boxes` idle boxes that no client has received yet: a burst of spawns, as a
    /// late joiner to a large world gets. [`run_until_spawned`](Self::run_until_spawned)
    /// delivers them.
    ///
    /// # Panics
    ///
    /// If `boxes` is not a multiple of [`SCALE_ROW`], or a client fails to join.
    pub fn spawning(boxes: usize, encoding: SnapshotEncoding, clients: usize) -> Self {
        let config = MultiplayerConfig {
            snapshot_encoding: encoding,
            ..MultiplayerConfig::default()
        };
        let mut world = Self::joined(boxes, Motion::Still, config, clients);
        world.spawn_rows();
        world
    }

    /// Runs frames until every client has applied every spawn.
    ///
    /// # Panics
    ///
    /// If the spawns are not all applied within 100 frames.
    pub fn run_until_spawned(&mut self) {
        let boxes = self.boxes.len();
        self.run_until("every client applied every spawn", |w| {
            w.clients.iter().all(|c| c.stats().networked_nodes == boxes)
        });
    }

    fn spawned_as(boxes: usize, motion: Motion, config: MultiplayerConfig, clients: usize) -> Self {
        let mut world = Self::joined(boxes, motion, config, clients);
        world.spawn_rows();
        world.run_until_spawned();
        world
    }

    /// A server and `clients` clients connected, `boxes` boxes' poses made but not spawned.
    fn joined(boxes: usize, motion: Motion, config: MultiplayerConfig, clients: usize) -> Self {
        let net = LoopbackNetwork::new();
        let messages = MessageRegistry::new(1);
        let dt = Duration::from_secs(1) / u32::from(config.tick_rate.max(1));
        assert_eq!(boxes % SCALE_ROW, 0, "boxes come in rows of {SCALE_ROW}");
        let mut server = Multiplayer::new(row_library::<T>(), config);
        server
            .start_server(L::listen(&net, clients), messages.clone())
            .expect("the server starts");
        let clients = (0..clients)
            .map(|i| {
                let mut client = Multiplayer::new(row_library::<T>(), config);
                client
                    .start_client(|data| L::connect(&net, i, data), messages.clone())
                    .expect("the client starts");
                client
            })
            .collect();
        let mut world = Self {
            server,
            clients,
            handles: Vec::with_capacity(boxes),
            boxes: spawn_boxes(boxes),
            motion,
            frame: 0,
            dt,
            next: Stage::Move,
            paces: 1,
        };
        world.run_until("every client joined", |w| {
            w.server.peers().len() == w.clients.len()
        });
        world
    }

    /// Spawns the boxes on the server, in rows, each at its pose.
    fn spawn_rows(&mut self) {
        let root = self.server.scene().root();
        for _ in 0..self.boxes.len() / SCALE_ROW {
            self.server
                .spawn(ROW_SCENE, root, PeerId::SERVER)
                .expect("the row scene spawns");
        }
        for (i, b) in self.boxes.iter().enumerate() {
            let node = NetId::new(net_id(i))
                .and_then(|id| self.server.node(id))
                .expect("net ids are consecutive from 1");
            let handle = self
                .server
                .scene()
                .net_ref::<T>(node)
                .expect("every row node holds a box");
            *self
                .server
                .scene_mut()
                .get_mut(handle)
                .expect("just spawned") = T::from_box(b);
            self.handles.push(handle);
        }
    }

    /// Runs setup frames (server, then every client; nothing moves) until `done` holds after
    /// one, at most 100.
    fn run_until(&mut self, what: &str, done: impl Fn(&Self) -> bool) {
        for _ in 0..100 {
            self.server.begin_frame(self.dt);
            self.server.end_frame();
            for client in &mut self.clients {
                client.begin_frame(self.dt);
                client.end_frame();
            }
            if done(self) {
                return;
            }
        }
        panic!("not reached in 100 frames: {what}");
    }

    /// How many boxes there are.
    pub fn boxes(&self) -> usize {
        self.handles.len()
    }

    /// The frame length: one network tick.
    pub fn dt(&self) -> Duration {
        self.dt
    }

    /// The stage that runs next.
    pub fn next_stage(&self) -> Stage {
        self.next
    }

    /// Which boxes move from the next frame on.
    pub fn set_motion(&mut self, motion: Motion) {
        self.motion = motion;
    }

    /// From the next frame on, client `i` runs its frame (receives its snapshots, acknowledges
    /// them) every `1 + i % paces` frames, at a phase of its own: with `paces` above 1, the
    /// clients stand 1 to `paces` ticks behind the server when its tick begins, in no
    /// particular order, as clients at different round trips do. 1 (the default): every
    /// client every frame.
    pub fn set_paces(&mut self, paces: u32) {
        self.paces = paces.max(1);
    }

    /// The clients' frames of this frame: each client whose turn it is (see
    /// [`set_paces`](Self::set_paces)).
    fn run_clients(&mut self) {
        let (frame, paces, dt) = (self.frame, self.paces, self.dt);
        for (i, client) in (0u32..).zip(&mut self.clients) {
            if client_runs(frame, i, paces) {
                client.begin_frame(dt);
                client.end_frame();
            }
        }
    }

    /// Runs the next stage.
    pub fn run_stage(&mut self) {
        match self.next {
            Stage::Move => {
                self.frame = self.frame.wrapping_add(1);
                let (frame, motion) = (self.frame, self.motion);
                step(&mut self.boxes, frame, motion);
                let scene = self.server.scene_mut();
                for (i, (&handle, b)) in self.handles.iter().zip(&self.boxes).enumerate() {
                    if motion.moves(i, frame) {
                        *scene.get_mut(handle).expect("a box stays spawned") = T::from_box(b);
                    }
                }
            }
            Stage::ServerBegin => self.server.begin_frame(self.dt),
            Stage::ServerEnd => self.server.end_frame(),
            Stage::Clients => self.run_clients(),
        }
        self.next = self.next.after();
    }

    /// Runs stages until `stage` is the next one (none if it is already).
    pub fn advance_to(&mut self, stage: Stage) {
        while self.next != stage {
            self.run_stage();
        }
    }

    /// Runs whole frames: `frames` times every stage, starting where the world stands.
    pub fn run_frames(&mut self, frames: usize) {
        for _ in 0..frames * 4 {
            self.run_stage();
        }
    }

    /// The server's frame, [`ServerBegin`](Stage::ServerBegin) and
    /// [`ServerEnd`](Stage::ServerEnd): the acks of the previous tick, capture of every box, a
    /// snapshot for every client. Returns the snapshots the server has sent in all.
    ///
    /// # Panics
    /// Unless [`ServerBegin`](Stage::ServerBegin) is the next stage (a benchmark runs one
    /// iteration per sample: `sample_size = 1`).
    #[inline]
    pub fn server_tick(&mut self) -> u64 {
        self.expect(Stage::ServerBegin);
        self.server.begin_frame(self.dt);
        self.server.end_frame();
        self.next = Stage::Clients;
        self.server.stats().snapshots_sent
    }

    /// The server's `begin_frame` alone ([`ServerBegin`](Stage::ServerBegin)): receiving and
    /// applying the clients' acks. Returns the newest tick the first client acknowledged.
    ///
    /// # Panics
    /// As [`server_tick`](Self::server_tick).
    #[inline]
    pub fn server_begin(&mut self) -> u32 {
        self.expect(Stage::ServerBegin);
        self.server.begin_frame(self.dt);
        self.next = Stage::ServerEnd;
        let first = self.clients[0].local_peer_id();
        self.server
            .peer_stats(first)
            .map_or(0, |s| s.acknowledged_tick)
    }

    /// Every client's frame ([`Clients`](Stage::Clients)): each receives and applies its
    /// snapshot (and blends its interpolated members), then acknowledges it. Returns the
    /// snapshots the first client has applied in all.
    ///
    /// # Panics
    /// Unless [`Clients`](Stage::Clients) is the next stage (one iteration per sample).
    #[inline]
    pub fn client_frames(&mut self) -> u64 {
        self.expect(Stage::Clients);
        self.run_clients();
        self.next = Stage::Move;
        self.clients[0].stats().snapshots_applied
    }

    fn expect(&self, stage: Stage) {
        assert_eq!(
            self.next, stage,
            "the scale benchmarks run one iteration per sample (sample_size = 1)"
        );
    }

    /// Whether every client holds the server's values (compared in column order, which
    /// agrees on every peer while no box was removed).
    pub fn clients_match_server(&self) -> bool {
        let server = values::<T, _>(&self.server);
        self.clients.iter().all(|c| values::<T, _>(c) == server)
    }

    /// Whether every client has acknowledged the server's newest tick but one, i.e. acks flow
    /// every frame. Holds between frames (the next stage is [`Move`](Stage::Move) or
    /// [`ServerBegin`](Stage::ServerBegin)): the acks of the newest tick are on their way.
    pub fn acks_keep_up(&self) -> bool {
        self.acks_within(1)
    }

    /// Whether every client has acknowledged one of the server's `ticks` newest ticks but
    /// the newest (between frames, as [`acks_keep_up`](Self::acks_keep_up), which is
    /// `acks_within(1)`).
    pub fn acks_within(&self, ticks: u32) -> bool {
        let newest = self.server.tick().wrapping_sub(1);
        self.clients.iter().all(|c| {
            self.server
                .peer_stats(c.local_peer_id())
                .is_some_and(|s| newest.wrapping_sub(s.acknowledged_tick) < ticks)
        })
    }
}

/// The `T` values of `mp`'s scene, in column order.
fn values<T: BenchBox, Tr: Transport + 'static>(mp: &Multiplayer<Tr>) -> Vec<T> {
    mp.scene().iter::<T>().map(|(_, b)| b.clone()).collect()
}

// ---------------------------------------------------------------------------------------------
// Bus fixtures
// ---------------------------------------------------------------------------------------------

/// The message the bus benchmarks send: a typical client input (21 payload bytes, 28 with the
/// header).
#[derive(NetCodec, Debug, Clone, Copy, PartialEq)]
pub struct PlayerInput {
    /// The client tick it was sampled at.
    pub tick: u32,
    /// Movement axes.
    pub movement: Vec3,
    /// Look direction.
    pub yaw: f32,
    /// Button bits.
    pub buttons: u8,
}

/// A deterministic input for sequence number `seq`.
pub fn sample_input(seq: u32) -> PlayerInput {
    PlayerInput {
        tick: seq,
        movement: Vec3::new(1.0, 0.0, -0.5),
        yaw: seq as f32 * 0.01,
        buttons: (seq & 0x0f) as u8,
    }
}

/// The registry both ends of the bus benchmarks use.
pub fn bus_registry() -> MessageRegistry {
    let mut registry = MessageRegistry::new(1);
    registry
        .register::<PlayerInput>()
        .expect("a fresh registry takes the type");
    registry
}

/// A client bus sending into a loopback transport whose other end is a raw transport that
/// drains what arrives (no bus there: only the sending side is measured).
pub struct SendFixture {
    bus: MessageBus<LoopbackTransport>,
    receiver: LoopbackTransport,
}

impl SendFixture {
    /// A connected client bus and its raw receiver, handshake done and the pool warmed up.
    pub fn new() -> Self {
        let registry = bus_registry();
        let (mut receiver, client) = LoopbackNetwork::new().pair(registry.fingerprint());
        let mut bus = MessageBus::client(client, registry);
        bus.poll(&mut ());
        while receiver.poll_event().is_some() {}
        let mut fixture = Self { bus, receiver };
        for seq in 0..8 {
            fixture.send(&sample_input(seq));
        }
        fixture
    }

    /// Sends `input` (header + encode + copy into a pooled packet), flushes it to the receiver
    /// and drains the receiver (which hands the packet buffer back to the pool). Returns the
    /// bytes received.
    #[inline]
    pub fn send(&mut self, input: &PlayerInput) -> usize {
        self.bus
            .send(PeerId::SERVER, input, Channel::Unreliable)
            .expect("the loopback peer is connected");
        self.bus.flush();
        let mut received = 0;
        while let Some(event) = self.receiver.poll_event() {
            if let TransportEvent::Received { data, .. } = event {
                received += data.len();
            }
        }
        received
    }
}

impl Default for SendFixture {
    fn default() -> Self {
        Self::new()
    }
}

/// A transport that hands out one prepared packet each time it is [`arm`](Self::arm)ed: feeds a
/// bus with no transport work besides lending the bytes, so decoding and dispatch are measured
/// alone.
pub struct ReplayTransport {
    packet: Vec<u8>,
    pending: bool,
    stats: TransportStats,
}

impl ReplayTransport {
    /// The sender peer id the packets appear to come from.
    pub const SENDER: PeerId = PeerId(2);

    /// A transport that will replay `packet`.
    pub fn new(packet: Vec<u8>) -> Self {
        Self {
            packet,
            pending: false,
            stats: TransportStats::default(),
        }
    }

    /// Makes the next [`poll_event`](Transport::poll_event) return the packet once.
    #[inline]
    pub fn arm(&mut self) {
        self.pending = true;
    }
}

impl Transport for ReplayTransport {
    fn send(
        &mut self,
        _: PeerId,
        _: Channel,
        data: &[u8],
    ) -> Result<(), mf_net::transport::SendError> {
        self.stats.bytes_sent += data.len() as u64;
        self.stats.packets_sent += 1;
        Ok(())
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        if !std::mem::take(&mut self.pending) {
            return None;
        }
        self.stats.bytes_received += self.packet.len() as u64;
        self.stats.packets_received += 1;
        Some(TransportEvent::Received {
            peer: Self::SENDER,
            channel: Channel::Unreliable,
            data: &self.packet,
        })
    }

    fn advance(&mut self, _: Duration) {}

    fn flush(&mut self) {}

    fn disconnect(&mut self, _: PeerId, _: DisconnectReason) {}

    fn stats(&self) -> TransportStats {
        self.stats
    }
}

/// A server bus whose transport replays one encoded [`PlayerInput`] message; a handler counts
/// and sums what it receives.
pub struct DispatchFixture {
    bus: MessageBus<ReplayTransport, u64>,
    received: u64,
}

impl DispatchFixture {
    /// The bus, its handler subscribed, and the packet encoded as a client's bus sends it.
    pub fn new() -> Self {
        let mut w = NetWriter::new();
        let registry = bus_registry();
        mf_net::bus::MessageHeader {
            version: registry.protocol_version(),
            id: registry
                .id_of::<PlayerInput>()
                .expect("PlayerInput is registered"),
            tick: 7,
        }
        .write(&mut w);
        sample_input(7).encode(&mut w);
        let mut bus = MessageBus::server(ReplayTransport::new(w.into_vec()), registry);
        bus.subscribe(|_, _, input: &PlayerInput, received: &mut u64| {
            *received += u64::from(input.buttons) + 1;
        })
        .expect("PlayerInput is registered");
        Self { bus, received: 0 }
    }

    /// Delivers the packet once: the bus reads the header, decodes the message on the stack and
    /// calls the handler. Returns the handler's running total.
    #[inline]
    pub fn dispatch_one(&mut self) -> u64 {
        self.bus.transport_mut().arm();
        self.bus.poll(&mut self.received);
        self.received
    }
}

impl Default for DispatchFixture {
    fn default() -> Self {
        Self::new()
    }
}

/// A client bus and a server bus over loopback; the server echoes every [`PlayerInput`] back.
pub struct RoundTripFixture {
    client: MessageBus<LoopbackTransport, u64>,
    server: MessageBus<LoopbackTransport>,
    echoes: u64,
}

impl RoundTripFixture {
    /// Both buses connected (fingerprints checked) and warmed up.
    pub fn new() -> Self {
        let registry = bus_registry();
        let (server, client) = LoopbackNetwork::new().pair(registry.fingerprint());
        let mut server = MessageBus::server(server, registry.clone());
        server
            .subscribe(|bus, ctx, input: &PlayerInput, _: &mut ()| {
                // A failed send is counted and raised as an event by the bus; the round trip
                // then returns without the echo, which the tests would notice.
                let _ = bus.send(ctx.sender, input, Channel::Unreliable);
            })
            .expect("PlayerInput is registered");
        let mut client = MessageBus::client(client, registry);
        client
            .subscribe(|_, _, _: &PlayerInput, echoes: &mut u64| *echoes += 1)
            .expect("PlayerInput is registered");
        let mut echoes = 0;
        client.poll(&mut echoes);
        server.poll(&mut ());
        while client.next_event().is_some() {}
        while server.next_event().is_some() {}
        let mut fixture = Self {
            client,
            server,
            echoes,
        };
        for seq in 0..8 {
            fixture.round_trip(&sample_input(seq));
        }
        fixture
    }

    /// Client sends, flushes; the server polls (decode, dispatch, echo), flushes; the client
    /// polls (decode, dispatch). Returns how many echoes the client has received in all.
    #[inline]
    pub fn round_trip(&mut self, input: &PlayerInput) -> u64 {
        self.client
            .send(PeerId::SERVER, input, Channel::Unreliable)
            .expect("the server is connected");
        self.client.flush();
        self.server.poll(&mut ());
        self.server.flush();
        self.client.poll(&mut self.echoes);
        self.echoes
    }
}

impl Default for RoundTripFixture {
    fn default() -> Self {
        Self::new()
    }
}

// ---------------------------------------------------------------------------------------------
// Wire fixtures
// ---------------------------------------------------------------------------------------------

/// How many values one wire benchmark iteration writes or reads (divan divides by it).
pub const WIRE_BATCH: usize = 256;

/// `count` distinct `u32`s whose LEB128 encoding is exactly `bytes` long (1 to 5).
///
/// # Panics
/// If `bytes` is not in 1..=5.
pub fn varint_u32_values(bytes: u32, count: usize) -> Vec<u32> {
    assert!((1..=5).contains(&bytes), "a u32 varint is 1 to 5 bytes");
    varint_u64_range(bytes, count, u64::from(u32::MAX))
        .into_iter()
        .map(|v| u32::try_from(v).expect("in range"))
        .collect()
}

/// `count` distinct `u64`s whose LEB128 encoding is exactly `bytes` long (1 to 10).
///
/// # Panics
/// If `bytes` is not in 1..=10.
pub fn varint_u64_values(bytes: u32, count: usize) -> Vec<u64> {
    assert!((1..=10).contains(&bytes), "a u64 varint is 1 to 10 bytes");
    varint_u64_range(bytes, count, u64::MAX)
}

fn varint_u64_range(bytes: u32, count: usize, max: u64) -> Vec<u64> {
    let lo = if bytes == 1 {
        0
    } else {
        1u64 << (7 * (bytes - 1))
    };
    let hi = if 7 * bytes >= 64 {
        max
    } else {
        ((1u64 << (7 * bytes)) - 1).min(max)
    };
    let span = hi - lo;
    (0..count as u64)
        .map(|i| lo + u64::from(mix(i as u32, bytes)) * 0x1_0000_0001 % (span + 1).max(1))
        .map(|v| v.clamp(lo, hi))
        .collect()
}

/// A deterministic printable-ASCII string of `len` bytes.
pub fn ascii_string(len: usize) -> String {
    (0..len)
        .map(|i| char::from(b' ' + (mix(i as u32, 17) % 95) as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mf_net::wire::varint_len;

    #[test]
    fn motion_moves_all_or_exactly_a_tenth() {
        for frame in 0..20 {
            let mut boxes = spawn_boxes(1000);
            assert_eq!(step(&mut boxes, frame, Motion::All), 1000);
            let mut boxes = spawn_boxes(1000);
            assert_eq!(step(&mut boxes, frame, Motion::TenPercent), 100);
        }
    }

    #[test]
    fn steps_are_deterministic() {
        let mut a = spawn_boxes(500);
        let mut b = spawn_boxes(500);
        for frame in 1..10 {
            step(&mut a, frame, Motion::All);
            step(&mut b, frame, Motion::All);
        }
        assert_eq!(a, b);
        assert!(
            a.iter().any(|b| b.health < START_HEALTH),
            "health rarely changes, not never"
        );
        assert!(a.iter().filter(|b| b.health < START_HEALTH).count() < 100);
    }

    #[test]
    fn every_capture_finds_the_same_boxes_changed() {
        for &n in &BOX_COUNTS {
            for (motion, expected) in [(Motion::All, n), (Motion::TenPercent, n / 10)] {
                let mut s = ReplicationScenario::new(n, motion);
                assert_eq!(s.changed(), expected);
                for _ in 0..4 {
                    assert_eq!(s.capture(), expected, "{n} boxes, {motion}");
                }
            }
        }
    }

    #[test]
    fn encoded_entries_apply_on_a_client() {
        for motion in [Motion::All, Motion::TenPercent] {
            let mut s = ReplicationScenario::new(1000, motion);
            let mut client = s.client_boxes();
            let mut w = NetWriter::new();
            for _ in 0..3 {
                s.capture();
                w.clear();
                assert_eq!(s.encode(&mut w), s.changed());
                let applied = decode_apply(w.as_slice(), &mut client).expect("valid entries");
                assert_eq!(applied, s.changed());
                assert_eq!(client, s.server_boxes(), "{motion}");
            }
        }
    }

    /// Pinned: snapshot-entry bytes of the benchmark scenarios (id + length + mask + values).
    #[test]
    fn entry_sizes_are_pinned() {
        let sizes: Vec<(usize, Motion, usize)> = BOX_COUNTS
            .iter()
            .flat_map(|&n| [Motion::All, Motion::TenPercent].map(|m| (n, m)))
            .map(|(n, motion)| {
                let mut s = ReplicationScenario::new(n, motion);
                s.capture();
                let mut w = NetWriter::new();
                s.encode(&mut w);
                (n, motion, w.len())
            })
            .collect();
        // A moving box: id (1 B below 128, else 2 B) + length (1 B) + mask (1 B) + Vec3 (12 B)
        // + Quat (16 B) = 31 or 32 B, + 4 B for the roughly 1 in 100 whose health changed
        // (0, 5 and 96 of them at 100, 1000 and 10 000 boxes all moving). Which boxes move and
        // lose health is integer arithmetic, so these hold on every machine. The last byte is
        // the terminating 0.
        let expected: Vec<(usize, Motion, usize)> = vec![
            (100, Motion::All, 3100 + 1),
            (100, Motion::TenPercent, 310 + 1),
            (1000, Motion::All, 31_893 + 1),
            (1000, Motion::TenPercent, 3187 + 1),
            (10_000, Motion::All, 320_257 + 1),
            (10_000, Motion::TenPercent, 32_027 + 1),
        ];
        assert_eq!(sizes, expected);
    }

    /// Pinned: one client's snapshot is the entry-level bytes above plus the bus header (7 B),
    /// the flags byte and the terminating 0, and the idle one is those 9 bytes alone.
    #[test]
    fn snapshot_fixtures_send_and_apply_the_pinned_bytes() {
        let expected = [
            (100, Motion::All, 3100),
            (100, Motion::TenPercent, 310),
            (1000, Motion::All, 31_893),
            (1000, Motion::TenPercent, 3187),
        ];
        for (boxes, motion, entries) in expected {
            let mut encode = EncodeSnapshotFixture::new(boxes, motion);
            assert_eq!(encode.changed(), s_changed(boxes, motion));
            for _ in 0..3 {
                assert_eq!(
                    encode.server_frame(),
                    entries + 9,
                    "{boxes} boxes, {motion}"
                );
            }
            let mut decode = DecodeSnapshotFixture::<BoxEntity>::new(boxes, motion);
            assert_eq!(
                decode.snapshot_bytes(),
                entries + 9,
                "{boxes} boxes, {motion}"
            );
            let applied = decode.client_frame();
            assert_eq!(decode.client_frame(), applied + 1, "every replay applies");
            assert!(decode.world.converged());
            let mut interpolated = DecodeSnapshotFixture::<InterpBox>::new(boxes, motion);
            assert_eq!(
                interpolated.snapshot_bytes(),
                entries + 9,
                "same wire bytes"
            );
            let applied = interpolated.client_frame();
            assert_eq!(interpolated.client_frame(), applied + 1);
        }
        let mut idle = EncodeSnapshotFixture::idle(1000);
        assert_eq!(idle.server_frame(), 9);
    }

    fn s_changed(boxes: usize, motion: Motion) -> usize {
        ReplicationScenario::new(boxes, motion).changed()
    }

    /// The scale world's clients acknowledge every tick, its stages run in order, a budget
    /// caps every snapshot, and without one every client converges on the server's boxes.
    #[test]
    fn scale_world_acknowledges_every_tick() {
        let mut world = ScaleWorld::<BoxEntity>::spawned(100, Motion::All, 0);
        assert_eq!(world.clients.len(), SCALE_CLIENTS);
        world.run_frames(3);
        assert!(world.acks_keep_up());
        let tick = world.server.tick();
        world.advance_to(Stage::ServerBegin);
        assert_eq!(world.next_stage(), Stage::ServerBegin);
        let sent = world.server.stats().snapshots_sent;
        assert_eq!(world.server_tick(), sent + SCALE_CLIENTS as u64);
        assert_eq!(world.server.tick(), tick + 1, "one network tick per frame");
        let applied = world.clients[0].stats().snapshots_applied;
        assert_eq!(world.client_frames(), applied + 1);
        assert!(world.acks_keep_up());
        // Every box moved: each snapshot carries them all (31 or 32 B each, the health of a
        // few + 4 B, 9 B of header, flags and terminator).
        let bytes = world.server.stats().last_snapshot_bytes;
        assert!((100 * 31 + 9..100 * 36 + 9).contains(&bytes), "{bytes} B");
        assert!(world.clients_match_server());
        world.advance_to(Stage::ServerBegin);
        world.server_begin();
        assert_eq!(world.next_stage(), Stage::ServerEnd);

        let mut budgeted = ScaleWorld::<QuantBox>::spawned(1000, Motion::All, 1200);
        budgeted.run_frames(3);
        assert!(budgeted.acks_keep_up());
        let stats = budgeted.server.stats();
        assert!(stats.largest_snapshot_bytes <= 1200);
        assert!(stats.snapshots_truncated > 0);
    }

    #[test]
    #[should_panic(expected = "one iteration per sample")]
    fn scale_world_stages_run_in_order() {
        let mut world = ScaleWorld::<InterpBox>::spawned(SCALE_ROW, Motion::TenPercent, 0);
        world.advance_to(Stage::Clients);
        world.server_tick();
    }

    #[test]
    fn long_entries_get_a_longer_length() {
        #[derive(Replicated)]
        struct Blob {
            #[replicated]
            text: String,
        }
        let blob = Blob {
            text: ascii_string(300),
        };
        let mut w = NetWriter::new();
        write_entry::<Blob>(&mut w, &mut NetWriter::new(), 5, &blob.new_state(1), 0);
        let mut r = NetReader::new(w.as_slice());
        assert_eq!(r.read_var_u32(), Ok(5));
        let len = r.read_len().expect("a length");
        assert!(len >= 0x80, "a two-byte length");
        assert_eq!(len, r.remaining());
        let mut target = Blob {
            text: String::new(),
        };
        target.read(&mut r).expect("valid state");
        assert_eq!(target.text, blob.text);
    }

    #[test]
    fn bitcode_reference_round_trips_the_changed_boxes() {
        let mut s = ReplicationScenario::new(1000, Motion::TenPercent);
        s.capture();
        let plain = s.changed_plain();
        assert_eq!(plain.len(), 100);
        let mut buffer = bitcode::Buffer::new();
        let bytes = buffer.encode(&plain).to_vec();
        let back: Vec<PlainBox> = buffer.decode(&bytes).expect("valid bitcode");
        assert_eq!(back, plain);
    }

    #[test]
    fn bus_fixtures_deliver() {
        let mut send = SendFixture::new();
        assert_eq!(send.send(&sample_input(1)), 7 + 21);
        let mut dispatch = DispatchFixture::new();
        let first = dispatch.dispatch_one();
        assert!(first > 0);
        assert_eq!(dispatch.dispatch_one(), 2 * first);
        let mut round_trip = RoundTripFixture::new();
        let before = round_trip.round_trip(&sample_input(1));
        assert_eq!(round_trip.round_trip(&sample_input(2)), before + 1);
    }

    #[test]
    fn varint_values_have_the_asked_length() {
        for bytes in 1..=5 {
            for v in varint_u32_values(bytes, WIRE_BATCH) {
                assert_eq!(varint_len(u64::from(v)), bytes as usize, "{v}");
            }
        }
        for bytes in 1..=10 {
            let values = varint_u64_values(bytes, WIRE_BATCH);
            for &v in &values {
                assert_eq!(varint_len(v), bytes as usize, "{v}");
            }
            if bytes > 1 {
                assert!(values.windows(2).any(|w| w[0] != w[1]), "values vary");
            }
        }
        assert!(ascii_string(64).is_ascii());
        assert_eq!(ascii_string(64).len(), 64);
    }
}
