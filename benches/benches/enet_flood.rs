//! Spoofed ENet CONNECTs against an `EnetTransport` server over real UDP on 127.0.0.1, and what
//! genuine clients get meanwhile. A measuring program that prints its figures (not divan: these
//! are rates and times over seconds of real traffic, not timed iterations):
//!
//! 1. **Reflection**: 12 spoofed CONNECTs (one per source, 12 slots), the server serviced for
//!    32 s (ENet's whole resend schedule): the datagrams and bytes sent back per CONNECT.
//! 2. **Slots held**: 12 spoofed CONNECTs into 12 slots, nothing else: how many slots they hold
//!    and for how long (`slots_in_use`). Then 64 spoofed CONNECTs into 4 slots, and a genuine
//!    client tries every 250 ms (each try a fresh client with a 400 ms connect timeout): the
//!    time until one gets in.
//! 3. **Accept rate during a flood**: spoofed CONNECTs at a steady rate (100, 1000 and 5000 a
//!    second, from 64 sources, fresh connect ids) against 8 clients + 4 overflow slots: after
//!    1 s of flood, for 10 s, a genuine client connects every 100 ms or so (each a fresh client
//!    with a 2 s connect timeout; the last 4 admitted stay connected): the share admitted, and
//!    the time to get in.
//!
//! The spoofing sockets are all on 127.0.0.1, so the server's per-address limit is raised out of
//! the way ([`server_config`]); on a real server the sources differ.
//!
//! Run: `cargo bench -p mf-net-benches --bench enet_flood` (about 2.5 min; `-- quick` for 3 s
//! windows; `-- reflection`, `-- held` or `-- accept` for one part).

use std::net::SocketAddr;
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::transport::{Transport, TransportEvent};
use mf_net_benches::enet_flood::{Spoofers, CONNECT_LEN};
use mf_net_enet::{EnetConfig, EnetTransport};

/// The server's settings: defaults but for the per-address limit (every source here shares
/// 127.0.0.1).
fn server_config() -> EnetConfig {
    EnetConfig::default().with_max_peers_per_ip(10_000)
}

fn listen(max_clients: usize) -> (EnetTransport, SocketAddr) {
    let server = EnetTransport::listen_with(
        "127.0.0.1:0".parse().expect("addr"),
        max_clients,
        server_config(),
    )
    .expect("listen");
    let addr = server.local_addr().expect("bound");
    (server, addr)
}

/// Services `t` once; returns the connect data of every connection it reported.
fn step(t: &mut EnetTransport, connected: &mut Vec<u32>) -> bool {
    let mut failed = false;
    while let Some(event) = t.poll_event() {
        match event {
            TransportEvent::Connected { connect_data, .. } => connected.push(connect_data),
            TransportEvent::Disconnected { .. } => failed = true,
            TransportEvent::Received { .. } => {}
        }
    }
    t.flush();
    failed
}

fn reflection(window: Duration) {
    let (mut server, addr) = listen(8);
    let mut spoofers = Spoofers::new("127.0.0.1", 12);
    spoofers.connect_all(addr);
    let start = Instant::now();
    let mut last_answer = Duration::ZERO;
    let mut back = spoofers.drain();
    while start.elapsed() < window {
        step(&mut server, &mut Vec::new());
        let now = spoofers.drain();
        if now.datagrams > 0 {
            last_answer = start.elapsed();
        }
        back.datagrams += now.datagrams;
        back.bytes += now.bytes;
        back.most_datagrams_on_one = back.most_datagrams_on_one.max(now.most_datagrams_on_one);
        sleep(Duration::from_millis(1));
    }
    let n = spoofers.sent as f64;
    println!(
        "reflection: {} CONNECTs of {CONNECT_LEN} B, {:.1} s: {} datagrams, {} B back = {:.2} \
         datagrams and {:.1} B per CONNECT ({:.2}x its size); last answer at {:.1} s",
        spoofers.sent,
        window.as_secs_f64(),
        back.datagrams,
        back.bytes,
        back.datagrams as f64 / n,
        back.bytes as f64 / n,
        back.bytes as f64 / (n * CONNECT_LEN as f64),
        last_answer.as_secs_f64(),
    );
}

/// How long 12 spoofed handshakes hold their slots when no other CONNECT comes.
fn handshakes_held(window: Duration) {
    let (mut server, addr) = listen(8);
    let mut spoofers = Spoofers::new("127.0.0.1", 12);
    spoofers.connect_all(addr);
    let start = Instant::now();
    let mut most = 0;
    while start.elapsed() < window {
        step(&mut server, &mut Vec::new());
        let held = server.slots_in_use();
        most = most.max(held);
        if most > 0 && held == 0 {
            println!(
                "handshakes held: 12 spoofed CONNECTs held {most} slots for {:.2} s",
                start.elapsed().as_secs_f64()
            );
            return;
        }
        sleep(Duration::from_millis(1));
    }
    println!(
        "handshakes held: 12 spoofed CONNECTs held {most} slots for more than {:.1} s",
        window.as_secs_f64()
    );
}

