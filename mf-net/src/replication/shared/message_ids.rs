//! The message ids the replication protocol reserves at the top of the message id space, and
//! their byte layouts: for tools that read captured packets or craft them in tests. Game code
//! never needs them: [`Multiplayer`](crate::replication::Multiplayer) sends and reads these messages.
//!
//! Every message is one packet with the bus's 7-byte header (protocol version `u8`, message id
//! `u16`, sender tick `u32`, little-endian) and the payload below. Varints are LEB128; `varint
//! i32` is zig-zag. Snapshot and ack travel on the unreliable channel, everything else on the
//! reliable one.
//!
//! | id | message | direction | payload |
//! | --- | --- | --- | --- |
//! | 4080 | hello | client → server | fingerprint `u64` · scene count varint · per scene: name string · node count varint · per node: type name string, schema hash `u64` |
//! | 4081 | welcome | server → client | layout 2: peer id `u64` · tick rate `u8` · server tick `u32` · snapshot encoding `u8` (0 bytes, 1 bits) |
//! | 4082 | refuse | server → client | text string (then the server disconnects with `ProtocolMismatch`) |
//! | 4083 | spawn | server → client | layout 3: one spawn or more, to the end of the message, each its byte length varint and then: first net id varint · scene varint i32 (index, −1 bind, −2 spawner, −3 typed) · parent net id varint (0: by path) · [parent path string] · name string · authority varint u64 · node count varint · [scene −2 only: spawner index varint · data length varint · data (the spawn data's `NetCodec` encoding)] · [scene −3 only, per node: schema hash `u64` · link varint (0 the root, 2j + 1 a child of node j, 2j + 2 beside node j; for the root, 2: beside the group's parent)] · absent count varint · absent net ids varint… · per present node, in id order: its full state |
//! | 4084 | despawn | server → client | layout 2: the first net id varint of each group despawned, one or more, to the end of the message |
//! | 4085 | snapshot | server → client | flags `u8` (bit 0: truncated) · the byte encoding: entries `net id varint · length varint · state` · `0`; or the bit-packed one (see the book's wire-format chapter): default baseline gamma · entries · a `0` bit · zero bits to the byte |
//! | 4086 | ack | client → server | snapshot tick varint |
//! | 4087 | authority | server → client | net id varint · peer varint u64 · recursive bool |
//! | 4088 | rpc | both | net id varint · RPC wire id varint · arguments (each parameter's `NetCodec` encoding); reliable or unreliable as the RPC is declared |
//! | 4089 | input | client → server | newest tick varint · count `u8` (1–32) · per input, oldest first (ticks `newest − count + 1` … `newest`): `0` (the same bytes as the input before it) or byte length + 1 varint and the input's `NetCodec` bytes (at most 256) · view: `0`, or render tick's whole ticks behind the input's tick + 1 varint (a client sends 0 to 2¹⁶ behind; the server clamps other claims) and its fraction in 256ths `u8` |
//! | 4090 | input ack | server → client | newest input tick received varint · lead varint i32 (ticks the newest input was ahead of the ticks simulated since the last ack, at the lowest; negative: late) |
//! | 4091 | resend | client → server | count varint (1–256) · net ids varint…: nodes whose state, as the client applied it, held a member back because it named a node the client does not have yet; the server sends each one's whole state again |
//! | 4092 | parent | server → client | first net id varint of the group moved · parent net id varint (0: by path) · [parent path string] |
//! | 4093 | held rpc | server → client | as rpc: a call the server made on a node whose spawn had not gone out, sent after the spawn, which holds the state after the call |
//!
//! Resend and parent travel on the reliable channel; a held rpc on the channel its RPC is
//! declared for. Input and input ack travel on the unreliable channel; only a
//! [`Simulation`](crate::prediction::Simulation) sends them. An idle snapshot is the header,
//! the flags byte and the terminating 0: 9 bytes. The remaining reserved ids are unused.
//!
//! The table above is the protocol table (`MESSAGES`, internal), which also gives each message
//! its direction and its handler: the runtime refuses a message that travels the wrong way
//! ([`WrongDirection`](crate::wire::ProtocolViolation::WrongDirection)) and, at a client, a
//! server → client message from a peer other than its server
//! ([`NotFromServer`](crate::wire::ProtocolViolation::NotFromServer); an input ack from another
//! peer is the wrong direction); either counts in
//! [`NetworkStats::control_dropped`](crate::replication::NetworkStats::control_dropped). Ids
//! past the last one are not replication's.
//!
//! Every one of them enters the message registry's fingerprint (the transport's connect
//! data) under its name and layout version, so a peer that lays any of them out differently is
//! refused before the hello, its refusal naming the message.
//!
//! When some spawnable scene's type has RPCs, the hello carries their signatures after the
//! shapes (type count varint · per type: stable name string · RPC count varint · per RPC:
//! description string, signature hash `u64`), and the fingerprint covers them.

