#![allow(clippy::unwrap_used)]
//! `#[rpcs]` / `#[rpc(..)]`: the generated tables and their wire order with flattened bases,
//! dispatch (decoding, context, validation, failures, malformed input, panics), the generated
//! senders against a small `RpcSink` over a `Scene`, deferred commands, and zero allocations
//! for encode + dispatch.

use std::any::{Any, TypeId};
use std::collections::HashSet;
use std::fmt;

use mf_net::prelude::*;
use mf_net::replication::ReplicationRegistry;
use mf_net::rpc::{
    call_catching, LocalCall, OutgoingRpc, RpcCallError, RpcCommand, RpcDelivery, RpcInfo, RpcMode,
    RpcRegistration, RpcRegistry, RpcSender, RpcSink, RpcTarget, Rpcs,
};
use mf_net_tests::alloc_counter::assert_no_alloc;

// ---------------------------------------------------------------------------------------------
// Types under test
// ---------------------------------------------------------------------------------------------

mod world {
    use mf_net::prelude::*;

    /// A base with RPCs of its own, flattened into `Player`.
    #[derive(Replicated, Debug, Default)]
    pub(crate) struct Actor {
        #[replicated]
        pub(crate) id: u16,
        pub(crate) waves: u32,
    }

    #[rpcs]
    impl Actor {
        /// Anyone may wave.
        #[rpc(any_peer)]
        pub(crate) fn wave(&mut self) {
            self.waves += 1;
        }

        #[rpc(server, call_local)]
        pub(crate) fn rename(&mut self, id: u16) {
            self.id = id;
        }
    }
}
use world::{Actor, ActorRpcs};

#[derive(Debug, PartialEq)]
struct Dead;

impl fmt::Display for Dead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("already dead")
    }
}

/// The design's example, with every option and parameter form.
#[derive(Replicated, Debug, Default)]
struct Player {
    #[replicated]
    health: i32,
    #[replicated(flatten)]
    actor: Actor,
    x: f32,
    greetings: Vec<String>,
    last_sender: Option<PeerId>,
    last_tick: u32,
    last_local: bool,
    arrays: Option<([u8; 3], Vec<i32>, u64)>,
}

#[rpcs]
impl Player {
    /// The owning client moves its player.
    #[rpc(authority)]
    fn move_by(&mut self, dx: f32) {
        self.x += dx;
    }

    #[rpc(server, call_local)]
    fn hit(&mut self, ctx: &RpcContext, damage: i32) -> Result<(), Dead> {
        self.last_sender = Some(ctx.sender());
        self.last_tick = ctx.tick();
        self.last_local = ctx.is_local();
        if self.health <= 0 {
            return Err(Dead);
        }
        self.health -= damage;
        Ok(())
    }

    #[rpc(any_peer, unreliable, rate_limit = 5, validate = Self::check_greet)]
    fn greet(&mut self, ctx: &mut RpcContext, text: String, times: u8) {
        for _ in 0..times {
            self.greetings.push(text.clone());
        }
        let node = ctx.node();
        ctx.set_authority(node, ctx.sender());
    }

    /// `reliable` is the default, written out.
    #[rpc(any_peer, reliable)]
    fn boom(&mut self) {
        panic!("boom");
    }

    /// `peer` is also the name of the `_to` senders' first parameter.
    #[rpc]
    fn arrays(&mut self, bytes: [u8; 3], values: Vec<i32>, peer: u64) {
        self.arrays = Some((bytes, values, peer));
    }

    fn check_greet(&self, ctx: &RpcContext, text: &str, times: &u8) -> bool {
        ctx.sender() != PeerId(666) && !text.is_empty() && *times <= 3
    }

    /// Not an RPC: left alone.
    fn helper(&self) -> i32 {
        self.health * 2
    }
}

/// Flattens `Player` (which flattens `Actor`): bases of bases come first.
#[derive(Replicated, Debug, Default)]
struct Boss {
    #[replicated]
    rage: u8,
    #[replicated(flatten)]
    player: Player,
}

#[rpcs]
impl Boss {
    #[rpc(server)]
    fn enrage(&mut self, by: u8) {
        self.rage = self.rage.saturating_add(by);
    }
}

/// A type whose RPC fails with `std::io::Error`-style results through an alias.
#[derive(Replicated, Debug, Default)]
struct Counter {
    #[replicated]
    n: u64,
}

#[rpcs]
impl Counter {
    #[rpc(any_peer)]
    fn add(&mut self, a: i32, b: u64) {
        self.n = self.n.wrapping_add(b).wrapping_add(a as u64);
    }

    #[rpc(server, call_local)]
    fn add_local(&mut self, a: u32) -> fmt::Result {
        self.n += u64::from(a);
        Ok(())
    }
}

/// RPCs at the edges of what the macro accepts: an attribute under a longer path, a
/// deprecated method, and a method with as many arguments as clippy allows (whose one-peer
/// sender has one more). `cargo clippy -- -D warnings` builds this file, so a warning in the
/// generated code (`deprecated`, `clippy::too_many_arguments`) fails it.
#[derive(Replicated, Debug, Default)]
struct Edges {
    #[replicated]
    total: i64,
    legacy_calls: u32,
}