fn slots_held(window: Duration) {
    let (mut server, addr) = listen(2);
    let mut spoofers = Spoofers::new("127.0.0.1", 64);
    spoofers.connect_all(addr);
    let start = Instant::now();
    let mut tries = 0;
    let mut connected = Vec::new();
    while start.elapsed() < window {
        tries += 1;
        let data = 0xD000 + tries;
        let config = EnetConfig::default().with_connect_timeout(Duration::from_millis(400));
        let mut client = EnetTransport::connect_with(addr, data, config).expect("connect");
        let begun = Instant::now();
        while begun.elapsed() < Duration::from_millis(250) {
            step(&mut server, &mut connected);
            step(&mut client, &mut Vec::new());
            if connected.contains(&data) {
                println!(
                    "slots held: 64 spoofed CONNECTs into 4 slots; a genuine client got in \
                     {:.2} s later (try {tries})",
                    start.elapsed().as_secs_f64()
                );
                return;
            }
            sleep(Duration::from_millis(1));
        }
    }
    println!(
        "slots held: 64 spoofed CONNECTs into 4 slots; no genuine client got in for {:.1} s \
         ({tries} tries)",
        window.as_secs_f64()
    );
}

fn accept_rate(flood_per_second: u32, window: Duration) {
    let (mut server, addr) = listen(8);
    let mut spoofers = Spoofers::new("127.0.0.1", 64);
    let mut connected = Vec::new();
    // Admitted clients stay (at most 4, serviced so that they stay connected).
    let mut kept: Vec<EnetTransport> = Vec::new();
    let start = Instant::now();
    // Bytes the spoofing sockets received (read every step: their buffers are small).
    let back = std::cell::Cell::new(0usize);
    // The spoofed CONNECTs due by now, at the steady rate.
    let flood = |spoofers: &mut Spoofers| {
        back.set(back.get() + spoofers.drain().bytes);
        let due = (start.elapsed().as_secs_f64() * f64::from(flood_per_second)) as usize;
        while spoofers.sent < due {
            spoofers.connect_next(addr);
        }
    };
    // Time spent servicing the server.
    let busy = std::cell::Cell::new(Duration::ZERO);
    let serve = |server: &mut EnetTransport, kept: &mut Vec<EnetTransport>, c: &mut Vec<u32>| {
        let begun = Instant::now();
        step(server, c);
        busy.set(busy.get() + begun.elapsed());
        for k in kept.iter_mut() {
            step(k, &mut Vec::new());
        }
    };
    // One second of flood before the first genuine client.
    while start.elapsed() < Duration::from_secs(1) {
        flood(&mut spoofers);
        serve(&mut server, &mut kept, &mut connected);
        sleep(Duration::from_millis(1));
    }
    let measured = Instant::now();
    let (mut attempts, mut admitted) = (0u32, 0u32);
    let mut waits = Vec::new();
    while measured.elapsed() < window {
        attempts += 1;
        let data = 0xE000 + attempts;
        let config = EnetConfig::default().with_connect_timeout(Duration::from_secs(2));
        let mut client = EnetTransport::connect_with(addr, data, config).expect("connect");
        let begun = Instant::now();
        loop {
            flood(&mut spoofers);
            serve(&mut server, &mut kept, &mut connected);
            let failed = step(&mut client, &mut Vec::new());
            if connected.contains(&data) {
                admitted += 1;
                waits.push(begun.elapsed());
                if kept.len() == 4 {
                    kept.remove(0);
                }
                kept.push(client);
                break;
            }
            if failed || begun.elapsed() > Duration::from_millis(2500) {
                break;
            }
            sleep(Duration::from_millis(1));
        }
        // 100 ms of flood before the next genuine client.
        let gap = Instant::now();
        while gap.elapsed() < Duration::from_millis(100) {
            flood(&mut spoofers);
            serve(&mut server, &mut kept, &mut connected);
            sleep(Duration::from_millis(1));
        }
    }
    waits.sort();
    let median = waits.get(waits.len() / 2).map_or("-".to_owned(), |w| {
        format!("{:.0} ms", w.as_secs_f64() * 1e3)
    });
    back.set(back.get() + spoofers.drain().bytes);
    let elapsed = start.elapsed();
    println!(
        "accept rate, flood of {flood_per_second}/s ({} spoofed CONNECTs in {:.1} s): \
         {admitted} of {attempts} genuine clients admitted ({:.0} %), median wait {median}; \
         {:.2} B back per spoofed CONNECT; server busy {:.0} % of the time, {:.1} µs per \
         CONNECT sent",
        spoofers.sent,
        elapsed.as_secs_f64(),
        100.0 * f64::from(admitted) / f64::from(attempts.max(1)),
        back.get() as f64 / spoofers.sent.max(1) as f64,
        100.0 * busy.get().as_secs_f64() / elapsed.as_secs_f64(),
        busy.get().as_secs_f64() * 1e6 / spoofers.sent.max(1) as f64,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "quick");
    let only = |part: &str| {
        let parts = ["reflection", "held", "accept"];
        !args.iter().any(|a| parts.contains(&a.as_str())) || args.iter().any(|a| a == part)
    };
    let (reflect, hold, flood) = if quick { (3, 3, 3) } else { (32, 35, 10) };
    if only("reflection") {
        reflection(Duration::from_secs(reflect));
    }
    if only("held") {
        handshakes_held(Duration::from_secs(hold));
        slots_held(Duration::from_secs(hold));
    }
    if only("accept") {
        for rate in [100, 1000, 5000] {
            accept_rate(rate, Duration::from_secs(flood));
        }
    }
}
