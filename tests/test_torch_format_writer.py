"""Chapter 7: ``tl.save`` writes ``torch.save``'s archive (``tensorlib.serialization.pt_writer``).

Without torch: the archive's members, alignment and pickle, round trips through ``tl.load``,
refusals naming the type and path, paths and file objects. With torch 2.13 (``parity``):
``torch.load(f, weights_only=True)`` reads what ``tl.save`` wrote (every dtype, views, shared
storages, Parameters, containers, state dicts, nanoGPT's checkpoint dict, an optimizer's state),
``tl.load`` reads what ``torch.save`` wrote, and the tensors' bytes are identical both ways.
"""

from __future__ import annotations

import collections
import io
import math
import os
import pickle
import pickletools
import struct
import zipfile

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.serialization import pt_writer, write_pt

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
SHAPES = [(), (0,), (0, 3), (5,), (2, 3), (2, 3, 4)]
# the globals torch.load(weights_only=True) allows that tl.save may name
ALLOWED_GLOBALS = {
    "torch._utils _rebuild_tensor_v2",
    "torch._utils _rebuild_parameter",
    "collections OrderedDict",
    "_codecs encode",
} | {f"torch {name}" for name in pt_writer.STORAGE_NAMES.values()}


def _array(dtype: str, shape: tuple, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def _saved(obj) -> bytes:
    buffer = io.BytesIO()
    tl.save(obj, buffer)
    return buffer.getvalue()


def _members(blob: bytes) -> list[zipfile.ZipInfo]:
    return zipfile.ZipFile(io.BytesIO(blob)).infolist()


def _data_start(data: bytes, info: zipfile.ZipInfo) -> int:
    """Where a member's bytes start: after its local header (whose extra field may differ from
    the central directory's)."""
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    return info.header_offset + 30 + name_length + extra_length


def _globals(pickled: bytes) -> set[str]:
    return {arg for op, arg, _ in pickletools.genops(pickled) if op.name == "GLOBAL"}


def _trained(steps: int = 2):
    model = nn.Sequential(nn.Linear(4, 8, generator=tl.Generator(0)), nn.ReLU(),
                          nn.Linear(8, 3, generator=tl.Generator(1)))
    optimizer = tl.optim.AdamW(model.parameters(), lr=0.01)
    x = tl.randn(5, 4, generator=tl.Generator(2))
    for _ in range(steps):
        optimizer.zero_grad()
        model(x).square().mean().backward()
        optimizer.step()
    return model, optimizer


def _gpt_checkpoint():
    gpt = pytest.importorskip("tensorlib.gpt.model")
    model_args = dict(n_layer=1, n_head=2, n_embd=8, block_size=8, bias=True, vocab_size=11,
                      dropout=0.0)
    model = gpt.GPT(gpt.GPTConfig(**model_args), generator=tl.Generator(0))
    optimizer = tl.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
    ids = tl.tensor([[1, 2, 3, 4]])
    out = model(ids, ids)
    (out[1] if isinstance(out, tuple) else out.mean()).backward()
    optimizer.step()
    config = {"out_dir": "out", "eval_interval": 2000, "learning_rate": 6e-4, "decay_lr": True,
              "compile": False, "dtype": "float32", "wandb_log": False, "init_from": "scratch"}
    return {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "model_args": model_args,
        "iter_num": 250,
        "best_val_loss": tl.tensor(1.4696),  # nanoGPT stores the estimate, a 0-d tensor
        "config": config,
    }


def _same_tree(ours, theirs):
    """Equal values, containers of the same types, tensors of the same dtype, shape and bytes."""
    if isinstance(ours, tl.Tensor):
        array = theirs.numpy()
        assert array.dtype == ours.numpy().dtype and array.shape == tuple(ours.shape)
        assert array.tobytes() == ours.numpy().tobytes()
        return
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(ours, dict):
        assert list(ours) == list(theirs)
        for key in ours:
            _same_tree(ours[key], theirs[key])
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same_tree(a, b)
    elif isinstance(ours, float) and math.isnan(ours):
        assert math.isnan(theirs)
    else:
        assert ours == theirs


NESTED = {
    "none": None,
    "bools": [True, False],
    "ints": [0, 255, 256, 65535, 65536, -1, -(2**31), 2**31, 2**63, -(2**70), 2**2039 - 1],
    "floats": (0.1, -0.0, 1e308, float("inf"), float("-inf"), float("nan")),
    "text": ["", "ünïcode ✓", "a" * 300],
    "bytes": [b"", b"\x00\xff raw", bytes(range(256))],
    7: {(1, "tuple key"): "int and tuple keys", 2.5: "float key", None: "None key"},
    "ordered": collections.OrderedDict([("b", 1), ("a", [collections.OrderedDict()])]),
    "deep": [[[[{"x": ()}]]]],
    "many": list(range(2500)),
    "wide": {f"k{i}": i for i in range(1500)},
}


# ---- without torch ------------------------------------------------------------------------------

def test_the_archive_has_torch_saves_members_in_its_order_each_aligned(tmp_path):
    tl.save({"w": tl.ones(2, 3), "b": tl.zeros(3)}, tmp_path / "ckpt.pt")
    infos = zipfile.ZipFile(tmp_path / "ckpt.pt").infolist()
    assert [info.filename for info in infos] == [
        "ckpt/data.pkl", "ckpt/.format_version", "ckpt/.storage_alignment", "ckpt/byteorder",
        "ckpt/data/0", "ckpt/data/1", "ckpt/version",
    ]
    assert all(info.compress_type == zipfile.ZIP_STORED for info in infos)
    data = (tmp_path / "ckpt.pt").read_bytes()
    assert all(_data_start(data, info) % 64 == 0 for info in infos)
    archive = zipfile.ZipFile(tmp_path / "ckpt.pt")
    assert archive.read("ckpt/byteorder") == b"little" and archive.read("ckpt/version") == b"3\n"
    assert archive.read("ckpt/.format_version") == b"1"
    assert archive.read("ckpt/.storage_alignment") == b"64"
    assert archive.read("ckpt/data/0") == np.ones((2, 3), "<f4").tobytes()
    assert archive.testzip() is None  # every CRC right


def test_the_pickle_is_protocol_2_and_names_only_allowed_globals():
    model, optimizer = _trained()
    obj = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "raw": b"x",
           "params": [nn.Parameter(tl.ones(2))], "od": collections.OrderedDict(a=1)}
    blob = _saved(obj)
    pickled = zipfile.ZipFile(io.BytesIO(blob)).read("archive/data.pkl")
    assert pickled[:2] == b"\x80\x02"
    ops = list(pickletools.genops(pickled))
    assert max(op.proto for op, _, _ in ops) <= 2
    assert _globals(pickled) <= ALLOWED_GLOBALS
    assert tl.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob)) == []