#[rpcs]
impl Edges {
    #[mf_net::prelude::rpc(server)]
    fn through_prelude(&mut self, n: i64) {
        self.total += n;
    }

    #[mf_net::rpc::rpc(any_peer)]
    fn through_module(&mut self, n: i64) {
        self.total -= n;
    }

    #[deprecated = "use `through_prelude`"]
    #[rpc]
    fn legacy(&mut self) {
        self.legacy_calls += 1;
    }

    #[rpc]
    fn six(&mut self, a: i64, b: i64, c: i64, d: i64, e: i64, f: i64) {
        self.total = a + b + c + d + e + f;
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn registry() -> &'static RpcRegistry {
    RpcRegistry::global()
}

fn info<T: Rpcs>(name: &str) -> &'static RpcInfo {
    T::RPCS.iter().find(|rpc| rpc.name == name).unwrap()
}

fn encode(f: impl FnOnce(&mut NetWriter)) -> Vec<u8> {
    let mut w = NetWriter::new();
    f(&mut w);
    w.into_vec()
}

/// A context for a call from `sender` at `tick` on a throwaway node.
fn ctx(sender: PeerId, tick: u32) -> RpcContext {
    RpcContext::new(Scene::new().root(), sender, tick, false)
}

/// Runs `info`'s dispatcher on `value` with `bytes` as the arguments.
fn dispatch(
    info: &RpcInfo,
    value: &mut dyn Any,
    ctx: &mut RpcContext,
    bytes: &[u8],
) -> Result<(), RpcCallError> {
    (info.dispatch)(value, ctx, &mut NetReader::new(bytes))
}

/// One recorded send.
#[derive(Debug, Clone, PartialEq)]
struct Sent {
    node: NodeId,
    wire_id: u16,
    target: RpcTarget,
    reliable: bool,
    bytes: Vec<u8>,
}

/// A small sink over a `Scene`, as the `Multiplayer` will be: checks the node and maps the call
/// to its wire id; sends (records) only for networked nodes; runs local calls on the node's
/// value (or the flattened base that declares the RPC).
struct TestSink {
    scene: Scene,
    networked: HashSet<NodeId>,
    local_peer: PeerId,
    tick: u32,
    writer: NetWriter,
    sent: Vec<Sent>,
    ctx: RpcContext,
}

impl TestSink {
    fn new(local_peer: PeerId) -> Self {
        let scene = Scene::new();
        let ctx = RpcContext::new(scene.root(), local_peer, 0, true);
        Self {
            scene,
            networked: HashSet::new(),
            local_peer,
            tick: 42,
            writer: NetWriter::new(),
            sent: Vec::new(),
            ctx,
        }
    }

    fn rpc<T: 'static>(&mut self, handle: NetRef<T>) -> RpcSender<'_, Self, T> {
        RpcSender::new(self, handle)
    }

    fn entry(&self, rpc: &OutgoingRpc) -> Result<&'static mf_net::rpc::RpcEntry, RpcSendError> {
        let ty = self
            .scene
            .value_type(rpc.node)
            .ok_or(RpcSendError::NoSuchNode(rpc.node))?;
        registry()
            .table_of(ty)
            .and_then(|table| table.find(rpc.declaring_type, rpc.rpc_index))
            .ok_or(RpcSendError::WrongType(rpc.node))
    }
}

/// `node`'s value as the runtime hands it to a dispatcher (type-erased), for the node types of
/// these tests.
fn value_mut(scene: &mut Scene, node: NodeId) -> Option<&mut dyn Any> {
    fn typed<T: Replicated>(scene: &mut Scene, node: NodeId) -> Option<&mut dyn Any> {
        let handle = scene.net_ref::<T>(node)?;
        scene.get_mut(handle).map(|value| value as &mut dyn Any)
    }
    if scene.net_ref::<Player>(node).is_some() {
        return typed::<Player>(scene, node);
    }
    if scene.net_ref::<Boss>(node).is_some() {
        return typed::<Boss>(scene, node);
    }
    typed::<Counter>(scene, node)
}

impl RpcSink for TestSink {
    fn send_rpc(
        &mut self,
        rpc: OutgoingRpc,
        encode: &mut dyn FnMut(&mut NetWriter),
    ) -> Result<RpcDelivery, RpcSendError> {
        let entry = self.entry(&rpc)?;
        if !self.networked.contains(&rpc.node) || rpc.target == RpcTarget::Peer(self.local_peer) {
            return Ok(RpcDelivery::NotSent);
        }
        self.writer.clear();
        encode(&mut self.writer);
        self.sent.push(Sent {
            node: rpc.node,
            wire_id: entry.wire_id(),
            target: rpc.target,
            reliable: rpc.info.reliable,
            bytes: self.writer.as_slice().to_vec(),
        });
        Ok(match rpc.target {
            RpcTarget::Peer(_) => RpcDelivery::SentToPeer,
            _ => RpcDelivery::Sent,
        })
    }

