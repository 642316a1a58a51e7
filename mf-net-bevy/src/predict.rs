//! Owner prediction under Bevy: [`NetPredictionPlugin`] runs the core's
//! [`Simulation`] with the game's own systems as the step: the
//! [`NetStep`] schedule, run once per simulated tick on the lent world, with the tick's inputs
//! in [`StepInputs`]. The server steps once per fixed step (before its network tick), or on its
//! own clock once per frame before it sends (the ticks due then); a client once per frame,
//! predicting its own entities and re-simulating after a misprediction.

use std::marker::PhantomData;

use bevy_app::{App, FixedPostUpdate, Plugin, PostUpdate};
use bevy_ecs::component::{Component, Mutable};
use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use bevy_ecs::schedule::{IntoScheduleConfigs, Schedule, ScheduleLabel};
use bevy_ecs::world::World;
use mf_net::codec::NetCodec;
use mf_net::prediction::{Simulation, Step};
use mf_net::replication::{Replicated, TickSource};

use crate::net::NetWorldExt;
use crate::node::entity_of;
use crate::schedule::NetSystems;
use crate::store::BevyStore;

/// The schedule the game's step systems go in: it runs once per simulated tick (several times
/// in a frame when a client re-simulates), reading [`StepInputs`].
#[derive(ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetStep;

/// This peer's input for the ticks it simulates next: a client's own, the server's for a
/// player it hosts. The game sets it each frame (it is sent and predicted with).
#[derive(Resource, Debug, Clone, Default)]
pub struct LocalInput<I>(pub I);

/// The tick being simulated: every entity holding the predicted component that this side
/// simulates (every one on the server, a client's own), with its owner's input for the tick
/// (`None`: the owner sent none).
#[derive(Resource, Debug, Clone)]
pub struct StepInputs<I> {
    /// The tick.
    pub tick: u32,
    /// Whether the tick is simulated again after a misprediction.
    pub resimulating: bool,
    /// The entities and their inputs.
    pub entities: Vec<(Entity, Option<I>)>,
}

impl<I> Default for StepInputs<I> {
    fn default() -> Self {
        Self {
            tick: 0,
            resimulating: false,
            entities: Vec::new(),
        }
    }
}

/// The simulation, kept as a non-send resource.
struct NetSimulation<I: NetCodec + Clone + Default>(Simulation<I>);

/// Predicts the component `C` (with `#[replicated(predict)]` members) from inputs `I`: a
/// client simulates its own `C` entities at once with its [`LocalInput`], the server every one
/// with its owner's input, both running the [`NetStep`] schedule per tick. Add
/// [`MfNetPlugin`](crate::MfNetPlugin) first, and register `C` with `replicate`.
pub struct NetPredictionPlugin<I, C>(PhantomData<fn() -> (I, C)>);

impl<I, C> Default for NetPredictionPlugin<I, C> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<I, C> Plugin for NetPredictionPlugin<I, C>
where
    I: NetCodec + Clone + Default + Send + Sync + 'static,
    C: Component<Mutability = Mutable> + Replicated,
{
    fn build(&self, app: &mut App) {
        app.init_resource::<LocalInput<I>>()
            .init_resource::<StepInputs<I>>()
            .add_schedule(Schedule::new(NetStep))
            .add_systems(
                FixedPostUpdate,
                server_step::<I, C>.before(NetSystems::Tick),
            )
            .add_systems(PostUpdate, frame_step::<I, C>.before(NetSystems::Send));
        app.world_mut()
            .insert_non_send(NetSimulation::<I>(Simulation::new()));
    }
}

/// The server's tick, a fixed step ([`TickSource::External`]): one step before its capture.
fn server_step<I, C>(world: &mut World)
where
    I: NetCodec + Clone + Default + Send + Sync + 'static,
    C: Component<Mutability = Mutable> + Replicated,
{
    if world.net(|mp| mp.is_server() && mp.config().tick_source == TickSource::External) {
        simulate::<I, C>(world);
    }
}

/// A frame's predicted ticks: a client's, or those of a server on its own clock
/// ([`TickSource::OwnClock`]), which captures as the frame's send: the ticks due this frame are
/// stepped once, before it (a fixed loop runs any number of times a frame, and each run would
/// step them again).
fn frame_step<I, C>(world: &mut World)
where
    I: NetCodec + Clone + Default + Send + Sync + 'static,
    C: Component<Mutability = Mutable> + Replicated,
{
    if world.net(|mp| mp.is_client() || mp.config().tick_source == TickSource::OwnClock) {
        simulate::<I, C>(world);
    }
}

/// Runs the simulation with the world lent: each tick fills [`StepInputs`] and runs
/// [`NetStep`].
fn simulate<I, C>(world: &mut World)
where
    I: NetCodec + Clone + Default + Send + Sync + 'static,
    C: Component<Mutability = Mutable> + Replicated,
{
    let Some(mut sim) = world.remove_non_send::<NetSimulation<I>>() else {
        return;
    };
    let input = world
        .get_resource::<LocalInput<I>>()
        .map(|i| i.0.clone())
        .unwrap_or_default();
    world.net(|mp| {
        sim.0
            .run(mp, |_| input.clone(), |step| run_step::<I, C>(step));
    });
    world.insert_non_send(sim);
}

/// One simulated tick: the entities and inputs into [`StepInputs`], then [`NetStep`].
fn run_step<I, C>(step: &mut Step<'_, I>)
where
    I: NetCodec + Clone + Default + Send + Sync + 'static,
    C: Component<Mutability = Mutable> + Replicated,
{
    let (tick, resimulating) = (step.tick(), step.is_resimulation());
    let mut inputs = step
        .store_mut::<BevyStore>()
        .world_mut()
        .remove_resource::<StepInputs<I>>()
        .unwrap_or_default();
    inputs.tick = tick;
    inputs.resimulating = resimulating;
    inputs.entities.clear();
    step.each_simulated::<C>(|node, _, input| {
        if let Some(entity) = entity_of(node) {
            inputs.entities.push((entity, input.cloned()));
        }
    });
    let world = step.store_mut::<BevyStore>().world_mut();
    world.insert_resource(inputs);
    world.run_schedule(NetStep);
}
