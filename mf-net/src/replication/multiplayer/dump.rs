//! [`Multiplayer::registry_dump`]: everything the replication fingerprint covers, for
//! debugging mismatches.

use std::fmt::Write as _;

use crate::replication::multiplayer::Multiplayer;
use crate::replication::ReplicationRegistry;
use crate::rpc::RpcRegistry;
use crate::transport::Transport;

impl<T: Transport + 'static, S: crate::store::Store> Multiplayer<T, S> {
    /// A human-readable listing of what replication knows, for debugging (allocates; not for
    /// every frame):
    ///
    /// - the replication fingerprint sent in the handshake (once started);
    /// - every spawnable scene: its index, name, and each networked node's network id offset,
    ///   stable type name, replicated type id and schema hash, in id order;
    /// - every spawner: its index, name, parent path, and the spawn data's stable type name
    ///   and schema hash;
    /// - every replicated type linked into the program: its id, stable and Rust names, schema
    ///   hash and members (bit, name, type, schema hash), as
    ///   [`ReplicationRegistry::dump`] lists them;
    /// - every type with RPCs and its RPCs, as [`RpcRegistry::dump`] lists them.
    ///
    /// Comparing the dumps of two peers shows why their fingerprints differ.
    pub fn registry_dump(&self) -> String {
        let mut out = String::new();
        let registry = ReplicationRegistry::from_inventory();
        let shared = &self.core.shared;
        // Writing to a `String` cannot fail.
        let scenes = match shared.library.shapes() {
            Ok(shapes) => shapes,
            Err(error) => {
                let _ = writeln!(out, "spawnable scenes cannot be built: {error}");
                Vec::new()
            }
        };
        if self.bus.is_some() {
            let _ = writeln!(out, "replication fingerprint {:#018x}", shared.fingerprint);
        } else {
            let _ = writeln!(out, "replication fingerprint: computed when starting");
        }
        let _ = writeln!(out, "{} spawnable scene(s)", scenes.len());
        for (index, shape) in scenes.iter().enumerate() {
            let _ = writeln!(
                out,
                "  scene {index} `{}`: {} networked node(s)",
                shape.name,
                shape.types.len()
            );
            for (offset, &(name, hash)) in shape.types.iter().enumerate() {
                let id = registry
                    .as_ref()
                    .ok()
                    .and_then(|r| r.by_name(name))
                    .map_or_else(|| "#?".to_owned(), |(id, _)| id.to_string());
                let _ = writeln!(out, "    +{offset} {name} {id} (schema {hash:#018x})");
            }
        }
        let _ = writeln!(out, "{} spawner(s)", shared.spawners.len());
        for (index, name, parent, data, hash) in shared.spawners.describe() {
            let _ = writeln!(
                out,
                "  spawner {index} `{name}` under `{parent}`: data {data} (schema {hash:#018x})"
            );
        }
        match registry {
            Ok(registry) => {
                out.push_str(&registry.dump());
                match RpcRegistry::from_inventory(&registry) {
                    Ok(rpcs) => out.push_str(&rpcs.dump()),
                    Err(error) => {
                        let _ = writeln!(out, "the RPC tables cannot be built: {error}");
                    }
                }
            }
            Err(error) => {
                let _ = writeln!(out, "the replication registry cannot be built: {error}");
            }
        }
        out
    }
}
