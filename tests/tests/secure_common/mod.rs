//! Shared by the `secure_*` test binaries: a fixed key and clock, token helpers, and a rig
//! stepping one [`SecureServer`] and any number of clients (secure or raw) over loopback or ENet
//! on 127.0.0.1, logging every event each end reports.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Duration;

use mf_net::transport::address::NetworkAddress;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net::transport::{Channel, DisconnectReason, PeerId, Transport, TransportEvent};
use mf_net_enet::EnetTransport;
use mf_net_secure::{
    ConnectToken, SecureClient, SecureServer, ServerConfig, SharedKey, TokenIssuer,
};

/// The game's protocol id.
pub(crate) const PROTOCOL: u64 = 0x6d66_2d6e_6574_0001;
/// The shared key of the tests' fleet.
pub(crate) const KEY: SharedKey = SharedKey::from_bytes([0x5a; 32]);
/// "Now", on the backend's and the servers' clock.
pub(crate) const NOW: Duration = Duration::from_secs(1_800_000_000);

/// An issuer of the tests' fleet.
pub(crate) fn issuer() -> TokenIssuer {
    TokenIssuer::new(PROTOCOL, KEY)
}

/// A token for `client_id` valid for `server`, issued now.
pub(crate) fn token(client_id: u64, server: &NetworkAddress) -> ConnectToken {
    issuer()
        .issue(client_id, b"player", std::slice::from_ref(server), NOW)
        .expect("a valid token")
}

/// An event as owned values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ev {
    Connected(PeerId, u32),
    Disconnected(PeerId, DisconnectReason),
    Received(PeerId, Channel, Vec<u8>),
}

pub(crate) fn owned(event: TransportEvent<'_>) -> Ev {
    match event {
        TransportEvent::Connected { peer, connect_data } => Ev::Connected(peer, connect_data),
        TransportEvent::Disconnected { peer, reason } => Ev::Disconnected(peer, reason),
        TransportEvent::Received {
            peer,
            channel,
            data,
        } => Ev::Received(peer, channel, data.to_vec()),
    }
}

/// Where the rig's endpoints live.
pub(crate) trait Net {
    /// The transport of one endpoint.
    type T: Transport + 'static;
    /// Whether time is real (ENet): each step then sleeps a millisecond.
    const REAL: bool;
    /// Opens the server's endpoint and returns it with its public address.
    fn listen(&mut self, max_clients: usize) -> (Self::T, NetworkAddress);
    /// A client endpoint connecting to the server with `connect_data`.
    fn connect(&mut self, connect_data: u32) -> Self::T;
}

/// The in-process loopback network.
pub(crate) struct Loopback(pub(crate) LoopbackNetwork);

impl Loopback {
    pub(crate) fn new() -> Self {
        Self(LoopbackNetwork::new())
    }
}

impl Net for Loopback {
    type T = mf_net::transport::loopback::LoopbackTransport;
    const REAL: bool = false;

    fn listen(&mut self, max_clients: usize) -> (Self::T, NetworkAddress) {
        let t = self.0.listen("arena", max_clients).expect("free name");
        (t, "loopback:arena".parse().expect("an address"))
    }

    fn connect(&mut self, connect_data: u32) -> Self::T {
        self.0.connect("arena", connect_data)
    }
}

/// ENet on 127.0.0.1, on a port the system picks.
#[derive(Default)]
pub(crate) struct Enet {
    addr: Option<SocketAddr>,
}

impl Net for Enet {
    type T = EnetTransport;
    const REAL: bool = true;

    fn listen(&mut self, max_clients: usize) -> (Self::T, NetworkAddress) {
        let bind: SocketAddr = "127.0.0.1:0".parse().expect("an address");
        let t = EnetTransport::listen(bind, max_clients).expect("a free port");
        let addr = t.local_addr().expect("bound");
        self.addr = Some(addr);
        let text = format!("enet:{addr}");
        (t, text.parse().expect("an address"))
    }

    fn connect(&mut self, connect_data: u32) -> Self::T {
        let addr = self.addr.expect("listen first");
        EnetTransport::connect(addr, connect_data).expect("a client socket")
    }
}

/// A client end of the rig: a transport, with the secure layer's counters if it has one.
pub(crate) trait Endpoint: Transport {
    fn secure_stats(&self) -> Option<mf_net_secure::SecureStats>;
}

impl<T: Transport> Endpoint for SecureClient<T> {
    fn secure_stats(&self) -> Option<mf_net_secure::SecureStats> {
        Some(SecureClient::secure_stats(self))
    }
}

/// A raw (not secure) client end.
pub(crate) struct Raw<T>(pub(crate) T);

impl<T: Transport> Transport for Raw<T> {
    fn send(
        &mut self,
        peer: PeerId,
        channel: Channel,
        data: &[u8],
    ) -> Result<(), mf_net::transport::SendError> {
        self.0.send(peer, channel, data)
    }
    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        self.0.poll_event()
    }
    fn advance(&mut self, dt: Duration) {
        self.0.advance(dt);
    }
    fn flush(&mut self) {
        self.0.flush();
    }
    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.0.disconnect(peer, reason);
    }
    fn stats(&self) -> mf_net::transport::TransportStats {
        self.0.stats()
    }
}

