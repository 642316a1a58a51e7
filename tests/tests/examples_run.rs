//! The runnable examples (`examples/`), run through their library entry points with small
//! settings, so `cargo test` keeps them working (the secure modes too).

use std::ops::ControlFlow;

use mf_net_examples::{bevy_boxes, boxes, lobby};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

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
    // Every client predicted its player (about 30 ticks a second) and said how it went.
    for stats in &report.prediction {
        assert!(stats.ticks_predicted > 30, "{report:?}");
        assert!(stats.inputs_sent > 30, "{report:?}");
    }
    assert!(out.contains("rollbacks"), "{out}");
}

#[test]
fn boxes_as_a_listen_server_whose_host_plays_converge() {
    let options = boxes::Options {
        seconds: 2,
        clients: 2,
        boxes: 10,
        loss: 0.2,
        host: true,
        ..boxes::Options::default()
    };
    let mut out = Vec::new();
    let report = boxes::run(&options, &mut out).expect("the clients converge");
    let out = String::from_utf8(out).expect("UTF-8 output");
    // Every client shows the host's player too, exactly where the server has it.
    assert!(out.contains("(10 boxes, 3 players)"), "{out}");
    // Two seconds at 4 units a second, along a turning heading.
    assert!(report.host_walked > 2.0, "{report:?}");
}

#[test]
fn the_boxes_dashboard_shows_the_run() {
    let options = boxes::Options {
        seconds: 2,
        clients: 2,
        boxes: 20,
        ..boxes::Options::default()
    };
    let mut board = boxes::dashboard::Dashboard::new("boxes under test");
    let mut samples = 0;
    boxes::run_observed(&options, &mut std::io::sink(), &mut |view| {
        if view.frame() % 4 == 0 {
            let sample = view.sample();
            assert_eq!(sample.server_boxes.len(), 20);
            board.push(sample);
            samples += 1;
        }
        ControlFlow::Continue(())
    })
    .expect("the clients converge");
    assert_eq!(samples, 30);
    let mut terminal = Terminal::new(TestBackend::new(140, 40)).expect("a test terminal");
    terminal.draw(|frame| board.render(frame)).expect("drawn");
    let buffer = terminal.backend().buffer();
    let text: String = buffer
        .content()
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.iter().map(|cell| cell.symbol()).collect::<String>() + "\n")
        .collect();
    for label in [
        "boxes under test",
        "tick cost",
        " client 2: ",
        "in ",
        "out ",
        "rtt ",
        "loss ",
        "delay ",
        "error ",
        "resim ",
        "lead ",
        " client 1: ",
        "rollbacks",
        "server: 20 boxes",
        "client 1: 20 boxes",
    ] {
        assert!(text.contains(label), "no `{label}` in\n{text}");
    }
    // Sparkline bars, and the boxes drawn as braille dots in both views.
    assert!(
        text.chars().any(|c| ('\u{2581}'..='\u{2588}').contains(&c)),
        "{text}"
    );
    let dots = |rows: std::ops::Range<usize>| {
        text.lines()
            .skip(rows.start)
            .take(rows.len())
            .flat_map(|line| line.chars().skip(84))
            .filter(|c| ('\u{2801}'..='\u{28ff}').contains(c))
            .count()
    };
    assert!(dots(1..20) > 5, "the server's view\n{text}");
    assert!(dots(21..40) > 5, "the client's view\n{text}");
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
    assert_eq!(parse(&["--plain"]).map(|o| o.plain), Ok(true));
    assert_eq!(parse(&[]).map(|o| o.plain), Ok(false));
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

#[test]
fn bevy_boxes_converge_on_a_bad_network() {
    let options = bevy_boxes::Options {
        seconds: 3,
        clients: 3,
        boxes: 20,
        ..bevy_boxes::Options::default()
    };
    let mut out = Vec::new();
    let report = bevy_boxes::run(&options, &mut out).expect("the clients converge");
    assert_eq!(report.entities, 20 + 3, "the boxes and a pilot per client");
    assert!(report.pushes.iter().all(|&n| n > 0), "{:?}", report.pushes);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
}
