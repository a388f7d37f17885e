"""The package without a GPU: the version, contexts, prepare and cache_build compiling into a
cache file, and C statuses as exceptions carrying the status and smla_last_error()."""

import sqlite3

import pytest

import smla
import smla._capi as capi

CSA = smla.Problem(num_heads=16, sources=[smla.Source(256, 128), smla.Source(64, 512)])


def test_version_is_the_librarys():
    assert smla.version() == "0.5.0"


def test_prepare_compiles_into_the_cache(tmp_path):
    path = tmp_path / "kernels.sqlite"
    with smla.Context(cache_path=str(path), arch="sm_90a") as context:
        workspace = context.prepare(CSA, 256)
        assert workspace > 0  # the split calls' partials
        assert context.prepare(CSA, 1) <= workspace
    keys = [row[0] for row in sqlite3.connect(path).execute("SELECT key_text FROM kernels")]
    assert any(k.startswith("family=decode;arch=sm_90a;heads=16;") for k in keys)
    assert any(k.startswith("family=combine;arch=sm_90a;heads=16;") for k in keys)


def test_cache_build_prepares_both_modes(tmp_path):
    path = tmp_path / "kernels.sqlite"
    sizes = smla.cache_build([CSA], arch="sm_120a", cache_path=str(path), max_rows=64)
    assert set(sizes) == {"batch_invariant", "batch_variant"}
    keys = {row[0] for row in sqlite3.connect(path).execute("SELECT key_text FROM kernels")}
    assert all(";arch=sm_120a;" in k for k in keys)
    # Batch-variant mode adds its few-row split (one-tile segments) to the default's kernels.
    assert any("seg1.mb" in k for k in keys)
    assert len(keys) > 4


def test_bad_values_raise_the_status_of_the_c_call():
    with smla.Context(cache_path="", arch="sm_90a") as context:
        bad = smla.Problem(num_heads=0, sources=[smla.Source(256, 128)])
        with pytest.raises(smla.InvalidArgumentError) as raised:
            context.prepare(bad, 16)
        assert raised.value.status == capi.ERR_INVALID_ARGUMENT
        assert "problem.num_heads = 0" in raised.value.message
        assert isinstance(raised.value, ValueError)
        wide = smla.Problem(num_heads=16, sources=[smla.Source(256, 70000)])
        with pytest.raises(smla.InvalidArgumentError, match=r"sources\[0\]\.width = 70000"):
            context.prepare(wide, 16)


def test_options_the_c_side_refuses():
    with pytest.raises(smla.InvalidArgumentError, match="options.arch"):
        smla.Context(cache_path="", arch="sm_80")
    with pytest.raises(ValueError, match="log_level"):
        smla.Context(log_level="loud")


def test_no_device_and_no_arch():
    with smla.Context(cache_path="") as context:
        with pytest.raises(smla.NoDeviceError):
            context.prepare(CSA, 16)


def test_a_jit_forbidden_context_is_not_ready_for_an_unbuilt_kernel(tmp_path):
    with smla.Context(cache_path=str(tmp_path / "empty.sqlite"), arch="sm_90a",
                      jit=False) as context:
        with pytest.raises(smla.NotReadyError) as raised:
            context.prepare(CSA, 16)
        assert "not in the cache" in str(raised.value)
        assert "smla cache build --deployment" in str(raised.value)


def test_problem_checks_its_names():
    with pytest.raises(ValueError, match="kv_layout"):
        smla.Problem(num_heads=8, sources=[smla.Source(64, 64)], kv_layout="fp4")
    with pytest.raises(ValueError, match="sources"):
        smla.Problem(num_heads=8, sources=[])
    assert CSA.page_stride_bytes(0) == 149760  # 256 tokens: ceil(256 * 584 / 576) * 576


def test_closed_context():
    context = smla.Context(cache_path="", arch="sm_90a")
    context.close()
    context.close()
    with pytest.raises(ValueError, match="closed"):
        context.prepare(CSA, 16)