/// Client → server: the replication fingerprint and the scene shapes behind it.
pub const HELLO: u16 = crate::bus::FIRST_RESERVED_ID;
/// Server → client: the client's peer id, the tick rate and the server tick.
pub const WELCOME: u16 = HELLO + 1;
/// Server → client: why the hello was refused, naming the first difference.
pub const REFUSE: u16 = HELLO + 2;
/// Server → client: spawned (or bound) scene instances with their full states, one or more, each
/// behind its byte length (varint), to the end of the message.
pub const SPAWN: u16 = HELLO + 3;
/// Server → client: a networked node (and its subtree) is gone.
pub const DESPAWN: u16 = HELLO + 4;
/// Server → client: the members changed since the client's acknowledged tick, per node.
pub const SNAPSHOT: u16 = HELLO + 5;
/// Client → server: a snapshot was fully applied (also the client's heartbeat).
pub const ACK: u16 = HELLO + 6;
/// Server → client: a node's network authority changed.
pub const AUTHORITY: u16 = HELLO + 7;
/// Both ways: one RPC call (see
/// [`multiplayer`](crate::replication::multiplayer)).
pub const RPC: u16 = HELLO + 8;
/// Client → server: the inputs of the newest ticks (see
/// [`Simulation`](crate::prediction::Simulation)).
pub const INPUT: u16 = HELLO + 9;
/// Server → client: the newest input received and how early the inputs arrive.
pub const INPUT_ACK: u16 = HELLO + 10;
/// Client → server: nodes whose state held a member back (it named a node the client does not
/// have yet), to be sent again (see [`NetRef`](crate::scene::NetRef)).
pub const RESEND: u16 = HELLO + 11;
/// Server → client: a networked group moved to another parent (or to none): its first net id,
/// then the parent as a spawn names it (its net id; or 0, then its path, empty for none).
pub const PARENT: u16 = HELLO + 12;
/// Server → client: an RPC the server called on a node whose spawn had not gone out yet, held
/// until it had, and sent after it (laid out as [`RPC`]). The spawn holds the node's state
/// after the call: the client runs the body, and undoes what it changes in replicated members.
pub const HELD_RPC: u16 = HELLO + 13;
/// The most net ids one [`RESEND`] carries.
pub const MAX_RESEND_IDS: usize = 256;

/// Which way a message travels and the handler it goes to: the dispatch
/// ([`Replication::handle_message`](crate::replication::multiplayer::role::Replication::handle_message)) matches
/// on it exhaustively, so a new message is a new variant here and a new arm there, which the
/// compiler asks for. The direction is the variant: a message the other side sends is refused
/// ([`WrongDirection`](crate::wire::ProtocolViolation::WrongDirection)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Client → server.
    ToServer(ToServer),
    /// Server → client.
    ToClient(ToClient),
    /// Both ways: an RPC call ([`RPC`]).
    Rpc,
}

/// A client → server message: the server's handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToServer {
    /// [`HELLO`].
    Hello,
    /// [`ACK`].
    Ack,
    /// [`INPUT`].
    Input,
    /// [`RESEND`].
    Resend,
}

/// A server → client message: the client's handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToClient {
    /// [`WELCOME`].
    Welcome,
    /// [`REFUSE`].
    Refuse,
    /// [`SPAWN`].
    Spawn,
    /// [`DESPAWN`].
    Despawn,
    /// [`SNAPSHOT`].
    Snapshot,
    /// [`AUTHORITY`].
    Authority,
    /// [`INPUT_ACK`].
    InputAck,
    /// [`PARENT`].
    Parent,
    /// [`HELD_RPC`].
    HeldRpc,
}

