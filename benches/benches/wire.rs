//! Wire costs: LEB128 varints of every encoded length, and length-prefixed strings.
//!
//! Each iteration writes (into one reused `NetWriter`) or reads (with a fresh `NetReader` over
//! prepared bytes) a batch of `WIRE_BATCH` (256) values of the same encoded length, or 64
//! strings; the counters divide by the batch, so times are per value (per string).
//!
//! `bit_delta`: 1000 moving boxes' quantized position (16 bits per axis) and smallest-three
//! rotation (12 bits) coded as bit-level deltas against the previous tick (`BitWriter`,
//! `Quantization::write_delta`, `write_rotation_delta`), and read back; next to them, the
//! bitcode reference decoding the same boxes' plain values. Times are per box; the bits per box
//! are printed once.
//!
//! `state_bits`: the same boxes as a derived type, each one's byte entry transcoded to its bit
//! form against the previous tick (`codec::state_bits`), and back followed by the byte form's
//! apply on a client copy; next to them, the byte form's apply alone; and the server's coding
//! straight from the shadow state (`code_boxes`), also for the box with unquantized members
//! (`code_plain_boxes`). Times are per box.
//!
//! Run: `cargo bench -p mf-net-benches --bench wire`.

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, AllocProfiler, Bencher};
use mf_net::prelude::*;
use mf_net_benches::{ascii_string, varint_u32_values, varint_u64_values, WIRE_BATCH};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// Strings per iteration of the string benchmarks.
const STRINGS: usize = 64;

/// Varints; the argument is the encoded length in bytes.
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod varint {
    use super::*;

    #[divan::bench(args = [1, 2, 3, 4, 5])]
    fn write_u32(bencher: Bencher<'_, '_>, bytes: u32) {
        let values = varint_u32_values(bytes, WIRE_BATCH);
        let mut w = NetWriter::with_capacity(WIRE_BATCH * 5);
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                w.clear();
                for &v in black_box(&values) {
                    w.write_var_u32(v);
                }
                w.len()
            });
    }

    #[divan::bench(args = [1, 2, 3, 4, 5])]
    fn read_u32(bencher: Bencher<'_, '_>, bytes: u32) {
        let mut w = NetWriter::new();
        for v in varint_u32_values(bytes, WIRE_BATCH) {
            w.write_var_u32(v);
        }
        let data = w.into_vec();
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                let mut r = NetReader::new(black_box(&data));
                let mut sum = 0u32;
                for _ in 0..WIRE_BATCH {
                    sum = sum.wrapping_add(r.read_var_u32().expect("valid varint"));
                }
                sum
            });
    }

    #[divan::bench(args = [1, 3, 5, 8, 10])]
    fn write_u64(bencher: Bencher<'_, '_>, bytes: u32) {
        let values = varint_u64_values(bytes, WIRE_BATCH);
        let mut w = NetWriter::with_capacity(WIRE_BATCH * 10);
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                w.clear();
                for &v in black_box(&values) {
                    w.write_var_u64(v);
                }
                w.len()
            });
    }

    #[divan::bench(args = [1, 3, 5, 8, 10])]
    fn read_u64(bencher: Bencher<'_, '_>, bytes: u32) {
        let mut w = NetWriter::new();
        for v in varint_u64_values(bytes, WIRE_BATCH) {
            w.write_var_u64(v);
        }
        let data = w.into_vec();
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                let mut r = NetReader::new(black_box(&data));
                let mut sum = 0u64;
                for _ in 0..WIRE_BATCH {
                    sum = sum.wrapping_add(r.read_var_u64().expect("valid varint"));
                }
                sum
            });
    }
}

