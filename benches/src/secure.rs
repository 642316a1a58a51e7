//! The secure layer's cost per packet: one unreliable packet from a client to the server over
//! loopback, plain ([`PacketFixture::plain`]) or through [`SecureClient`] and [`SecureServer`]
//! ([`PacketFixture::secure`]), whose difference is sealing and opening it.

use std::time::Duration;

use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};
use mf_net::transport::{Channel, PeerId, Transport, TransportEvent};
use mf_net_secure::{
    ConnectToken, SecureClient, SecureServer, ServerConfig, SharedKey, TokenIssuer,
};

/// The fixtures' protocol id.
pub const PROTOCOL: u64 = 0x6265_6e63_6800_0001;
/// The fixtures' shared key.
pub const KEY: SharedKey = SharedKey::from_bytes([0x42; 32]);
/// The fixtures' wall-clock time.
pub const NOW: Duration = Duration::from_secs(1_800_000_000);
const ADDRESS: &str = "loopback:bench";

/// A token issuer for the fixtures.
pub fn issuer() -> TokenIssuer {
    TokenIssuer::new(PROTOCOL, KEY)
}

/// A token for the fixtures' server, for client id `client_id`.
pub fn token_for(client_id: u64) -> ConnectToken {
    let servers = [ADDRESS.parse().expect("an address")];
    issuer()
        .issue(client_id, b"bench", &servers, NOW)
        .expect("a token")
}

/// The fixtures' secure server listening on `network` for up to `clients` clients.
pub fn server(network: &LoopbackNetwork, clients: usize) -> SecureServer<LoopbackTransport> {
    let config = ServerConfig::new(PROTOCOL, KEY, vec![ADDRESS.parse().expect("an address")])
        .with_max_clients(clients);
    let listen = network.listen("bench", clients).expect("free name");
    SecureServer::new(listen, config, NOW).expect("a valid configuration")
}

/// A secure client of [`server`] on `network`, client id `client_id`, connecting with
/// `connect_data`.
pub fn client(
    network: &LoopbackNetwork,
    client_id: u64,
    connect_data: u32,
) -> SecureClient<LoopbackTransport> {
    SecureClient::new(network.connect("bench", connect_data), token_for(client_id))
}

/// A connected client and server, and the payload the client sends.
pub struct PacketFixture<S: Transport, C: Transport> {
    server: S,
    client: C,
    payload: Vec<u8>,
    /// The server's inner totals once the handshake was done: (bytes, packets).
    handshake: (u64, u64),
}

impl PacketFixture<LoopbackTransport, LoopbackTransport> {
    /// The plain path: loopback, `size`-byte payloads.
    pub fn plain(size: usize) -> Self {
        let network = LoopbackNetwork::new();
        let server = network.listen("bench", 1).expect("free name");
        let client = network.connect("bench", 0);
        Self::connected(server, client, size)
    }
}

impl PacketFixture<SecureServer<LoopbackTransport>, SecureClient<LoopbackTransport>> {
    /// The secure path over the same loopback, `size`-byte payloads.
    pub fn secure(size: usize) -> Self {
        let network = LoopbackNetwork::new();
        let server = server(&network, 1);
        let client = client(&network, 1, 0);
        Self::connected(server, client, size)
    }
}

impl<S: Transport, C: Transport> PacketFixture<S, C> {
    fn connected(server: S, client: C, size: usize) -> Self {
        let mut fixture = Self {
            server,
            client,
            payload: vec![0xa5; size],
            handshake: (0, 0),
        };
        for _ in 0..8 {
            while fixture.server.poll_event().is_some() {}
            fixture.server.flush();
            while fixture.client.poll_event().is_some() {}
            fixture.client.flush();
        }
        let stats = fixture.server.stats();
        fixture.handshake = (stats.bytes_received, stats.packets_received);
        for _ in 0..8 {
            assert_eq!(fixture.one_packet(), size, "the fixture is connected");
        }
        fixture
    }

    /// The client sends the payload unreliably and flushes; the server polls it. Returns the
    /// payload length the server got (0 if nothing came).
    pub fn one_packet(&mut self) -> usize {
        let _ = self
            .client
            .send(PeerId::SERVER, Channel::Unreliable, &self.payload);
        self.client.flush();
        match self.server.poll_event() {
            Some(TransportEvent::Received { data, .. }) => data.len(),
            _ => 0,
        }
    }

    /// Bytes on the wire per packet since the handshake (the inner transport's payload bytes).
    pub fn wire_bytes_per_packet(&self) -> u64 {
        let stats = self.server.stats();
        let bytes = stats.bytes_received - self.handshake.0;
        bytes / (stats.packets_received - self.handshake.1).max(1)
    }
}

