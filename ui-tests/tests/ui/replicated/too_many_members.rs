use mf_net::Replicated;

// The change mask is a u64: the 65th member is refused at its field.
#[derive(Replicated)]
struct Huge {
    local: u8,
    #[replicated(flatten)]
    base: Base,
    #[replicated]
    m0: u8,
    #[replicated]
    m1: u8,
    #[replicated]
    m2: u8,
    #[replicated]
    m3: u8,
    #[replicated]
    m4: u8,
    #[replicated]
    m5: u8,
    #[replicated]
    m6: u8,
    #[replicated]
    m7: u8,
    #[replicated]
    m8: u8,
    #[replicated]
    m9: u8,
    #[replicated]
    m10: u8,
    #[replicated]
    m11: u8,
    #[replicated]
    m12: u8,
    #[replicated]
    m13: u8,
    #[replicated]
    m14: u8,
    #[replicated]
    m15: u8,
    #[replicated]
    m16: u8,
    #[replicated]
    m17: u8,
    #[replicated]
    m18: u8,
    #[replicated]
    m19: u8,
    #[replicated]
    m20: u8,
    #[replicated]
    m21: u8,
    #[replicated]
    m22: u8,
    #[replicated]
    m23: u8,
    #[replicated]
    m24: u8,
    #[replicated]
    m25: u8,
    #[replicated]
    m26: u8,
    #[replicated]
    m27: u8,
    #[replicated]
    m28: u8,
    #[replicated]
    m29: u8,
    #[replicated]
    m30: u8,
    #[replicated]
    m31: u8,
    #[replicated]
    m32: u8,
    #[replicated]
    m33: u8,
    #[replicated]
    m34: u8,
    #[replicated]
    m35: u8,
    #[replicated]
    m36: u8,
    #[replicated]
    m37: u8,
    #[replicated]
    m38: u8,
    #[replicated]
    m39: u8,
    #[replicated]
    m40: u8,
    #[replicated]
    m41: u8,
    #[replicated]
    m42: u8,
    #[replicated]
    m43: u8,
    #[replicated]
    m44: u8,
    #[replicated]
    m45: u8,
    #[replicated]
    m46: u8,
    #[replicated]
    m47: u8,
    #[replicated]
    m48: u8,
    #[replicated]
    m49: u8,
    #[replicated]
    m50: u8,
    #[replicated]
    m51: u8,
    #[replicated]
    m52: u8,
    #[replicated]
    m53: u8,
    #[replicated]
    m54: u8,
    #[replicated]
    m55: u8,
    #[replicated]
    m56: u8,
    #[replicated]
    m57: u8,
    #[replicated]
    m58: u8,
    #[replicated]
    m59: u8,
    #[replicated]
    m60: u8,
    #[replicated]
    m61: u8,
    #[replicated]
    m62: u8,
    #[replicated]
    m63: u8,
    #[replicated]
    m64: u8,
}

#[derive(Replicated)]
struct Base {
    #[replicated]
    x: u8,
}

fn main() {}
