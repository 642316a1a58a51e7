//! The RPC part of the handshake: the RPC signatures of the spawnable scenes' types, folded
//! into the replication fingerprint and carried by the hello, and the refusal text naming the
//! first scene, type or RPC that differs.

use crate::replication::shared::config::MultiplayerError;
use crate::replication::shared::protocol::{self, RemoteShape, MAX_NAME_BYTES};
use crate::replication::shared::state::Shared;
use crate::rpc::RpcRegistry;
use crate::scene::SceneShape;
use crate::schema;
use crate::wire::{DecodeError, NetReader, NetWriter};

use crate::replication::shared::rpc_state::{RpcState, TypeSignatures};

/// When starting (after the shapes): collects the RPC signatures of the spawnable scenes' types
/// and folds them into the replication fingerprint (left as it is when none has RPCs).
pub(crate) fn prepare(shared: &mut Shared) -> Result<(), MultiplayerError> {
    let registry = shared.rpc.registry()?;
    let signatures = signatures_of(&registry, &shared.shapes);
    shared.fingerprint = fold(shared.fingerprint, &signatures);
    shared.rpc.signatures = signatures;
    Ok(())
}

/// The RPC signatures of the types of `shapes` that have RPCs, each type once, in order of
/// first appearance.
fn signatures_of(registry: &RpcRegistry, shapes: &[SceneShape]) -> Vec<TypeSignatures> {
    let mut signatures: Vec<TypeSignatures> = Vec::new();
    for shape in shapes {
        for &(name, _) in &shape.types {
            if signatures.iter().any(|s| s.name == name) {
                continue;
            }
            let Some(table) = registry.table_named(name).filter(|t| !t.is_empty()) else {
                continue;
            };
            signatures.push(TypeSignatures {
                name: name.to_owned(),
                hash: table.signature_hash(),
                rpcs: table
                    .entries()
                    .iter()
                    .map(|e| {
                        (
                            format!("{}::{}", e.declaring_name(), e.info()),
                            e.info().signature_hash(),
                        )
                    })
                    .collect(),
            });
        }
    }
    signatures
}

fn fold(fingerprint: u64, signatures: &[TypeSignatures]) -> u64 {
    if signatures.is_empty() {
        return fingerprint;
    }
    let mut hash = schema::hash_name("mf_net::replication::Rpc");
    hash = schema::hash_u64(hash, signatures.len() as u64);
    for s in signatures {
        hash = schema::hash_str(hash, &s.name);
        hash = schema::hash_u64(hash, s.hash);
    }
    schema::hash_u64(fingerprint, hash)
}

/// Appends the RPC signatures to a hello (after the shapes; nothing when no type has RPCs):
/// type count varint · per type: name string · RPC count varint · per RPC: description string,
/// signature hash `u64`.
pub(crate) fn write_signatures(w: &mut NetWriter, state: &RpcState) {
    if state.signatures.is_empty() {
        return;
    }
    w.write_len(state.signatures.len());
    for s in &state.signatures {
        w.write_str(&s.name);
        w.write_len(s.rpcs.len());
        for (text, hash) in &s.rpcs {
            w.write_str(text);
            w.write_u64(*hash);
        }
    }
}

/// Reads the rest of a hello whose fingerprint matched: the scene shapes, the RPC signatures
/// when the types have RPCs, and nothing after them (a matching fingerprint says nothing of
/// the bytes behind it).
///
/// # Errors
///
/// A body that does not read, or bytes after it.
pub(crate) fn check_hello_body(shared: &Shared, r: &mut NetReader<'_>) -> Result<(), DecodeError> {
    protocol::read_shapes(r)?;
    if !shared.rpc.signatures.is_empty() {
        read_signatures(r)?;
    }
    r.finish()
}

fn read_signatures(r: &mut NetReader<'_>) -> Result<Vec<TypeSignatures>, DecodeError> {
    if r.remaining() == 0 {
        return Ok(Vec::new());
    }
    let types = r.read_count(2)?;
    let mut out = Vec::with_capacity(types);
    for _ in 0..types {
        let name = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
        let count = r.read_count(9)?;
        let mut rpcs = Vec::with_capacity(count);
        for _ in 0..count {
            let text = r.read_str_max(MAX_NAME_BYTES)?.to_owned();
            rpcs.push((text, r.read_u64()?));
        }
        out.push(TypeSignatures {
            name,
            hash: 0,
            rpcs,
        });
    }
    Ok(out)
}

fn same_shapes(ours: &[SceneShape], theirs: &[RemoteShape]) -> bool {
    ours.len() == theirs.len()
        && ours.iter().zip(theirs).all(|(a, b)| {
            a.name == b.name
                && a.types.len() == b.types.len()
                && a.types
                    .iter()
                    .zip(&b.types)
                    .all(|(x, y)| x.0 == y.0 && x.1 == y.1)
        })
}

