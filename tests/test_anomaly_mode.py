"""Anomaly detection (``tensorlib.engine.anomaly``, chapter 2 section 25.2): the switch and its
context managers, the NaN check, the warning with the forward stack, ``autograd.grad`` and
``create_graph`` passes, and parity with PyTorch 2.13's messages and warnings (node names aside:
PyTorch's ``SqrtBackward0`` is tensorlib's ``SqrtBackward``).
"""

from __future__ import annotations

import re
import threading
import warnings

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import autograd

SLOW = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
    "enabled for debugging."
)
NO_STACK = (
    "No forward pass information available. Enable detect anomaly during forward pass for more "
    "information."
)


@pytest.fixture(autouse=True)
def _mode_restored():
    """Every test starts and ends with detection off and check_nan on (the defaults)."""
    tl.set_anomaly_enabled(False, True)
    yield
    assert not tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()


def _run(fn):
    """``fn()``'s error (or None) and the messages of the warnings it issued, in order."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = None
        try:
            fn()
        except Exception as raised:  # noqa: BLE001 - the error is the result
            error = raised
    return error, [(w.category, str(w.message)) for w in caught if w.category is UserWarning]


def _stack_lines(message):
    """The source lines of a warning's stack: the lines under each ``File ...`` entry."""
    return [line.strip() for line in message.splitlines() if line.startswith("    ")]


def _lines_here(message):
    """The source lines of a warning's stack in frames of this file (PyTorch's stacks also hold
    frames of its Python wrappers, ``torch/_tensor.py``'s operators, tensorlib's none)."""
    lines = message.splitlines()
    return [
        lines[k + 1].strip()
        for k, line in enumerate(lines[:-1])
        if line.startswith(f'  File "{__file__}"')
    ]


