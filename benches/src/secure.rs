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

/// A token for the fixtures' server.
pub fn token() -> ConnectToken {
    let servers = [ADDRESS.parse().expect("an address")];
    issuer().issue(1, b"bench", &servers, NOW).expect("a token")
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
        let config = ServerConfig::new(PROTOCOL, KEY, vec![ADDRESS.parse().expect("an address")]);
        let server = SecureServer::new(network.listen("bench", 1).expect("free name"), config, NOW)
            .expect("a valid configuration");
        let client = SecureClient::new(network.connect("bench", 0), token());
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
        for _ in 0..4 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