    fn call_local(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        let entry = self.entry(&rpc)?;
        let value =
            value_mut(&mut self.scene, rpc.node).ok_or(RpcSendError::NoSuchNode(rpc.node))?;
        let value = entry
            .project(value)
            .ok_or(RpcSendError::WrongType(rpc.node))?;
        self.ctx.reset(rpc.node, self.local_peer, self.tick, true);
        call(value, &mut self.ctx).map_err(RpcSendError::LocalCall)
    }
}

// ---------------------------------------------------------------------------------------------
// Tables and registry
// ---------------------------------------------------------------------------------------------

#[test]
fn own_tables_list_rpcs_in_declaration_order_with_their_options() {
    let names: Vec<&str> = Player::RPCS.iter().map(|rpc| rpc.name).collect();
    assert_eq!(names, ["move_by", "hit", "greet", "boom", "arrays"]);

    let move_by = info::<Player>("move_by");
    assert_eq!(move_by.mode, RpcMode::Authority);
    assert!(!move_by.call_local && move_by.reliable);
    assert_eq!((move_by.rate_limit, move_by.validate), (None, None));
    assert_eq!(move_by.params.len(), 1);
    assert_eq!(
        (move_by.params[0].name, move_by.params[0].type_name),
        ("dx", "f32")
    );
    assert_eq!(
        move_by.params[0].schema_hash,
        <f32 as NetCodec>::SCHEMA_HASH
    );

    let hit = info::<Player>("hit");
    assert_eq!(
        (hit.mode, hit.call_local, hit.reliable),
        (RpcMode::Server, true, true)
    );
    // The context is not a sent parameter.
    assert_eq!(hit.params.len(), 1);
    assert_eq!(hit.params[0].name, "damage");

    let boom = info::<Player>("boom");
    assert_eq!((boom.reliable, boom.channel()), (true, Channel::Reliable));

    let greet = info::<Player>("greet");
    assert_eq!(greet.mode, RpcMode::AnyPeer);
    assert!(!greet.reliable);
    assert_eq!(greet.channel(), Channel::Unreliable);
    assert_eq!(greet.rate_limit, Some(5));
    assert_eq!(greet.validate, Some("Self::check_greet"));
    assert_eq!(
        greet.to_string(),
        "greet(text: String, times: u8) any_peer, unreliable, rate_limit = 5, \
         validate = Self::check_greet"
    );

    let arrays = info::<Player>("arrays");
    let types: Vec<&str> = arrays.params.iter().map(|p| p.type_name).collect();
    assert_eq!(
        types,
        ["Array", "Vec", "u64"].map(|t| {
            // Containers name only themselves; check against the codec rather than guess.
            match t {
                "Array" => <[u8; 3] as NetCodec>::NAME,
                "Vec" => <Vec<i32> as NetCodec>::NAME,
                other => other,
            }
        })
    );

    // Methods without `#[rpc]` are untouched.
    assert_eq!(
        Player {
            health: 4,
            ..Player::default()
        }
        .helper(),
        8
    );
    assert_eq!(Actor::RPCS.len(), 2);
}

#[test]
fn signature_hashes_cover_name_mode_channel_and_parameter_types() {
    let hit = info::<Player>("hit");
    let mut other = *hit;
    assert_eq!(other.signature_hash(), hit.signature_hash());
    other.call_local = false;
    other.rate_limit = Some(3);
    assert_eq!(
        other.signature_hash(),
        hit.signature_hash(),
        "local-only options"
    );
    other.mode = RpcMode::AnyPeer;
    assert_ne!(other.signature_hash(), hit.signature_hash());
    let mut other = *hit;
    other.reliable = false;
    assert_ne!(other.signature_hash(), hit.signature_hash());
    let mut other = *hit;
    other.params = info::<Player>("move_by").params;
    assert_ne!(other.signature_hash(), hit.signature_hash());
    let mut other = *hit;
    other.name = "hit2";
    assert_ne!(other.signature_hash(), hit.signature_hash());
}

