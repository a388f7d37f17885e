"""FlashMLA's sparse-attention calls for DeepSeek-V4 (the "MODEL1" cache of 584 bytes a token),
for any head count 1..128: swap `import flash_mla` for `import smla.flash_mla as flash_mla`.

Where smla differs from FlashMLA's contract:
- heads: any count from 1 to 128 (FlashMLA takes 64 or 128 only), so a tensor-parallel rank
  passes its own heads instead of padding to 64;
- indices: every index outside the cache is skipped and never read (FlashMLA skips -1 only);
- topk_length / extra_topk_length ([b]) apply to the s_q rows of their batch entry, as in
  FlashMLA; smla's own API takes a length per row;
- the dense path (indices=None) and fp8 q are not provided: a call without indices is refused;
- the scheduler metadata is accepted and left alone: smla plans its own launches (a plan fixed
  per problem, so a captured graph replays with any index contents);
- flash_mla_sparse_fwd runs the decode kernels over a bf16 cache; its max_logits are not
  computed (NaN).
lse is as FlashMLA returns it: natural log, without the sink, +inf for a query without a valid
entry.
"""

import dataclasses
import math
import threading
from typing import Optional, Tuple

import torch

from . import _capi
from .layer import SparseAttention
from .problem import Source

_layers = {}
_layers_lock = threading.Lock()
# Rows a new problem is prepared for; more rows prepare again, with twice as many.
_MIN_PREPARED_ROWS = 256


@dataclasses.dataclass
class FlashMLASchedMeta:
    """FlashMLA's scheduler object, kept for signature compatibility; smla does not read it."""

    have_initialized: bool = False
    config: object = None
    tile_scheduler_metadata: Optional[torch.Tensor] = None
    num_splits: Optional[torch.Tensor] = None


def get_mla_metadata(*args, **kwargs) -> Tuple[FlashMLASchedMeta, None]:
    """As FlashMLA's: a fresh scheduler object and None; the arguments are not used."""
    return FlashMLASchedMeta(), None


def _layer(device, num_heads, sources, kv_layout, has_sink, rows):
    """The prepared layer of this problem, made (or made again for more rows) on first use."""
    key = (device, num_heads, tuple(sources), kv_layout, has_sink)
    with _layers_lock:
        layer = _layers.get(key)
        if layer is None or layer.max_rows < rows:
            max_rows = max(_MIN_PREPARED_ROWS, 1 << max(0, rows - 1).bit_length())
            if layer is not None:
                max_rows = max(max_rows, 2 * layer.max_rows)
            layer = SparseAttention(num_heads, sources, kv_layout=kv_layout, has_sink=has_sink,
                                    want_lse=True, max_rows=max_rows, device=device)
            _layers[key] = layer
        return layer


