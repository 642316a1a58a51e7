//! Replicated types and spawnable scenes shared by the `replication_*` test binaries (a module
//! each of them includes, so that other test binaries do not link these types).

#![allow(dead_code)]

use mf_net::prelude::*;
use mf_net::scene::SceneError;

/// A moving thing: three members.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
pub(crate) struct Body {
    /// Replicated.
    #[replicated]
    pub(crate) x: i32,
    /// Replicated.
    #[replicated]
    pub(crate) y: i32,
    /// Replicated.
    #[replicated]
    pub(crate) hp: u8,
    /// Local only.
    pub(crate) local: u32,
}

/// A second type, for descendants.
#[derive(Replicated, Debug, Default, Clone, PartialEq)]
pub(crate) struct Gun {
    /// Replicated.
    #[replicated]
    pub(crate) ammo: u16,
}

/// Scene 0, `body`: one [`Body`] at the root.
pub(crate) const BODY: SceneIndex = SceneIndex::new(0);
/// Scene 1, `tank`: a [`Body`] root, a `gun` child ([`Gun`]), a plain `turret` child holding a
/// `sight` ([`Gun`]). Network ids: root, gun, sight.
pub(crate) const TANK: SceneIndex = SceneIndex::new(1);

/// The spawnable scenes both ends register.
pub(crate) fn library() -> SceneLibrary {
    let mut scenes = SceneLibrary::new();
    scenes
        .register("body", |scene, root| scene.set_value(root, Body::default()))
        .expect("fresh library");
    scenes
        .register("tank", |scene, root| {
            scene.set_value(
                root,
                Body {
                    hp: 100,
                    ..Body::default()
                },
            )?;
            scene.insert(root, "gun", Gun { ammo: 10 })?;
            let turret = scene.add(root, "turret")?;
            scene.insert(turret, "sight", Gun::default())?;
            Ok::<(), SceneError>(())
        })
        .expect("fresh library");
    scenes
}
