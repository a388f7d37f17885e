"""smla.SparseAttention: one attention layer type, prepared once, called every step."""

import math
import threading

import torch

from . import _capi, tensors
from .context import Context
from .errors import NotReadyError
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
    call never compiles or allocates in smla and can be captured in a CUDA graph.
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
        p = self.problem
        d = self.device
        tensors.check_device("q", q, d)
        tensors.check_dtype("q", q, tensors.DTYPES[p.q_dtype])
        tensors.check_shape("q", q, (None, p.num_heads, _capi.HEAD_DIM))
        tensors.check_last_dim_contiguous("q", q)
        tensors.check_aligned("q", q)
        rows = q.size(0)
        if len(caches) != len(p.sources) or len(indices) != len(p.sources):
            raise ValueError(f"caches and indices: one per source ({len(p.sources)}), got "
                             f"{len(caches)} and {len(indices)}")
        lengths = list(lengths) if lengths is not None else [None] * len(p.sources)
        if len(lengths) != len(p.sources):
            raise ValueError(f"lengths: one per source ({len(p.sources)}) or None")
        args = _capi.Args()
        args.num_rows = rows
        args.q = q.data_ptr()
        args.q_row_stride = q.stride(0)
        args.q_head_stride = q.stride(1)
        args.q_scale = q_scale
        args.kv_scale = kv_scale
        for s, source in enumerate(p.sources):
            base, stride, pages = tensors.cache_pages(f"caches[{s}]", caches[s],
                                                      p.page_stride_bytes(s))
            tensors.check_device(f"caches[{s}]", caches[s], d)
            idx = indices[s]
            tensors.check_device(f"indices[{s}]", idx, d)
            tensors.check_dtype(f"indices[{s}]", idx, torch.int32)
            tensors.check_shape(f"indices[{s}]", idx, (rows, None))
            tensors.check_last_dim_contiguous(f"indices[{s}]", idx)
            if idx.size(1) < source.width:
                raise ValueError(f"indices[{s}].shape[1] = {idx.size(1)}: the source's width is "
                                 f"{source.width}")
            a = args.sources[s]
            a.cache, a.page_stride_bytes, a.num_pages = base, stride, pages
            a.indices = idx.data_ptr()
            a.index_row_stride = idx.stride(0) if rows > 1 else source.width
            if lengths[s] is not None:
                n = lengths[s]
                tensors.check_device(f"lengths[{s}]", n, d)
                tensors.check_dtype(f"lengths[{s}]", n, torch.int32)
                tensors.check_shape(f"lengths[{s}]", n, (rows,))
                tensors.check_contiguous(f"lengths[{s}]", n)
                a.lengths = n.data_ptr()
        if p.has_sink:
            if sink is None:
                raise ValueError("sink: required, the layer has an attention sink")
            tensors.check_device("sink", sink, d)
            tensors.check_dtype("sink", sink, torch.float32)
            tensors.check_shape("sink", sink, (p.num_heads,))
            tensors.check_contiguous("sink", sink)
            args.sink = sink.data_ptr()
        elif sink is not None:
            raise ValueError("sink: given, but the layer has no attention sink")
        args.softmax_scale = 1.0 / math.sqrt(_capi.HEAD_DIM) if softmax_scale is None \
            else softmax_scale
        if out is None:
            out = torch.empty(rows, p.num_heads, _capi.HEAD_DIM, dtype=torch.bfloat16, device=d)
        tensors.check_device("out", out, d)
        tensors.check_dtype("out", out, torch.bfloat16)
        tensors.check_shape("out", out, (rows, p.num_heads, _capi.HEAD_DIM))
        tensors.check_last_dim_contiguous("out", out)
        tensors.check_aligned("out", out)
        args.out = out.data_ptr()
        args.out_row_stride = out.stride(0)
        args.out_head_stride = out.stride(1)
        if p.want_lse:
            if lse is None:
                lse = torch.empty(rows, p.num_heads, dtype=torch.float32, device=d)
            tensors.check_device("lse", lse, d)
            tensors.check_dtype("lse", lse, torch.float32)
            tensors.check_shape("lse", lse, (rows, p.num_heads))
            tensors.check_contiguous("lse", lse)
            args.lse = lse.data_ptr()
        elif lse is not None:
            raise ValueError("lse: given, but the layer was made with want_lse=False")
        stream = torch.cuda.current_stream(d).cuda_stream
        try:
            self.context.decode(self._problem_c, args, self.workspace.data_ptr(),
                                self.workspace_bytes, stream)
        except NotReadyError as error:
            raise NotReadyError(error.status, error.message + " (make the layer, which prepares "
                                "its kernels, before capturing; or prewarm with `smla cache "
                                "build`)") from None
        return (out, lse) if p.want_lse else out
