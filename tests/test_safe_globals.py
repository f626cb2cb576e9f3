"""Chapter 7: the allow-list of ``weights_only`` loading, ``torch.serialization``'s API.

``add_safe_globals``, ``get_safe_globals``, ``clear_safe_globals``, the context manager
``safe_globals`` and ``get_unsafe_globals_in_checkpoint``, as in PyTorch 2.13. Without torch:
archives whose pickle the standard library writes (protocol 2, as ``torch.save``), hostile pickles
that try to use an allowed class for more than it allows, the block's restoring of the list and
its sharing between threads. With torch (``parity``): files that ``torch.save`` wrote into
``tmp_path``, loaded by both libraries with and without the allow-list.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import inspect
import io
import os
import pickle
import threading
import zipfile

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.serialization import (
    CheckpointError,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    get_unsafe_globals_in_checkpoint,
    safe_globals,
)


class Schedule(enum.Enum):
    CONSTANT = 1
    COSINE = 2


@dataclasses.dataclass
class TrainConfig:
    lr: float
    schedule: Schedule
    weights: object = None


@dataclasses.dataclass
class Renamed:
    lr: float
    schedule: Schedule
    weights: object = None


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


CALLS: list[str] = []


class Recorder:
    """Records each call of its methods, to show which ran."""

    def __new__(cls, *args):
        CALLS.append("__new__")
        return super().__new__(cls)

    def __setstate__(self, state):
        CALLS.append("__setstate__")
        self.__dict__.update(state)

    def __call__(self, *args):
        CALLS.append("__call__")


def make_pair(a, b):
    return (a, b)


@pytest.fixture(autouse=True)
def _empty_allow_list():
    clear_safe_globals()
    CALLS.clear()
    yield
    clear_safe_globals()


def _archive(pickled: bytes) -> bytes:
    """A torch.save archive whose data.pkl is ``pickled`` (no storages)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("archive/data.pkl", pickled)
        archive.writestr("archive/byteorder", "little")
        archive.writestr("archive/version", "3\n")
    return out.getvalue()


def _load(blob: bytes, **kwargs):
    return tl.load(io.BytesIO(blob), **kwargs)


def _name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


CHECKPOINT = {
    "config": TrainConfig(3e-4, Schedule.COSINE),
    "args": argparse.Namespace(epochs=3, name="run"),
    "slotted": Slotted(1, [2.5]),
    "step": 12,
}
BLOB = _archive(pickle.dumps(CHECKPOINT, protocol=2))
ALL = [TrainConfig, Schedule, argparse.Namespace, Slotted]


# --------------------------------------------------------------------------- the list itself


def test_the_names_are_where_torch_has_them():
    for name in [
        "add_safe_globals",
        "get_safe_globals",
        "clear_safe_globals",
        "safe_globals",
        "get_unsafe_globals_in_checkpoint",
    ]:
        assert name in tl.serialization.__all__ and callable(getattr(tl.serialization, name))
    assert tl.serialization.add_safe_globals is tl.serialization.pytorch.add_safe_globals
    assert tl.serialization.get_unsafe_globals_in_checkpoint is (
        tl.serialization.nested.get_unsafe_globals_in_checkpoint
    )


def test_add_get_clear_keep_the_order_and_each_global_once():
    assert get_safe_globals() == []
    add_safe_globals([TrainConfig, Schedule])
    add_safe_globals([Schedule, (Renamed, "elsewhere.Config")])
    assert get_safe_globals() == [TrainConfig, Schedule, (Renamed, "elsewhere.Config")]
    clear_safe_globals()
    assert get_safe_globals() == []


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (TrainConfig, TypeError, "safe_globals must be a list"),
        ([3], TypeError, "must be a class, a function or a"),
        (["__main__.TrainConfig"], TypeError, "must be a class, a function or a"),
        ([(TrainConfig, "a.B", 1)], ValueError, "tuple of length 3"),
        ([(TrainConfig, 7)], TypeError, "full path, a str"),
        ([[TrainConfig]], TypeError, "got a list"),
    ],
)
def test_bad_allow_lists_are_refused_before_anything_changes(bad, error, message):
    with pytest.raises(error, match=message):
        add_safe_globals(bad)
    with pytest.raises(error, match=message):
        safe_globals(bad)
    assert get_safe_globals() == []