def test_archive_names_follow_torch():
    assert pt_writer.archive_name("runs/ckpt.pt") == "ckpt"
    assert pt_writer.archive_name("a.b.pt") == "a.b"
    assert pt_writer.archive_name("noext") == "noext"
    assert pt_writer.archive_name("dir.x/noext") == "noext"
    assert pt_writer.archive_name(io.BytesIO()) == "archive"
    assert pt_writer.archive_name(".pt") == "archive"  # torch.save refuses this name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_tl_load_round_trips_every_dtype_and_shape(dtype, shape):
    array = _array(dtype, shape)
    back = tl.load(io.BytesIO(_saved({"x": tl.from_numpy(array.copy())})))["x"]
    assert back.numpy().dtype == array.dtype and back.numpy().shape == shape
    assert back.numpy().tobytes() == array.tobytes()


def test_tl_load_round_trips_nested_containers_and_plain_values():
    _same_tree(NESTED, tl.load(io.BytesIO(_saved(NESTED))))


def test_views_share_one_storage_with_their_offsets_and_strides():
    base = tl.arange(24.0).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "row": base[2], "cols": base[:, 1::2],
           "corner": base[1:3, 4:]}
    blob = _saved(obj)
    assert [i.filename for i in _members(blob) if "/data/" in i.filename] == ["archive/data/0"]
    back = tl.load(io.BytesIO(blob))
    for name, value in obj.items():
        assert np.array_equal(back[name].numpy(), value.numpy()), name
    back["base"].numpy()[2, 1] = -1.0  # the loaded views share the loaded storage
    assert back["row"].numpy()[1] == -1.0 and back["t"].numpy()[1, 2] == -1.0
    assert back["cols"].numpy()[2, 0] == -1.0