/// One replication message: its id, the stable name it enters the message registry's
/// fingerprint under, the version of its layout (part of its schema hash there), and which
/// way it travels to which handler (not in the fingerprint: a message that changes direction
/// changes its layout's meaning, and raises `layout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) id: u16,
    pub(crate) name: &'static str,
    pub(crate) layout: u64,
    pub(crate) kind: Kind,
}

/// Every replication message, in id order: the one protocol table. The registry fingerprint
/// (the transport's connect data) covers every row, so that a peer that lays out any of them
/// differently is refused, the refusal naming the message; the dispatch finds a message's
/// handler here ([`lookup`]). A new message id goes here, and a changed layout raises its
/// `layout`.
pub(crate) const MESSAGES: [Message; 14] = [
    message(
        HELLO,
        "mf_net::replication::Hello",
        Kind::ToServer(ToServer::Hello),
    ),
    // Layout 2: the snapshot encoding.
    relaid(
        message(
            WELCOME,
            "mf_net::replication::Welcome",
            Kind::ToClient(ToClient::Welcome),
        ),
        2,
    ),
    message(
        REFUSE,
        "mf_net::replication::Refuse",
        Kind::ToClient(ToClient::Refuse),
    ),
    // Layout 2: a typed spawn lists each node's schema hash and link. Layout 3: one spawn or
    // more, each behind its length, to the end of the message.
    relaid(
        message(
            SPAWN,
            "mf_net::replication::Spawn",
            Kind::ToClient(ToClient::Spawn),
        ),
        3,
    ),
    // Layout 2: the first net id of each group despawned, to the end of the message.
    relaid(
        message(
            DESPAWN,
            "mf_net::replication::Despawn",
            Kind::ToClient(ToClient::Despawn),
        ),
        2,
    ),
    message(
        SNAPSHOT,
        "mf_net::replication::Snapshot",
        Kind::ToClient(ToClient::Snapshot),
    ),
    message(
        ACK,
        "mf_net::replication::Ack",
        Kind::ToServer(ToServer::Ack),
    ),
    message(
        AUTHORITY,
        "mf_net::replication::Authority",
        Kind::ToClient(ToClient::Authority),
    ),
    message(RPC, "mf_net::replication::Rpc", Kind::Rpc),
    message(
        INPUT,
        "mf_net::replication::Input",
        Kind::ToServer(ToServer::Input),
    ),
    message(
        INPUT_ACK,
        "mf_net::replication::InputAck",
        Kind::ToClient(ToClient::InputAck),
    ),
    message(
        RESEND,
        "mf_net::replication::Resend",
        Kind::ToServer(ToServer::Resend),
    ),
    message(
        PARENT,
        "mf_net::replication::Parent",
        Kind::ToClient(ToClient::Parent),
    ),
    message(
        HELD_RPC,
        "mf_net::replication::HeldRpc",
        Kind::ToClient(ToClient::HeldRpc),
    ),
];

/// The message with id `id`, if it is one of [`MESSAGES`]: the ids are contiguous from
/// [`HELLO`], so the row's index is the id's distance from it.
pub(crate) fn lookup(id: u16) -> Option<&'static Message> {
    let table: &'static [Message] = &MESSAGES;
    table.get(usize::from(id.wrapping_sub(HELLO)))
}

/// A message at layout version 1.
const fn message(id: u16, name: &'static str, kind: Kind) -> Message {
    Message {
        id,
        name,
        layout: 1,
        kind,
    }
}

/// `message` at a later layout version.
const fn relaid(message: Message, layout: u64) -> Message {
    Message { layout, ..message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_every_id_from_the_first_on_once_in_order() {
        for (i, m) in (0u16..).zip(MESSAGES) {
            assert_eq!(m.id, HELLO + i, "{}", m.name);
        }
        // The last constant above is the table's last entry.
        assert_eq!(MESSAGES.last().map(|m| m.id), Some(HELD_RPC));
    }

    #[test]
    fn a_lookup_finds_every_row_by_its_id_and_nothing_else() {
        for m in &MESSAGES {
            assert_eq!(lookup(m.id), Some(m), "{}", m.name);
        }
        assert_eq!(lookup(HELLO - 1), None);
        assert_eq!(lookup(HELD_RPC + 1), None);
        assert_eq!(lookup(0), None);
        assert_eq!(lookup(u16::MAX), None);
    }
}
