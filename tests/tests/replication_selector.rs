#![allow(clippy::unwrap_used)]
//! A `Multiplayer` client over a `SelectingTransport` whose connect string falls back to a
//! second address: the selector offsets that attempt's peer ids, so the server's transport peer
//! is not `PeerId::SERVER`, yet the client joins, receives spawns and snapshots, calls an
//! `authority` RPC on the server and runs the server's RPC (whose sender game code still sees
//! as `PeerId::SERVER`).

use std::time::Duration;

use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::MultiplayerEvent;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::selector::{
    LoopbackTransportFactory, SelectingTransport, TransportSelector,
};

/// A player the server spawns for the client.
#[derive(Replicated, Debug, Default)]
struct Avatar {
    /// Replicated: moved by its authority.
    #[replicated]
    x: i32,
    /// Local: the senders of `move_by` and `hit`, as the context reported them.
    senders: Vec<PeerId>,
    /// Local: what `hit` did here.
    hits: i32,
}

#[rpcs]
impl Avatar {
    /// The owner moves its avatar (client → server).
    #[rpc(authority)]
    fn move_by(&mut self, ctx: &RpcContext, dx: i32) {
        self.x += dx;
        self.senders.push(ctx.sender());
    }

    /// The server hits it (server → client).
    #[rpc(server)]
    fn hit(&mut self, ctx: &RpcContext, damage: i32) {
        self.hits += damage;
        self.senders.push(ctx.sender());
    }
}

const AVATAR: SceneIndex = SceneIndex::new(0);

fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("avatar", |scene, root| {
            scene.set_value(root, Avatar::default())
        })
        .unwrap();
    scenes
}

fn messages() -> MessageRegistry {
    MessageRegistry::new(1)
}

struct Game {
    server: Multiplayer<LoopbackTransport>,
    client: Multiplayer<SelectingTransport>,
    client_events: Vec<MultiplayerEvent>,
}

impl Game {
    fn step(&mut self, frames: usize) {
        let dt = Duration::from_secs(1) / 30;
        for _ in 0..frames {
            self.server.begin_frame(dt);
            self.server.end_frame();
            self.client.begin_frame(dt);
            self.client.end_frame();
            while let Some(event) = self.client.next_event() {
                self.client_events.push(event);
            }
        }
    }
}

#[test]
fn a_multiplayer_client_over_a_selector_fallback_joins_replicates_and_calls_rpcs() {
    let net = LoopbackNetwork::new();
    let mut server = Multiplayer::new(library(), MultiplayerConfig::default());
    server
        .start_server(net.listen("game", 4).unwrap(), messages())
        .unwrap();
    let selector =
        TransportSelector::new().with_factory(LoopbackTransportFactory::new(net.clone()));
    let mut client = Multiplayer::new(library(), MultiplayerConfig::default());
    client
        .start_client(
            |data| selector.connect("loopback:nobody;loopback:game", data),
            messages(),
        )
        .unwrap();
    let mut game = Game {
        server,
        client,
        client_events: Vec::new(),
    };
    game.step(6);

    // The first address failed: the server is the second attempt's peer, offset by 2⁴⁸.
    let transport = game.client.bus().unwrap().transport();
    assert_eq!(transport.failures().len(), 1);
    assert_eq!(
        game.client.bus().unwrap().peers(),
        [PeerId(PeerId::SERVER.0 + (1 << 48))]
    );
    // Joined: welcomed with the id the server gave us.
    let local = game.client.local_peer_id();
    assert!(game
        .client_events
        .iter()
        .any(|e| matches!(e, MultiplayerEvent::ConnectedToServer { local_peer_id } if *local_peer_id == local)));
    assert_eq!(game.server.peers(), [local]);

    // Spawns reach the client.
    let root = game.server.scene().root();
    let node = game.server.spawn(AVATAR, root, local).unwrap();
    game.step(3);
    let server_avatar = game.server.scene().net_ref::<Avatar>(node).unwrap();
    let net_id = game.server.net_id(node).unwrap();
    let client_node = game.client.node(net_id).expect("spawned on the client");
    let client_avatar = game.client.scene().net_ref::<Avatar>(client_node).unwrap();
    assert_eq!(game.client.authority(client_node), local);

    // Snapshots reach the client (and its acks keep it current).
    game.server.scene_mut().get_mut(server_avatar).unwrap().x = 7;
    game.step(3);
    assert_eq!(game.client.scene().get(client_avatar).unwrap().x, 7);
    assert!(game.client.stats().snapshots_applied > 0);

    // Client → server: an authority RPC, from the client's peer id.
    game.client.rpc(client_avatar).move_by(4).unwrap();
    game.step(3);
    let on_server = game.server.scene().get(server_avatar).unwrap();
    assert_eq!(
        (on_server.x, on_server.senders.as_slice()),
        (11, [local].as_slice())
    );
    assert_eq!(game.client.scene().get(client_avatar).unwrap().x, 11);

    // Server → client: game code sees the server as `PeerId::SERVER`.
    game.server.rpc(server_avatar).hit(5).unwrap();
    game.step(3);
    let on_client = game.client.scene().get(client_avatar).unwrap();
    assert_eq!(
        (on_client.hits, on_client.senders.as_slice()),
        (5, [PeerId::SERVER].as_slice())
    );
    assert_eq!(game.client.stats().rpcs_received, 1);
    assert_eq!(game.server.stats().rpcs_received, 1);
    assert!(game.client.is_client());
}
