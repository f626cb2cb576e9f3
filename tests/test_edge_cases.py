"""Edge cases where a gradient or a value was silently wrong, each checked against PyTorch's answer.

Kept as a standing probe: in-place changes of index, mask and condition tensors after use; thread-local
grad mode; descending sort/topk of unsigned, minimum and bool values; float16 reductions; losses with
``-inf`` logits; ``dtype=`` checked everywhere by ``parse_to``; ``.grad`` assignment checked; integer
powers, Python ints beyond int64, big-endian arrays, uint8 masks and integer sums as in PyTorch.
The expected values are PyTorch 2.13's, written out so that the tests run without torch; the parity tests
(``test_standing_probe_matches_pytorch`` runs every case of issue 10 on both libraries) compare with torch
itself where it is installed.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

MODIFIED = "modified by an inplace operation"


# -- every value a backward reads is version-checked, tensors that need no gradient included -------------
def _x():
    return tl.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_an_integer_index_changed_after_use_is_caught():
    x, i = _x(), tl.tensor([0, 0])
    y = x[i].sum()
    with tl.no_grad():
        i.fill_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()
    assert x.grad is None


def test_an_index_inside_a_tuple_key_is_caught():
    x = tl.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    i = tl.tensor([2, 0])
    y = x[:, i].sum()
    with tl.no_grad():
        i[0] = 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_bool_mask_index_changed_after_use_is_caught():
    x, mask = _x(), tl.tensor([True, False, True])
    y = x[mask].sum()
    with tl.no_grad():
        mask.fill_(True)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_gather_index_changed_after_use_is_caught():
    x, index = _x(), tl.tensor([0, 0])
    y = x.gather(0, index).sum()
    with tl.no_grad():
        index.fill_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_masked_fill_mask_changed_after_use_is_caught():
    x, mask = _x(), tl.tensor([True, False, False])
    y = x.masked_fill(mask, 0.0).sum()
    with tl.no_grad():
        mask.fill_(True)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_a_where_condition_changed_after_use_is_caught():
    x, condition = _x(), tl.tensor([True, False, True])
    y = tl.where(condition, x, 0.0).sum()
    with tl.no_grad():
        condition.fill_(False)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_unchanged_index_mask_and_condition_give_pytorchs_gradients():
    x = _x()
    i, mask = tl.tensor([0, 0]), tl.tensor([True, False, True])
    (x[i].sum() + x.gather(0, i).sum() + x[mask].sum() + x.masked_fill(mask, 0.0).sum() + tl.where(mask, x, 0.0).sum()).backward()
    assert x.grad.tolist() == [2 + 2 + 1 + 0 + 1, 0 + 0 + 0 + 1 + 0, 0 + 0 + 1 + 0 + 1]


def test_changing_the_indexed_tensor_itself_is_still_allowed():
    """x[i]'s backward reads i, not x (as in PyTorch): an update of x under no_grad is fine."""
    x, i = _x(), tl.tensor([0, 2])
    y = x[i].sum()
    with tl.no_grad():
        x.mul_(2.0)
    y.backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


# -- grad mode is thread-local --------------------------------------------------------------------------
def test_grad_mode_is_thread_local():
    inside, started, release = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def evaluator():
        with tl.no_grad():
            inside.set()
            release.wait(5)
        seen["after"] = tl.is_grad_enabled()

    def trainer():
        inside.wait(5)
        seen["other thread"] = tl.is_grad_enabled()
        seen["requires_grad"] = (tl.ones(2, requires_grad=True) * 2).requires_grad
        started.set()

    threads = [threading.Thread(target=evaluator), threading.Thread(target=trainer)]
    for t in threads:
        t.start()
    started.wait(5)
    release.set()
    for t in threads:
        t.join(5)
    assert seen == {"other thread": True, "requires_grad": True, "after": True}
    assert tl.is_grad_enabled()


def test_a_new_thread_starts_with_grad_enabled():
    seen = []
    with tl.no_grad():
        worker = threading.Thread(target=lambda: seen.append(tl.is_grad_enabled()))
        worker.start()
        worker.join(5)
        assert not tl.is_grad_enabled()
    assert seen == [True]