#[test]
fn wire_ids_put_flattened_bases_first_recursively() {
    let registry = registry();
    let table = |ty: TypeId| {
        registry
            .table_of(ty)
            .unwrap()
            .entries()
            .iter()
            .map(|e| {
                (
                    e.wire_id(),
                    e.declaring_name(),
                    e.info().name,
                    e.via().to_owned(),
                )
            })
            .collect::<Vec<_>>()
    };
    let s = String::from;
    assert_eq!(
        table(TypeId::of::<Actor>()),
        [
            (0, "world::Actor", "wave", s("")),
            (1, "world::Actor", "rename", s(""))
        ]
    );
    assert_eq!(
        table(TypeId::of::<Boss>()),
        [
            (0, "world::Actor", "wave", s("player.actor")),
            (1, "world::Actor", "rename", s("player.actor")),
            (2, "Player", "move_by", s("player")),
            (3, "Player", "hit", s("player")),
            (4, "Player", "greet", s("player")),
            (5, "Player", "boom", s("player")),
            (6, "Player", "arrays", s("player")),
            (7, "Boss", "enrage", s("")),
        ]
    );
    let player = registry.table_of(TypeId::of::<Player>()).unwrap();
    assert_eq!(player.len(), 7);
    assert_eq!(player.get(2).unwrap().info().name, "move_by");
    assert!(player.get(7).is_none());
    let found = player.find(TypeId::of::<Actor>(), 1).unwrap();
    assert_eq!((found.wire_id(), found.own_index()), (1, 1));
    assert!(player.find(TypeId::of::<Boss>(), 0).is_none());

    // Every type of the replication registry has a table (empty without RPCs).
    let types = ReplicationRegistry::global();
    for (id, ty) in types.iter() {
        let table = registry.table(id).unwrap();
        assert_eq!(table.len(), registry.table_of(ty.type_id()).unwrap().len());
    }
}

#[test]
fn dump_lists_every_rpc_with_wire_id_mode_and_options() {
    let dump = registry().dump();
    println!("{dump}");
    for line in [
        "  0 world::Actor::wave() any_peer (via player.actor)",
        "  3 Player::hit(damage: i32) server, call_local (via player)",
        "  7 Boss::enrage(by: u8) server",
        "  4 Player::greet(text: String, times: u8) any_peer, unreliable, rate_limit = 5, \
         validate = Self::check_greet\n",
        "  4 Player::greet(text: String, times: u8) any_peer, unreliable, rate_limit = 5, \
         validate = Self::check_greet (via player)\n",
        " Player: 7 RPC(s), signatures",
        "  1 Counter::add_local(a: u32) server, call_local",
    ] {
        assert!(dump.contains(line), "missing {line:?} in\n{dump}");
    }
    assert!(dump.contains(&format!("fingerprint {:#018x}", registry().fingerprint())));
}

#[test]
fn fingerprint_covers_rpc_signatures_and_is_deterministic() {
    let types = ReplicationRegistry::global();
    let a = RpcRegistry::from_inventory(types).unwrap();
    let b = RpcRegistry::from_inventory(types).unwrap();
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_eq!(a.fingerprint(), registry().fingerprint());

    // Without Boss's RPCs the fingerprint changes.
    let rpcs: Vec<_> = RpcRegistration::linked()
        .filter(|r| RpcRegistration::type_id(r) != TypeId::of::<Boss>())
        .collect();
    let without = RpcRegistry::from_parts(
        types,
        rpcs.iter().copied(),
        mf_net::rpc::FlattenedBases::linked(),
    )
    .unwrap();
    assert_ne!(without.fingerprint(), a.fingerprint());
    assert!(without.table_of(TypeId::of::<Boss>()).unwrap().len() == 7);

    // Without the flatten information, bases' RPCs are not reachable from the outer type.
    let flat =
        RpcRegistry::from_parts(types, RpcRegistration::linked(), std::iter::empty()).unwrap();
    assert_eq!(flat.table_of(TypeId::of::<Boss>()).unwrap().len(), 1);
    assert_ne!(flat.fingerprint(), a.fingerprint());

    // A registration given twice is refused.
    let player = RpcRegistration::linked()
        .find(|r| RpcRegistration::type_id(r) == TypeId::of::<Player>())
        .unwrap();
    let error = RpcRegistry::from_parts(types, [player, player], std::iter::empty()).unwrap_err();
    assert!(error.to_string().contains("registered twice"), "{error}");
}

#[test]
fn modes_allow_the_right_senders() {
    let (server, owner, other) = (PeerId::SERVER, PeerId(7), PeerId(8));
    assert!(RpcMode::Server.allows(server, owner));
    assert!(!RpcMode::Server.allows(owner, owner));
    assert!(RpcMode::Authority.allows(owner, owner));
    assert!(!RpcMode::Authority.allows(other, owner));
    assert!(RpcMode::Authority.allows(server, server));
    assert!(RpcMode::AnyPeer.allows(other, owner));
    assert_eq!(RpcMode::default(), RpcMode::Authority);
}

// ---------------------------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------------------------

#[test]
fn dispatch_decodes_arguments_and_runs_the_body() {
    let mut player = Player::default();
    let mut cx = ctx(PeerId(3), 10);
    let bytes = encode(|w| 1.5f32.encode(w));
    dispatch(info::<Player>("move_by"), &mut player, &mut cx, &bytes).unwrap();
    assert_eq!(player.x, 1.5);

    let bytes = encode(|w| {
        [1u8, 2, 3].encode(w);
        vec![-1i32, 7].encode(w);
        9u64.encode(w);
    });
    dispatch(info::<Player>("arrays"), &mut player, &mut cx, &bytes).unwrap();
    assert_eq!(player.arrays, Some(([1, 2, 3], vec![-1, 7], 9)));
}

