//! Typed handles from `Multiplayer`: `spawn_as` returns the root's `NetRef`, `handles` and
//! `owned` iterate without borrowing the instance (so the loop body can send RPCs), and each
//! client finds its own player among several with `owned`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::replication::MultiplayerError;
use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};

#[derive(Replicated, Default)]
struct Player {
    #[replicated]
    hp: i32,
    #[replicated]
    x: i32,
}

#[rpcs]
impl Player {
    #[rpc(authority)]
    fn step(&mut self, dx: i32) {
        self.x += dx.clamp(-1, 1);
    }

    #[rpc(server, call_local)]
    fn hit(&mut self, damage: i32) {
        self.hp -= damage;
    }
}

#[derive(Replicated, Default)]
struct Crate {
    #[replicated]
    open: bool,
}

const PLAYER: SceneIndex = SceneIndex::new(0);
const CRATE: SceneIndex = SceneIndex::new(1);

fn scenes() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    let player = scenes
        .register("player", |scene, root| {
            scene.set_value(root, Player { hp: 10, x: 0 })
        })
        .unwrap();
    let crate_ = scenes
        .register("crate", |scene, root| {
            scene.set_value(root, Crate::default())
        })
        .unwrap();
    assert_eq!((player, crate_), (PLAYER, CRATE));
    scenes
}

type Mp = Multiplayer<LoopbackTransport>;

fn frame(server: &mut Mp, clients: &mut [Mp]) {
    let dt = Duration::from_secs(1) / 60;
    server.begin_frame(dt);
    for client in clients.iter_mut() {
        client.begin_frame(dt);
    }
    while let Some(event) = server.next_event() {
        if let MultiplayerEvent::PeerJoined(peer) = event {
            let root = server.scene().root();
            let player = server.spawn_as::<Player>(PLAYER, root, peer).unwrap();
            server.scene_mut().get_mut(player).unwrap().x = 100 * peer.0 as i32;
        }
    }
    server.end_frame();
    for client in clients.iter_mut() {
        client.end_frame();
    }
}

fn world() -> (Mp, Vec<Mp>) {
    let net = LoopbackNetwork::new();
    let messages = MessageRegistry::new(1);
    let mut server = Mp::new(scenes(), MultiplayerConfig::default());
    server
        .start_server(net.listen("game", 4).unwrap(), messages.clone())
        .unwrap();
    let clients: Vec<Mp> = (0..2)
        .map(|_| {
            let mut client = Mp::new(scenes(), MultiplayerConfig::default());
            client
                .start_client(|data| net.connect("game", data), messages.clone())
                .unwrap();
            client
        })
        .collect();
    let mut world = (server, clients);
    for _ in 0..10 {
        frame(&mut world.0, &mut world.1);
    }
    world
}

#[test]
fn each_client_finds_its_own_player_among_several() {
    let (mut server, mut clients) = world();
    assert_eq!(server.handles::<Player>().len(), 2);
    for client in &mut clients {
        assert_eq!(
            client.handles::<Player>().len(),
            2,
            "both players everywhere"
        );
        let mine: Vec<_> = client.owned::<Player>().collect();
        assert_eq!(mine.len(), 1, "one of them is mine");
        // Its starting x encodes its owner.
        let me = client.local_peer_id();
        assert_eq!(client.scene().get(mine[0]).unwrap().x, 100 * me.0 as i32);
        client.rpc(mine[0]).step(1).unwrap();
    }
    for _ in 0..10 {
        frame(&mut server, &mut clients);
    }
    for peer in server.peers().to_vec() {
        let theirs: Vec<_> = server.owned_by::<Player>(peer).collect();
        assert_eq!(theirs.len(), 1);
        assert_eq!(
            server.scene().get(theirs[0]).unwrap().x,
            100 * peer.0 as i32 + 1
        );
    }
    // The server owns no player.
    assert_eq!(server.owned::<Player>().count(), 0);
}

#[test]
fn handles_do_not_borrow_the_instance() {
    let (mut server, mut clients) = world();
    // The loop body sends RPCs through `server` while walking its handles.
    for player in server.handles::<Player>() {
        server.rpc(player).hit(3).unwrap();
    }
    for _ in 0..10 {
        frame(&mut server, &mut clients);
    }
    for mp in std::iter::once(&server).chain(&clients) {
        let hps: Vec<i32> = mp.scene().iter::<Player>().map(|(_, p)| p.hp).collect();
        assert_eq!(hps, [7, 7]);
    }
}

#[test]
fn spawn_as_checks_the_root_type() {
    let (mut server, _clients) = world();
    let root = server.scene().root();
    let nodes = server.scene().len();
    assert_eq!(
        server.spawn_as::<Player>(CRATE, root, PeerId::SERVER),
        Err(MultiplayerError::RootType {
            scene: CRATE,
            expected: std::any::type_name::<Player>(),
        })
    );
    assert_eq!(server.scene().len(), nodes, "the instance was freed");
    let open = server
        .spawn_as::<Crate>(CRATE, root, PeerId::SERVER)
        .unwrap();
    server.scene_mut().get_mut(open).unwrap().open = true;
    assert_eq!(server.owned::<Crate>().collect::<Vec<_>>(), [open]);
}