def _packed_source(name, cache, indices, lengths, b, s_q):
    """(Source, cache pages, indices [rows, topk], lengths [rows] or None) of one FlashMLA source:
    cache [pages, page_size, 1, 584], indices [b, s_q, topk], lengths [b]."""
    if cache.dim() != 4 or cache.size(2) != 1 or cache.size(3) != _capi.PACKED_TOKEN_BYTES:
        raise ValueError(f"{name}.shape = {list(cache.shape)}: expected [pages, page_size, 1, "
                         f"{_capi.PACKED_TOKEN_BYTES}]")
    if cache.stride(1) * cache.element_size() != _capi.PACKED_TOKEN_BYTES:
        raise ValueError(f"{name}.stride(1) = {cache.stride(1)}: tokens of a page are "
                         f"{_capi.PACKED_TOKEN_BYTES} bytes apart in the MODEL1 layout")
    index_name = "indices" if name == "k_cache" else "extra_indices_in_kvcache"
    if indices is None or indices.dim() != 3 or indices.size(0) != b or indices.size(1) != s_q:
        shape = None if indices is None else list(indices.shape)
        raise ValueError(f"{index_name}.shape = {shape}: expected [{b}, {s_q}, topk]")
    # A page's bytes: its data rows and scale rows, without the view's 584-byte last dim.
    page_bytes = -(-cache.size(1) * _capi.PACKED_TOKEN_BYTES // _capi.PACKED_DATA_BYTES) * \
        _capi.PACKED_DATA_BYTES
    pages = torch.as_strided(cache, (cache.size(0), page_bytes), (cache.stride(0), 1))
    topk = indices.size(2)
    flat = indices.reshape(b * s_q, topk)
    per_row = None
    if lengths is not None:
        if lengths.dim() != 1 or lengths.size(0) != b:
            raise ValueError(f"{name} lengths shape {list(lengths.shape)}: expected [{b}]")
        per_row = lengths.to(torch.int32).repeat_interleave(s_q) if s_q > 1 else \
            lengths.to(torch.int32).contiguous()
    return Source(cache.size(1), topk), pages, flat, per_row


def _as_bytes(cache):
    return cache if cache.dtype == torch.uint8 else cache.view(torch.uint8)


@torch.library.custom_op("smla::flash_mla_decode", mutates_args=())
def _decode(q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
            topk_length: Optional[torch.Tensor], attn_sink: Optional[torch.Tensor],
            extra_k_cache: Optional[torch.Tensor], extra_indices: Optional[torch.Tensor],
            extra_topk_length: Optional[torch.Tensor],
            softmax_scale: float) -> Tuple[torch.Tensor, torch.Tensor]:
    b, s_q, h, _ = q.shape
    rows = b * s_q
    caches, flat, lengths, sources = [], [], [], []
    for name, cache, idx, n in (("k_cache", k_cache, indices, topk_length),
                                ("extra_k_cache", extra_k_cache, extra_indices,
                                 extra_topk_length)):
        if cache is None:
            continue
        source, pages, f, per_row = _packed_source(name, _as_bytes(cache), idx, n, b, s_q)
        sources.append(source)
        caches.append(pages)
        flat.append(f)
        lengths.append(per_row)
    layer = _layer(q.device, h, sources, "fp8_packed", attn_sink is not None, rows)
    out = torch.empty(b, s_q, h, _capi.HEAD_DIM, dtype=torch.bfloat16, device=q.device)
    lse = torch.empty(b, s_q, h, dtype=torch.float32, device=q.device)
    layer(q.reshape(rows, h, _capi.HEAD_DIM), caches, flat, lengths=lengths, sink=attn_sink,
          softmax_scale=softmax_scale, out=out.view(rows, h, _capi.HEAD_DIM),
          lse=lse.view(rows, h))
    return out, lse


@_decode.register_fake
def _(q, k_cache, indices, topk_length, attn_sink, extra_k_cache, extra_indices,
      extra_topk_length, softmax_scale):
    b, s_q, h, d = q.shape
    return q.new_empty((b, s_q, h, d), dtype=torch.bfloat16), \
        q.new_empty((b, s_q, h), dtype=torch.float32)


def flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v,
                           tile_scheduler_metadata, num_splits=None, softmax_scale=None,
                           causal=False, is_fp8_kvcache=True, indices=None, attn_sink=None,
                           extra_k_cache=None, extra_indices_in_kvcache=None, topk_length=None,
                           extra_topk_length=None):
    """FlashMLA's sparse decode: q [b, s_q, h, 512] bf16, k_cache [pages, page_size, 1, 584]
    (uint8, int8 or float8 view of the MODEL1 pool), indices [b, s_q, topk] int32 physical token
    slots, optional attn_sink [h] float32, optional second source (extra_k_cache with its
    indices), optional per-batch valid lengths. Returns (out [b, s_q, h, 512] bf16,
    lse [b, h, s_q] float32). block_table and cache_seqlens are not used (as in FlashMLA's
    sparse path)."""
    if indices is None:
        raise ValueError("indices = None: smla provides FlashMLA's sparse path only")
    if causal:
        raise ValueError("causal = True: the sparse path takes no causal mask")
    if not is_fp8_kvcache:
        raise ValueError("is_fp8_kvcache = False: the sparse path reads the fp8 MODEL1 cache")
    if head_dim_v != _capi.HEAD_DIM:
        raise ValueError(f"head_dim_v = {head_dim_v}: expected {_capi.HEAD_DIM}")
    if q.dim() != 4 or q.size(3) != _capi.HEAD_DIM:
        raise ValueError(f"q.shape = {list(q.shape)}: expected [b, s_q, h, {_capi.HEAD_DIM}]")
    if (extra_k_cache is None) != (extra_indices_in_kvcache is None):
        raise ValueError("extra_k_cache and extra_indices_in_kvcache come together")
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.size(3))
    out, lse = torch.ops.smla.flash_mla_decode(q, k_cache, indices, topk_length, attn_sink,
                                               extra_k_cache, extra_indices_in_kvcache,
                                               extra_topk_length, scale)
    return out, lse.transpose(1, 2)