def test_loaded_views_and_expanded_tensors_keep_their_storage_when_saved_again():
    base = tl.arange(6.0).reshape(2, 3)
    blob = _saved({"a": base, "t": base.t(), "wide": base[0].expand(4, 3)})
    back = tl.load(io.BytesIO(blob))  # views made with as_strided, as torch's rebuild makes them
    assert back["wide"].numpy().strides == (0, 4)
    again = _saved(back)
    assert [i.filename for i in _members(again) if "/data/" in i.filename] == ["archive/data/0"]
    assert again == blob


def test_views_no_storage_describes_are_copies():
    base = tl.arange(6.0)
    flipped = tl.from_numpy(base.numpy()[::-1])  # negative strides: torch has none
    as_int = tl.from_numpy(base.numpy().view(np.int32))  # another dtype than its base
    back = tl.load(io.BytesIO(_saved({"flipped": flipped, "as_int": as_int})))
    assert back["flipped"].numpy().tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    assert back["as_int"].numpy().tobytes() == as_int.numpy().tobytes()


def test_an_object_reached_twice_loads_as_one():
    shared, items = tl.ones(3), [1, 2]
    back = tl.load(io.BytesIO(_saved({"a": shared, "b": shared, "l1": items, "l2": items})))
    assert back["a"] is back["b"] and back["l1"] is back["l2"]


def test_parameters_and_requires_grad_round_trip():
    obj = {"p": nn.Parameter(tl.ones(2)), "frozen": nn.Parameter(tl.ones(2), requires_grad=False),
           "leaf": tl.ones(2, requires_grad=True), "plain": tl.ones(2)}
    back = tl.load(io.BytesIO(_saved(obj)))
    assert isinstance(back["p"], nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["frozen"], nn.Parameter) and not back["frozen"].requires_grad
    assert not isinstance(back["leaf"], nn.Parameter) and back["leaf"].requires_grad
    assert not back["plain"].requires_grad


def test_the_same_object_gives_the_same_bytes_and_a_reload_resaves_identically():
    model, optimizer = _trained()
    obj = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 2}
    assert _saved(obj) == _saved(obj)
    assert _saved(tl.load(io.BytesIO(_saved(obj)))) == _saved(obj)


@pytest.mark.parametrize(
    "value, refused",
    [
        (object(), "builtins.object"),
        ({"a": [1, {2, 3}], "w": tl.ones(2)}, None),  # a set: on the weights-only list
        ({"opt": {"state": {0: {"m": np.zeros(2)}}}}, "numpy._core.multiarray._reconstruct"),
        ({"model": nn.Linear(2, 2)}, "tensorlib.nn.modules.linear.Linear"),
        ({"f": len}, "builtins.len"),
        ({"b": bytearray(b"x")}, None),
        ({"k": {frozenset(): 1}}, "builtins.frozenset"),
    ],
)
def test_any_object_is_pickled_and_only_a_full_load_reads_what_it_needs(value, refused):
    blob = _saved(value)
    assert blob == _saved(value)  # the same object, the same bytes
    unsafe = tl.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(blob))
    if refused is None:
        assert unsafe == []
        _same_tree(value, tl.load(io.BytesIO(blob)))
    else:
        assert unsafe[0] == refused
        with pytest.raises(tl.serialization.CheckpointError, match=f"global {refused}, which a"):
            tl.load(io.BytesIO(blob))
    back = tl.load(io.BytesIO(blob), weights_only=False)
    assert type(back) is type(value)
    if isinstance(value, dict) and "model" not in value and "opt" not in value:
        assert list(back) == list(value) and back.keys() == value.keys()


