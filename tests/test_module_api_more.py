"""Module methods beyond the basics: get_parameter, get_buffer, set_submodule, extra state,
to_empty, register_backward_hook, type and compile, and nn.Buffer; parity with PyTorch 2.13."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn


class _Counter(nn.Module):
    """A module with extra state: a counter and a vocabulary."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.count = 0
        self.words: list[str] = []

    def get_extra_state(self) -> dict:
        return {"count": self.count, "words": list(self.words)}

    def set_extra_state(self, state: dict) -> None:
        if not isinstance(state, dict):
            raise TypeError("extra state must be a dict")
        self.count, self.words = state["count"], list(state["words"])


def _tree() -> nn.Module:
    net = nn.Module()
    net.enc = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    net.head = nn.Linear(3, 1)
    return net


def test_get_parameter_and_buffer() -> None:
    net = _tree()
    assert net.get_parameter("enc.0.weight") is net.enc[0].weight
    assert net.get_parameter("head.bias") is net.head.bias
    assert net.get_buffer("enc.1.running_mean") is net.enc[1].running_mean
    with pytest.raises(AttributeError, match="Linear has no attribute `nope`"):
        net.get_parameter("head.nope")
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        net.get_parameter("enc.1.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        net.get_buffer("head.weight")
    with pytest.raises(AttributeError):
        net.get_buffer("missing.running_mean")


def test_set_submodule() -> None:
    net = _tree()
    new = nn.Linear(3, 2)
    net.set_submodule("head", new)
    assert net.head is new
    net.set_submodule("enc.extra", nn.ReLU())  # a new child of an existing parent
    assert [name for name, _ in net.enc.named_children()] == ["0", "1", "extra"]
    with pytest.raises(AttributeError, match="Sequential has no attribute `other`"):
        net.set_submodule("enc.other", nn.ReLU(), strict=True)
    net.set_submodule("enc.extra", nn.Tanh(), strict=True)
    assert isinstance(net.enc.extra, nn.Tanh)
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name!"):
        net.set_submodule("", nn.ReLU())
    with pytest.raises(ValueError, match="`module` is not an nn.Module"):
        net.set_submodule("head", 3)  # type: ignore[arg-type]
    net.flag = 1
    with pytest.raises(AttributeError, match="`flag` is not an nn.Module"):
        net.set_submodule("flag", nn.ReLU())
    with pytest.raises(AttributeError):
        net.set_submodule("nowhere.x", nn.ReLU())


def test_extra_state_round_trip_and_keys() -> None:
    model = nn.Sequential(_Counter(), nn.Linear(3, 1))
    model[0].count, model[0].words = 7, ["a", "b"]
    state = model.state_dict()
    assert list(state) == ["0._extra_state", "0.fc.weight", "0.fc.bias", "1.weight", "1.bias"]
    other = nn.Sequential(_Counter(), nn.Linear(3, 1))
    result = other.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert other[0].count == 7 and other[0].words == ["a", "b"]
    np.testing.assert_array_equal(other[0].fc.weight.numpy(), model[0].fc.weight.numpy())
    # pickles, as a checkpoint does
    again = pickle.loads(pickle.dumps(state))
    assert again["0._extra_state"] == {"count": 7, "words": ["a", "b"]}


def test_extra_state_missing_and_unexpected() -> None:
    model = _Counter()
    state = model.state_dict()
    del state["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        model.load_state_dict(state)
    assert model.load_state_dict(state, strict=False).missing_keys == ["_extra_state"]
    plain = nn.Linear(2, 3)
    state = plain.state_dict()
    state["_extra_state"] = {"x": 1}
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        plain.load_state_dict(state)


def test_extra_state_load_is_all_or_nothing() -> None:
    model = _Counter()
    model.count = 3
    state = model.state_dict()
    state["_extra_state"] = {"count": 9, "words": []}
    state["fc.bias"] = tl.zeros(5)  # a size mismatch: nothing may change
    with pytest.raises(RuntimeError, match="size mismatch for fc.bias"):
        model.load_state_dict(state)
    assert model.count == 3
    # a refused extra state undoes the tensors already copied
    before = model.fc.weight.numpy().copy()
    state = _Counter().state_dict()
    state["_extra_state"] = "not a dict"
    with pytest.raises(TypeError, match="extra state must be a dict"):
        model.load_state_dict(state)
    np.testing.assert_array_equal(model.fc.weight.numpy(), before)
    # and a post-hook that refuses the load puts the extra state back
    model.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.append("x"))
    good = _Counter().state_dict()
    good["_extra_state"] = {"count": 11, "words": ["z"]}
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "x"'):
        model.load_state_dict(good)
    assert model.count == 3 and model.words == []


def test_base_extra_state_methods_raise() -> None:
    with pytest.raises(RuntimeError, match="Module.get_extra_state\\(\\) that should never"):
        nn.Linear(1, 1).get_extra_state()
    with pytest.raises(RuntimeError, match="Module.set_extra_state\\(\\) that should never"):
        nn.Linear(1, 1).set_extra_state({})


def test_to_empty() -> None:
    net = _tree()
    weight, mean = net.enc[0].weight, net.enc[1].running_mean
    net.head.weight.grad = tl.ones(1, 3)
    assert net.to_empty(device="cpu") is net
    assert net.enc[0].weight is weight and net.enc[1].running_mean is mean
    assert weight.shape == (3, 2) and net.head.weight.grad.shape == (1, 3)
    assert net.enc[1].num_batches_tracked.dtype == tl.int64
    assert net.to_empty() is net
    with pytest.raises(ValueError):
        net.to_empty(device="cuda")


def test_to_empty_recurse_false_keeps_children() -> None:
    net = nn.Module()
    net.w = nn.Parameter(tl.ones(2))
    net.child = nn.Linear(2, 2)
    child_weight = net.child.weight.numpy().copy()
    net.to_empty(recurse=False)
    np.testing.assert_array_equal(net.child.weight.numpy(), child_weight)


def test_register_backward_hook_runs_and_excludes_full_hooks() -> None:
    layer = nn.Linear(3, 2)
    seen = []
    handle = layer.register_backward_hook(
        lambda m, grad_in, grad_out: seen.append((len(grad_in), grad_out[0].shape))
    )
    x = tl.ones(4, 3, requires_grad=True)
    layer(x).sum().backward()
    assert seen == [(1, (4, 2))]
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        layer.register_full_backward_hook(lambda *a: None)
    handle.remove()
    other = nn.Linear(3, 2)
    other.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        other.register_backward_hook(lambda *a: None)


def test_type_casts_everything() -> None:
    net = _tree()
    net.head.weight.grad = tl.ones(1, 3)
    weight = net.head.weight
    assert net.type(tl.float64) is net
    assert net.head.weight is weight and weight.dtype == tl.float64
    assert weight.grad.dtype == tl.float64
    assert net.enc[1].num_batches_tracked.dtype == tl.float64  # integer buffers too
    net.type("torch.FloatTensor")
    assert weight.dtype == tl.float32


def test_compile_in_place() -> None:
    tl.manual_seed(0)
    layer = nn.Linear(3, 2)
    x = tl.ones(1, 3)
    before = layer(x).numpy().copy()
    assert layer.compile(mode="max-autotune") is None
    np.testing.assert_array_equal(layer(x).numpy(), before)
    assert list(layer.state_dict()) == ["weight", "bias"]


def test_buffer_registers_on_assignment() -> None:
    net = nn.Module()
    data = tl.ones(3)
    net.mask = nn.Buffer(data)
    net.cache = nn.Buffer(tl.zeros(2), persistent=False)
    assert list(dict(net.named_buffers())) == ["mask", "cache"]
    assert list(net.state_dict()) == ["mask"]
    assert np.shares_memory(net.mask.numpy(), data.numpy())
    assert isinstance(net.mask, nn.Buffer) and net.mask.persistent
    assert not nn.Buffer(tl.ones(1, requires_grad=True)).grad_fn
    assert nn.Buffer().shape == (0,)
    copied = copy.deepcopy(net)
    assert list(copied.state_dict()) == ["mask"]


def test_pickled_module_keeps_working() -> None:
    net = pickle.loads(pickle.dumps(_Counter()))
    net.register_full_backward_hook(lambda *a: None)
    assert net.get_extra_state()["count"] == 0


@pytest.mark.parity
def test_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    tnet = torch.nn.Module()
    tnet.enc = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    tnet.head = torch.nn.Linear(3, 1)
    net = _tree()
    for target in ("enc.0.weight", "head.bias"):
        assert tuple(tnet.get_parameter(target).shape) == net.get_parameter(target).shape
    for target, what in (("head.nope", "parameter"), ("enc.1.running_mean", "parameter"),
                         ("head.weight", "buffer")):
        getter = "get_parameter" if what == "parameter" else "get_buffer"
        with pytest.raises(AttributeError) as theirs:
            getattr(tnet, getter)(target)
        with pytest.raises(AttributeError) as ours:
            getattr(net, getter)(target)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs:
        tnet.set_submodule("", torch.nn.ReLU())
    with pytest.raises(ValueError) as ours:
        net.set_submodule("", nn.ReLU())
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(AttributeError) as theirs:
        tnet.set_submodule("enc.other", torch.nn.ReLU(), strict=True)
    with pytest.raises(AttributeError) as ours:
        net.set_submodule("enc.other", nn.ReLU(), strict=True)
    assert str(ours.value) == str(theirs.value)
    tnet.set_submodule("enc.extra", torch.nn.ReLU())
    net.set_submodule("enc.extra", nn.ReLU())
    assert list(tnet.state_dict()) == list(net.state_dict())


@pytest.mark.parity
def test_extra_state_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")

    class TorchCounter(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(2, 3)
            self.count = 0

        def get_extra_state(self) -> dict:
            return {"count": self.count}

        def set_extra_state(self, state: dict) -> None:
            self.count = state["count"]

    theirs = torch.nn.Sequential(TorchCounter(), torch.nn.Linear(3, 1))
    ours = nn.Sequential(_Counter(), nn.Linear(3, 1))
    assert list(theirs.state_dict()) == list(ours.state_dict())
    theirs[0].count = 4
    state = theirs.state_dict()
    ours.load_state_dict({k: v if k.endswith("_extra_state") else v.numpy()
                          for k, v in state.items()} | {"0._extra_state": {"count": 4,
                                                                           "words": []}})
    assert ours[0].count == 4
    np.testing.assert_array_equal(ours[0].fc.weight.numpy(), state["0.fc.weight"].numpy())
    del state["0._extra_state"]
    for model in (theirs, ours):
        missing = 'Missing key\\(s\\) in state_dict: "0._extra_state"'
        with pytest.raises(RuntimeError, match=missing):
            model.load_state_dict(state)
        assert model.load_state_dict(state, strict=False).missing_keys == ["0._extra_state"]


@pytest.mark.parity
# torch's own backward-hook code imports modules that warn about torch.jit.script_method
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_backward_hook_errors_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    for module in (torch.nn.Linear(2, 2), nn.Linear(2, 2)):
        module.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError) as error:
            module.register_backward_hook(lambda *a: None)
        message = str(error.value)
        assert message.startswith("Cannot use both regular backward hooks and full backward hooks")
    tlayer, layer = torch.nn.Linear(2, 2), nn.Linear(2, 2)
    assert [tlayer.to_empty(device="cpu") is tlayer, layer.to_empty(device="cpu") is layer] == [
        True, True]
    assert tlayer.compile() is None and layer.compile() is None


def test_type_to_an_integer_dtype_is_refused_while_a_parameter_requires_grad() -> None:
    net = _tree()
    before = {name: t.detach().clone() for name, t in net.state_dict().items()}
    with pytest.raises(RuntimeError, match="requires gradients must be floating point"):
        net.type(tl.int64)
    # nothing changed: every conversion is made before any is set
    for name, tensor in net.state_dict().items():
        assert tensor.dtype == before[name].dtype and bool((tensor == before[name]).all())
    net.requires_grad_(False)
    net.type(tl.int64)
    assert net.head.weight.dtype == tl.int64


@pytest.mark.parity
def test_pytorch_refuses_the_integer_type_too() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="requires gradients must be floating point"):
        torch.nn.Linear(2, 2).type(torch.int64)
