//! What the adapter's tests share: starting headless apps as a server and clients over one
//! loopback network (optionally behind a seeded bad network), and stepping them.

#![allow(dead_code, clippy::unwrap_used)]

use bevy_app::App;
use mf_net::bus::MessageRegistry;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::simulated::{NetworkConditions, SimulatedTransport};
use mf_net::transport::Transport;
use mf_net_bevy::NetWorldExt;

/// `transport`, behind `conditions` (seeded with `seed`) if any.
fn behind(
    transport: impl Transport + 'static,
    conditions: Option<NetworkConditions>,
    seed: u64,
) -> Box<dyn Transport> {
    match conditions {
        Some(c) => Box::new(SimulatedTransport::new(transport, c, seed)),
        None => Box::new(transport),
    }
}

/// Starts `app` as the server of `net`, for up to 16 clients.
pub(crate) fn start_server(
    app: &mut App,
    net: &LoopbackNetwork,
    conditions: Option<NetworkConditions>,
    seed: u64,
) {
    let listen = net.listen("game", 16).unwrap();
    app.world_mut().net(|mp| {
        let transport = behind(listen, conditions, seed);
        mp.start_server(transport, MessageRegistry::new(1)).unwrap();
    });
}

/// Starts `app` as a client of `net`'s server.
pub(crate) fn start_client(
    app: &mut App,
    net: &LoopbackNetwork,
    conditions: Option<NetworkConditions>,
    seed: u64,
) {
    app.world_mut().net(|mp| {
        let open = |data| behind(net.connect("game", data), conditions, seed);
        mp.start_client(open, MessageRegistry::new(1)).unwrap();
    });
}

/// `frames` updates of the server, then of every client.
pub(crate) fn run(server: &mut App, clients: &mut [App], frames: usize) {
    for _ in 0..frames {
        server.update();
        for client in clients.iter_mut() {
            client.update();
        }
    }
}