def test_an_unpicklable_object_writes_nothing(tmp_path):
    for f in (tmp_path / "x.pt", io.BytesIO()):
        with pytest.raises((pickle.PicklingError, AttributeError)):
            tl.save({"w": tl.ones(2), "f": lambda: 1}, f)
    assert not list(tmp_path.iterdir())  # nothing written, not even a temporary


def test_ints_a_weights_only_load_cannot_read_load_whole():
    # pickle writes an int of 256 bytes or more with LONG4, which torch's weights-only
    # unpickler refuses ("Unsupported operand 139"), and so does tensorlib's
    assert tl.load(io.BytesIO(_saved([-(2**2039)])))[0] == -(2**2039)
    blob = _saved({"x": [2**2047]})
    with pytest.raises(tl.serialization.CheckpointError, match="opcode LONG4 is not allowed"):
        tl.load(io.BytesIO(blob))
    assert tl.load(io.BytesIO(blob), weights_only=False) == {"x": [2**2047]}


def test_nesting_too_deep_is_refused():
    deep: list = []
    for _ in range(pt_writer.MAX_DEPTH + 2):
        deep = [deep]
    with pytest.raises(ValueError, match="nested more than 64 levels deep"):
        tl.save(deep, io.BytesIO())


def test_paths_are_replaced_atomically_and_file_objects_written_from_their_position(tmp_path):
    path = tmp_path / "ckpt.pt"
    path.write_bytes(b"old")
    tl.save({"w": tl.ones(2)}, path)
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]
    assert tl.load(path)["w"].numpy().tolist() == [1.0, 1.0]
    tl.save({"w": tl.zeros(1)}, str(path))
    assert tl.load(os.fspath(path))["w"].numpy().tolist() == [0.0]
    buffer = io.BytesIO(b"prefix")
    buffer.seek(6)
    tl.save({"w": tl.ones(2)}, buffer)
    buffer.seek(6)
    assert tl.load(buffer)["w"].numpy().tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="binary file object"):
        tl.save({"w": tl.ones(1)}, io.StringIO())


def test_write_pt_is_what_tl_save_writes(tmp_path):
    buffer = io.BytesIO()
    write_pt({"w": tl.ones(2)}, buffer)
    assert buffer.getvalue() == _saved({"w": tl.ones(2)})


# ---- with torch ---------------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def _torch_load(blob: bytes, **kwargs):
    return _torch().load(io.BytesIO(blob), weights_only=True, **kwargs)


def _same_in_torch(ours, theirs):
    torch = _torch()
    if isinstance(ours, tl.Tensor):
        assert isinstance(theirs, torch.Tensor)
        assert isinstance(theirs, torch.nn.Parameter) == isinstance(ours, nn.Parameter)
        assert theirs.requires_grad == ours.requires_grad
        array = theirs.detach().numpy()
        assert str(array.dtype) == str(ours.numpy().dtype) and array.shape == tuple(ours.shape)
        assert array.tobytes() == np.ascontiguousarray(ours.numpy()).tobytes()
        return
    assert type(theirs) is type(ours), (type(ours), type(theirs))
    if isinstance(ours, dict):
        assert list(theirs) == list(ours)
        for key in ours:
            _same_in_torch(ours[key], theirs[key])
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same_in_torch(a, b)
    elif isinstance(ours, float) and math.isnan(ours):
        assert math.isnan(theirs)
    else:
        assert theirs == ours


