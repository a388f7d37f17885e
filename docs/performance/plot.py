#!/usr/bin/env python3
"""Draws docs/performance.png from `smla bench --json` results and FlashMLA's figures.

Inputs, in the directory of this script unless --dir says otherwise:
- every `*.bench.json`: the output of `smla bench --json`, one file per GPU and mode, named
  `<gpu>-<mode>.bench.json` with mode `default` or `batch-variant` (for example
  `h100-default.bench.json`, `h100-batch-variant.bench.json`). A file holds one JSON array of
  rows, or several arrays (or objects) one after the other, as appending the output of one
  `smla bench --json` run per problem gives: `smla bench ARGS --json >> FILE`. Objects without
  `median_us` (the `--overheads` lines, errors) are skipped.
- `flashmla.json`: FlashMLA's microseconds per call on an H200 and an H100.

For each problem (heads and entries per row; packed FP8 cache, bf16 q, q_len 1) the upper panel
plots µs against rows (log x) for smla in the default mode, smla in batch-variant mode and
FlashMLA as served (sglang pads a rank to 64 heads: below 64 heads FlashMLA's 64-head time), one
line style per GPU. The lower panel plots the fraction of the bare gather: the time a bare gather
of the call's entries (576 data bytes each) takes at the rate measured over 1 GB pools by
gpu/probes/gather_ceiling.cu (4 threads a row, as the kernels gather), over the call's time.
That is a throughput, meaningful from about 128 rows. smla bench's own `gather_fraction` is of
the H200's small-pool ceiling (4.47 TB/s), whatever the GPU, and is not used.

Usage: plot.py [--dir DIR] [--flashmla FILE] [--out FILE]
"""

import argparse
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.ticker  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DATA_BYTES = 576  # a packed token's data; its 8 scale bytes sit in another sector
# The bare gather measured by gpu/probes/gather_ceiling.cu: the 294,912 random 576-byte rows of
# one 16-head, 256-row call (128 + 1024 entries) over 1 GB pools, 4 threads a row, in µs
# (docs/PERFORMANCE.md, "How it is measured"): 3.64 TB/s on the H200, 2.58 on the H100. A GPU
# not listed gets no lower-panel lines.
BARE_GATHER_RATE = {gpu: 294912 * DATA_BYTES / (us * 1e-6)
                    for gpu, us in {"H200": 46.61, "H100": 65.76}.items()}

# The problems drawn, in order: heads, (window width, compressed width), page sizes. A panel
# with no smla rows is left out.
PANELS = [
    {"title": "16 heads, 128 + 1024 (Pro TP8, CSA)", "heads": 16, "widths": (128, 1024),
     "pages": (256, 64)},
    {"title": "8 heads, 128 + 512 (Flash TP8, CSA)", "heads": 8, "widths": (128, 512),
     "pages": (256, 64)},
    {"title": "32 heads, 128 + 1024 (Pro TP4, CSA)", "heads": 32, "widths": (128, 1024),
     "pages": (256, 64)},
    {"title": "64 heads, 128 + 512 (Flash TP1, CSA)", "heads": 64, "widths": (128, 512),
     "pages": (256, 64)},
    {"title": "128 heads, 128 + 1024 (Pro TP1, CSA)", "heads": 128, "widths": (128, 1024),
     "pages": (256, 64)},
    {"title": "16 heads, 128 + 8192 (Pro TP8, HCA 1M)", "heads": 16, "widths": (128, 8192),
     "pages": (256, 2)},
]

MODES = ("default", "batch-variant")
MODE_COLOR = {"default": "tab:blue", "batch-variant": "tab:orange", "FlashMLA": "tab:gray"}
GPU_STYLE = {"H200": ("-", "o"), "H100": ("--", "s")}
OTHER_STYLE = (":", "^")

# `smla bench`'s problem text (deployments/deployment.cpp, problem_text):
# "h16 packed q=bf16 p256w128+p64w1024 qlen1 sink".
PROBLEM_RE = re.compile(r"^h(\d+) (\w+) q=(\w+) (\S+) qlen(\d+)")
SOURCE_RE = re.compile(r"p(\d+)w(\d+)")


