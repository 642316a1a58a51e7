//! ENet transport for mf-net: real UDP through [`rusty_enet`] (ENet 1.3.18 transpiled to Rust,
//! wire-compatible with the C library).
//!
//! This is the only crate of mf-net that opens sockets and reads a clock (ENet keeps its own time
//! for resends and timeouts; [`EnetTransport`] times handshakes and connects; [`run()`] paces a
//! game loop). Everything above it stays sans-IO: an [`EnetTransport`] is a
//! [`Transport`](mf_net::transport::Transport) like the in-process loopback, polled by the game
//! loop, and polling never blocks.
//!
//! ```no_run
//! use mf_net::transport::{Channel, Transport, TransportEvent};
//! use mf_net_enet::EnetTransport;
//!
//! # fn main() -> Result<(), mf_net_enet::EnetError> {
//! let mut server = EnetTransport::listen("127.0.0.1:0".parse().unwrap(), 8)?;
//! let port = server.local_addr().map(|a| a.port()).unwrap_or(0);
//! let mut client = EnetTransport::connect(("127.0.0.1", port), 0x1234)?;
//! loop {
//!     while let Some(event) = server.poll_event() {
//!         if let TransportEvent::Connected { peer, connect_data } = event {
//!             println!("{peer} joined with {connect_data:#x}");
//!             let _ = server.send(peer, Channel::Reliable, b"welcome");
//!         }
//!     }
//!     while let Some(event) = client.poll_event() {
//!         println!("client: {event:?}");
//!     }
//!     server.flush();
//!     client.flush();
//!     # break;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Mapping onto ENet
//!
//! - [`Channel::Reliable`](mf_net::transport::Channel::Reliable) is ENet channel 0 with the
//!   reliable flag; [`Channel::Unreliable`](mf_net::transport::Channel::Unreliable) is channel 1,
//!   unreliable sequenced with unreliable fragments, so an oversized snapshot stays unreliable.
//! - Server-side [`PeerId`](mf_net::transport::PeerId)s are small numbers, as on the loopback
//!   transport: the first connection on each ENet slot is `2 + slot` (`peer#2`, `peer#3`…),
//!   and each later connection on a slot (ENet reuses slots) one slot count further, so a
//!   `PeerId` is never reused. On a client the server is always
//!   [`PeerId::SERVER`](mf_net::transport::PeerId::SERVER) (a client transport connects once).
//! - Disconnect reasons travel as ENet disconnect data (see [`wire_reason`]).
//! - The connect data is the client's `connect_data` (mf-net sends its registry fingerprint).
//!
//! # Strangers
//!
//! ENet gives a slot to, and answers, any CONNECT, whose source address nobody checks. A server
//! transport answers each CONNECT once, with a datagram smaller than the CONNECT (ENet's resends
//! of its VERIFY_CONNECT are dropped); drops handshakes not completed within
//! [`EnetConfig::handshake_timeout`] (1 s) without sending anything; makes room for a new
//! CONNECT by dropping the oldest handshake when every slot is taken; and lets one IP address
//! hold at most [`EnetConfig::max_peers_per_ip`] (16) peers in any state. Handshakes that never
//! complete are never reported. What ENet still exposes (its blind handshake, unauthenticated
//! headers) is listed in the book's ENet chapter.

mod factory;
mod node;
mod run;
mod socket;
mod transport;

pub use factory::{default_selector, EnetTransportFactory};
pub use node::NetworkNode;
pub use run::{run, FixedStep};
pub use transport::{EnetConfig, EnetError, EnetTransport, DEFAULT_PORT};

/// How disconnect reasons are written into ENet's 32-bit disconnect data.
///
/// ENet reports its own timeouts (and a failed connect) as a disconnect with data 0, which would
/// read as [`DisconnectReason::Closed`](mf_net::transport::DisconnectReason::Closed) (code 0). So
/// mf-net sets [`REASON_FLAG`](wire_reason::REASON_FLAG) on every reason it sends: data with the
/// flag carries [`DisconnectReason::code`](mf_net::transport::DisconnectReason::code) in the
/// other bits; data 0 is ENet's own timeout; any other value (a plain ENet program's data) is
/// read with [`DisconnectReason::from_code`](mf_net::transport::DisconnectReason::from_code).
pub mod wire_reason {
    use mf_net::transport::DisconnectReason;

