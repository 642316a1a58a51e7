//! [`GuardedSocket`]: the UDP socket under the ENet host. It keeps what ENet sends to an
//! address that has not proved itself (a CONNECT is all it sent) to one datagram, smaller than
//! that CONNECT; it drops CONNECTs from an IP address that holds its share of slots before ENet
//! sees them (so they get no answer at all); and it hands ENet one CONNECT per service call, and
//! none while every slot is taken, so that the transport looks at every handshake before the
//! next one arrives and can make room for it.
//!
//! ENet answers a 52-byte CONNECT with a 48-byte datagram: a 4-byte header and its
//! VERIFY_CONNECT (44 bytes; ENet does not acknowledge the CONNECT itself). Unacknowledged, it
//! resends that VERIFY_CONNECT with backoff (0.5, 1.5, 3.5, 7.5, 15.5 s…) for up to 30 s: six
//! datagrams, 5.5 times the CONNECT, to an address that may never have asked. Those resends are
//! dropped here: a VERIFY_CONNECT names the slot of its handshake, and a slot's VERIFY_CONNECT
//! goes out once per handshake and address. A genuine client whose VERIFY_CONNECT was lost sends
//! its CONNECT again (after 0.5, 1.5, 3.5 s…) and is answered anew once its first handshake was
//! dropped ([`handshake_timeout`](crate::EnetConfig::handshake_timeout)).

use std::io::{self, ErrorKind};
use std::net::{IpAddr, SocketAddr, UdpSocket};

use rusty_enet::{PacketReceived, Socket, SocketOptions, MTU_MAX};

/// ENet's header flag: the header carries a 16-bit sent time (4 bytes instead of 2).
const FLAG_SENT_TIME: u8 = 0x80;
/// ENet's header flag: the commands are compressed.
const FLAG_COMPRESSED: u8 = 0x40;
/// The command number bits of a command's first byte.
const COMMAND_MASK: u8 = 0x0f;
const COMMAND_CONNECT: u8 = 2;
const COMMAND_VERIFY_CONNECT: u8 = 3;
/// Where a VERIFY_CONNECT names its slot (the server's peer id), after the command header.
const VERIFY_SLOT_AT: usize = 4;

/// The first command of an ENet datagram and where it starts, if the datagram can be read (not
/// compressed).
fn first_command(datagram: &[u8]) -> Option<(u8, usize)> {
    let flags = *datagram.first()?;
    if flags & FLAG_COMPRESSED != 0 {
        return None;
    }
    let header = if flags & FLAG_SENT_TIME != 0 { 4 } else { 2 };
    Some((datagram.get(header)? & COMMAND_MASK, header))
}

/// Whether `datagram` starts with a CONNECT (a stranger asking for a slot).
fn is_connect(datagram: &[u8]) -> bool {
    first_command(datagram).is_some_and(|(command, _)| command == COMMAND_CONNECT)
}

/// The slot a datagram's VERIFY_CONNECT answers for, if it starts with one.
fn verify_connect_slot(datagram: &[u8]) -> Option<usize> {
    match first_command(datagram)? {
        (COMMAND_VERIFY_CONNECT, at) => {
            let id = datagram.get(at + VERIFY_SLOT_AT..at + VERIFY_SLOT_AT + 2)?;
            Some(usize::from(u16::from_be_bytes([id[0], id[1]])))
        }
        _ => None,
    }
}

/// The socket of an ENet host (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct GuardedSocket {
    socket: UdpSocket,
    /// A CONNECT went to ENet since [`begin_service`](Self::begin_service).
    passed_connect: bool,
    /// Every slot is taken but one can be freed: a CONNECT waits until it is.
    full: bool,
    /// Receiving stopped at a CONNECT, which waits in the OS queue.
    deferred: bool,
    /// Per slot: the address its handshake's VERIFY_CONNECT went to, until
    /// [`handshake_over`](Self::handshake_over).
    answered: Vec<Option<SocketAddr>>,
    /// Per slot: the IP address of the peer holding it (in any state), as of the last look.
    holders: Vec<Option<IpAddr>>,
    /// CONNECTs from an IP address holding this many slots are dropped unanswered.
    max_per_ip: usize,
}

/// The most CONNECTs over the per-address limit one receive call drops before it lets ENet
/// end its receive loop (the rest are read at the next service call).
const MAX_DROPS_PER_RECEIVE: usize = 256;

impl GuardedSocket {
    /// A socket for a host of `slots` slots, taking CONNECTs from addresses holding fewer than
    /// `max_per_ip` of them.
    pub(crate) fn new(socket: UdpSocket, slots: usize, max_per_ip: usize) -> Self {
        GuardedSocket {
            socket,
            passed_connect: false,
            full: false,
            deferred: false,
            answered: vec![None; slots],
            holders: vec![None; slots],
            max_per_ip,
        }
    }

    /// Who holds `slot` now (`None`: nobody).
    pub(crate) fn set_holder(&mut self, slot: usize, holder: Option<IpAddr>) {
        if let Some(h) = self.holders.get_mut(slot) {
            *h = holder;
        }
    }

