"""The stand-ins for the imports of multi-GPU programs (tensorlib.backends, .accelerator, .amp,
.distributed, .nn.parallel, .onnx; chapter 8, section 16): no-ops where PyTorch
on a CPU does nothing, a clear error where a program really uses a GPU or many processes."""

from __future__ import annotations

import warnings

import pytest

import tensorlib as tl
from tensorlib import accelerator, amp, backends, distributed, onnx
from tensorlib.nn.parallel import DataParallel, DistributedDataParallel

REFUSED = [
    (lambda: distributed.init_process_group("gloo"), "torch.distributed.init_process_group"),
    (lambda: distributed.destroy_process_group(), "torch.distributed.destroy_process_group"),
    (lambda: distributed.all_reduce(tl.ones(2)), "torch.distributed.all_reduce"),
    (lambda: distributed.barrier(), "torch.distributed.barrier"),
    (lambda: distributed.broadcast(tl.ones(2), 0), "torch.distributed.broadcast"),
    (
        lambda: DistributedDataParallel(tl.nn.Linear(2, 2)),
        "torch.nn.parallel.DistributedDataParallel",
    ),
    (lambda: onnx.export(tl.nn.Linear(2, 2), (tl.ones(1, 2),), "m.onnx"), "torch.onnx.export"),
    (
        lambda: distributed.ZeroRedundancyOptimizer([tl.nn.Parameter(tl.ones(2))], tl.optim.SGD),
        "torch.distributed.optim.ZeroRedundancyOptimizer",
    ),
]


@pytest.mark.parametrize("use, name", REFUSED, ids=[name for _, name in REFUSED])
def test_using_a_multi_device_feature_says_why_it_cannot(use, name):
    with pytest.raises(RuntimeError, match="tensorlib runs in one CPU process") as info:
        use()
    assert name in str(info.value) and "run_as_torch" in str(info.value)


def test_disabled_scaler_and_autocast_change_nothing():
    w = tl.nn.Parameter(tl.tensor([1.0, -2.0]))
    optimizer = tl.optim.SGD([w], lr=0.25)
    scaler = amp.GradScaler(enabled=False)
    with amp.autocast(device_type="cpu", enabled=False):
        loss = (w * w).sum()
    assert scaler.scale(loss) is loss and scaler.get_scale() == 1.0 and not scaler.is_enabled()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    assert w.detach().numpy().tolist() == [0.5, -1.0]  # one plain SGD step: w - 0.25 * 2w
    assert scaler.state_dict() == {}
    scaler.load_state_dict({})

    @amp.autocast(device_type="cpu", enabled=False)
    def f(x):
        return x + 1
    assert f(1) == 2


def test_cuda_scaler_and_autocast_warn_and_disable_as_pytorch_without_a_gpu():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
    with pytest.warns(UserWarning, match="Disabling autocast"):
        context = amp.autocast(device_type="cuda", dtype=tl.float16)
    with context:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        amp.GradScaler(enabled=False)  # disabled on purpose: no warning


def test_one_process_answers():
    assert not distributed.is_available() and not distributed.is_initialized()
    for query in (distributed.get_rank, distributed.get_world_size):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            query()
    assert (
        not accelerator.is_available()
        and accelerator.current_accelerator() is None
        and accelerator.device_count() == 0
    )
    accelerator.synchronize()
    assert (
        not backends.mps.is_available()
        and not backends.cudnn.is_available()
        and not backends.cuda.is_built()
    )


@pytest.mark.parity
def test_flags_and_answers_match_pytorch_on_a_cpu():
    torch = pytest.importorskip("torch")
    fresh_cuda, fresh_cudnn = backends.CudaBackend(), backends.CudnnBackend()
    assert fresh_cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    for flag in ("allow_tf32", "benchmark", "deterministic", "enabled"):
        assert getattr(fresh_cudnn, flag) == getattr(torch.backends.cudnn, flag), flag
    assert backends.mps.is_available() == torch.backends.mps.is_available()
    assert accelerator.is_available() == torch.accelerator.is_available()
    assert accelerator.current_accelerator() == torch.accelerator.current_accelerator()
    assert distributed.is_initialized() == torch.distributed.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.distributed.get_rank()
    theirs = torch.amp.GradScaler(enabled=False)
    ours = amp.GradScaler(enabled=False)
    assert ours.get_scale() == theirs.get_scale() and ours.state_dict() == theirs.state_dict()
    assert ours.is_enabled() == theirs.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # both disabled without CUDA
        assert amp.GradScaler().is_enabled() == torch.amp.GradScaler("cuda").is_enabled()


def test_cpu_autocast_and_scaler_warn_and_run_in_full_precision():
    # build-nanogpt wraps every forward in autocast(device_type="cpu", dtype=torch.bfloat16)
    w = tl.nn.Parameter(tl.tensor([1.0, -2.0]))
    with pytest.warns(UserWarning, match="tensorlib has no mixed precision"):
        context = amp.autocast(device_type="cpu", dtype=tl.bfloat16)
    with context:
        loss = (w * w).sum()
    assert loss.dtype == tl.float32 and not amp.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="need no scaling. Disabling"):
        scaler = amp.GradScaler("cpu")
    assert not scaler.is_enabled() and scaler.scale(loss) is loss


def test_compile_wraps_a_module_as_pytorch_and_returns_a_function_itself() -> None:
    model = tl.nn.Linear(3, 2)
    compiled = tl.compile(model)
    assert isinstance(compiled, tl.compiler.OptimizedModule) and compiled._orig_mod is model
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]  # as PyTorch
    x = tl.randn(4, 3)
    assert compiled(x).tolist() == model(x).tolist()
    assert compiled.in_features == 3 and compiled.weight is model.weight  # read through
    compiled.eval()
    assert not model.training
    assert tl.compile(model, mode="max-autotune", fullgraph=True, dynamic=False)._orig_mod is model
    with pytest.raises(AttributeError, match="no_such_attribute"):
        compiled.no_such_attribute  # noqa: B018

    @tl.compile
    def double(x):
        return 2 * x

    @tl.compile(mode="reduce-overhead")
    def triple(x):
        return 3 * x

    assert double(tl.tensor([1.0])).tolist() == [2.0] and triple(tl.tensor([1.0])).tolist() == [3.0]
    assert tl.compiler.disable(double) is double and not tl.compiler.is_compiling()
    tl.compiler.reset()


def test_compile_checks_its_arguments_as_pytorch_does() -> None:
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest, should be one of"):
        tl.compile(tl.nn.Linear(1, 1), mode="fastest")
    with pytest.raises(TypeError, match="A callable function is expected"):
        tl.compile(3)


@pytest.mark.parity
def test_data_parallel_is_pytorchs_wrapper_without_gpus():
    torch = pytest.importorskip("torch")
    ours = DataParallel(tl.nn.Linear(3, 2, dtype=tl.float64), device_ids=[0, 1])
    theirs = torch.nn.DataParallel(torch.nn.Linear(3, 2, dtype=torch.float64), device_ids=[0, 1])
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["module.weight", "module.bias"]
    assert ours.device_ids == theirs.device_ids == [] and repr(ours) == repr(theirs)
    x = [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]
    out = ours(tl.tensor(x, dtype=tl.float64))
    expected = theirs(torch.tensor(x, dtype=torch.float64))
    assert out.shape == (2, 2)
    assert abs(out.detach().numpy() - expected.detach().numpy()).max() < 1e-12
    out.sum().backward()
    assert ours.module.weight.grad is not None and isinstance(tl.nn.DataParallel, type)
