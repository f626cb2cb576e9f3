"""The torch names real programs stopped at in a survey of PyTorch programs (chapter 8, section 16;
chapter 6 for ``_LRScheduler``): llm.c's ``torch._inductor.config``, ``torch.distributed.optim``
and ``torch.version``; the ImageNet example's and the Annotated Transformer's
``torch.multiprocessing``; einx's ``torch.compiler.allow_in_graph``; the attention switches of
``torch.backends.cuda``; ``torch.nn.attention``'s queries and ``bias`` module."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import tensorlib as tl
import tensorlib.multiprocessing as tl_mp
from tensorlib import backends, compiler
from tensorlib.nn import attention

ROOT = Path(__file__).resolve().parent.parent


def _run_as_torch(tmp_path: Path, program: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(program), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )


def test_programs_imports_and_settings_run_under_run_as_torch(tmp_path: Path) -> None:
    result = _run_as_torch(tmp_path, """
        import torch
        import torch._inductor.config as config
        import torch._dynamo
        import torch.multiprocessing as mp
        from torch.distributed.optim import ZeroRedundancyOptimizer
        from torch.nn.attention import SDPBackend, sdpa_kernel, WARN_FOR_UNFUSED_KERNELS
        from torch.nn.attention.bias import causal_lower_right
        from torch._dynamo.eval_frame import OptimizedModule

        config.coordinate_descent_tuning = True
        torch._dynamo.config.suppress_errors = True
        print(config.coordinate_descent_tuning, torch._dynamo.config.suppress_errors)
        print(torch.version.__version__, torch.version.cuda, torch.version.hip)
        print(callable(mp.spawn), mp.get_sharing_strategy(), WARN_FOR_UNFUSED_KERNELS)
        f = torch.compiler.allow_in_graph(abs)
        print(f is abs, torch.compiler.is_dynamo_compiling())
        model = torch.compile(torch.nn.Linear(2, 2))
        print(isinstance(model, OptimizedModule), list(model.state_dict()))
        q = torch.randn(1, 1, 2, 4)
        k = torch.randn(1, 1, 3, 4)
        with sdpa_kernel(SDPBackend.MATH):
            out = torch.nn.functional.scaled_dot_product_attention(
                q, k, k, attn_mask=causal_lower_right(2, 3))
        print(tuple(out.shape))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "True True",
        "2.13.0+tensorlib None None",
        "True file_descriptor False",
        "True False",
        "True ['_orig_mod.weight', '_orig_mod.bias']",
        "(1, 1, 2, 4)",
    ]


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.compile imports torch.jit
def test_the_same_program_on_pytorch_prints_the_same(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    model = torch.compile(torch.nn.Linear(2, 2))
    assert list(model.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert type(model).__name__ == compiler.OptimizedModule.__name__
    assert torch.version.cuda is None and torch.version.hip is None  # a CPU build
    assert torch.multiprocessing.get_sharing_strategy() == tl_mp.get_sharing_strategy()
    assert torch.multiprocessing.get_all_sharing_strategies() == (
        tl_mp.get_all_sharing_strategies()
    )
    assert torch.nn.attention.WARN_FOR_UNFUSED_KERNELS == attention.WARN_FOR_UNFUSED_KERNELS
    q = torch.randn(1, 1, 2, 4)
    theirs = torch.nn.attention.SDPAParams(q, q, q, None, 0.0, False, False)
    ours = attention.SDPAParams(q, q, q, None, 0.0, False, False)
    assert torch.nn.attention.can_use_flash_attention(theirs) is False  # on a CPU
    assert attention.can_use_flash_attention(ours) is False
    assert attention.can_use_efficient_attention(ours) is False
    assert (ours.dropout, ours.is_causal, ours.enable_gqa) == (0.0, False, False)


@pytest.mark.parity
def test_backends_cuda_attention_switches_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        assert getattr(backends.cuda, f"{name}_sdp_enabled")() is True
        assert getattr(torch.backends.cuda, f"{name}_sdp_enabled")() is True
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        with torch.backends.cuda.sdp_kernel(enable_flash=False):
            pass
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        with backends.cuda.sdp_kernel(enable_flash=False, enable_math=True):
            assert not backends.cuda.flash_sdp_enabled() and backends.cuda.math_sdp_enabled()
    assert backends.cuda.flash_sdp_enabled()  # restored
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert [w.category for w in ours] == [FutureWarning]
    backends.cuda.enable_flash_sdp(False)
    assert backends.cuda.flash_sdp_enabled() is False
    backends.cuda.enable_flash_sdp(True)


def test_compiler_markers_and_settings() -> None:
    def f(x: int) -> int:
        return x + 1

    assert compiler.allow_in_graph(f) is f and compiler.assume_constant_result(f) is f
    assert compiler.is_dynamo_compiling() is False and compiler.cudagraph_mark_step_begin() is None
    compiler.inductor_config.coordinate_descent_tuning = True
    assert compiler.inductor_config.coordinate_descent_tuning is True
    assert "coordinate_descent_tuning" in repr(compiler.inductor_config)


def _write_worker_module(tmp_path: Path) -> None:
    (tmp_path / "spawn_workers.py").write_text(textwrap.dedent("""
        from pathlib import Path


        def write_rank(rank, folder, text):
            Path(folder, f"rank{rank}.txt").write_text(f"{text} {rank}")


        def fail_on_one(rank):
            if rank == 1:
                raise ValueError(f"worker {rank} cannot go on")
    """), encoding="utf-8")


def test_spawn_runs_fn_with_its_index_in_each_process(tmp_path: Path, monkeypatch) -> None:
    _write_worker_module(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import spawn_workers

    assert tl_mp.spawn(spawn_workers.write_rank, args=(str(tmp_path), "hello"), nprocs=2) is None
    assert sorted(p.read_text() for p in tmp_path.glob("rank*.txt")) == ["hello 0", "hello 1"]
    context = tl_mp.spawn(spawn_workers.write_rank, args=(str(tmp_path), "again"), nprocs=1,
                          join=False)
    assert isinstance(context, tl_mp.ProcessContext) and len(context.pids()) == 1
    while not context.join():
        pass
    assert (tmp_path / "rank0.txt").read_text() == "again 0"


def test_spawn_raises_with_the_failing_process_traceback(tmp_path: Path, monkeypatch) -> None:
    _write_worker_module(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import spawn_workers

    with pytest.raises(tl_mp.ProcessRaisedException, match="worker 1 cannot go on") as info:
        tl_mp.spawn(spawn_workers.fail_on_one, nprocs=2)
    assert info.value.error_index == 1 and "Traceback" in str(info.value)


def test_sharing_strategy_is_checked() -> None:
    assert tl_mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    tl_mp.set_sharing_strategy("file_system")
    assert tl_mp.get_sharing_strategy() == "file_system"
    tl_mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="sharing strategy must be one of"):
        tl_mp.set_sharing_strategy("shared_memory")
    assert tl_mp.Process is __import__("multiprocessing").Process


@pytest.mark.parity
def test_a_scheduler_written_for_the_old_base_class_runs_as_in_pytorch() -> None:
    torch = pytest.importorskip("torch")
    from tensorlib.optim.lr_scheduler import LRScheduler, _LRScheduler

    def run(lib, base):
        class Halving(base):
            def get_lr(self):
                return [rate * 0.5 ** (self.last_epoch // 2) for rate in self.base_lrs]

        param = lib.nn.Parameter(lib.zeros(1))
        optimizer = lib.optim.SGD([param], lr=0.8)
        schedule = Halving(optimizer)
        rates = []
        for _ in range(5):
            rates.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            schedule.step()
        return rates, schedule

    ours, schedule = run(tl, _LRScheduler)
    theirs, _ = run(torch, torch.optim.lr_scheduler._LRScheduler)
    assert ours == theirs == [0.8, 0.8, 0.4, 0.4, 0.2]
    assert isinstance(schedule, LRScheduler) and issubclass(_LRScheduler, LRScheduler)


@pytest.mark.parity
def test_cuda_memory_queries_answer_as_a_cpu_only_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "is_bf16_supported"):
        assert getattr(tl.cuda, name)() == getattr(torch.cuda, name)(), name
    assert tl.cuda.empty_cache() is None and tl.cuda.reset_peak_memory_stats() is None
    for name in ("synchronize", "current_device", "get_device_name", "get_device_properties"):
        with pytest.raises(AssertionError) as theirs:
            getattr(torch.cuda, name)()
        with pytest.raises(AssertionError) as ours:
            getattr(tl.cuda, name)()
        assert str(ours.value) == str(theirs.value), name


@pytest.mark.parity
def test_tensor_H_is_the_transpose_of_a_matrix_only() -> None:
    torch = pytest.importorskip("torch")
    x = tl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    assert x.H.tolist() == x.T.tolist()
    x.H.sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2
    for shape in ((2, 2, 2), (3,)):
        with pytest.raises(RuntimeError) as theirs:
            torch.zeros(shape).H  # noqa: B018
        with pytest.raises(RuntimeError) as ours:
            tl.zeros(shape).H  # noqa: B018
        assert str(ours.value) == str(theirs.value)


def test_a_cast_of_inf_and_nan_to_integers_is_silent() -> None:
    values = tl.tensor([float("inf"), float("nan"), 1.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "invalid value encountered in cast" would raise
        assert values.long()[2].item() == 1
