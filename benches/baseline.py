#!/usr/bin/env python3
"""Turns the text output of `cargo bench -p mf-net-benches` into benches/baseline.json.

    cargo bench -p mf-net-benches 2>&1 | tee /tmp/bench.txt
    python3 benches/baseline.py /tmp/bench.txt --note "idle machine" > benches/baseline.json
    python3 benches/baseline.py --markdown /tmp/bench.txt   # the README's tables

Reads divan's tree: for every benchmark the median time per iteration, the median throughput
(items per second, from the benchmark's ItemsCount counter) and the median allocations per
iteration (counted by divan's AllocProfiler). Per-entity times are 1 / throughput. Ratios to
the bitcode reference compare per-frame totals of the same scenario (same boxes, same changes).
Standard library only.
"""

import datetime
import json
import os
import re
import subprocess
import sys

TIME_UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}

# Benchmarks the issue asks for that do not exist yet (none at the moment).
PENDING = {}

OPS = ("capture", "encode", "decode_apply", "encode_snapshot", "decode_snapshot",
       "decode_snapshot_interpolated", "bitcode_encode", "bitcode_decode")

# The `scale` bench: scale/{server_tick,client_frames}/<motion>/<kind>/<budget>/<boxes> and
# scale/acks/server_begin_frame/<boxes>, with 64 clients.
SCALE_CLIENTS = 64
SCALE_MOTIONS = ("all", "ten_percent")
SCALE_KINDS = ("plain", "interpolated", "quantized")
SCALE_BUDGETS = ("0", "1200")
SCALE_BOXES = ("1000", "10000")

# The `prediction` bench: prediction/client_frame/{steady,rollback,rollback_empty_step}/<depth>/
# <entities>, every one counted per depth x entities (re-simulated tick x predicted entity).
PREDICTION_DEPTHS = ("4", "16")
PREDICTION_ENTITIES = ("1", "16", "256")


def parse_time(text):
    m = re.fullmatch(r"([\d.]+)\s*(ps|ns|µs|us|ms|s)", text.strip())
    return float(m.group(1)) * TIME_UNITS[m.group(2)] if m else None


def parse_rate(text, unit):
    m = re.fullmatch(r"([\d.]+)\s*([KMGT]?)" + unit + "/s", text.strip())
    return float(m.group(1)) * SI[m.group(2)] if m else None


def parse_count(text):
    m = re.fullmatch(r"([\d.]+)\s*([KMGT]?)B?", text.strip())
    return float(m.group(1)) * SI[m.group(2)] if m else None


def parse(lines):
    results = {}
    columns = None
    path = []
    current = None
    pending_alloc = None  # lines still expected after an "alloc:" label
    for line in lines:
        line = line.rstrip("\n")
        if "fastest" in line and "median" in line and "│" in line:
            columns = [line.index(c) for c in ("fastest", "slowest", "median", "mean")]
            columns.append(line.index("samples"))
            path = [line.split()[0]]
            current = None
            continue
        if columns is None or not line.strip():
            continue

        def column(i):
            start = columns[i]
            end = line.find("│", start)
            return line[start : end if end >= 0 else None].strip()

        marker = max(line.find("├─ "), line.find("╰─ "))
        if marker >= 0:
            depth = marker // 3 + 1
            name = line[marker + 3 : columns[0]].split()
            if not name:
                continue
            del path[depth:]
            path.append(name[0])
            median = parse_time(column(2))
            if median is None:
                current = None
                continue
            current = {"median_ns": median, "allocs": 0, "alloc_bytes": 0}
            results["/".join(path)] = current
            pending_alloc = None
            continue
        if current is None:
            continue
        label = column(0)
        if pending_alloc is not None:
            value = parse_count(column(2))
            if pending_alloc == 2:
                current["allocs"] = value
            else:
                current["alloc_bytes"] = value
            pending_alloc = pending_alloc - 1 or None
            continue
        if label == "alloc:":
            pending_alloc = 2
            continue
        rate = parse_rate(column(2), "item")
        if rate:
            current["per_item_ns"] = 1e9 / rate
    for r in results.values():
        r["median_ns"] = round(r["median_ns"], 3)
        if "per_item_ns" in r:
            r["per_item_ns"] = round(r["per_item_ns"], 4)
    return results


