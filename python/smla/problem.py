"""The static description of one attention layer type (smla_problem) in Python terms."""

import dataclasses
from typing import Sequence

from . import _capi

_Q_DTYPES = {"bf16": _capi.BF16, "fp8_e4m3": _capi.FP8_E4M3}
_LAYOUTS = {
    "fp8_uniform": _capi.KV_FP8_UNIFORM,
    "fp8_packed": _capi.KV_FP8_PACKED,
    "bf16": _capi.KV_BF16,
}
# The bytes of one token in each layout, as the cache tensors hold them.
TOKEN_BYTES = {
    "fp8_uniform": _capi.UNIFORM_TOKEN_BYTES,
    "fp8_packed": _capi.PACKED_TOKEN_BYTES,
    "bf16": _capi.BF16_TOKEN_BYTES,
}


@dataclasses.dataclass(frozen=True)
class Source:
    """One index source: `width` index-table columns into a cache of `page_size` tokens a page."""

    page_size: int
    width: int


@dataclasses.dataclass(frozen=True)
class Problem:
    """One layer type of one deployment (include/smla.h, smla_problem).

    q_dtype: "bf16" or "fp8_e4m3"; kv_layout: "fp8_packed" (FlashMLA's MODEL1, 584 bytes a
    token), "fp8_uniform" (512) or "bf16" (1024). q_len: query rows per request (1, or 2..8 for
    MTP verify; rows are computed alike, each with its own lists).
    """

    num_heads: int
    sources: Sequence[Source]
    q_dtype: str = "bf16"
    kv_layout: str = "fp8_packed"
    q_len: int = 1
    has_sink: bool = True
    want_lse: bool = False

    def __post_init__(self):
        object.__setattr__(self, "sources", tuple(self.sources))
        if self.q_dtype not in _Q_DTYPES:
            raise ValueError(f"q_dtype = {self.q_dtype!r}: expected one of {sorted(_Q_DTYPES)}")
        if self.kv_layout not in _LAYOUTS:
            raise ValueError(f"kv_layout = {self.kv_layout!r}: expected one of {sorted(_LAYOUTS)}")
        if not 1 <= len(self.sources) <= _capi.MAX_SOURCES:
            raise ValueError(f"sources: {len(self.sources)} given, expected 1 or 2")

    def to_c(self):
        """The smla_problem struct (the C side validates every value)."""
        p = _capi.Problem()
        p.num_heads = self.num_heads
        p.q_dtype = _Q_DTYPES[self.q_dtype]
        p.kv_layout = _LAYOUTS[self.kv_layout]
        p.q_len = self.q_len
        p.num_sources = len(self.sources)
        for i, source in enumerate(self.sources):
            p.sources[i].kind = _capi.SOURCE_LIST
            p.sources[i].page_size = source.page_size
            p.sources[i].width = source.width
        p.has_sink = 1 if self.has_sink else 0
        p.want_lse = 1 if self.want_lse else 0
        return p

    def page_stride_bytes(self, source):
        """The smallest page stride of source `source` (smla_min_page_stride)."""
        return _capi.min_page_stride(_LAYOUTS[self.kv_layout], self.sources[source].page_size)
