//! [`NetworkAddress`]: where to connect, as text (`enet:host:port`, `loopback:name`,
//! `steam:<id>`), and `;`-separated connect strings (best address first).
//!
//! ```
//! use mf_net::transport::address::NetworkAddress;
//!
//! let addr: NetworkAddress = "enet:[::1]:7777".parse().unwrap();
//! assert_eq!(addr, NetworkAddress::Enet { host: "::1".into(), port: 7777 });
//! assert_eq!(addr.to_string(), "enet:[::1]:7777");
//!
//! let list = NetworkAddress::parse_list("steam:76561198000000001; enet:127.0.0.1:27615").unwrap();
//! assert_eq!(list.len(), 2);
//! assert!("enet:::1:7777".parse::<NetworkAddress>().is_err()); // IPv6 needs brackets
//! ```

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// Longest accepted host name (DNS limit).
const MAX_HOST_LEN: usize = 253;
/// Longest accepted loopback name.
const MAX_LOOPBACK_NAME_LEN: usize = 128;

/// One place to connect to, by transport.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NetworkAddress {
    /// ENet over UDP: `enet:host:port`, `enet:192.168.1.5:27615`, `enet:[::1]:7777`.
    Enet {
        /// A host name, an IPv4 address, or an IPv6 address (without the brackets).
        host: String,
        /// The UDP port (1 to 65535).
        port: u16,
    },
    /// The in-process loopback network: `loopback:name`.
    Loopback {
        /// The name the server listens on.
        name: String,
    },
    /// Steam Networking Sockets: `steam:<steamId>` (a 64-bit Steam id in decimal).
    Steam {
        /// The server's Steam id.
        id: u64,
    },
}

/// Why a text is not a [`NetworkAddress`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressError {
    /// The text is empty.
    Empty,
    /// No `scheme:` prefix.
    MissingScheme(String),
    /// A scheme other than `enet`, `loopback` or `steam`.
    UnknownScheme(String),
    /// `enet:` without a host.
    MissingHost(String),
    /// The host is neither a host name nor an IP address.
    InvalidHost(String),
    /// An IPv6 address without brackets (`enet:::1:7777` instead of `enet:[::1]:7777`).
    UnbracketedIpv6(String),
    /// Text in brackets that is not an IPv6 address.
    InvalidIpv6(String),
    /// `enet:` without `:port`.
    MissingPort(String),
    /// The port is not a number from 1 to 65535.
    InvalidPort(String),
    /// `loopback:` without a name, or with whitespace, `;` or too long.
    InvalidLoopbackName(String),
    /// `steam:` without a non-zero decimal 64-bit id.
    InvalidSteamId(String),
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AddressError::Empty => f.write_str("empty network address"),
            AddressError::MissingScheme(s) => write!(
                f,
                "`{s}` has no transport prefix (expected enet:host:port, loopback:name or \
                 steam:id)"
            ),
            AddressError::UnknownScheme(s) => write!(
                f,
                "unknown transport `{s}` (expected enet, loopback or steam)"
            ),
            AddressError::MissingHost(s) => write!(f, "`{s}` has no host (enet:host:port)"),
            AddressError::InvalidHost(h) => write!(f, "`{h}` is not a valid host name or address"),
            AddressError::UnbracketedIpv6(s) => write!(
                f,
                "`{s}`: put an IPv6 address in brackets, as in enet:[::1]:7777"
            ),
            AddressError::InvalidIpv6(h) => write!(f, "`[{h}]` is not an IPv6 address"),
            AddressError::MissingPort(s) => write!(f, "`{s}` has no port (enet:host:port)"),
            AddressError::InvalidPort(p) => write!(f, "`{p}` is not a port from 1 to 65535"),
            AddressError::InvalidLoopbackName(n) => write!(
                f,
                "`{n}` is not a loopback name (1 to {MAX_LOOPBACK_NAME_LEN} characters, no \
                 whitespace or `;`)"
            ),
            AddressError::InvalidSteamId(i) => {
                write!(
                    f,
                    "`{i}` is not a Steam id (a non-zero decimal 64-bit number)"
                )
            }
        }
    }
}

impl std::error::Error for AddressError {}

/// An entry of a connect string that failed to parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressListError {
    /// Index of the entry among the non-empty entries.
    pub index: usize,
    /// The entry's text.
    pub entry: String,
    /// What is wrong with it.
    pub error: AddressError,
}

impl fmt::Display for AddressListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "connect string entry {}: {}", self.index, self.error)
    }
}