@pytest.mark.parity
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_torch_reads_every_dtype_and_shape(dtype, shape):
    array = _array(dtype, shape)
    back = _torch_load(_saved({"x": tl.from_numpy(array.copy())}))["x"]
    assert str(back.dtype) == f"torch.{dtype}" and tuple(back.shape) == shape
    assert back.numpy().tobytes() == array.tobytes()


@pytest.mark.parity
def test_torch_reads_nested_containers_and_plain_values():
    _same_in_torch(NESTED, _torch_load(_saved(NESTED)))


@pytest.mark.parity
def test_torch_reads_views_sharing_one_storage():
    base = tl.arange(24.0).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "row": base[2], "cols": base[:, 1::2], "one": base[3, 5:]}
    back = _torch_load(_saved(obj))
    for name, value in obj.items():
        assert back[name].numpy().tolist() == value.numpy().tolist(), name
        assert back[name].stride() == tuple(s // 4 for s in value.numpy().strides), name
        assert back[name].untyped_storage().data_ptr() == back["base"].untyped_storage().data_ptr()
    assert back["row"].storage_offset() == 12 and back["cols"].storage_offset() == 1
    back["base"][2, 1] = -1.0
    assert back["row"][1].item() == -1.0 and back["t"][1, 2].item() == -1.0


@pytest.mark.parity
def test_torch_reads_an_expanded_tensor_with_its_zero_stride():
    back = _torch_load(_saved({"wide": tl.arange(3.0).expand(4, 3)}))["wide"]
    assert back.stride() == (0, 1) and back.tolist() == [[0.0, 1.0, 2.0]] * 4
    assert back.untyped_storage().nbytes() == 12


@pytest.mark.parity
def test_torch_reads_parameters_and_an_object_reached_twice_as_one():
    shared = nn.Parameter(tl.ones(3))
    obj = {"a": shared, "b": shared, "frozen": nn.Parameter(tl.ones(1), requires_grad=False),
           "grad": tl.ones(2, requires_grad=True), "list": [1], "again": None}
    obj["again"] = obj["list"]
    back = _torch_load(_saved(obj))
    _same_in_torch({k: v for k, v in obj.items()}, back)
    assert back["a"] is back["b"] and back["list"] is back["again"]


@pytest.mark.parity
def test_torch_loads_a_model_state_dict_and_an_optimizer_state_dict():
    torch = _torch()
    model, optimizer = _trained()
    blob = _saved({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    back = _torch_load(blob)
    _same_in_torch(model.state_dict(), back["model"])
    _same_in_torch(optimizer.state_dict(), back["optimizer"])
    twin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    twin.load_state_dict(back["model"])  # strict: every name and shape matches
    twin_optimizer = torch.optim.AdamW(twin.parameters(), lr=0.01)
    twin_optimizer.load_state_dict(back["optimizer"])
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    assert np.allclose(twin(torch.from_numpy(x)).detach().numpy(), model(tl.from_numpy(x)).numpy(),
                       atol=1e-6)
    assert twin_optimizer.state_dict()["param_groups"][0]["lr"] == 0.01


@pytest.mark.parity
def test_torch_loads_nanogpts_checkpoint_dict(tmp_path):
    torch = _torch()
    checkpoint = _gpt_checkpoint()
    tl.save(checkpoint, tmp_path / "ckpt.pt")
    back = torch.load(tmp_path / "ckpt.pt", map_location="cpu")  # nanoGPT's own call
    _same_in_torch(checkpoint, back)
    assert back["iter_num"] == 250 and back["model_args"]["n_embd"] == 8
    assert back["best_val_loss"].item() == pytest.approx(1.4696)
    _same_tree(checkpoint, tl.load(tmp_path / "ckpt.pt"))


@pytest.mark.parity
def test_the_layout_matches_torch_saves(tmp_path):
    torch = _torch()
    obj = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.zeros(3)}
    torch.save(obj, tmp_path / "theirs.pt")
    tl.save({"w": tl.arange(6.0).reshape(2, 3), "b": tl.zeros(3)}, tmp_path / "theirs2.pt")
    theirs = zipfile.ZipFile(tmp_path / "theirs.pt").infolist()
    ours = zipfile.ZipFile(tmp_path / "theirs2.pt").infolist()
    assert [i.filename.split("/", 1)[1] for i in ours] == [
        i.filename.split("/", 1)[1] for i in theirs if not i.filename.endswith("serialization_id")
    ]
    their_bytes = (tmp_path / "theirs.pt").read_bytes()
    our_bytes = (tmp_path / "theirs2.pt").read_bytes()
    assert [_data_start(our_bytes, i) % 64 for i in ours] == [0] * len(ours)
    assert [_data_start(their_bytes, i) % 64 for i in theirs] == [0] * len(theirs)
    theirs_pickle = zipfile.ZipFile(tmp_path / "theirs.pt").read("theirs/data.pkl")
    ours_pickle = zipfile.ZipFile(tmp_path / "theirs2.pt").read("theirs2/data.pkl")
    assert _globals(ours_pickle) == _globals(theirs_pickle)
    assert torch.serialization.get_unsafe_globals_in_checkpoint(tmp_path / "theirs2.pt") == []
    mapped = torch.load(tmp_path / "theirs2.pt", mmap=True, weights_only=True)
    assert mapped["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.mark.parity
def test_tensor_bytes_are_identical_both_ways(tmp_path):
    torch = _torch()
    for dtype in DTYPES:
        array = _array(dtype, (3, 4), seed=1)
        theirs = {"x": torch.from_numpy(array.copy()), "t": torch.from_numpy(array.copy()).t()}
        torch.save(theirs, tmp_path / "t.pt")
        loaded = tl.load(tmp_path / "t.pt")
        assert loaded["x"].numpy().tobytes() == theirs["x"].numpy().tobytes()
        assert loaded["t"].numpy().tobytes() == theirs["t"].contiguous().numpy().tobytes()
        ours = {"x": tl.from_numpy(array.copy())}
        ours["t"] = ours["x"].t()
        tl.save(ours, tmp_path / "o.pt")
        back = torch.load(tmp_path / "o.pt", weights_only=True)
        assert back["x"].numpy().tobytes() == ours["x"].numpy().tobytes()
        assert back["t"].contiguous().numpy().tobytes() == np.ascontiguousarray(
            ours["t"].numpy()).tobytes()
        # the storage bytes in the two archives are the same
        their_storage = zipfile.ZipFile(tmp_path / "t.pt").read("t/data/0")
        assert zipfile.ZipFile(tmp_path / "o.pt").read("o/data/0") == their_storage


@pytest.mark.parity
def test_torch_reads_file_objects_and_paths(tmp_path):
    torch = _torch()
    obj = {"w": tl.arange(4.0)}
    buffer = io.BytesIO()
    tl.save(obj, buffer)
    buffer.seek(0)
    assert torch.load(buffer)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    with open(tmp_path / "f.pth", "wb") as file:
        tl.save(obj, file)
    assert torch.load(tmp_path / "f.pth")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    tl.save(obj, str(tmp_path / "s.pt"))
    assert torch.load(str(tmp_path / "s.pt"))["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parity
def test_what_torch_saved_and_tl_resaved_torch_reads_back_equal(tmp_path):
    torch = _torch()
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 3)).sum().backward()
    optimizer.step()
    obj = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 1}
    torch.save(obj, tmp_path / "a.pt")
    tl.save(tl.load(tmp_path / "a.pt"), tmp_path / "b.pt")
    again = torch.load(tmp_path / "b.pt")
    for name, value in obj["model"].items():
        assert torch.equal(again["model"][name], value)
    assert again["optimizer"]["param_groups"] == obj["optimizer"]["param_groups"]
    for index, state in obj["optimizer"]["state"].items():
        for key, value in state.items():
            assert torch.equal(again["optimizer"]["state"][index][key], value)