/// What the peers of a [`RequestFlood`] send as their first packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// 200 random bytes.
    Random,
    /// A valid request captured from another client (its token opens: the server derives the
    /// connection's keys and answers with a challenge).
    Replayed,
    /// A request whose header is forged (another format version): refused before any
    /// cryptography.
    ForgedHeader,
    /// A genuine client: request, challenge, answer, admission (both ends' work).
    Genuine,
}

/// `n` peers connected to a secure server over loopback, each with its first packet sent; the
/// server has yet to read them.
pub struct RequestFlood {
    server: SecureServer<LoopbackTransport>,
    clients: Vec<Box<dyn Transport>>,
    kind: Request,
}

impl RequestFlood {
    /// A server and `n` peers that will send a `kind` first packet.
    pub fn new(kind: Request, n: usize) -> Self {
        let network = LoopbackNetwork::new();
        let mut config =
            ServerConfig::new(PROTOCOL, KEY, vec![ADDRESS.parse().expect("an address")])
                .with_max_clients(n);
        config.max_pending = n;
        let listener = network.listen("bench", n).expect("free name");
        let mut server = SecureServer::new(listener, config, NOW).expect("a valid configuration");
        let captured = captured_request();
        let mut rng = fastrand::Rng::with_seed(7);
        let mut clients: Vec<Box<dyn Transport>> = Vec::with_capacity(n);
        let servers = [ADDRESS.parse().expect("an address")];
        for id in 0..n as u64 {
            let inner = network.connect("bench", 0);
            if kind == Request::Genuine {
                let token = issuer()
                    .issue(id, b"bench", &servers, NOW)
                    .expect("a token");
                clients.push(Box::new(SecureClient::new(inner, token)));
            } else {
                clients.push(Box::new(inner));
            }
        }
        while server.poll_event().is_some() {}
        for client in &mut clients {
            while client.poll_event().is_some() {}
            let packet = match kind {
                Request::Random => (0..200).map(|_| rng.u8(..)).collect(),
                Request::Replayed => captured.clone(),
                Request::ForgedHeader => {
                    let mut forged = captured.clone();
                    forged[8] ^= 0xff; // the format version's last byte
                    forged
                }
                Request::Genuine => Vec::new(),
            };
            if !packet.is_empty() {
                let _ = client.send(PeerId::SERVER, Channel::Reliable, &packet);
            }
            client.flush();
        }
        Self {
            server,
            clients,
            kind,
        }
    }

    /// The server reads every first packet (for genuine clients, the whole handshake runs).
    /// Returns how many peers were admitted.
    pub fn run(&mut self) -> usize {
        let rounds = if self.kind == Request::Genuine { 3 } else { 1 };
        for _ in 0..rounds {
            while self.server.poll_event().is_some() {}
            self.server.flush();
            for client in &mut self.clients {
                while client.poll_event().is_some() {}
                client.flush();
            }
        }
        self.server.admitted_count()
    }
}

/// A genuine client's connection request, as an attacker on the path captures it.
fn captured_request() -> Vec<u8> {
    let network = LoopbackNetwork::new();
    let mut listener = network.listen("capture", 1).expect("free name");
    let mut client = SecureClient::new(network.connect("capture", 0), token_for(1));
    while client.poll_event().is_some() {}
    client.flush();
    while let Some(event) = listener.poll_event() {
        if let TransportEvent::Received { data, .. } = event {
            return data.to_vec();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floods_are_refused_and_genuine_clients_admitted() {
        for kind in [Request::Random, Request::Replayed, Request::ForgedHeader] {
            let mut flood = RequestFlood::new(kind, 16);
            assert_eq!(flood.run(), 0, "{kind:?}");
            assert_eq!(
                flood.server.pending_count(),
                usize::from(kind == Request::Replayed) * 16
            );
        }
        let mut genuine = RequestFlood::new(Request::Genuine, 16);
        assert_eq!(genuine.run(), 16);
    }

    #[test]
    fn the_secure_path_adds_25_bytes_per_packet() {
        let mut plain = PacketFixture::plain(200);
        let mut secure = PacketFixture::secure(200);
        for _ in 0..100 {
            assert_eq!(plain.one_packet(), 200);
            assert_eq!(secure.one_packet(), 200);
        }
        assert_eq!(plain.wire_bytes_per_packet(), 200);
        let overhead = secure.wire_bytes_per_packet() - 200;
        assert_eq!(overhead, mf_net_secure::PACKET_OVERHEAD as u64);
        assert_eq!(overhead, 25);
    }
}