def read_json_values(path):
    """Every JSON value in a file: one array, or several values one after another."""
    with open(path, encoding="utf-8") as file:
        text = file.read()
    decoder = json.JSONDecoder()
    values, i = [], 0
    while True:
        starts = [j for j in (text.find("[", i), text.find("{", i)) if j >= 0]
        if not starts:
            return values
        i = min(starts)
        try:
            value, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1  # not JSON here (a heading line, say): look further on
            continue
        values.append(value)


def bench_rows(values):
    for value in values:
        for row in value if isinstance(value, list) else [value]:
            if isinstance(row, dict) and "median_us" in row and "problem" in row:
                yield row


def gpu_of(device, path):
    """H200, H100 (the keys of BARE_GATHER_RATE) or another short name: from the row's device
    ("NVIDIA H100 80GB HBM3"), else the file's name ("h100-default.bench.json")."""
    for name in (device or "", os.path.basename(path)):
        match = re.search(r"\b([A-Z]{1,2}\d{2,4}[A-Z]?)\b", name.upper())
        if match:
            return match.group(1)
    if device:
        return device.replace("NVIDIA ", "")
    return os.path.basename(path).split("-")[0] or "GPU"


def mode_of(path, rows):
    name = os.path.basename(path).lower()
    if "batch-variant" in name:
        return "batch-variant"
    if "default" in name or "invariant" in name:
        return "default"
    if "variant" in name:
        return "batch-variant"
    # No mode in the name: the batch-variant fast path names itself in the rows.
    if any(str(r.get("mode", "")).endswith("fast") for r in rows):
        return "batch-variant"
    return "default"


def parse_problem(text):
    match = PROBLEM_RE.match(text)
    if not match:
        return None
    sources = [(int(p), int(w)) for p, w in SOURCE_RE.findall(match.group(4))]
    return {"heads": int(match.group(1)), "layout": match.group(2), "q": match.group(3),
            "pages": tuple(p for p, _ in sources), "widths": tuple(w for _, w in sources),
            "q_len": int(match.group(5))}


def load_bench(directory):
    """{(gpu, mode, heads, widths, pages): {rows: [µs, ...]}} and what was read."""
    series, read = {}, []
    paths = sorted(glob.glob(os.path.join(directory, "*.bench.json")))
    for path in paths:
        try:
            rows = list(bench_rows(read_json_values(path)))
        except OSError as error:
            print(f"skipped {path}: {error}", file=sys.stderr)
            continue
        mode = mode_of(path, rows)
        used = 0
        gpus = set()
        for row in rows:
            problem = parse_problem(str(row["problem"]))
            if (problem is None or problem["layout"] != "packed" or problem["q"] != "bf16"
                    or problem["q_len"] != 1):
                continue
            gpu = gpu_of(row.get("device"), path)
            gpus.add(gpu)
            key = (gpu, mode, problem["heads"], problem["widths"], problem["pages"])
            series.setdefault(key, {}).setdefault(int(row["rows"]), []).append(
                float(row["median_us"]))
            used += 1
        read.append((path, mode, sorted(gpus), used, len(rows)))
    return series, read


def load_flashmla(path):
    """{(gpu, heads, widths, pages): {rows: µs}}."""
    if not os.path.exists(path):
        print(f"no FlashMLA figures: {path} is missing", file=sys.stderr)
        return {}
    out = {}
    with open(path, encoding="utf-8") as file:
        measurements = json.load(file)["measurements"]
    for m in measurements:
        pages = (256, m["compressed_page_size"])  # the window in pages of 256
        key = (m["gpu"], m["heads"], (m["window"], m["compressed"]), pages)
        out[key] = dict(zip(m["rows"], m["us"]))
    return out


def served_heads(heads):
    return 64 if heads <= 64 else 128


def bare_gather_us(gpu, rows, widths):
    rate = BARE_GATHER_RATE.get(gpu)
    if rate is None:
        return None
    return rows * sum(widths) * DATA_BYTES / rate * 1e6


