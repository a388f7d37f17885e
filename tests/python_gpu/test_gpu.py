"""The Python package on a GPU (torch there): the layer object and the FlashMLA-compatible calls
against a float64 torch reference of docs/semantics.md on random data, CUDA-graph capture and
replay with the index contents changed between replays, torch.compile(fullgraph=True) of a small
module, and the arguments refused before any C call. unittest, so that it needs no pytest:
  SMLA_LIBRARY=carry/libsmla.so python3 -m unittest discover -s tests/python_gpu -v
"""

import math
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(__file__))

import smla  # noqa: E402
import smla.flash_mla as flash_mla  # noqa: E402
from kv_caches import (packed_cache, random_indices, reference, rel_l2,  # noqa: E402
                       uniform_cache)

SCALE = 1.0 / math.sqrt(512)
HAVE_GPU = torch.cuda.is_available()


def make_case(heads, rows, layout, pages=(4, 64), page_sizes=(256, 64), widths=(128, 512),
              seed=0, lse=True):
    """A two-source problem's layer inputs and the reference's sources."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    build = packed_cache if layout == "fp8_packed" else uniform_cache
    caches, sources, indices, lengths = [], [], [], []
    for s in range(2):
        cache, values = build(pages[s], page_sizes[s], g, "cuda")
        idx = random_indices(rows, widths[s], pages[s] * page_sizes[s], g, "cuda")
        n = torch.randint(0, widths[s] + 1, (rows,), generator=g, device="cuda", dtype=torch.int32)
        n[0] = widths[s]  # one full row
        if rows > 2:
            n[1] = 0  # and one empty list
        caches.append(cache)
        indices.append(idx)
        lengths.append(n)
        sources.append((values, idx, n))
    q = (torch.randn(rows, heads, 512, generator=g, device="cuda") * 0.5).to(torch.bfloat16)
    sink = torch.randn(heads, generator=g, device="cuda", dtype=torch.float32)
    return dict(q=q, caches=caches, indices=indices, lengths=lengths, sink=sink,
                sources=sources)


@unittest.skipUnless(HAVE_GPU, "no GPU")
class LayerAgainstTheReference(unittest.TestCase):
    def check(self, heads, layout, rows):
        case = make_case(heads, rows, layout, seed=heads * 7 + rows)
        layer = smla.SparseAttention(heads, [(256, 128), (64, 512)], kv_layout=layout,
                                     want_lse=True, max_rows=rows)
        out, lse = layer(case["q"], case["caches"], case["indices"], lengths=case["lengths"],
                         sink=case["sink"], softmax_scale=SCALE)
        torch.cuda.synchronize()
        want_out, want_lse = reference(case["q"], case["sources"], case["sink"], SCALE)
        self.assertLess(rel_l2(out, want_out), 1e-2, f"{heads} heads {layout}")
        finite = torch.isfinite(want_lse)
        self.assertTrue(torch.equal(torch.isinf(lse.double()), ~finite))
        self.assertLess((lse.double()[finite] - want_lse[finite]).abs().max().item(), 2e-3)
        self.assertFalse(torch.isnan(out).any().item())

    def test_heads_and_layouts(self):
        for heads in (8, 16, 64, 128):
            for layout in ("fp8_packed", "fp8_uniform"):
                with self.subTest(heads=heads, layout=layout):
                    self.check(heads, layout, rows=37)

    def test_without_lse_returns_out_only(self):
        case = make_case(16, 5, "fp8_packed", seed=3)
        layer = smla.SparseAttention(16, [(256, 128), (64, 512)], max_rows=8)
        out = layer(case["q"], case["caches"], case["indices"], lengths=case["lengths"],
                    sink=case["sink"])
        want, _ = reference(case["q"], case["sources"], case["sink"], SCALE)
        self.assertLess(rel_l2(out, want), 1e-2)


@unittest.skipUnless(HAVE_GPU, "no GPU")
class CudaGraphs(unittest.TestCase):
    def test_capture_and_replay_with_new_indices(self):
        heads, rows = 16, 24
        case = make_case(heads, rows, "fp8_packed", seed=11)
        layer = smla.SparseAttention(heads, [(256, 128), (64, 512)], want_lse=True, max_rows=rows)
        args = (case["q"], case["caches"], case["indices"])
        kwargs = dict(lengths=case["lengths"], sink=case["sink"])
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            layer(*args, **kwargs)  # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out, lse = layer(*args, **kwargs)
        g = torch.Generator(device="cuda").manual_seed(12)
        for replay in range(3):
            for s, (values, idx, n) in enumerate(case["sources"]):
                idx.copy_(random_indices(rows, idx.size(1), values.size(0), g, "cuda"))
                n.copy_(torch.randint(0, idx.size(1) + 1, (rows,), generator=g, device="cuda",
                                      dtype=torch.int32))
            graph.replay()
            torch.cuda.synchronize()
            want, _ = reference(case["q"], case["sources"], case["sink"], SCALE)
            self.assertLess(rel_l2(out, want), 1e-2, f"replay {replay}")

    def test_an_unprepared_problem_is_not_ready_inside_a_capture(self):
        case = make_case(16, 4, "fp8_packed", seed=13)
        layer = smla.SparseAttention(16, [(256, 128), (64, 512)], max_rows=4)
        # A context that never prepared the problem: inside a capture it may not compile.
        layer.context = smla.Context(cache_path="")
        graph = torch.cuda.CUDAGraph()
        with self.assertRaises(smla.NotReadyError) as raised:
            with torch.cuda.graph(graph):
                layer(case["q"], case["caches"], case["indices"], lengths=case["lengths"],
                      sink=case["sink"])
        self.assertIn("before capturing", str(raised.exception))


@unittest.skipUnless(HAVE_GPU, "no GPU")
class TorchCompile(unittest.TestCase):
    def test_fullgraph(self):
        heads, rows = 16, 9
        case = make_case(heads, rows, "fp8_packed", seed=21)
        layer = smla.SparseAttention(heads, [(256, 128), (64, 512)], want_lse=True, max_rows=rows)

        class Attention(torch.nn.Module):
            def forward(self, q, c0, c1, i0, i1, n0, n1, sink):
                out, lse = layer.op(q * 1.0, [c0, c1], [i0, i1], lengths=[n0, n1], sink=sink)
                return out.float() * 2.0, lse

        module = Attention()
        inputs = (case["q"], *case["caches"], *case["indices"], *case["lengths"], case["sink"])
        eager = module(*inputs)
        compiled = torch.compile(module, fullgraph=True)(*inputs)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(eager[0], compiled[0]))
        self.assertTrue(torch.equal(eager[1], compiled[1]))
        want, _ = reference(case["q"], case["sources"], case["sink"], SCALE)
        self.assertLess(rel_l2(compiled[0] / 2.0, want), 1e-2)


@unittest.skipUnless(HAVE_GPU, "no GPU")
class FlashMlaCompatible(unittest.TestCase):
    def test_with_kvcache_two_sources(self):
        for heads in (16, 64):
            with self.subTest(heads=heads):
                b, s_q, topk, extra_topk = 6, 2, 128, 512
                g = torch.Generator(device="cuda").manual_seed(100 + heads)
                swa, swa_values = packed_cache(4, 256, g, "cuda")
                comp, comp_values = packed_cache(32, 64, g, "cuda")
                # FlashMLA's views: [pages, page_size, 1, 584] over the padded pages.
                swa_view = swa[:, :256 * 584].view(4, 256, 1, 584)
                comp_view = comp[:, :64 * 584].view(32, 64, 1, 584)
                idx = random_indices(b * s_q, topk, 4 * 256, g, "cuda").view(b, s_q, topk)
                extra = random_indices(b * s_q, extra_topk, 32 * 64, g, "cuda").view(
                    b, s_q, extra_topk)
                lengths = torch.randint(1, topk + 1, (b,), generator=g, device="cuda",
                                        dtype=torch.int32)
                extra_lengths = torch.randint(0, extra_topk + 1, (b,), generator=g,
                                              device="cuda", dtype=torch.int32)
                q = (torch.randn(b, s_q, heads, 512, generator=g, device="cuda") * 0.5).to(
                    torch.bfloat16)
                sink = torch.randn(heads, generator=g, device="cuda")
                meta, splits = flash_mla.get_mla_metadata()
                self.assertIsNone(splits)
                out, lse = flash_mla.flash_mla_with_kvcache(
                    q, swa_view, None, None, 512, meta, softmax_scale=SCALE, is_fp8_kvcache=True,
                    indices=idx, attn_sink=sink, extra_k_cache=comp_view,
                    extra_indices_in_kvcache=extra, topk_length=lengths,
                    extra_topk_length=extra_lengths)
                torch.cuda.synchronize()
                self.assertEqual(list(out.shape), [b, s_q, heads, 512])
                self.assertEqual(list(lse.shape), [b, heads, s_q])
                rows_n = lengths.repeat_interleave(s_q)
                extra_n = extra_lengths.repeat_interleave(s_q)
                want, want_lse = reference(
                    q.view(b * s_q, heads, 512),
                    [(swa_values, idx.view(b * s_q, topk), rows_n),
                     (comp_values, extra.view(b * s_q, extra_topk), extra_n)], sink, SCALE)
                self.assertLess(rel_l2(out.view(b * s_q, heads, 512), want), 1e-2)
                got_lse = lse.transpose(1, 2).reshape(b * s_q, heads).double()
                self.assertLess((got_lse - want_lse).abs().max().item(), 2e-3)

    def test_sparse_fwd_over_a_bf16_cache(self):
        s_q, heads, s_kv, topk = 20, 16, 300, 64
        g = torch.Generator(device="cuda").manual_seed(7)
        kv = (torch.randn(s_kv, 1, 512, generator=g, device="cuda") * 0.5).to(torch.bfloat16)
        q = (torch.randn(s_q, heads, 512, generator=g, device="cuda") * 0.5).to(torch.bfloat16)
        idx = random_indices(s_q, topk, s_kv, g, "cuda").view(s_q, 1, topk)
        n = torch.randint(0, topk + 1, (s_q,), generator=g, device="cuda", dtype=torch.int32)
        out, max_logits, lse = flash_mla.flash_mla_sparse_fwd(q, kv, idx, SCALE, topk_length=n)
        torch.cuda.synchronize()
        want, want_lse = reference(q, [(kv.view(s_kv, 512).double(), idx.view(s_q, topk), n)],
                                   None, SCALE)
        self.assertLess(rel_l2(out, want), 1e-2)
        finite = torch.isfinite(want_lse)
        self.assertLess((lse.double()[finite] - want_lse[finite]).abs().max().item(), 2e-3)
        self.assertTrue(torch.isnan(max_logits).all().item())


@unittest.skipUnless(HAVE_GPU, "no GPU")
class RefusedArguments(unittest.TestCase):
    def test_each_names_its_argument(self):
        case = make_case(16, 4, "fp8_packed", seed=5)
        layer = smla.SparseAttention(16, [(256, 128), (64, 512)], max_rows=4)
        good = dict(q=case["q"], caches=case["caches"], indices=case["indices"],
                    lengths=case["lengths"], sink=case["sink"])

        def call(**changed):
            args = dict(good, **changed)
            return layer(args.pop("q"), args.pop("caches"), args.pop("indices"), **args)

        cases = {
            "q.dtype": dict(q=case["q"].float()),
            "q is on cpu": dict(q=case["q"].cpu()),
            "q.shape": dict(q=case["q"][:, :8]),
            "q.stride(-1)": dict(q=case["q"].transpose(1, 2).contiguous().transpose(1, 2)),
            "indices[1].dtype": dict(indices=[case["indices"][0], case["indices"][1].long()]),
            "indices[0].shape[1]": dict(indices=[case["indices"][0][:, :64],
                                                 case["indices"][1]]),
            "lengths[0].dtype": dict(lengths=[case["lengths"][0].long(), case["lengths"][1]]),
            "sink.shape": dict(sink=case["sink"][:8]),
            "sink: required": dict(sink=None),
            "caches[0]": dict(caches=[case["caches"][0][:, :1000], case["caches"][1]]),
        }
        for name, changed in cases.items():
            with self.subTest(name):
                with self.assertRaises(ValueError) as raised:
                    call(**changed)
                self.assertIn(name, str(raised.exception))


if __name__ == "__main__":
    unittest.main()