impl std::error::Error for AddressListError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl NetworkAddress {
    /// The transport prefix: `"enet"`, `"loopback"` or `"steam"`.
    pub fn scheme(&self) -> &'static str {
        match self {
            NetworkAddress::Enet { .. } => "enet",
            NetworkAddress::Loopback { .. } => "loopback",
            NetworkAddress::Steam { .. } => "steam",
        }
    }

    /// Parses one address. Surrounding whitespace is ignored and the scheme is
    /// case-insensitive.
    ///
    /// # Errors
    ///
    /// An [`AddressError`] saying what is wrong.
    pub fn parse(text: &str) -> Result<Self, AddressError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(AddressError::Empty);
        }
        let Some((scheme, rest)) = text.split_once(':') else {
            return Err(AddressError::MissingScheme(text.to_owned()));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "enet" => parse_enet(text, rest),
            "loopback" => {
                let ok = !rest.is_empty()
                    && rest.len() <= MAX_LOOPBACK_NAME_LEN
                    && !rest.chars().any(|c| c.is_whitespace() || c == ';');
                if ok {
                    Ok(NetworkAddress::Loopback {
                        name: rest.to_owned(),
                    })
                } else {
                    Err(AddressError::InvalidLoopbackName(rest.to_owned()))
                }
            }
            "steam" => {
                let id = if rest.bytes().all(|b| b.is_ascii_digit()) {
                    rest.parse::<u64>().ok().filter(|&id| id != 0)
                } else {
                    None
                };
                id.map(|id| NetworkAddress::Steam { id })
                    .ok_or_else(|| AddressError::InvalidSteamId(rest.to_owned()))
            }
            "" => Err(AddressError::MissingScheme(text.to_owned())),
            _ => Err(AddressError::UnknownScheme(scheme.to_owned())),
        }
    }

    /// Splits a connect string at `;` (best address first) and parses every entry strictly.
    /// Empty entries (a trailing `;`) are skipped. [`TransportSelector`] is lenient instead: it
    /// skips bad entries, so a lobby written by a newer build still works.
    ///
    /// [`TransportSelector`]: super::selector::TransportSelector
    ///
    /// # Errors
    ///
    /// The first entry that does not parse.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, AddressListError> {
        split_list(text)
            .enumerate()
            .map(|(index, entry)| {
                Self::parse(entry).map_err(|error| AddressListError {
                    index,
                    entry: entry.to_owned(),
                    error,
                })
            })
            .collect()
    }

    /// Joins addresses into a connect string, the inverse of [`parse_list`](Self::parse_list).
    pub fn join_list(addresses: &[NetworkAddress]) -> String {
        let mut out = String::new();
        for (i, a) in addresses.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            out.push_str(&a.to_string());
        }
        out
    }
}

/// The non-empty, trimmed entries of a `;`-separated connect string.
pub(crate) fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(';').map(str::trim).filter(|e| !e.is_empty())
}

fn parse_enet(text: &str, rest: &str) -> Result<NetworkAddress, AddressError> {
    let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
        let Some((inside, after)) = bracketed.split_once(']') else {
            return Err(AddressError::InvalidIpv6(bracketed.to_owned()));
        };
        if inside.parse::<Ipv6Addr>().is_err() {
            return Err(AddressError::InvalidIpv6(inside.to_owned()));
        }
        let Some(port) = after.strip_prefix(':') else {
            return Err(if after.is_empty() {
                AddressError::MissingPort(text.to_owned())
            } else {
                AddressError::InvalidPort(after.to_owned())
            });
        };
        (inside, port)
    } else {
        if rest.matches(':').count() > 1 {
            return Err(AddressError::UnbracketedIpv6(text.to_owned()));
        }
        match rest.split_once(':') {
            Some((host, port)) => {
                if host.is_empty() {
                    return Err(AddressError::MissingHost(text.to_owned()));
                }
                if !valid_host(host) {
                    return Err(AddressError::InvalidHost(host.to_owned()));
                }
                (host, port)
            }
            None if rest.is_empty() => return Err(AddressError::MissingHost(text.to_owned())),
            None => return Err(AddressError::MissingPort(text.to_owned())),
        }
    };
    if port.is_empty() {
        return Err(AddressError::MissingPort(text.to_owned()));
    }
    let port = if port.bytes().all(|b| b.is_ascii_digit()) {
        port.parse::<u16>().ok().filter(|&p| p != 0)
    } else {
        None
    }
    .ok_or_else(|| AddressError::InvalidPort(port.to_owned()))?;
    Ok(NetworkAddress::Enet {
        host: host.to_owned(),
        port,
    })
}