/// The server's refusal text for a hello whose fingerprint differs (the reader is after the
/// fingerprint): the first differing scene or node type, else the first differing RPC.
pub(crate) fn describe_refusal(shared: &Shared, r: &mut NetReader<'_>) -> String {
    match protocol::read_shapes(r) {
        Ok(theirs) if !same_shapes(&shared.shapes, &theirs) => {
            protocol::describe_difference(&shared.shapes, &theirs)
        }
        Ok(_) => match read_signatures(r) {
            Ok(theirs) => describe_rpc_difference(&shared.rpc.signatures, &theirs),
            Err(_) => "replication fingerprints differ".to_owned(),
        },
        Err(_) => "replication fingerprints differ".to_owned(),
    }
}

/// Names the first RPC difference between the server's signatures and a client's.
fn describe_rpc_difference(ours: &[TypeSignatures], theirs: &[TypeSignatures]) -> String {
    for a in ours {
        let Some(b) = theirs.iter().find(|b| b.name == a.name) else {
            return format!(
                "type `{}` has {} RPC(s) on the server and none on the client (first: `{}`)",
                a.name,
                a.rpcs.len(),
                a.rpcs.first().map_or("", |r| r.0.as_str())
            );
        };
        for (wire_id, (x, y)) in a.rpcs.iter().zip(&b.rpcs).enumerate() {
            if x.1 != y.1 {
                return format!(
                    "type `{}`, RPC wire id {wire_id}: `{}` on the server but `{}` on the client",
                    a.name, x.0, y.0
                );
            }
        }
        if a.rpcs.len() != b.rpcs.len() {
            let extra = a
                .rpcs
                .get(b.rpcs.len())
                .or_else(|| b.rpcs.get(a.rpcs.len()))
                .map_or("", |r| r.0.as_str());
            return format!(
                "type `{}` has {} RPC(s) on the server and {} on the client (first extra: `{extra}`)",
                a.name,
                a.rpcs.len(),
                b.rpcs.len()
            );
        }
    }
    if let Some(b) = theirs
        .iter()
        .find(|b| !ours.iter().any(|a| a.name == b.name))
    {
        return format!(
            "type `{}` has {} RPC(s) on the client and none on the server (first: `{}`)",
            b.name,
            b.rpcs.len(),
            b.rpcs.first().map_or("", |r| r.0.as_str())
        );
    }
    TYPES_DIFFER.to_owned()
}

/// The refusal text when the scene shapes and RPC signatures agree: what is left of the
/// fingerprint is the replicated types linked.
const TYPES_DIFFER: &str = "the replicated types linked differ (a type's stable name or schema, \
     or a type linked on one end only): compare `Multiplayer::registry_dump` on both ends";

#[cfg(test)]
mod tests {
    use super::*;

    fn sigs(name: &str, rpcs: &[(&str, u64)]) -> TypeSignatures {
        TypeSignatures {
            name: name.to_owned(),
            hash: 0,
            rpcs: rpcs.iter().map(|(t, h)| ((*t).to_owned(), *h)).collect(),
        }
    }

    #[test]
    fn rpc_differences_name_the_type_and_the_rpc() {
        let ours = [sigs(
            "Pawn",
            &[("Pawn::hit(d: i32) server", 1), ("Pawn::go() authority", 2)],
        )];
        let changed = [sigs(
            "Pawn",
            &[("Pawn::hit(d: u8) server", 3), ("Pawn::go() authority", 2)],
        )];
        let text = describe_rpc_difference(&ours, &changed);
        assert!(
            text.contains("wire id 0") && text.contains("hit(d: u8)"),
            "{text}"
        );
        let fewer = [sigs("Pawn", &[("Pawn::hit(d: i32) server", 1)])];
        let text = describe_rpc_difference(&ours, &fewer);
        assert!(
            text.contains("2 RPC(s) on the server and 1") && text.contains("go()"),
            "{text}"
        );
        let text = describe_rpc_difference(&ours, &[]);
        assert!(text.contains("none on the client"), "{text}");
        let text = describe_rpc_difference(&[], &ours);
        assert!(text.contains("none on the server"), "{text}");
    }

    #[test]
    fn signatures_round_trip_through_the_hello() {
        let state = RpcState {
            signatures: vec![sigs("Pawn", &[("Pawn::hit(d: i32) server", 7)])],
            ..RpcState::default()
        };
        let mut w = NetWriter::new();
        write_signatures(&mut w, &state);
        let read = read_signatures(&mut NetReader::new(w.as_slice())).unwrap_or_default();
        assert_eq!(read, state.signatures);
        assert!(read_signatures(&mut NetReader::new(&[])).is_ok_and(|s| s.is_empty()));
        assert!(read_signatures(&mut NetReader::new(&[200, 1])).is_err());
    }
}
