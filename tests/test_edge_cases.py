"""Edge cases where a gradient or a value was silently wrong, each checked against PyTorch's answer.

Kept as a standing probe: in-place changes of index, mask and condition tensors after use; thread-local
grad mode; descending sort/topk of unsigned, minimum and bool values; float16 reductions; losses with
``-inf`` logits. The expected values are PyTorch 2.13's (written out, so the tests run without torch;
the parity tests compare with torch itself where it is installed).
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


@pytest.mark.parametrize("dtype", [str, object, np.complex64, "datetime64[s]", "U3"])
def test_unsupported_dtypes_are_refused(dtype):
    for make in (lambda: tl.zeros(2, dtype=dtype), lambda: tl.full((2,), 1, dtype=dtype), lambda: tl.arange(3, dtype=dtype),
                 lambda: tl.empty(2, dtype=dtype), lambda: tl.ones(2).to(dtype=dtype), lambda: tl.ones(2).type(dtype)):
        with pytest.raises(TypeError, match="dtype"):
            make()
