"""Chapter 7 (issue 22): ``tl.load`` reads PyTorch's own ``torch.save`` zip archives, weights only.

Without torch: archives written here with the standard library (the chapter's ``tiny_torch_save``,
generalised) and hostile variants of them. With torch 2.13 (``parity``): files that
``torch.save`` wrote, compared element by element, and our hand-written archives loaded by
``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.serialization import CheckpointError


def _text(s: str) -> bytes:
    raw = s.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw


def _int(n: int) -> bytes:
    if -2**31 <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw  # LONG1


def _tuple(items) -> bytes:
    return b"(" + b"".join(items) + b"t"


def _tensor(
    key,
    storage="FloatStorage",
    numel=6,
    offset=0,
    size=(2, 3),
    stride=(3, 1),
    location="cpu",
    extra=b"",
):
    pid = _tuple(
        [
            _text("storage"),
            b"ctorch\n%s\n" % storage.encode(),
            _text(key),
            _text(location),
            _int(numel),
        ]
    )
    return (
        b"ctorch._utils\n_rebuild_tensor_v2\n("
        + pid
        + b"Q"
        + _int(offset)
        + _tuple(map(_int, size))
        + _tuple(map(_int, stride))
        + b"\x89ccollections\nOrderedDict\n)R"
        + extra
        + b"tR"
    )


def _archive(
    pickled: bytes, storages: dict[str, bytes], byteorder=b"little", folder="archive"
) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(f"{folder}/data.pkl", pickled)
        if byteorder is not None:
            archive.writestr(f"{folder}/byteorder", byteorder)
        for key, raw in storages.items():
            archive.writestr(f"{folder}/data/{key}", raw)
        archive.writestr(f"{folder}/version", "3\n")
    return out.getvalue()


def _dict(items: dict[str, bytes]) -> bytes:
    return b"\x80\x02}(" + b"".join(_text(k) + v for k, v in items.items()) + b"u."


SIX = np.arange(6, dtype="<f4").tobytes()


def _load(blob, **kwargs):
    return tl.load(io.BytesIO(blob), **kwargs)


def test_a_hand_written_archive_loads_with_views_sharing_their_storage():
    blob = _archive(
        _dict(
            {
                "w": _tensor("0"),
                "t": _tensor("0", size=(3, 2), stride=(1, 3)),
                "row": _tensor("0", numel=6, offset=3, size=(3,), stride=(1,)),
            }
        ),
        {"0": SIX},
    )
    out = _load(blob)
    w, t, row = out["w"].numpy(), out["t"].numpy(), out["row"].numpy()
    assert (
        w.tolist() == [[0, 1, 2], [3, 4, 5]]
        and np.array_equal(t, w.T)
        and row.tolist() == [3, 4, 5]
    )
    assert np.shares_memory(w, t) and np.shares_memory(w, row)


def test_every_dtype_and_big_endian_storages():
    codes = {
        "FloatStorage": "f4",
        "DoubleStorage": "f8",
        "HalfStorage": "f2",
        "LongStorage": "i8",
        "IntStorage": "i4",
        "ShortStorage": "i2",
        "CharStorage": "i1",
        "ByteStorage": "u1",
        "BoolStorage": "b1",
    }
    for order, prefix in [(b"little", "<"), (b"big", ">")]:
        items, storages = {}, {}
        for i, (name, code) in enumerate(codes.items()):
            values = np.array(
                [1, 0, 1], dtype=prefix + code if code not in ("i1", "u1", "b1") else code
            )
            items[name] = _tensor(str(i), name, 3, size=(3,), stride=(1,))
            storages[str(i)] = values.tobytes()
        out = _load(_archive(_dict(items), storages, order))
        for name, code in codes.items():
            assert out[name].numpy().dtype == np.dtype(code) and out[name].numpy().tolist() == [
                1,
                0,
                1,
            ], (order, name)


@pytest.mark.parametrize(
    "pickled, storages, message",
    [
        (
            _dict({"w": b"cos\nsystem\n" + _text("echo hi") + b"\x85R"}),
            {},
            "asks for the global os.system",
        ),
        (
            _dict({"w": b"cbuiltins\neval\n" + _text("1") + b"\x85R"}),
            {},
            "asks for the global builtins.eval",
        ),
        (
            b"\x80\x02(ccollections\nOrderedDict\n" + _text("echo hi") + b"o.",
            {},
            "opcode OBJ is not allowed",
        ),
        (b"\x80\x02(" + _text("x") + b"ios\nsystem\n.", {}, "opcode INST is not allowed"),
        (b"\x80\x02\x82\x01.", {}, "opcode EXT1 is not allowed"),
        (b"\x80\x02]r\xff\xff\xff\x7f.", {}, "LONG_BINPUT 2147483647 past"),
        (b"\x80\x04\x95" + struct.pack("<Q", 2**62) + b"N.", {}, "FRAME 4611686018427387904 past"),
        (b"\x80\x04\x8e" + struct.pack("<Q", 2**62) + b"abc", {}, "not a valid pickle"),
        (
            _dict({"w": _tensor("0", "BFloat16Storage", 1, size=(1,), stride=(1,))}),
            {"0": b"\0\0"},
            "bfloat16 has no numpy dtype",
        ),
        (
            _dict({"w": _tensor("0", "ComplexFloatStorage", 1, size=(1,), stride=(1,))}),
            {"0": b"\0" * 8},
            "ComplexFloatStorage",
        ),
        (
            _dict({"w": _tensor("0", numel=6, offset=1)}),
            {"0": SIX},
            "reach element 6, past the storage's 6",
        ),
        (
            _dict({"w": _tensor("0", numel=6, size=(2, 3), stride=(4, 1))}),
            {"0": SIX},
            "past the storage",
        ),
        (
            _dict({"w": _tensor("0", numel=6, size=(2, 3), stride=(3, -1))}),
            {"0": SIX},
            "integers >= 0",
        ),
        (
            _dict({"w": _tensor("0", numel=6, size=(2, 3), stride=(3,))}),
            {"0": SIX},
            "of one length",
        ),
        (
            _dict({"w": _tensor("0", numel=6, size=(1,) * 65, stride=(1,) * 65)}),
            {"0": SIX},
            "at most 64",
        ),
        (
            _dict({"w": _tensor("0", numel=6, size=(0, 2**62), stride=(1, 1))}),
            {"0": SIX},
            "overflows",
        ),
        (
            _dict({"w": _tensor("0", numel=7)}),
            {"0": SIX},
            "holds 24 bytes, but 7 elements of float32 need 28",
        ),
        (_dict({"w": _tensor("1")}), {"0": SIX}, "storage '1' has no member"),
        (
            _dict({"w": _tensor("0", "BoolStorage", 2, size=(2,), stride=(1,))}),
            {"0": b"\x01\x02"},
            "neither 0 nor 1",
        ),
        (
            _dict({"w": _tensor("0", location="cuda:0")}),
            {"0": SIX},
            "saved on 'cuda:0'.*map_location='cpu'",
        ),
        (
            _dict({"w": _tensor("0", extra=b"}" + _text("x") + _int(1) + b"s")}),
            {"0": SIX},
            "of one length|at most 64|cannot",
        ),
        (
            _dict({"w": _tensor("0") + b"}" + _text("array") + _int(1) + b"sb"}),
            {"0": SIX},
            "not a valid torch.save archive",
        ),
        (b"\x80\x02]q\x00h\x00a.", {}, "contains itself"),
        (b"\x80\x02" + b"]" * 70 + b"a" * 69 + b".", {}, "nests past 64"),
        (b"\x80\x02ccollections\nOrderedDict\n" + _text("x") + b"\x85R.", {}, "rebuilt empty"),
        (b"\x80\x02c_codecs\nencode\n" + _text("x") + _text("utf-16") + b"\x86R.", {}, "latin1"),
        (b"\x80\x02ctorch\nFloatStorage\n.", {}, "holds a StorageType object"),
        (b"\x80\x02" + _tuple([_text("storage")]) + b"Q.", {}, "a persistent id must be"),
        (b"\x80\x02X\xff\xff\xff\x7fabc", {}, "not a valid pickle"),
        (b"", {}, "not a valid pickle"),
    ],
)
def test_hostile_pickles_are_refused(pickled, storages, message):
    with pytest.raises(CheckpointError, match=message):
        _load(_archive(pickled, storages))


def test_a_refused_global_never_runs(tmp_path):
    marker = tmp_path / "ran"
    blob = _archive(_dict({"w": b"cos\nsystem\n" + _text(f"touch {marker}") + b"\x85R"}), {})
    with pytest.raises(CheckpointError):
        _load(blob)
    assert not marker.exists()


def test_build_cannot_alter_the_allowed_globals():
    # BUILD with a slot state on an allowed global, then use it: the global is immutable
    pickled = (
        b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(N}"
        + _text("function")
        + b"cos\nsystem\nsb.".replace(b"cos\nsystem\n", _int(1))
    )
    with pytest.raises(CheckpointError):
        _load(_archive(pickled, {}))


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda blob: blob[:100], "not a valid torch.save archive"),
        (
            lambda blob: blob.replace(b"archive/data.pkl", b"archive/dat2.pkl"),
            "holds one <name>/data.pkl",
        ),
        (
            lambda blob: blob.replace(b"little", b"middle"),
            "not a valid torch.save archive|byteorder",
        ),
    ],
)
def test_damaged_archives(mutate, message):
    blob = _archive(_dict({"w": _tensor("0")}), {"0": SIX})
    with pytest.raises(CheckpointError, match=message):
        _load(mutate(blob))


def test_a_stored_size_past_the_file_is_refused_before_it_is_read(tmp_path):
    # found by the fuzzer: one flipped bit in the central directory made zipfile read 128 MiB at
    # once
    blob = bytearray(_archive(_dict({"w": _tensor("0")}), {"0": SIX}))
    entry = blob.rfind(b"PK\x01\x02", 0, blob.rfind(b"archive/data/0") + 1)
    blob[entry + 20: entry + 24] = struct.pack("<I", 2**27 + 24)  # compressed size of data/0
    (tmp_path / "m.pt").write_bytes(bytes(blob))
    with pytest.raises(
        CheckpointError, match="member 'archive/data/0' claims 24 bytes .134217752 stored."
    ):
        tl.load(tmp_path / "m.pt")


def test_compressed_members_and_torchscript_archives_are_refused():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", _dict({"w": _tensor("0")}))
        archive.writestr("archive/data/0", SIX)
    with pytest.raises(CheckpointError, match="compressed or encrypted"):
        _load(out.getvalue())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("model/constants.pkl", b"\x80\x02).")
        archive.writestr("model/code/__torch__.py", b"")
    with pytest.raises(CheckpointError, match="TorchScript"):
        _load(out.getvalue())


def test_the_legacy_format_is_refused_clearly():
    legacy = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19." + pickle.dumps({"w": 1}, protocol=2)
    with pytest.raises(CheckpointError, match="legacy format .before PyTorch 1.6, not a zip."):
        _load(legacy)


def test_map_location_callable_sees_each_storage_and_its_location():
    seen = []
    blob = _archive(_dict({"w": _tensor("0", location="cuda:0")}), {"0": SIX})
    out = _load(
        blob,
        map_location=lambda storage, location: (
            seen.append((tuple(storage.shape), location)) or storage
        ),
    )
    assert seen == [((6,), "cuda:0")] and out["w"].shape == (2, 3)
    assert _load(blob, map_location={"cuda:0": "cpu"})["w"].shape == (2, 3)
    assert _load(blob, map_location="cpu")["w"].shape == (2, 3)
    with pytest.raises(CheckpointError, match="map_location returned"):
        _load(blob, map_location=lambda storage, location: 3)


# ---- files written by torch 2.13
# ------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def _saved(obj, **kwargs) -> bytes:
    buffer = io.BytesIO()
    _torch().save(obj, buffer, **kwargs)
    return buffer.getvalue()


def _same(ours, theirs):
    torch = _torch()
    if isinstance(theirs, torch.Tensor):
        array = theirs.detach().numpy()
        assert (
            isinstance(ours, tl.Tensor)
            and ours.numpy().dtype == array.dtype
            and np.array_equal(ours.numpy(), array)
        )
        assert isinstance(ours, tl.nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
        assert ours.requires_grad == theirs.requires_grad
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for key in theirs:
            _same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _same(a, b)
    else:
        assert ours == theirs and type(ours) is type(theirs)


@pytest.mark.parity
def test_state_dicts_of_a_small_model_and_its_optimizer():
    torch = _torch()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 8), torch.nn.LayerNorm(8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.randn(4, 3)).square().mean().backward()
    optimizer.step()
    obj = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": 3,
        "loss": 0.25,
    }
    ours = _load(_saved(obj))
    _same(ours, torch.load(io.BytesIO(_saved(obj)), weights_only=True))
    loaded = tl.nn.Sequential(
        tl.nn.Linear(3, 8), tl.nn.LayerNorm(8), tl.nn.ReLU(), tl.nn.Linear(8, 2)
    )
    loaded.load_state_dict(ours["model"])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    assert np.allclose(
        loaded(tl.from_numpy(x)).detach().numpy(),
        model(torch.from_numpy(x)).detach().numpy(),
        atol=1e-6,
    )


@pytest.mark.parity
def test_nested_containers_views_shared_storages_and_dtypes():
    torch = _torch()
    base = torch.arange(24.0).reshape(4, 6)
    obj = {
        "views": [base, base.t(), base[1:3, ::2], base[:, 2], base.reshape(-1)[5:]],
        "nested": {"a": (1, [2.5, None]), "b": {"c": "text", "d": True, 7: b"bytes"}},
        "p": torch.nn.Parameter(torch.ones(3)),
        "frozen": torch.nn.Parameter(torch.zeros(2), requires_grad=False),
        "grad": torch.ones(2, requires_grad=True),
        "dtypes": [
            torch.arange(4, dtype=d)
            for d in (
                torch.float16,
                torch.float32,
                torch.float64,
                torch.int8,
                torch.int16,
                torch.int32,
                torch.int64,
                torch.uint8,
            )
        ],
        "mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 4),
        "expanded": torch.ones(3, 1).expand(3, 4),
    }
    blob = _saved(obj)
    ours = _load(blob)
    _same(ours, torch.load(io.BytesIO(blob), weights_only=True))
    views = [v.numpy() for v in ours["views"]]
    assert all(np.shares_memory(views[0], v) for v in views[1:])
    assert views[1].strides == (4, 24) and ours["expanded"].numpy().strides == (4, 0)


@pytest.mark.parity
def test_tied_weights_stay_tied():
    torch = _torch()
    embedding = torch.nn.Embedding(5, 3)
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = embedding.weight
    sd = torch.nn.ModuleDict({"wte": embedding, "head": head}).state_dict()
    ours = _load(_saved(sd))
    assert np.shares_memory(ours["wte.weight"].numpy(), ours["head.weight"].numpy())


@pytest.mark.parity
def test_paths_file_objects_and_map_location(tmp_path):
    torch = _torch()
    torch.save({"w": torch.arange(3.0)}, tmp_path / "m.pt")
    assert tl.load(tmp_path / "m.pt")["w"].numpy().tolist() == [0, 1, 2]
    assert tl.load(str(tmp_path / "m.pt"), map_location=torch.device("cpu"))["w"].shape == (3,)
    with open(tmp_path / "m.pt", "rb") as file:
        assert tl.load(file, map_location="cpu", weights_only=True)["w"].shape == (3,)
    with pytest.raises(ValueError, match="CPU only"):
        tl.load(tmp_path / "m.pt", map_location=torch.device("meta"))


@pytest.mark.parity
def test_bfloat16_and_the_legacy_format_are_refused_clearly():
    torch = _torch()
    with pytest.raises(CheckpointError, match="bfloat16 has no numpy dtype"):
        _load(_saved({"w": torch.ones(2, dtype=torch.bfloat16)}))
    with pytest.raises(CheckpointError, match="legacy format"):
        _load(_saved({"w": torch.ones(2)}, _use_new_zipfile_serialization=False))


@pytest.mark.parity
def test_objects_outside_the_allow_list_are_refused_as_torch_weights_only_refuses_them():
    import argparse

    torch = _torch()
    # a training script's configuration, saved whole
    blob = _saved({"args": argparse.Namespace(lr=0.1)})
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(blob), weights_only=True)
    with pytest.raises(
        CheckpointError, match="argparse.Namespace, which a weights-only load refuses"
    ):
        _load(blob)


@pytest.mark.parity
def test_torch_reads_the_hand_written_archives():
    torch = _torch()
    blob = _archive(
        _dict({"w": _tensor("0"), "t": _tensor("0", size=(3, 2), stride=(1, 3))}), {"0": SIX}
    )
    theirs = torch.load(io.BytesIO(blob), weights_only=True)
    _same(_load(blob), theirs)


# ---- dtypes and devices, as PyTorch pickles them (torch.float32, torch.device("cpu"))

_DTYPE_NAMES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _device_call(*args: bytes) -> bytes:
    return b"ctorch\ndevice\n" + _tuple(list(args)) + b"R"


def test_dtypes_and_devices_load_weights_only_as_tensorlibs():
    items = {name: b"ctorch\n%s\n" % name.encode() for name in _DTYPE_NAMES}
    items["cpu"] = _device_call(_text("cpu"))
    items["cuda1"] = _device_call(_text("cuda"), _int(1))
    back = _load(_archive(_dict(items), {}))
    assert [back[name] for name in _DTYPE_NAMES] == [getattr(tl, name) for name in _DTYPE_NAMES]
    assert back["cpu"] == tl.device("cpu") and isinstance(back["cpu"], tl.device)
    assert (back["cuda1"].type, back["cuda1"].index) == ("cuda", 1)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (_device_call(_int(3)), "torch.device takes a device type and an index"),
        (_device_call(_text("cpu"), _int(0), _int(1)), "torch.device takes a device type"),
        (b"ctorch\nfloat32\n" + _tuple([_text("f4")]) + b"R", "calls a numpy"),
        (b"ctorch\nfloat32\n}b", "sets the state of a numpy"),
        (b"ctorch\nbfloat16\n", "the dtype torch.bfloat16, which tensorlib does not have"),
        (b"cnumpy\ndtype\n", "global numpy.dtype, which a weights-only load refuses"),
    ],
)
def test_dtypes_and_devices_can_only_be_named(value, message):
    # a dtype is pushed as itself: never called, never changed; a device only from its name
    with pytest.raises(CheckpointError, match=message):
        _load(_archive(_dict({"x": value}), {}))


def _pickle_of(blob: bytes) -> bytes:
    archive = zipfile.ZipFile(io.BytesIO(blob))
    return archive.read(next(n for n in archive.namelist() if n.endswith("/data.pkl")))


def test_tl_save_writes_dtypes_and_devices_by_pytorchs_names():
    obj = {"dtype": tl.float32, "again": tl.float32, "long": tl.long, "device": tl.device("cpu"),
           "indexed": tl.device("cpu", 0), "w": tl.ones(2, dtype=tl.float64)}
    buffer = io.BytesIO()
    tl.save(obj, buffer)
    pickled = _pickle_of(buffer.getvalue())
    assert b"ctorch\nfloat32\n" in pickled and b"ctorch\nint64\n" in pickled
    assert b"ctorch\ndevice\n" in pickled and b"numpy" not in pickled
    assert pickled.count(b"ctorch\nfloat32\n") == 1  # written once, then referred to
    assert tl.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buffer.getvalue())) == []
    back = _load(buffer.getvalue())
    assert back["dtype"] == back["again"] == tl.float32 and back["long"] == tl.int64
    assert back["device"] == tl.device("cpu") and back["indexed"].index == 0


@pytest.mark.parity
def test_dtypes_and_devices_load_in_both_libraries_weights_only():
    torch = _torch()
    theirs = {"dtypes": [getattr(torch, name) for name in _DTYPE_NAMES],
              "config": {"dtype": torch.float32, "device": torch.device("cpu")},
              "cuda": torch.device("cuda", 1), "w": torch.ones(2)}
    back = _load(_saved(theirs))  # torch.save -> tl.load, weights only
    assert back["dtypes"] == [getattr(tl, name) for name in _DTYPE_NAMES]
    assert back["config"] == {"dtype": tl.float32, "device": tl.device("cpu")}
    assert (back["cuda"].type, back["cuda"].index) == ("cuda", 1)
    ours = {"dtypes": [getattr(tl, name) for name in _DTYPE_NAMES],
            "config": {"dtype": tl.float32, "device": tl.device("cpu")},
            "cuda": tl.device("cuda", 1), "w": tl.ones(2)}
    buffer = io.BytesIO()
    tl.save(ours, buffer)
    again = torch.load(io.BytesIO(buffer.getvalue()))  # tl.save -> torch.load, its default
    assert again["dtypes"] == theirs["dtypes"] and again["config"] == theirs["config"]
    assert again["cuda"] == torch.device("cuda", 1) and again["w"].tolist() == [1.0, 1.0]
    with pytest.raises(CheckpointError, match="torch.bfloat16, which tensorlib does not have"):
        _load(_saved({"dtype": torch.bfloat16}))


@pytest.mark.parity
def test_a_device_in_a_whole_pickle_loads_as_torchs():
    torch = _torch()
    import argparse

    buffer = io.BytesIO()
    tl.save({"args": argparse.Namespace(device=tl.device("cpu"))}, buffer)
    theirs = torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)
    assert theirs["args"].device == torch.device("cpu")
    assert _load(buffer.getvalue(), weights_only=False)["args"].device == tl.device("cpu")


def _python_2_string_archive(torch, text: bytes) -> bytes:
    """A torch.save archive whose data.pkl is one Python 2 string: PROTO 2, SHORT_BINSTRING
    ``text``, STOP."""
    pickled = b"\x80\x02U" + bytes([len(text)]) + text + b"."
    saved = io.BytesIO()
    torch.save({"a": 1}, saved)
    archive, swapped = zipfile.ZipFile(io.BytesIO(saved.getvalue())), io.BytesIO()
    with zipfile.ZipFile(swapped, "w", zipfile.ZIP_STORED) as out:
        for info in archive.infolist():
            member = info.filename
            out.writestr(member, pickled if member.endswith("data.pkl") else archive.read(member))
    return swapped.getvalue()


@pytest.mark.parity
def test_a_python_2_string_reads_as_utf8_in_a_weights_only_load_as_torch():
    torch = pytest.importorskip("torch")
    data = _python_2_string_archive(torch, "héllo".encode())
    assert tl.load(io.BytesIO(data)) == torch.load(io.BytesIO(data)) == "héllo"


@pytest.mark.parity
@pytest.mark.parametrize("encoding", ["utf-8", "latin1", "ASCII", "bytes"])
@pytest.mark.parametrize("text", [b"abc", "é".encode(), b"\xe9bc"], ids=["ascii", "utf8", "latin1"])
def test_a_weights_only_load_decodes_python_2_strings_with_encoding_as_torch(encoding, text):
    """``encoding=`` decodes a Python 2 string in a weights-only load too (``"bytes"`` keeps
    it), with PyTorch's warning that unpickler arguments only work with ``weights_only=False``;
    bytes the encoding cannot decode are refused, naming the codec's error."""
    torch = pytest.importorskip("torch")
    data = _python_2_string_archive(torch, text)
    warning = "pickle_load_args only works if `weights_only=False`"
    try:
        with pytest.warns(UserWarning, match=warning):
            theirs = torch.load(io.BytesIO(data), encoding=encoding)
    except UnicodeDecodeError as error:
        with pytest.warns(UserWarning, match=warning), pytest.raises(CheckpointError) as ours:
            tl.load(io.BytesIO(data), encoding=encoding)
        assert str(ours.value).endswith(f"UnicodeDecodeError: {error}")
    else:
        with pytest.warns(UserWarning, match=warning):
            ours = tl.load(io.BytesIO(data), encoding=encoding)
        assert type(ours) is type(theirs) and ours == theirs
