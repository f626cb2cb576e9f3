"""Chapter 4, section 11.4: nn.utils.prune against PyTorch on Linear and Conv2d: masks, pruned
weights, state-dict keys and values, forward outputs, gradients of ``weight_orig``, repeated
pruning through a PruningContainer, global_unstructured, remove, is_pruned and the errors;
a float64 gradcheck through the hook. Inputs have no ties, so magnitude masks are PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

prune = tl.nn.utils.prune
RNG = np.random.default_rng(0)


def _numpy(t):
    return t.detach().numpy()


def _layers(torch, kind, seed=0):
    """The same float64 layer in both libraries, with distinct random weights (no ties)."""
    if kind == "linear":
        ours, theirs = tl.nn.Linear(5, 4, dtype=tl.float64), torch.nn.Linear(5, 4).double()
    else:
        ours, theirs = tl.nn.Conv2d(3, 6, 3, dtype=tl.float64), torch.nn.Conv2d(3, 6, 3).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _input(kind):
    return RNG.standard_normal((2, 5) if kind == "linear" else (2, 3, 5, 5))


def _assert_same(torch, ours, theirs, kind):
    """State dicts (keys in order, values), the pruned weight, a forward and the gradients."""
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(reference)
    for key in mine:
        np.testing.assert_array_equal(_numpy(mine[key]), _numpy(reference[key]), err_msg=key)
    np.testing.assert_array_equal(_numpy(ours.weight), _numpy(theirs.weight))
    x = _input(kind)
    a, b = ours(tl.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(_numpy(a), _numpy(b), rtol=1e-12, atol=1e-12)
    weights = RNG.standard_normal(tuple(a.shape))
    (a * tl.tensor(weights)).sum().backward()
    (b * torch.tensor(weights)).sum().backward()
    ours_grads = {n: p.grad.numpy() for n, p in ours.named_parameters()}
    theirs_grads = {n: p.grad.numpy() for n, p in theirs.named_parameters()}
    assert list(ours_grads) == list(theirs_grads)
    for name in ours_grads:
        np.testing.assert_allclose(ours_grads[name], theirs_grads[name], rtol=1e-12,
                                   atol=1e-12, err_msg=name)
    if hasattr(ours, "weight_mask"):  # no gradient reaches a pruned entry
        assert (ours_grads["weight_orig"][ours.weight_mask.numpy() == 0] == 0).all()


def _scores(shape):
    return RNG.standard_normal(shape)


CASES = [
    ("identity", lambda lib, m, s: lib.identity(m, "weight")),
    ("identity bias", lambda lib, m, s: lib.identity(m, "bias")),
    ("l1 count", lambda lib, m, s: lib.l1_unstructured(m, "weight", amount=7)),
    ("l1 fraction", lambda lib, m, s: lib.l1_unstructured(m, "weight", 0.35)),
    ("l1 zero", lambda lib, m, s: lib.l1_unstructured(m, "weight", 0)),
    ("l1 all", lambda lib, m, s: lib.l1_unstructured(m, "weight", 1.0)),
    ("l1 bias", lambda lib, m, s: lib.l1_unstructured(m, "bias", amount=2)),
    ("l1 scores", lambda lib, m, s: lib.l1_unstructured(m, "weight", 0.5, importance_scores=s)),
    ("ln 2 dim 0", lambda lib, m, s: lib.ln_structured(m, "weight", 0.5, 2, 0)),
    ("ln 1 dim 1", lambda lib, m, s: lib.ln_structured(m, "weight", 1, n=1, dim=1)),
    ("ln inf dim -1", lambda lib, m, s: lib.ln_structured(m, "weight", 2, math.inf, -1)),
    ("ln -inf dim 0", lambda lib, m, s: lib.ln_structured(m, "weight", 0.25, -math.inf, 0)),
    ("ln 3 dim 0", lambda lib, m, s: lib.ln_structured(m, "weight", 2, 3, 0)),
    ("ln -1 dim 0", lambda lib, m, s: lib.ln_structured(m, "weight", 1, -1, 0)),
    ("ln 0.5 dim 1", lambda lib, m, s: lib.ln_structured(m, "weight", 1, 0.5, 1)),
    ("ln zero", lambda lib, m, s: lib.ln_structured(m, "weight", 0, 2, 0)),
    ("ln scores", lambda lib, m, s: lib.ln_structured(m, "weight", 2, 1, 0, importance_scores=s)),
    ("method apply", lambda lib, m, s: lib.L1Unstructured.apply(m, "weight", amount=4)),
    ("method apply ln", lambda lib, m, s: lib.LnStructured.apply(m, "weight", 1, 2, dim=0)),
]


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_functions_match_pytorch(kind, case):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    call = dict(CASES)[case]
    ours, theirs = _layers(torch, kind)
    scores = _scores(tuple(ours.weight.shape))
    call(prune, ours, tl.tensor(scores))
    call(torch_prune, theirs, torch.tensor(scores))
    name = "bias" if "bias" in case else "weight"
    np.testing.assert_array_equal(getattr(ours, name + "_mask").numpy(),
                                  getattr(theirs, name + "_mask").numpy())
    assert getattr(ours, name + "_mask").dtype == tl.float64
    orig = _numpy(getattr(ours, name + "_orig"))
    np.testing.assert_array_equal(_numpy(getattr(ours, name)),
                                  orig * getattr(ours, name + "_mask").numpy())
    assert isinstance(getattr(ours, name + "_orig"), tl.nn.Parameter)
    assert name not in dict(ours.named_parameters())
    assert prune.is_pruned(ours) and torch_prune.is_pruned(theirs)
    if name == "weight":
        _assert_same(torch, ours, theirs, kind)


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_custom_from_mask_matches_pytorch(kind):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, kind)
    mask = (RNG.random(tuple(ours.weight.shape)) > 0.4).astype(np.int64)  # an int mask
    prune.custom_from_mask(ours, "weight", mask=tl.tensor(mask))
    torch_prune.custom_from_mask(theirs, "weight", mask=torch.tensor(mask))
    assert ours.weight_mask.dtype == tl.float64
    _assert_same(torch, ours, theirs, kind)
    prune.custom_from_mask(ours, name="bias", mask=tl.tensor([0, 1, 0, 1] + [1] * (
        ours.bias.shape[0] - 4)))
    torch_prune.custom_from_mask(theirs, name="bias", mask=torch.tensor([0, 1, 0, 1] + [1] * (
        theirs.bias.shape[0] - 4)))
    _assert_same(torch, ours, theirs, kind)


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_repeated_pruning_stacks_in_a_container(kind):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, kind, seed=3)
    extra = (RNG.random(tuple(ours.weight.shape)) > 0.2).astype(np.float64)
    steps = [
        lambda lib, m, t: lib.l1_unstructured(m, "weight", amount=0.3),
        lambda lib, m, t: lib.ln_structured(m, "weight", amount=1, n=2, dim=0),
        lambda lib, m, t: lib.l1_unstructured(m, "weight", amount=3),
        lambda lib, m, t: lib.ln_structured(m, "weight", amount=0.5, n=1, dim=1),
        lambda lib, m, t: lib.custom_from_mask(m, "weight", mask=t(extra)),
        lambda lib, m, t: lib.l1_unstructured(m, "weight", amount=0.5),
    ]
    for count, step in enumerate(steps, start=1):
        step(prune, ours, tl.tensor)
        step(torch_prune, theirs, torch.tensor)
        np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())
        (hook,) = ours._forward_pre_hooks.values()
        (their_hook,) = theirs._forward_pre_hooks.values()
        assert type(hook).__name__ == type(their_hook).__name__
        if count > 1:
            assert isinstance(hook, prune.PruningContainer) and len(hook) == count
            assert [type(m).__name__ for m in hook] == [type(m).__name__ for m in their_hook]
            assert hook[-1]._tensor_name == "weight"
        _assert_same(torch, ours, theirs, kind)
        ours.zero_grad()
        theirs.zero_grad()


@pytest.mark.parity
def test_an_optimizer_step_on_weight_orig_reaches_the_weight():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, "linear")
    prune.l1_unstructured(ours, "weight", 6)
    torch_prune.l1_unstructured(theirs, "weight", 6)
    x = _input("linear")
    ours(tl.tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    tl.optim.SGD(ours.parameters(), lr=0.1).step()
    torch.optim.SGD(theirs.parameters(), lr=0.1).step()
    _assert_same(torch, ours, theirs, "linear")  # the hook recomputed weight from weight_orig


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("extra", ["none", "structured"])
def test_remove_makes_it_permanent(kind, extra):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, kind)
    for lib, module in ((prune, ours), (torch_prune, theirs)):
        lib.l1_unstructured(module, "weight", amount=0.4)
        lib.l1_unstructured(module, "bias", amount=1)
        if extra == "structured":
            lib.ln_structured(module, "weight", amount=1, n=2, dim=0)
        lib.remove(module, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias_orig", "weight",
                                                                    "bias_mask"]
    assert isinstance(ours.weight, tl.nn.Parameter) and ours.weight.requires_grad
    assert prune.is_pruned(ours) and torch_prune.is_pruned(theirs)  # bias still is
    _assert_same(torch, ours, theirs, kind)
    prune.remove(ours, "bias")
    torch_prune.remove(theirs, "bias")
    assert not prune.is_pruned(ours) and not torch_prune.is_pruned(theirs)
    assert not ours._forward_pre_hooks
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias"]
    _assert_same(torch, ours, theirs, kind)


@pytest.mark.parity
@pytest.mark.parametrize("amount", [10, 0.3, 0, 1.0])
def test_global_unstructured_matches_pytorch(amount):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    pairs = [_layers(torch, "linear", seed=1), _layers(torch, "conv", seed=2)]
    for (ours, theirs), scale in zip(pairs, (1.0, 3.0), strict=True):
        with torch.no_grad():  # the second layer's weights are larger: it loses fewer
            theirs.weight.mul_(scale)
        ours.load_state_dict(theirs.state_dict())
    prune.global_unstructured([(pairs[0][0], "weight"), (pairs[1][0], "weight"),
                               (pairs[1][0], "bias")], prune.L1Unstructured, amount=amount)
    torch_prune.global_unstructured([(pairs[0][1], "weight"), (pairs[1][1], "weight"),
                                     (pairs[1][1], "bias")], torch_prune.L1Unstructured,
                                    amount=amount)
    for (ours, theirs), kind in zip(pairs, ("linear", "conv"), strict=True):
        hook_types = [type(h).__name__ for h in ours._forward_pre_hooks.values()]
        assert hook_types == [type(h).__name__ for h in theirs._forward_pre_hooks.values()]
        _assert_same(torch, ours, theirs, kind)
    # a second round ranks only what is still kept, and stacks on the first masks
    prune.global_unstructured([(pairs[0][0], "weight"), (pairs[1][0], "weight")],
                              prune.L1Unstructured, amount=0.2)
    torch_prune.global_unstructured([(pairs[0][1], "weight"), (pairs[1][1], "weight")],
                                    torch_prune.L1Unstructured, amount=0.2)
    for (ours, theirs), kind in zip(pairs, ("linear", "conv"), strict=True):
        np.testing.assert_array_equal(ours.weight_mask.numpy(), theirs.weight_mask.numpy())
        ours.zero_grad()
        theirs.zero_grad()
        _assert_same(torch, ours, theirs, kind)


@pytest.mark.parity
def test_global_unstructured_with_importance_scores():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    (a, ta), (b, tb) = _layers(torch, "linear", seed=4), _layers(torch, "conv", seed=5)
    s_a = _scores(tuple(a.weight.shape))
    prune.global_unstructured(((a, "weight"), (b, "weight")), prune.L1Unstructured,
                              importance_scores={(a, "weight"): tl.tensor(s_a)}, amount=50)
    torch_prune.global_unstructured(((ta, "weight"), (tb, "weight")), torch_prune.L1Unstructured,
                                    importance_scores={(ta, "weight"): torch.tensor(s_a)},
                                    amount=50)
    np.testing.assert_array_equal(a.weight_mask.numpy(), ta.weight_mask.numpy())
    np.testing.assert_array_equal(b.weight_mask.numpy(), tb.weight_mask.numpy())
    assert int((a.weight_mask.numpy() == 0).sum() + (b.weight_mask.numpy() == 0).sum()) == 50


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_random_methods_have_pytorchs_structure(kind):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, kind)
    tl.manual_seed(0)
    torch.manual_seed(0)
    prune.random_unstructured(ours, "weight", amount=0.4)
    torch_prune.random_unstructured(theirs, "weight", amount=0.4)
    assert (ours.weight_mask.numpy() == 0).sum() == (theirs.weight_mask.numpy() == 0).sum()
    prune.random_structured(ours, "weight", amount=1, dim=0)
    torch_prune.random_structured(theirs, "weight", amount=1, dim=0)
    prune.random_unstructured(ours, "bias", 2)
    torch_prune.random_unstructured(theirs, "bias", 2)
    mask = ours.weight_mask.numpy()
    rows = mask.reshape(mask.shape[0], -1).sum(axis=1)
    their_rows = theirs.weight_mask.numpy().reshape(mask.shape[0], -1).sum(axis=1)
    assert (rows == 0).sum() == (their_rows == 0).sum() == 1
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_array_equal(_numpy(ours.weight), _numpy(ours.weight_orig) * mask)
    # our draws come from tensorlib's default generator: the same seed, the same masks
    again, _ = _layers(torch, kind)
    tl.manual_seed(0)
    prune.random_unstructured(again, "weight", amount=0.4)
    prune.random_structured(again, "weight", amount=1, dim=0)
    np.testing.assert_array_equal(again.weight_mask.numpy(), mask)


def test_random_structured_prunes_whole_channels_among_the_kept():
    tl.manual_seed(1)
    conv = tl.nn.Conv2d(3, 8, 3)
    prune.random_structured(conv, "weight", amount=0.25, dim=0)
    prune.random_structured(conv, "weight", amount=2, dim=0)
    sums = conv.weight_mask.numpy().sum(axis=(1, 2, 3))
    assert sorted(set(sums.tolist())) == [0.0, 27.0] and (sums == 0).sum() == 4
    prune.random_unstructured(conv, "weight", amount=1.0)  # all of what is left
    assert not conv.weight_mask.numpy().any()


@pytest.mark.parity
@pytest.mark.parametrize(
    "call",
    [
        lambda lib, m: lib.l1_unstructured(m, "weight", amount=1.5),
        lambda lib, m: lib.l1_unstructured(m, "weight", amount=-1),
        lambda lib, m: lib.l1_unstructured(m, "weight", amount=-0.1),
        lambda lib, m: lib.l1_unstructured(m, "weight", amount=21),
        lambda lib, m: lib.random_unstructured(m, "weight", amount="half"),
        lambda lib, m: lib.random_structured(m, "weight", amount=5, dim=0),
        lambda lib, m: lib.ln_structured(m, "weight", amount=1, n=2, dim=2),
        lambda lib, m: lib.ln_structured(m, "bias", amount=1, n=2, dim=0),
        lambda lib, m: lib.random_structured(m, "bias", amount=1, dim=-1),
        lambda lib, m: lib.ln_structured(m, "weight", amount=1, n="nuc", dim=0),
        lambda lib, m: lib.ln_structured(m, "weight", amount=1, n="max", dim=0),
        lambda lib, m: lib.remove(m, "weight"),
        lambda lib, m: lib.global_unstructured([(m, "weight")], lib.RandomStructured, amount=1),
        lambda lib, m: lib.global_unstructured(3, lib.L1Unstructured, amount=1),
        lambda lib, m: lib.global_unstructured([(m, "weight")], lib.L1Unstructured,
                                               importance_scores=[], amount=1),
    ],
    ids=["float>1", "int<0", "float<0", "too many", "str", "too many channels", "dim",
         "1-d ln", "1-d random", "nuc", "bad norm", "remove unpruned", "global structured",
         "global not iterable", "global scores not dict"],
)
def test_errors_match_pytorch(call):
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, "linear")
    with pytest.raises(Exception) as reference:
        call(torch_prune, theirs)
    with pytest.raises(type(reference.value)) as mine:
        call(prune, ours)
    text, expected = str(mine.value), str(reference.value)
    # PyTorch prints torch.Size([4, 5]), classes and modules by their torch names: compare
    # the text up to the first of those
    for marker in ("torch.Size", "(4, 5)", "(4,)", "<class", "Linear("):
        expected, text = expected.split(marker)[0], text.split(marker)[0]
    assert text == expected
    assert not prune.is_pruned(ours)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_error_messages():
    layer = tl.nn.Linear(5, 4)
    with pytest.raises(ValueError, match=r"amount=1.5 should either be a float in the range"):
        prune.l1_unstructured(layer, "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type for amount: half. Must be int or float."):
        prune.L1Unstructured("half")
    with pytest.raises(ValueError, match="amount=21 should be smaller than the number of "
                                         "parameters to prune=20"):
        prune.l1_unstructured(layer, "weight", amount=21)
    with pytest.raises(IndexError, match=r"Invalid index 2 for tensor of size \(4, 5\)"):
        prune.ln_structured(layer, "weight", amount=1, n=2, dim=2)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to "
                                         r"multidimensional tensors. Found tensor of shape \(4,\)"):
        prune.random_structured(layer, "bias", amount=1, dim=0)
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(layer, "weight", 2, importance_scores=tl.zeros(5, 4))
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.L1Unstructured(2).prune(tl.zeros(3), importance_scores=tl.zeros(4))
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(layer, "weight")
    first, second = prune.L1Unstructured(1), prune.L1Unstructured(1)
    first._tensor_name, second._tensor_name = "weight", "bias"
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        prune.PruningContainer(first).add_pruning_method(3)
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter "
                                         "named 'weight' to PruningContainer"):
        prune.PruningContainer(first, second)


def test_a_failed_pruning_leaves_the_module_as_it_was():
    layer = tl.nn.Linear(5, 4)
    weight = layer.weight
    with pytest.raises(ValueError):
        prune.l1_unstructured(layer, "weight", amount=21)
    assert layer.weight is weight and not prune.is_pruned(layer)
    assert list(layer.state_dict()) == ["bias", "weight"]  # PyTorch's order after the undo
    prune.l1_unstructured(layer, "weight", amount=5)
    mask = layer.weight_mask.numpy().copy()
    with pytest.raises(ValueError):  # 15 are left: PyTorch loses the hook here, we keep it
        prune.l1_unstructured(layer, "weight", amount=16)
    (hook,) = layer._forward_pre_hooks.values()
    assert isinstance(hook, prune.L1Unstructured)
    np.testing.assert_array_equal(layer.weight_mask.numpy(), mask)


@pytest.mark.parity
def test_prune_on_a_bare_tensor_matches_pytorch():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    t = RNG.standard_normal((4, 6))
    default = (RNG.random((4, 6)) > 0.3).astype(np.float64)
    for ours, theirs in [
        (prune.L1Unstructured(5), torch_prune.L1Unstructured(5)),
        (prune.LnStructured(2, 2, dim=1), torch_prune.LnStructured(2, 2, dim=1)),
        (prune.CustomFromMask(tl.tensor(default)), torch_prune.CustomFromMask(torch.tensor(
            default))),
    ]:
        np.testing.assert_array_equal(
            ours.prune(tl.tensor(t)).numpy(), theirs.prune(torch.tensor(t)).numpy())
        np.testing.assert_array_equal(
            ours.prune(tl.tensor(t), default_mask=tl.tensor(default)).numpy(),
            theirs.prune(torch.tensor(t), default_mask=torch.tensor(default)).numpy())
        np.testing.assert_array_equal(
            ours.compute_mask(tl.tensor(t), tl.tensor(default)).numpy(),
            theirs.compute_mask(torch.tensor(t), torch.tensor(default)).numpy())
    identity = prune.IdentityPruning()
    assert identity.compute_mask(tl.tensor(t), tl.tensor(default)).numpy().tolist() == \
        torch_prune.Identity().compute_mask(torch.tensor(t), torch.tensor(default)).tolist()
    assert [c.PRUNING_TYPE for c in (prune.IdentityPruning, prune.RandomUnstructured,
                                     prune.L1Unstructured, prune.RandomStructured,
                                     prune.LnStructured, prune.CustomFromMask)] == [
        c.PRUNING_TYPE for c in (torch_prune.Identity, torch_prune.RandomUnstructured,
                                 torch_prune.L1Unstructured, torch_prune.RandomStructured,
                                 torch_prune.LnStructured, torch_prune.CustomFromMask)]


@pytest.mark.parity
def test_a_pytorch_checkpoint_of_a_pruned_model_loads():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours, theirs = _layers(torch, "conv")
    torch_prune.ln_structured(theirs, "weight", amount=2, n=1, dim=0)
    torch_prune.l1_unstructured(theirs, "weight", amount=0.2)
    prune.identity(ours, "weight")  # the layout, so that the keys match
    ours.load_state_dict(theirs.state_dict())
    ours(tl.tensor(_input("conv")))  # the hook recomputes weight from the loaded tensors
    _assert_same(torch, ours, theirs, "conv")


@pytest.mark.parity
def test_is_pruned_looks_through_the_tree():
    torch = pytest.importorskip("torch")
    import torch.nn.utils.prune as torch_prune

    ours = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.Sequential(tl.nn.ReLU(), tl.nn.Linear(4, 2)))
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4),
                                 torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(4, 2)))
    assert prune.is_pruned(ours) is torch_prune.is_pruned(theirs) is False
    prune.random_unstructured(ours[1][1], "weight", amount=1)
    torch_prune.random_unstructured(theirs[1][1], "weight", amount=1)
    assert prune.is_pruned(ours) is torch_prune.is_pruned(theirs) is True
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_gradcheck_through_the_hook():
    layer = tl.nn.Linear(5, 4, dtype=tl.float64)
    prune.l1_unstructured(layer, "weight", amount=0.4)
    prune.ln_structured(layer, "weight", amount=1, n=2, dim=0)
    x = tl.tensor(RNG.standard_normal((3, 5)))
    orig = tl.tensor(layer.weight_orig.detach().numpy().copy(), requires_grad=True)
    bias = tl.tensor(layer.bias.detach().numpy().copy(), requires_grad=True)
    call = tl.nn.utils.stateless.functional_call
    assert tl.autograd.gradcheck(
        lambda w, b: call(layer, {"weight_orig": w, "bias": b}, (x,)), (orig, bias))
    # the gradient is the mask times the unpruned layer's: zero at every pruned entry
    (grad,) = tl.autograd.grad(call(layer, {"weight_orig": orig}, (x,)).sum(), orig)
    expected = layer.weight_mask.numpy() * (np.ones((3, 4)).T @ x.numpy())
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-12)
