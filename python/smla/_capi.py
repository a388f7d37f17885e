"""The C API of include/smla.h through ctypes: the library, the structs, the functions.

Nothing here imports torch. Struct layouts are checked against the header by a test (a C program
prints every sizeof and offsetof; tests/python/test_struct_layout.py compares).
"""

import ctypes
import os
import pathlib
import shutil

MAX_SOURCES = 2
HEAD_DIM = 512
MAX_HEADS = 128
MAX_WIDTH = 65536
MAX_Q_LEN = 8

# smla_status
OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_UNSUPPORTED = 2
ERR_NO_DEVICE = 3
ERR_CUDA = 4
ERR_COMPILE = 5
ERR_CACHE = 6
ERR_WORKSPACE = 7
ERR_NOT_READY = 8
ERR_INTERNAL = 9

# smla_dtype, smla_kv_layout, smla_source_kind, smla_jit_policy, smla_log_level
BF16, FP8_E4M3 = 0, 1
KV_FP8_UNIFORM, KV_FP8_PACKED, KV_BF16 = 0, 1, 2
SOURCE_LIST, SOURCE_WINDOW, SOURCE_PREFIX = 0, 1, 2
JIT_ALLOW, JIT_FORBID = 0, 1
LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3

UNIFORM_TOKEN_BYTES = 512
PACKED_TOKEN_BYTES = 584
PACKED_DATA_BYTES = 576
BF16_TOKEN_BYTES = 1024

# The soname this package speaks to: 0.x releases may change the ABI between minor versions.
SONAME = "libsmla.so.0.5"


class Options(ctypes.Structure):
    _fields_ = [
        ("device", ctypes.c_int),
        ("cache_path", ctypes.c_char_p),
        ("system_cache_path", ctypes.c_char_p),
        ("jit", ctypes.c_int),
        ("log_level", ctypes.c_int),
        ("arch", ctypes.c_char_p),
        ("batch_variant", ctypes.c_int),
    ]


class SourceDesc(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("page_size", ctypes.c_int),
        ("width", ctypes.c_int),
        ("ratio", ctypes.c_int),
    ]


class Problem(ctypes.Structure):
    _fields_ = [
        ("num_heads", ctypes.c_int),
        ("q_dtype", ctypes.c_int),
        ("kv_layout", ctypes.c_int),
        ("q_len", ctypes.c_int),
        ("num_sources", ctypes.c_int),
        ("sources", SourceDesc * MAX_SOURCES),
        ("has_sink", ctypes.c_int),
        ("want_lse", ctypes.c_int),
    ]


class SourceArgs(ctypes.Structure):
    _fields_ = [
        ("cache", ctypes.c_void_p),
        ("page_stride_bytes", ctypes.c_int64),
        ("num_pages", ctypes.c_int64),
        ("indices", ctypes.c_void_p),
        ("index_row_stride", ctypes.c_int64),
        ("lengths", ctypes.c_void_p),
    ]


class Args(ctypes.Structure):
    _fields_ = [
        ("num_rows", ctypes.c_int),
        ("q", ctypes.c_void_p),
        ("q_row_stride", ctypes.c_int64),
        ("q_head_stride", ctypes.c_int64),
        ("q_scale", ctypes.c_float),
        ("sources", SourceArgs * MAX_SOURCES),
        ("kv_scale", ctypes.c_float),
        ("sink", ctypes.c_void_p),
        ("softmax_scale", ctypes.c_float),
        ("out", ctypes.c_void_p),
        ("out_row_stride", ctypes.c_int64),
        ("out_head_stride", ctypes.c_int64),
        ("lse", ctypes.c_void_p),
    ]


class Varlen(ctypes.Structure):
    _fields_ = [
        ("num_requests", ctypes.c_int),
        ("cu_seqlens_q", ctypes.c_void_p),
        ("kv_lens", ctypes.c_void_p),
        ("device_cu_seqlens_q", ctypes.c_void_p),
        ("device_kv_lens", ctypes.c_void_p),
    ]


STRUCTS = {
    "smla_options": Options,
    "smla_source_desc": SourceDesc,
    "smla_problem": Problem,
    "smla_source_args": SourceArgs,
    "smla_args": Args,
    "smla_varlen": Varlen,
}


def min_page_stride(layout, page_size):
    """smla_min_page_stride of the header (an inline function, so not in the library)."""
    if layout == KV_FP8_UNIFORM:
        return page_size * UNIFORM_TOKEN_BYTES
    if layout == KV_FP8_PACKED:
        return -(-page_size * PACKED_TOKEN_BYTES // PACKED_DATA_BYTES) * PACKED_DATA_BYTES
    if layout == KV_BF16:
        return page_size * BF16_TOKEN_BYTES
    raise ValueError(f"kv_layout = {layout}: not a layout")


def _candidates():
    """Where libsmla.so may be, in the order tried (the first that loads wins)."""
    explicit = os.environ.get("SMLA_LIBRARY")
    if explicit:
        return [explicit]  # named: only this one, so a wrong path fails instead of falling back
    here = pathlib.Path(__file__).resolve().parent
    found = [here / "lib" / SONAME]  # a copy bundled into the package
    cli = shutil.which("smla")  # an install prefix: PREFIX/bin/smla beside PREFIX/lib*/libsmla
    if cli:
        prefix = pathlib.Path(cli).resolve().parent.parent
        found += sorted(prefix.glob("lib*/" + SONAME)) + sorted(prefix.glob("lib*/*/" + SONAME))
    found.append(SONAME)  # the dynamic loader's own search (ldconfig, LD_LIBRARY_PATH)
    return [str(p) for p in found]


_lib = None


def lib():
    """The loaded library, loading it on first use; OSError naming every place tried."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for candidate in _candidates():
        if os.sep in candidate and not os.path.exists(candidate):
            errors.append(f"{candidate}: no such file")
            continue
        try:
            loaded = ctypes.CDLL(candidate)
        except OSError as error:
            errors.append(str(error))
            continue
        _declare(loaded)
        _lib = loaded
        return _lib
    raise OSError(
        "libsmla could not be loaded; set SMLA_LIBRARY to its path. Tried:\n  " + "\n  ".join(errors)
    )


def _declare(l):
    status = ctypes.c_int
    l.smla_options_init.argtypes = [ctypes.POINTER(Options)]
    l.smla_options_init.restype = None
    l.smla_context_create.argtypes = [ctypes.POINTER(Options), ctypes.POINTER(ctypes.c_void_p)]
    l.smla_context_create.restype = status
    l.smla_context_destroy.argtypes = [ctypes.c_void_p]
    l.smla_context_destroy.restype = status
    l.smla_prepare.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(Problem),
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_size_t),
    ]
    l.smla_prepare.restype = status
    l.smla_decode.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(Problem),
        ctypes.POINTER(Args),
        ctypes.POINTER(Varlen),
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_void_p,
    ]
    l.smla_decode.restype = status
    l.smla_prefill.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(Problem),
        ctypes.POINTER(Args),
        ctypes.POINTER(Varlen),
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_void_p,
    ]
    l.smla_prefill.restype = status
    l.smla_version.argtypes = []
    l.smla_version.restype = ctypes.c_char_p
    l.smla_status_string.argtypes = [ctypes.c_int]
    l.smla_status_string.restype = ctypes.c_char_p
    l.smla_last_error.argtypes = []
    l.smla_last_error.restype = ctypes.c_char_p