def _sqrt_nan(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = lib.sqrt(x)  # the line the warning must show
    return x, (y * 0).sum()  # sqrt'(0) * 0 = inf * 0 = nan


# --- the switch -----------------------------------------------------------------------------


def test_the_names_are_where_pytorch_has_them():
    assert tl.autograd.detect_anomaly is tl.engine.anomaly.detect_anomaly
    assert tl.autograd.set_detect_anomaly is tl.engine.set_detect_anomaly
    assert tl.autograd.anomaly_mode.detect_anomaly is tl.autograd.detect_anomaly
    assert tl.autograd.anomaly_mode.set_detect_anomaly is tl.autograd.set_detect_anomaly
    for name in ("is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled"):
        assert getattr(tl, name) is getattr(tl.engine.anomaly, name)
    assert tl.is_anomaly_enabled() is False and tl.is_anomaly_check_nan_enabled() is True


def test_detect_anomaly_warns_when_made_and_restores_on_exit():
    with pytest.warns(UserWarning, match=re.escape(SLOW)):
        manager = autograd.detect_anomaly()
    assert not tl.is_anomaly_enabled()  # made, not entered
    with manager:
        assert tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()
    assert not tl.is_anomaly_enabled()


def test_set_detect_anomaly_acts_when_called_and_restores_as_a_context_manager():
    handle = autograd.set_detect_anomaly(True, check_nan=False)
    assert tl.is_anomaly_enabled() and not tl.is_anomaly_check_nan_enabled()
    autograd.set_detect_anomaly(False)
    assert not tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()
    assert handle.prev is False
    with autograd.set_detect_anomaly(True):
        assert tl.is_anomaly_enabled()
    assert not tl.is_anomaly_enabled()


def test_nested_blocks_restore_the_state_they_found():
    with pytest.warns(UserWarning):
        outer = autograd.detect_anomaly(check_nan=False)
    with outer:
        assert tl.is_anomaly_enabled() and not tl.is_anomaly_check_nan_enabled()
        with autograd.set_detect_anomaly(False):
            assert not tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()
            with autograd.set_detect_anomaly(True, check_nan=True):
                assert tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()
            assert not tl.is_anomaly_enabled()
        assert tl.is_anomaly_enabled() and not tl.is_anomaly_check_nan_enabled()
    assert not tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()


def test_the_state_is_restored_after_an_exception():
    with pytest.raises(ValueError, match="inside"):
        with autograd.set_detect_anomaly(True, check_nan=False):
            raise ValueError("inside")
    assert not tl.is_anomaly_enabled() and tl.is_anomaly_check_nan_enabled()
    x, loss = _sqrt_nan(tl)
    with pytest.raises(RuntimeError, match="returned nan values"), pytest.warns(UserWarning):
        with autograd.detect_anomaly():
            loss.backward()
    assert not tl.is_anomaly_enabled()


def test_neither_is_a_decorator_as_in_pytorch():
    with pytest.raises(TypeError, match="'set_detect_anomaly' object is not callable"):
        autograd.set_detect_anomaly(True)(lambda: None)
    tl.set_anomaly_enabled(False)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        manager = autograd.detect_anomaly()
    with pytest.raises(TypeError, match="'detect_anomaly' object is not callable"):
        manager(lambda: None)


def test_the_switch_is_global_not_per_thread():
    seen = []
    with autograd.set_detect_anomaly(True, check_nan=False):
        thread = threading.Thread(
            target=lambda: seen.append((tl.is_anomaly_enabled(), tl.is_anomaly_check_nan_enabled()))
        )
        thread.start()
        thread.join()
    assert seen == [(True, False)]


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: tl.set_anomaly_enabled(1),
            "argument 'enabled' (position 1) must be bool, not int",
        ),
        (
            lambda: tl.set_anomaly_enabled(True, "no"),
            "argument 'check_nan' (position 2) must be bool, not str",
        ),
        (lambda: autograd.set_detect_anomaly(None), "must be bool, not NoneType"),
    ],
)
def test_a_mode_that_is_not_a_bool_is_refused(call, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        call()
    assert not tl.is_anomaly_enabled()


# --- the backward pass ----------------------------------------------------------------------


def test_a_nan_raises_naming_the_node_and_the_warning_shows_the_forward_line():
    def run():
        with autograd.set_detect_anomaly(True):
            _, loss = _sqrt_nan(tl)
            loss.backward()

    error, warned = _run(run)
    assert isinstance(error, RuntimeError)
    assert str(error) == "Function 'SqrtBackward' returned nan values in its 0th output."
    assert len(warned) == 1
    message = warned[0][1]
    assert message.startswith(
        "Error detected in SqrtBackward. Traceback of forward call that caused the error:\n"
    )
    assert _stack_lines(message)[-1] == "y = lib.sqrt(x)  # the line the warning must show"
    assert "tensorlib/engine" not in message  # the engine's own frames are left out


def test_the_index_is_the_input_whose_gradient_is_nan():
    a = tl.tensor([1.0], requires_grad=True)
    b = tl.tensor([0.0], requires_grad=True)
    with autograd.set_detect_anomaly(True), np.errstate(invalid="ignore", divide="ignore"):
        loss = (a / b * 0).sum()
        with pytest.raises(RuntimeError, match=re.escape("'DivBackward' returned nan values in "
                                                         "its 0th output.")):
            with pytest.warns(UserWarning, match="Error detected in DivBackward"):
                loss.backward()
        b2 = tl.tensor([0.0], requires_grad=True)
        loss = (tl.tensor([1.0]) / b2 * 0).sum()  # only the divisor needs a gradient
        with pytest.raises(RuntimeError, match="in its 1th output"), pytest.warns(UserWarning):
            loss.backward()


def test_check_nan_false_keeps_the_nan_and_raises_nothing():
    with autograd.set_detect_anomaly(True, check_nan=False):
        x, loss = _sqrt_nan(tl)
        error, warned = _run(loss.backward)
    assert error is None and warned == []
    assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0.0


def test_without_the_mode_a_nan_passes_silently():
    x, loss = _sqrt_nan(tl)
    error, warned = _run(loss.backward)
    assert error is None and warned == [] and np.isnan(x.grad.numpy()[0])


def test_a_node_made_before_the_mode_has_no_stack():
    x, loss = _sqrt_nan(tl)
    with autograd.set_detect_anomaly(True):
        error, warned = _run(loss.backward)
    assert isinstance(error, RuntimeError) and "SqrtBackward" in str(error)
    assert warned == [(UserWarning, f"Error detected in SqrtBackward. {NO_STACK}")]


def test_autograd_grad_is_watched_too():
    with autograd.set_detect_anomaly(True):
        x, loss = _sqrt_nan(tl)
        error, warned = _run(lambda: autograd.grad(loss, x))
    assert str(error) == "Function 'SqrtBackward' returned nan values in its 0th output."
    assert _stack_lines(warned[0][1])[-1].startswith("y = lib.sqrt(x)")


def test_an_error_in_a_custom_backward_is_blamed_on_its_forward_line():
    class Broken(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("boom")

    def run():
        with autograd.set_detect_anomaly(True):
            x = tl.ones(2, requires_grad=True)
            out = Broken.apply(x)  # the forward line
            out.sum().backward()

    error, warned = _run(run)
    assert isinstance(error, ValueError) and str(error) == "boom"
    assert warned[0][1].startswith("Error detected in BrokenBackward. Traceback of forward call")
    assert _stack_lines(warned[0][1])[-1] == "out = Broken.apply(x)  # the forward line"


def test_a_create_graph_pass_blames_the_node_and_the_node_that_made_it():
    def run():
        with autograd.set_detect_anomaly(True):
            x = tl.tensor([0.0, 1.0], requires_grad=True)
            y = tl.sqrt(x)  # induced the second calculation
            (g,) = autograd.grad(y.sum(), x, create_graph=True)  # made the failing node
            with np.errstate(invalid="ignore"):
                (g * 0).sum().backward()

    error, warned = _run(run)
    assert str(error) == "Function 'DivBackward' returned nan values in its 1th output."
    assert len(warned) == 2
    first, second = warned[0][1], warned[1][1]
    assert first.startswith("Error detected in DivBackward. Traceback of forward call")
    assert "(g,) = autograd.grad(y.sum(), x, create_graph=True)" in _stack_lines(first)[-2:][0]
    assert second.startswith(
        "\n\nPrevious calculation was induced by SqrtBackward. Traceback of forward call that "
        "induced the previous calculation:\n"
    )
    assert _stack_lines(second)[-1] == "y = tl.sqrt(x)  # induced the second calculation"


def test_a_nan_in_the_recorded_pass_itself_raises():
    with autograd.set_detect_anomaly(True):
        x, loss = _sqrt_nan(tl)
        with pytest.raises(RuntimeError, match="'SqrtBackward' returned nan"):
            with pytest.warns(UserWarning, match="Error detected in SqrtBackward"):
                autograd.grad(loss, x, create_graph=True)


def test_a_nan_free_backward_gives_the_same_gradients_with_the_mode_on_and_off():
    rng = np.random.default_rng(0)
    w_data, x_data = rng.normal(size=(4, 3)), rng.normal(size=(5, 4))

    def gradients(create_graph):
        w = tl.tensor(w_data, requires_grad=True)
        x = tl.tensor(x_data)
        loss = (tl.tanh(x @ w).exp() * 2).log()[:, 0].sum() + (x @ w).sigmoid().mean()
        if create_graph:
            (g,) = autograd.grad(loss, w, create_graph=True)
            (g * g).sum().backward()
            return w.grad.numpy(), g.detach().numpy()
        loss.backward()
        return (w.grad.numpy(),)

    for create_graph in (False, True):
        plain = gradients(create_graph)
        with autograd.set_detect_anomaly(True):
            watched = gradients(create_graph)
        for a, b in zip(plain, watched, strict=True):
            assert np.array_equal(a, b)


def test_nodes_keep_their_stack_only_while_the_mode_is_on():
    x = tl.tensor([1.0], requires_grad=True)
    assert getattr((x * 2).grad_fn, "_forward_trace", None) is None
    with autograd.set_detect_anomaly(True):
        y = x * 2
    stack, parent = y.grad_fn._forward_trace
    assert parent is None
    assert stack[-1].name == "test_nodes_keep_their_stack_only_while_the_mode_is_on"
    y.sum().backward()  # freeing the node's values keeps its stack
    assert y.grad_fn._forward_trace[0] is stack


# --- parity with PyTorch --------------------------------------------------------------------


def _modes(torch):
    return ((tl, autograd.set_detect_anomaly), (torch, torch.autograd.set_detect_anomaly))


def _torch_name(name):
    return re.sub(r"Backward\d+", "Backward", name)


def _both(body):
    """``body(lib)`` run under each library: the error and the warnings, node names aligned."""
    torch = pytest.importorskip("torch")
    results = []
    for lib, mode in _modes(torch):
        def run(lib=lib, mode=mode):
            with mode(True), np.errstate(all="ignore"):
                body(lib)

        error, warned = _run(run)
        torch.autograd.set_detect_anomaly(False)
        messages = [
            _torch_name(re.sub(r" \(Triggered internally at [^)]*\)", "", text))
            for _, text in warned
        ]
        results.append((type(error), _torch_name(str(error)), messages))
    return results


@pytest.mark.parity
def test_parity_the_warning_text_of_detect_anomaly():
    torch = pytest.importorskip("torch")
    for lib_autograd in (autograd, torch.autograd):
        with pytest.warns(UserWarning) as caught:
            manager = lib_autograd.detect_anomaly()
        with manager:
            pass
        assert [str(w.message) for w in caught] == [SLOW]


@pytest.mark.parity
def test_parity_the_state_functions():
    torch = pytest.importorskip("torch")
    steps = [(True, True), (True, False), (False, False), (False, True)]
    for enabled, check_nan in steps:
        tl.set_anomaly_enabled(enabled, check_nan)
        torch.set_anomaly_enabled(enabled, check_nan)
        assert (tl.is_anomaly_enabled(), tl.is_anomaly_check_nan_enabled()) == (
            torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
        )
    for bad in (1, "yes"):
        with pytest.raises(TypeError) as ours:
            tl.set_anomaly_enabled(bad)
        with pytest.raises(TypeError) as theirs:
            torch.set_anomaly_enabled(bad)
        assert str(ours.value) == str(theirs.value)
    torch.set_anomaly_enabled(False)
    tl.set_anomaly_enabled(False)


@pytest.mark.parity
@pytest.mark.parametrize(
    "case",
    ["sqrt_at_zero", "division_by_zero", "distance_of_equal_points", "divisor_only"],
)
def test_parity_the_error_and_the_warning(case):
    def body(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([0.0, 2.0], requires_grad=True)
        if case == "sqrt_at_zero":
            loss = (lib.sqrt(b) * 0).sum()
        elif case == "division_by_zero":
            loss = (a / b * 0).sum()
        elif case == "distance_of_equal_points":
            loss = ((a - lib.tensor([1.0, 2.0])) ** 2).sum().sqrt()
        else:
            loss = (lib.tensor([1.0, 1.0]) / b * 0).sum()
        loss.backward()

    (our_type, ours, our_warnings), (their_type, theirs, their_warnings) = _both(body)
    assert our_type is their_type is RuntimeError
    assert ours == theirs
    assert len(our_warnings) == len(their_warnings) == 1
    # the same header and the same lines of this file (PyTorch's stack ends at the same line)
    assert our_warnings[0].split("\n", 1)[0] == their_warnings[0].split("\n", 1)[0]
    assert _lines_here(our_warnings[0]) == _lines_here(their_warnings[0])
    assert _stack_lines(our_warnings[0])[-1] == _lines_here(our_warnings[0])[-1]


@pytest.mark.parity
def test_parity_a_node_made_before_the_mode():
    torch = pytest.importorskip("torch")
    results = []
    for lib, mode in _modes(torch):
        _, loss = _sqrt_nan(lib)
        with mode(True):
            error, warned = _run(loss.backward)
        texts = [_torch_name(text.split(" (Triggered")[0]) for _, text in warned]
        results.append((str(error), texts))
    assert _torch_name(results[1][0]) == results[0][0]
    assert results[0][1] == results[1][1] == [f"Error detected in SqrtBackward. {NO_STACK}"]


@pytest.mark.parity
def test_parity_check_nan_false_and_autograd_grad():
    torch = pytest.importorskip("torch")
    grads = []
    for lib, mode in _modes(torch):
        with mode(True, check_nan=False):
            x, loss = _sqrt_nan(lib)
            (g,) = lib.autograd.grad(loss, x)
        grads.append(np.asarray(g.detach().numpy()))
    np.testing.assert_array_equal(grads[0], grads[1])

    def body(lib):
        x, loss = _sqrt_nan(lib)
        lib.autograd.grad(loss, x)

    (our_type, ours, our_warnings), (their_type, theirs, their_warnings) = _both(body)
    assert our_type is their_type and ours == theirs
    assert _lines_here(our_warnings[0]) == _lines_here(their_warnings[0])
    assert _stack_lines(our_warnings[0])[-1] == _lines_here(our_warnings[0])[-1]


@pytest.mark.parity
def test_parity_a_create_graph_pass():
    def body(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        y = lib.sqrt(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g * 0).sum().backward()

    (our_type, ours, our_warnings), (their_type, theirs, their_warnings) = _both(body)
    assert our_type is their_type is RuntimeError and ours == theirs
    assert len(our_warnings) == len(their_warnings) == 2
    for our, their in zip(our_warnings, their_warnings, strict=True):
        assert our.split(":\n", 1)[0] == their.split(":\n", 1)[0]
    # the induced node's stack: the same lines; the failing node's: the grad call, then each
    # library's own frames (torch.autograd's Python, tensorlib.autograd's)
    assert _lines_here(our_warnings[1]) == _lines_here(their_warnings[1])
    call = "(g,) = lib.autograd.grad(y.sum(), x, create_graph=True)"
    assert call in _stack_lines(our_warnings[0]) and call in _stack_lines(their_warnings[0])


def test_errors_outside_a_nodes_backward_raise_without_the_warning():
    """A deliberate difference (book/promises.md): PyTorch 2.13 also warns "Error detected in
    MulBackward0" for an error in a non-leaf's hook and for a second backward through freed
    values; tensorlib's warning wraps the node's backward only."""
    with autograd.set_detect_anomaly(True):
        x = tl.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.register_hook(lambda grad: 1 / 0)
        error, warned = _run(h.sum().backward)
        assert isinstance(error, ZeroDivisionError) and warned == []
        loss = (x * x).sum()
        loss.backward()
        error, warned = _run(loss.backward)
        assert "Trying to backward through the graph a second time" in str(error)
        assert warned == []
