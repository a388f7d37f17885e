"""The layer call as a torch custom op (torch.ops.smla.sparse_attention), with a fake
implementation, so that torch.compile traces a module using it without a graph break.

A layer is registered once (register_layer) and named in the op by its index: the op's schema
holds only tensors and scalars.
"""

from typing import List, Optional, Tuple

import torch

from . import _capi

_layers = []


def register_layer(layer):
    """The index `layer` is called by in the op."""
    _layers.append(layer)
    return len(_layers) - 1


@torch.library.custom_op("smla::sparse_attention", mutates_args=())
def sparse_attention(q: torch.Tensor, caches: List[torch.Tensor], indices: List[torch.Tensor],
                     lengths: List[Optional[torch.Tensor]], sink: Optional[torch.Tensor],
                     layer: int, softmax_scale: float, q_scale: float,
                     kv_scale: float) -> Tuple[torch.Tensor, torch.Tensor]:
    """(out, lse) of the registered layer `layer`; lse is empty when it was made without."""
    l = _layers[layer]
    result = l(q, caches, indices, lengths=lengths, sink=sink, softmax_scale=softmax_scale,
               q_scale=q_scale, kv_scale=kv_scale)
    if l.problem.want_lse:
        return result
    return result, q.new_empty((0,), dtype=torch.float32)


@sparse_attention.register_fake
def _(q, caches, indices, lengths, sink, layer, softmax_scale, q_scale, kv_scale):
    p = _layers[layer].problem
    out = q.new_empty((q.size(0), p.num_heads, _capi.HEAD_DIM), dtype=torch.bfloat16)
    lse_shape = (q.size(0), p.num_heads) if p.want_lse else (0,)
    return out, q.new_empty(lse_shape, dtype=torch.float32)