#[test]
fn the_context_parameter_receives_sender_tick_and_locality() {
    let mut player = Player {
        health: 10,
        ..Player::default()
    };
    let mut cx = ctx(PeerId::SERVER, 1234);
    dispatch(
        info::<Player>("hit"),
        &mut player,
        &mut cx,
        &encode(|w| 3i32.encode(w)),
    )
    .unwrap();
    assert_eq!(player.health, 7);
    assert_eq!(player.last_sender, Some(PeerId::SERVER));
    assert_eq!(player.last_tick, 1234);
    assert!(!player.last_local);
}

#[test]
fn bodies_queue_commands_through_a_mutable_context() {
    let mut scene = Scene::new();
    let node = scene.insert(scene.root(), "p", Player::default()).unwrap();
    let mut cx = RpcContext::new(node.node(), PeerId(5), 1, false);
    let bytes = encode(|w| {
        "hi".to_owned().encode(w);
        2u8.encode(w);
    });
    dispatch(
        info::<Player>("greet"),
        &mut Player::default(),
        &mut cx,
        &bytes,
    )
    .unwrap();
    match cx.commands() {
        [RpcCommand::SetAuthority { node: n, peer }] => {
            assert_eq!((*n, *peer), (node.node(), PeerId(5)));
        }
        other => panic!("unexpected commands {other:?}"),
    }
    cx.reset(node.node(), PeerId(6), 2, false);
    assert!(cx.commands().is_empty());
    cx.spawn(SceneIndex::new(3), scene.root(), PeerId(6));
    cx.despawn(node.node());
    assert!(matches!(
        cx.commands(),
        [
            RpcCommand::Spawn {
                authority: PeerId(6),
                ..
            },
            RpcCommand::Despawn { .. }
        ]
    ));
}

#[test]
fn validate_rejects_before_the_body_runs() {
    let mut player = Player::default();
    let greet = info::<Player>("greet");
    let args = |text: &str, times: u8| {
        encode(|w| {
            text.to_owned().encode(w);
            times.encode(w);
        })
    };
    let mut cx = ctx(PeerId(4), 0);
    assert_eq!(
        dispatch(greet, &mut player, &mut cx, &args("hi", 4)),
        Err(RpcCallError::Rejected)
    );
    assert_eq!(
        dispatch(greet, &mut player, &mut cx, &args("", 1)),
        Err(RpcCallError::Rejected)
    );
    let mut spoofed = ctx(PeerId(666), 0);
    assert_eq!(
        dispatch(greet, &mut player, &mut spoofed, &args("hi", 1)),
        Err(RpcCallError::Rejected)
    );
    assert!(player.greetings.is_empty());
    assert!(cx.commands().is_empty(), "a rejected body queues nothing");
    dispatch(greet, &mut player, &mut cx, &args("hi", 2)).unwrap();
    assert_eq!(player.greetings, ["hi", "hi"]);
}

#[test]
fn a_body_returning_err_is_a_failed_call() {
    let mut player = Player::default();
    let result = dispatch(
        info::<Player>("hit"),
        &mut player,
        &mut ctx(PeerId::SERVER, 0),
        &encode(|w| 1i32.encode(w)),
    );
    assert_eq!(result, Err(RpcCallError::Failed("already dead".to_owned())));
    assert_eq!(
        result.unwrap_err().to_string(),
        "the RPC body failed: already dead"
    );
}

#[test]
fn malformed_arguments_are_refused_without_panicking() {
    let mut player = Player::default();
    let mut cx = ctx(PeerId(2), 0);
    let arrays = info::<Player>("arrays");
    let good = encode(|w| {
        [1u8, 2, 3].encode(w);
        vec![5i32].encode(w);
        9u64.encode(w);
    });
    // Every truncation.
    for len in 0..good.len() {
        let result = dispatch(arrays, &mut player, &mut cx, &good[..len]);
        assert!(
            matches!(result, Err(RpcCallError::Malformed(_))),
            "{len}: {result:?}"
        );
    }
    // Trailing bytes.
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(
        dispatch(arrays, &mut player, &mut cx, &trailing),
        Err(RpcCallError::Malformed(DecodeError::TrailingBytes))
    );
    // An oversize count: claims far more elements than there are bytes.
    let oversize = encode(|w| {
        [1u8, 2, 3].encode(w);
        w.write_var_u64(u64::from(u32::MAX));
        w.write_bytes(&[0; 12]);
    });
    assert!(matches!(
        dispatch(arrays, &mut player, &mut cx, &oversize),
        Err(RpcCallError::Malformed(_))
    ));
    // Invalid UTF-8 in a string, an oversize string length.
    let greet = info::<Player>("greet");
    let bad_utf8 = [2u8, 0xff, 0xfe, 1];
    assert!(matches!(
        dispatch(greet, &mut player, &mut cx, &bad_utf8),
        Err(RpcCallError::Malformed(_))
    ));
    let huge = encode(|w| w.write_var_u64(1 << 40));
    assert!(matches!(
        dispatch(greet, &mut player, &mut cx, &huge),
        Err(RpcCallError::Malformed(_))
    ));
    // Random garbage never panics.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for len in 0..200 {
        let bytes: Vec<u8> = (0..len % 40)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect();
        for rpc in Player::RPCS.iter().filter(|rpc| rpc.name != "boom") {
            let _ = dispatch(rpc, &mut Player::default(), &mut cx, &bytes);
        }
    }
    assert_eq!(player.arrays, None, "no malformed call ran the body");
}

