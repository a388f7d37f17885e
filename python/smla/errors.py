"""C statuses as exceptions: every failing call raises the subclass of its status, carrying the
status and smla_last_error()'s message. Arguments the Python side refuses before any C call
raise ValueError (InvalidArgumentError is one too, for callers that catch ValueError)."""

from . import _capi


class Error(Exception):
    """A failing smla call: `status` is the smla_status code, `message` smla_last_error()."""

    status = None

    def __init__(self, status, message, what=""):
        self.status = status
        self.message = message
        prefix = f"{what}: " if what else ""
        super().__init__(f"{prefix}{message} ({_status_name(status)})")


class InvalidArgumentError(Error, ValueError):
    pass


class UnsupportedError(Error):
    pass


class NoDeviceError(Error):
    pass


class CudaError(Error):
    pass


class CompileError(Error):
    pass


class CacheError(Error):
    pass


class WorkspaceError(Error):
    pass


class NotReadyError(Error):
    """A kernel is missing and compiling now is forbidden (SMLA_JIT=0, or a CUDA graph is being
    captured): prepare the problem before capturing, or prewarm with `smla cache build`."""


class InternalError(Error):
    pass


_BY_STATUS = {
    _capi.ERR_INVALID_ARGUMENT: InvalidArgumentError,
    _capi.ERR_UNSUPPORTED: UnsupportedError,
    _capi.ERR_NO_DEVICE: NoDeviceError,
    _capi.ERR_CUDA: CudaError,
    _capi.ERR_COMPILE: CompileError,
    _capi.ERR_CACHE: CacheError,
    _capi.ERR_WORKSPACE: WorkspaceError,
    _capi.ERR_NOT_READY: NotReadyError,
    _capi.ERR_INTERNAL: InternalError,
}


def _status_name(status):
    name = _capi.lib().smla_status_string(status)
    return name.decode() if name else f"status {status}"


def check(status, what=""):
    """Raises the Error of a failed C call (`status` its return value); returns None on SMLA_OK."""
    if status == _capi.OK:
        return
    message = (_capi.lib().smla_last_error() or b"").decode(errors="replace")
    raise _BY_STATUS.get(status, Error)(status, message, what)