def draw_line(axes, x, y, gpu, color, label):
    style, marker = GPU_STYLE.get(gpu, OTHER_STYLE)
    axes.plot(x, y, linestyle=style, marker=marker, color=color, markersize=4, label=label)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", default=here, help="where the *.bench.json files are")
    parser.add_argument("--flashmla", default=os.path.join(here, "flashmla.json"))
    parser.add_argument("--out", default=os.path.join(os.path.dirname(here), "performance.png"))
    args = parser.parse_args()

    series, read = load_bench(args.dir)
    for path, mode, gpus, used, total in read:
        print(f"read {path}: {mode} mode, {', '.join(gpus) or 'no GPU named'}, "
              f"{used} of {total} rows drawn")
    if not series:
        print(f"no smla rows to draw: no *.bench.json in {args.dir} holds packed, bf16-q, "
              "q_len-1 rows", file=sys.stderr)
        return 1
    flashmla = load_flashmla(args.flashmla)
    if flashmla:
        print(f"read {args.flashmla}")

    gpus = sorted({key[0] for key in series})
    panels = [p for p in PANELS
              if any(k[2] == p["heads"] and k[3] == p["widths"] and k[4] == p["pages"]
                     for k in series)]
    if not panels:
        print("no smla rows match a problem of the plot (PANELS in plot.py)", file=sys.stderr)
        return 1
    missing_rate = [g for g in gpus if g not in BARE_GATHER_RATE]
    if missing_rate:
        print(f"no bare-gather rate for {', '.join(missing_rate)}: no fraction drawn for it",
              file=sys.stderr)

    figure, axes = plt.subplots(2, len(panels), figsize=(4.2 * len(panels), 7.2), squeeze=False,
                                sharex="col", gridspec_kw={"height_ratios": [3, 2]})
    for column, panel in enumerate(panels):
        upper, lower = axes[0][column], axes[1][column]
        widths, pages = panel["widths"], panel["pages"]
        top = 1.05
        for gpu in gpus:
            if not any((gpu, mode, panel["heads"], widths, pages) in series for mode in MODES):
                continue  # FlashMLA only beside smla rows of the same GPU
            for mode in MODES:
                points = series.get((gpu, mode, panel["heads"], widths, pages))
                if not points:
                    continue
                x = np.array(sorted(points))
                y = np.array([float(np.median(points[r])) for r in x])
                draw_line(upper, x, y, gpu, MODE_COLOR[mode], f"smla {mode}, {gpu}")
                bare = [bare_gather_us(gpu, r, widths) for r in x]
                if bare[0] is not None:
                    fraction = np.array(bare) / y
                    top = max(top, 1.05 * float(fraction.max()))
                    draw_line(lower, x, fraction, gpu, MODE_COLOR[mode], f"smla {mode}, {gpu}")
            fm = flashmla.get((gpu, served_heads(panel["heads"]), widths, pages))
            if fm:
                x = np.array(sorted(fm))
                y = np.array([fm[r] for r in x])
                label = f"FlashMLA as served ({served_heads(panel['heads'])} heads), {gpu}"
                draw_line(upper, x, y, gpu, MODE_COLOR["FlashMLA"], label)
                bare = [bare_gather_us(gpu, r, widths) for r in x]
                if bare[0] is not None:
                    draw_line(lower, x, np.array(bare) / y, gpu, MODE_COLOR["FlashMLA"], label)
        upper.set_title(panel["title"], fontsize=10)
        upper.set_xscale("log", base=2)
        upper.set_yscale("log")
        upper.grid(True, which="both", alpha=0.3)
        lower.set_xscale("log", base=2)
        lower.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        lower.set_ylim(0, top)
        lower.grid(True, alpha=0.3)
        lower.set_xlabel("rows per call")
        if column == 0:
            upper.set_ylabel("µs per call")
            lower.set_ylabel("fraction of the bare gather")
        upper.legend(fontsize=7)
    sources = ", ".join(os.path.basename(path) for path, *_ in read)
    figure.suptitle(f"smla decode against FlashMLA as served ({sources})", fontsize=11)
    figure.tight_layout()
    figure.savefig(args.out, dpi=130)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
