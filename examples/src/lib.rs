//! Runnable mf-net demos: see the `[[example]]` entries (`cargo run --example chat`).