    fn at_limit(&self, ip: IpAddr) -> bool {
        self.holders.iter().filter(|&&h| h == Some(ip)).count() >= self.max_per_ip
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Before a service call: lets one CONNECT through. Returns whether one went through since
    /// the last call (so its handshake is to be looked at first).
    pub(crate) fn begin_service(&mut self) -> bool {
        self.deferred = false;
        std::mem::take(&mut self.passed_connect)
    }

    /// After a service call: whether a CONNECT waits for the next one.
    pub(crate) fn deferred(&self) -> bool {
        self.deferred
    }

    /// Whether every slot is taken and one can be freed (a handshake dropped) for a CONNECT:
    /// CONNECTs then wait until one is.
    pub(crate) fn set_full(&mut self, full: bool) {
        self.full = full;
    }

    /// The handshake on `slot` ended (completed or dropped): its next VERIFY_CONNECT belongs to
    /// a new one.
    pub(crate) fn handshake_over(&mut self, slot: usize) {
        if let Some(answered) = self.answered.get_mut(slot) {
            *answered = None;
        }
    }
}

impl Socket for GuardedSocket {
    type Address = SocketAddr;
    type Error = io::Error;

    fn init(&mut self, options: SocketOptions) -> io::Result<()> {
        Socket::init(&mut self.socket, options)
    }

    fn send(&mut self, address: SocketAddr, buffer: &[u8]) -> io::Result<usize> {
        if let Some(answered) = verify_connect_slot(buffer).and_then(|s| self.answered.get_mut(s)) {
            if *answered == Some(address) {
                // A resend: the handshake got its one answer.
                return Ok(buffer.len());
            }
            *answered = Some(address);
        }
        Socket::send(&mut self.socket, address, buffer)
    }

    fn receive(
        &mut self,
        buffer: &mut [u8; MTU_MAX],
    ) -> io::Result<Option<(SocketAddr, PacketReceived)>> {
        for _ in 0..MAX_DROPS_PER_RECEIVE {
            if (self.passed_connect || self.full) && self.next_is_connect(buffer)? {
                self.deferred = true;
                return Ok(None);
            }
            let received = Socket::receive(&mut self.socket, buffer)?;
            if let Some((from, PacketReceived::Complete(len))) = &received {
                if is_connect(&buffer[..(*len).min(MTU_MAX)]) {
                    if self.at_limit(from.ip()) {
                        continue;
                    }
                    self.passed_connect = true;
                }
            }
            return Ok(received);
        }
        Ok(None)
    }
}

impl GuardedSocket {
    /// Whether the next datagram waiting is a CONNECT (left in the queue).
    fn next_is_connect(&self, buffer: &mut [u8; MTU_MAX]) -> io::Result<bool> {
        match self.socket.peek_from(buffer) {
            Ok((len, _)) => Ok(is_connect(&buffer[..len.min(MTU_MAX)])),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            // Whatever it is, the receive that follows reports it (or reads the datagram).
            Err(_) => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A VERIFY_CONNECT datagram as ENet sends it, for `slot`.
    fn verify_connect(slot: u16) -> Vec<u8> {
        let mut d = vec![
            0x80,
            0x00,
            0x12,
            0x34,
            COMMAND_VERIFY_CONNECT | 0x80,
            0xff,
            0,
            1,
        ];
        d.extend_from_slice(&slot.to_be_bytes());
        d.resize(48, 0);
        d
    }

    #[test]
    fn verify_connects_name_their_slot_and_nothing_else_is_one() {
        assert_eq!(verify_connect_slot(&verify_connect(7)), Some(7));
        assert_eq!(verify_connect_slot(&verify_connect(4094)), Some(4094));
        let mut compressed = verify_connect(7);
        compressed[0] |= FLAG_COMPRESSED;
        assert_eq!(verify_connect_slot(&compressed), None);
        assert_eq!(verify_connect_slot(&verify_connect(7)[..9]), None);
        assert_eq!(verify_connect_slot(&[]), None);
        assert_eq!(
            verify_connect_slot(&[0x80, 0, 0, 0, 6 | 0x80, 0, 0, 1, 0, 7]),
            None
        );
    }

    #[test]
    fn a_handshake_is_answered_once_per_address_until_it_is_over() {
        let udp = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let sink = UdpSocket::bind("127.0.0.1:0").expect("bind");
        sink.set_nonblocking(true).expect("non-blocking");
        let to = sink.local_addr().expect("addr");
        let mut socket = GuardedSocket::new(udp, 4, 4);
        let answer = verify_connect(2);
        let sent = |socket: &mut GuardedSocket| {
            let _ = socket.send(to, &answer);
            let mut buf = [0; 64];
            let mut n = 0;
            // Loopback delivers at once, but give it a moment.
            for _ in 0..50 {
                while sink.recv_from(&mut buf).is_ok() {
                    n += 1;
                }
                if n > 0 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            n
        };
        assert_eq!(sent(&mut socket), 1);
        assert_eq!(sent(&mut socket), 0, "a resend");
        socket.handshake_over(2);
        assert_eq!(sent(&mut socket), 1, "a new handshake");
    }

    #[test]
    fn connects_are_recognised() {
        assert!(is_connect(&[
            0x8f,
            0xff,
            0,
            0,
            COMMAND_CONNECT | 0x80,
            0xff
        ]));
        assert!(is_connect(&[0x0f, 0xff, COMMAND_CONNECT]));
        assert!(!is_connect(&[0x8f, 0xff, 0, 0, COMMAND_VERIFY_CONNECT]));
        assert!(!is_connect(&[0xcf, 0xff, 0, 0, COMMAND_CONNECT]));
        assert!(!is_connect(&[0x8f]));
    }
}
