//! Issuing and carrying tokens: the limits the issuer enforces, the byte and hex forms, and
//! that no `Debug` output shows a key.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mf_net::transport::address::NetworkAddress;
use mf_net_secure::{
    ConnectToken, SharedKey, TokenError, TokenIssuer, MAX_ADDRESS_LEN, MAX_SERVERS, MAX_USER_DATA,
};

const NOW: Duration = Duration::from_secs(1_800_000_000);

fn issuer() -> TokenIssuer {
    TokenIssuer::new(3, SharedKey::from_bytes([0xab; 32]))
}

fn server(i: u16) -> NetworkAddress {
    NetworkAddress::Enet {
        host: "10.0.0.1".into(),
        port: 1000 + i,
    }
}

#[test]
fn the_issuer_enforces_the_documented_limits() {
    let one = [server(0)];
    let most = vec![0; MAX_USER_DATA];
    assert!(issuer().issue(1, &most, &one, NOW).is_ok());
    assert_eq!(
        issuer().issue(1, &[0; MAX_USER_DATA + 1], &one, NOW),
        Err(TokenError::UserDataTooLong(MAX_USER_DATA + 1))
    );
    assert_eq!(
        issuer().issue(1, b"", &[], NOW),
        Err(TokenError::ServerCount(0))
    );
    let servers: Vec<_> = (0..=MAX_SERVERS as u16).map(server).collect();
    assert!(issuer().issue(1, b"", &servers[..MAX_SERVERS], NOW).is_ok());
    assert_eq!(
        issuer().issue(1, b"", &servers, NOW),
        Err(TokenError::ServerCount(MAX_SERVERS + 1))
    );
    let long = NetworkAddress::Enet {
        host: "a".repeat(250),
        port: 7777,
    };
    assert!(long.to_string().len() > MAX_ADDRESS_LEN);
    assert!(matches!(
        issuer().issue(1, b"", &[long], NOW),
        Err(TokenError::AddressTooLong(_))
    ));
}

#[test]
fn tokens_survive_bytes_and_hex_and_each_is_fresh() {
    let servers = [server(0), server(1)];
    let lifetime = Duration::from_secs(45);
    let token = issuer()
        .with_lifetime(lifetime)
        .unwrap()
        .issue(9, b"name:ann", &servers, NOW)
        .unwrap();
    assert_eq!(token.protocol_id(), 3);
    assert_eq!(token.servers(), &servers);
    assert_eq!(token.expires_at(), NOW + lifetime);
    assert_eq!(
        ConnectToken::from_bytes(&token.to_bytes()),
        Ok(token.clone())
    );
    assert_eq!(
        ConnectToken::from_hex(&format!(" {}\n", token.to_hex())),
        Ok(token.clone())
    );
    let bytes = token.to_bytes();
    assert_eq!(
        ConnectToken::from_bytes(&bytes[..bytes.len() - 1]),
        Err(TokenError::Malformed)
    );
    assert_eq!(ConnectToken::from_hex("zz"), Err(TokenError::Malformed));
    // The same request twice: other keys and nonce, so other bytes.
    let again = issuer()
        .with_lifetime(lifetime)
        .unwrap()
        .issue(9, b"name:ann", &servers, NOW)
        .unwrap();
    assert_ne!(again.to_bytes(), bytes);
}

#[test]
fn debug_output_shows_no_key() {
    let key = SharedKey::generate().unwrap();
    assert_eq!(format!("{key:?}"), "SharedKey(..)");
    let token = TokenIssuer::new(3, key.clone())
        .issue(1, b"", &[server(0)], NOW)
        .unwrap();
    let shown = format!("{token:?} {:?}", TokenIssuer::new(3, key.clone()));
    let hex: String = key.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert!(!shown.contains(&hex[..8]), "{shown}");
    assert!(!shown.contains(&format!("{:?}", key.as_bytes())), "{shown}");
    assert!(shown.contains("servers"), "{shown}");
}
