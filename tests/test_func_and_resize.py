"""Chapter 2: softmax/log_softmax with ``dim=None`` and ``dtype=`` (section 17), ``resize_``,
``resize_as_`` and ``float_power_`` (section 22.4), and ``tensorlib.func`` (section 34): values and
gradients against PyTorch's, warnings, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensorlib as tl

RNG = np.random.default_rng(0)
SHAPES = [(), (5,), (3, 4), (2, 3, 4), (2, 3, 2, 2)]


def _as(lib, array, requires_grad=False):
    return lib.tensor(array, requires_grad=requires_grad)


# --- softmax and log_softmax: dim=None, dtype= ---------------------------------------------------

SOFTMAX_CALLS = {
    "F.softmax": lambda lib, x, **kw: lib.nn.functional.softmax(x, **kw),
    "F.log_softmax": lambda lib, x, **kw: lib.nn.functional.log_softmax(x, **kw),
    "Tensor.softmax": lambda lib, x, **kw: x.softmax(**kw),
    "Tensor.log_softmax": lambda lib, x, **kw: x.log_softmax(**kw),
    "lib.softmax": lambda lib, x, **kw: lib.softmax(x, **kw),
    "lib.log_softmax": lambda lib, x, **kw: lib.log_softmax(x, **kw),
}


@pytest.mark.parity
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["F.softmax", "F.log_softmax"])
def test_implicit_dim_matches_pytorch_and_warns(shape, name):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(shape)
    weights = RNG.standard_normal(shape)
    results = []
    for lib in (tl, torch):
        t = _as(lib, x, requires_grad=True)
        with pytest.warns(UserWarning, match="Implicit dimension choice for .*softmax has been "
                          "deprecated. Change the call to include dim=X as an argument."):
            out = SOFTMAX_CALLS[name](lib, t)
        (out * _as(lib, weights)).sum().backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", list(SOFTMAX_CALLS))
def test_implicit_dim_is_pytorchs_rule_everywhere(name):
    for shape, dim in (((4,), 0), ((2, 3), 1), ((2, 3, 4), 0), ((2, 3, 4, 5), 1)):
        x = tl.tensor(RNG.standard_normal(shape))
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            guessed = SOFTMAX_CALLS[name](tl, x)
        np.testing.assert_array_equal(guessed.numpy(), SOFTMAX_CALLS[name](tl, x, dim=dim).numpy())


def test_implicit_dim_warning_points_at_the_caller():
    x = tl.zeros(2, 3)
    for call in (lambda: tl.nn.functional.softmax(x), lambda: x.softmax(),
                 lambda: x.log_softmax(), lambda: tl.log_softmax(x)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        assert caught[0].filename == __file__


def test_an_explicit_dim_does_not_warn():
    x = tl.zeros(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.softmax(1)
        tl.nn.functional.log_softmax(x, dim=0, dtype=tl.float64)


@pytest.mark.parity
@pytest.mark.parametrize("name", list(SOFTMAX_CALLS))
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"),
                                    ("float16", "float32")])
def test_dtype_casts_first_and_the_gradient_comes_back_in_the_input_dtype(name, dtypes):
    torch = pytest.importorskip("torch")
    source, target = dtypes
    x = RNG.standard_normal((3, 4)).astype(source)
    weights = RNG.standard_normal((3, 4))
    results = []
    for lib in (tl, torch):
        t = _as(lib, x, requires_grad=True)
        out = SOFTMAX_CALLS[name](lib, t, dim=1, dtype=getattr(lib, target))
        assert str(out.dtype).endswith(target)
        (out * _as(lib, weights).to(out.dtype)).sum().backward()
        assert str(t.grad.dtype).endswith(source)
        results.append((out.detach().numpy(), t.grad.numpy()))
    tolerance = 1e-12 if target == "float64" else 1e-5
    if source == "float16":
        tolerance = 1e-3
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=tolerance, atol=tolerance)


@pytest.mark.parity
def test_dtype_positional_in_the_method_as_pytorch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    ours = tl.tensor(x).softmax(0, tl.float64)
    theirs = torch.tensor(x).softmax(0, torch.float64)
    assert ours.dtype == tl.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_softmax_with_dtype_gradchecks():
    x = tl.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    assert tl.autograd.gradcheck(lambda a: a.softmax(dtype=tl.float64, dim=0), (x,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tl.autograd.gradcheck(lambda a: tl.nn.functional.log_softmax(a), (x,))


# --- resize_, resize_as_, float_power_ -----------------------------------------------------------

RESIZES = [((6,), (2, 2)), ((2, 3), (3, 2)), ((2, 3), (6,)), ((4,), (2, 3)), ((2, 2), (1, 1, 5)),
           ((3,), (3,)), ((2, 3), (0,)), ((0,), (2,))]


@pytest.mark.parity
@pytest.mark.parametrize("before, after", RESIZES)
def test_resize_keeps_the_prefix_as_pytorch(before, after):
    torch = pytest.importorskip("torch")
    values = np.arange(1.0, 1.0 + int(np.prod(before))).reshape(before)
    ours, theirs = tl.tensor(values), torch.tensor(values)
    assert ours.resize_(*after) is ours
    assert theirs.resize_(*after) is theirs
    assert tuple(ours.shape) == tuple(theirs.shape) == after
    kept = min(int(np.prod(before)), int(np.prod(after)))
    np.testing.assert_array_equal(ours.numpy().reshape(-1)[:kept],
                                  theirs.numpy().reshape(-1)[:kept])
    assert (ours.numpy().reshape(-1)[kept:] == 0).all()  # PyTorch: uninitialised
    assert ours._version == theirs._version  # 1, or 0 for the same shape


def test_resize_accepts_a_tuple_a_list_and_a_size():
    x = tl.arange(6.0)
    assert x.resize_((2, 3)).shape == (2, 3)
    assert x.resize_([3, 2]).shape == (3, 2)
    assert x.resize_(tl.Size([6])).shape == (6,)
    assert x._version == 3


def test_resize_as():
    x = tl.arange(6.0)
    assert x.resize_as_(tl.zeros(3, 1)) is x
    assert x.shape == (3, 1)
    np.testing.assert_array_equal(x.numpy().ravel(), [0.0, 1.0, 2.0])


def test_a_smaller_resize_shares_the_memory():
    x = tl.arange(6.0)
    alias = x.numpy()
    x.resize_(2, 2)
    x[0, 0] = 9.0
    assert alias[0] == 9.0


@pytest.mark.parity
def test_resize_refuses_tensors_that_require_grad_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        leaf = lib.ones(3, requires_grad=True)
        for tensor in (leaf, leaf * 2):
            with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
                tensor.resize_(2)
        with lib.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables"):
            leaf.resize_(2)


def test_resize_refuses_views_and_bad_sizes():
    base = tl.arange(6.0)
    for view in (base.view(2, 3), base[1:4], base.reshape(3, 2).t()):
        with pytest.raises(RuntimeError, match="resize_ on a view"):
            view.resize_(2)
    assert base.shape == (6,)
    with pytest.raises((ValueError, TypeError)):
        tl.zeros(3).resize_(-1)
    with pytest.raises(TypeError):
        tl.zeros(3).resize_(2.0)


@pytest.mark.parity
@pytest.mark.parametrize("exponent", [2, 0.5, -1.5, "tensor"])
def test_float_power_in_place_matches_pytorch(exponent):
    torch = pytest.importorskip("torch")
    base = np.abs(RNG.standard_normal(4)) + 0.1
    powers = RNG.standard_normal(4).astype(np.float32)
    results = []
    for lib in (tl, torch):
        x = lib.tensor(base, dtype=lib.float64)
        e = lib.tensor(powers) if exponent == "tensor" else exponent
        assert x.float_power_(e) is x
        assert x._version == 1
        results.append(x.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-14)


@pytest.mark.parity
def test_float_power_in_place_in_the_graph_matches_pytorch():
    torch = pytest.importorskip("torch")
    base = np.abs(RNG.standard_normal(3)) + 0.5
    grads = []
    for lib in (tl, torch):
        w = lib.tensor(base, requires_grad=True)
        h = w * 2
        h.float_power_(3)
        h.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int32"])
def test_float_power_in_place_refuses_other_dtypes_as_pytorch(dtype):
    torch = pytest.importorskip("torch")
    messages = []
    for lib in (tl, torch):
        with pytest.raises(RuntimeError) as caught:
            lib.ones(3, dtype=getattr(lib, dtype)).float_power_(2)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


# --- tensorlib.func: vmap ------------------------------------------------------------------------

def _vmap_case(lib, case):
    x = lib.tensor(RNG_CASES["x"])
    y = lib.tensor(RNG_CASES["y"])
    vmap = lib.func.vmap
    if case == "sum":
        return vmap(lambda a: a.sum())(x)
    if case == "in-dims-1-none":
        return vmap(lambda a, b: a * b, in_dims=(1, None))(x, y[:3])
    if case == "negative-dims":
        return vmap(lambda a: a.exp(), in_dims=-1, out_dims=-1)(x)
    if case == "out-dims-tuple":
        return vmap(lambda a: (a * 2, a.sum()), out_dims=(1, 0))(x)
    if case == "dict-and-list":
        return vmap(lambda d: d["a"] * d["b"][0])({"a": x, "b": [x + 1]})
    if case == "nested-in-dims":
        return vmap(lambda d, s: d["a"] * s, in_dims=({"a": 0}, None))({"a": x}, 2.0)
    if case == "nested-vmap":
        return vmap(vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(x[0], y)
    if case == "kwargs-unmapped":
        return vmap(lambda a, scale: a * scale)(x, scale=y[:4])
    if case == "out-dims-none":
        return vmap(lambda a: (a.sum(), y), out_dims=(0, None))(x)
    if case == "empty-batch":
        return vmap(lambda a: a * 2)(x[:0])
    if case == "matmul":
        return vmap(lambda a, m: m @ a, in_dims=(0, None))(x, x)
    raise AssertionError(case)


RNG_CASES = {"x": RNG.standard_normal((3, 4)), "y": RNG.standard_normal(5)}
VMAP_CASES = ["sum", "in-dims-1-none", "negative-dims", "out-dims-tuple", "dict-and-list",
              "nested-in-dims", "nested-vmap", "kwargs-unmapped", "out-dims-none", "empty-batch",
              "matmul"]


def _flat(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _flat(item)]
    return [tree]


@pytest.mark.parity
@pytest.mark.parametrize("case", VMAP_CASES)
def test_vmap_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    ours, theirs = _flat(_vmap_case(tl, case)), _flat(_vmap_case(torch, case))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parity
def test_gradients_flow_through_vmap_as_in_pytorch():
    torch = pytest.importorskip("torch")
    x, w = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    grads = []
    for lib in (tl, torch):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        out = lib.vmap(lambda row, v: (row * v).tanh().sum(), in_dims=(0, None))(xs, ws)
        (out * lib.arange(4.0, dtype=lib.float64)).sum().backward()
        grads.append((xs.grad.numpy(), ws.grad.numpy()))
    for a, b in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_vmap_gradchecks():
    x = tl.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = tl.tensor(RNG.standard_normal(4), requires_grad=True)
    assert tl.autograd.gradcheck(
        lambda a, b: tl.vmap(lambda r, v: (r * v).sin(), in_dims=(0, None), out_dims=1)(a, b),
        (x, w))


def test_vmap_is_torchs_path():
    assert tl.vmap is tl.func.vmap


@pytest.mark.parity
def test_vmap_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    cases = [
        (lambda lib, x: lib.vmap(lambda a: a, in_dims=2)(x), "Got in_dim=2 for some input"),
        (lambda lib, x: lib.vmap(lambda a, b: a)(x, lib.ones(2)),
         "Expected all tensors to have the same size in the mapped dimension"),
        (lambda lib, x: lib.vmap(lambda a: 3.0)(x), "must only return Tensors"),
        (lambda lib, x: lib.vmap(lambda a: a)(3.0), "We cannot vmap over non-Tensor arguments"),
        (lambda lib, x: lib.vmap(lambda a: a, in_dims=None)(x), "expected `in_dims` to be int"),
        (lambda lib, x: lib.vmap(lambda a: a, chunk_size=0)(x), "chunk_size should be None"),
    ]
    for call, match in cases:
        for lib in (tl, torch):
            with pytest.raises(ValueError, match=match):
                call(lib, lib.zeros(3, 2))
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
            lib.vmap(lambda a: a, randomness="foo")(lib.zeros(2))
        with pytest.raises(ValueError, match="compatible with the structure"):
            lib.vmap(lambda a: a, in_dims=(0, 1))(lib.zeros(2))


def test_vmap_randomness_modes():
    x = tl.zeros(4, 3)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        tl.vmap(lambda a: a + tl.rand(3))(x)
    same = tl.vmap(lambda a: a + tl.rand(3), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[0])
    different = tl.vmap(lambda a: a + tl.rand(3), randomness="different")(x)
    assert not np.allclose(different.numpy(), different.numpy()[0])
    tl.manual_seed(3)
    first = tl.rand(3)
    tl.manual_seed(3)
    again = tl.vmap(lambda a: a + tl.rand(3), randomness="same")(x)
    np.testing.assert_array_equal(again.numpy()[2], first.numpy())
    assert not np.array_equal(tl.rand(3).numpy(), first.numpy())  # the state moved on, once


# --- tensorlib.func: grad, grad_and_value, vjp, jacrev, jacfwd, hessian --------------------------

def _loss(w, x, y):
    return ((x @ w).tanh() - y).pow(2).sum()


@pytest.mark.parity
@pytest.mark.parametrize("argnums", [0, 1, (0, 2), (2, 0)])
def test_grad_and_grad_and_value_match_pytorch(argnums):
    torch = pytest.importorskip("torch")
    w, x, y = RNG.standard_normal(3), RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    results = []
    for lib in (tl, torch):
        args = (lib.tensor(w), lib.tensor(x), lib.tensor(y))
        gradient = lib.func.grad(_loss, argnums=argnums)(*args)
        again, value = lib.func.grad_and_value(_loss, argnums=argnums)(*args)
        results.append((_flat(gradient), _flat(again), value))
    for a, b in zip(results[0][0] + results[0][1], results[1][0] + results[1][1], strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(results[0][2].numpy(), results[1][2].numpy(), rtol=1e-14)


@pytest.mark.parity
def test_grad_of_a_dict_of_parameters_with_aux_matches_pytorch():
    torch = pytest.importorskip("torch")
    w, b, x = RNG.standard_normal((2, 3)), RNG.standard_normal(2), RNG.standard_normal(3)
    results = []
    for lib in (tl, torch):
        def loss(params, inputs, lib=lib):
            out = params["w"] @ inputs + params["b"]
            return (out * out).sum(), {"out": out}
        params = {"w": lib.tensor(w), "b": lib.tensor(b)}
        gradient, aux = lib.func.grad(loss, has_aux=True)(params, lib.tensor(x))
        assert set(gradient) == {"w", "b"}
        assert aux["out"].grad_fn is None
        results.append((gradient["w"].numpy(), gradient["b"].numpy(), aux["out"].numpy()))
    for a, b_ in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(a, b_, rtol=1e-12)


@pytest.mark.parity
def test_per_example_gradients_vmap_of_grad_match_pytorch():
    torch = pytest.importorskip("torch")
    w, x, y = RNG.standard_normal(3), RNG.standard_normal((5, 3)), RNG.standard_normal(5)
    results = []
    for lib in (tl, torch):
        def loss(weights, sample, target, lib=lib):
            return ((sample @ weights).tanh() - target) ** 2
        per_example = lib.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            lib.tensor(w), lib.tensor(x), lib.tensor(y))
        results.append(per_example.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12, atol=1e-15)


def test_grad_leaves_the_inputs_alone_and_unused_inputs_get_zeros():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    other = tl.tensor([3.0, 4.0])
    gradient = tl.func.grad(lambda a, b: (a * a).sum(), argnums=(0, 1))(x, other)
    np.testing.assert_array_equal(gradient[0].numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(gradient[1].numpy(), [0.0, 0.0])
    assert x.grad is None and gradient[0].grad_fn is None


@pytest.mark.parity
def test_grad_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    cases = [
        (lambda f, x: f.grad(lambda a: a)(x), "Expected f\\(\\*args\\) to return a scalar Tensor"),
        (lambda f, x: f.grad(lambda a: 3.0)(x), "Expected f\\(\\*args\\) to return a Tensor"),
        (lambda f, x: f.grad(lambda a: a.sum(), argnums=2)(x), "Got argnum=2, but only 1"),
        (lambda f, x: f.grad(lambda a: a.sum(), argnums=(0, 0))(x), "must be unique"),
        (lambda f, x: f.grad(lambda a: a.sum(), argnums=1.0)(x), "argnums must be int"),
        (lambda f, x: f.grad(lambda a: a.sum(), has_aux=True)(x), "should be a tuple"),
        (lambda f, x: f.grad(lambda a: a.sum())(x.long()), "floating point dtype"),
        (lambda f, x: f.vjp(lambda a: 3, x), "expected f\\(\\*primals\\) to return only"),
        (lambda f, x: f.vjp(lambda a: a * 2, x)[1](x[:2]), "Mismatch in shape"),
    ]
    for lib in (tl, torch):
        for call, match in cases:
            with pytest.raises(RuntimeError, match=match):
                call(lib.func, lib.ones(3, dtype=lib.float64))
        with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor"):
            lib.func.jacrev(lambda a: a.exp())(3.0)


@pytest.mark.parity
def test_vjp_matches_pytorch():
    torch = pytest.importorskip("torch")
    a, b, v = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    results = []
    for lib in (tl, torch):
        out, pull, aux = lib.func.vjp(lambda p, q: ((p * q).sin(), q.sum()), lib.tensor(a),
                                      lib.tensor(b), has_aux=True)
        first = pull(lib.tensor(v))
        second = pull(lib.tensor(v * 2))  # the function may be called again
        assert isinstance(first, tuple) and len(first) == 2
        results.append([out, aux, *first, *second])
        two_outputs, pull_two = lib.func.vjp(lambda p: (p.exp(), p.sum()), lib.tensor(a))
        results[-1].extend(pull_two((lib.tensor(v), lib.tensor(2.0, dtype=lib.float64))))
    for x, y in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12)


@pytest.mark.parity
# torch.func.jacfwd scripts a helper on first use; torch 2.13 warns that jit.script is deprecated
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_jacrev_and_jacfwd_match_pytorch(transform, argnums):
    torch = pytest.importorskip("torch")
    a, b = RNG.standard_normal(3), RNG.standard_normal((2, 3))
    results = []
    for lib in (tl, torch):
        def f(p, q, lib=lib):
            return (q @ p.exp(), (p * q).sum(0)), p.sum()
        jac, aux = getattr(lib.func, transform)(f, argnums=argnums, has_aux=True)(
            lib.tensor(a), lib.tensor(b))
        results.append(_flat(jac) + [aux])
    for x, y in zip(results[0], results[1], strict=True):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=1e-14)


def test_second_order_transforms_run_and_unsupported_ops_are_refused_by_name():
    x = tl.tensor([0.5, -1.0, 2.0], dtype=tl.float64)
    a = x.numpy()
    second = tl.func.grad(lambda v: tl.func.grad(lambda b: b.sin().sum())(v).sum())(x)
    np.testing.assert_allclose(second.numpy(), -np.sin(a), rtol=1e-12)
    jac = tl.func.jacrev(tl.func.grad(lambda v: (v ** 3).sum()))(x)
    np.testing.assert_allclose(jac.numpy(), np.diag(6 * a), rtol=1e-12)
    hess = tl.func.hessian(lambda v: (v * v).sum() * v.sum())(x)
    np.testing.assert_allclose(hess.numpy(), np.diag(2 * a.sum() * np.ones(3)) + 2 * a[:, None]
                               + 2 * a[None, :], rtol=1e-12)
    with pytest.raises(RuntimeError, match="scalar Tensor"):  # as in torch: grad(f) is a vector
        tl.func.grad(tl.func.grad(lambda v: v.sin().sum()))(x)
    for inner in (tl.func.jacrev, tl.func.jacfwd):  # nested Jacobians run now
        found = tl.func.grad(lambda v, inner=inner: inner(lambda b: b.sin())(v).sum())(x)
        np.testing.assert_allclose(found.numpy(), -np.sin(a), rtol=1e-12)
    # an op without a recorded backward is refused by name, and nothing is left running
    with pytest.raises(NotImplementedError, match="the backward of SvdVals is not differentiable"):
        tl.func.jacrev(tl.func.jacrev(lambda b: tl.linalg.svdvals(b.reshape(1, -1))))(x)
    with pytest.raises(NotImplementedError, match="the backward of SvdVals is not differentiable"):
        tl.func.jvp(lambda b: tl.linalg.svdvals(b.reshape(1, -1)), (x,), (x,))
    np.testing.assert_array_equal(tl.func.grad(lambda a: a.sum())(x).numpy(), [1.0, 1.0, 1.0])


# --- tensorlib.func: jvp, nested Jacobians, stack_module_state -----------------------------------

def _jvp_case(lib, case):
    a, b = lib.tensor(RNG_CASES["x"][0, :3]), lib.tensor(RNG_CASES["x"][1:3, :3])
    t, s = lib.tensor(RNG_CASES["x"][2, 1:]), lib.tensor(RNG_CASES["y"][:3] * np.ones((2, 1)))
    jvp = lib.func.jvp
    if case == "one":
        return jvp(lambda p: p.sin() * p.sum(), (a,), (t,))
    if case == "two-args-tuple-out":
        return jvp(lambda p, q: (q @ p.exp(), (p * q).sum(0).sin()), (a, b), (t, s))
    if case == "pytree":
        return jvp(lambda d, l: {"o": d["p"] * l[0].sum(), "n": [d["p"].exp()]},
                   ({"p": a}, [b]), ({"p": t}, [s]))
    if case == "has-aux":
        return jvp(lambda p: ((p * p).sum(), {"aux": p * 2}), (a,), (t,), has_aux=True)
    if case == "independent":
        return jvp(lambda p: (p * 2, b.sum()), (a,), (t,))
    if case == "0-d":
        return jvp(lambda p: (p ** 3).sum(), (a.sum(),), (t.sum(),))
    raise AssertionError(case)


JVP_CASES = ["one", "two-args-tuple-out", "pytree", "has-aux", "independent", "0-d"]


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in tree for leaf in _leaves(tree[key])]
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


@pytest.mark.parity
@pytest.mark.parametrize("case", JVP_CASES)
def test_jvp_matches_pytorch(case):
    torch = pytest.importorskip("torch")
    ours, theirs = _leaves(_jvp_case(tl, case)), _leaves(_jvp_case(torch, case))
    assert len(ours) == len(theirs)
    for x, y in zip(ours, theirs, strict=True):
        assert tuple(x.shape) == tuple(y.shape) and not x.requires_grad
        np.testing.assert_allclose(x.numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_jvp_is_the_jacobian_times_the_tangent():
    a, t = RNG.standard_normal(4), RNG.standard_normal(4)
    f = lambda p: (p.exp() * p.sum()).softmax(0)  # noqa: E731
    _, pushed = tl.func.jvp(f, (tl.tensor(a),), (tl.tensor(t),))
    jac = tl.func.jacrev(f)(tl.tensor(a))
    np.testing.assert_allclose(pushed.numpy(), jac.numpy() @ t, rtol=1e-12)


@pytest.mark.parity
def test_jvp_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.ones(3)
        with pytest.raises(RuntimeError, match=r"Expected primals to be a tuple\. E\.g\. it"):
            lib.func.jvp(lib.sin, x, x)
        with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same "
                                               "python structure"):
            lib.func.jvp(lib.sin, (x,), x)
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given "
                                               r"forward gradient is of size \[2\]\."):
            lib.func.jvp(lib.sin, (x,), (lib.ones(2),))
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            lib.func.jvp(lib.sin, (x,), (lib.ones(3, dtype=lib.int64),))
        with pytest.raises(RuntimeError, match="Expected primals to contain at least one Tensor"):
            lib.func.jvp(lib.sin, (), ())
        with pytest.raises(RuntimeError, match="Expected primals to only contain Tensors"):
            lib.func.jvp(lib.sin, (1.0,), (1.0,))
        with pytest.raises(RuntimeError, match="to return only tensors, got unsupported type"):
            lib.func.jvp(lambda p: 3, (x,), (x,))
        with pytest.raises(RuntimeError,
                           match=r"output of function f should be a tuple: \(output, aux\)"):
            lib.func.jvp(lib.sin, (x,), (x,), has_aux=True)
        with pytest.raises(RuntimeError,
                           match="strict=True\\): The output of f is independent"):
            lib.func.jvp(lambda p, lib=lib: lib.zeros(2), (x,), (x,), strict=True)


NESTED = {
    "jacrev(jacrev)": lambda F, f: F.jacrev(F.jacrev(f)),
    "jacfwd(jacrev)": lambda F, f: F.jacfwd(F.jacrev(f)),
    "jacrev(jacfwd)": lambda F, f: F.jacrev(F.jacfwd(f)),
    "hessian": lambda F, f: F.hessian(f),
    "hessian-argnums": lambda F, f: F.hessian(lambda p, q: f(p * q), argnums=(0, 1)),
    "grad(jvp)": lambda F, f: F.grad(lambda p: F.jvp(f, (p,), (p.cos(),))[1].sum()),
    "jvp(grad)": lambda F, f: lambda p: F.jvp(F.grad(f), (p,), (p.sin(),)),
    "jacrev-of-vmap": lambda F, f: F.jacrev(F.vmap(F.grad(f))),
}


@pytest.mark.parity
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name", list(NESTED))
def test_nested_jacobians_and_hessians_match_pytorch(name):
    torch = pytest.importorskip("torch")
    a = RNG_CASES["x"][:2, :3] if name == "jacrev-of-vmap" else RNG_CASES["x"][0, :3]
    results = []
    for lib in (tl, torch):
        def f(p, lib=lib):
            return (p.sin() * p.exp().sum()).sum() + (p ** 3).sum() * p[0] if p.ndim else p.sin()
        args = (lib.tensor(a),) if name != "hessian-argnums" else (lib.tensor(a), lib.tensor(a))
        results.append(_leaves(NESTED[name](lib.func, f)(*args)))
    for x, y in zip(*results, strict=True):
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(x.numpy(), y.detach().numpy(), rtol=1e-10, atol=1e-12)


def _models(lib, count=3, eval_mode=False):
    made = []
    for k in range(count):
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh())
        with lib.no_grad():
            for n, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.cos(np.arange(p.numel()) + 10 * k + n).reshape(p.shape),
                                   dtype=lib.float32))
        made.append(model.eval() if eval_mode else model)
    return made


@pytest.mark.parity
def test_stack_module_state_matches_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (tl, torch):
        models = _models(lib)
        params, buffers = lib.func.stack_module_state(models)
        results.append((params, buffers))
        for p in params.values():
            assert p.is_leaf and p.requires_grad
        for b in buffers.values():
            assert not b.requires_grad
        params["0.weight"].sum().backward()  # a new leaf: the models' parameters are untouched
        assert models[0][0].weight.grad is None
    for ours, theirs in zip(results[0], results[1], strict=True):
        assert list(ours) == list(theirs)
        for name in ours:
            assert tuple(ours[name].shape) == tuple(theirs[name].shape)
            np.testing.assert_array_equal(ours[name].detach().numpy(),
                                          theirs[name].detach().numpy())


@pytest.mark.parity
def test_stack_module_state_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        stack_module_state = lib.func.stack_module_state
        with pytest.raises(RuntimeError, match=r"Expected at least one model, got 0\."):
            stack_module_state([])
        with pytest.raises(RuntimeError, match="Expected all models to have the same "
                                               "training/eval mode"):
            stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()])
        with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
            stack_module_state([lib.nn.Linear(2, 2), lib.nn.Tanh()])
        frozen = lib.nn.Linear(2, 2)
        frozen.bias.requires_grad_(False)
        with pytest.raises(RuntimeError, match="Expected bias from each model to have the same "
                                               r"\.requires_grad"):
            stack_module_state([lib.nn.Linear(2, 2), frozen])
        with pytest.raises(KeyError):  # a name of the first model missing from another
            stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2, bias=False)])


@pytest.mark.parity
@pytest.mark.parametrize("eval_mode", [False, True])
def test_ensemble_by_vmap_equals_the_loop_and_pytorch(eval_mode):
    torch = pytest.importorskip("torch")
    x = RNG_CASES["x"][:, :3]
    results = []
    for lib in (tl, torch):
        models = _models(lib, eval_mode=eval_mode)
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]

        def fmodel(params, buffers, data, base=base, lib=lib):
            return lib.func.functional_call(base, (params, buffers), (data,))

        data = lib.tensor(x, dtype=lib.float32)
        ensemble = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, data)
        looped = lib.stack([model(data) for model in models])
        np.testing.assert_allclose(ensemble.detach().numpy(), looped.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
        ensemble.sum().backward()  # the stacked parameters are trainable leaves
        results.append([ensemble, params["0.weight"].grad])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_functional_call_is_found_lazily_or_named():
    try:
        import tensorlib.nn.utils.stateless as stateless
    except ImportError:
        with pytest.raises(AttributeError, match="tensorlib.nn.utils.stateless.functional_call"):
            _ = tl.func.functional_call
    else:
        assert tl.func.functional_call is stateless.functional_call
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = tl.func.nothing_here


@pytest.mark.parity
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_a_positional_dtype_of_torch_softmax_is_a_dtype(name):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    ours = getattr(tl, name)(tl.tensor(x), 1, tl.float64)
    theirs = getattr(torch, name)(torch.tensor(x), 1, torch.float64)
    assert ours.dtype == tl.float64 and theirs.dtype == torch.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parity
def test_softmin_takes_pytorchs_arguments():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 4))
    results = []
    for lib in (tl, torch):
        t = lib.tensor(x, requires_grad=True)
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            implicit = lib.nn.functional.softmin(t)
        explicit = lib.nn.functional.softmin(t, 2, 3, lib.float32)
        (implicit.sum() + (explicit * explicit).sum()).backward()
        results.append((implicit.detach().numpy(), explicit.detach().numpy(), t.grad.numpy()))
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tl.nn.functional.softmin(tl.zeros(3))
    assert caught[0].filename == __file__
