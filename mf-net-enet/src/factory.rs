//! [`EnetTransportFactory`]: `enet:host:port` addresses for the
//! [`TransportSelector`](mf_net::transport::selector::TransportSelector).

use mf_net::transport::address::NetworkAddress;
use mf_net::transport::selector::{
    OpenError, SteamSocketsFactory, TransportFactory, TransportSelector,
};
use mf_net::transport::Transport;

use crate::{EnetConfig, EnetTransport};

/// Opens an [`EnetTransport`] client for every `enet:` address (resolving host names, which may
/// block on DNS).
#[derive(Debug, Clone, Default)]
pub struct EnetTransportFactory {
    config: EnetConfig,
}

impl EnetTransportFactory {
    /// A factory whose transports use `config` (for example a connect timeout).
    pub fn new(config: EnetConfig) -> Self {
        EnetTransportFactory { config }
    }
}

impl TransportFactory for EnetTransportFactory {
    fn name(&self) -> &str {
        "enet"
    }

    fn open_client(
        &mut self,
        address: &NetworkAddress,
        connect_data: u32,
    ) -> Result<Box<dyn Transport>, OpenError> {
        let NetworkAddress::Enet { host, port } = address else {
            return Err(OpenError::Unsupported);
        };
        EnetTransport::connect_with((host.as_str(), *port), connect_data, self.config.clone())
            .map(|t| Box::new(t) as Box<dyn Transport>)
            .map_err(|e| OpenError::Failed(e.to_string()))
    }
}

/// The spec's default selector: ENet, and the Steam sockets stub (so `steam:…;enet:…` falls
/// through to ENet). Add more factories, such as
/// [`LoopbackTransportFactory`](mf_net::transport::selector::LoopbackTransportFactory), with
/// [`with_factory`](TransportSelector::with_factory).
pub fn default_selector() -> TransportSelector {
    TransportSelector::new()
        .with_factory(EnetTransportFactory::default())
        .with_factory(SteamSocketsFactory)
}
