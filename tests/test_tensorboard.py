"""tensorlib.utils.tensorboard.SummaryWriter (chapter 8, section 16): TensorBoard's event files,
the same records as PyTorch's writer, read back by TensorBoard itself and by the module's own
checked reader."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.utils.tensorboard import SummaryWriter, _decode_message, _read_records

VALUES = np.random.default_rng(0).standard_normal(1000).astype(np.float32)


def log_everything(writer_class, lib, log_dir: Path) -> None:
    """One of each event the writer makes, with fixed wall times, so two libraries compare."""
    writer = writer_class(log_dir)
    for step, loss in enumerate([4.17, 2.95, 2.51]):
        writer.add_scalar("Loss/train", loss, step, walltime=1.5e9 + step)
    writer.add_scalar("one element", lib.tensor([0.5]), 7, walltime=3.0)
    writer.add_scalar("new", 1.25, 3, walltime=4.0, new_style=True)
    writer.add_scalar("new64", 1.25, -3, walltime=4.0, new_style=True, double_precision=True)
    writer.add_histogram("weights", lib.tensor(VALUES), 5, walltime=5.0)
    writer.add_histogram("merged", lib.tensor(VALUES), 5, walltime=5.0, max_bins=30)
    writer.add_histogram("ten bins", VALUES, 6, bins=10, walltime=5.0)
    writer.add_text("note", "resumed at *step 2*", 2, walltime=6.0)
    writer.add_scalars("run", {"train": 1.0, "valid": 2.0}, 4, walltime=7.0)
    writer.close()


def records(log_dir: Path) -> dict[str, list[bytes]]:
    """Each event file's records after the first (whose wall time is the clock's), by
    subdirectory."""
    return {
        str(path.parent.relative_to(log_dir)): list(_read_records(path))[1:]
        for path in sorted(log_dir.rglob("events.out.tfevents.*"))
    }


@pytest.mark.parity
def test_the_records_are_pytorchs_byte_for_byte(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    log_everything(SummaryWriter, tl, tmp_path / "ours")
    log_everything(TorchWriter, torch, tmp_path / "theirs")
    ours, theirs = records(tmp_path / "ours"), records(tmp_path / "theirs")
    assert sorted(ours) == [".", "run_train", "run_valid"] == sorted(theirs)
    assert ours == theirs


def test_tensorboard_reads_the_files(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log_everything(SummaryWriter, tl, tmp_path)
    events = EventAccumulator(str(tmp_path), size_guidance={"histograms": 0, "tensors": 0})
    events.Reload()
    assert [(e.step, round(e.value, 5)) for e in events.Scalars("Loss/train")] == [
        (0, 4.17), (1, 2.95), (2, 2.51),
    ]
    histogram = events.Histograms("weights")[0].histogram_value
    assert histogram.num == 1000 and histogram.min == float(VALUES.min())
    assert sum(histogram.bucket) == 1000 and len(histogram.bucket) == len(histogram.bucket_limit)
    assert sum(events.Histograms("merged")[0].histogram_value.bucket) == 1000
    text = events.Tensors("note/text_summary")[0].tensor_proto.string_val
    assert text == [b"resumed at *step 2*"]
    train = EventAccumulator(str(tmp_path / "run_train"))
    train.Reload()
    assert [(e.step, e.value) for e in train.Scalars("run")] == [(4, 1.0)]


def test_the_first_record_names_the_format_and_the_file_is_named_as_pytorchs(tmp_path):
    with SummaryWriter(tmp_path, filename_suffix=".v2") as writer:
        writer.add_scalar("loss", 1.0, 1)
    (path,) = tmp_path.glob("*")
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.[^.]+.*\.\d+\.\d+\.v2", path.name)
    first = dict(_decode_message(next(_read_records(path))))
    assert first[3] == b"brain.Event:2" and struct.unpack("<d", first[1])[0] > 1.6e9


def test_default_log_dir_is_runs_date_host_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="-lr0.1")
    writer.close()
    assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_.+-lr0\.1", writer.get_logdir())
    assert len(list(Path(writer.log_dir).glob("events.out.tfevents.*"))) == 1


def test_events_reach_the_disk_at_flush_and_every_max_queue_events(tmp_path):
    writer = SummaryWriter(tmp_path, max_queue=1000)
    (path,) = tmp_path.glob("events.*")
    for step in range(5):
        writer.add_scalar("loss", float(step), step)
    writer.flush()
    assert len(list(_read_records(path))) == 6  # the format's record and five events
    writer.close()
    writer.add_scalar("loss", 9.0, 9)  # after close, a new file, as PyTorch's writer does
    writer.close()
    assert len(list(tmp_path.glob("events.*"))) == 2


def test_purge_step_writes_a_session_start_at_that_step(tmp_path):
    SummaryWriter(tmp_path, purge_step=40).close()
    (path,) = tmp_path.glob("events.*")
    start = dict(_decode_message(list(_read_records(path))[1]))
    assert start[2] == 40 and dict(_decode_message(start[7])) == {1: 1}  # SessionLog.START


def test_a_damaged_file_is_refused(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("loss", 1.0, 1)
    (path,) = tmp_path.glob("events.*")
    data = bytearray(path.read_bytes())
    data[-6] ^= 1  # a bit of the last record's data
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="fails its checksum"):
        list(_read_records(path))
    path.write_bytes(bytes(data[:-3]))
    with pytest.raises(ValueError, match="damaged or cut short"):
        list(_read_records(path))


def test_bad_values_and_the_methods_tensorlib_lacks_raise_clearly(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(ValueError, match="add_scalar: expected one number, got shape \\(2,\\)"):
            writer.add_scalar("loss", tl.ones(2))
        with pytest.raises(ValueError, match="add_histogram: the values have no element"):
            writer.add_histogram("w", np.zeros(0))
        with pytest.raises(ValueError, match="no value falls inside the bins"):
            writer.add_histogram("w", np.array([5.0]), bins=[0.0, 1.0])
        with pytest.raises(NotImplementedError, match="SummaryWriter.add_image: tensorlib's"):
            writer.add_image("picture", np.zeros((3, 2, 2)))
        with pytest.raises(AttributeError, match="no attribute 'logdir'"):
            writer.logdir  # noqa: B018
