"""More stand-ins for torch modules model libraries import (chapter 8, section 16): torch.fx,
torch.hub and torch.utils.model_zoo, torch.nn.attention, torch.jit.annotations and
torch.utils._pytree (parity with PyTorch's); and a failed tensorlib.save leaves no file
(chapter 7)."""

from __future__ import annotations

import collections
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.fx
import tensorlib.hub
import tensorlib.utils.model_zoo
from tensorlib.nn.attention import SDPBackend, sdpa_kernel
from tensorlib.utils import _pytree as pytree

REPO = Path(__file__).resolve().parent.parent

Point = collections.namedtuple("Point", "x y")


@tensorlib.fx.wrap
def _wrapped(x):
    return x


tensorlib.fx.wrap("_wrapped")  # the string form, at a module's top level


def test_fx_wrap_returns_its_argument_and_checks_where_it_is_called():
    assert _wrapped(3) == 3
    scope = {"tensorlib": tensorlib}
    exec("name = tensorlib.fx.wrap('name')", scope)  # exec runs code as a module's top level
    assert scope["name"] == "name"
    with pytest.raises(AssertionError, match="global function or string"):
        exec("tensorlib.fx.wrap(3)", {"tensorlib": tensorlib})


def test_fx_wrap_inside_a_function_raises_as_pytorch():
    with pytest.raises(NotImplementedError, match="top level of a module"):
        tensorlib.fx.wrap("name")


@pytest.mark.parametrize("make", [
    lambda: tensorlib.fx.symbolic_trace(tl.nn.Linear(2, 2)),
    lambda: tensorlib.fx.GraphModule(tl.nn.Linear(2, 2), None),
    lambda: tensorlib.fx.Tracer(),
    lambda: tensorlib.fx.Graph(),
    lambda: tensorlib.fx.Proxy(None),
])
def test_fx_tracing_raises_not_implemented(make):
    with pytest.raises(NotImplementedError, match="no symbolic tracing"):
        make()
    assert not isinstance(tl.ones(1), tensorlib.fx.Proxy)


