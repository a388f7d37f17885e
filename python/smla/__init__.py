"""smla: JIT-compiled DeepSeek-V4 sparse attention, from Python.

The C library (libsmla.so) is found through SMLA_LIBRARY, a copy bundled into this package, the
install prefix of the `smla` command on PATH, or the dynamic loader. Nothing here needs torch
except the layer object and the FlashMLA-compatible calls, which import it when used.
"""

from .context import Context, cache_build, version
from .errors import (CacheError, CompileError, CudaError, Error, InternalError,
                     InvalidArgumentError, NoDeviceError, NotReadyError, UnsupportedError,
                     WorkspaceError)
from .problem import Problem, Source

__all__ = [
    "CacheError", "CompileError", "Context", "CudaError", "Error", "InternalError",
    "InvalidArgumentError", "NoDeviceError", "NotReadyError", "Problem", "SparseAttention",
    "Source", "UnsupportedError", "WorkspaceError", "cache_build", "version",
]


def __getattr__(name):
    # The torch-facing parts load torch only when asked for.
    if name == "SparseAttention":
        from .layer import SparseAttention
        return SparseAttention
    if name == "flash_mla":
        from . import flash_mla
        return flash_mla
    raise AttributeError(f"module 'smla' has no attribute {name!r}")
