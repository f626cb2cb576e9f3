"""The benchmarks measure what they say: the hand-written numpy GPT's gradients, the composed GPT's
equality across libraries, the FLOP count of a step, and the report format of ``make bench``.

No timed asserts: timings are printed by ``make bench``, never checked here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_gpt  # noqa: E402

TINY = (7, 4, 8, 2, 1, 2)  # V, T, C, heads, blocks L, batch B


def test_numpy_gpt_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    idx, tgt = rng.integers(0, 7, (2, 4)), rng.integers(0, 7, (2, 4))
    step = bench_gpt.numpy_gpt_step(rng, idx, tgt, TINY, dtype=np.float64)
    for p in step.params.values():  # away from LayerNorm's w = 1, b = 0 and zero biases
        p += rng.standard_normal(p.shape) * 0.3
    _, grads = step.forward_backward()
    delta = 1e-6
    for key in (
        "wte",
        "wpe",
        "0.ln1_w",
        "0.attn_w",
        "0.attn_b",
        "0.proj_w",
        "0.ln2_b",
        "0.fc_w",
        "0.mlp_w",
        "lnf_w",
        "head",
    ):
        param = step.params[key]
        for flat in rng.choice(param.size, size=min(4, param.size), replace=False):
            i = np.unravel_index(flat, param.shape)
            saved = param[i]
            param[i] = saved + delta
            up = step.forward_backward()[0]
            param[i] = saved - delta
            down = step.forward_backward()[0]
            param[i] = saved
            numeric = (up - down) / (2 * delta)
            assert abs(numeric - grads[key][i]) < 1e-6 + 1e-4 * abs(numeric), (
                f"{key}{i}: finite difference {numeric}, hand-written {grads[key][i]}"
            )


def test_step_flops_follow_the_parameter_count():
    # 6 FLOPs per weight per token (forward 2, backward 4) for every weight matrix and the head,
    # plus attention's 4 products of 2·T·C per token per layer forward, 3 times over with the
    # backward
    V, T, C, H, L, B = bench_gpt.SHAPES["gpt"]
    weights = L * 12 * C * C + V * C
    expected = 6 * weights * B * T + 3 * L * 2 * 2 * B * T * T * C
    assert bench_gpt.step_gflop(bench_gpt.SHAPES["gpt"]) == pytest.approx(expected / 1e9, rel=1e-12)
    # chapter 8's "about 5.3 GFLOP"
    assert bench_gpt.step_gflop(bench_gpt.SHAPES["gpt"]) == pytest.approx(5.29, abs=0.01)


@pytest.mark.parity
def test_composed_gpt_is_the_same_model_in_both_libraries():
    torch = pytest.importorskip("torch")
    import tensorlib as tl

    rng = np.random.default_rng(0)
    idx, tgt = rng.integers(0, 7, (2, 4)), rng.integers(0, 7, (2, 4))
    ours, theirs = bench_gpt.composed_gpt(tl, TINY), bench_gpt.composed_gpt(torch, TINY)
    torch_params = dict(theirs.named_parameters())
    assert sorted(name for name, _ in ours.named_parameters()) == sorted(torch_params)
    with torch.no_grad():
        for name, param in ours.named_parameters():
            torch_params[name].copy_(torch.from_numpy(param.detach().numpy().copy()))
    loss = ours(tl.tensor(idx), tl.tensor(tgt))
    ref = theirs(torch.from_numpy(idx), torch.from_numpy(tgt))
    loss.backward()
    ref.backward()
    assert float(loss.item()) == pytest.approx(float(ref.item()), rel=1e-5)
    for name, param in ours.named_parameters():
        np.testing.assert_allclose(
            param.grad.numpy(), torch_params[name].grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name
        )


def _fake_samples(impls, seconds, floor=None):
    return {
        impl: [
            {
                "seconds": s,
                "peak_mb": 10.0 * (i + 1),
                "floor_seconds": floor if impl in ("numpy", "torch") else None,
                "blas": [
                    {
                        "owner": "numpy",
                        "internal_api": "openblas",
                        "version": "0.3",
                        "num_threads": 1,
                        "architecture": None,
                    }
                ],
            }
        ]
        for i, (impl, s) in enumerate(zip(impls, seconds, strict=True))
    }


def test_rows_carry_ratios_gflops_and_memory():
    impls = ["tensorlib", "numpy", "torch"]
    row = bench_gpt._row("gpt", 1, _fake_samples(impls, [0.2, 0.1, 0.1], floor=0.05))
    assert (
        row["tl_over_torch"] == 2.0
        and row["numpy_over_torch"] == 1.0
        and row["tl_over_numpy"] == 2.0
    )
    gflop = bench_gpt.step_gflop(bench_gpt.SHAPES["gpt"])
    assert (
        row["gflops_tensorlib"] == round(gflop / 0.2, 1)
        and row["peak_gflops_numpy"] == round(gflop / 0.05, 1)
    )
    assert (row["peak_mb_tensorlib"], row["peak_mb_numpy"], row["peak_mb_torch"]) == (
        10.0,
        20.0,
        30.0,
    )
    two = bench_gpt._row("gpt", 2, _fake_samples(impls, [0.1, 0.1, 0.05], floor=0.05))
    two["speedup_vs_1_thread"], two["second_core_probe"] = (
        {"tensorlib": 2.0, "numpy": 1.0, "torch": 2.0},
        [1.9, 1.2],
    )
    text = bench_gpt.report([row, two])
    assert "GPT step (chapter 8), 1 thread" in text and "2.00x" in text and "2.00/1.00/2.00" in text
    assert "2-thread figures measure the load" in text  # the probe's 1.2 is flagged


def test_chapter_8s_step_in_micro_batches_takes_the_whole_batchs_gradient():
    shape = (30, 16, 32, 2, 1, 4)  # V, T, C, H, L, B
    rng = np.random.default_rng(0)
    idx, tgt = rng.integers(0, 30, (4, 16)), rng.integers(0, 30, (4, 16))
    steps = [
        bench_gpt._gpt_step(impl, "gpt", shape, idx, tgt, rng)
        for impl in ("tensorlib", "tensorlib-whole-batch")
    ]
    for step in steps:  # one step from the same weights; AdamW leaves the gradients in .grad
        step()
    parts, whole = ([p.grad.numpy() for p in step.model.parameters()] for step in steps)
    assert any(not np.array_equal(p, q) for p, q in zip(parts, whole, strict=True))  # rounding
    for p, q in zip(parts, whole, strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize(
    "impl, line",
    [
        ("tensorlib-whole-batch", "tensorlib, the whole batch in one pass: "),
        ("tensorlib-threads", "tensorlib, the micro-batches on threads: "),
    ],
)
def test_the_report_gives_the_other_steps_beside_chapter_8s(impl, line):
    impls = ["tensorlib", impl, "numpy", "torch"]
    row = bench_gpt._row("gpt", 1, _fake_samples(impls, [0.2, 0.3, 0.1, 0.1], floor=0.05))
    assert row[impl.replace("-", "_")] == 0.3
    text = bench_gpt.report([row])
    assert f"{line}GPT step (chapter 8), 1 thread: 300.00 ms, 3.00x PyTorch's" in text


@pytest.mark.slow
def test_quick_bench_writes_the_documented_json(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "results.json"
    env = {
        **os.environ,
        "BENCH_GPT_WORKLOADS": "composed",
        "BENCH_GPT_THREADS": "1",
        "BENCH_GPT_STEPS": "1",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "run.py"),
            "--only",
            "gpt",
            "--quick",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "CPU:" in done.stdout and "GPT step, user-composed, 1 thread" in done.stdout
    data = json.loads(out.read_text())
    assert data["environment"]["quick"] is True and data["environment"]["numpy_blas"]
    (row,) = data["results"]["bench_gpt"]
    for key in (
        "tensorlib",
        "numpy",
        "torch",
        "tl_over_torch",
        "gflops_tensorlib",
        "peak_gflops_numpy",
        "peak_gflops_torch",
        "peak_mb_tensorlib",
        "peak_mb_torch",
        "blas",
    ):
        assert row[key] is not None, key


def test_chapter_8s_step_forks_its_worker_at_two_threads_with_the_threads_bits():
    from tensorlib.engine import parallel

    shape = (30, 16, 32, 2, 1, 4)  # V, T, C, H, L, B
    rng = np.random.default_rng(0)
    idx, tgt = rng.integers(0, 30, (4, 16)), rng.integers(0, 30, (4, 16))
    previous = parallel.get_num_threads()
    parallel.set_num_threads(2)
    try:
        steps = [
            bench_gpt._gpt_step(impl, "gpt", shape, idx, tgt, rng)
            for impl in ("tensorlib", "tensorlib-threads")
        ]
        for step in steps:
            step()
            step()
    finally:
        parallel.set_num_threads(previous)
    processes, threads = steps
    assert len(processes.parts.pids) == 1 and threads.parts is None
    assert [p.numpy().tobytes() for p in processes.model.parameters()] == [
        p.numpy().tobytes() for p in threads.model.parameters()
    ]
    processes.parts.close()
