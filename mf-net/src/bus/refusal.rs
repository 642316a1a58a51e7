//! What a refused client learns: a server that refuses a client whose fingerprint differs
//! first sends it the server's registry (one reliable message under [`REGISTRY_LISTING`],
//! accepted whatever the protocol version), so the client can name the first message type
//! that differs, instead of only seeing two numbers.
//!
//! Payload: protocol version `u8`, count varint, then per message: id `u16`, stable name
//! (length-prefixed UTF-8), schema hash `u64`, in id order.

use super::registry::{MessageRegistry, MAX_MESSAGES};
use crate::wire::{DecodeError, NetReader, NetWriter};

/// The id of the registry listing: the last id of the space, outside the game's and the
/// replication layer's.
pub const REGISTRY_LISTING: u16 = MAX_MESSAGES - 1;

/// Appends `registry`'s listing.
pub(super) fn write_listing(w: &mut NetWriter, registry: &MessageRegistry) {
    w.write_u8(registry.protocol_version());
    w.write_len(registry.iter().count());
    for info in registry.iter() {
        w.write_u16(info.id);
        w.write_str(info.name);
        w.write_u64(info.schema_hash);
    }
}

/// One message of the server's listing.
struct Listed {
    id: u16,
    name: String,
    schema_hash: u64,
}

/// Reads a server's listing (untrusted: every count is checked against the bytes left) and
/// names the first difference from `ours`.
pub(super) fn describe_listing(
    ours: &MessageRegistry,
    r: &mut NetReader<'_>,
) -> Result<String, DecodeError> {
    let version = r.read_u8()?;
    // An entry is at least an id, a name length and a hash.
    let count = r.read_count(11)?;
    let mut theirs = Vec::with_capacity(count);
    for _ in 0..count {
        let id = r.read_u16()?;
        let name = r.read_str()?.to_owned();
        let schema_hash = r.read_u64()?;
        theirs.push(Listed {
            id,
            name,
            schema_hash,
        });
    }
    if version != ours.protocol_version() {
        return Ok(format!(
            "message protocol version {version} on the server, {} on this client",
            ours.protocol_version()
        ));
    }
    for mine in ours.iter() {
        match theirs.iter().find(|t| t.id == mine.id) {
            None => {
                return Ok(format!(
                    "message id {} is `{}` on this client and unused on the server",
                    mine.id, mine.name
                ))
            }
            Some(t) if t.name != mine.name => {
                return Ok(format!(
                    "message id {} is `{}` on the server but `{}` on this client",
                    mine.id, t.name, mine.name
                ))
            }
            Some(t) if t.schema_hash != mine.schema_hash => {
                return Ok(format!(
                    "message `{}` (id {}) has another schema on the server (its fields or \
                     their types differ)",
                    mine.name, mine.id
                ))
            }
            Some(_) => {}
        }
    }
    match theirs.iter().find(|t| ours.info(t.id).is_none()) {
        Some(t) => Ok(format!(
            "message id {} is `{}` on the server and unused on this client",
            t.id, t.name
        )),
        None => Ok("the message registries differ".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Messages are any `NetCodec` types: `String` stands for a chat line, `u8` for an emote.
    type Chat = String;
    type Emote = u8;

    fn listing(registry: &MessageRegistry) -> Vec<u8> {
        let mut w = NetWriter::new();
        write_listing(&mut w, registry);
        w.as_slice().to_vec()
    }

    fn describe(ours: &MessageRegistry, bytes: &[u8]) -> Result<String, DecodeError> {
        describe_listing(ours, &mut NetReader::new(bytes))
    }

    #[test]
    fn the_first_difference_is_named() {
        let mut server = MessageRegistry::new(1);
        server.register::<Chat>().unwrap();
        let bytes = listing(&server);

        let mut other = MessageRegistry::new(1);
        other.register::<Emote>().unwrap();
        assert_eq!(
            describe(&other, &bytes).unwrap(),
            "message id 0 is `String` on the server but `u8` on this client"
        );
        let mut more = MessageRegistry::new(1);
        more.register::<Chat>().unwrap();
        more.register::<Emote>().unwrap();
        assert_eq!(
            describe(&more, &bytes).unwrap(),
            "message id 1 is `u8` on this client and unused on the server"
        );
        assert_eq!(
            describe(&MessageRegistry::new(1), &bytes).unwrap(),
            "message id 0 is `String` on the server and unused on this client"
        );
        assert_eq!(
            describe(&MessageRegistry::new(2), &bytes).unwrap(),
            "message protocol version 1 on the server, 2 on this client"
        );
    }

    #[test]
    fn hostile_listings_are_errors_not_panics() {
        let mut server = MessageRegistry::new(1);
        server.register::<Chat>().unwrap();
        let bytes = listing(&server);
        let ours = MessageRegistry::new(1);
        for len in 0..bytes.len() {
            assert!(describe(&ours, &bytes[..len]).is_err(), "{len}");
        }
        // A count far beyond the bytes left is refused before anything is allocated.
        assert!(describe(&ours, &[1, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
    }
}