def ratios(results):
    out = {}
    for motion in ("all_changed", "ten_percent_changed"):
        for n in ("100", "1000", "10000"):
            get = lambda op: results.get(f"replication/{motion}/{op}/{n}", {}).get("median_ns")
            enc, dec, cap = get("encode"), get("decode_apply"), get("capture")
            benc, bdec = get("bitcode_encode"), get("bitcode_decode")
            if None in (enc, dec, cap, benc, bdec):
                continue
            row = out[f"{motion}/{n}"] = {
                "encode / bitcode_encode": round(enc / benc, 2),
                "decode_apply / bitcode_decode": round(dec / bdec, 2),
                "capture / bitcode_encode": round(cap / benc, 2),
                "(capture + encode) / bitcode_encode": round((cap + enc) / benc, 2),
            }
            every = results.get(f"replication/all_changed/bitcode_encode/{n}", {}).get("median_ns")
            if every:
                # What a serializer without change detection sends every frame: every box.
                row["(capture + encode) / bitcode_encode of every box"] = round(
                    (cap + enc) / every, 2
                )
            snap, dsnap = get("encode_snapshot"), get("decode_snapshot")
            isnap = get("decode_snapshot_interpolated")
            idle = results.get(f"replication/idle/server_frame/{n}", {}).get("median_ns")
            if snap:
                row["encode_snapshot / bitcode_encode"] = round(snap / benc, 2)
                if idle and motion == "all_changed":
                    row["(encode_snapshot - idle server_frame) / bitcode_encode"] = round(
                        (snap - idle) / benc, 2
                    )
            if dsnap:
                row["decode_snapshot / bitcode_decode"] = round(dsnap / bdec, 2)
            if isnap:
                row["decode_snapshot_interpolated / bitcode_decode"] = round(isnap / bdec, 2)
    return out


def snapshot_only(results):
    """Per changed box: encode_snapshot minus the idle server frame (the snapshot's own cost).

    Only with every box changed: with a tenth changed the idle scan is most of both figures,
    and their difference is within the noise."""
    out = {}
    for motion in ("all_changed",):
        for n in ("100", "1000", "10000"):
            snap = results.get(f"replication/{motion}/encode_snapshot/{n}", {})
            idle = results.get(f"replication/idle/server_frame/{n}", {}).get("median_ns")
            if "per_item_ns" in snap and idle:
                changed = snap["median_ns"] / snap["per_item_ns"]
                out[f"{motion}/{n}"] = round((snap["median_ns"] - idle) / changed, 4)
    return out


def scale_frames(results):
    """Per scale scenario: the server's tick, the 64 clients' frames, the whole frame (their
    sum) and the server's share of it, from the medians."""
    out = {}
    for motion in SCALE_MOTIONS:
        for kind in SCALE_KINDS:
            for budget in SCALE_BUDGETS:
                for n in SCALE_BOXES:
                    key = f"{motion}/{kind}/{budget}/{n}"
                    server = results.get(f"scale/server_tick/{key}", {}).get("median_ns")
                    clients = results.get(f"scale/client_frames/{key}", {}).get("median_ns")
                    if server is None or clients is None:
                        continue
                    out[key] = {
                        "server_tick_ms": round(server / 1e6, 4),
                        "client_frames_ms": round(clients / 1e6, 4),
                        "frame_ms": round((server + clients) / 1e6, 4),
                        "server_share": round(server / (server + clients), 3),
                    }
    return out


def scale_acks(results):
    """Per box count: the server's begin_frame with 64 acks, per ack and per entry."""
    out = {}
    for n in SCALE_BOXES:
        r = results.get(f"scale/acks/server_begin_frame/{n}")
        if r:
            out[n] = {
                "begin_frame_ms": round(r["median_ns"] / 1e6, 4),
                "per_ack_us": round(r["median_ns"] / SCALE_CLIENTS / 1e3, 3),
                "per_entry_ns": r.get("per_item_ns"),
            }
    return out


