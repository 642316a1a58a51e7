//! Spoofed ENet CONNECTs: [`connect_packet`] builds the 52-byte datagram a plain ENet client
//! sends first, and [`Spoofers`] sends it from many UDP sockets that never answer, which is all
//! a server can see of a spoofed source address. Used by the `enet_flood` measurement and by
//! `tests/tests/enet_flood.rs`.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};

/// The length of an ENet CONNECT datagram: a 4-byte header (peer id 0xFFF with the sent-time
/// flag, sent time) and the 48-byte CONNECT command.
pub const CONNECT_LEN: usize = 52;

/// An ENet CONNECT (protocol of ENet 1.3, as `rusty_enet` and the C library send it) asking for
/// two channels, with `connect_id` (ENet's random handshake id) and `data` (mf-net's registry
/// fingerprint).
pub fn connect_packet(connect_id: u32, data: u32) -> [u8; CONNECT_LEN] {
    let mut p = [0; CONNECT_LEN];
    // Header: the sent-time flag with peer id 0xFFF (none yet), then the sent time.
    p[0..2].copy_from_slice(&0x8fffu16.to_be_bytes());
    p[2..4].copy_from_slice(&1u16.to_be_bytes());
    // Command header: CONNECT with the acknowledge flag, channel 0xFF, reliable sequence 1.
    p[4] = 0x82;
    p[5] = 0xff;
    p[6..8].copy_from_slice(&1u16.to_be_bytes());
    // Outgoing peer id 0, session ids 0xFF (let the server pick).
    p[10] = 0xff;
    p[11] = 0xff;
    let fields: [u32; 10] = [
        1392,   // mtu
        65_536, // window size
        2,      // channel count
        0,      // incoming bandwidth
        0,      // outgoing bandwidth
        5000,   // packet throttle interval
        2,      // throttle acceleration
        2,      // throttle deceleration
        connect_id, data,
    ];
    for (i, field) in fields.iter().enumerate() {
        let at = 12 + 4 * i;
        p[at..at + 4].copy_from_slice(&field.to_be_bytes());
    }
    p
}

/// What the spoofing sockets received back.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Datagrams.
    pub datagrams: usize,
    /// Bytes.
    pub bytes: usize,
    /// The most bytes one socket received.
    pub most_bytes_on_one: usize,
    /// The most datagrams one socket received.
    pub most_datagrams_on_one: usize,
}

/// UDP sockets on one local IP address that send CONNECTs and never answer.
#[derive(Debug)]
pub struct Spoofers {
    sockets: Vec<UdpSocket>,
    next_id: u32,
    next_socket: usize,
    /// CONNECTs sent.
    pub sent: usize,
}

impl Spoofers {
    /// `count` non-blocking sockets bound to port 0 of `ip` (such as `127.0.0.1`).
    ///
    /// # Panics
    ///
    /// A socket cannot be bound.
    pub fn new(ip: &str, count: usize) -> Self {
        let sockets = (0..count)
            .map(|_| {
                let s = UdpSocket::bind((ip, 0)).expect("bind a spoofing socket");
                s.set_nonblocking(true).expect("non-blocking");
                s
            })
            .collect();
        Spoofers {
            sockets,
            next_id: 0x5000_0000,
            next_socket: 0,
            sent: 0,
        }
    }

    /// One CONNECT (with a fresh connect id) from every socket.
    pub fn connect_all(&mut self, server: SocketAddr) {
        for _ in 0..self.sockets.len() {
            self.connect_next(server);
        }
    }

    /// One CONNECT (with a fresh connect id) from the next socket, round robin.
    pub fn connect_next(&mut self, server: SocketAddr) {
        let i = self.next_socket % self.sockets.len().max(1);
        self.next_socket = self.next_socket.wrapping_add(1);
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        if let Some(s) = self.sockets.get(i) {
            if s.send_to(&connect_packet(id, 0), server).is_ok() {
                self.sent += 1;
            }
        }
    }

    /// Reads (non-blocking) everything that arrived since the last call.
    pub fn drain(&mut self) -> Received {
        let mut r = Received::default();
        let mut buf = [0; 4096];
        for s in &self.sockets {
            let (mut datagrams, mut bytes) = (0, 0);
            loop {
                match s.recv_from(&mut buf) {
                    Ok((len, _)) => {
                        datagrams += 1;
                        bytes += len;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    // ICMP port unreachable and the like: nothing was received.
                    Err(_) => break,
                }
            }
            r.datagrams += datagrams;
            r.bytes += bytes;
            r.most_bytes_on_one = r.most_bytes_on_one.max(bytes);
            r.most_datagrams_on_one = r.most_datagrams_on_one.max(datagrams);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connect_is_52_bytes_with_its_ids_in_place() {
        let p = connect_packet(0x0102_0304, 0xa0b0_c0d0);
        assert_eq!(p.len(), CONNECT_LEN);
        assert_eq!(&p[..8], &[0x8f, 0xff, 0, 1, 0x82, 0xff, 0, 1]);
        assert_eq!(&p[44..48], &[1, 2, 3, 4]);
        assert_eq!(&p[48..52], &[0xa0, 0xb0, 0xc0, 0xd0]);
    }
}