#[test]
fn dispatching_to_a_value_of_another_type_is_wrong_type() {
    let mut counter = Counter::default();
    assert_eq!(
        dispatch(
            info::<Player>("move_by"),
            &mut counter,
            &mut ctx(PeerId(2), 0),
            &encode(|w| 1f32.encode(w))
        ),
        Err(RpcCallError::WrongType)
    );
}

#[test]
fn call_catching_turns_a_panicking_body_into_an_error() {
    let mut player = Player::default();
    let mut cx = ctx(PeerId(9), 0);
    let boom = info::<Player>("boom");
    let result = call_catching(|| dispatch(boom, &mut player, &mut cx, &[]));
    assert_eq!(result, Err(RpcCallError::Panicked("boom".to_owned())));
    // A formatted panic message, and a non-text payload.
    assert_eq!(
        call_catching(|| panic!("bad {}", 7)),
        Err(RpcCallError::Panicked("bad 7".to_owned()))
    );
    assert!(matches!(
        call_catching(|| std::panic::panic_any(5u8)),
        Err(RpcCallError::Panicked(_))
    ));
    // Results pass through.
    assert_eq!(call_catching(|| Ok(())), Ok(()));
    assert_eq!(
        call_catching(|| Err(RpcCallError::Rejected)),
        Err(RpcCallError::Rejected)
    );
    // The value is still usable afterwards.
    dispatch(
        info::<Player>("move_by"),
        &mut player,
        &mut cx,
        &encode(|w| 2f32.encode(w)),
    )
    .unwrap();
    assert_eq!(player.x, 2.0);
}

#[test]
fn table_entries_dispatch_base_rpcs_through_the_outer_value() {
    let table = registry().table_of(TypeId::of::<Boss>()).unwrap();
    let mut boss = Boss::default();
    let mut cx = ctx(PeerId(2), 0);
    table
        .get(0)
        .unwrap()
        .dispatch(&mut boss, &mut cx, &mut NetReader::new(&[]))
        .unwrap();
    table
        .get(1)
        .unwrap()
        .dispatch(
            &mut boss,
            &mut cx,
            &mut NetReader::new(&encode(|w| 77u16.encode(w))),
        )
        .unwrap();
    table
        .get(2)
        .unwrap()
        .dispatch(
            &mut boss,
            &mut cx,
            &mut NetReader::new(&encode(|w| 0.5f32.encode(w))),
        )
        .unwrap();
    table
        .get(7)
        .unwrap()
        .dispatch(&mut boss, &mut cx, &mut NetReader::new(&[4]))
        .unwrap();
    assert_eq!(boss.player.actor.waves, 1);
    assert_eq!(boss.player.actor.id, 77);
    assert_eq!(boss.player.x, 0.5);
    assert_eq!(boss.rage, 4);
    // Projection refuses a value of another type.
    assert_eq!(
        table
            .get(0)
            .unwrap()
            .dispatch(&mut Counter::default(), &mut cx, &mut NetReader::new(&[])),
        Err(RpcCallError::WrongType)
    );
}

// ---------------------------------------------------------------------------------------------
// Senders
// ---------------------------------------------------------------------------------------------

#[test]
fn senders_encode_arguments_and_address_their_target() {
    let mut sink = TestSink::new(PeerId(3));
    let root = sink.scene.root();
    let player = sink.scene.insert(root, "p", Player::default()).unwrap();
    sink.networked.insert(player.node());

    sink.rpc(player).move_by(1.5).unwrap();
    sink.rpc(player)
        .arrays_to(PeerId(9), [1, 2, 3], vec![-1], 7)
        .unwrap();
    sink.rpc(player).greet("hi".to_owned(), 2).unwrap();

    let node = player.node();
    assert_eq!(
        sink.sent,
        [
            Sent {
                node,
                wire_id: 2,
                target: RpcTarget::All,
                reliable: true,
                bytes: 1.5f32.to_le_bytes().to_vec(),
            },
            Sent {
                node,
                wire_id: 6,
                target: RpcTarget::Peer(PeerId(9)),
                reliable: true,
                bytes: vec![1, 2, 3, 1, 0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0, 0, 0, 0, 0],
            },
            Sent {
                node,
                wire_id: 4,
                target: RpcTarget::All,
                reliable: false,
                bytes: vec![2, b'h', b'i', 2],
            },
        ]
    );
    // Not `call_local`: nothing ran here.
    let value = sink.scene.get(player).unwrap();
    assert_eq!(value.x, 0.0);
    assert!(value.greetings.is_empty() && value.arrays.is_none());

    // A flattened base's RPC, through `base`, gets the outer type's wire id.
    sink.sent.clear();
    sink.rpc(player).base::<Actor>().wave().unwrap();
    assert_eq!((sink.sent[0].wire_id, sink.sent[0].bytes.len()), (0, 0));
}

