#![allow(clippy::unwrap_used)]
//! `mf_net::scene`: the node tree, paths, typed handles and iteration, subtree removal, and the
//! spawnable scene library with its depth-first order and fingerprint.

use std::any::TypeId;
use std::collections::HashSet;

use mf_net::prelude::*;
use mf_net::scene::{first_difference, SceneError, SceneShape};
use mf_net::store::lend;

#[derive(Replicated, Default, Debug, PartialEq)]
struct Body {
    #[replicated]
    x: i32,
}

#[derive(Replicated, Default, Debug, PartialEq)]
struct Health {
    #[replicated]
    hp: u16,
}

/// Not `Debug`: `NetRef<Opaque>` must still be `Debug`.
#[derive(Replicated, Default)]
struct Opaque {
    #[replicated]
    v: u8,
}

#[test]
fn tree_operations_and_paths() {
    let mut scene = Scene::new();
    let root = scene.root();
    assert_eq!(scene.name(root), Some("root"));
    assert_eq!(scene.parent(root), None);
    let level = scene.add(root, "level").unwrap();
    let player = scene.insert(level, "player", Body { x: 3 }).unwrap();
    let hud = scene.add(root, "hud").unwrap();
    assert_eq!(scene.len(), 4);
    assert_eq!(scene.parent(player.node()), Some(level));
    assert_eq!(scene.children(root), &[level, hud]);
    assert_eq!(scene.children(level), &[player.node()]);
    assert_eq!(scene.path(player.node()).unwrap(), "/root/level/player");
    assert_eq!(scene.path(hud).unwrap(), "/root/hud");
    assert_eq!(scene.find("/root/level/player"), Some(player.node()));
    assert_eq!(scene.find("/root/level/"), Some(level));
    assert_eq!(scene.find("/root/level/nobody"), None);
    assert_eq!(scene.find("/root/hud/player"), None);
    assert_eq!(scene.child(level, "player"), Some(player.node()));
    assert!(matches!(
        scene.add(scene.root(), ""),
        Err(SceneError::InvalidName(_))
    ));
}

#[test]
fn duplicate_sibling_names_are_refused() {
    let mut scene = Scene::new();
    let root = scene.root();
    let level = scene.add(root, "level").unwrap();
    scene.add(level, "player").unwrap();
    let err = scene.insert(level, "player", Body::default()).unwrap_err();
    assert_eq!(
        err,
        SceneError::DuplicateName {
            parent: "/root/level".into(),
            name: "player".into()
        }
    );
    assert!(err.to_string().contains("/root/level"));
    assert_eq!(scene.children(level).len(), 1);
    // The same name under another parent is fine, and a freed name can be reused.
    scene.add(root, "player").unwrap();
    let old = scene.child(level, "player").unwrap();
    assert!(scene.remove(old));
    scene.add(level, "player").unwrap();
}

#[test]
fn remove_subtree_invalidates_ids_and_handles() {
    let mut scene = Scene::new();
    let root = scene.root();
    let level = scene.add(root, "level").unwrap();
    let a = scene.insert(level, "a", Body { x: 1 }).unwrap();
    let b = scene.insert(a.node(), "b", Health { hp: 9 }).unwrap();
    let keep = scene.insert(root, "keep", Body { x: 7 }).unwrap();

    assert!(scene.remove(level));
    assert!(!scene.remove(level));
    for id in [level, a.node(), b.node()] {
        assert!(!scene.contains(id));
        assert_eq!(scene.path(id), None);
        assert_eq!(scene.value_type(id), None);
    }
    assert_eq!(scene.get(a), None);
    assert_eq!(scene.get_mut(b), None);
    assert_eq!(scene.children(root), &[keep.node()]);
    assert_eq!(scene.len(), 2);
    assert!(!scene.remove(root), "the root is never removed");

    // New nodes reuse the freed slots, but old ids never resolve to them.
    let mut new = Vec::new();
    for i in 0..4 {
        new.push(scene.insert(root, &format!("n{i}"), Body { x: i }).unwrap());
    }
    assert!(new.iter().any(|n| n.node().index() == a.node().index()));
    assert_eq!(scene.get(a), None);
    assert!(!scene.contains(level));
    assert_eq!(scene.get(keep), Some(&Body { x: 7 }));
}

