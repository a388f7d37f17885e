"""The ctypes structs of smla._capi lay out exactly as the C compiler lays out include/smla.h's
(offset and size of every field, size of every struct), and the constants agree."""

import ctypes
import os
import subprocess

import smla._capi as capi


def c_layout():
    program = os.environ["SMLA_STRUCT_LAYOUT"]
    lines = subprocess.run([program], check=True, capture_output=True, text=True).stdout.split("\n")
    return [line.split() for line in lines if line]


def test_every_field_and_size():
    checked = 0
    for words in c_layout():
        if words[0] == "enum":
            continue
        name, field, rest = words[0], words[1], [int(w) for w in words[2:]]
        struct = capi.STRUCTS[name]
        if field == "-":
            assert ctypes.sizeof(struct) == rest[0], name
        else:
            offset, size = rest
            assert getattr(struct, field).offset == offset, f"{name}.{field}"
            assert getattr(struct, field).size == size, f"{name}.{field}"
        checked += 1
    assert checked == 49
    # Every ctypes field is one the C side has.
    fields = {(w[0], w[1]) for w in c_layout() if w[0] != "enum"}
    for name, struct in capi.STRUCTS.items():
        for field, _ in struct._fields_:
            assert (name, field) in fields, f"{name}.{field} is not in smla.h"


def test_constants():
    values = {w[1]: int(w[2]) for w in c_layout() if w[0] == "enum"}
    assert values["SMLA_ERR_INTERNAL"] == capi.ERR_INTERNAL
    assert values["SMLA_ERR_NOT_READY"] == capi.ERR_NOT_READY
    assert values["SMLA_KV_BF16"] == capi.KV_BF16
    assert values["SMLA_FP8_E4M3"] == capi.FP8_E4M3
    assert values["SMLA_LOG_DEBUG"] == capi.LOG_DEBUG
    assert values["SMLA_MAX_SOURCES"] == capi.MAX_SOURCES
    assert values["SMLA_PACKED_TOKEN_BYTES"] == capi.PACKED_TOKEN_BYTES
    assert values["min_page_stride_packed_64"] == capi.min_page_stride(capi.KV_FP8_PACKED, 64)
