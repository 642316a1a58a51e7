#![allow(clippy::unwrap_used)]
//! How many replicated component types an app registers: one fewer than an entity has nodes
//! ([`MAX_REPLICATED_COMPONENTS`]), its own node taking a slot.

use std::panic::{catch_unwind, AssertUnwindSafe};

use bevy_app::App;
use bevy_ecs::component::Component;
use mf_net::prelude::*;
use mf_net_bevy::prelude::*;
use mf_net_bevy::{ReplicatedComponents, MAX_REPLICATED_COMPONENTS};

/// Component types `$kind`, each with one member, and `register_all`, which replicates them.
macro_rules! kinds {
    ($($kind:ident),*) => {
        $(
            #[derive(Component, Replicated, Default)]
            struct $kind {
                #[replicated]
                n: i32,
            }
        )*

        fn register_all(app: &mut App) {
            $(app.replicate::<$kind>();)*
        }
    };
}

kinds!(K1, K2, K3, K4, K5, K6, K7, K8, K9, K10, K11, K12, K13, K14, K15, Extra);

#[test]
fn an_app_registers_one_type_fewer_than_an_entity_has_nodes() {
    assert_eq!(MAX_REPLICATED_COMPONENTS, 16);
    let mut app = App::new();
    app.add_plugins((bevy_time::TimePlugin, MfNetPlugin::default()));
    let refused = catch_unwind(AssertUnwindSafe(|| register_all(&mut app))).unwrap_err();
    let message = refused.downcast_ref::<String>().unwrap();
    assert!(message.contains("at most 15 component types"), "{message}");
    // The fifteen before it were registered.
    let types = app.world().resource::<ReplicatedComponents>();
    assert!(types.contains(std::any::TypeId::of::<K15>()));
    assert!(!types.contains(std::any::TypeId::of::<Extra>()));
}