#[test]
fn sent_bytes_dispatch_on_the_receiving_side() {
    let mut sink = TestSink::new(PeerId(3));
    let root = sink.scene.root();
    let player = sink.scene.insert(root, "p", Player::default()).unwrap();
    sink.networked.insert(player.node());
    sink.rpc(player).greet("yo".to_owned(), 3).unwrap();
    sink.rpc(player).base::<Actor>().rename(12).unwrap();

    // The receiver looks the wire id up in the node type's table and dispatches.
    let mut remote = Player::default();
    let table = registry().table_of(TypeId::of::<Player>()).unwrap();
    for sent in &sink.sent {
        let entry = table.get(sent.wire_id).unwrap();
        let mut cx = ctx(PeerId(3), 5);
        entry
            .dispatch(&mut remote, &mut cx, &mut NetReader::new(&sent.bytes))
            .unwrap();
    }
    assert_eq!(remote.greetings, ["yo", "yo", "yo"]);
    assert_eq!(remote.actor.id, 12);
}

#[test]
fn call_local_rpcs_also_run_on_the_caller() {
    let mut sink = TestSink::new(PeerId::SERVER);
    let root = sink.scene.root();
    let player = sink
        .scene
        .insert(
            root,
            "p",
            Player {
                health: 10,
                ..Player::default()
            },
        )
        .unwrap();
    sink.networked.insert(player.node());

    sink.rpc(player).hit(4).unwrap();
    assert_eq!(sink.sent.len(), 1);
    assert_eq!(sink.sent[0].bytes, 4i32.to_le_bytes());
    let value = sink.scene.get(player).unwrap();
    assert_eq!(value.health, 6);
    assert_eq!(value.last_sender, Some(PeerId::SERVER));
    assert_eq!(value.last_tick, 42);
    assert!(value.last_local);

    // To one other peer: sent, not run here.
    sink.rpc(player).hit_to(PeerId(5), 1).unwrap();
    assert_eq!(sink.sent.len(), 2);
    assert_eq!(sink.scene.get(player).unwrap().health, 6);

    // A base's call_local RPC runs on the base inside the node's value.
    sink.rpc(player).base::<Actor>().rename(99).unwrap();
    assert_eq!(sink.scene.get(player).unwrap().actor.id, 99);

    // A failing local body is reported after the send.
    sink.scene.get_mut(player).unwrap().health = 0;
    let error = sink.rpc(player).hit(1).unwrap_err();
    assert_eq!(
        error,
        RpcSendError::LocalCall(RpcCallError::Failed("already dead".to_owned()))
    );
    assert_eq!(sink.sent.len(), 4);
}

#[test]
fn a_node_that_is_not_networked_runs_only_call_local_rpcs() {
    let mut sink = TestSink::new(PeerId::SERVER);
    let root = sink.scene.root();
    let player = sink
        .scene
        .insert(
            root,
            "p",
            Player {
                health: 10,
                ..Player::default()
            },
        )
        .unwrap();

    sink.rpc(player).move_by(3.0).unwrap();
    sink.rpc(player).greet("x".to_owned(), 1).unwrap();
    sink.rpc(player).hit(2).unwrap();
    sink.rpc(player).base::<Actor>().wave().unwrap();
    sink.rpc(player).base::<Actor>().rename(5).unwrap();
    assert!(sink.sent.is_empty());
    let value = sink.scene.get(player).unwrap();
    assert_eq!(value.x, 0.0);
    assert!(value.greetings.is_empty());
    assert_eq!(value.actor.waves, 0);
    assert_eq!(value.health, 8);
    assert_eq!(value.actor.id, 5);
}

#[test]
fn senders_report_the_sinks_errors() {
    let mut sink = TestSink::new(PeerId(3));
    let root = sink.scene.root();
    let counter = sink.scene.insert(root, "c", Counter::default()).unwrap();
    // The node does not hold a Player.
    let wrong = RpcSender::<_, Player>::for_node(&mut sink, counter.node()).move_by(1.0);
    assert_eq!(wrong, Err(RpcSendError::WrongType(counter.node())));
    // Counter does not flatten Actor.
    let wrong = sink.rpc(counter).base::<Actor>().wave();
    assert!(wrong.is_err());
    // A removed node.
    sink.scene.remove(counter.node());
    assert_eq!(
        sink.rpc(counter).add(1, 2),
        Err(RpcSendError::NoSuchNode(counter.node()))
    );
}

