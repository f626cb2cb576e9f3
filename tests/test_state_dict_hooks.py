"""Chapter 4, section 2.5: the module's checkpoint hooks, ``register_state_dict_pre_hook``,
``register_state_dict_post_hook``, ``register_load_state_dict_pre_hook`` and
``register_load_state_dict_post_hook``: their calls and arguments against PyTorch's on the same
trees, what they may change, and how they keep ``load_state_dict`` all or nothing."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.utils.hooks import RemovableHandle


def build(lib: Any) -> Any:
    """The same tree in tensorlib and in torch: Sequential(Linear, Sequential(Linear, Linear))."""
    return lib.nn.Sequential(
        lib.nn.Linear(3, 4), lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Linear(4, 2))
    )


def arrays(state: Any) -> dict[str, np.ndarray]:
    return {k: np.array(v.detach().numpy() if hasattr(v, "detach") else v)
            for k, v in state.items()}


def record_everywhere(model: Any, register: str, log: list, make) -> list:
    """Register ``make(path)`` on every module of ``model``; returns the handles."""
    return [getattr(m, register)(make(path)) for path, m in model.named_modules()]


@pytest.mark.parity
def test_state_dict_hooks_are_called_as_in_pytorch():
    torch = pytest.importorskip("torch")
    def logged(lib: Any) -> list:
        model, log = build(lib), []
        record_everywhere(model, "register_state_dict_pre_hook", log,
                          lambda path: lambda m, prefix, keep_vars, path=path: log.append(
                              ("pre", path, type(m).__name__, prefix, keep_vars)))
        record_everywhere(model, "register_state_dict_post_hook", log,
                          lambda path: lambda m, sd, prefix, meta, path=path: log.append(
                              ("post", path, prefix, list(sd), dict(meta))))
        model.state_dict(keep_vars=True)
        return log

    assert logged(tl) == logged(torch)


@pytest.mark.parity
def test_a_state_dict_post_hook_changes_the_result_in_place_as_in_pytorch():
    torch = pytest.importorskip("torch")
    keys = []
    for lib in (tl, torch):
        model = build(lib)

        def rename(module, state_dict, prefix, local_metadata):
            state_dict[prefix + "w"] = state_dict.pop(prefix + "weight")

        model[1][0].register_state_dict_post_hook(rename)
        keys.append(list(model.state_dict()))
    assert keys[0] == keys[1] and "1.0.w" in keys[0]


@pytest.mark.parity
def test_a_state_dict_post_hook_returning_a_value_raises_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        model = build(lib)
        model.register_state_dict_post_hook(lambda m, sd, prefix, meta: {})
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            model.state_dict()


@pytest.mark.parity
@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("from_torch", [True, False])
def test_load_hooks_are_called_as_in_pytorch(strict, from_torch):
    """The same calls with the same arguments, for a torch checkpoint (which carries
    ``_metadata``) and for a plain dictionary."""
    torch = pytest.importorskip("torch")
    source = build(torch).double()

    def checkpoint(lib: Any) -> Any:
        if from_torch:
            return source.state_dict()
        plain = arrays(source.state_dict())
        return plain if lib is tl else {k: torch.as_tensor(v) for k, v in plain.items()}

    def logged(lib: Any) -> tuple:
        model, log = build(lib).double(), []

        def pre(path):
            def hook(m, sd, prefix, meta, strict_, missing, unexpected, errors):
                mine = sorted(k for k in sd if k.startswith(prefix))  # PyTorch filters children's
                log.append(("pre", path, prefix, dict(meta), strict_, mine, list(missing),
                            list(unexpected), list(errors)))
            return hook

        record_everywhere(model, "register_load_state_dict_pre_hook", log, pre)
        record_everywhere(model, "register_load_state_dict_post_hook", log,
                          lambda path: lambda m, keys, path=path: log.append(
                              ("post", path, list(keys.missing_keys),
                               list(keys.unexpected_keys))))
        result = model.load_state_dict(checkpoint(lib), strict=strict)
        # all pre-hooks run before all post-hooks here (the load validates, then copies);
        # PyTorch interleaves them module by module: each kind keeps PyTorch's order
        pre_calls = [entry for entry in log if entry[0] == "pre"]
        post_calls = [entry for entry in log if entry[0] == "post"]
        assert log == pre_calls + post_calls or lib is torch
        return pre_calls, post_calls, list(result.missing_keys), list(result.unexpected_keys)

    assert logged(tl) == logged(torch)


@pytest.mark.parity
def test_a_torch_checkpoints_metadata_reaches_the_pre_hooks():
    torch = pytest.importorskip("torch")
    source = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    seen = {}
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    for path, module in model.named_modules():
        module.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, *rest, path=path: seen.update({path: dict(meta)}))
    model.load_state_dict(source.state_dict())
    assert seen == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
    assert np.array_equal(model[0].weight.numpy(), source[0].weight.detach().numpy())


@pytest.mark.parity
def test_a_load_pre_hook_renames_keys_in_a_copy_as_in_pytorch():
    torch = pytest.importorskip("torch")
    source = build(torch)
    old = {k.replace("weight", "w"): v.detach().clone() + 1 for k, v in source.state_dict().items()}

    def rename(module, state_dict, prefix, meta, strict, missing, unexpected, errors):
        if prefix + "w" in state_dict:  # this module's weight, saved under its old name
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    for lib in (tl, torch):
        model = build(lib)
        for _, module in model.named_modules():
            module.register_load_state_dict_pre_hook(rename)
        assert model.load_state_dict(old).missing_keys == []
        assert "0.w" in old and "0.weight" not in old  # the caller's dictionary is not changed
        loaded = arrays(model.state_dict())
        for key, value in old.items():
            np.testing.assert_array_equal(loaded[key.replace(".w", ".weight")], value.numpy())


@pytest.mark.parity
def test_error_messages_and_keys_from_a_pre_hook_count_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        model = build(lib)
        state = model.state_dict()
        model[1].register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors:
            errors.append("old format: convert it first"))
        with pytest.raises(RuntimeError, match=r"(?s)Error\(s\) in loading state_dict for "
                                               r"Sequential:.*old format: convert it first"):
            model.load_state_dict(state, strict=False)
        other = build(lib)
        other.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors:
            missing.append("policy"))
        assert other.load_state_dict(state, strict=False).missing_keys == ["policy"]
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "policy"'):
            other.load_state_dict(state)


@pytest.mark.parity
def test_a_post_hook_may_accept_or_refuse_a_mismatch_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        model = build(lib)
        partial = {k: v for k, v in model.state_dict().items() if k != "0.bias"}

        def forgive(module, keys):
            keys.missing_keys.clear()

        handle = model.register_load_state_dict_post_hook(forgive)
        assert model.load_state_dict(partial).missing_keys == []  # strict, but accepted
        handle.remove()
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.bias"'):
            model.load_state_dict(partial)
        model.register_load_state_dict_post_hook(lambda module, keys: keys)
        with pytest.raises(AssertionError, match="not expected to return new values"):
            model.load_state_dict(model.state_dict())


def test_a_refused_load_with_post_hooks_changes_nothing():
    model = build(tl)
    before = arrays(model.state_dict())
    new = {k: v + 5.0 for k, v in before.items()}
    seen = []

    def look(module, keys):
        seen.append(float(module[0].weight.numpy()[0, 0]))  # post-hooks see the loaded values
        keys.unexpected_keys.append("not_acceptable")

    model.register_load_state_dict_post_hook(look)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "not_acceptable"'):
        model.load_state_dict(new)
    assert seen == [before["0.weight"][0, 0] + 5.0]
    after = arrays(model.state_dict())
    assert all(np.array_equal(after[k], before[k]) for k in before)
    # strict=False accepts it: the values stay
    assert model.load_state_dict(new, strict=False).unexpected_keys == ["not_acceptable"]
    assert np.array_equal(model[0].weight.numpy(), new["0.weight"])


def test_a_post_hook_that_raises_undoes_the_load():
    model = build(tl)
    before = arrays(model.state_dict())
    model[1][1].register_load_state_dict_post_hook(lambda m, keys: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        model.load_state_dict({k: v * 0 for k, v in before.items()}, strict=False)
    after = arrays(model.state_dict())
    assert all(np.array_equal(after[k], before[k]) for k in before)


def test_post_hooks_do_not_run_when_the_checkpoint_is_refused_before_the_copy():
    model = build(tl)
    calls = []
    model.register_load_state_dict_post_hook(lambda m, keys: calls.append(1))
    bad = arrays(model.state_dict())
    bad["0.weight"] = np.zeros((5, 5))
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        model.load_state_dict(bad)
    model.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, missing, unexpected, errors: errors.append("no"))
    with pytest.raises(RuntimeError, match="\tno"):
        model.load_state_dict(arrays(model.state_dict()))
    assert calls == []


@pytest.mark.parity
def test_loading_does_not_run_the_state_dict_hooks():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        model = build(lib)
        state = model.state_dict()
        calls: list[str] = []
        model.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars, calls=calls: calls.append(prefix))
        model.register_state_dict_post_hook(
            lambda m, sd, prefix, meta: sd.pop(prefix + "0.weight"))
        model.load_state_dict(state)  # the targets are not the post-hook's result
        assert calls == []


def test_handles_remove_hooks_and_hooks_survive_copies():
    model = build(tl)
    calls = []
    handles = [
        model.register_state_dict_pre_hook(lambda m, prefix, keep_vars: calls.append("pre")),
        model.register_state_dict_post_hook(lambda m, sd, prefix, meta: calls.append("post")),
        model.register_load_state_dict_pre_hook(lambda m, sd, *rest: calls.append("load pre")),
        model.register_load_state_dict_post_hook(lambda m, keys: calls.append("load post")),
    ]
    assert all(isinstance(h, RemovableHandle) for h in handles)
    copy.deepcopy(model).load_state_dict(copy.deepcopy(model).state_dict())
    assert calls == ["pre", "post", "load pre", "load post"]
    for handle in handles:
        handle.remove()
    calls.clear()
    model.load_state_dict(model.state_dict())
    assert calls == []
    assert list(pickle.loads(pickle.dumps(model)).state_dict()) == list(model.state_dict())


@pytest.mark.parametrize("method", [
    "register_state_dict_pre_hook", "register_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
])
def test_a_hook_that_is_not_callable_is_refused(method):
    with pytest.raises(TypeError, match=f"{method}: expected a callable hook, got int"):
        getattr(nn.Linear(2, 2), method)(3)


def test_load_state_dict_without_a_mapping_is_still_a_type_error():
    model = nn.Linear(2, 2)
    model.register_load_state_dict_pre_hook(lambda *args: None)
    with pytest.raises(TypeError, match="expected state_dict to be a dict-like mapping"):
        model.load_state_dict([1, 2])
