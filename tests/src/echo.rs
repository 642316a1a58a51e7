//! One round of echo traffic between a server transport and its clients, for the tests that
//! count allocations in steady state through a transport.

use std::time::Duration;

use mf_net::transport::{Channel, PeerId, Transport, TransportEvent};

/// One round: every client sends on both channels, the server echoes everything, the clients
/// read the echoes. Returns how many echoes the clients read.
pub fn round<S: Transport, C: Transport>(server: &mut S, clients: &mut [C], dt: Duration) -> usize {
    let reliable = [7u8; 32];
    let unreliable = [9u8; 200];
    for client in clients.iter_mut() {
        client.advance(dt);
        // Some clients of the simulated test are not connected yet during warm-up.
        let _ = client.send(PeerId::SERVER, Channel::Reliable, &reliable);
        let _ = client.send(PeerId::SERVER, Channel::Unreliable, &unreliable);
        client.flush();
    }
    server.advance(dt);
    while let Some(event) = server.poll_event() {
        if let TransportEvent::Received {
            peer,
            channel,
            data,
        } = event
        {
            let mut echo = [0u8; 256];
            let len = data.len().min(echo.len());
            echo[..len].copy_from_slice(&data[..len]);
            let _ = server.send(peer, channel, &echo[..len]);
        }
    }
    server.flush();
    let mut echoes = 0;
    for client in clients.iter_mut() {
        while let Some(event) = client.poll_event() {
            if let TransportEvent::Received { data, .. } = event {
                assert!(data[0] == 7 || data[0] == 9);
                echoes += 1;
            }
        }
    }
    echoes
}