impl<T: Transport> Endpoint for Raw<T> {
    fn secure_stats(&self) -> Option<mf_net_secure::SecureStats> {
        None
    }
}

/// At most this many steps per wait (about 20 s over ENet).
const MAX_STEPS: usize = 20_000;
/// Virtual time per step over loopback.
const STEP: Duration = Duration::from_millis(10);

/// A secure server and its clients, with what each reported.
pub(crate) struct Rig<N: Net> {
    pub(crate) net: N,
    pub(crate) server: SecureServer<N::T>,
    pub(crate) address: NetworkAddress,
    pub(crate) server_log: Vec<Ev>,
    pub(crate) clients: Vec<Box<dyn Endpoint>>,
    pub(crate) client_logs: Vec<Vec<Ev>>,
}

impl<N: Net> Rig<N> {
    /// A server for `max_clients`, configured by `configure` (it gets the default config for
    /// this server's address).
    pub(crate) fn new(
        mut net: N,
        max_clients: usize,
        configure: impl FnOnce(ServerConfig) -> ServerConfig,
    ) -> Self {
        let (inner, address) = net.listen(max_clients.max(1) + 4);
        let config = configure(
            ServerConfig::new(PROTOCOL, KEY, vec![address.clone()]).with_max_clients(max_clients),
        );
        Self {
            net,
            server: SecureServer::new(inner, config, NOW).unwrap(),
            address,
            server_log: Vec::new(),
            clients: Vec::new(),
            client_logs: Vec::new(),
        }
    }

    /// Adds a secure client presenting `token`; returns its index.
    pub(crate) fn join(&mut self, token: ConnectToken) -> usize {
        let inner = self.net.connect(7);
        self.add(Box::new(SecureClient::new(inner, token)))
    }

    /// Adds a raw (not secure) client; returns its index.
    pub(crate) fn join_raw(&mut self) -> usize {
        let inner = self.net.connect(7);
        self.add(Box::new(Raw(inner)))
    }

    pub(crate) fn add(&mut self, client: Box<dyn Endpoint>) -> usize {
        self.clients.push(client);
        self.client_logs.push(Vec::new());
        self.clients.len() - 1
    }

    /// One step: every end polls, flushes and moves time on.
    pub(crate) fn step(&mut self) {
        let dt = if N::REAL {
            std::thread::sleep(Duration::from_millis(1));
            Duration::from_millis(1)
        } else {
            STEP
        };
        while let Some(e) = self.server.poll_event() {
            self.server_log.push(owned(e));
        }
        self.server.flush();
        self.server.advance(dt);
        for (client, log) in self.clients.iter_mut().zip(&mut self.client_logs) {
            while let Some(e) = client.poll_event() {
                log.push(owned(e));
            }
            client.flush();
            client.advance(dt);
        }
    }

    /// Steps until `done`, panicking with the logs after [`MAX_STEPS`].
    pub(crate) fn until(&mut self, what: &str, done: impl Fn(&Self) -> bool) {
        for _ in 0..MAX_STEPS {
            if done(self) {
                return;
            }
            self.step();
        }
        panic!(
            "timed out waiting until {what}: server {:?}, clients {:?}",
            self.server_log, self.client_logs
        );
    }

    /// Whether client `i` reported `Connected`.
    pub(crate) fn connected(&self, i: usize) -> bool {
        self.client_logs[i]
            .iter()
            .any(|e| matches!(e, Ev::Connected(..)))
    }

    /// The reason client `i` was disconnected with, once it was.
    pub(crate) fn disconnected(&self, i: usize) -> Option<DisconnectReason> {
        self.client_logs[i].iter().find_map(|e| match e {
            Ev::Disconnected(_, reason) => Some(*reason),
            _ => None,
        })
    }

    /// The peers the server reported as connected, in order.
    pub(crate) fn server_peers(&self) -> Vec<PeerId> {
        self.server_log
            .iter()
            .filter_map(|e| match e {
                Ev::Connected(peer, _) => Some(*peer),
                _ => None,
            })
            .collect()
    }

    /// What client `i` received, in order.
    pub(crate) fn received(&self, i: usize) -> Vec<Vec<u8>> {
        self.client_logs[i]
            .iter()
            .filter_map(|e| match e {
                Ev::Received(_, _, data) => Some(data.clone()),
                _ => None,
            })
            .collect()
    }

    /// What the server received from `peer`, in order.
    pub(crate) fn server_received(&self, peer: PeerId) -> Vec<Vec<u8>> {
        self.server_log
            .iter()
            .filter_map(|e| match e {
                Ev::Received(p, _, data) if *p == peer => Some(data.clone()),
                _ => None,
            })
            .collect()
    }
}