def test_overlapping_no_grad_blocks_in_two_threads_restore_grad_mode():
    barrier = threading.Barrier(2)

    def work():
        for _ in range(200):
            with tl.no_grad():
                barrier.wait(5)
            barrier.wait(5)
        return tl.is_grad_enabled()

    results = []
    threads = [threading.Thread(target=lambda: results.append(work())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [True, True]
    assert tl.is_grad_enabled()


def test_two_threads_train_two_models_as_if_alone():
    def train(seed):
        rng = np.random.default_rng(seed)
        w = tl.tensor(rng.normal(size=(3, 1)), requires_grad=True)
        x, y = tl.tensor(rng.normal(size=(8, 3))), tl.tensor(rng.normal(size=(8, 1)))
        for _ in range(100):
            loss = ((x @ w - y) * (x @ w - y)).mean()
            loss.backward()
            with tl.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
        return w.numpy().copy()

    sequential = [train(0), train(1)]
    results = {}
    threads = [threading.Thread(target=lambda s=s: results.__setitem__(s, train(s))) for s in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert np.array_equal(results[0], sequential[0]) and np.array_equal(results[1], sequential[1])


# -- descending sort and topk: an order reversal, not a negation ----------------------------------------
@pytest.mark.parametrize(
    ("values", "dtype", "expected"),
    [
        ([0, 1, 2, 200], np.uint8, [200, 2, 1, 0]),
        ([-128, 0, 5], np.int8, [5, 0, -128]),
        ([-(2**63), 3, -1], np.int64, [3, -1, -(2**63)]),
        ([False, True, False], np.bool_, [True, False, False]),
        ([1.0, np.nan, 3.0], np.float32, [np.nan, 3.0, 1.0]),  # NaN is the largest, as in PyTorch
    ],
)
def test_descending_sort(values, dtype, expected):
    x = tl.tensor(np.array(values, dtype=dtype))
    got, indices = x.sort(descending=True)
    np.testing.assert_array_equal(got.numpy(), np.array(expected, dtype=dtype))
    np.testing.assert_array_equal(x.numpy()[indices.numpy()], got.numpy())


def test_topk_of_small_integers_and_ties():
    assert tl.tensor(np.array([-128, 0, 5], dtype=np.int8)).topk(1).values.tolist() == [5]
    assert tl.tensor(np.array([0, 1, 2, 200], dtype=np.uint8)).topk(2).values.tolist() == [200, 2]
    assert tl.tensor([3.0, 1.0, 3.0]).topk(2).indices.tolist() == [0, 2]  # ties keep their order
    assert tl.tensor([1.0, float("nan"), 3.0]).topk(1).indices.tolist() == [1]


# -- float16 reductions accumulate in float32 --------------------------------------------------------
def test_float16_mean_over_many_elements_has_a_gradient():
    x = tl.ones(70000, dtype=tl.float16, requires_grad=True)
    x.mean().backward()
    assert x.grad.dtype == np.float16
    np.testing.assert_allclose(x.grad.numpy()[:3].astype(np.float64), 1 / 70000, rtol=5e-3)


def test_float16_var_norm_and_mse_over_many_elements():
    values = np.tile(np.array([0.0, 2.0], dtype=np.float16), 35000)
    x = tl.tensor(values, requires_grad=True)
    var = x.var()
    assert abs(float(var.item()) - 1.0) < 1e-2  # PyTorch: 1.0000
    var.backward()
    assert np.all(np.isfinite(x.grad.numpy())) and float(np.abs(x.grad.numpy()).max()) > 0
    norm = tl.tensor(np.array([300.0, 300.0], dtype=np.float16)).norm()
    assert abs(float(norm.item()) - 424.25) < 0.5  # PyTorch: 424.25, not inf
    y = tl.tensor(np.zeros(70000, dtype=np.float16), requires_grad=True)
    F.mse_loss(y, tl.ones(70000, dtype=tl.float16)).backward()
    np.testing.assert_allclose(y.grad.numpy()[:3].astype(np.float64), -2 / 70000, rtol=5e-3)
    z = tl.tensor(np.zeros(70000, dtype=np.float16), requires_grad=True)
    F.binary_cross_entropy_with_logits(z, tl.ones(70000, dtype=tl.float16)).backward()
    np.testing.assert_allclose(z.grad.numpy()[:3].astype(np.float64), -0.5 / 70000, rtol=5e-3)
    mean_rows = tl.ones(2, 70000, dtype=tl.float16, requires_grad=True)
    mean_rows.mean(dim=1).sum().backward()
    np.testing.assert_allclose(mean_rows.grad.numpy()[0, :2].astype(np.float64), 1 / 70000, rtol=5e-3)


# -- losses with -inf logits (masked classes) ------------------------------------------------------------
def test_cross_entropy_with_a_masked_class():
    logits = tl.tensor([[0.0, -np.inf, 3.0]], requires_grad=True)
    loss = F.cross_entropy(logits, tl.tensor([2]))
    assert abs(loss.item() - 0.048587) < 1e-5  # PyTorch: 0.0486
    loss.backward()
    np.testing.assert_allclose(logits.grad.numpy(), [[0.047426, 0.0, -0.047426]], atol=1e-5)


def test_cross_entropy_ignored_row_of_minus_inf_does_not_poison_the_mean():
    logits = tl.tensor([[0.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf]], requires_grad=True)
    loss = F.cross_entropy(logits, tl.tensor([2, -100]))
    assert abs(loss.item() - 0.048587) < 1e-5
    loss.backward()
    assert np.all(np.isfinite(logits.grad.numpy())) and logits.grad.numpy()[1].tolist() == [0.0, 0.0, 0.0]


def test_cross_entropy_with_minus_inf_at_the_target_is_inf():
    loss = F.cross_entropy(tl.tensor([[0.0, -np.inf, 3.0]]), tl.tensor([1]))
    assert loss.item() == np.inf


def test_nll_loss_with_minus_inf_log_probabilities():
    log_probs = tl.tensor([[-0.1, -np.inf, -2.0]], requires_grad=True)
    loss = F.nll_loss(log_probs, tl.tensor([0]))
    assert abs(loss.item() - 0.1) < 1e-6
    loss.backward()
    assert log_probs.grad.tolist() == [[-1.0, 0.0, 0.0]]


# -- NaN, constants and empty tensors: PyTorch's gradients and results ----------------------------------
NAN = float("nan")


def _grad(fn, values):
    x = tl.tensor(np.array(values, dtype=np.float64), requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize(
    ("name", "fn", "values", "expected"),
    [
        ("max() sends the gradient to the NaN", lambda t: t.max(), [1.0, NAN, 3.0], [0.0, 1.0, 0.0]),
        ("min() sends the gradient to the NaN", lambda t: t.min(), [1.0, NAN, 3.0], [0.0, 1.0, 0.0]),
        ("amax() at a NaN: NaN everywhere", lambda t: t.amax(), [1.0, NAN, 3.0], [NAN, NAN, NAN]),
        ("relu passes the gradient at NaN", lambda t: t.relu(), [1.0, NAN, -3.0], [1.0, 1.0, 0.0]),
        ("abs: gradient 0 at NaN", lambda t: t.abs(), [1.0, NAN, -3.0], [1.0, 0.0, -1.0]),
        ("x ** 0: gradient 0, also at 0", lambda t: t**0, [0.0, 1.0], [0.0, 0.0]),
        ("std of a constant: gradient 0", lambda t: t.std(), [2.0, 2.0, 2.0], [0.0, 0.0, 0.0]),
    ],
)
def test_gradients_at_nan_and_constants_match_pytorch(name, fn, values, expected):
    np.testing.assert_array_equal(_grad(fn, values), np.array(expected), err_msg=name)


def test_std_away_from_zero_is_unchanged():
    assert tl.autograd.gradcheck(lambda t: t.std() + t.std(dim=1).sum(), (tl.tensor(np.random.default_rng(3).normal(size=(3, 4)), requires_grad=True),))


def test_empty_tensors_reduce_and_normalise_like_pytorch():
    assert tl.zeros(2, 0).softmax(dim=1).shape == (2, 0)
    assert tl.zeros(2, 0).log_softmax(dim=1).shape == (2, 0)
    values, indices = tl.zeros(0, 3).max(dim=1)
    assert values.shape == (0,) and indices.shape == (0,)
    assert tl.zeros(0, 3).amax(dim=1).shape == (0,)
    with pytest.raises(IndexError, match="size 0"):
        tl.zeros(0, 3).max(dim=0)
    with pytest.raises(RuntimeError, match="empty dim"):
        tl.zeros(0, 3).amax(dim=0)


def test_integer_division_by_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tl.tensor([1, 2]) // tl.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tl.tensor([1, 2]) % 0
    assert (tl.tensor([7, 9]) // 2).tolist() == [3, 4]
    assert np.isinf((tl.tensor([1.0]) // 0.0).numpy()).all()  # float division by zero stays inf, as in torch


# -- dtype= is validated everywhere, by chapter 2's one resolver (parse_to) -------------------------------
_CREATORS = {
    "zeros": lambda dt: tl.zeros(2, dtype=dt),
    "ones": lambda dt: tl.ones(2, dtype=dt),
    "empty": lambda dt: tl.empty(2, dtype=dt),
    "full": lambda dt: tl.full((2,), 1, dtype=dt),
    "arange": lambda dt: tl.arange(3, dtype=dt),
    "linspace": lambda dt: tl.linspace(0, 1, 3, dtype=dt),
    "eye": lambda dt: tl.eye(2, dtype=dt),
    "tensor": lambda dt: tl.tensor([1, 2], dtype=dt),
    "Tensor": lambda dt: tl.Tensor([1.0, 2.0], dt),
    "zeros_like": lambda dt: tl.zeros_like(tl.ones(2), dtype=dt),
    "ones_like": lambda dt: tl.ones_like(tl.ones(2), dtype=dt),
    "full_like": lambda dt: tl.full_like(tl.ones(2), 1, dtype=dt),
    "empty_like": lambda dt: tl.empty_like(tl.ones(2), dtype=dt),
    "new_zeros": lambda dt: tl.ones(2).new_zeros(2, dtype=dt),
    "Tensor.to": lambda dt: tl.ones(2).to(dtype=dt),
    "Tensor.type": lambda dt: tl.ones(2).type(dt),
    "Module.to": lambda dt: tl.nn.Linear(2, 2).to(dtype=dt),
    "rand": lambda dt: tl.rand(2, dtype=dt),
    "randn_like": lambda dt: tl.randn_like(tl.ones(2), dtype=dt),
    "randint": lambda dt: tl.randint(0, 3, (2,), dtype=dt),
    "randperm": lambda dt: tl.randperm(3, dtype=dt),
    "randn": lambda dt: tl.randn(2, dtype=dt),
    "nn.Linear": lambda dt: tl.nn.Linear(2, 2, dtype=dt),
    "nn.Embedding": lambda dt: tl.nn.Embedding(3, 2, dtype=dt),
}


@pytest.mark.parametrize("dtype", [str, object, complex, np.complex64, "datetime64[s]", "U3", "S3"],
                         ids=["str", "object", "complex", "complex64", "datetime64", "U3", "S3"])
@pytest.mark.parametrize("where", list(_CREATORS))
def test_unsupported_dtypes_are_refused_everywhere_with_the_list_of_dtypes(where, dtype):
    with pytest.raises(TypeError, match=r"float16, float32(,| or) float64"):
        _CREATORS[where](dtype)


def test_module_to_reads_its_arguments_with_parse_to():
    model = tl.nn.Linear(2, 2)
    assert model.to(tl.ones(1, dtype=tl.float64)).weight.dtype == np.float64  # to(tensor): its dtype
    assert model.to("cpu", tl.float16).weight.dtype == np.float16
    assert model.to(dtype="float32", device=tl.device("cpu")).weight.dtype == np.float32
    with pytest.raises(TypeError, match="floating point dtypes, but got desired dtype=int64"):
        model.to(tl.int64)
    with pytest.raises(TypeError, match="at most 2 positional"):
        model.to("cpu", tl.float32, tl.float64)
    with pytest.raises(ValueError, match="CPU only"):
        model.to("cuda")


# -- assigning .grad checks type, shape and dtype (PyTorch's checks, at assignment) ------------------------
_SELF = object()
_BAD_GRADS = [
    ("a number", 5, TypeError, "expected to be a Tensor or None but got grad of type int"),
    ("an ndarray", np.ones(3, np.float32), TypeError, "expected to be a Tensor or None"),
    ("another shape", "ones(3, 3)", RuntimeError, r"gradient of size \[3, 3\] to a tensor of size \[3\]"),
    ("another dtype", "ones(3, float64)", RuntimeError, "gradient with dtype float64 to a tensor with dtype float32"),
    ("the tensor itself", _SELF, RuntimeError, "can't assign Variable as its own grad"),
]


def _bad_grad(lib, spec, x):
    if spec is _SELF:
        return x
    if isinstance(spec, str):
        return lib.ones(3, 3) if spec == "ones(3, 3)" else lib.ones(3, dtype=lib.float64)
    return spec


@pytest.mark.parametrize(("name", "spec", "error", "match"), _BAD_GRADS, ids=[case[0] for case in _BAD_GRADS])
def test_assigning_a_wrong_grad_raises_at_once(name, spec, error, match):
    x = tl.ones(3, requires_grad=True)
    with pytest.raises(error, match=match):
        x.grad = _bad_grad(tl, spec, x)
    assert x.grad is None


def test_assigning_a_right_grad_or_none_works():
    x = tl.ones(3, requires_grad=True)
    x.grad = tl.full((3,), 2.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    x.grad = None
    assert x.grad is None
    counts = tl.tensor([1, 2])
    counts.grad = tl.tensor([0, 0])  # an integer tensor may hold an integer "gradient", as in torch
    assert counts.grad.dtype == np.int64


@pytest.mark.parity
@pytest.mark.parametrize(("name", "spec", "error", "match"), _BAD_GRADS, ids=[case[0] for case in _BAD_GRADS])
def test_assigning_a_wrong_grad_raises_as_in_pytorch(name, spec, error, match):
    torch = pytest.importorskip("torch")
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(error):
        x.grad = _bad_grad(torch, spec, x)


# -- integers: negative powers, Python ints beyond int64, byte order, uint8 masks, sums in int64 -----------
@pytest.mark.parametrize(
    "call",
    [lambda: tl.tensor([1, 2]) ** -1, lambda: tl.tensor([1, 2]).pow(-2),
     lambda: tl.tensor(np.array([1, 2], np.uint8)) ** -1, lambda: tl.tensor([True]) ** -1],
    ids=["int64 ** -1", "int64.pow(-2)", "uint8 ** -1", "bool ** -1"],
)
def test_integers_to_a_negative_number_raise(call):
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        call()


def test_integers_to_negative_tensor_exponents_are_integer_arithmetic():
    base, exponent = tl.tensor([0, 1, -1, 2, -2, -1, 3]), tl.tensor([-1, -5, -3, -1, -1, -2, 0])
    result = base**exponent
    assert result.dtype == np.int64 and result.tolist() == [0, 1, -1, 0, 0, 1, 1]  # torch's values
    assert (2 ** tl.tensor([-1, 1])).tolist() == [0, 2]
    assert (tl.tensor([1, 2]) ** -1.0).tolist() == [1.0, 0.5]  # a float exponent: a float result
    assert (tl.tensor([2.0]) ** -1).tolist() == [0.5]


@pytest.mark.parametrize("data", [[2**63], 2**70, [-(2**63) - 1], [[1, 2], [3, 2**64]]], ids=["2**63", "2**70", "-2**63-1", "nested"])
def test_python_ints_beyond_int64_raise(data):
    with pytest.raises(ValueError, match="Overflow"):
        tl.tensor(data)


def test_python_ints_at_the_edge_of_int64_and_big_ints_as_floats_work():
    assert tl.tensor([2**63 - 1, -(2**63)]).tolist() == [2**63 - 1, -(2**63)]
    assert tl.tensor([2**70], dtype=tl.float32).item() == pytest.approx(2.0**70)  # as floats: fine, as in torch


@pytest.mark.parametrize("make", [tl.from_numpy, tl.tensor, tl.Tensor], ids=["from_numpy", "tensor", "Tensor"])
def test_big_endian_arrays_are_refused(make):
    with pytest.raises(ValueError, match="byte order"):
        make(np.arange(3, dtype=">f4"))
    native = make(np.arange(3, dtype=">f4").astype("=f4"))
    assert native.tolist() == [0.0, 1.0, 2.0]


def test_a_uint8_index_is_a_mask():
    x = tl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.warns(UserWarning, match="uint8 is deprecated"):
        picked = x[tl.tensor(np.array([1, 0, 1], np.uint8))]
    assert picked.tolist() == [1.0, 3.0]
    picked.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    rows = tl.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.warns(UserWarning, match="use a dtype bool"):
        assert rows[tl.tensor(np.array([0, 1], np.uint8)), 1:].tolist() == [[4.0, 5.0]]


@pytest.mark.parametrize(
    ("values", "dtype", "dim", "expected"),
    [([200, 200], np.uint8, None, 400), ([True, True, False], np.bool_, None, 2), ([[100, 100]], np.int8, 1, [200]),
     ([[200], [200]], np.uint8, 0, [400]), ([7], np.int32, None, 7), ([2**31, 2**31], np.uint32, None, 2**32)],
)
def test_integer_and_bool_sums_are_int64(values, dtype, dim, expected):
    total = tl.tensor(np.array(values, dtype=dtype)).sum(dim)
    assert total.dtype == np.int64 and total.tolist() == expected


# -- the standing probe against PyTorch: every case of issue 10, run on both libraries --------------------
def _grad_of(lib, values, fn, dtype=None):
    x = lib.tensor(np.array(values, dtype=dtype or np.float64), requires_grad=True)
    fn(x).sum().backward()
    return x.grad


def _index_changed_in_place(lib):
    x, i = lib.tensor([1.0, 2.0, 3.0], requires_grad=True), lib.tensor([0, 0])
    y = x[i].sum()
    with lib.no_grad():
        i.fill_(2)
    y.backward()
    return x.grad


def _changed_after_use(lib, op, kind):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    other = lib.tensor([0, 0]) if kind == "index" else lib.tensor([True, False, True])
    y = op(lib, x, other).sum()
    with lib.no_grad():
        other.fill_(1 if kind == "index" else False)
    y.backward()
    return x.grad


def _functional(lib):
    return tl.nn.functional if lib is tl else __import__("torch").nn.functional


def _cross_entropy(lib, logits, target):
    F_ = tl.nn.functional if lib is tl else __import__("torch").nn.functional
    return F_.cross_entropy(lib.tensor(logits), lib.tensor(target))


NEG = -np.inf
PROBE = {
    "index changed in place after use": _index_changed_in_place,
    "bool mask changed after use": lambda lib: _changed_after_use(lib, lambda lib, x, m: x[m], "mask"),
    "gather index changed after use": lambda lib: _changed_after_use(lib, lambda lib, x, i: x.gather(0, i), "index"),
    "masked_fill mask changed after use": lambda lib: _changed_after_use(lib, lambda lib, x, m: x.masked_fill(m, 0.0), "mask"),
    "where condition changed after use": lambda lib: _changed_after_use(lib, lambda lib, x, m: lib.where(m, x, 0.0), "mask"),
    "nll_loss with -inf": lambda lib: _functional(lib).nll_loss(lib.tensor([[-0.1, NEG, -2.0]]), lib.tensor([0])),
    "float16 var": lambda lib: lib.tensor(np.tile(np.array([0.0, 2.0], np.float16), 35000)).var(),
    "float16 mse_loss gradient": lambda lib: _grad_of(
        lib, np.zeros(70000), lambda t: _functional(lib).mse_loss(t, lib.ones(70000, dtype=lib.float16)), np.float16
    ),
    "float16 BCE-with-logits gradient": lambda lib: _grad_of(
        lib, np.zeros(70000), lambda t: _functional(lib).binary_cross_entropy_with_logits(t, lib.ones(70000, dtype=lib.float16)), np.float16
    ),
    "min() gradient at NaN": lambda lib: _grad_of(lib, [1.0, NAN, 3.0], lambda t: t.min()),
    "amax() gradient at NaN": lambda lib: _grad_of(lib, [1.0, NAN, 3.0], lambda t: t.amax()),
    "topk with NaN": lambda lib: lib.tensor([1.0, NAN, 3.0]).topk(1).indices,
    "log_softmax over a size-0 dim": lambda lib: lib.zeros(2, 0).log_softmax(dim=1),
    "max(dim) of a (0, 3) tensor": lambda lib: lib.zeros(0, 3).max(dim=1).values,
    "max(dim=0) of a (0, 3) tensor": lambda lib: lib.zeros(0, 3).max(dim=0).values,
    "integer remainder by zero": lambda lib: lib.tensor([1, 2]) % 0,
    "cross_entropy with a -inf logit": lambda lib: _cross_entropy(lib, [[0.0, NEG, 3.0]], [2]),
    "cross_entropy, -inf at the target": lambda lib: _cross_entropy(lib, [[0.0, NEG, 3.0]], [1]),
    "cross_entropy, ignored -inf row": lambda lib: _cross_entropy(lib, [[0.0, NEG, 3.0], [NEG, NEG, NEG]], [2, -100]),
    "uint8 sort descending": lambda lib: lib.tensor(np.array([0, 1, 2, 200], np.uint8)).sort(descending=True).values,
    "int8 topk": lambda lib: lib.tensor(np.array([-128, 0, 5], np.int8)).topk(1).values,
    "bool sort descending": lambda lib: lib.tensor([False, True, False]).sort(descending=True).values,
    "NaN sorts first descending": lambda lib: lib.tensor([1.0, NAN, 3.0]).sort(descending=True).indices,
    "float16 mean gradient": lambda lib: _grad_of(lib, np.ones(70000), lambda t: t.mean(), np.float16),
    "float16 norm": lambda lib: lib.tensor(np.array([300.0, 300.0], np.float16)).norm(),
    "max() gradient at NaN": lambda lib: _grad_of(lib, [1.0, NAN, 3.0], lambda t: t.max()),
    "relu gradient at NaN": lambda lib: _grad_of(lib, [1.0, NAN, -3.0], lambda t: t.relu()),
    "abs gradient at NaN": lambda lib: _grad_of(lib, [1.0, NAN, -3.0], lambda t: t.abs()),
    "x ** 0 gradient at 0": lambda lib: _grad_of(lib, [0.0, 1.0], lambda t: t**0),
    "std of a constant": lambda lib: _grad_of(lib, [2.0, 2.0, 2.0], lambda t: t.std()),
    "softmax over a size-0 dim": lambda lib: lib.zeros(2, 0).softmax(dim=1),
    "amax(dim) of a (0, 3) tensor": lambda lib: lib.zeros(0, 3).amax(dim=1),
    "integer division by zero": lambda lib: lib.tensor([1, 2]) // lib.tensor([1, 0]),
    "int64 ** -1": lambda lib: lib.tensor([1, 2]) ** -1,
    "int64 ** negative tensor": lambda lib: lib.tensor([0, 1, -1, 2]) ** lib.tensor([-1, -5, -3, -1]),
    "2 ** negative int tensor": lambda lib: 2 ** lib.tensor([-1, 1]),
    "tensor([2**63])": lambda lib: lib.tensor([2**63]),
    "tensor(2**70, float32)": lambda lib: lib.tensor([2**70], dtype=lib.float32),
    "from_numpy(big-endian)": lambda lib: lib.from_numpy(np.arange(3, dtype=">f4")),
    "tensor(big-endian)": lambda lib: lib.tensor(np.arange(3, dtype=">f4")),
    "uint8 mask index": lambda lib: lib.tensor([1.0, 2.0, 3.0])[lib.tensor(np.array([1, 0, 1], np.uint8))],
    "uint8 sum": lambda lib: lib.tensor(np.array([200, 200], np.uint8)).sum(),
    "bool sum": lambda lib: lib.tensor([True, True]).sum(),
    "int8 sum(dim)": lambda lib: lib.tensor(np.array([[100, 100]], np.int8)).sum(1),
}


def _outcome(lib, case):
    try:
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")  # both warn on a uint8 index
            value = PROBE[case](lib)
    except Exception as error:  # noqa: BLE001 - the probe compares which error, if any
        return type(error).__name__, None, None
    return "value", np.asarray(value.detach().numpy(), dtype=np.float64), str(value.dtype).removeprefix("torch.")


@pytest.mark.parity
@pytest.mark.parametrize("case", list(PROBE))
def test_standing_probe_matches_pytorch(case):
    pytest.importorskip("torch")
    import torch

    ours, theirs = _outcome(tl, case), _outcome(torch, case)
    assert ours[0] == theirs[0], f"{case}: tensorlib gives {ours[0]}, PyTorch {theirs[0]}"
    if ours[0] == "value":
        assert ours[2] == theirs[2], f"{case}: dtype {ours[2]}, PyTorch {theirs[2]}"
        np.testing.assert_allclose(ours[1], theirs[1], rtol=5e-3 if "float16" in case else 1e-5, atol=1e-7, equal_nan=True, err_msg=case)
