//! The scale scenario under Bevy: [`BevyScaleWorld`] is [`ScaleWorld`](crate::ScaleWorld)'s
//! server and clients as Bevy apps (mf-net-bevy), the boxes as entities, so that the `bevy_scale`
//! benchmark times the same core under both storages in one run.

use std::time::Duration;

use bevy_app::App;
use bevy_ecs::component::Component;
use bevy_ecs::entity::Entity;
use bevy_ecs::hierarchy::ChildOf;
use glam::{Quat, Vec3};
use mf_net::bus::MessageRegistry;
use mf_net::prelude::*;
use mf_net::transport::loopback::LoopbackNetwork;
use mf_net_bevy::prelude::*;

use crate::{spawn_boxes, step, BoxEntity, Motion, Stage, SCALE_ROW};

/// [`BoxEntity`] as a Bevy component: the same members, so the same capture and snapshots.
#[derive(Component, Replicated, Debug, Clone, PartialEq)]
#[replicated(name = "mf_net_benches::BevyBox")]
pub struct BevyBox {
    /// Where the box is.
    #[replicated]
    pub position: Vec3,
    /// How it is turned.
    #[replicated]
    pub rotation: Quat,
    /// Changes for about 1 in 100 moving boxes per frame.
    #[replicated]
    pub health: i32,
}

impl Default for BevyBox {
    fn default() -> Self {
        Self {
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            health: 0,
        }
    }
}

impl BevyBox {
    fn of(b: &BoxEntity) -> Self {
        Self {
            position: b.position,
            rotation: b.rotation,
            health: b.health,
        }
    }
}

/// One server and `clients` clients as Bevy apps over one loopback network, replicating
/// `boxes` boxes the server moves every frame; the core's own clock (one tick a frame), so
/// that each stage is the core's, with the world lent, as in [`ScaleWorld`](crate::ScaleWorld).
pub struct BevyScaleWorld {
    /// The server.
    pub server: App,
    /// The clients.
    pub clients: Vec<App>,
    entities: Vec<Entity>,
    boxes: Vec<BoxEntity>,
    motion: Motion,
    frame: u32,
    dt: Duration,
    next: Stage,
}

/// A headless app on the core's own clock, each update one tick long (setup runs whole
/// updates, so the adapter's systems network and tag the entities; the timed stages call the
/// core directly).
fn app(dt: Duration) -> App {
    let mut app = App::new();
    let config = MultiplayerConfig::default();
    app.add_plugins((bevy_time::TimePlugin, MfNetPlugin { config }))
        .insert_resource(bevy_time::TimeUpdateStrategy::ManualDuration(dt))
        .replicate::<BevyBox>();
    app
}

impl BevyScaleWorld {
    /// The world with every box spawned (rows of [`SCALE_ROW`]: a root entity and its
    /// children, one spawn each) and applied by every client, then `warm_up` frames run.
    ///
    /// # Panics
    /// If a client does not join or get every box within a bounded number of frames.
    pub fn new(boxes: usize, motion: Motion, clients: usize, warm_up: usize) -> Self {
        let net = LoopbackNetwork::new();
        let config = MultiplayerConfig::default();
        let dt = Duration::from_secs(1) / u32::from(config.tick_rate.max(1));
        let mut server = app(dt);
        let listen = net.listen("bevy_scale", clients).expect("a fresh network");
        server
            .world_mut()
            .net(|mp| mp.start_server(Box::new(listen), MessageRegistry::new(1)))
            .expect("the server starts");
        let clients = (0..clients)
            .map(|_| {
                let mut client = app(dt);
                client
                    .world_mut()
                    .net(|mp| {
                        let open = |data| -> Box<dyn Transport> {
                            Box::new(net.connect("bevy_scale", data))
                        };
                        mp.start_client(open, MessageRegistry::new(1))
                    })
                    .expect("the client starts");
                client
            })
            .collect();
        let mut world = Self {
            server,
            clients,
            entities: Vec::with_capacity(boxes),
            boxes: spawn_boxes(boxes),
            motion,
            frame: 0,
            dt,
            next: Stage::Move,
        };
        world.run_until(|w| w.server_peers() == w.clients.len());
        let server_world = world.server.world_mut();
        let mut root = None;
        for (i, b) in world.boxes.iter().enumerate() {
            let mut entity = server_world.spawn((BevyBox::of(b), Networked));
            match root {
                Some(root) if i % SCALE_ROW != 0 => {
                    entity.insert(ChildOf(root));
                }
                _ => root = Some(entity.id()),
            }
            world.entities.push(entity.id());
        }
        world.run_until(|w| {
            let all = w.entities.len();
            w.clients.iter_mut().all(|c| {
                let world = c.world_mut();
                world.query::<&BevyBox>().iter(world).count() == all
            })
        });
        world.run_frames(warm_up);
        world
    }

    fn server_peers(&mut self) -> usize {
        self.server.world_mut().net(|mp| mp.peers().len())
    }