def test_the_block_restores_the_list_even_on_an_error():
    add_safe_globals([Schedule])
    with pytest.raises(RuntimeError, match="inside"):
        with safe_globals([TrainConfig, Schedule]):
            assert get_safe_globals() == [Schedule, TrainConfig]
            with safe_globals([argparse.Namespace]):
                assert get_safe_globals() == [Schedule, TrainConfig, argparse.Namespace]
                raise RuntimeError("inside")
    # only what the blocks added is gone: Schedule was listed before (PyTorch removes it too)
    assert get_safe_globals() == [Schedule]
    with safe_globals([TrainConfig]):
        pass
    assert get_safe_globals() == [Schedule]


# --------------------------------------------------------------------------- loading


def test_refused_without_the_allow_list_naming_the_global_and_the_fix():
    with pytest.raises(CheckpointError) as caught:
        _load(BLOB)
    message = str(caught.value)
    name = _name(TrainConfig)
    assert f"asks for the global {name}, which a weights-only load refuses" in message
    assert f"add_safe_globals([{name}])" in message and f"safe_globals([{name}])" in message
    assert "load it with weights_only=False, which runs its pickle" in message
    # weights_only=False runs the pickle, as torch.load's does: the classes are imported
    assert _load(BLOB, weights_only=False)["config"] == CHECKPOINT["config"]
    # allowing some is not allowing all
    with safe_globals([TrainConfig, Schedule]):
        with pytest.raises(CheckpointError, match="global argparse.Namespace"):
            _load(BLOB)


def test_allowed_globals_load_equal_to_what_was_saved():
    with safe_globals(ALL):
        loaded = _load(BLOB)
        assert _load(BLOB, weights_only=False)["config"] == CHECKPOINT["config"]
    assert loaded["config"] == CHECKPOINT["config"]
    assert loaded["config"].schedule is Schedule.COSINE  # an enum member is the member itself
    assert loaded["args"] == CHECKPOINT["args"] and loaded["step"] == 12
    assert (loaded["slotted"].a, loaded["slotted"].b) == (1, [2.5])  # BUILD's slot state
    add_safe_globals(ALL)
    assert _load(BLOB)["config"] == CHECKPOINT["config"]


def test_a_tuple_allows_a_global_under_the_name_the_file_gives_it():
    with safe_globals([(Renamed, _name(TrainConfig)), Schedule, argparse.Namespace, Slotted]):
        loaded = _load(BLOB)
    assert type(loaded["config"]) is Renamed and loaded["config"].lr == 3e-4


def test_a_protocol_2_name_is_read_as_python_3_names_it():
    blob = _archive(pickle.dumps({"s": {1, 2}, "c": complex(1, 2)}, protocol=2))
    assert b"__builtin__" in blob
    # set and complex are on the default list, as in PyTorch's weights-only load
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == []
    assert _load(blob) == {"s": {1, 2}, "c": complex(1, 2)}
    listed = _archive(pickle.dumps({"s": {1, 2}, "n": argparse.Namespace(a=1)}, protocol=2))
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(listed)) == ["argparse.Namespace"]


