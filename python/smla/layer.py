"""smla.SparseAttention: one attention layer type, prepared once, called every step."""

import ctypes
import math
import threading

import torch

from . import _capi, tensors
from .context import Context
from .errors import NotReadyError, check
from .problem import Problem, Source

_contexts = {}
_contexts_lock = threading.Lock()


def shared_context(device, batch_variant):
    """One context per (device, mode) in the process, made on first use (the operator's SMLA_*
    switches apply)."""
    key = (device.index, bool(batch_variant))
    with _contexts_lock:
        if key not in _contexts:
            _contexts[key] = Context(device=device.index, batch_variant=batch_variant)
        return _contexts[key]


class SparseAttention:
    """A DeepSeek-V4 attention layer type on one GPU: `num_heads` query heads of 512 dims over
    one or two index sources (the window, then CSA's top-k or HCA's entries), each a paged cache
    read through a per-row index table.

    The constructor prepares the problem for up to `max_rows` rows (compiling or loading the
    kernels from the cache) and allocates the workspace once through torch's allocator, so a
    call never compiles or allocates in smla and can be captured in a CUDA graph. A layer keeps
    its C arguments between calls: call one layer object from one thread at a time (layers of
    one problem on several threads share their context, which is safe).
    """

    def __init__(self, num_heads, sources, *, kv_layout="fp8_packed", q_dtype="bf16", q_len=1,
                 has_sink=True, want_lse=False, max_rows=1024, device=None, batch_variant=False,
                 context=None):
        self.device = torch.device("cuda", torch.cuda.current_device()) if device is None \
            else torch.device(device)
        if self.device.type != "cuda":
            raise ValueError(f"device = {self.device}: expected a CUDA device")
        if self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        sources = [s if isinstance(s, Source) else Source(*s) for s in sources]
        self.problem = Problem(num_heads=num_heads, sources=sources, q_dtype=q_dtype,
                               kv_layout=kv_layout, q_len=q_len, has_sink=has_sink,
                               want_lse=want_lse)
        self._problem_c = self.problem.to_c()
        self.max_rows = max_rows
        self.context = context or shared_context(self.device, batch_variant)
        with torch.cuda.device(self.device):
            self.workspace_bytes = self.context.prepare(self.problem, max_rows)
            # At least one byte, so that the pointer is a real one.
            self.workspace = torch.empty(max(self.workspace_bytes, 1), dtype=torch.uint8,
                                         device=self.device)
        self._op_index = None
        # The C arguments, kept between calls: each call rewrites what it passes, and caches and
        # the sink are checked again only when another tensor comes (or its storage moved).
        self._q_dtype = tensors.DTYPES[q_dtype]
        self._args = _capi.Args()
        self._args_ref = ctypes.byref(self._args)
        self._problem_ref = ctypes.byref(self._problem_c)
        self._decode = _capi.lib().smla_decode
        self._workspace_ptr = self.workspace.data_ptr()
        self._default_scale = 1.0 / math.sqrt(_capi.HEAD_DIM)
        self._no_lengths = [None] * len(sources)
        self._cache_seen = [None] * len(sources)
        self._cache_ptr = [None] * len(sources)
        self._sink_seen = object()  # no call yet

    def op(self, q, caches, indices, lengths=None, sink=None, softmax_scale=None, q_scale=1.0,
           kv_scale=1.0):
        """The call as torch.ops.smla.sparse_attention (for torch.compile): (out, lse), lse
        empty without want_lse."""
        from . import ops
        if self._op_index is None:
            self._op_index = ops.register_layer(self)
        scale = 1.0 / math.sqrt(_capi.HEAD_DIM) if softmax_scale is None else softmax_scale
        lengths = list(lengths) if lengths is not None else [None] * len(self.problem.sources)
        return torch.ops.smla.sparse_attention(q, list(caches), list(indices), lengths, sink,
                                               self._op_index, scale, q_scale, kv_scale)

    def __call__(self, q, caches, indices, lengths=None, sink=None, softmax_scale=None,
                 q_scale=1.0, kv_scale=1.0, out=None, lse=None):
        """Attention of `q` [rows, heads, 512] over the entries `indices[s]` [rows, >= width]
        (int32 physical token indices, -1 or any other out-of-range value skipped) of
        `caches[s]` (a tensor whose dim 0 is the page), with optional per-row valid lengths
        `lengths[s]` [rows]. Returns out [rows, heads, 512] bf16, or (out, lse) with want_lse
        (lse [rows, heads] fp32, natural log, without the sink). softmax_scale: 1/sqrt(512) by
        default."""
        # NOTE: each argument is first checked by one cheap expression; only a tensor that fails
        # it goes through the checks that name what is wrong (a call costs the host a few
        # microseconds, not tens).
        p = self.problem
        d = self.device
        n_sources = len(p.sources)
        if not (type(q) is torch.Tensor and q.device == d and q.dtype is self._q_dtype and
                q.dim() == 3 and q.shape[1] == p.num_heads and q.shape[2] == _capi.HEAD_DIM and
                q.stride(2) == 1 and q.data_ptr() % tensors.ALIGNMENT == 0):
            self._refuse_q(q)
        rows = q.shape[0]
        if len(caches) != n_sources or len(indices) != n_sources:
            raise ValueError(f"caches and indices: one per source ({n_sources}), got "
                             f"{len(caches)} and {len(indices)}")
        if lengths is None:
            lengths = self._no_lengths
        elif len(lengths) != n_sources:
            raise ValueError(f"lengths: one per source ({n_sources}) or None")
        args = self._args
        args.num_rows = rows
        args.q = q.data_ptr()
        args.q_row_stride = q.stride(0)
        args.q_head_stride = q.stride(1)
        args.q_scale = q_scale
        args.kv_scale = kv_scale
        for s in range(n_sources):
            cache = caches[s]
            if cache is not self._cache_seen[s] or cache.data_ptr() != self._cache_ptr[s] or \
                    cache.shape[0] != args.sources[s].num_pages:
                self._take_cache(s, cache)
            idx = indices[s]
            if not (type(idx) is torch.Tensor and idx.device == d and idx.dtype is torch.int32
                    and idx.dim() == 2 and idx.shape[0] == rows and
                    idx.shape[1] >= p.sources[s].width and
                    (idx.shape[1] == 1 or idx.stride(1) == 1)):
                self._refuse_indices(s, idx, rows)
            a = args.sources[s]
            a.indices = idx.data_ptr()
            a.index_row_stride = idx.stride(0) if rows > 1 else p.sources[s].width
            n = lengths[s]
            if n is None:
                a.lengths = None
            else:
                if not (type(n) is torch.Tensor and n.device == d and n.dtype is torch.int32 and
                        n.dim() == 1 and n.shape[0] == rows and (rows == 1 or n.stride(0) == 1)):
                    self._refuse_lengths(s, n, rows)
                a.lengths = n.data_ptr()
        if sink is not self._sink_seen:
            self._take_sink(sink)
        args.softmax_scale = self._default_scale if softmax_scale is None else softmax_scale
        if out is None:
            out = torch.empty(rows, p.num_heads, _capi.HEAD_DIM, dtype=torch.bfloat16, device=d)
        elif not (type(out) is torch.Tensor and out.device == d and out.dtype is torch.bfloat16
                  and out.dim() == 3 and out.shape[0] == rows and out.shape[1] == p.num_heads and
                  out.shape[2] == _capi.HEAD_DIM and out.stride(2) == 1 and
                  out.data_ptr() % tensors.ALIGNMENT == 0):
            self._refuse_out(out, rows)
        args.out = out.data_ptr()
        args.out_row_stride = out.stride(0)
        args.out_head_stride = out.stride(1)
        if p.want_lse:
            if lse is None:
                lse = torch.empty(rows, p.num_heads, dtype=torch.float32, device=d)
            elif not (type(lse) is torch.Tensor and lse.device == d and
                      lse.dtype is torch.float32 and lse.dim() == 2 and lse.shape[0] == rows and
                      lse.shape[1] == p.num_heads and lse.is_contiguous()):
                self._refuse_lse(lse, rows)
            args.lse = lse.data_ptr()
        elif lse is not None:
            raise ValueError("lse: given, but the layer was made with want_lse=False")
        status = self._decode(self.context.handle, self._problem_ref, self._args_ref, None,
                              self._workspace_ptr, self.workspace_bytes,
                              _current_stream(d.index))
        if status != _capi.OK:
            try:
                check(status, "smla_decode")
            except NotReadyError as error:
                raise NotReadyError(error.status, error.message + " (make the layer, which "
                                    "prepares its kernels, before capturing; or prewarm with "
                                    "`smla cache build`)") from None
        return (out, lse) if p.want_lse else out

    # ---- the checks that name what is wrong, and the arguments kept between calls -------------

    def _refuse_q(self, q):
        p = self.problem
        tensors.check_device("q", q, self.device)
        tensors.check_dtype("q", q, self._q_dtype)
        tensors.check_shape("q", q, (None, p.num_heads, _capi.HEAD_DIM))
        tensors.check_last_dim_contiguous("q", q)
        tensors.check_aligned("q", q)

    def _refuse_indices(self, s, idx, rows):
        name = f"indices[{s}]"
        tensors.check_device(name, idx, self.device)
        tensors.check_dtype(name, idx, torch.int32)
        tensors.check_shape(name, idx, (rows, None))
        tensors.check_last_dim_contiguous(name, idx)
        raise ValueError(f"{name}.shape[1] = {idx.shape[1]}: the source's width is "
                         f"{self.problem.sources[s].width}")

    def _refuse_lengths(self, s, n, rows):
        name = f"lengths[{s}]"
        tensors.check_device(name, n, self.device)
        tensors.check_dtype(name, n, torch.int32)
        tensors.check_shape(name, n, (rows,))
        tensors.check_contiguous(name, n)

    def _refuse_out(self, out, rows):
        tensors.check_device("out", out, self.device)
        tensors.check_dtype("out", out, torch.bfloat16)
        tensors.check_shape("out", out, (rows, self.problem.num_heads, _capi.HEAD_DIM))
        tensors.check_last_dim_contiguous("out", out)
        tensors.check_aligned("out", out)

    def _refuse_lse(self, lse, rows):
        tensors.check_device("lse", lse, self.device)
        tensors.check_dtype("lse", lse, torch.float32)
        tensors.check_shape("lse", lse, (rows, self.problem.num_heads))
        tensors.check_contiguous("lse", lse)

    def _take_cache(self, s, cache):
        """Checks a cache not seen in the last call and keeps its pages in the C arguments."""
        name = f"caches[{s}]"
        tensors.check_device(name, cache, self.device)
        base, stride, pages = tensors.cache_pages(name, cache, self.problem.page_stride_bytes(s))
        a = self._args.sources[s]
        a.cache, a.page_stride_bytes, a.num_pages = base, stride, pages
        self._cache_seen[s] = cache
        self._cache_ptr[s] = base

    def _take_sink(self, sink):
        p = self.problem
        if p.has_sink:
            if sink is None:
                raise ValueError("sink: required, the layer has an attention sink")
            tensors.check_device("sink", sink, self.device)
            tensors.check_dtype("sink", sink, torch.float32)
            tensors.check_shape("sink", sink, (p.num_heads,))
            tensors.check_contiguous("sink", sink)
            self._args.sink = sink.data_ptr()
        elif sink is not None:
            raise ValueError("sink: given, but the layer has no attention sink")
        self._sink_seen = sink


def _raw_stream_function():
    """torch's current CUDA stream as a raw pointer, by the cheapest call this torch has."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


_current_stream = _raw_stream_function()
