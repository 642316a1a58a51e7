//! With mf-net's `glam` feature off, a `glam` member is two errors (no `NetCodec`, no
//! `Interpolate`), and the first already names the feature to turn on (it used to be only in
//! the second). Builds `tests/ui/no_glam/glam_member.rs` in a scratch crate that depends on
//! mf-net without features (the trybuild cases build with `glam` on).

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn the_first_error_names_the_glam_feature() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-glam");
    std::fs::create_dir_all(dir.join("src")).expect("a scratch directory");
    let mf_net = workspace
        .join("mf-net")
        .canonicalize()
        .expect("the mf-net crate");
    let manifest = format!(
        "[package]\nname = \"no-glam\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\nmf-net = {{ path = {:?} }}\nglam = \"0.34\"\n\n\
         [workspace]\n",
        mf_net.display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write the manifest");
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).expect("the lock file");
    std::fs::copy(ui.join("no_glam/glam_member.rs"), dir.join("src/main.rs")).expect("the case");
    let output = Command::new(env!("CARGO"))
        .args(["check", "--message-format=json", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let errors: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-message\""))
        .filter_map(|l| l.split("\"message\":{").nth(1))
        .filter(|m| m.contains("\"level\":\"error\"") && !m.contains("aborting due to"))
        .collect();
    assert_eq!(
        errors.len(),
        2,
        "NetCodec and Interpolate:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let feature = "mf-net's `glam` feature";
    assert!(
        errors[0].contains("does not implement `NetCodec`"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains(feature),
        "the first error: {}",
        errors[0]
    );
    assert!(
        errors[1].contains(feature),
        "the second error: {}",
        errors[1]
    );
}
