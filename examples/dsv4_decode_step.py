"""A DeepSeek-V4-Pro decode step at tensor-parallel degree 8 (16 heads a rank) over all 61
attention layers (30 CSA, 31 HCA at 128K context) through smla.SparseAttention, captured in one
CUDA graph and replayed; prints µs per step. Random caches and index lists: the attention's work,
not a model's output.

  python3 examples/dsv4_decode_step.py [--batch 64] [--replays 50]
(with the smla package importable and libsmla.so findable: SMLA_LIBRARY, or an install)
"""

import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import smla  # noqa: E402

HEADS = 16
WINDOW = (256, 128)  # page size, width
CSA = (64, 1024)
HCA = (2, 1024)  # 128K context: 1024 entries of ratio 128


def packed_pool(pages, page_size, device):
    """A packed (MODEL1) pool of small random values: e4m3 bytes below 1, scale bytes near 2^0,
    bf16 rope below 1."""
    stride = smla.Problem(HEADS, [smla.Source(page_size, 1)]).page_stride_bytes(0)
    pool = torch.randint(0, 0x38, (pages, stride), dtype=torch.uint8, device=device)
    pool |= torch.randint(0, 2, (pages, stride), dtype=torch.uint8, device=device) << 7
    pool[:, page_size * 576:page_size * 584] = 126
    return pool


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--replays", type=int, default=50)
    o = parser.parse_args()
    device = torch.device("cuda")
    rows = o.batch
    csa_layer = smla.SparseAttention(HEADS, [WINDOW, CSA], max_rows=rows)
    hca_layer = smla.SparseAttention(HEADS, [WINDOW, HCA], max_rows=rows)
    window_pool = packed_pool(256, WINDOW[0], device)
    csa_pool = packed_pool(4096, CSA[0], device)
    hca_pool = packed_pool(65536, HCA[0], device)
    window_idx = torch.randint(0, 256 * WINDOW[0], (rows, WINDOW[1]), dtype=torch.int32,
                               device=device)
    csa_idx = torch.randint(0, 4096 * CSA[0], (rows, CSA[1]), dtype=torch.int32, device=device)
    hca_idx = torch.randint(0, 65536 * HCA[0], (rows, HCA[1]), dtype=torch.int32, device=device)
    layers = [("csa", csa_layer, csa_pool, csa_idx)] * 30 + [("hca", hca_layer, hca_pool,
                                                               hca_idx)] * 31
    qs = [(torch.randn(rows, HEADS, 512, device=device) * 0.5).to(torch.bfloat16)
          for _ in layers]
    sinks = [torch.randn(HEADS, device=device) for _ in layers]
    outs = [torch.empty(rows, HEADS, 512, dtype=torch.bfloat16, device=device) for _ in layers]

    def step():
        for (kind, layer, pool, idx), q, sink, out in zip(layers, qs, sinks, outs):
            layer(q, [window_pool, pool], [window_idx, idx], sink=sink,
                  softmax_scale=1 / math.sqrt(512), out=out)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for _ in range(3):
        graph.replay()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(o.replays):
        graph.replay()
    stop.record()
    torch.cuda.synchronize()
    us = start.elapsed_time(stop) * 1e3 / o.replays
    bad = sum(int(~torch.isfinite(out.float()).all()) for out in outs)
    print(f"DSv4-Pro TP8 decode step, {rows} requests, 61 layers (30 CSA, 31 HCA) in one graph: "
          f"{us:.1f} us a step ({us / 61:.2f} us a layer); layers with non-finite output: {bad}")
    # Host cost of one eager layer call (Python and the C call), GPU work not counted.
    import time
    q, sink, out = qs[0], sinks[0], outs[0]
    times = []
    for _ in range(10000):
        t = time.perf_counter()
        csa_layer(q, [window_pool, csa_pool], [window_idx, csa_idx], sink=sink, out=out)
        times.append(time.perf_counter() - t)
        if len(times) % 256 == 0:
            torch.cuda.synchronize()
    times.sort()
    print(f"eager layer call, host side: median {times[len(times) // 2] * 1e6:.1f} us")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
