//! The runnable examples (`examples/`), run through their library entry points with small
//! settings, so `cargo test` keeps them working (the secure modes too).

use mf_net_examples::{boxes, lobby};

#[test]
fn boxes_converge_on_a_bad_network() {
    let options = boxes::Options {
        seconds: 2,
        clients: 2,
        boxes: 20,
        loss: 0.2,
        ..boxes::Options::default()
    };
    let mut out = Vec::new();
    let report = boxes::run(&options, &mut out).expect("the clients converge");
    let out = String::from_utf8(out).expect("UTF-8 output");
    assert!(out.contains("converged"), "{out}");
    assert_eq!(out.lines().filter(|l| l.contains("] client 1")).count(), 2);
    for (applied, discarded) in report
        .snapshots_applied
        .iter()
        .zip(&report.snapshots_discarded)
    {
        // About 60 snapshots sent in two seconds; a fifth lost, a few doubled or stale.
        assert!(*applied > 20, "{report:?}");
        assert!(*discarded < *applied, "{report:?}");
    }
    // A box moves well under one unit per tick: the error stays within a few ticks' motion.
    assert!(report.worst_error < 1.0, "{report:?}");
}

#[test]
fn boxes_options_parse() {
    let parse = |args: &[&str]| boxes::Options::parse(args.iter().map(|a| a.to_string()));
    let options = parse(&["--loss", "25%", "--clients", "2", "--seconds", "3"]).expect("valid");
    assert_eq!(
        (options.loss, options.clients, options.seconds),
        (0.25, 2, 3)
    );
    assert_eq!(parse(&["--loss", "0.5"]).map(|o| o.loss), Ok(0.5));
    assert!(parse(&["--loss", "10"]).is_err());
    assert!(parse(&["--clients", "0"]).is_err());
    assert!(parse(&["--boxes"]).is_err());
    assert!(parse(&["--frobnicate"]).is_err());
}

#[test]
fn lobby_demo_reaches_the_match() {
    let mut out = Vec::new();
    lobby::demo(&mut out).expect("the scripted lobby runs to the start of the match");
    let out = String::from_utf8(out).expect("UTF-8 output");
    assert!(
        out.contains("server rejected `set_ready` from peer#3"),
        "{out}"
    );
    assert!(out.contains("bob    connected as peer#4"), "{out}");
    assert!(out.contains("notice: countdown cancelled"), "{out}");
    assert!(out.contains("MATCH STARTED"), "{out}");
}

#[test]
fn lobby_secure_demo_reaches_the_match() {
    let mut out = Vec::new();
    lobby::secure_demo(&mut out).expect("the secure lobby runs to the start of the match");
    let out = String::from_utf8(out).expect("UTF-8 output");
    // ann, bob, and bob again after reconnecting: one token per connection.
    assert_eq!(
        out.matches("gets a token from the matchmaker").count(),
        3,
        "{out}"
    );
    assert!(
        out.contains("server rejected `set_ready` from peer#3"),
        "{out}"
    );
    assert!(out.contains("bob    connected as peer#4"), "{out}");
    assert!(out.contains("MATCH STARTED"), "{out}");
}

#[test]
fn chat_runs_plain_and_secure() {
    use std::process::ExitCode;
    for args in [vec![], vec!["--secure".to_owned()]] {
        assert_eq!(
            mf_net_examples::chat::main(args.clone()),
            ExitCode::SUCCESS,
            "{args:?}"
        );
    }
}
