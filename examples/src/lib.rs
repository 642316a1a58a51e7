//! Runnable mf-net demos (see the `[[example]]` entries: `cargo run --example chat`,
//! `cargo run --example boxes`, `cargo run --example lobby`).
//!
//! This crate also compiles and runs every Rust block of the book (`book/src`) as a doctest, so
//! the tutorial cannot drift from the code.

pub mod bevy_boxes;
pub mod boxes;
pub mod chat;
pub mod lobby;
pub mod secure;

macro_rules! book_chapters {
    ($($name:ident => $file:literal),* $(,)?) => {$(
        #[doc = include_str!(concat!("../../book/src/", $file))]
        #[cfg(doctest)]
        pub struct $name;
    )*};
}

book_chapters! {
    BookIntroduction => "introduction.md",
    BookGettingStarted => "getting-started.md",
    BookMessages => "messages.md",
    BookTransports => "transports.md",
    BookEnet => "enet.md",
    BookSecurity => "security.md",
    BookReplicated => "replicated.md",
    BookMultiplayer => "multiplayer.md",
    BookMultiplayerEnet => "multiplayer-enet.md",
    BookEvents => "events.md",
    BookRpcs => "rpcs.md",
    BookReferences => "references.md",
    BookInput => "input.md",
    BookPrediction => "prediction.md",
    BookThreeRoles => "three-roles.md",
    BookInterpolation => "interpolation.md",
    BookBevy => "bevy.md",
    BookArchitecture => "architecture.md",
    BookWireFormat => "wire-format.md",
}
