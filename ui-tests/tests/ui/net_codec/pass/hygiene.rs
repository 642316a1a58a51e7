//! The expansion is hygienic: it works inside `macro_rules!`, inside functions, next to
//! user items with clashing names (`Result`, `Default`, a `core` module, fields named like the
//! generated locals), and without any `use` of mf-net.

#![deny(warnings)]

// Names the expansion must not pick up by accident.
#[allow(dead_code)]
struct Result;
#[allow(dead_code)]
struct Default;
#[allow(dead_code)]
mod core {}
#[allow(dead_code)]
fn __h() {}

macro_rules! message {
    ($name:ident { $($field:ident: $ty:ty),* }) => {
        #[derive(::mf_net::NetCodec)]
        struct $name { $($field: $ty),* }
    };
}

message!(Chat { text: String, from: u32 });

#[derive(mf_net::NetCodec, PartialEq, Debug)]
struct Inherent {
    __r: u8,
    __h: u8,
}

impl Inherent {
    // An inherent constant with the trait's name must not be used by the generated code.
    #[allow(dead_code)]
    const NAME: u32 = 7;
}

fn main() {
    #[derive(mf_net::NetCodec, PartialEq, Debug)]
    enum Local {
        A { __w: u8 },
        B(#[net(skip)] u8, u16),
    }

    let bytes = mf_net::codec::to_vec(&Chat { text: "hi".into(), from: 1 });
    let back: Chat = mf_net::codec::from_slice(&bytes).expect("round trip");
    assert_eq!(back.text, "hi");
    assert_eq!(back.from, 1);

    let v = Inherent { __r: 1, __h: 2 };
    let back: Inherent = mf_net::codec::from_slice(&mf_net::codec::to_vec(&v)).expect("round trip");
    assert_eq!(back, v);
    assert_eq!(<Inherent as mf_net::codec::NetCodec>::NAME, "Inherent");

    let l = Local::B(9, 3);
    let back: Local = mf_net::codec::from_slice(&mf_net::codec::to_vec(&l)).expect("round trip");
    assert_eq!(back, Local::B(0, 3));
    let back: Local =
        mf_net::codec::from_slice(&mf_net::codec::to_vec(&Local::A { __w: 4 })).expect("round trip");
    assert_eq!(back, Local::A { __w: 4 });
}