def test_get_unsafe_globals_lists_each_once_in_order_and_runs_nothing(tmp_path):
    blob = _archive(pickle.dumps([CHECKPOINT, CHECKPOINT, Recorder()], protocol=2))
    expected = [_name(TrainConfig), _name(Schedule), "argparse.Namespace", _name(Slotted)]
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == [*expected, _name(Recorder)]
    CALLS.clear()
    with safe_globals([Schedule, Slotted]):
        assert get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == [
            _name(TrainConfig),
            "argparse.Namespace",
            _name(Recorder),
        ]
    assert CALLS == []
    (tmp_path / "c.pt").write_bytes(blob)
    assert get_unsafe_globals_in_checkpoint(tmp_path / "c.pt")[0] == _name(TrainConfig)
    # tensorlib's own format holds no pickle, so no global
    tl.save({"w": tl.ones(2), "step": 3}, tmp_path / "own.ckpt")
    assert get_unsafe_globals_in_checkpoint(tmp_path / "own.ckpt") == []
    (tmp_path / "junk").write_bytes(b"\x00" * 40)
    with pytest.raises(CheckpointError):
        get_unsafe_globals_in_checkpoint(tmp_path / "junk")


def test_tl_save_pickles_a_class_as_torch_save_and_the_allow_list_reads_it(tmp_path):
    tl.save({"config": CHECKPOINT["config"], "w": tl.ones(2)}, tmp_path / "c.ckpt")
    with pytest.raises(CheckpointError, match=f"global {_name(TrainConfig)}, which a weights"):
        tl.load(tmp_path / "c.ckpt")
    assert get_unsafe_globals_in_checkpoint(tmp_path / "c.ckpt") == [
        _name(TrainConfig), _name(Schedule)
    ]
    with safe_globals([TrainConfig, Schedule]):
        assert tl.load(tmp_path / "c.ckpt")["config"] == CHECKPOINT["config"]
    loaded = tl.load(tmp_path / "c.ckpt", weights_only=False)
    assert loaded["config"] == CHECKPOINT["config"] and loaded["w"].tolist() == [1.0, 1.0]


# --------------------------------------------------------------------------- what stays refused


def _global(obj) -> bytes:
    """The GLOBAL opcode that names ``obj``."""
    return b"c" + obj.__module__.encode() + b"\n" + obj.__qualname__.encode() + b"\n"


def test_an_allowed_class_itself_cannot_be_changed():
    # PROTO 2, GLOBAL, NONE, EMPTY_DICT, "lr", 1, SETITEM, TUPLE2, BUILD, STOP
    pickled = b"\x80\x02" + _global(TrainConfig) + b"N}X\x02\x00\x00\x00lrK\x01s\x86b."
    with safe_globals([TrainConfig]):
        with pytest.raises(
            CheckpointError, match="sets the state of the class .*TrainConfig, .* even for an allow"
        ):
            _load(_archive(pickled))
    assert "lr" not in vars(TrainConfig)
    pickle.loads(pickled)  # what the guard prevents
    assert vars(TrainConfig)["lr"] == 1
    del TrainConfig.lr


def test_an_allowed_instance_is_not_called_and_a_function_not_instantiated():
    made = Recorder()
    made.tag = 1
    recorder = pickle.dumps(made, protocol=2)
    CALLS.clear()
    # REDUCE on the rebuilt Recorder object: calls it, as pickle.loads would
    called = recorder[:-1] + b")R."
    with safe_globals([Recorder]):
        with pytest.raises(
            CheckpointError, match="calls a .*Recorder object, not an allowed global, .* even for"
        ):
            _load(_archive(called))
    assert CALLS == ["__new__", "__setstate__"]  # it was made, allowed; never called
    pickle.loads(called)
    assert CALLS[-1] == "__call__"
    # NEWOBJ on an allowed function
    with safe_globals([make_pair]):
        with pytest.raises(CheckpointError, match="creates an instance of a .*function object"):
            _load(_archive(b"\x80\x02" + _global(make_pair) + b")\x81."))
        assert _load(_archive(b"\x80\x02" + _global(make_pair) + b"K\x01K\x02\x86R.")) == (1, 2)
        with pytest.raises(CheckpointError, match="calls .* with a builtins.int object"):
            _load(_archive(b"\x80\x02" + _global(make_pair) + b"K\x01R."))


