"""Tests of tensorlib.random.fork_rng (chapter 3): the default generator's state is restored on
leaving the block, also on an exception; ``enabled=False`` and ``device_type="meta"`` do not fork.

The parity tests run the same pattern in PyTorch and tensorlib and compare which draws repeat
(the draws themselves differ: the generators differ).
"""

from __future__ import annotations

import inspect

import pytest

import tensorlib as tl
from tensorlib.random import fork_rng


@pytest.fixture(autouse=True)
def _restore_default_generator():
    state = tl.get_rng_state()
    yield
    tl.set_rng_state(state)


def _pattern(lib, fork, **kwargs):
    """Which draws after a forked block equal the reference draws of seed 0: (after == first
    three, after == draws 5..7)."""
    lib.manual_seed(0)
    reference = lib.rand(8).tolist()
    lib.manual_seed(0)
    with fork(**kwargs):
        lib.rand(5)
    after = lib.rand(3).tolist()
    return after == reference[:3], after == reference[5:]


def test_restores_state_after_block():
    assert _pattern(tl, fork_rng) == (True, False)


def test_restores_state_after_exception():
    tl.manual_seed(3)
    expected = tl.rand(4).tolist()
    tl.manual_seed(3)
    with pytest.raises(KeyError, match="inside"):
        with fork_rng():
            tl.rand(10)
            raise KeyError("inside")
    assert tl.rand(4).tolist() == expected


def test_disabled_and_meta_do_not_fork():
    assert _pattern(tl, fork_rng, enabled=False) == (False, True)
    assert _pattern(tl, fork_rng, device_type="meta") == (False, True)


def test_devices_generator_is_consumed_once():
    consumed = []

    def devices():
        consumed.append(True)
        yield from ()

    with fork_rng(devices=devices()):
        tl.rand(2)
    assert consumed == [True]


def test_draws_inside_are_the_usual_ones():
    tl.manual_seed(11)
    expected = tl.rand(6).tolist()
    tl.manual_seed(11)
    with fork_rng(devices=[]):
        assert tl.rand(6).tolist() == expected


def test_nested_forks():
    tl.manual_seed(5)
    expected = tl.rand(3).tolist()
    tl.manual_seed(5)
    with fork_rng():
        tl.rand(2)
        with fork_rng():
            tl.rand(7)
        tl.rand(1)
    assert tl.rand(3).tolist() == expected


def test_generator_objects_are_not_forked():
    g = tl.Generator(1)
    with fork_rng():
        first = g.uniform(2).tolist()
    assert g.uniform(2).tolist() != first


@pytest.mark.parity
def test_signature_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours = inspect.signature(fork_rng).parameters
    theirs = inspect.signature(torch.random.fork_rng).parameters
    assert list(ours) == list(theirs)
    assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"devices": []}, {"enabled": False}, {"device_type": "meta"}, {"enabled": True}],
)
def test_matches_pytorch(kwargs):
    torch = pytest.importorskip("torch")
    state = torch.get_rng_state()
    try:
        theirs = _pattern(torch, torch.random.fork_rng, **kwargs)
    finally:
        torch.set_rng_state(state)
    assert _pattern(tl, fork_rng, **kwargs) == theirs


@pytest.mark.parity
def test_exception_matches_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib, fork in ((torch, torch.random.fork_rng), (tl, fork_rng)):
        lib.manual_seed(0)
        expected = lib.rand(2).tolist()
        lib.manual_seed(0)
        try:
            with fork():
                lib.rand(3)
                raise ValueError("x")
        except ValueError:
            pass
        results.append(lib.rand(2).tolist() == expected)
    assert results == [True, True]