/// Strings (varint length + UTF-8 bytes); the argument is the string length in bytes. Reading
/// borrows (`read_str` checks UTF-8 and allocates nothing).
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod string {
    use super::*;

    #[divan::bench(args = [8, 64, 1024])]
    fn write(bencher: Bencher<'_, '_>, len: usize) {
        let strings: Vec<String> = (0..STRINGS).map(|_| ascii_string(len)).collect();
        let mut w = NetWriter::with_capacity(STRINGS * (len + 2));
        bencher
            .counter(ItemsCount::new(STRINGS))
            .counter(BytesCount::new(STRINGS * len))
            .bench_local(|| {
                w.clear();
                for s in black_box(&strings) {
                    w.write_str(s);
                }
                w.len()
            });
    }

    #[divan::bench(args = [8, 64, 1024])]
    fn read(bencher: Bencher<'_, '_>, len: usize) {
        let mut w = NetWriter::new();
        for _ in 0..STRINGS {
            w.write_str(&ascii_string(len));
        }
        let data = w.into_vec();
        bencher
            .counter(ItemsCount::new(STRINGS))
            .counter(BytesCount::new(STRINGS * len))
            .bench_local(|| {
                let mut r = NetReader::new(black_box(&data));
                let mut total = 0usize;
                for _ in 0..STRINGS {
                    total += r.read_str().expect("valid string").len();
                }
                total
            });
    }
}

/// Bit-level deltas of the quantized box's members against the previous tick.
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod bit_delta {
    use mf_net::codec::quantize::{Buckets, Quantization, Quantize, QuantizeRotation};
    use mf_net::wire::{BitReader, BitWriter};
    use mf_net_benches::{spawn_boxes, step, Motion, PlainBox};

    use super::*;

    const BOXES: usize = 1000;
    /// The quantized bench box's members (`QuantizedBox`).
    const POSITION: Quantization = Quantization::new(-1000.0, 1000.0, 16);
    const ROTATION: Quantization = Quantization::smallest_three(12);

    /// Each box's (position, rotation) buckets at frame 10 (the baseline) and 11.
    struct Ticks {
        base: Vec<(Buckets, Buckets)>,
        now: Vec<(Buckets, Buckets)>,
        plain: Vec<PlainBox>,
    }

    fn ticks() -> Ticks {
        let mut boxes = spawn_boxes(BOXES);
        let buckets = |boxes: &[mf_net_benches::BoxEntity]| -> Vec<(Buckets, Buckets)> {
            let wire = |b: &mf_net_benches::BoxEntity| {
                (
                    Quantize::to_wire(&b.position, &POSITION),
                    QuantizeRotation::to_wire(&b.rotation, &ROTATION),
                )
            };
            boxes.iter().map(wire).collect()
        };
        step(&mut boxes, 10, Motion::All);
        let base = buckets(&boxes);
        step(&mut boxes, 11, Motion::All);
        let plain = boxes.iter().map(PlainBox::from).collect();
        Ticks {
            base,
            now: buckets(&boxes),
            plain,
        }
    }

    fn encode(t: &Ticks, w: &mut BitWriter) {
        w.clear();
        for ((bp, br), (np, nr)) in t.base.iter().zip(&t.now) {
            POSITION.write_delta(bp, np, 3, w);
            ROTATION.write_rotation_delta(br, nr, w);
        }
    }

    #[divan::bench]
    fn encode_boxes(bencher: Bencher<'_, '_>) {
        let t = ticks();
        let mut w = BitWriter::with_capacity(BOXES * 8);
        encode(&t, &mut w);
        #[allow(clippy::cast_precision_loss)]
        let per_box = w.bit_len() as f64 / BOXES as f64;
        println!(
            "bit_delta: {per_box:.1} bits ({:.2} B) per box",
            per_box / 8.0
        );
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            encode(black_box(&t), &mut w);
            w.bit_len()
        });
    }

    #[divan::bench]
    fn decode_boxes(bencher: Bencher<'_, '_>) {
        let t = ticks();
        let mut w = BitWriter::new();
        encode(&t, &mut w);
        let bytes = w.finish().to_vec();
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            let mut r = BitReader::new(black_box(&bytes));
            for (bp, br) in &t.base {
                black_box(POSITION.read_delta(bp, 3, &mut r).expect("valid delta"));
                black_box(
                    ROTATION
                        .read_rotation_delta(br, &mut r)
                        .expect("valid delta"),
                );
            }
            r.bit_position()
        });
    }

    /// The reference: bitcode decoding the same boxes' plain values (position, rotation and
    /// health as floats and an integer).
    #[divan::bench]
    fn bitcode_decode_boxes(bencher: Bencher<'_, '_>) {
        let t = ticks();
        let mut buffer = bitcode::Buffer::new();
        let bytes = buffer.encode(&t.plain).to_vec();
        let _: Vec<PlainBox> = buffer.decode(&bytes).expect("valid bitcode");
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            let decoded: Vec<PlainBox> = buffer.decode(black_box(&bytes)).expect("valid bitcode");
            decoded
        });
    }
}

