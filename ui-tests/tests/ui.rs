//! Runs the trybuild cases under `tests/ui/`.

#[test]
fn net_codec() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/net_codec/pass/*.rs");
    t.compile_fail("tests/ui/net_codec/*.rs");
    t.pass("tests/ui/replicated/pass/*.rs");
    t.compile_fail("tests/ui/replicated/*.rs");
    t.compile_fail("tests/ui/rpcs/*.rs");
    t.compile_fail("tests/ui/prediction/*.rs");
}
