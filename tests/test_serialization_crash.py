"""Real crashes: a writer killed with SIGKILL in the middle of a save never leaves a partial
checkpoint."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import CheckpointError, load_checkpoint, save_checkpoint, tlckpt
from tensorlib.serialization import checkpoint as checkpoint_module

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork and SIGKILL (POSIX)")

KILLS = 100


def _model(version: int) -> nn.Module:
    """Version ``v`` of the model: every parameter filled with ``v`` (about 0.5 MB, so writes take a
    while)."""
    model = nn.MLP(256, [256], 256)
    with tl.no_grad():
        for param in model.parameters():
            param.fill_(float(version))
    return model


def _wait_to_be_killed(hold: int) -> None:
    """Block until the parent's SIGKILL arrives (or the parent is gone: the pipe then reads as
    closed)."""
    os.read(hold, 1)


def _writer(path: str, start: int, complete: int, stop_after: int, ready: int, hold: int) -> None:
    """Child process: save versions start+1 .. start+complete whole, then start writing the next
    one.

    That last save stops after its ``stop_after``-th chunk has gone to the temporary file (0: the
    header not yet; all chunks: every byte handed over, before the flush, ``fsync`` and rename),
    tells the parent through ``ready`` and waits there to be killed.
    """
    model = _model(start)
    for version in range(start + 1, start + complete + 2):
        with tl.no_grad():
            for param in model.parameters():
                param.fill_(float(version))
        if version <= start + complete:
            save_checkpoint(path, model)
            continue
        original = checkpoint_module.encode

        def encode_then_stop(checkpoint: tlckpt.TLCheckpoint, original=original):
            for index, chunk in enumerate(original(checkpoint)):
                if index == stop_after:
                    os.write(ready, b"x")
                    _wait_to_be_killed(hold)
                yield chunk
            os.write(ready, b"x")  # stop_after is the number of chunks: every byte is written
            _wait_to_be_killed(hold)

        checkpoint_module.encode = encode_then_stop  # in this child only: the hook inside the write
        save_checkpoint(path, model)


def _chunk_count() -> int:
    model = _model(0)
    return sum(
        1
        for _ in tlckpt.encode(
            tlckpt.TLCheckpoint({n: p.numpy() for n, p in model.named_parameters()})
        )
    )


@pytest.mark.parametrize("kills", [KILLS])
def test_sigkill_mid_write_never_leaves_a_partial_checkpoint(tmp_path, kills):
    """Each writer saves a few whole versions, is killed at a random point inside the next save,
    and the target then holds exactly the last whole version; the next writer removes the
    killed one's temporary file. The parent kills only once the child says it is mid-write, so
    the test does not depend on timing (a loaded machine changes nothing)."""
    path = tmp_path / "model.tlckpt"
    save_checkpoint(path, _model(0))
    chunks = _chunk_count()
    rng = np.random.default_rng(0)
    stops = set()
    last = 0
    for _ in range(kills):
        complete, stop_after = int(rng.integers(0, 3)), int(rng.integers(0, chunks + 1))
        stops.add(stop_after)
        ready_read, ready_write = os.pipe()
        hold_read, hold_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            try:
                os.close(ready_read)
                os.close(hold_write)
                _writer(str(path), last, complete, stop_after, ready_write, hold_read)
            finally:
                os._exit(1)
        os.close(ready_write)
        os.close(hold_read)
        try:
            assert os.read(ready_read, 1) == b"x", "the writer died before reaching the write"
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        finally:
            os.close(ready_read)
            os.close(hold_write)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        temporaries = [
            p.name for p in tmp_path.iterdir() if p.name.startswith(".model.tlckpt.tmp-")
        ]
        assert any(name.startswith(f".model.tlckpt.tmp-{pid}-") for name in temporaries), (
            f"the killed write (pid {pid}) left no temporary file: {temporaries}")
        checkpoint = tlckpt.decode(path.read_bytes(), str(path))  # complete, or this raises
        values = np.unique(np.concatenate([v.reshape(-1) for v in checkpoint.parameters.values()]))
        assert values.size == 1, f"a mixture of versions {values[:5]}"
        assert int(values[0]) == last + complete, (
            f"after {complete} whole saves from version {last} the target holds version "
            f"{int(values[0])}"
        )
        last += complete
        load_checkpoint(path, nn.MLP(256, [256], 256))
    assert stops == set(range(chunks + 1)), (
        f"the kills missed some points of the write: {sorted(stops)}"
    )
    assert last > 0, "no save completed"
    save_checkpoint(path, _model(-1))
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "model.tlckpt"]
    assert leftovers == [], leftovers


def test_naive_write_tears(tmp_path):
    """The counter-example: open(path, "wb") killed mid-write leaves a truncated file."""
    path = tmp_path / "naive.tlckpt"
    save_checkpoint(path, _model(0))
    read, write = os.pipe()
    hold_read, hold_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.close(hold_write)
            data = b"".join(bytes(c) for c in tlckpt.encode(tlckpt.TLCheckpoint(
                {n: p.numpy() for n, p in _model(1).named_parameters()})))
            with open(path, "wb") as f:
                f.write(data[: len(data) // 2])
                f.flush()
                os.write(write, b"x")  # half is on disk: tell the parent, then wait to be killed
                _wait_to_be_killed(hold_read)
        finally:
            os._exit(1)
    os.close(write)
    os.close(hold_read)
    assert os.read(read, 1) == b"x"
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read)
    os.close(hold_write)
    with pytest.raises(CheckpointError, match="truncated"):
        load_checkpoint(path, nn.MLP(256, [256], 256))
