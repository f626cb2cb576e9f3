"""Chapter 7 (issue 21): what the readers and writers do with paths that are not plain new files.

Symbolic links and permission bits on save; directories, FIFOs and devices on load (refused
before they are opened, never a hang); impossible shapes; the reserved safetensors name
``__metadata__``; ``tl.save``/``tl.load`` with file objects and ``map_location``.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import stat
import struct
import threading

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import (
    CheckpointError,
    atomic_write,
    load_checkpoint,
    load_file,
    save_checkpoint,
    save_file,
    tlckpt,
)
from tensorlib.serialization import safetensors as st


def _model():
    return nn.Linear(2, 3, generator=tl.Generator(0))


SAVERS = {
    "tl.save": lambda path: tl.save({"w": tl.ones(2)}, path),
    "save_file": lambda path: save_file({"w": tl.ones(2)}, path),
    "save_checkpoint": lambda path: save_checkpoint(path, _model()),
    "atomic_write": lambda path: atomic_write(path, [b"new"]),
}


# ---- item 4: a save through a symbolic link writes the target and keeps the link ----------------

@pytest.mark.parametrize("saver", SAVERS)
def test_save_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path, saver):
    (tmp_path / "run").mkdir()
    target = tmp_path / "run" / "ckpt"
    target.write_bytes(b"old data")
    link = tmp_path / "latest"
    link.symlink_to(target)
    SAVERS[saver](link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() != b"old data" and target.read_bytes() == link.read_bytes()
    # no temporary left beside the link
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "run"]


def test_save_through_a_dangling_symlink_creates_the_target(tmp_path):
    link = tmp_path / "latest"
    link.symlink_to(tmp_path / "new.ckpt")
    tl.save({"w": tl.ones(2)}, link)
    assert link.is_symlink() and np.array_equal(
        tl.load(tmp_path / "new.ckpt")["w"].numpy(), np.ones(2)
    )


def test_save_through_a_chain_of_symlinks(tmp_path):
    target = tmp_path / "ckpt"
    target.write_bytes(b"old")
    (tmp_path / "a").symlink_to(target)
    (tmp_path / "b").symlink_to(tmp_path / "a")
    atomic_write(tmp_path / "b", [b"new"])
    assert (
        (tmp_path / "a").is_symlink()
        and (tmp_path / "b").is_symlink()
        and target.read_bytes() == b"new"
    )


# ---- item 5: an atomic replace keeps the permission bits; a new file gets the umask's default ---

@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444])
def test_replacing_a_file_keeps_its_permission_bits(tmp_path, saver, mode):
    path = tmp_path / "ckpt"
    path.write_bytes(b"old")
    os.chmod(path, mode)
    SAVERS[saver](path)
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_umask_default(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "new", [b"x"])
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o666 & ~umask


def test_permissions_through_a_symlink_are_the_targets(tmp_path):
    target = tmp_path / "ckpt"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    (tmp_path / "link").symlink_to(target)
    atomic_write(tmp_path / "link", [b"new"])
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600 and target.read_bytes() == b"new"


# ---- items 6 and 7: readers refuse what is not a regular file, before opening it -----------------

def _tl_load(path):
    return tl.load(path)


def _load_checkpoint(path):
    return load_checkpoint(path, _model())


READERS = {"tl.load": _tl_load, "load_file": load_file, "load_checkpoint": _load_checkpoint,
           "load_with_metadata": st.load_with_metadata}


def _in_thread(call, seconds=10):
    """Run ``call`` in a thread; return its exception, or fail if it does not end (a hang)."""
    outcome = []

    def run():
        try:
            call()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader hung"
    return outcome[0]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_devices_are_refused_naming_the_path(reader, device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    error = _in_thread(lambda: READERS[reader](device))
    assert (
        isinstance(error, CheckpointError)
        and device in str(error)
        and "character device" in str(error)
    )


@pytest.mark.parametrize("reader", READERS)
def test_a_fifo_without_writer_is_refused_not_waited_on(reader, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    error = _in_thread(lambda: READERS[reader](fifo))
    assert isinstance(error, CheckpointError) and str(fifo) in str(error) and "FIFO" in str(error)


@pytest.mark.parametrize("reader", READERS)
def test_a_directory_is_refused_naming_the_path(reader, tmp_path):
    error = _in_thread(lambda: READERS[reader](tmp_path))
    assert (
        isinstance(error, CheckpointError)
        and str(tmp_path) in str(error)
        and "directory" in str(error)
    )


@pytest.mark.parametrize("reader", READERS)
def test_a_symlink_to_a_device_is_refused(reader, tmp_path):
    link = tmp_path / "ckpt"
    link.symlink_to("/dev/zero")
    error = _in_thread(lambda: READERS[reader](link))
    assert isinstance(error, CheckpointError) and "character device" in str(error)


@pytest.mark.parametrize("reader", READERS)
def test_a_missing_file_is_still_file_not_found(reader, tmp_path):
    with pytest.raises(FileNotFoundError):
        READERS[reader](tmp_path / "missing")


def test_a_reader_never_reads_past_the_size_it_was_given(tmp_path):
    from tensorlib.serialization.reader import open_regular_file, read_exactly

    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    file, size = open_regular_file(path)
    with file:
        with open(path, "ab") as grow:
            grow.write(b"more bytes appended after the size was taken")
        assert read_exactly(file, size, str(path)) == b"0123456789"
    file, size = open_regular_file(path)
    with file, pytest.raises(CheckpointError, match="ended after"):
        path.write_bytes(b"short")
        read_exactly(file, size, str(path))


# ---- item 8: impossible shapes are CheckpointErrors naming the file and the field ----------------

def _safetensors(shape, dtype="F32", offsets=(0, 0)):
    header = json.dumps(
        {"w": {"dtype": dtype, "shape": shape, "data_offsets": list(offsets)}}
    ).encode()
    return struct.pack("<Q", len(header)) + header


@pytest.mark.parametrize(
    "shape", [[0, 2**63], [2**62, 0], [2**40, 2**40, 0], [0] * 65, [1] * 65, [0, 2**61]]
)
def test_safetensors_impossible_shapes(tmp_path, shape):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(_safetensors(shape))
    with pytest.raises(CheckpointError, match=r"bad\.safetensors: tensor 'w': shape"):
        load_file(path)
    with pytest.raises(CheckpointError, match="tensor 'w': shape"):
        st.load(_safetensors(shape))


def test_safetensors_largest_possible_empty_shape_loads():
    assert st.load(_safetensors([0, 2**60], "U8"))["w"].shape == (0, 2**60)


def _tlckpt(dims):
    name = b"w"
    count = int(np.prod(dims, dtype=object))
    return (tlckpt.MAGIC + struct.pack("<III", 1, 0, 1) + struct.pack("<I", len(name)) + name
            + struct.pack(f"<I{len(dims)}I", len(dims), *dims) + struct.pack("<Q", count % 2**64))


@pytest.mark.parametrize(
    "dims", [[1] * 65, [0] * 65, [0, 2**32 - 1, 2**32 - 1, 2**32 - 1], [2**31, 2**31, 0]]
)
def test_tlckpt_impossible_shapes(tmp_path, dims):
    path = tmp_path / "bad.tlckpt"
    path.write_bytes(_tlckpt(dims))
    with pytest.raises(CheckpointError, match=r"bad\.tlckpt: byte 20: parameter 'w'"):
        load_checkpoint(path, _model())
    with pytest.raises(CheckpointError, match="parameter 'w'"):
        tlckpt.decode(_tlckpt(dims))


# ---- item 19: "__metadata__" as a name ----------------------------------------------------------

@pytest.mark.parametrize("writer", ["tl.save", "earlier safetensors format"])
def test_tl_save_round_trips_a_metadata_key(tmp_path, writer):
    from tensorlib.serialization.nested import _save_safetensors

    obj = {
        "__metadata__": tl.arange(3),
        "x": {"__metadata__": tl.ones(2)},
        "__metadata__'": tl.zeros(1),
    }
    (tl.save if writer == "tl.save" else _save_safetensors)(obj, tmp_path / "m.ckpt")
    back = tl.load(tmp_path / "m.ckpt")
    assert list(back) == list(obj) and list(back["x"]) == ["__metadata__"]
    assert (
        back["__metadata__"].numpy().tolist() == [0, 1, 2]
        and back["x"]["__metadata__"].numpy().tolist() == [1, 1]
    )
    assert back["__metadata__'"].numpy().tolist() == [0]
    if writer != "tl.save":
        # still a valid safetensors file: its metadata is the format's, not a tensor
        assert "__metadata__" not in load_file(tmp_path / "m.ckpt")


def test_save_file_refuses_the_reserved_name_saying_why(tmp_path):
    with pytest.raises(
        ValueError, match="'__metadata__' is reserved by safetensors: it is the header's key"
    ):
        save_file({"__metadata__": tl.ones(1)}, tmp_path / "m.safetensors")


# ---- issue 22: file objects and map_location
# ------------------------------------------------------

def test_save_and_load_through_file_objects(tmp_path):
    obj = {"w": tl.arange(4).reshape(2, 2), "step": 3, "betas": (0.9, 0.99)}
    buffer = io.BytesIO()
    buffer.write(b"prefix")
    tl.save(obj, buffer)
    buffer.seek(6)
    back = tl.load(buffer)
    assert (
        back["step"] == 3
        and back["betas"] == (0.9, 0.99)
        and back["w"].numpy().tolist() == [[0, 1], [2, 3]]
    )
    with open(tmp_path / "f.ckpt", "wb") as file:
        tl.save(obj, file)
    with open(tmp_path / "f.ckpt", "rb") as file:
        assert tl.load(file)["step"] == 3
    assert tl.load(tmp_path / "f.ckpt")["step"] == 3


class _Pipe(io.RawIOBase):
    """A stream that can be neither sought nor told, like a pipe or socket."""

    def __init__(self, data=b""):
        self.data, self.written = io.BytesIO(data), bytearray()

    def readable(self):
        return True

    def writable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, buffer):
        chunk = self.data.read(len(buffer))
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def write(self, data):
        self.written += bytes(data)
        return len(data)


def test_save_to_and_load_from_non_seekable_streams():
    pipe = _Pipe()
    tl.save({"w": tl.ones(3), "n": None}, pipe)
    back = tl.load(_Pipe(bytes(pipe.written)))
    assert back["n"] is None and back["w"].numpy().tolist() == [1, 1, 1]


def test_text_files_and_other_objects_are_refused(tmp_path):
    with (
        open(tmp_path / "t.txt", "w") as text,
        pytest.raises(TypeError, match="binary file object"),
    ):
        tl.save({"w": tl.ones(1)}, text)
    with pytest.raises(TypeError, match="binary file object"):
        tl.load(3)


def test_a_failed_save_to_a_file_object_writes_nothing():
    buffer = io.BytesIO()
    with pytest.raises((pickle.PicklingError, AttributeError)):  # as from torch.save
        tl.save({"w": tl.ones(2), "f": lambda: 1}, buffer)
    assert buffer.getvalue() == b""


@pytest.mark.parametrize(
    "map_location",
    [
        None,
        "cpu",
        "cpu:0",
        tl.device("cpu"),
        {"cuda:0": "cpu"},
        {},
        lambda s, loc: s,
        lambda s, loc: None,
    ],
)
def test_map_location_to_the_cpu_is_accepted(tmp_path, map_location):
    tl.save({"w": tl.arange(3)}, tmp_path / "c.ckpt")
    assert tl.load(tmp_path / "c.ckpt", map_location=map_location)["w"].numpy().tolist() == [
        0,
        1,
        2,
    ]


@pytest.mark.parametrize("map_location", ["cuda", "cuda:0", "mps", {"cpu": "cuda:1"}])
def test_map_location_naming_another_device_is_refused(tmp_path, map_location):
    tl.save({"w": tl.arange(3)}, tmp_path / "c.ckpt")
    with pytest.raises(ValueError, match="tensorlib runs on the CPU only"):
        tl.load(tmp_path / "c.ckpt", map_location=map_location)


def test_map_location_of_another_type_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="map_location must be"):
        tl.load(tmp_path / "c.ckpt", map_location=3)


def test_weights_only_false_loads_plain_files_the_same_and_any_object(tmp_path):
    tl.save({"w": tl.ones(2)}, tmp_path / "c.ckpt")
    assert tl.load(tmp_path / "c.ckpt", weights_only=False)["w"].shape == (2,)
    tl.save({"s": {1, 2}, "a": np.arange(3)}, tmp_path / "s.ckpt")
    with pytest.raises(CheckpointError, match="global numpy.*_reconstruct, which a weights-only"):
        tl.load(tmp_path / "s.ckpt")
    loaded = tl.load(tmp_path / "s.ckpt", weights_only=False)
    assert loaded["s"] == {1, 2} and loaded["a"].tolist() == [0, 1, 2]
