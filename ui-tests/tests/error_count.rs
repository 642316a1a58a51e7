//! One mistake, one error: rustc shows a diagnostic repeated at the same span only once, but
//! still counts (and IDEs list) every copy. This test compiles a few compile-fail cases of
//! `tests/ui/` as one scratch crate and counts the errors each produces, so that an expansion
//! which reports a member's or a parameter's type once per use fails here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cases and how many errors each must produce: one per missing trait.
const CASES: &[(&str, usize)] = &[
    ("replicated/member_not_codec.rs", 1),
    ("replicated/member_not_clone.rs", 1),
    ("replicated/member_not_partial_eq.rs", 1),
    ("replicated/interpolate_not_interpolate.rs", 1),
    ("replicated/quantize_not_quantizable.rs", 1),
    // `Texture` lacks `NetCodec`, `PartialEq`, `Clone` and `Interpolate`.
    ("replicated/member_lacks_every_trait.rs", 4),
    // Option conflicts: one error each, at `predict`.
    ("replicated/predict_and_quantize.rs", 1),
    ("replicated/predict_and_initial_only.rs", 1),
    ("replicated/predict_and_skip_owner.rs", 1),
    // `#[predict]` alone: one error, at the attribute.
    ("replicated/predict_attribute.rs", 1),
    // An input type without `NetCodec`: one error, at `run` (not one per method).
    ("prediction/input_not_codec.rs", 1),
    ("rpcs/param_not_codec.rs", 1),
    // One field of a struct and one of an enum variant: one error each.
    ("net_codec/field_not_codec.rs", 2),
    ("rpcs/not_replicated.rs", 1),
];

#[test]
fn each_mistake_is_one_error() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("error-count");
    std::fs::create_dir_all(dir.join("src/bin")).expect("a scratch directory");
    let mf_net = workspace
        .join("mf-net")
        .canonicalize()
        .expect("the mf-net crate");
    let manifest = format!(
        "[package]\nname = \"error-count\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\nmf-net = {{ path = {:?}, features = [\"glam\"] }}\n\
         glam = \"0.34\"\n\n[workspace]\n",
        mf_net.display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("write the manifest");
    // The workspace's lock file: the same dependency versions, and no resolution online.
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).expect("the lock file");
    for (case, _) in CASES {
        let bin = bin_name(case);
        std::fs::copy(ui.join(case), dir.join(format!("src/bin/{bin}.rs"))).expect("copy a case");
    }
    let output = Command::new(env!("CARGO"))
        .args([
            "check",
            "--bins",
            "--keep-going",
            "--message-format=json",
            "--quiet",
        ])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in stdout.lines() {
        if !line.contains("\"reason\":\"compiler-message\"") {
            continue;
        }
        let Some(message) = line.split("\"message\":{").nth(1) else {
            continue;
        };
        // rustc's closing "aborting due to N previous errors" is an error message too.
        if !message.contains("\"level\":\"error\"") || message.contains("aborting due to") {
            continue;
        }
        if let Some(bin) = line
            .split("\"src_path\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|path| Path::new(path).file_stem())
        {
            *counts
                .entry(bin.to_string_lossy().into_owned())
                .or_default() += 1;
        }
    }
    for (case, expected) in CASES {
        let found = counts.get(&bin_name(case)).copied().unwrap_or(0);
        assert_eq!(
            found,
            *expected,
            "{case}: {found} errors, expected {expected}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The scratch crate's binary for `case` (`replicated/member_not_codec.rs` →
/// `replicated_member_not_codec`).
fn bin_name(case: &str) -> String {
    case.trim_end_matches(".rs").replace('/', "_")
}