#[test]
fn a_context_queues_rpcs_for_after_the_dispatch() {
    let mut scene = Scene::new();
    let player = scene.insert(scene.root(), "p", Player::default()).unwrap();
    let mut cx = RpcContext::new(player.node(), PeerId(4), 0, false);
    cx.rpc(player).hit(3).unwrap();
    cx.rpc(player).move_by_to(PeerId(7), 0.25).unwrap();
    let [RpcCommand::Rpc(hit), RpcCommand::Rpc(move_by)] = cx.commands() else {
        panic!("unexpected commands {:?}", cx.commands());
    };
    assert_eq!(hit.call.info.name, "hit");
    assert_eq!(hit.call.target, RpcTarget::All);
    assert_eq!(cx.args(hit), 3i32.to_le_bytes());
    assert_eq!(move_by.call.target, RpcTarget::Peer(PeerId(7)));
    assert_eq!(cx.args(move_by), 0.25f32.to_le_bytes());
    // Deferred: the call_local body did not run now.
    assert_eq!(scene.get(player).unwrap().last_sender, None);
    // The runtime can run a queued call_local RPC from its bytes.
    let (call, args) = (hit.call, cx.args(hit).to_vec());
    let value: &mut dyn Any = scene.get_mut(player).unwrap();
    let mut local = RpcContext::new(player.node(), PeerId::SERVER, 1, true);
    (call.info.dispatch)(value, &mut local, &mut NetReader::new(&args)).unwrap_err();
    assert_eq!(scene.get(player).unwrap().last_sender, Some(PeerId::SERVER));
}

// ---------------------------------------------------------------------------------------------
// Zero allocations
// ---------------------------------------------------------------------------------------------

/// Encodes into one reused writer and dispatches the bytes straight back on a value, as a
/// loopback runtime would; runs local calls on the same value.
struct LoopSink {
    writer: NetWriter,
    value: Counter,
    ctx: RpcContext,
}

impl RpcSink for LoopSink {
    fn send_rpc(
        &mut self,
        rpc: OutgoingRpc,
        encode: &mut dyn FnMut(&mut NetWriter),
    ) -> Result<RpcDelivery, RpcSendError> {
        self.writer.clear();
        encode(&mut self.writer);
        self.ctx.reset(rpc.node, PeerId(2), 1, false);
        let mut reader = NetReader::new(self.writer.as_slice());
        call_catching(|| (rpc.info.dispatch)(&mut self.value, &mut self.ctx, &mut reader))
            .map_err(RpcSendError::LocalCall)?;
        Ok(match rpc.target {
            RpcTarget::Peer(_) => RpcDelivery::SentToPeer,
            _ => RpcDelivery::Sent,
        })
    }

    fn call_local(
        &mut self,
        rpc: OutgoingRpc,
        call: &mut LocalCall<'_>,
    ) -> Result<(), RpcSendError> {
        self.ctx.reset(rpc.node, PeerId::SERVER, 1, true);
        call(&mut self.value, &mut self.ctx).map_err(RpcSendError::LocalCall)
    }
}

#[test]
fn encode_and_dispatch_of_plain_number_arguments_do_not_allocate() {
    let node = Scene::new().root();
    let mut sink = LoopSink {
        writer: NetWriter::with_capacity(64),
        value: Counter::default(),
        ctx: RpcContext::new(node, PeerId(2), 0, false),
    };
    // Warm up.
    RpcSender::<_, Counter>::for_node(&mut sink, node)
        .add(1, 2)
        .unwrap();
    assert_no_alloc("RPC encode + dispatch", || {
        for i in 0..1000 {
            RpcSender::<_, Counter>::for_node(&mut sink, node)
                .add(i, 1)
                .unwrap();
            RpcSender::<_, Counter>::for_node(&mut sink, node)
                .add_local_to(PeerId(5), 2)
                .unwrap();
            RpcSender::<_, Counter>::for_node(&mut sink, node)
                .add_local(1)
                .unwrap();
        }
    });
    // add: 3 (warm-up) + Σ(i + 1); add_local_to: 2 remote only; add_local: 1 remote + 1 local.
    let sum: u64 = (0..1000u64).sum();
    assert_eq!(sink.value.n, 3 + sum + 1000 + 1000 * 2 + 1000 * 2);
}

#[test]
fn edge_rpcs_are_generated_and_dispatch() {
    let names: Vec<&str> = Edges::RPCS.iter().map(|rpc| rpc.name).collect();
    assert_eq!(
        names,
        ["through_prelude", "through_module", "legacy", "six"]
    );
    assert_eq!(info::<Edges>("through_prelude").mode, RpcMode::Server);
    assert_eq!(info::<Edges>("through_module").mode, RpcMode::AnyPeer);

    let mut edges = Edges::default();
    let mut cx = ctx(PeerId::SERVER, 1);
    dispatch(
        info::<Edges>("through_prelude"),
        &mut edges,
        &mut cx,
        &encode(|w| 5i64.encode(w)),
    )
    .unwrap();
    assert_eq!(edges.total, 5);
    dispatch(info::<Edges>("legacy"), &mut edges, &mut cx, &[]).unwrap();
    assert_eq!(edges.legacy_calls, 1);
    let args = encode(|w| (1..=6i64).for_each(|n| n.encode(w)));
    dispatch(info::<Edges>("six"), &mut edges, &mut cx, &args).unwrap();
    assert_eq!(edges.total, 21);
}