#[test]
fn typed_access_and_iteration() {
    let mut scene = Scene::new();
    let root = scene.root();
    let b1 = scene.insert(root, "b1", Body { x: 1 }).unwrap();
    let h = scene.insert(root, "h", Health { hp: 100 }).unwrap();
    let b2 = scene.insert(root, "b2", Body { x: 2 }).unwrap();
    let plain = scene.add(root, "plain").unwrap();

    scene.get_mut(b1).unwrap().x += 10;
    assert_eq!(scene.get(b1), Some(&Body { x: 11 }));
    assert_eq!(scene.value_type(b1.node()), Some(TypeId::of::<Body>()));
    assert_eq!(scene.value_type(plain), None);
    assert_eq!(scene.value_info(h.node()).unwrap().name(), "Health");

    // Wrong type: None.
    assert!(scene.net_ref::<Health>(b1.node()).is_none());
    let wrong = scene.net_ref::<Body>(b1.node()).unwrap();
    assert_eq!(wrong, b1);
    let mut scene2 = Scene::new();
    let root2 = scene2.root();
    let as_health = scene2.insert(root2, "b1", Health { hp: 1 }).unwrap();
    // A handle of one type pointing at a node holding another type resolves to None.
    let body_ref = scene2.set_value(as_health.node(), Body { x: 5 }).unwrap();
    assert_eq!(scene2.get(as_health), None);
    assert_eq!(scene2.get(body_ref), Some(&Body { x: 5 }));

    let mut bodies: Vec<_> = scene.iter::<Body>().map(|(r, b)| (r, b.x)).collect();
    bodies.sort_by_key(|&(_, x)| x);
    assert_eq!(bodies, vec![(b2, 2), (b1, 11)]);
    assert_eq!(scene.iter::<Health>().count(), 1);
    assert_eq!(scene.iter::<Opaque>().count(), 0);
    for (_, body) in scene.iter_mut::<Body>() {
        body.x *= 2;
    }
    assert_eq!(scene.get(b2).unwrap().x, 4);
    assert_eq!(scene.get(h).unwrap().hp, 100);

    assert!(scene.clear_value(b2.node()));
    assert_eq!(scene.get(b2), None);
    assert!(scene.contains(b2.node()));
    assert_eq!(scene.iter::<Body>().count(), 1);
}

#[test]
fn net_ref_traits_do_not_need_t_traits() {
    let mut scene = Scene::new();
    let root = scene.root();
    let a = scene.insert(root, "a", Opaque::default()).unwrap();
    let b = a; // Copy
    assert_eq!(a, b);
    let set: HashSet<NetRef<Opaque>> = [a, b].into_iter().collect();
    assert_eq!(set.len(), 1);
    assert!(format!("{a:?}").contains("Opaque"));
    assert_eq!(scene.get(a).unwrap().v, 0);
}

