//! The nodes a client's call names: before a call with node references among its parameters
//! runs, the server reads its arguments once, recording every net id they name, and refuses
//! the call if the client may not name one of them.

use crate::refs;
use crate::replication::server::state::ServerState;
use crate::rpc::RpcInfo;
use crate::transport::PeerId;
use crate::wire::NetReader;

/// Whether every node reference among the arguments `r` holds (of a call of `info` from
/// `sender`) names a node the client may name ([`ServerState::may_name`]). Arguments that do not
/// read pass here: the dispatch refuses them. `named` is scratch (capacity kept).
pub(super) fn client_may_name(
    server: &ServerState,
    sender: PeerId,
    info: &RpcInfo,
    r: &NetReader<'_>,
    named: &mut Vec<u32>,
) -> bool {
    let Some(read_args) = info.read_args else {
        return true;
    };
    let Some(c) = server.clients.index_of(sender) else {
        return false;
    };
    let mut probe = r.clone();
    if refs::record(named, || read_args(&mut probe)).is_err() {
        return true;
    }
    named.iter().all(|&id| server.may_name(c, id))
}
