//! Bevy apps over ENet on 127.0.0.1 in two processes: a `bevy_boxes_node --server` and a
//! `--client`; the client sees every box, the server ends with them all.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn a_bevy_server_and_client_in_two_processes_replicate_over_enet() {
    let node = env!("CARGO_BIN_EXE_bevy_boxes_node");
    let mut server = Command::new(node)
        .args([
            "--server",
            "0",
            "--seconds",
            "8",
            "--boxes",
            "20",
            "--clients",
            "1",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let listening = lines.next().expect("a line").expect("text");
    let addr = listening
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{listening}"))
        .to_owned();
    let client = Command::new(node)
        .args(["--client", &addr, "--seconds", "3"])
        .output()
        .expect("the client runs");
    let said = String::from_utf8_lossy(&client.stdout).into_owned();
    let _ = server.kill();
    let _ = server.wait();
    assert!(client.status.success(), "client: {said}");
    // Twenty boxes and its own pilot.
    assert!(said.contains("client: 21 entities, 20 boxes"), "{said}");
}