def test_a_refused_class_never_runs():
    blob = _archive(pickle.dumps({"r": Recorder()}, protocol=2))
    CALLS.clear()
    with pytest.raises(CheckpointError, match="Recorder, which a weights-only load refuses"):
        _load(blob)
    with safe_globals([TrainConfig]):
        with pytest.raises(CheckpointError, match="Recorder"):
            _load(blob)
    assert CALLS == []


def test_the_blocked_modules_stay_blocked_even_when_listed():
    blob = _archive(b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueR.")
    with safe_globals([os.system, (print, "posix.system"), (print, "sys.exit")]):
        with pytest.raises(CheckpointError, match="no global of the module os is ever allowed"):
            _load(blob)
        assert get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == ["os.system"]


def test_tensors_inside_an_allowed_object_arrive_as_tensors():
    # a hand-written archive: TrainConfig whose weights field is a tensor of storage 0
    six = np.arange(6, dtype="<f4")
    tensor = (
        b"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
        b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x06tQK\x00K\x02K\x03\x86K\x03K\x01\x86"
        b"\x89ccollections\nOrderedDict\n)RtR"
    )
    pickled = (
        b"\x80\x02}(X\x01\x00\x00\x00c"
        + _global(TrainConfig) + b")\x81}(X\x07\x00\x00\x00weights" + tensor
        + b"q\x05X\x02\x00\x00\x00lrG?\xb9\x99\x99\x99\x99\x99\x9aub"
        + b"X\x01\x00\x00\x00wh\x05u."
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a/data.pkl", pickled)
        archive.writestr("a/data/0", six.tobytes())
    with safe_globals([TrainConfig]):
        loaded = tl.load(io.BytesIO(out.getvalue()))
    weights = loaded["c"].weights
    assert isinstance(weights, tl.Tensor) and weights.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert loaded["w"] is weights and loaded["c"].lr == 0.1  # one tensor, referenced twice


# --------------------------------------------------------------------------- threads


def test_the_list_is_the_process_s_as_in_pytorch():
    inside, done = threading.Event(), threading.Event()

    def worker():
        with safe_globals(ALL):
            inside.set()
            done.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(10)
    try:
        assert _load(BLOB)["config"] == CHECKPOINT["config"]  # another thread's block allows it
    finally:
        done.set()
        thread.join()
    with pytest.raises(CheckpointError):
        _load(BLOB)


def test_concurrent_changes_lose_nothing():
    classes = [type(f"Made{i}", (), {"__module__": __name__}) for i in range(64)]
    errors: list[BaseException] = []

    def add(cls):
        try:
            add_safe_globals([cls])
            for _ in range(20):
                with safe_globals([TrainConfig, Schedule, argparse.Namespace, Slotted, cls]):
                    assert _load(BLOB)["step"] == 12
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=add, args=(cls,)) for cls in classes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    # every thread's add_safe_globals landed (in the order the threads ran), every block's left
    assert len(get_safe_globals()) == 64 and set(get_safe_globals()) == set(classes)


# --------------------------------------------------------------------------- parity


def _torch():
    return pytest.importorskip("torch")


@pytest.fixture
def torch_file(tmp_path):
    torch = _torch()
    torch.manual_seed(0)
    weight = torch.randn(3, 2)
    obj = {
        "config": TrainConfig(0.1, Schedule.CONSTANT, weights=weight),
        "args": argparse.Namespace(lr=0.5, layers=[weight, torch.nn.Parameter(torch.ones(2))]),
        "slotted": Slotted(weight.t(), 2),
        "tied": weight,
        "step": 3,
    }
    path = tmp_path / "run.pt"
    torch.save(obj, path)
    return path


def _same(ours, theirs):
    torch = _torch()
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tl.Tensor)
        assert isinstance(ours, tl.nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
        assert np.array_equal(ours.detach().numpy(), theirs.detach().numpy())
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _same(ours[key], theirs[key])
    elif isinstance(theirs, (TrainConfig, argparse.Namespace)):
        assert type(ours) is type(theirs)
        _same(vars(ours), vars(theirs))
    elif isinstance(theirs, Slotted):
        assert type(ours) is Slotted
        _same([ours.a, ours.b], [theirs.a, theirs.b])
    else:
        assert ours == theirs and type(ours) is type(theirs)


@pytest.mark.parity
def test_torch_files_refused_by_both_without_the_allow_list(torch_file):
    torch = _torch()
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {_name(TrainConfig)}"):
        torch.load(torch_file, weights_only=True)
    with pytest.raises(CheckpointError, match=f"global {_name(TrainConfig)}, which"):
        tl.load(torch_file)
    theirs = torch.serialization.get_unsafe_globals_in_checkpoint(torch_file)
    ours = get_unsafe_globals_in_checkpoint(torch_file)
    assert sorted(ours) == sorted(theirs) and len(ours) == len(set(ours)) == 4


@pytest.mark.parity
@pytest.mark.parametrize("how", ["block", "add"])
def test_torch_files_load_alike_with_the_allow_list(torch_file, how):
    torch = _torch()
    if how == "block":
        with torch.serialization.safe_globals(ALL):
            theirs = torch.load(torch_file, weights_only=True)
            assert torch.serialization.get_unsafe_globals_in_checkpoint(torch_file) == []
        with safe_globals(ALL):
            ours = tl.load(torch_file)
            assert get_unsafe_globals_in_checkpoint(torch_file) == []
    else:
        before = torch.serialization.get_safe_globals()
        torch.serialization.add_safe_globals(ALL)
        try:
            theirs = torch.load(torch_file, weights_only=True)
        finally:
            torch.serialization.clear_safe_globals()
            torch.serialization.add_safe_globals(before)
        add_safe_globals(ALL)
        ours = tl.load(torch_file)
    _same(ours, theirs)
    assert ours["config"].schedule is Schedule.CONSTANT
    # sharing survives as in torch: one tensor, a view of it, a Parameter
    assert ours["config"].weights is ours["tied"] is ours["args"].layers[0]
    assert np.shares_memory(ours["slotted"].a.numpy(), ours["tied"].numpy())
    assert isinstance(ours["args"].layers[1], tl.nn.Parameter)


@pytest.mark.parity
def test_torch_and_tensorlib_agree_on_a_renamed_global_and_on_python_2_names(tmp_path):
    torch = _torch()
    path = tmp_path / "s.pt"
    torch.save({"config": TrainConfig(0.1, Schedule.COSINE), "s": {1, 2}}, path)
    allowed = [(Renamed, _name(TrainConfig)), Schedule]
    with torch.serialization.safe_globals(allowed):
        theirs = torch.load(path, weights_only=True)  # set is in torch's default list
    with safe_globals(allowed):
        ours = tl.load(path)
    assert type(ours["config"]) is type(theirs["config"]) is Renamed
    assert vars(ours["config"]) == vars(theirs["config"]) and ours["s"] == theirs["s"]


@pytest.mark.parity
def test_the_signatures_are_torch_s():
    torch = _torch()
    for name in [
        "add_safe_globals",
        "get_safe_globals",
        "clear_safe_globals",
        "safe_globals",
        "get_unsafe_globals_in_checkpoint",
    ]:
        ours = inspect.signature(getattr(tl.serialization, name))
        theirs = inspect.signature(getattr(torch.serialization, name))
        assert list(ours.parameters) == list(theirs.parameters), name


def test_a_block_keeps_what_an_overlapping_block_still_holds():
    # two blocks that overlap in time (two threads' blocks, entered and left in this order):
    # the first to leave must not unmark what the second still relies on
    first, second = safe_globals([TrainConfig]), safe_globals([TrainConfig, Schedule])
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert TrainConfig in get_safe_globals() and Schedule in get_safe_globals()
    second.__exit__(None, None, None)
    assert TrainConfig not in get_safe_globals() and Schedule not in get_safe_globals()
    # made permanent by add_safe_globals while a block holds it: it stays after the block
    with safe_globals([Slotted]):
        add_safe_globals([Slotted])
    assert Slotted in get_safe_globals()
    clear_safe_globals()
