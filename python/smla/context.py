"""A context (smla_context): one device or none, one kernel cache, the prepared problems."""

import ctypes
import threading

from . import _capi
from .errors import check
from .problem import Problem

_LOG_LEVELS = {"error": _capi.LOG_ERROR, "warn": _capi.LOG_WARN, "info": _capi.LOG_INFO,
               "debug": _capi.LOG_DEBUG}


class Context:
    """smla_context_create with these options; the operator's SMLA_* environment overrides them
    (include/smla.h). Works without a GPU: such a context validates, and compiles for `arch`.

    cache_path: None for the default file, "" for memory only. arch: "sm_90a", "sm_100a",
    "sm_103a", "sm_120a" or "sm_121a", to compile for without a device (ignored with one).
    """

    def __init__(self, device=0, cache_path=None, system_cache_path=None, jit=True,
                 log_level="warn", arch=None, batch_variant=False):
        if log_level not in _LOG_LEVELS:
            raise ValueError(f"log_level = {log_level!r}: expected one of {sorted(_LOG_LEVELS)}")
        lib = _capi.lib()
        options = _capi.Options()
        lib.smla_options_init(ctypes.byref(options))
        options.device = device
        # Kept alive as long as the context: the C side reads the strings during create only,
        # but holding them costs nothing.
        self._strings = [s.encode() if s is not None else None
                         for s in (cache_path, system_cache_path, arch)]
        options.cache_path, options.system_cache_path, options.arch = self._strings
        options.jit = _capi.JIT_ALLOW if jit else _capi.JIT_FORBID
        options.log_level = _LOG_LEVELS[log_level]
        options.batch_variant = 1 if batch_variant else 0
        handle = ctypes.c_void_p()
        check(lib.smla_context_create(ctypes.byref(options), ctypes.byref(handle)),
              "smla_context_create")
        self._handle = handle
        self._lock = threading.Lock()  # close() against calls of other threads

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("the context is closed")
        return self._handle

    def prepare(self, problem: Problem, max_rows: int) -> int:
        """Makes every kernel of the problem ready for up to max_rows rows (compiling or loading
        from the cache); returns the workspace bytes each call needs."""
        workspace = ctypes.c_size_t()
        check(_capi.lib().smla_prepare(self.handle, ctypes.byref(problem.to_c()), max_rows,
                                       ctypes.byref(workspace)), "smla_prepare")
        return workspace.value

    def decode(self, problem_c, args_c, workspace_ptr, workspace_bytes, stream_ptr):
        """smla_decode on C structs and raw pointers (the layer object builds them)."""
        check(_capi.lib().smla_decode(self.handle, ctypes.byref(problem_c), ctypes.byref(args_c),
                                      None, workspace_ptr, workspace_bytes, stream_ptr),
              "smla_decode")

    def close(self):
        with self._lock:
            if self._handle is not None:
                _capi.lib().smla_context_destroy(self._handle)
                self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass


def cache_build(problems, arch, cache_path=None, max_rows=1024):
    """Compiles every kernel the problems can run, in both batch modes, for `arch` into the cache
    (`cache_path`: None for the default file), without a GPU; what `smla cache build` does for a
    deployment. Returns the workspace bytes each problem needs for max_rows rows, per mode."""
    sizes = []
    for batch_variant in (False, True):
        with Context(cache_path=cache_path, arch=arch, batch_variant=batch_variant,
                     log_level="error") as context:
            sizes.append([context.prepare(p, max_rows) for p in problems])
    return {"batch_invariant": sizes[0], "batch_variant": sizes[1]}


def version():
    """The library's version ("0.5.0")."""
    return _capi.lib().smla_version().decode()
