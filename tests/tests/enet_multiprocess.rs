//! Three processes chatting over ENet on 127.0.0.1: one `enet_chat --host 127.0.0.1:0` and two
//! `enet_chat --join` clients; asserts the lines each one printed.
//!
//! Every wait is bounded (generously) and the children are killed if the test fails.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::sleep;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

/// A child process with its output collected line by line.
struct Peer {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Peer {
    fn spawn(name: &'static str, args: &[&str]) -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_enet_chat"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn enet_chat");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(line) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        });
        let stdin = child.stdin.take();
        Peer {
            name,
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits until a printed line satisfies `pred`; returns it.
    fn expect(&mut self, pred: impl Fn(&str) -> bool) -> String {
        if let Some(line) = self.seen.iter().find(|l| pred(l)) {
            return line.clone();
        }
        let deadline = Instant::now() + WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!(
            "{} never printed the expected line; it printed {:?}",
            self.name, self.seen
        );
    }

    fn expect_line(&mut self, want: &str) {
        self.expect(|l| l == want);
    }

    fn type_line(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{text}").expect("write to child");
        stdin.flush().expect("flush child stdin");
    }

    /// Ends its input (a graceful leave) and waits for a successful exit.
    fn finish(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                assert!(status.success(), "{} exited with {status}", self.name);
                // collect what it printed last
                while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push(line);
                }
                return;
            }
            assert!(Instant::now() < deadline, "{} did not exit", self.name);
            sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[test]
fn a_host_and_two_clients_chat_across_processes() {
    let mut host = Peer::spawn("host", &["--host", "127.0.0.1:0"]);
    let listening = host.expect(|l| l.starts_with("listening on "));
    let addr = listening.trim_start_matches("listening on ").to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");

    let mut alice = Peer::spawn("alice", &["--join", &addr, "--name", "alice"]);
    alice.expect_line("* alice joined");
    let mut bob = Peer::spawn("bob", &["--join", &addr, "--name", "bob"]);
    bob.expect_line("* bob joined");
    alice.expect_line("* bob joined");

    alice.type_line("hello from alice");
    bob.expect_line("alice: hello from alice");
    bob.type_line("hi from bob");
    alice.expect_line("bob: hi from bob");
    host.type_line("welcome both");
    alice.expect_line("host: welcome both");
    bob.expect_line("host: welcome both");

    alice.finish();
    bob.expect_line("* alice left (closed)");
    host.expect_line("* alice left (closed)");

    host.finish();
    bob.expect_line("* disconnected (remote shut down)");
    bob.finish();

    for line in [
        "* alice joined",
        "* bob joined",
        "alice: hello from alice",
        "bob: hi from bob",
        "host: welcome both",
        "* alice left (closed)",
    ] {
        assert!(host.seen.iter().any(|l| l == line), "host: {:?}", host.seen);
    }
    assert_eq!(
        alice.seen,
        vec![
            "* alice joined",
            "* bob joined",
            "alice: hello from alice",
            "bob: hi from bob",
            "host: welcome both",
        ]
    );
}