    /// Setup frames (whole updates; nothing moves) until `done`, at most 200.
    fn run_until(&mut self, done: impl Fn(&mut Self) -> bool) {
        for _ in 0..200 {
            self.server.update();
            for client in &mut self.clients {
                client.update();
            }
            if done(self) {
                return;
            }
        }
        panic!("not reached in 200 frames");
    }

    /// Runs `frames` whole frames.
    pub fn run_frames(&mut self, frames: usize) {
        for _ in 0..frames * 4 {
            self.run_stage();
        }
    }

    /// Runs the next stage.
    pub fn run_stage(&mut self) {
        match self.next {
            Stage::Move => {
                self.frame = self.frame.wrapping_add(1);
                step(&mut self.boxes, self.frame, self.motion);
                let world = self.server.world_mut();
                for (i, (&e, b)) in self.entities.iter().zip(&self.boxes).enumerate() {
                    if self.motion.moves(i, self.frame) {
                        if let Some(mut value) = world.get_mut::<BevyBox>(e) {
                            *value = BevyBox::of(b);
                        }
                    }
                }
            }
            Stage::ServerBegin => {
                let dt = self.dt;
                self.server.world_mut().net(|mp| mp.begin_frame(dt));
            }
            Stage::ServerEnd => self.server.world_mut().net(|mp| mp.end_frame()),
            Stage::Clients => self.client_frames_now(),
        }
        self.next = match self.next {
            Stage::Move => Stage::ServerBegin,
            Stage::ServerBegin => Stage::ServerEnd,
            Stage::ServerEnd => Stage::Clients,
            Stage::Clients => Stage::Move,
        };
    }

    /// Runs stages until `stage` is next.
    pub fn advance_to(&mut self, stage: Stage) {
        while self.next != stage {
            self.run_stage();
        }
    }

    /// The server's tick: `begin_frame` (the acks) and `end_frame` (capture, a snapshot per
    /// client), with the world lent. Returns the snapshots sent in all.
    pub fn server_tick(&mut self) -> u64 {
        assert_eq!(self.next, Stage::ServerBegin, "one iteration per sample");
        let dt = self.dt;
        let sent = self.server.world_mut().net(|mp| {
            mp.begin_frame(dt);
            mp.end_frame();
            mp.stats().snapshots_sent
        });
        self.next = Stage::Clients;
        sent
    }

    /// The server's whole app update: the adapter's systems around the same tick (the world's
    /// changes taken, owner writes noted, focus synced, messages). Returns the snapshots sent
    /// in all.
    pub fn server_update(&mut self) -> u64 {
        assert_eq!(self.next, Stage::ServerBegin, "one iteration per sample");
        self.server.update();
        self.next = Stage::Clients;
        self.server.world_mut().net(|mp| mp.stats().snapshots_sent)
    }

    /// Every client's whole app update (see [`server_update`](Self::server_update)).
    pub fn client_updates(&mut self) -> u64 {
        assert_eq!(self.next, Stage::Clients, "one iteration per sample");
        for client in &mut self.clients {
            client.update();
        }
        self.next = Stage::Move;
        self.clients[0]
            .world_mut()
            .net(|mp| mp.stats().snapshots_applied)
    }

    /// Every client's frame, with its world lent.
    pub fn client_frames(&mut self) -> u64 {
        assert_eq!(self.next, Stage::Clients, "one iteration per sample");
        self.client_frames_now();
        self.next = Stage::Move;
        self.clients[0]
            .world_mut()
            .net(|mp| mp.stats().snapshots_applied)
    }

    fn client_frames_now(&mut self) {
        let dt = self.dt;
        for client in &mut self.clients {
            client.world_mut().net(|mp| {
                mp.begin_frame(dt);
                mp.end_frame();
            });
        }
    }

    /// How many boxes there are.
    pub fn boxes(&self) -> usize {
        self.entities.len()
    }

    /// Whether every client shows every box as the server has it.
    pub fn converged(&mut self) -> bool {
        let values = |app: &mut App| {
            let world = app.world_mut();
            let mut q = world.query::<(&NetworkId, &BevyBox)>();
            let mut v: Vec<_> = q.iter(world).map(|(id, b)| (id.0, b.clone())).collect();
            v.sort_by_key(|(id, _)| *id);
            v
        };
        let want = values(&mut self.server);
        self.clients.iter_mut().all(|c| values(c) == want)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_bevy_world_replicates_every_frame_and_converges() {
        let mut world = BevyScaleWorld::new(200, Motion::All, 4, 5);
        assert_eq!(world.boxes(), 200);
        // A whole frame: after the clients' stage they show the server's boxes.
        world.advance_to(Stage::ServerBegin);
        let sent = world.server_tick();
        assert!(sent > 0);
        world.client_frames();
        assert!(world.converged());
        // The same through the apps' whole updates.
        world.advance_to(Stage::ServerBegin);
        assert!(world.server_update() > sent);
        world.client_updates();
        assert!(world.converged());
    }
}
