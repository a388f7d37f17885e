"""Random paged KV caches in smla's byte layouts, built with torch on the GPU, with the values
they hold dequantized (docs/semantics.md), for the GPU tests of the Python package."""

import torch

PACKED_DATA = 576  # bytes of a packed token's data: 448 e4m3 nope + 64 bf16 rope


def packed_page_stride(page_size):
    return -(-page_size * 584 // PACKED_DATA) * PACKED_DATA


def packed_cache(pages, page_size, generator, device):
    """(cache [pages, stride] uint8, values [pages * page_size, 512] float64): the MODEL1 layout,
    per token 448 e4m3 values with a ue8m0 scale per 64 dims, then 64 bf16 rope values; the
    token's 8 scale bytes (7 used) after the page's data."""
    tokens = pages * page_size
    nope = (torch.randn(tokens, 448, generator=generator, device=device) * 0.6).to(
        torch.float8_e4m3fn)
    scales = torch.randint(124, 130, (tokens, 7), generator=generator, device=device,
                           dtype=torch.int32)
    rope = (torch.randn(tokens, 64, generator=generator, device=device) * 0.3).to(torch.bfloat16)
    stride = packed_page_stride(page_size)
    cache = torch.zeros(pages, stride, dtype=torch.uint8, device=device)
    data = torch.cat([nope.view(torch.uint8), rope.view(torch.uint8)], dim=1)
    cache[:, :page_size * PACKED_DATA] = data.view(pages, page_size * PACKED_DATA)
    scale_bytes = torch.zeros(tokens, 8, dtype=torch.uint8, device=device)
    scale_bytes[:, :7] = scales.to(torch.uint8)
    cache[:, page_size * PACKED_DATA:page_size * 584] = scale_bytes.view(pages, page_size * 8)
    factor = torch.exp2(scales.to(torch.float64) - 127).repeat_interleave(64, dim=1)
    values = torch.cat([nope.to(torch.float64) * factor, rope.to(torch.float64)], dim=1)
    return cache, values


def uniform_cache(pages, page_size, generator, device):
    """(cache [pages, page_size * 512] uint8, values): 512 e4m3 values a token, kv_scale 1."""
    tokens = pages * page_size
    codes = (torch.randn(tokens, 512, generator=generator, device=device) * 0.6).to(
        torch.float8_e4m3fn)
    return codes.view(torch.uint8).view(pages, page_size * 512).clone(), codes.to(torch.float64)


def random_indices(rows, width, tokens, generator, device, invalid=0.1):
    """int32 [rows, width] token indices in [0, tokens), a share of them replaced by -1 or by
    an index past the cache (both skipped)."""
    idx = torch.randint(0, tokens, (rows, width), generator=generator, device=device,
                        dtype=torch.int32)
    bad = torch.rand(rows, width, generator=generator, device=device) < invalid
    past = torch.rand(rows, width, generator=generator, device=device) < 0.5
    idx[bad & past] = tokens + 7
    idx[bad & ~past] = -1
    return idx


def reference(q, sources, sink, softmax_scale, q_scale=1.0):
    """out [rows, heads, 512] float64 and lse [rows, heads] (natural log, no sink; +inf for a
    row without a valid entry) of docs/semantics.md. `sources`: (values [tokens, 512],
    indices [rows, width], lengths [rows] or None) per source."""
    rows, heads, _ = q.shape
    qf = q.to(torch.float64) * q_scale
    out = torch.zeros(rows, heads, 512, dtype=torch.float64, device=q.device)
    lse = torch.full((rows, heads), float("inf"), dtype=torch.float64, device=q.device)
    for r in range(rows):
        keys = []
        for values, indices, lengths in sources:
            n = indices.size(1) if lengths is None else max(0, min(int(lengths[r]), indices.size(1)))
            idx = indices[r, :n].to(torch.int64)
            idx = idx[(idx >= 0) & (idx < values.size(0))]
            keys.append(values[idx])
        k = torch.cat(keys)
        if k.size(0) == 0:
            continue
        s = (qf[r] @ k.T) * softmax_scale  # [heads, entries]
        m = s.max(dim=1, keepdim=True).values
        e = torch.exp(s - m)
        total = e.sum(dim=1)
        lse[r] = torch.log(total) + m[:, 0]
        denominator = total
        if sink is not None:
            denominator = total + torch.exp(sink.to(torch.float64) - m[:, 0])
        out[r] = (e @ k) / denominator[:, None]
    return out, lse


def rel_l2(got, want):
    return (torch.linalg.vector_norm(got.to(torch.float64) - want) /
            torch.linalg.vector_norm(want)).item()