/// A state's bit form (`codec::state_bits`) of the quantized bench box, a derived type: the
/// server's transcoding of each moved box's byte entry against the previous tick's values (and
/// its coding straight from the shadow state, which replaced it), and
/// the client's transcoding back followed by the byte form's apply; next to them, the byte
/// form's apply alone. Times are per box.
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod state_bits {
    use glam::{Quat, Vec3};
    use mf_net::__private::Coding;
    use mf_net::codec::quantize::Buckets;
    use mf_net::codec::state_bits::{bits_to_bytes, bytes_to_bits};
    use mf_net::replication::{Apply, Audience, Capture};
    use mf_net::wire::{BitReader, BitWriter, NetReader, NetWriter};
    use mf_net_benches::{spawn_boxes, step, BoxEntity, Motion};

    use super::*;

    const BOXES: usize = 1000;

    /// The bench box with quantized members (as issue 26 measures it).
    #[derive(Replicated, Debug, Default, Clone, PartialEq)]
    struct QuantizedBox {
        #[replicated(quantize(min = -512.0, max = 512.0, bits = 16))]
        position: Vec3,
        #[replicated(quantize(smallest_three, bits = 12))]
        rotation: Quat,
        #[replicated]
        health: i32,
    }

    /// Each box's byte entry at tick 11 (what changed since tick 10), its shadow state then,
    /// the member values at tick 10 (the baseline), and the client's copies.
    struct Entries {
        bytes: Vec<Vec<u8>>,
        states: Vec<<QuantizedBox as Replicated>::State>,
        base: Vec<[Buckets; 3]>,
        clients: Vec<QuantizedBox>,
    }

    fn entries() -> Entries {
        let mut boxes = spawn_boxes(BOXES);
        step(&mut boxes, 10, Motion::All);
        let quantized = |b: &BoxEntity| QuantizedBox {
            position: b.position,
            rotation: b.rotation,
            health: b.health,
        };
        let layout = <QuantizedBox as Replicated>::LAYOUT;
        let mut states: Vec<_> = boxes.iter().map(|b| quantized(b).new_state(10)).collect();
        let mut base = Vec::new();
        let mut clients = Vec::new();
        for state in &states {
            let mut w = NetWriter::new();
            <QuantizedBox as Capture<_>>::write_full_for(state, Audience::of(false), &mut w);
            let mut bits = BitWriter::new();
            bytes_to_bits(
                layout,
                &mut NetReader::new(w.as_slice()),
                &[],
                &mut bits,
                &mut [],
            )
            .expect("the type's own bytes");
            let (mut out, mut now) = (NetWriter::new(), [Buckets::default(); 3]);
            let packed = bits.finish().to_vec();
            bits_to_bytes(
                layout,
                &mut BitReader::new(&packed),
                &[],
                &mut out,
                &mut now,
            )
            .expect("its own bits");
            base.push(now);
            let mut client = QuantizedBox::default();
            client
                .read(&mut NetReader::new(w.as_slice()))
                .expect("its own bytes");
            clients.push(client);
        }
        step(&mut boxes, 11, Motion::All);
        let bytes = boxes
            .iter()
            .zip(&mut states)
            .map(|(b, state)| {
                quantized(b).capture(state, 11);
                let mut w = NetWriter::new();
                <QuantizedBox as Capture<_>>::write_since_for(
                    state,
                    Some(10),
                    Audience::of(false),
                    &mut w,
                );
                w.into_vec()
            })
            .collect();
        Entries {
            bytes,
            states,
            base,
            clients,
        }
    }

    /// Every box's bit form, one after the other.
    fn encode(e: &Entries, w: &mut BitWriter) {
        w.clear();
        let layout = <QuantizedBox as Replicated>::LAYOUT;
        for (bytes, base) in e.bytes.iter().zip(&e.base) {
            bytes_to_bits(layout, &mut NetReader::new(bytes), base, w, &mut [])
                .expect("valid bytes");
        }
    }

    #[divan::bench]
    fn encode_boxes(bencher: Bencher<'_, '_>) {
        let e = entries();
        let mut w = BitWriter::with_capacity(BOXES * 8);
        encode(&e, &mut w);
        #[allow(clippy::cast_precision_loss)]
        let per_box = w.bit_len() as f64 / BOXES as f64;
        println!("state_bits: {per_box:.1} bits of state per box");
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            encode(black_box(&e), &mut w);
            w.bit_len()
        });
    }

    /// The server's coding since it codes from the shadow state (`Capture::write_bits_since_for`,
    /// the same bits as `encode_boxes`), with each box's values kept as a later baseline.
    #[divan::bench]
    fn code_boxes(bencher: Bencher<'_, '_>) {
        let e = entries();
        let mut coding = Coding::default();
        let which = (Some(10), Audience::of(false));
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            let mut bits = 0;
            for (state, base) in black_box(&e.states).iter().zip(&e.base) {
                coding.code(QuantizedBox::LAYOUT, base, |c| {
                    QuantizedBox::write_bits_since_for(state, which.0, which.1, c);
                });
                bits += coding.bit_len();
            }
            bits
        });
    }

    /// [`code_boxes`] for the bench box with unquantized members ([`BoxEntity`], issue 26's
    /// default box): floats coded as the differences of their bits.
    #[divan::bench]
    fn code_plain_boxes(bencher: Bencher<'_, '_>) {
        let mut boxes = spawn_boxes(BOXES);
        step(&mut boxes, 10, Motion::All);
        let layout = <BoxEntity as Replicated>::LAYOUT;
        let audience = Audience::of(false);
        let mut states: Vec<_> = boxes.iter().map(|b| b.new_state(10)).collect();
        let mut coding = Coding::default();
        let base: Vec<Vec<Buckets>> = states
            .iter()
            .map(|state| {
                coding.code(layout, &[], |c| {
                    BoxEntity::write_bits_since_for(state, None, audience, c);
                });
                coding.values().to_vec()
            })
            .collect();
        step(&mut boxes, 11, Motion::All);
        for (b, state) in boxes.iter().zip(&mut states) {
            b.capture(state, 11);
        }
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            let mut bits = 0;
            for (state, base) in black_box(&states).iter().zip(&base) {
                coding.code(layout, base, |c| {
                    BoxEntity::write_bits_since_for(state, Some(10), audience, c);
                });
                bits += coding.bit_len();
            }
            bits
        });
    }

    #[divan::bench]
    fn decode_and_apply_boxes(bencher: Bencher<'_, '_>) {
        let mut e = entries();
        let mut w = BitWriter::new();
        encode(&e, &mut w);
        let packed = w.finish().to_vec();
        let layout = <QuantizedBox as Replicated>::LAYOUT;
        let mut out = NetWriter::with_capacity(64);
        let mut now = [Buckets::default(); 3];
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            let mut r = BitReader::new(black_box(&packed));
            for (base, client) in e.base.iter().zip(&mut e.clients) {
                out.clear();
                bits_to_bytes(layout, &mut r, base, &mut out, &mut now).expect("valid bits");
                client
                    .read(&mut NetReader::new(out.as_slice()))
                    .expect("valid bytes");
            }
            r.bit_position()
        });
    }

    /// The byte form's apply alone, for comparison.
    #[divan::bench]
    fn apply_bytes_boxes(bencher: Bencher<'_, '_>) {
        let mut e = entries();
        bencher.counter(ItemsCount::new(BOXES)).bench_local(|| {
            for (bytes, client) in e.bytes.iter().zip(&mut e.clients) {
                client
                    .read(&mut NetReader::new(black_box(bytes)))
                    .expect("valid bytes");
            }
        });
    }
}