def prediction_rollback(results):
    """Per rollback depth and entity count: the three client frames (steady, rollback with the
    trivial step, rollback with an empty client step) and, per re-simulated tick per entity,
    what a rollback adds to the steady frame (with the trivial step, and the runtime's passes
    alone with the empty step) and the trivial step's part (their difference)."""
    out = {}
    for depth in PREDICTION_DEPTHS:
        for n in PREDICTION_ENTITIES:
            key = f"{depth}/{n}"
            frames = [results.get(f"prediction/client_frame/{kind}/{key}", {}).get("median_ns")
                      for kind in ("steady", "rollback", "rollback_empty_step")]
            if None in frames:
                continue
            steady, rollback, empty = frames
            items = int(depth) * int(n)
            out[key] = {
                "steady_us": round(steady / 1e3, 3),
                "rollback_us": round(rollback / 1e3, 3),
                "rollback_empty_step_us": round(empty / 1e3, 3),
                "rollback_per_tick_entity_ns": round((rollback - steady) / items, 2),
                "runtime_per_tick_entity_ns": round((empty - steady) / items, 2),
                "step_per_tick_entity_ns": round((rollback - empty) / items, 2),
            }
    return out


def prediction_markdown(results):
    table = prediction_rollback(results)
    if not table:
        return []
    rows = ["| depth | entities | steady frame | rollback frame | empty-step rollback frame "
            "| rollback − steady, per tick × entity | empty-step − steady, per tick × entity "
            "| trivial step's part |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, r in table.items():
        depth, n = key.split("/")
        rows.append(f"| {depth} | {n} | {r['steady_us']:.2f} µs | {r['rollback_us']:.2f} µs "
                    f"| {r['rollback_empty_step_us']:.2f} µs "
                    f"| {r['rollback_per_tick_entity_ns']:.1f} ns "
                    f"| {r['runtime_per_tick_entity_ns']:.1f} ns "
                    f"| {r['step_per_tick_entity_ns']:.1f} ns |")
    return [""] + rows


def scale_markdown(results):
    frames, acks = scale_frames(results), scale_acks(results)
    if not frames and not acks:
        return []
    rows = ["| motion | kind | budget | boxes | server tick | 64 client frames | frame | server share "
            "| server per box × client |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, f in frames.items():
        motion, kind, budget, n = key.split("/")
        per = results[f"scale/server_tick/{key}"].get("per_item_ns")
        per = f"{per:.2f} ns" if per is not None else "–"
        budget = "none" if budget == "0" else f"{budget} B"
        motion = "all" if motion == "all" else "10 %"
        rows.append(f"| {motion} | {kind} | {budget} | {n} | {f['server_tick_ms']:.3f} ms "
                    f"| {f['client_frames_ms']:.3f} ms | {f['frame_ms']:.3f} ms "
                    f"| {100 * f['server_share']:.0f} % | {per} |")
    rows += ["", "| acks | boxes | server `begin_frame` (64 acks) | per ack | per entry acknowledged |",
             "|---|---:|---:|---:|---:|"]
    for n, a in acks.items():
        per = f"{a['per_entry_ns']:.2f} ns" if a["per_entry_ns"] is not None else "–"
        rows.append(f"| `acks/server_begin_frame` | {n} | {a['begin_frame_ms']:.3f} ms "
                    f"| {a['per_ack_us']:.1f} µs | {per} |")
    return [""] + rows


def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        rustc = subprocess.run(
            ["rustc", "--version"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        rustc = "unknown"
    return {"nproc": os.cpu_count(), "cpu": cpu, "rustc": rustc}


def markdown(results, ratio_table):
    rows = []
    if any(key.startswith("replication/") for key in results):
        rows += replication_markdown(results, ratio_table)
    if any(key.startswith(("bus/", "wire/")) for key in results):
        rows += ["", "| benchmark | median | per item | allocations |", "|---|---:|---:|---:|"]
        for key, r in results.items():
            if key.startswith(("bus/", "wire/")):
                per = f"{r['per_item_ns']:.2f} ns" if "per_item_ns" in r else "–"
                rows.append(f"| `{key}` | {r['median_ns']:.1f} ns | {per} | {r['allocs']:g} |")
    rows += scale_markdown(results)
    rows += prediction_markdown(results)
    allocating = [k for k, r in results.items()
                  if k.startswith(("scale/", "prediction/")) and r["allocs"]]
    if allocating:
        rows += ["", "Allocating scale or prediction benchmarks: " + ", ".join(f"`{k}`" for k in allocating)]
    return "\n".join(rows).strip("\n")


def replication_markdown(results, ratio_table):
    rows = ["| benchmark | boxes | all changed | 10 % changed |", "|---|---:|---:|---:|"]
    for op in OPS:
        for n in ("100", "1000", "10000"):
            cells = []
            for motion in ("all_changed", "ten_percent_changed"):
                r = results.get(f"replication/{motion}/{op}/{n}")
                cells.append(f"{r['per_item_ns']:.2f} ns" if r and "per_item_ns" in r else "–")
            rows.append(f"| `{op}` | {n} | {cells[0]} | {cells[1]} |")
    only = snapshot_only(results)
    for n in ("100", "1000", "10000"):
        cells = [only.get(f"{m}/{n}") for m in ("all_changed", "ten_percent_changed")]
        cells = [f"{c:.2f} ns" if c is not None else "–" for c in cells]
        rows.append(f"| `encode_snapshot − idle/server_frame` | {n} | {cells[0]} | {cells[1]} |")
    for n in ("100", "1000", "10000"):
        r = results.get(f"replication/idle/server_frame/{n}")
        cell = f"{r['per_item_ns']:.2f} ns" if r and "per_item_ns" in r else "–"
        rows.append(f"| `idle/server_frame` (per box) | {n} | {cell} | {cell} |")
    rows += ["", "| ratio (per frame) | boxes | all changed | 10 % changed |", "|---|---:|---:|---:|"]
    names = ["encode / bitcode_encode", "decode_apply / bitcode_decode", "capture / bitcode_encode",
             "(capture + encode) / bitcode_encode",
             "(capture + encode) / bitcode_encode of every box",
             "encode_snapshot / bitcode_encode",
             "(encode_snapshot - idle server_frame) / bitcode_encode",
             "decode_snapshot / bitcode_decode",
             "decode_snapshot_interpolated / bitcode_decode"]
    for name in names:
        for n in ("100", "1000", "10000"):
            cells = [ratio_table.get(f"{m}/{n}", {}).get(name) for m in ("all_changed", "ten_percent_changed")]
            cells = [f"{c:.2f}×" if c is not None else "–" for c in cells]
            rows.append(f"| {name} | {n} | {cells[0]} | {cells[1]} |")
    return rows


def main():
    args = sys.argv[1:]
    as_markdown = "--markdown" in args
    args = [a for a in args if a != "--markdown"]
    note = None
    if "--note" in args:
        i = args.index("--note")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        note = args[i + 1]
        del args[i : i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0], encoding="utf-8") as f:
        results = parse(f)
    if not results:
        sys.exit(f"no divan results found in {args[0]}")
    ratio_table = ratios(results)
    host = machine()
    if note:
        host["note"] = note
    if as_markdown:
        print(markdown(results, ratio_table))
        return
    print(
        json.dumps(
            {
                "command": "cargo bench -p mf-net-benches",
                "date": datetime.date.today().isoformat(),
                "machine": host,
                "notes": "Medians. per_item_ns: replication capture and idle/server_frame per "
                "box scanned; encode, decode_apply, encode_snapshot, decode_snapshot(_interpolated) "
                "per changed box; bitcode per box encoded/decoded; bus per message (round trip: "
                "per round trip); wire per value or string; scale server_tick and client_frames "
                "per box x client (64 x boxes), scale acks per entry acknowledged. allocs: median "
                "allocations per iteration (divan AllocProfiler). snapshot_only_per_changed_ns: "
                "(encode_snapshot - idle/server_frame) per changed box. scale_frames: server tick, "
                "64 client frames, their sum and the server's share per scale scenario; "
                "scale_acks: the server's begin_frame with 64 acks, per ack and per entry. prediction "
                "client frames per re-simulated tick x entity (depth x entities); "
                "prediction_rollback: per depth/entities, the steady, rollback and empty-step "
                "rollback client frames and, per re-simulated tick per entity, rollback - steady, "
                "empty-step rollback - steady (the runtime's passes) and their difference (the "
                "trivial step).",
                "present": results,
                "snapshot_only_per_changed_ns": snapshot_only(results),
                "scale_frames": scale_frames(results),
                "scale_acks": scale_acks(results),
                "prediction_rollback": prediction_rollback(results),
                "ratios_vs_bitcode": ratio_table,
                "pending": PENDING,
            },
            indent=2,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
