"""Chapter 2, section 20.4: PyTorch's deprecated linear-algebra spellings (``torch.cholesky``,
``qr``, ``lu``, ``lu_solve``, ``lu_unpack``, ``triangular_solve`` and their Tensor methods), with
PyTorch's warnings, and ``linalg.lu_factor_ex`` and ``linalg.householder_product``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
SPD = (lambda m: m @ m.T + 3 * np.eye(3))(RNG.normal(size=(3, 3)))
SQUARE = RNG.normal(size=(3, 3))
RHS = RNG.normal(size=(3, 2))
TRI = np.triu(RNG.normal(size=(3, 3))) + 3 * np.eye(3)


def _calls(lib):
    t = lambda a: lib.tensor(a, dtype=lib.float64)  # noqa: E731
    lu, piv = lib.linalg.lu_factor(t(SQUARE))
    return {
        "cholesky": lambda: lib.cholesky(t(SPD)),
        "cholesky_upper": lambda: lib.cholesky(t(SPD), upper=True),
        "cholesky_method": lambda: t(SPD).cholesky(True),
        "qr": lambda: tuple(lib.qr(t(SQUARE[:, :2]))),
        "qr_complete": lambda: tuple(lib.qr(t(SQUARE[:, :2]), some=False)),
        "qr_method": lambda: tuple(t(SQUARE).qr()),
        "lu": lambda: tuple(lib.lu(t(SQUARE))),
        "lu_infos": lambda: tuple(lib.lu(t(SQUARE), get_infos=True)),
        "lu_method": lambda: tuple(t(SQUARE).lu()),
        "lu_solve": lambda: lib.lu_solve(t(RHS), lu, piv),
        "lu_solve_method": lambda: t(RHS).lu_solve(lu, piv),
        "triangular_solve": lambda: tuple(lib.triangular_solve(t(RHS), t(TRI))),
        "triangular_solve_t": lambda: tuple(
            lib.triangular_solve(t(RHS), t(TRI.T), upper=False, transpose=True)
        ),
        "triangular_solve_method": lambda: tuple(
            t(RHS).triangular_solve(t(TRI), True, False, True)
        ),
        "lu_unpack": lambda: tuple(lib.lu_unpack(lu, piv)),
        "lu_factor_ex": lambda: tuple(lib.linalg.lu_factor_ex(t(SQUARE))),
        "householder_product": lambda: lib.linalg.householder_product(
            t(RNG.normal(size=(4, 3)) * 0 + SQUARE.repeat(2, 0)[:4]), t([0.5, 1.2])
        ),
    }


def _numpy(result):
    items = result if isinstance(result, tuple) else (result,)
    return [np.asarray(item.numpy()) for item in items]


@pytest.mark.parity
@pytest.mark.parametrize("name", list(_calls(tl)))
def test_values_match_torch(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _calls(tl)[name](), _calls(torch)[name]()
    assert type(ours) is type(theirs) or isinstance(ours, tuple) == isinstance(theirs, tuple)
    for a, b in zip(_numpy(ours), _numpy(theirs), strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=1e-10)
        assert a.dtype == b.dtype


_TORCH_WARNINGS = r"""
import json, sys, warnings
import torch
a = torch.tensor([[4.0, 1.0], [1.0, 3.0]])
b = torch.ones(2, 1)
calls = {
    "cholesky": lambda: torch.cholesky(a), "qr": lambda: torch.qr(a), "lu": lambda: torch.lu(a),
    "lu_solve": lambda: torch.lu_solve(b, *torch.linalg.lu_factor(a)),
    "triangular_solve": lambda: torch.triangular_solve(b, a),
}
texts = {}
for name, call in calls.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    texts[name] = [str(w.message).split(" (Triggered internally")[0] for w in caught]
print(json.dumps(texts))
"""


@pytest.fixture(scope="module")
def torch_warnings():
    """PyTorch warns once per process (TORCH_WARN_ONCE): its messages from a fresh one."""
    pytest.importorskip("torch")
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _TORCH_WARNINGS], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parity
@pytest.mark.parametrize(
    ("name", "start"),
    [("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky"),
     ("qr", "torch.qr is deprecated in favor of torch.linalg.qr"),
     ("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor"),
     ("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solve"),
     ("triangular_solve", "torch.triangular_solve is deprecated in favor of")],
)
def test_deprecation_warnings_match_torch(name, start, torch_warnings):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _calls(tl)[name]()
    messages = [str(w.message) for w in caught if w.category is UserWarning]
    assert len(messages) == 1 and messages[0].startswith(start)
    assert torch_warnings[name] == messages


def test_lu_unpack_and_lu_factor_ex_need_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _calls(tl)["lu_unpack"]()
        _calls(tl)["lu_factor_ex"]()


@pytest.mark.parity
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)])
def test_lu_unpack_shapes_and_flags_match_torch(shape):
    torch = pytest.importorskip("torch")
    a = RNG.normal(size=shape)
    got = []
    for lib in (tl, torch):
        lu, piv = lib.linalg.lu_factor(lib.tensor(a))
        for data, pivots in ((True, True), (False, True), (True, False)):
            out = lib.lu_unpack(lu, piv, unpack_data=data, unpack_pivots=pivots)
            got.append([(tuple(x.shape), x.numpy().round(10).tolist()) for x in out])
    half = len(got) // 2
    assert got[:half] == got[half:]


@pytest.mark.parity
def test_lu_factor_ex_info_on_a_singular_matrix():
    torch = pytest.importorskip("torch")
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    ours = tl.linalg.lu_factor_ex(tl.tensor(singular))
    theirs = torch.linalg.lu_factor_ex(torch.tensor(singular))
    assert ours.info.item() == theirs.info.item() == 2
    assert ours.info.dtype == tl.int32
    with pytest.raises(RuntimeError, match=r"lu_factor_ex: U\[2,2\] is zero"):
        tl.linalg.lu_factor_ex(tl.tensor(singular), check_errors=True)


@pytest.mark.parity
def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        start = RNG.normal(size=(4, 3)) if not results else results[0][0]
        a = lib.tensor(start, requires_grad=True)
        tau = lib.tensor([0.7, -0.3, 1.1], dtype=lib.float64, requires_grad=True)
        lu = lib.tensor(SQUARE, requires_grad=True)
        pivots = lib.tensor([2, 3, 3], dtype=lib.int32)
        total = (lib.linalg.householder_product(a, tau) ** 2 * lib.arange(12.0).reshape(4, 3)).sum()
        _, low, up = lib.lu_unpack(lu, pivots)
        total = total + (low * 2).sum() + (up ** 2).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = lib.tensor(RHS, requires_grad=True)
            t = lib.tensor(TRI, requires_grad=True)
            total = total + lib.triangular_solve(b, t, upper=True).solution.sum()
        total.backward()
        results.append((a.detach().numpy(), a.grad.numpy(), tau.grad.numpy(), lu.grad.numpy(),
                        b.grad.numpy(), t.grad.numpy()))
    for ours, theirs in zip(results[0][1:], results[1][1:], strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-10)


def test_gradchecks_float64():
    a = tl.tensor(RNG.normal(size=(4, 3)), requires_grad=True)
    tau = tl.tensor([0.7, -0.3], dtype=tl.float64, requires_grad=True)
    assert tl.autograd.gradcheck(tl.linalg.householder_product, (a, tau))
    pivots = tl.tensor([2, 2, 3], dtype=tl.int32)
    lu = tl.tensor(SQUARE, requires_grad=True)
    assert tl.autograd.gradcheck(lambda t: tl.lu_unpack(t, pivots).L + tl.lu_unpack(t, pivots).U,
                                 (lu,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spd = tl.tensor(SPD, requires_grad=True)
        assert tl.autograd.gradcheck(lambda m: tl.cholesky((m + m.mT) / 2, upper=True), (spd,))
        assert tl.autograd.gradcheck(lambda m: tl.qr(m).R, (tl.tensor(SQUARE, requires_grad=True),))
        b = tl.tensor(RHS, requires_grad=True)
        t = tl.tensor(TRI, requires_grad=True)
        assert tl.autograd.gradcheck(
            lambda x, y: tl.triangular_solve(x, y, transpose=True).solution, (b, t)
        )


def test_householder_product_checks_shapes():
    with pytest.raises(RuntimeError, match="householder_product"):
        tl.linalg.householder_product(tl.ones(2, 3), tl.ones(2))


@pytest.mark.parity
@pytest.mark.parametrize(
    "call",
    [
        lambda m, t: m.frobenius_norm(t, (0, 1)),
        lambda m, t: m.frobenius_norm(t, 1, True),
        lambda m, t: m.frobenius_norm(t.reshape(3, 2, 2), (0, 2), keepdim=True),
        lambda m, t: m.nuclear_norm(t),
        lambda m, t: m.nuclear_norm(t, True),
        lambda m, t: m.nuclear_norm(t.reshape(3, 2, 2), (0, 2)),
        lambda m, t: m.nuclear_norm(t.reshape(3, 2, 2)),
    ],
)
def test_frobenius_and_nuclear_norms_match_torch(call):
    torch = pytest.importorskip("torch")
    values = np.random.default_rng(1).normal(size=(3, 4))  # full rank: a unique nuclear gradient
    results = []
    for lib in (tl, torch):
        t = lib.tensor(values, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(lib, t)
        out.sum().backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, atol=1e-10)


def test_frobenius_and_nuclear_norms_warn_and_gradcheck():
    x = tl.tensor(np.random.default_rng(1).normal(size=(3, 4)), requires_grad=True)
    with pytest.warns(UserWarning, match="at::frobenius_norm is deprecated"):
        tl.frobenius_norm(x, 0)
    with pytest.warns(UserWarning, match="at::nuclear_norm is deprecated"):
        tl.nuclear_norm(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tl.autograd.gradcheck(lambda t: tl.frobenius_norm(t, (0, 1)), (x,))
        assert tl.autograd.gradcheck(lambda t: tl.nuclear_norm(t), (x,))
    with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3"):
        tl.frobenius_norm(x.reshape(3, 2, 2), (0, 1, 2))


@pytest.mark.parity
def test_norm_warnings_match_torch():
    pytest.importorskip("torch")
    import json
    import subprocess
    import sys

    script = (
        "import json, warnings, torch\n"
        "out = []\n"
        "for f in (lambda: torch.frobenius_norm(torch.ones(2, 3), 1),\n"
        "          lambda: torch.nuclear_norm(torch.ones(2, 3))):\n"
        "    with warnings.catch_warnings(record=True) as w:\n"
        "        warnings.simplefilter('always')\n"
        "        f()\n"
        "    out.append(str(w[0].message).split(' (Triggered internally')[0])\n"
        "print(json.dumps(out))\n"
    )
    theirs = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True,
                                       text=True, check=True).stdout.strip().splitlines()[-1])
    ours = []
    for call in (lambda: tl.frobenius_norm(tl.ones(2, 3), 1),
                 lambda: tl.nuclear_norm(tl.ones(2, 3))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        ours.append(str(caught[0].message))
    assert ours == theirs


# The LU factors are differentiable (they were outside the graph: a loss using them lost A's path)
LU_SHAPES = [(4, 4), (2, 3, 3), (3, 5), (5, 3), (2, 4, 2), (1, 1)]


def _lu_outputs(lib, a, name):
    if name == "lu_factor":
        return (lib.linalg.lu_factor(a).LU,)
    if name == "lu_factor_ex":
        return (lib.linalg.lu_factor_ex(a).LU,)
    if name == "lu":
        return tuple(lib.linalg.lu(a)[1:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (lib.lu(a)[0],)


@pytest.mark.parametrize("shape", LU_SHAPES)
@pytest.mark.parametrize("name", ["lu_factor", "lu_factor_ex", "lu", "legacy lu"])
def test_lu_factors_gradcheck(name, shape):
    a = tl.tensor(np.random.default_rng(0).normal(size=shape), requires_grad=True)
    assert all(t.requires_grad for t in _lu_outputs(tl, a, name))
    assert tl.autograd.gradcheck(lambda t: _lu_outputs(tl, t, name), (a,))
    if name == "lu_factor":
        assert tl.autograd.gradgradcheck(lambda t: _lu_outputs(tl, t, name), (a,))


@pytest.mark.parity
@pytest.mark.parametrize("shape", LU_SHAPES)
@pytest.mark.parametrize("name", ["lu_factor", "lu_factor_ex", "lu", "legacy lu"])
def test_lu_factors_gradients_match_pytorch(name, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.normal(size=shape)
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(a, requires_grad=True)
        outs = _lu_outputs(lib, x, name)
        weights = np.random.default_rng(2)
        sum((o * lib.tensor(weights.normal(size=tuple(o.shape)))).sum() for o in outs).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_lu_without_pivoting_still_refuses():
    a = tl.tensor(np.eye(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="without pivoting"):
        tl.linalg.lu_factor(a, pivot=False)


def test_householder_product_without_reflectors_stays_in_the_graph():
    a = tl.tensor(np.random.default_rng(0).normal(size=(5, 5)), requires_grad=True)
    tau = tl.zeros(0, dtype=tl.float64, requires_grad=True)
    out = tl.linalg.householder_product(a, tau)
    assert out.requires_grad and np.array_equal(out.detach().numpy(), np.eye(5))
    out.sum().backward()  # as PyTorch's: no gradient reaches A, tau's is empty
    assert a.grad is None and tau.grad.shape == (0,)


# The edge shapes of section 20.4: linalg.vander of a 0-d tensor, the _ex forms on (0, 0) batches
@pytest.mark.parity
@pytest.mark.parametrize("name, shape", [("vander", ()), ("inv_ex", (0, 0)),
                                         ("inv_ex", (0, 0, 0)), ("cholesky_ex", (0, 0)),
                                         ("cholesky_ex", (2, 0, 0))])
def test_linalg_edge_shapes_match_pytorch(name, shape):
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (tl, torch):
        if name == "vander":
            out = lib.linalg.vander(lib.tensor(2.0, dtype=lib.float64), N=3)
        else:
            out = getattr(lib.linalg, name)(lib.zeros(*shape, dtype=lib.float64))[0]
        outs.append(out.detach().numpy())
    assert outs[0].shape == outs[1].shape
    np.testing.assert_array_equal(outs[0], outs[1])
