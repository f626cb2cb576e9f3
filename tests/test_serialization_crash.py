"""Real crashes: a writer killed with SIGKILL at random moments never leaves a partial checkpoint."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import CheckpointError, load_checkpoint, save_checkpoint, tlckpt

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork and SIGKILL (POSIX)")

KILLS = 100


def _model(version: int) -> nn.Module:
    """Version ``v`` of the model: every parameter filled with ``v`` (about 0.5 MB, so writes take a while)."""
    model = nn.MLP(256, [256], 256)
    with tl.no_grad():
        for param in model.parameters():
            param.fill_(float(version))
    return model


def _writer(path: str, start: int) -> None:
    """Child process: save versions start+1, start+2, ... forever (until it is killed)."""
    version = start
    model = _model(version)
    while True:
        version += 1
        with tl.no_grad():
            for param in model.parameters():
                param.fill_(float(version))
        save_checkpoint(path, model)


@pytest.mark.parametrize("kills", [KILLS])
def test_sigkill_at_random_moments_never_leaves_a_partial_checkpoint(tmp_path, kills):
    path = tmp_path / "model.tlckpt"
    save_checkpoint(path, _model(0))
    rng = np.random.default_rng(0)
    versions_seen = set()
    interrupted = 0  # kills that landed in the middle of a write (they leave a temporary file)
    last = 0
    for _ in range(kills):
        pid = os.fork()
        if pid == 0:  # the child: write until killed, never return into pytest
            try:
                _writer(str(path), last)
            finally:
                os._exit(1)
        time.sleep(float(rng.uniform(0.0, 0.02)))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        interrupted += any(p.name.startswith(".model.tlckpt.tmp-") for p in tmp_path.iterdir())
        checkpoint = tlckpt.decode(path.read_bytes(), str(path))  # complete, or this raises
        values = np.unique(np.concatenate([v.reshape(-1) for v in checkpoint.parameters.values()]))
        assert values.size == 1, f"a mixture of versions {values[:5]}"
        version = int(values[0])
        assert version >= last, "the target went back to an older version"
        versions_seen.add(version)
        last = version
        model = nn.MLP(256, [256], 256)
        load_checkpoint(path, model)
    # the kills landed at different moments, many of them mid-write (the test would prove nothing
    # otherwise); files of killed writers are ignored, and the next writer removes them
    print(f"\n{kills} SIGKILLs: {interrupted} mid-write, {len(versions_seen)} distinct complete versions found")
    assert interrupted >= kills // 10, f"only {interrupted} of {kills} kills interrupted a write"
    assert len(versions_seen) > 1
    save_checkpoint(path, _model(-1))
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "model.tlckpt"]
    assert leftovers == [], leftovers


def test_naive_write_tears(tmp_path):
    """The counter-example: open(path, "wb") killed mid-write leaves a truncated file."""
    path = tmp_path / "naive.tlckpt"
    save_checkpoint(path, _model(0))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            data = b"".join(bytes(c) for c in tlckpt.encode(tlckpt.TLCheckpoint(
                {n: p.numpy() for n, p in _model(1).named_parameters()})))
            with open(path, "wb") as f:
                f.write(data[: len(data) // 2])
                f.flush()
                os.write(write, b"x")  # half is on disk: tell the parent, then wait to be killed
                time.sleep(60)
        finally:
            os._exit(1)
    os.close(write)
    assert os.read(read, 1) == b"x"
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(path, nn.MLP(256, [256], 256))