def test_hub_dir_follows_torch_home(monkeypatch, tmp_path):
    monkeypatch.setattr(tensorlib.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert tensorlib.hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tensorlib.hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    tensorlib.hub.set_dir(tmp_path / "mine")
    assert tensorlib.hub.get_dir() == str(tmp_path / "mine")


@pytest.mark.parity
def test_hub_get_dir_matches_pytorch(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(tensorlib.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert tensorlib.hub.get_dir() == torch.hub.get_dir()


def test_load_state_dict_from_url_loads_only_from_the_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(tensorlib.hub, "_hub_dir", str(tmp_path))
    url = "https://example.com/models/net-0123abcd.pth?download=1"
    with pytest.raises(RuntimeError, match=r"cannot fetch 'https://example.com/models/net-0123"):
        tensorlib.hub.load_state_dict_from_url(url)
    with pytest.raises(RuntimeError, match="net-0123abcd.pth"):
        tensorlib.utils.model_zoo.load_url(url)
    (tmp_path / "checkpoints").mkdir()
    tl.save({"w": tl.arange(3.0)}, tmp_path / "checkpoints" / "net-0123abcd.pth")
    state = tensorlib.hub.load_state_dict_from_url(url)
    assert list(state) == ["w"] and state["w"].tolist() == [0.0, 1.0, 2.0]
    tl.save({"v": tl.ones(1)}, tmp_path / "other.pt")
    state = tensorlib.utils.model_zoo.load_url(url, model_dir=str(tmp_path), file_name="other.pt")
    assert list(state) == ["v"]
    with pytest.raises(RuntimeError, match="cannot fetch 'https://x/y.pt'"):
        tensorlib.hub.download_url_to_file("https://x/y.pt", str(tmp_path / "y.pt"))
    assert not (tmp_path / "y.pt").exists()


def test_hub_load_and_list_raise():
    with pytest.raises(RuntimeError, match="hub repositories"):
        tensorlib.hub.load("facebookresearch/dino:main", "dino_vits16")
    with pytest.raises(RuntimeError, match="hub repositories"):
        tensorlib.hub.list("pytorch/vision")


@pytest.mark.parity
def test_sdp_backend_members_match_pytorch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend

    ours = {name: int(member) for name, member in SDPBackend.__members__.items()}
    theirs = {name: int(member) for name, member in TorchBackend.__members__.items()}
    assert ours == theirs
    pairs = zip(SDPBackend, TorchBackend.__members__.values(), strict=True)
    for ours_member, theirs_member in pairs:
        assert str(ours_member) == str(theirs_member) and repr(ours_member) == repr(theirs_member)
        assert (ours_member == int(ours_member)) is (theirs_member == int(theirs_member)) is False
    assert torch is not None


def test_sdpa_kernel_changes_nothing_and_checks_its_argument():
    q, k, v = (tl.randn(2, 3, 4, 5, dtype=tl.float64) for _ in range(3))
    F = tl.nn.functional
    plain = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for backends in (SDPBackend.FLASH_ATTENTION, [SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]):
        with sdpa_kernel(backends, set_priority=True) as state:
            assert state == {}
            assert tl.equal(F.scaled_dot_product_attention(q, k, v, is_causal=True), plain)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("flash"):
            pass
    with pytest.raises(TypeError, match="SDPBackend members"):
        with sdpa_kernel([1]):
            pass


def test_jit_annotations_is_a_submodule_with_typing_names():
    import typing

    from tensorlib.jit import annotations
    from tensorlib.jit.annotations import Dict, List, Optional, Tuple

    assert (List, Tuple, Optional, Dict) == (typing.List, typing.Tuple, typing.Optional,  # noqa: UP006
                                             typing.Dict)  # noqa: UP006
    assert tl.jit.annotations is annotations and annotations.Any is typing.Any
    assert annotations.BroadcastingList2[int] == typing.Union[int, typing.List[int]]  # noqa: UP006, UP007
    assert tl.jit.script(len) is len and tl.jit.is_scripting() is False


def _pytree_cases():
    return [
        None, 1, "s", (), [], {}, [[]],
        (1, [2, None], {"b": 3, "a": 4}),
        collections.OrderedDict(b=1, a=[2, 3]),
        Point(1, (2,)),
        collections.defaultdict(list, {"z": 1, "a": 2}),
        collections.deque([1, 2], maxlen=3),
        {"k": Point(None, [1]), 2: (3.5, ("x",))},
    ]


@pytest.mark.parity
@pytest.mark.parametrize("index", range(13))
def test_pytree_flatten_matches_pytorch(index):
    torch_pytree = pytest.importorskip("torch.utils._pytree")
    tree = _pytree_cases()[index]
    leaves, spec = pytree.tree_flatten(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch_leaves, torch_spec = torch_pytree.tree_flatten(tree)
        assert spec.num_leaves == torch_spec.num_leaves
        assert spec.num_nodes == torch_spec.num_nodes
        assert spec.num_children == torch_spec.num_children
    assert leaves == torch_leaves and repr(spec) == repr(torch_spec)
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert pytree.tree_leaves(tree) == torch_pytree.tree_leaves(tree)
    assert pytree.tree_structure(tree) == spec


@pytest.mark.parity
def test_pytree_map_matches_pytorch_on_tensors():
    torch = pytest.importorskip("torch")
    from torch.utils import _pytree as torch_pytree

    data = np.arange(6.0).reshape(2, 3)
    ours = {"x": (tl.tensor(data), [tl.tensor(data[0])]), "n": None, "k": 2}
    theirs = {"x": (torch.tensor(data), [torch.tensor(data[0])]), "n": None, "k": 2}
    mapped = pytree.tree_map_only(tl.Tensor, lambda t: t.exp(), ours)
    expected = torch_pytree.tree_map_only(torch.Tensor, lambda t: t.exp(), theirs)
    np.testing.assert_allclose(mapped["x"][0].numpy(), expected["x"][0].numpy())
    np.testing.assert_allclose(mapped["x"][1][0].numpy(), expected["x"][1][0].numpy())
    assert mapped["n"] is None and mapped["k"] == 2
    assert pytree.tree_map(lambda a, b: a + b, (1, [2, 3]), (4, [5, 6])) == (5, [7, 9])
    assert pytree.tree_map_only((int, float), lambda x: -x, [1, "a", 2.5]) == [-1, "a", -2.5]
    assert pytree.tree_map_only(lambda x: x == 2, lambda x: 0, [1, 2]) == [1, 0]
    leaves, spec = pytree.tree_flatten([1, [2]], is_leaf=lambda x: x == [2])
    assert leaves == [1, [2]] and spec.num_leaves == 2


class _Box:
    """A class a test registers as a pytree container (registration is for the process)."""

    def __init__(self, items, name):
        self.items, self.name = list(items), name

    def __eq__(self, other):
        return isinstance(other, _Box) and (self.items, self.name) == (other.items, other.name)


def _flatten_box(box):
    return box.items, box.name


def _unflatten_box(children, name):
    return _Box(children, name)


@pytest.mark.parity
def test_registered_pytree_nodes_flatten_as_in_pytorch():
    torch_pytree = pytest.importorskip("torch.utils._pytree")
    for module in (pytree, torch_pytree):
        if _Box not in module.SUPPORTED_NODES:
            module.register_pytree_node(_Box, _flatten_box, _unflatten_box)
    tree = {"a": _Box([1, (2, None)], "first"), "b": [_Box([], "empty")]}
    leaves, spec = pytree.tree_flatten(tree)
    torch_leaves, torch_spec = torch_pytree.tree_flatten(tree)
    assert leaves == torch_leaves == [1, 2, None]
    assert repr(spec) == repr(torch_spec)
    assert pytree.tree_unflatten(leaves, spec) == tree
    assert pytree.tree_map(lambda x: x, tree) == tree
    doubled = pytree.tree_map_only(int, lambda x: 2 * x, tree)
    assert doubled["a"] == _Box([2, (4, None)], "first")
    assert pytree.tree_structure(_Box([1], "x")) != pytree.tree_structure(_Box([1], "y"))
    assert isinstance(pytree.SUPPORTED_NODES[_Box], pytree.NodeDef)
    assert set(pytree.SUPPORTED_NODES) >= {tuple, list, dict, _Box}
    for module in (pytree, torch_pytree):  # a second registration raises the same error
        with pytest.raises(ValueError, match="is already registered as pytree node"):
            module.register_pytree_node(_Box, _flatten_box, _unflatten_box)
        with pytest.raises(ValueError, match="is already registered as pytree node"):
            module.register_pytree_node(dict, _flatten_box, _unflatten_box)


def test_old_private_registration_name_warns_and_registers():
    class Old:
        def __init__(self, value):
            self.value = value

    with pytest.warns(FutureWarning, match="_register_pytree_node` is deprecated"):
        pytree._register_pytree_node(Old, lambda o: ([o.value], None), lambda c, _: Old(*c))
    assert pytree.tree_leaves([Old(3), 4]) == [3, 4]
    with pytest.raises(TypeError, match="flatten_fn must be callable"):
        pytree.register_pytree_node(type("New", (), {}), None, lambda c, _: None)


def test_pytree_errors():
    with pytest.raises(ValueError, match="length 1 but the spec refers to a pytree that holds 2"):
        pytree.tree_unflatten([1], pytree.tree_structure([1, 2]))
    with pytest.raises(TypeError, match="Expected `treespec` to be instance of TreeSpec"):
        pytree.tree_unflatten([1], [1])
    with pytest.raises(ValueError, match="tree_map: a tree has structure"):
        pytree.tree_map(lambda a, b: a, (1, [2, 3]), (4, [5]))
    assert pytree.LeafSpec().is_leaf() and repr(pytree.LeafSpec()) == "*"
    assert pytree.tree_structure({"a": 1}) != pytree.tree_structure({"b": 1})


class _Local:
    pass


@pytest.mark.parametrize("obj", [lambda: 1, {"w": tl.ones(2), "f": lambda: 1}, "local"])
def test_a_failed_save_leaves_no_file_and_keeps_an_old_one(tmp_path, obj):
    if isinstance(obj, str):
        class Local:  # a class pickle cannot name
            pass

        obj = {"x": Local()}
    new, old = tmp_path / "new.pt", tmp_path / "old.pt"
    old.write_bytes(b"previous checkpoint")
    for path in (new, str(new), old):
        # what torch.save raises: pickle cannot write a lambda or a local class
        with pytest.raises((pickle.PicklingError, AttributeError)):
            tl.save(obj, path)
    assert not new.exists() and old.read_bytes() == b"previous checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.pt"]  # no temporary left behind


def _run_as_torch(tmp_path, source):
    """``source`` written to a script and run with ``python -m tensorlib.run_as_torch``; it must
    succeed."""
    script = tmp_path / "prog.py"
    script.write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tensorlib.run_as_torch", str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_fx_file_names_resolve_through_run_as_torch(tmp_path):
    done = _run_as_torch(
        tmp_path,
        "import torch\nfrom torch.fx._symbolic_trace import is_fx_tracing\n"
        "from torch.fx.graph_module import GraphModule\nfrom torch.fx.proxy import Proxy\n"
        "print(is_fx_tracing(), GraphModule is torch.fx.GraphModule, Proxy is torch.fx.Proxy)\n",
    )
    assert done.stdout.strip() == "False True True"
    assert tensorlib.fx.is_fx_tracing() is False


def test_programs_import_the_new_modules_through_run_as_torch(tmp_path):
    done = _run_as_torch(
        tmp_path,
        "import torch\nimport torch.fx\nfrom torch.jit.annotations import List, Optional\n"
        "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
        "from torch.utils._pytree import tree_map\nfrom torch.utils.model_zoo import load_url\n"
        "from torch.hub import load_state_dict_from_url\n\n\n@torch.fx.wrap\ndef f(x):\n"
        "    return x\n\n\ntorch.fx.wrap('f')\nwith sdpa_kernel(SDPBackend.MATH):\n"
        "    y = tree_map(lambda t: t * 2, {'a': torch.ones(2)})\n"
        "print(y['a'].tolist(), torch.hub.get_dir() != '', load_url is load_state_dict_from_url)\n",
    )
    assert done.stdout.strip() == "[2.0, 2.0] True True"
