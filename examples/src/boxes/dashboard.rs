//! The boxes demo's live terminal dashboard (ratatui): per client, bandwidth in and out, the
//! round trip the server measured, snapshot loss, the interpolation delay and the position
//! error as sparklines, and its prediction: rollbacks, ticks re-simulated and the input lead;
//! the server's tick cost (wall time of the frames that ran a network
//! tick, measured by the demo: the core reads no clock); and a top-down view of the boxes as
//! the server and the first client show them.
//!
//! [`Dashboard`] keeps the recent history of [`Sample`]s and draws into any ratatui backend, so
//! a test renders it into a `TestBackend` and reads the buffer.

use std::collections::VecDeque;
use std::error::Error;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use mf_net_enet::FixedStep;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::Line;
use ratatui::widgets::canvas::{Canvas, Points, Rectangle};
use ratatui::widgets::{Block, Paragraph, Sparkline};
use ratatui::Frame;

/// Samples kept per series (the widest sparkline shows this many).
const HISTORY: usize = 160;
/// A sample, and a redraw, every this many frames (15 a second at 60 frames per second).
const FRAMES_PER_SAMPLE: u32 = 4;
/// How long the final state stays on screen without a key press.
const LINGER: Duration = Duration::from_secs(60);

/// Runs the demo in real time behind the dashboard, until the end or `q` (Esc, Ctrl-C), then
/// restores the terminal and prints the outcome.
///
/// # Errors
///
/// As [`run`](super::run).
pub fn run_live(options: &super::Options) -> Result<(), Box<dyn Error>> {
    let title = format!(
        "boxes: {} boxes, {} clients, {:.0} % loss",
        options.boxes,
        options.clients,
        options.loss * 100.0
    );
    let mut board = Dashboard::new(title);
    let mut terminal = ratatui::init();
    let mut clock = FixedStep::new(super::FPS);
    let mut draw_error = None;
    let result = super::run_observed(options, &mut std::io::sink(), &mut |view| {
        clock.wait();
        if view.frame() % FRAMES_PER_SAMPLE == 0 {
            board.push(view.sample());
            if let Err(e) = terminal.draw(|frame| board.render(frame)) {
                draw_error = Some(e);
                return ControlFlow::Break(());
            }
        }
        if quit_pressed(Duration::ZERO) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    let outcome = match &result {
        Ok(report) => format!(
            "converged {} ms after the motion stopped; worst error {:.3}",
            report.settle_frames * 1000 / super::FPS,
            report.worst_error
        ),
        Err(e) => format!("failed: {e}"),
    };
    if draw_error.is_none() {
        board.finish(format!("{outcome} (any key closes)"));
        let _ = terminal.draw(|frame| board.render(frame));
        let until = Instant::now() + LINGER;
        while Instant::now() < until && !key_pressed(Duration::from_millis(100)) {}
    }
    ratatui::restore();
    if let Some(e) = draw_error {
        return Err(e.into());
    }
    println!("{outcome}");
    result.map(drop)
}

/// Whether `q`, Esc or Ctrl-C was pressed (waiting at most `wait`).
fn quit_pressed(wait: Duration) -> bool {
    match next_key(wait) {
        Some((KeyCode::Char('q') | KeyCode::Esc, _)) => true,
        Some((KeyCode::Char('c'), modifiers)) => modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

/// Whether any key was pressed (waiting at most `wait`).
fn key_pressed(wait: Duration) -> bool {
    next_key(wait).is_some()
}

/// The next key press, if one comes within `wait`.
fn next_key(wait: Duration) -> Option<(KeyCode, KeyModifiers)> {
    if !event::poll(wait).ok()? {
        return None;
    }
    match event::read().ok()? {
        Event::Key(key) if key.kind == KeyEventKind::Press => Some((key.code, key.modifiers)),
        _ => None,
    }
}

/// What one client looks like at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientSample {
    /// `client 1`, ...
    pub label: String,
    /// Bytes received per second.
    pub bytes_in: u64,
    /// Bytes sent per second.
    pub bytes_out: u64,
    /// The round-trip time the server measured for this client.
    pub rtt: Duration,
    /// Snapshot loss the client estimated over the last 64 ticks (0 to 1).
    pub loss: f32,
    /// The interpolation delay in use.
    pub delay: Duration,
    /// The largest distance this frame between a box as shown and the server's at the render
    /// tick.
    pub error: f32,
    /// Rollbacks of the client's prediction so far.
    pub rollbacks: u64,
    /// Ticks those rollbacks re-simulated so far.
    pub resimulated_ticks: u64,
    /// Ticks early (negative: late) the server got the client's inputs, at the worst recently.
    pub input_lead: i32,
}

/// The demo at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Simulated seconds since the start.
    pub time: f32,
    /// The server's network tick.
    pub tick: u32,
    /// Wall time of the server's last frame that ran a network tick (capture and snapshots),
    /// if one ran since the previous sample.
    pub tick_cost: Option<Duration>,
    /// The server's bytes sent per second.
    pub server_out: u64,
    /// Every client.
    pub clients: Vec<ClientSample>,
    /// Boxes (x, z) on the server.
    pub server_boxes: Vec<(f64, f64)>,
    /// Players (x, z) on the server.
    pub server_players: Vec<(f64, f64)>,
    /// Boxes (x, z) as the first client shows them.
    pub client_boxes: Vec<(f64, f64)>,
    /// Players (x, z) as the first client shows them.
    pub client_players: Vec<(f64, f64)>,
}

/// One client's recent history.
#[derive(Debug, Default)]
struct Series {
    label: String,
    bytes_in: VecDeque<u64>,
    bytes_out: VecDeque<u64>,
    /// Milliseconds.
    rtt: VecDeque<u64>,
    /// Tenths of a percent.
    loss: VecDeque<u64>,
    /// Milliseconds.
    delay: VecDeque<u64>,
    /// Thousandths of a unit.
    error: VecDeque<u64>,
    /// Ticks re-simulated since the previous sample.
    resimulated: VecDeque<u64>,
    /// Ticks (a late lead counts as 0).
    lead: VecDeque<u64>,
    last: ClientSample,
}

fn push(series: &mut VecDeque<u64>, value: u64) {
    if series.len() == HISTORY {
        series.pop_front();
    }
    series.push_back(value);
}

/// The dashboard's state: the recent history and the latest sample.
#[derive(Debug, Default)]
pub struct Dashboard {
    title: String,
    /// Microseconds.
    tick_cost: VecDeque<u64>,
    last_tick_cost: Duration,
    clients: Vec<Series>,
    last: Sample,
    /// The view's bounds (x, z), grown to cover everything seen on the server.
    bounds: Option<[f64; 4]>,
    finished: Option<String>,
}

impl Dashboard {
    /// An empty dashboard titled `title` (the run's settings).
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            ..Self::default()
        }
    }

    /// Adds a sample to the history.
    pub fn push(&mut self, sample: Sample) {
        if let Some(cost) = sample.tick_cost {
            push(&mut self.tick_cost, cost.as_micros() as u64);
            self.last_tick_cost = cost;
        }
        if self.clients.len() < sample.clients.len() {
            self.clients
                .resize_with(sample.clients.len(), Series::default);
        }
        for (series, client) in self.clients.iter_mut().zip(&sample.clients) {
            series.label.clone_from(&client.label);
            push(&mut series.bytes_in, client.bytes_in);
            push(&mut series.bytes_out, client.bytes_out);
            push(&mut series.rtt, client.rtt.as_millis() as u64);
            push(&mut series.loss, (client.loss * 1000.0).round() as u64);
            push(&mut series.delay, client.delay.as_millis() as u64);
            push(&mut series.error, (client.error * 1000.0).round() as u64);
            let resimulated = client
                .resimulated_ticks
                .saturating_sub(series.last.resimulated_ticks);
            push(&mut series.resimulated, resimulated);
            push(&mut series.lead, client.input_lead.max(0) as u64);
            series.last = client.clone();
        }
        for &(x, z) in sample.server_boxes.iter().chain(&sample.server_players) {
            let b = self.bounds.get_or_insert([x, x, z, z]);
            *b = [b[0].min(x), b[1].max(x), b[2].min(z), b[3].max(z)];
        }
        self.last = sample;
    }

    /// Shows `text` in the title bar (the run's outcome).
    pub fn finish(&mut self, text: impl Into<String>) {
        self.finished = Some(text.into());
    }

    /// Draws the dashboard over the whole frame.
    pub fn render(&self, frame: &mut Frame<'_>) {
        let [title, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(frame.area());
        let status = match &self.finished {
            Some(text) => format!("{} | {text} | q quits", self.title),
            None => format!(
                "{} | {:5.1} s, tick {} | q quits",
                self.title, self.last.time, self.last.tick
            ),
        };
        frame.render_widget(Paragraph::new(status), title);
        let [stats, views] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(body);
        self.render_stats(frame, stats);
        let [server_view, client_view] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(views);
        self.render_view(
            frame,
            server_view,
            "server",
            &self.last.server_boxes,
            &self.last.server_players,
        );
        let label = self.clients.first().map_or("client", |c| c.label.as_str());
        self.render_view(
            frame,
            client_view,
            label,
            &self.last.client_boxes,
            &self.last.client_players,
        );
    }

    fn render_stats(&self, frame: &mut Frame<'_>, area: Rect) {
        let mut rows = vec![Constraint::Length(3)];
        rows.extend(self.clients.iter().map(|_| Constraint::Length(10)));
        rows.push(Constraint::Min(0));
        let areas = Layout::vertical(rows).split(area);
        let server = Block::bordered().title(format!(
            " server: tick cost {} µs, out {:.1} kB/s ",
            self.last_tick_cost.as_micros(),
            self.last.server_out as f64 / 1000.0
        ));
        let inner = server.inner(areas[0]);
        frame.render_widget(server, areas[0]);
        sparkline_row(frame, inner, "tick cost", &self.tick_cost, Color::Magenta);
        for (series, &area) in self.clients.iter().zip(&areas[1..]) {
            let last = &series.last;
            let block = Block::bordered()
                .title(format!(" {}: {} rollbacks ", series.label, last.rollbacks));
            let inner = block.inner(area);
            frame.render_widget(block, area);
            let lines = Layout::vertical([Constraint::Length(1); 8]).split(inner);
            let rows: [(String, &VecDeque<u64>, Color); 8] = [
                (
                    format!("in    {:>6.1} kB/s", last.bytes_in as f64 / 1000.0),
                    &series.bytes_in,
                    Color::Green,
                ),
                (
                    format!("out   {:>6.1} kB/s", last.bytes_out as f64 / 1000.0),
                    &series.bytes_out,
                    Color::Cyan,
                ),
                (
                    format!("rtt   {:>6} ms", last.rtt.as_millis()),
                    &series.rtt,
                    Color::Yellow,
                ),
                (
                    format!("loss  {:>6.1} %", last.loss * 100.0),
                    &series.loss,
                    Color::Red,
                ),
                (
                    format!("delay {:>6} ms", last.delay.as_millis()),
                    &series.delay,
                    Color::Blue,
                ),
                (
                    format!("error {:>6.3}", last.error),
                    &series.error,
                    Color::LightRed,
                ),
                (
                    format!("resim {:>6} ticks", last.resimulated_ticks),
                    &series.resimulated,
                    Color::LightMagenta,
                ),
                (
                    format!("lead  {:>6} ticks", last.input_lead),
                    &series.lead,
                    Color::LightGreen,
                ),
            ];
            for ((label, data, color), &line) in rows.iter().zip(lines.iter()) {
                sparkline_row(frame, line, label, data, *color);
            }
        }
    }

    fn render_view(
        &self,
        frame: &mut Frame<'_>,
        area: Rect,
        label: &str,
        boxes: &[(f64, f64)],
        players: &[(f64, f64)],
    ) {
        let [x0, x1, z0, z1] = self.bounds.unwrap_or([0.0, 1.0, 0.0, 1.0]);
        let canvas = Canvas::default()
            .block(Block::bordered().title(format!(" {label}: {} boxes ", boxes.len())))
            .marker(Marker::Braille)
            .x_bounds([x0 - 2.0, x1 + 2.0])
            // North up: z grows downwards on screen.
            .y_bounds([-(z1 + 2.0), -(z0 - 2.0)])
            .paint(move |ctx| {
                // Each box a small square (its outline), each player a dot.
                for &(x, z) in boxes {
                    ctx.draw(&Rectangle {
                        x: x - 1.0,
                        y: -z - 1.0,
                        width: 2.0,
                        height: 2.0,
                        color: Color::White,
                    });
                }
                let players: Vec<(f64, f64)> = players.iter().map(|&(x, z)| (x, -z)).collect();
                ctx.draw(&Points {
                    coords: &players,
                    color: Color::Yellow,
                });
            });
        frame.render_widget(canvas, area);
    }
}

/// A row: `label` on the left, a sparkline of `data` filling the rest.
fn sparkline_row(
    frame: &mut Frame<'_>,
    area: Rect,
    label: &str,
    data: &VecDeque<u64>,
    color: Color,
) {
    let [text, chart] =
        Layout::horizontal([Constraint::Length(20), Constraint::Min(1)]).areas(area);
    frame.render_widget(Line::from(label.to_owned()), text);
    // The newest samples that fit, right-aligned.
    let width = usize::from(chart.width);
    let skip = data.len().saturating_sub(width);
    let newest: Vec<u64> = data.iter().skip(skip).copied().collect();
    frame.render_widget(
        Sparkline::default()
            .data(&newest)
            .style(Style::default().fg(color)),
        chart,
    );
}