/// An IPv4 address or a DNS host name (letters, digits, `-`, dot-separated labels).
fn valid_host(host: &str) -> bool {
    if host.parse::<Ipv4Addr>().is_ok() {
        return true;
    }
    host.len() <= MAX_HOST_LEN
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        // All-numeric dotted names that are not IPv4 (such as 999.1.1.1) are typos.
        && !host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

impl FromStr for NetworkAddress {
    type Err = AddressError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for NetworkAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkAddress::Enet { host, port } if host.contains(':') => {
                write!(f, "enet:[{host}]:{port}")
            }
            NetworkAddress::Enet { host, port } => write!(f, "enet:{host}:{port}"),
            NetworkAddress::Loopback { name } => write!(f, "loopback:{name}"),
            NetworkAddress::Steam { id } => write!(f, "steam:{id}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enet(host: &str, port: u16) -> NetworkAddress {
        NetworkAddress::Enet {
            host: host.to_owned(),
            port,
        }
    }

    #[test]
    fn parses_every_kind() {
        assert_eq!(
            "enet:127.0.0.1:7777".parse::<NetworkAddress>(),
            Ok(enet("127.0.0.1", 7777))
        );
        assert_eq!(
            NetworkAddress::parse("enet:[::1]:7777"),
            Ok(enet("::1", 7777))
        );
        assert_eq!(
            NetworkAddress::parse("  ENET:game.example.org:27615 "),
            Ok(enet("game.example.org", 27615))
        );
        assert_eq!(
            NetworkAddress::parse("loopback:lobby-1"),
            Ok(NetworkAddress::Loopback {
                name: "lobby-1".into()
            })
        );
        assert_eq!(
            NetworkAddress::parse("steam:76561198000000001"),
            Ok(NetworkAddress::Steam {
                id: 76561198000000001
            })
        );
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "enet:127.0.0.1:1",
            "enet:[::1]:7777",
            "enet:[fe80::1:2]:65535",
            "enet:localhost:27615",
            "loopback:a",
            "steam:18446744073709551615",
        ] {
            let addr = NetworkAddress::parse(text).unwrap();
            assert_eq!(addr.to_string(), text);
            assert_eq!(NetworkAddress::parse(&addr.to_string()).unwrap(), addr);
        }
    }

    #[test]
    fn refuses_bad_input_with_clear_errors() {
        use AddressError as E;
        type Check = fn(&AddressError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("", |e| *e == E::Empty),
            ("   ", |e| *e == E::Empty),
            ("127.0.0.1", |e| matches!(e, E::MissingScheme(_))),
            (":1234", |e| matches!(e, E::MissingScheme(_))),
            (
                "udp:1.2.3.4:5",
                |e| matches!(e, E::UnknownScheme(s) if s == "udp"),
            ),
            ("enet:", |e| matches!(e, E::MissingHost(_))),
            ("enet::7777", |e| matches!(e, E::MissingHost(_))),
            ("enet:localhost", |e| matches!(e, E::MissingPort(_))),
            ("enet:localhost:", |e| matches!(e, E::MissingPort(_))),
            ("enet:localhost:0", |e| matches!(e, E::InvalidPort(_))),
            ("enet:localhost:65536", |e| matches!(e, E::InvalidPort(_))),
            ("enet:localhost:+80", |e| matches!(e, E::InvalidPort(_))),
            ("enet:localhost:http", |e| matches!(e, E::InvalidPort(_))),
            ("enet:::1:7777", |e| matches!(e, E::UnbracketedIpv6(_))),
            ("enet:[::1]", |e| matches!(e, E::MissingPort(_))),
            ("enet:[::1]7777", |e| matches!(e, E::InvalidPort(_))),
            ("enet:[::g]:7777", |e| matches!(e, E::InvalidIpv6(_))),
            ("enet:[::1:7777", |e| matches!(e, E::InvalidIpv6(_))),
            ("enet:bad host:1", |e| matches!(e, E::InvalidHost(_))),
            ("enet:-x.org:1", |e| matches!(e, E::InvalidHost(_))),
            ("enet:999.1.1.1:1", |e| matches!(e, E::InvalidHost(_))),
            ("enet:a..b:1", |e| matches!(e, E::InvalidHost(_))),
            ("loopback:", |e| matches!(e, E::InvalidLoopbackName(_))),
            ("loopback:a b", |e| matches!(e, E::InvalidLoopbackName(_))),
            ("steam:", |e| matches!(e, E::InvalidSteamId(_))),
            ("steam:0", |e| matches!(e, E::InvalidSteamId(_))),
            ("steam:-5", |e| matches!(e, E::InvalidSteamId(_))),
            ("steam:18446744073709551616", |e| {
                matches!(e, E::InvalidSteamId(_))
            }),
        ];
        for (text, check) in cases {
            let err = NetworkAddress::parse(text).expect_err(text);
            assert!(check(&err), "{text:?} gave {err:?}");
            assert!(!err.to_string().is_empty());
        }
        assert!(NetworkAddress::parse("enet:::1:7777")
            .unwrap_err()
            .to_string()
            .contains("enet:[::1]:7777"));
    }

    #[test]
    fn lists_split_and_join() {
        let list = NetworkAddress::parse_list(" steam:5 ;enet:[::1]:7777;; loopback:x ;").unwrap();
        assert_eq!(
            list,
            vec![
                NetworkAddress::Steam { id: 5 },
                enet("::1", 7777),
                NetworkAddress::Loopback { name: "x".into() },
            ]
        );
        let joined = NetworkAddress::join_list(&list);
        assert_eq!(joined, "steam:5;enet:[::1]:7777;loopback:x");
        assert_eq!(NetworkAddress::parse_list(&joined).unwrap(), list);
        let err = NetworkAddress::parse_list("steam:5;bogus").unwrap_err();
        assert_eq!(err.index, 1);
        assert_eq!(err.entry, "bogus");
        assert_eq!(NetworkAddress::parse_list("").unwrap(), vec![]);
    }
}