    /// Marks disconnect data written by mf-net.
    pub const REASON_FLAG: u32 = 0x8000_0000;

    /// The ENet disconnect data for `reason`.
    pub const fn encode(reason: DisconnectReason) -> u32 {
        REASON_FLAG | reason.code()
    }

    /// The reason carried by ENet disconnect data (see the [module docs](self)).
    pub const fn decode(data: u32) -> DisconnectReason {
        if data & REASON_FLAG != 0 {
            DisconnectReason::from_code(data & !REASON_FLAG)
        } else if data == 0 {
            DisconnectReason::Timeout
        } else {
            DisconnectReason::from_code(data)
        }
    }

    /// Whether `data` was written by [`encode`].
    pub const fn is_explicit(data: u32) -> bool {
        data & REASON_FLAG != 0
    }
}

/// Allocation accounting.
///
/// `rusty_enet` is ENet's C code transpiled to Rust, and like the C library it allocates for every
/// packet and protocol command (packet headers, command and acknowledgement nodes, the packet's
/// copy of the data) through the global allocator. The spec measures its zero-allocation goal with
/// a managed-heap counter that never sees ENet's native `malloc`s. A counting global allocator
/// makes the same split by installing a wrapper with
/// [`set_enet_call_wrapper`](diagnostics::set_enet_call_wrapper): every call this crate makes
/// into `rusty_enet` then runs inside it (for example inside the counter's opt-out), so this
/// crate's own bookkeeping, the bus and the game can be asserted allocation-free while ENet's own
/// allocations are left out, or counted on their own (`tests/tests/enet_bus.rs` does both).
pub mod diagnostics {
    use std::sync::OnceLock;

    /// Runs its argument (one call into `rusty_enet`) exactly once, on the calling thread.
    pub type EnetCallWrapper = fn(&mut dyn FnMut());

    static WRAPPER: OnceLock<EnetCallWrapper> = OnceLock::new();

    /// Installs `wrapper` for every later call into `rusty_enet`, process-wide. Returns false if
    /// a wrapper was installed before (the first one stays). A wrapper that does not call its
    /// argument is tolerated: the call then runs unwrapped.
    pub fn set_enet_call_wrapper(wrapper: EnetCallWrapper) -> bool {
        WRAPPER.set(wrapper).is_ok()
    }

    /// Runs `f` (a call into `rusty_enet`) through the installed wrapper, if any.
    pub(crate) fn enet<R>(f: impl FnOnce() -> R) -> R {
        let Some(wrapper) = WRAPPER.get() else {
            return f();
        };
        let mut f = Some(f);
        let mut out = None;
        wrapper(&mut || {
            if let Some(f) = f.take() {
                out = Some(f());
            }
        });
        match (out, f) {
            (Some(out), _) => out,
            (None, Some(f)) => f(),
            (None, None) => unreachable!("the ENet call ran but returned nothing"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wire_reason;
    use mf_net::transport::DisconnectReason;

    #[test]
    fn wire_reasons_round_trip_and_zero_is_timeout() {
        for reason in [
            DisconnectReason::Closed,
            DisconnectReason::Timeout,
            DisconnectReason::Kicked,
            DisconnectReason::Shutdown,
            DisconnectReason::ProtocolMismatch,
            DisconnectReason::ConnectFailed,
            DisconnectReason::ServerFull,
            DisconnectReason::ReliableSendFailed,
            DisconnectReason::Custom(7),
            DisconnectReason::Custom(u16::MAX),
        ] {
            let data = wire_reason::encode(reason);
            assert!(wire_reason::is_explicit(data));
            assert_eq!(wire_reason::decode(data), reason);
        }
        assert_eq!(wire_reason::decode(0), DisconnectReason::Timeout);
        assert_eq!(wire_reason::decode(2), DisconnectReason::Kicked);
    }

    #[test]
    fn enet_calls_run_once_without_a_wrapper() {
        let mut n = 0;
        assert_eq!(
            super::diagnostics::enet(|| {
                n += 1;
                n
            }),
            1
        );
    }
}
