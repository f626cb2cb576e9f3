"""Chapter 4, sections 11.1 and 11.2: parameters_to_vector, nn.utils.parametrize,
weight_norm and spectral_norm (both forms), against PyTorch: values, gradients, state-dict keys,
loading PyTorch's checkpoints; float64 gradchecks; errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

P = tl.nn.utils.parametrize
RNG = np.random.default_rng(0)


def _layers(torch, kind):
    """The same layer (float64, same weights) in both libraries."""
    if kind == "linear":
        ours, theirs = tl.nn.Linear(5, 4, dtype=tl.float64), torch.nn.Linear(5, 4).double()
    elif kind == "conv":
        ours, theirs = tl.nn.Conv2d(2, 3, 3, dtype=tl.float64), torch.nn.Conv2d(2, 3, 3).double()
    else:
        ours = tl.nn.ConvTranspose2d(3, 2, 3, dtype=tl.float64)
        theirs = torch.nn.ConvTranspose2d(3, 2, 3).double()
    ours.load_state_dict(theirs.state_dict())
    return ours, theirs


def _input(kind):
    return RNG.standard_normal((2, 5) if kind == "linear" else (2, 3 if kind == "convT" else 2,
                                                                6, 6))


def _grads(module):
    return {name: p.grad.numpy() if hasattr(p.grad, "numpy") else p.grad.detach().numpy()
            for name, p in module.named_parameters()}


def _run(torch, ours, theirs, x):
    """Forward both on ``x``, backward a weighted sum; compare outputs and every gradient."""
    a, b = ours(tl.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    weights = RNG.standard_normal(tuple(a.shape))
    (a * tl.tensor(weights)).sum().backward()
    (b * torch.tensor(weights)).sum().backward()
    mine, reference = _grads(ours), _grads(theirs)
    assert list(mine) == list(reference)
    for name in mine:
        np.testing.assert_allclose(mine[name], reference[name], rtol=1e-10, atol=1e-12)


class Symmetric(tl.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).T

    def right_inverse(self, a):
        return a.triu()


class Scale(tl.nn.Module):
    def forward(self, x):
        return 2 * x


@pytest.mark.parity
def test_parameters_to_vector_and_back_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _layers(torch, "conv")
    a = tl.nn.utils.parameters_to_vector(ours.parameters())
    b = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    (a * a).sum().backward()
    (b * b).sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy())
    vec = RNG.standard_normal(a.shape)
    tl.nn.utils.vector_to_parameters(tl.tensor(vec), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(vec), theirs.parameters())
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters(),
                                  strict=True):
        assert n1 == n2 and p1.shape == tuple(p2.shape)
        np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())
    with pytest.raises(TypeError, match="expected a tensorlib Tensor"):
        tl.nn.utils.vector_to_parameters(vec, ours.parameters())
    with pytest.raises(RuntimeError, match="too few"):
        tl.nn.utils.vector_to_parameters(tl.tensor(vec[:10]), ours.parameters())


@pytest.mark.parity
def test_register_parametrization_matches_pytorch():
    torch = pytest.importorskip("torch")

    class TorchSymmetric(torch.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).T

        def right_inverse(self, a):
            return a.triu()

    ours, theirs = tl.nn.Linear(4, 4, dtype=tl.float64), torch.nn.Linear(4, 4).double()
    ours.load_state_dict(theirs.state_dict())
    P.register_parametrization(ours, "weight", Symmetric())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", TorchSymmetric())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert P.is_parametrized(ours) and P.is_parametrized(ours, "weight")
    assert not P.is_parametrized(ours, "bias")
    assert P.type_before_parametrizations(ours) is tl.nn.Linear
    assert type(ours) is tl.nn.Linear and isinstance(ours.parametrizations.weight,
                                                      P.ParametrizationList)
    _run(torch, ours, theirs, RNG.standard_normal((3, 4)))
    # assignment goes through right_inverse
    a = RNG.standard_normal((4, 4))
    ours.weight = tl.tensor(a)
    with torch.no_grad():
        theirs.weight = torch.tensor(a)
    np.testing.assert_array_equal(ours.parametrizations.weight.original.detach().numpy(),
                                  theirs.parametrizations.weight.original.detach().numpy())
    # a second parametrization is applied after the first
    P.register_parametrization(ours, "weight", Scale())

    class TorchScale(torch.nn.Module):
        def forward(self, x):
            return 2 * x

    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", TorchScale())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert repr(ours).replace("Linear(", "ParametrizedLinear(", 1).replace(
        "Symmetric", "TorchSymmetric").replace("Scale", "TorchScale") == repr(theirs)
    # the state dict of one loads into the other
    ours.load_state_dict(theirs.state_dict())
    P.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, tl.nn.Parameter) and not P.is_parametrized(ours)
    assert "parametrizations" not in ours._modules
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


@pytest.mark.parity
def test_remove_without_leaving_parametrized_and_buffers_match_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _layers(torch, "linear")

    class TorchScale(torch.nn.Module):
        def forward(self, x):
            return 2 * x

    original = ours.weight
    P.register_parametrization(ours, "weight", Scale())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", TorchScale())
    assert ours.parametrizations.weight.original is original  # the same object, as PyTorch's
    _run(torch, ours, theirs, RNG.standard_normal((3, 5)))
    P.remove_parametrizations(ours, "weight", leave_parametrized=False)
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    # a buffer can be parametrized too, and stays a buffer
    norm, reference = tl.nn.BatchNorm1d(3, dtype=tl.float64), torch.nn.BatchNorm1d(3).double()
    P.register_parametrization(norm, "running_var", Scale())
    torch.nn.utils.parametrize.register_parametrization(reference, "running_var", TorchScale())
    assert list(norm.state_dict()) == list(reference.state_dict())
    np.testing.assert_array_equal(norm.running_var.numpy(), reference.running_var.numpy())


def test_cached_computes_once():
    layer = tl.nn.Linear(3, 3, dtype=tl.float64)
    P.register_parametrization(layer, "weight", Symmetric())
    assert layer.weight is not layer.weight
    with P.cached():
        first = layer.weight
        with P.cached():
            assert layer.weight is first
        assert layer.weight is first
    assert layer.weight is not first


def test_gradchecks():
    layer = tl.nn.Linear(4, 4, dtype=tl.float64)
    P.register_parametrization(layer, "weight", Symmetric())
    x = tl.tensor(RNG.standard_normal((3, 4)))
    original = layer.parametrizations.weight.original
    assert tl.autograd.gradcheck(lambda w: layer.parametrizations.weight[0](w) @ x.T, (original,))
    g = tl.tensor(RNG.standard_normal((3, 1)) + 2, requires_grad=True)
    v = tl.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    wn = tl.nn.utils.parametrizations._WeightNorm
    for dim in (0, 1, None):
        g_dim = {0: g, 1: tl.tensor(RNG.standard_normal((1, 4)), requires_grad=True),
                 None: tl.tensor(RNG.standard_normal(()), requires_grad=True)}[dim]
        assert tl.autograd.gradcheck(lambda g, v, d=dim: wn(d)(g, v), (g_dim, v))
    sn = tl.nn.utils.parametrizations.spectral_norm(tl.nn.Linear(4, 3, dtype=tl.float64))
    sn.eval()
    entry = sn.parametrizations.weight
    assert tl.autograd.gradcheck(lambda w: entry[0](w), (entry.original,))


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_pytorch(kind, dim):
    torch = pytest.importorskip("torch")
    ours, theirs = _layers(torch, kind)
    tl.nn.utils.parametrizations.weight_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == tuple(value.shape), key
        np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(), rtol=1e-14)
    _run(torch, ours, theirs, _input(kind))
    # PyTorch's checkpoint loads
    for p in theirs.parameters():
        with torch.no_grad():
            p.add_(torch.tensor(RNG.standard_normal(tuple(p.shape))))
    ours.load_state_dict(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-13)


@pytest.mark.parity
@pytest.mark.parametrize("kind", ["linear", "conv"])
def test_legacy_weight_norm_matches_pytorch_and_loads_into_the_new_form(kind):
    torch = pytest.importorskip("torch")
    ours, theirs = _layers(torch, kind)
    with pytest.warns(FutureWarning, match="deprecated"):
        tl.nn.utils.weight_norm(ours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _run(torch, ours, theirs, _input(kind))
    # an old checkpoint loads into the parametrized form (the load pre-hook renames)
    fresh, _ = _layers(torch, kind)
    tl.nn.utils.parametrizations.weight_norm(fresh)
    fresh.load_state_dict(theirs.state_dict())
    np.testing.assert_allclose(fresh.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-13)
    with pytest.raises(RuntimeError, match="two weight_norm hooks"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tl.nn.utils.weight_norm(ours)
    tl.nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-13)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        tl.nn.utils.remove_weight_norm(ours)


@pytest.mark.parity
@pytest.mark.parametrize("kind, iterations, eps", [
    ("linear", 1, 1e-12), ("conv", 3, 1e-12), ("convT", 1, 1e-3),
])
def test_spectral_norm_matches_pytorch(kind, iterations, eps):
    torch = pytest.importorskip("torch")
    ours, theirs = _layers(torch, kind)
    tl.nn.utils.parametrizations.spectral_norm(ours, n_power_iterations=iterations, eps=eps)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=iterations, eps=eps)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert ours.state_dict()[key].shape == tuple(value.shape), key
    ours.load_state_dict(theirs.state_dict())  # the same u and v (ours start from other numbers)
    for _ in range(2):  # training mode: each forward takes power-iteration steps
        _run(torch, ours, theirs, _input(kind))
        for name in ("_u", "_v"):
            np.testing.assert_allclose(
                getattr(ours.parametrizations.weight[0], name).numpy(),
                getattr(theirs.parametrizations.weight[0], name).numpy(), rtol=1e-10, atol=1e-13)
        ours.zero_grad()
        theirs.zero_grad()
    ours.eval()
    theirs.eval()
    _run(torch, ours, theirs, _input(kind))


def test_spectral_norm_converges_to_the_largest_singular_value():
    with tl.random.fork_rng():  # a fixed weight: convergence speed depends on its spectral gap
        tl.manual_seed(3)
        linear = tl.nn.Linear(6, 4, dtype=tl.float64)
    layer = tl.nn.utils.parametrizations.spectral_norm(linear,
                                                        generator=tl.Generator().manual_seed(3))
    for _ in range(50):
        weight = layer.weight
    assert np.isclose(np.linalg.svd(weight.detach().numpy())[1][0], 1.0, rtol=1e-8)
    vector = tl.nn.Module()
    vector.register_parameter("w", tl.nn.Parameter(tl.tensor(RNG.standard_normal(5))))
    tl.nn.utils.parametrizations.spectral_norm(vector, "w")
    np.testing.assert_allclose(np.linalg.norm(vector.w.detach().numpy()), 1.0)


def test_errors_are_clear():
    layer = tl.nn.Linear(3, 2, dtype=tl.float64)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(layer, "nothing", Scale())

    class Shrink(tl.nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the dtype or shape"):
        P.register_parametrization(layer, "weight", Shrink())
    assert isinstance(layer.weight, tl.nn.Parameter)  # left unchanged
    P.register_parametrization(layer, "weight", Shrink(), unsafe=True)
    assert layer.weight.shape == (1, 3)
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        layer.weight = tl.zeros(1, 3, dtype=tl.float64)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(layer, "bias")
    with pytest.raises(ValueError, match="requires one or more modules"):
        P.ParametrizationList([], layer.bias)
    norms = tl.nn.utils.parametrizations
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nothing'"):
        norms.spectral_norm(tl.nn.Linear(3, 2), "nothing")
    with pytest.raises(IndexError, match="Dimension out of range"):
        norms.spectral_norm(tl.nn.Linear(3, 2), dim=2)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        norms.spectral_norm(tl.nn.Linear(3, 2), n_power_iterations=0)
    pair = norms.weight_norm(tl.nn.Linear(3, 2))
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(pair, "weight", leave_parametrized=False)
    P.remove_parametrizations(pair, "weight")
    assert isinstance(pair.weight, tl.nn.Parameter) and list(pair.state_dict()) == ["bias",
                                                                                     "weight"]


ORTHOGONAL = [(m, shape, trivial) for m in ("matrix_exp", "cayley", "householder")
              for shape in ((4, 4), (5, 3), (2, 4)) for trivial in (True, False)
              if trivial or m == "householder"]


@pytest.mark.parity
@pytest.mark.parametrize("orthogonal_map, shape, trivial", ORTHOGONAL)
def test_orthogonal_matches_pytorch(orthogonal_map, shape, trivial):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Linear(shape[1], shape[0]).double()
    ours = tl.nn.Linear(shape[1], shape[0], dtype=tl.float64)
    ours.load_state_dict(theirs.state_dict())
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map,
                                               use_trivialization=trivial)
    tl.nn.utils.parametrizations.orthogonal(ours, orthogonal_map=orthogonal_map,
                                            use_trivialization=trivial)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if not trivial or shape[0] == shape[1]:  # no random completion: the same originals
        for key, value in theirs.state_dict().items():
            np.testing.assert_allclose(ours.state_dict()[key].numpy(), value.numpy(),
                                       rtol=1e-10, atol=1e-12, err_msg=key)
    ours.load_state_dict(theirs.state_dict())
    with torch.no_grad():  # a step away from the start, the diagonal kept (householder's signs)
        step = RNG.standard_normal(shape) * 0.3
        np.fill_diagonal(step, 0.0)
        theirs.parametrizations.weight.original.add_(torch.tensor(step))
    ours.load_state_dict(theirs.state_dict())
    _run(torch, ours, theirs, RNG.standard_normal((3, shape[1])))
    if trivial:  # assigning stores the orthonormal factor as the base
        q = np.linalg.qr(RNG.standard_normal((max(shape), max(shape))))[0][: shape[0], : shape[1]]
        ours.weight = tl.tensor(q)
        with torch.no_grad():
            theirs.weight = torch.tensor(q)
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                                   atol=1e-12)


def test_orthogonal_gradchecks_and_errors():
    for orthogonal_map in ("matrix_exp", "cayley", "householder"):
        layer = tl.nn.utils.parametrizations.orthogonal(
            tl.nn.Linear(3, 4, dtype=tl.float64), orthogonal_map=orthogonal_map)
        entry = layer.parametrizations.weight
        start = entry.original.detach().numpy() + np.tril(RNG.standard_normal((4, 3)), -1) * 0.3
        np.fill_diagonal(start, -1.5)  # householder reads int(diagonal): keep it off -1's jump
        x = tl.tensor(start, requires_grad=True)
        assert tl.autograd.gradcheck(entry[0], (x,)), orthogonal_map
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        tl.nn.utils.parametrizations.orthogonal(tl.nn.Linear(3, 4), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        tl.nn.utils.parametrizations.orthogonal(tl.nn.Linear(3, 4), orthogonal_map="qr")
    layer = tl.nn.utils.parametrizations.orthogonal(tl.nn.Linear(3, 3),
                                                    use_trivialization=False)
    with pytest.raises(NotImplementedError, match="not possible to assign"):
        layer.weight = tl.eye(3)
