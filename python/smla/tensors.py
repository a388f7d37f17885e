"""torch tensors as C arguments: every check a call's tensors must pass, each failure a
ValueError naming the argument, before any C call. Only the layer object and the
FlashMLA-compatible calls use this, and they import torch."""

import torch

ALIGNMENT = 16  # bytes: the kernels' 16-byte loads and stores

DTYPES = {
    "bf16": torch.bfloat16,
    "fp8_e4m3": torch.float8_e4m3fn,
}


def check_device(name, tensor, device):
    if not isinstance(tensor, torch.Tensor):
        raise ValueError(f"{name}: expected a torch.Tensor, got {type(tensor).__name__}")
    if tensor.device != device:
        raise ValueError(f"{name} is on {tensor.device}: expected {device}")


def check_dtype(name, tensor, *dtypes):
    if tensor.dtype not in dtypes:
        expected = " or ".join(str(d).replace("torch.", "") for d in dtypes)
        raise ValueError(f"{name}.dtype = {str(tensor.dtype).replace('torch.', '')}: "
                         f"expected {expected}")


def check_shape(name, tensor, shape):
    """`shape`: sizes, None where any size goes."""
    if tensor.dim() != len(shape) or any(
            want is not None and got != want for got, want in zip(tensor.shape, shape)):
        want = ", ".join("*" if s is None else str(s) for s in shape)
        raise ValueError(f"{name}.shape = {list(tensor.shape)}: expected [{want}]")


def check_last_dim_contiguous(name, tensor):
    if tensor.dim() > 0 and tensor.size(-1) > 1 and tensor.stride(-1) != 1:
        raise ValueError(f"{name}.stride(-1) = {tensor.stride(-1)}: the last dim must be "
                         "contiguous")


def check_contiguous(name, tensor):
    if not tensor.is_contiguous():
        raise ValueError(f"{name} must be contiguous (strides {list(tensor.stride())})")


def check_aligned(name, tensor):
    if tensor.data_ptr() % ALIGNMENT != 0:
        raise ValueError(f"{name}.data_ptr() = {tensor.data_ptr():#x}: must be {ALIGNMENT}-byte "
                         "aligned")


def cache_pages(name, tensor, min_stride):
    """(base pointer, page stride in bytes, pages) of a paged cache: a tensor whose first dim is
    the page and whose other dims are one page's bytes (uint8, int8 or float8 views, any shape
    FlashMLA's [pages, page_size, 1, bytes] included)."""
    check_dtype(name, tensor, torch.uint8, torch.int8, torch.float8_e4m3fn)
    if tensor.dim() < 2:
        raise ValueError(f"{name}.shape = {list(tensor.shape)}: expected [pages, ...page bytes]")
    page_bytes = tensor[0].numel() * tensor.element_size() if tensor.size(0) > 0 else 0
    if tensor.size(0) > 0 and not tensor[0].is_contiguous():
        raise ValueError(f"{name}: a page's bytes must be contiguous")
    stride = tensor.stride(0) * tensor.element_size()
    if tensor.size(0) > 0 and page_bytes < min_stride:
        raise ValueError(f"{name}: a page holds {page_bytes} bytes, the layout needs {min_stride}")
    if stride % ALIGNMENT != 0:
        raise ValueError(f"{name}.stride(0) = {tensor.stride(0)}: a page stride of {stride} bytes "
                         f"is not a multiple of {ALIGNMENT}")
    check_aligned(name, tensor)
    return tensor.data_ptr(), stride, tensor.size(0)