@torch.library.custom_op("smla::flash_mla_sparse_fwd", mutates_args=())
def _sparse_fwd(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float,
                attn_sink: Optional[torch.Tensor],
                topk_length: Optional[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
    s_q, h, _ = q.shape
    topk = indices.size(2)
    # One token a page: the page stride is kv's row stride.
    pages = torch.as_strided(kv.view(torch.uint8), (kv.size(0), _capi.BF16_TOKEN_BYTES),
                             (kv.stride(0) * 2, 1))
    layer = _layer(q.device, h, [Source(1, topk)], "bf16", attn_sink is not None, s_q)
    out = torch.empty(s_q, h, _capi.HEAD_DIM, dtype=torch.bfloat16, device=q.device)
    lse = torch.empty(s_q, h, dtype=torch.float32, device=q.device)
    n = None if topk_length is None else topk_length.to(torch.int32).contiguous()
    layer(q, [pages], [indices.reshape(s_q, topk)], lengths=[n], sink=attn_sink,
          softmax_scale=sm_scale, out=out, lse=lse)
    return out, lse


@_sparse_fwd.register_fake
def _(q, kv, indices, sm_scale, attn_sink, topk_length):
    s_q, h, d = q.shape
    return q.new_empty((s_q, h, d), dtype=torch.bfloat16), \
        q.new_empty((s_q, h), dtype=torch.float32)


def flash_mla_sparse_fwd(q, kv, indices, sm_scale, d_v=512, attn_sink=None, topk_length=None):
    """FlashMLA's sparse prefill: q [s_q, h, 512] bf16 over kv [s_kv, 1, 512] bf16 through
    indices [s_q, 1, topk] int32 (optional topk_length [s_q], attn_sink [h]). Returns
    (out [s_q, h, 512] bf16, max_logits [s_q, h] float32, NaN: not computed, lse [s_q, h]
    float32)."""
    if d_v != _capi.HEAD_DIM:
        raise ValueError(f"d_v = {d_v}: expected {_capi.HEAD_DIM}")
    if q.dim() != 3 or q.size(2) != _capi.HEAD_DIM:
        raise ValueError(f"q.shape = {list(q.shape)}: expected [s_q, h, {_capi.HEAD_DIM}]")
    if kv.dim() != 3 or kv.size(1) != 1 or kv.size(2) != _capi.HEAD_DIM or \
            kv.dtype != torch.bfloat16:
        raise ValueError(f"kv: {list(kv.shape)} {kv.dtype}: expected [s_kv, 1, 512] bfloat16")
    s_q, h, _ = q.shape
    if indices.dim() != 3 or indices.size(0) != s_q or indices.size(1) != 1:
        raise ValueError(f"indices.shape = {list(indices.shape)}: expected [{s_q}, 1, topk]")
    out, lse = torch.ops.smla.flash_mla_sparse_fwd(q, kv, indices, float(sm_scale), attn_sink,
                                                   topk_length)
    max_logits = torch.full((s_q, h), float("nan"), dtype=torch.float32, device=q.device)
    return out, max_logits, lse