/// A nested scene: a player with a body at its root, a weapon child and, deeper, a nested
/// "gun" instance from the library itself.
fn library(extra_node: bool) -> SceneLibrary {
    let mut library = SceneLibrary::new();
    let gun = library
        .register("gun", |scene, root| {
            scene.set_value(root, Health { hp: 1 })?;
            scene.insert(root, "barrel", Body { x: 0 })?;
            Ok(())
        })
        .unwrap();
    assert_eq!(gun.get(), 0);
    let player = library
        .register("player", move |scene, root| {
            scene.set_value(root, Body::default())?;
            let visuals = scene.add(root, "visuals")?;
            scene.add(visuals, "mesh")?;
            scene.insert(visuals, "hp", Health { hp: 100 })?;
            let hand = scene.add(root, "hand")?;
            // Nested instance: depth-first order goes through it.
            library_gun(scene, hand)?;
            scene.insert(root, "tail", Body { x: 9 })?;
            if extra_node {
                scene.insert(root, "extra", Health::default())?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(player.get(), 1);
    library
}

/// What the "gun" scene builds, for nesting by hand inside another builder.
fn library_gun(scene: &mut Scene, parent: NodeId) -> Result<(), SceneError> {
    let gun = scene.insert(parent, "gun", Health { hp: 1 })?;
    scene.insert(gun.node(), "barrel", Body { x: 0 })?;
    Ok(())
}

fn networked(scene: &Scene, root: NodeId) -> Vec<(String, &'static str)> {
    scene
        .networked_depth_first(root)
        .map(|n| (scene.path(n).unwrap(), scene.value_info(n).unwrap().name()))
        .collect()
}

#[test]
fn instantiation_is_deterministic_in_depth_first_order() {
    let server_lib = library(false);
    let client_lib = library(false);
    let player = server_lib.index_of("player").unwrap();

    let mut server = Scene::new();
    let level = server.add(server.root(), "level").unwrap();
    let s = server_lib
        .instantiate(player, &mut server, level, "p1")
        .unwrap();

    // The client has a different history (other nodes, freed slots), same result.
    let mut client = Scene::new();
    let junk = client.add(client.root(), "junk").unwrap();
    client.insert(junk, "x", Body::default()).unwrap();
    client.remove(junk);
    let level = client.add(client.root(), "level").unwrap();
    let c = client_lib
        .instantiate(player, &mut client, level, "p1")
        .unwrap();

    let expected = vec![
        ("/root/level/p1".to_owned(), "Body"),
        ("/root/level/p1/visuals/hp".to_owned(), "Health"),
        ("/root/level/p1/hand/gun".to_owned(), "Health"),
        ("/root/level/p1/hand/gun/barrel".to_owned(), "Body"),
        ("/root/level/p1/tail".to_owned(), "Body"),
    ];
    assert_eq!(networked(&server, s), expected);
    assert_eq!(networked(&client, c), expected);

    // Full pre-order including plain nodes.
    let names: Vec<_> = server
        .depth_first(s)
        .map(|n| server.name(n).unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["p1", "visuals", "mesh", "hp", "hand", "gun", "barrel", "tail"]
    );

    // Instances side by side; a duplicate instance name is refused and leaves nothing behind.
    let before = client.len();
    assert!(matches!(
        client_lib.instantiate(player, &mut client, level, "p1"),
        Err(SceneError::DuplicateName { .. })
    ));
    assert_eq!(client.len(), before);
    client_lib
        .instantiate(player, &mut client, level, "p2")
        .unwrap();
    assert_eq!(client.len(), before + 8);
    assert!(matches!(
        client_lib.instantiate(SceneIndex::new(7), &mut client, level, "p3"),
        Err(SceneError::UnknownScene(_))
    ));
}

#[test]
fn failing_builder_leaves_nothing() {
    let mut lib = SceneLibrary::new();
    let bad = lib
        .register("bad", |scene, root| {
            scene.add(root, "a")?;
            scene.add(root, "a")?;
            Ok(())
        })
        .unwrap();
    let mut scene = Scene::new();
    let root = scene.root();
    assert!(lib.instantiate(bad, &mut scene, root, "i").is_err());
    assert_eq!(scene.len(), 1);
    assert!(lib.shapes().is_err());
    assert!(lib.fingerprint().is_err());
}

#[test]
fn library_registration_and_fingerprint() {
    let a = library(false);
    let b = library(false);
    let c = library(true);

    let mut dup = library(false);
    assert_eq!(
        dup.register("gun", |_, _| Ok(())).unwrap_err(),
        SceneError::DuplicateScene("gun".into())
    );
    assert_eq!(dup.len(), 2);
    assert_eq!(a.name(SceneIndex::new(1)), Some("player"));
    assert_eq!(
        a.iter().map(|(i, n)| (i.get(), n)).collect::<Vec<_>>(),
        vec![(0, "gun"), (1, "player")]
    );

    let shapes = a.shapes().unwrap();
    assert_eq!(shapes[0].name, "gun");
    assert_eq!(
        shapes[0].types,
        vec![
            ("Health", <Health as Replicated>::SCHEMA_HASH),
            ("Body", <Body as Replicated>::SCHEMA_HASH)
        ]
    );
    assert_eq!(
        shapes[1].types.iter().map(|t| t.0).collect::<Vec<_>>(),
        ["Body", "Health", "Health", "Body", "Body"]
    );

    assert_eq!(a.fingerprint().unwrap(), b.fingerprint().unwrap());
    assert_eq!(first_difference(&shapes, &b.shapes().unwrap()), None);
    assert_ne!(a.fingerprint().unwrap(), c.fingerprint().unwrap());
    let diff = first_difference(&shapes, &c.shapes().unwrap()).unwrap();
    assert!(diff.contains("player") && diff.contains("Health"), "{diff}");

    // A different type at the same position is named.
    let mut d = SceneLibrary::new();
    d.register("gun", |scene, root| {
        scene.set_value(root, Health { hp: 1 })?;
        scene.insert(root, "barrel", Opaque::default())?;
        Ok(())
    })
    .unwrap();
    let diff = first_difference(&shapes, &d.shapes().unwrap()).unwrap();
    assert!(diff.contains("`gun`") && diff.contains("Opaque"), "{diff}");

    // Registration order matters.
    let mut e = SceneLibrary::new();
    e.register("player", |_, _| Ok(())).unwrap();
    let diff = first_difference(&shapes, &e.shapes().unwrap()).unwrap();
    assert!(
        diff.contains("`gun`") && diff.contains("`player`"),
        "{diff}"
    );
    assert_ne!(
        SceneShape::fingerprint(&shapes),
        SceneShape::fingerprint(&e.shapes().unwrap())
    );
    assert_eq!(
        SceneShape::fingerprint(&[]),
        SceneLibrary::new().fingerprint().unwrap()
    );
}

// -- The scene as a storage behind the seam: its dense columns and their hints.

#[derive(Replicated, Default)]
struct DenseBody {
    #[replicated]
    x: i32,
}

/// The value at `hint` through the scene's dense column, trusting a hint checked at
/// `checked` as the runtime does.
fn at(scene: &mut Scene, node: NodeId, hint: u32, checked: &mut u64) -> Option<i32> {
    let mut found = None;
    lend::<DenseBody>(scene, &mut |rows| {
        let mut dense = rows.dense().expect("the scene's columns are dense");
        found = dense.at_checked(node, hint, checked).map(|b| b.x);
    });
    found
}

#[test]
fn a_checked_hint_is_not_trusted_after_a_removal_even_one_that_moves_nothing() {
    let mut scene = Scene::new();
    let root = scene.root();
    let a = scene.insert(root, "a", DenseBody { x: 1 }).unwrap().node();
    let b = scene.insert(root, "b", DenseBody { x: 2 }).unwrap().node();
    let mut checked = 0;
    assert_eq!(at(&mut scene, b, 1, &mut checked), Some(2));
    assert_ne!(checked, 0);
    // `b` is the last row: removing it moves nothing, and `c` takes its row.
    scene.clear_value(b);
    let c = scene.insert(root, "c", DenseBody { x: 3 }).unwrap().node();
    assert_eq!(at(&mut scene, b, 1, &mut checked), None);
    assert_eq!(at(&mut scene, c, 1, &mut checked), Some(3));
    // Removing `a` moves `c` into row 0: its old hint is refused, the new one found.
    scene.clear_value(a);
    assert_eq!(at(&mut scene, c, 1, &mut checked), None);
    assert_eq!(at(&mut scene, c, 0, &mut checked), Some(3));
}
