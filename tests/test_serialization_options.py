"""torch.serialization's other names in tensorlib.serialization (chapter 7, section 10), and
torch.save's / torch.load's keyword arguments, compared with PyTorch where it is installed."""

from __future__ import annotations

import io
import mmap
import pickle
import types
import warnings
import zipfile

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import serialization as tls
from tensorlib.serialization import options


def _state():
    return {"weight": tl.arange(6.0).reshape(2, 3), "bias": tl.ones(2), "step": 3}


@pytest.fixture(autouse=True)
def _restore_settings():
    yield
    tls.set_default_load_endianness(None)
    tls.set_crc32_options(True)
    tls.set_default_mmap_options(mmap.MAP_PRIVATE)


def _members(blob: bytes) -> list[str]:
    return [name.split("/", 1)[1] for name in zipfile.ZipFile(io.BytesIO(blob)).namelist()]


# ---------------------------------------------------------------- constants and settings


def test_constants_and_defaults():
    assert tls.DEFAULT_PROTOCOL == 2
    assert tls.MAGIC_NUMBER == 0x1950A86A20F9469CFC6C and tls.PROTOCOL_VERSION == 1001
    assert tls.STORAGE_KEY_SEPARATOR == ","
    assert (tls.SHORT_SIZE, tls.INT_SIZE) == (2, 4)
    assert tls.get_default_load_endianness() is None
    assert tls.get_crc32_options() is True
    assert tls.get_default_mmap_options() == mmap.MAP_PRIVATE
    assert issubclass(tls.SourceChangeWarning, Warning)
    assert [e.name for e in tls.LoadEndianness] == ["NATIVE", "LITTLE", "BIG"]


def test_set_default_load_endianness_checks_its_argument():
    tls.set_default_load_endianness(tls.LoadEndianness.BIG)
    assert tls.get_default_load_endianness() is tls.LoadEndianness.BIG
    with pytest.raises(TypeError, match="Invalid argument type in function"):
        tls.set_default_load_endianness("big")


def test_set_default_mmap_options_is_a_function_and_a_context_manager():
    with tls.set_default_mmap_options(mmap.MAP_SHARED):
        assert tls.get_default_mmap_options() == mmap.MAP_SHARED
    assert tls.get_default_mmap_options() == mmap.MAP_PRIVATE
    tls.set_default_mmap_options(mmap.MAP_SHARED)
    assert tls.get_default_mmap_options() == mmap.MAP_SHARED
    with pytest.raises(ValueError, match="expected mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got 7"):
        tls.set_default_mmap_options(7)


def test_crc32_option_is_kept_and_the_file_stays_valid():
    tls.set_crc32_options(False)
    assert tls.get_crc32_options() is False
    buffer = io.BytesIO()
    tl.save(_state(), buffer)
    assert zipfile.ZipFile(io.BytesIO(buffer.getvalue())).testzip() is None


def test_registry_location_tag_and_restore():
    t = tl.zeros(3)
    assert tls.location_tag(t) == "cpu"
    assert tls.default_restore_location(t, "cpu") is t
    with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
        tls.default_restore_location(t, "cuda:0")
    with pytest.raises(RuntimeError, match="don't know how to restore data location of .*xyz"):
        tls.default_restore_location(t, "xyz")
    with pytest.raises(RuntimeError, match="don't know how to determine data location of"):
        tls.location_tag(object())
    with pytest.raises(RuntimeError, match="torch.cuda.is_available"):
        tls.validate_cuda_device("cuda:0")


def test_register_package_comes_first_by_priority():
    seen = []

    def tagger(storage):
        seen.append("tag")
        return "mydevice" if getattr(storage, "mine", False) else None

    def restore(storage, location):
        return ("restored", location) if location == "mydevice" else None

    before = list(options._package_registry)
    try:
        tls.register_package(5, tagger, restore)
        assert tls.location_tag(tl.zeros(1)) == "cpu" and seen == ["tag"]
        marked = types.SimpleNamespace(mine=True)
        assert tls.location_tag(marked) == "mydevice"
        assert tls.default_restore_location(tl.zeros(1), "mydevice") == ("restored", "mydevice")
    finally:
        options._package_registry[:] = before


def test_check_module_version_greater_or_equal():
    module = types.SimpleNamespace(__name__="m", __version__="1.10.3")
    assert tls.check_module_version_greater_or_equal(module, (1, 2))
    assert not tls.check_module_version_greater_or_equal(module, (1, 11))
    bad = types.SimpleNamespace(__name__="m", __version__="abc")
    with pytest.raises(RuntimeError, match="'m' module version string is malformed 'abc'"):
        tls.check_module_version_greater_or_equal(bad, (1, 2))
    with pytest.warns(UserWarning, match="continuing assuming that requirement is met"):
        assert tls.check_module_version_greater_or_equal(bad, (1, 2), error_if_malformed=False)


def test_mkdtemp_removes_its_folder(tmp_path):
    import os

    with tls.mkdtemp() as path:
        open(os.path.join(path, "x"), "w").close()
        assert os.path.isdir(path)
    assert not os.path.exists(path)


# ---------------------------------------------------------------- skip_data, byteorder


def test_skip_data_saves_zeros_and_loads_zeros():
    buffer = io.BytesIO()
    with tls.skip_data():
        tl.save(_state(), buffer)
    loaded = tl.load(io.BytesIO(buffer.getvalue()))
    assert loaded["weight"].shape == (2, 3) and not loaded["weight"].numpy().any()
    assert loaded["step"] == 3
    full = io.BytesIO()
    tl.save(_state(), full)
    assert len(full.getvalue()) == len(buffer.getvalue())
    with tls.skip_data():
        skeleton = tl.load(io.BytesIO(full.getvalue()))
    assert skeleton["bias"].dtype == tl.float32 and not skeleton["bias"].numpy().any()
    assert tl.load(io.BytesIO(full.getvalue()))["bias"].numpy().tolist() == [1.0, 1.0]


def test_skip_data_is_per_thread_and_restored():
    import threading

    seen = []
    with tls.skip_data():
        thread = threading.Thread(target=lambda: seen.append(options._skipping_data()))
        thread.start()
        thread.join()
        assert options._skipping_data()
    assert seen == [False] and not options._skipping_data()


def test_skip_data_refuses_the_legacy_format():
    with tls.skip_data(), pytest.raises(RuntimeError, match="Cannot use skip_data=True with"):
        tl.save(_state(), io.BytesIO(), _use_new_zipfile_serialization=False)


def test_disable_byteorder_record_and_default_endianness():
    buffer = io.BytesIO()
    tl.save({"x": tl.tensor([1.0, 2.0])}, buffer, _disable_byteorder_record=True)
    blob = buffer.getvalue()
    assert "byteorder" not in _members(blob)
    assert tl.load(io.BytesIO(blob))["x"].numpy().tolist() == [1.0, 2.0]
    tls.set_default_load_endianness(tls.LoadEndianness.LITTLE)
    assert tl.load(io.BytesIO(blob))["x"].numpy().tolist() == [1.0, 2.0]
    tls.set_default_load_endianness(tls.LoadEndianness.BIG)
    big = tl.load(io.BytesIO(blob))["x"].numpy()
    assert big.tolist() == np.array([1.0, 2.0], "<f4").view(">f4").tolist()


# ---------------------------------------------------------------- save / load arguments


def test_save_accepts_torch_save_arguments():
    buffer = io.BytesIO()
    tl.save(_state(), buffer, pickle_module=pickle, pickle_protocol=4)
    assert tl.load(io.BytesIO(buffer.getvalue()))["step"] == 3
    with pytest.raises(ValueError, match="pickle protocol must be <= "):
        tl.save(_state(), io.BytesIO(), pickle_protocol=pickle.HIGHEST_PROTOCOL + 1)
    with pytest.warns(UserWarning, match="_use_new_zipfile_serialization=False is ignored"):
        tl.save(_state(), io.BytesIO(), _use_new_zipfile_serialization=False)


def test_load_accepts_torch_load_arguments(tmp_path):
    path = tmp_path / "s.pt"
    tl.save(_state(), path)
    for where in ["cpu", tl.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage, None]:
        loaded = tl.load(path, map_location=where, weights_only=True, mmap=True)
        assert loaded["weight"].numpy().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert tl.load(str(path), weights_only=None, mmap=False)["step"] == 3
    assert tl.load(path, pickle_module=pickle, weights_only=False)["step"] == 3
    assert tl.load(path, pickle_module=pickle)["step"] == 3  # weights_only=None: False then
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle"):
        tl.load(path, pickle_module=pickle, weights_only=True)
    with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
        tl.load(path, encoding="latin1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.load(path, weights_only=False, encoding="latin1")
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap"):
        tl.load(io.BytesIO(path.read_bytes()), mmap=True)
    safetensors_path = tmp_path / "s.safetensors"
    tls.save_file({"a": tl.ones(2)}, safetensors_path)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        tl.load(str(safetensors_path), mmap=True)


# ---------------------------------------------------------------- parity with PyTorch


@pytest.mark.parity
def test_names_match_torch_serialization():
    torch = pytest.importorskip("torch")
    ours = set(dir(tls))
    wanted = {
        "DEFAULT_PROTOCOL", "LONG_SIZE", "INT_SIZE", "SHORT_SIZE", "MAGIC_NUMBER",
        "PROTOCOL_VERSION", "STORAGE_KEY_SEPARATOR", "MAP_PRIVATE", "MAP_SHARED",
        "SourceChangeWarning", "LoadEndianness", "skip_data", "register_package",
        "location_tag", "default_restore_location", "check_module_version_greater_or_equal",
        "get_default_load_endianness", "set_default_load_endianness", "get_crc32_options",
        "set_crc32_options", "get_default_mmap_options", "set_default_mmap_options",
        "validate_cuda_device", "mkdtemp", "save", "load", "add_safe_globals",
        "clear_safe_globals", "get_safe_globals", "safe_globals",
        "get_unsafe_globals_in_checkpoint",
    }
    assert wanted <= ours
    for name in ["DEFAULT_PROTOCOL", "LONG_SIZE", "INT_SIZE", "SHORT_SIZE", "MAGIC_NUMBER",
                 "PROTOCOL_VERSION", "STORAGE_KEY_SEPARATOR", "MAP_PRIVATE", "MAP_SHARED"]:
        assert getattr(tls, name) == getattr(torch.serialization, name), name
    assert [(e.name, e.value) for e in tls.LoadEndianness] == [
        (e.name, e.value) for e in torch.serialization.LoadEndianness
    ]
    assert tls.get_default_load_endianness() == torch.serialization.get_default_load_endianness()
    assert tls.get_default_mmap_options() == torch.serialization.get_default_mmap_options()
    assert tls.get_crc32_options() == torch.serialization.get_crc32_options()


@pytest.mark.parity
def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in [
        (lambda: tls.set_default_load_endianness("big"),
         lambda: torch.serialization.set_default_load_endianness("big")),
        (lambda: tls.set_default_mmap_options(7),
         lambda: torch.serialization.set_default_mmap_options(7)),
        (lambda: tls.default_restore_location(tl.zeros(1), "cuda:0"),
         lambda: torch.serialization.default_restore_location(torch.zeros(1), "cuda:0")),
    ]:
        with pytest.raises(Exception) as mine:
            ours()
        with pytest.raises(Exception) as reference:
            theirs()
        assert type(mine.value) is type(reference.value)
        if not isinstance(reference.value, RuntimeError):
            assert str(mine.value) == str(reference.value)
    module = types.SimpleNamespace(__name__="m", __version__="1.x")
    with pytest.raises(RuntimeError) as mine:
        tls.check_module_version_greater_or_equal(module, (1, 2))
    with pytest.raises(RuntimeError) as reference:
        torch.serialization.check_module_version_greater_or_equal(module, (1, 2))
    assert str(mine.value) == str(reference.value)


@pytest.mark.parity
def test_torch_files_without_crc_and_skip_data_load_here():
    torch = pytest.importorskip("torch")
    before = torch.serialization.get_crc32_options()
    try:
        torch.serialization.set_crc32_options(False)
        buffer = io.BytesIO()
        torch.save({"w": torch.arange(4.0), "n": 2}, buffer)
    finally:
        torch.serialization.set_crc32_options(before)
    assert tl.load(io.BytesIO(buffer.getvalue()))["w"].numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    with torch.serialization.skip_data():
        skipped = io.BytesIO()
        torch.save({"w": torch.arange(4.0)}, skipped)
    loaded = tl.load(io.BytesIO(skipped.getvalue()))["w"]
    assert loaded.shape == (4,) and not loaded.numpy().any()


@pytest.mark.parity
def test_our_skip_data_and_byteorder_files_load_in_torch():
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    with tls.skip_data():
        tl.save(_state(), buffer)
    theirs = torch.load(io.BytesIO(buffer.getvalue()))
    assert theirs["weight"].shape == (2, 3) and not theirs["weight"].any()
    reference = io.BytesIO()
    with torch.serialization.skip_data():
        torch.save({"weight": torch.arange(6.0).reshape(2, 3)}, reference)
    assert set(_members(buffer.getvalue())) - {"data/1"} <= set(_members(reference.getvalue()))
    plain = io.BytesIO()
    tl.save(_state(), plain, _disable_byteorder_record=True)
    theirs = torch.load(io.BytesIO(plain.getvalue()))
    assert theirs["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    torch_plain = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, torch_plain, _disable_byteorder_record=True)
    # PyTorch 2.13's zip writer adds a byteorder member at the end all the same
    assert _members(torch_plain.getvalue()).count("byteorder") == 1
    assert tl.load(io.BytesIO(torch_plain.getvalue()))["w"].numpy().tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parity
def test_load_keyword_errors_match_torch(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "t.pt"
    torch.save({"w": torch.arange(3.0)}, path)
    for kwargs in [{"pickle_module": pickle, "weights_only": True}]:
        with pytest.raises(RuntimeError) as reference:
            torch.load(path, **kwargs)
        with pytest.raises(RuntimeError) as mine:
            tl.load(path, **kwargs)
        assert str(mine.value) == str(reference.value)
    with pytest.raises(ValueError) as reference:
        torch.load(io.BytesIO(path.read_bytes()), mmap=True)
    with pytest.raises(ValueError) as mine:
        tl.load(io.BytesIO(path.read_bytes()), mmap=True)
    assert str(mine.value) == str(reference.value)
    with pytest.warns(UserWarning, match="pickle_load_args only works"):
        torch.load(path, encoding="latin1")
    with pytest.warns(UserWarning, match="pickle_load_args only works"):
        tl.load(path, encoding="latin1")
    ours = tl.load(path, map_location=tl.device("cpu"), mmap=True)
    theirs = torch.load(path, map_location=torch.device("cpu"), mmap=True)
    assert ours["w"].numpy().tolist() == theirs["w"].tolist()
    for protocol in [2, 3, 4, 5]:
        buffer = io.BytesIO()
        tl.save(_state(), buffer, pickle_protocol=protocol)
        assert torch.load(io.BytesIO(buffer.getvalue()))["step"] == 3


@pytest.mark.parity
def test_the_plain_values_torchs_weights_only_load_rebuilds_load(tmp_path):
    torch = pytest.importorskip("torch")
    import collections

    values = {"w": torch.arange(3.0), "tags": {1, 2}, "raw": bytearray(b"ab"), "z": 1 + 2j,
              "counts": collections.Counter("aab"), "shape": torch.Size([2, 3])}
    path = tmp_path / "values.pt"
    torch.save(values, path)
    ours = tl.load(path)
    theirs = torch.load(path)
    assert ours["w"].numpy().tolist() == theirs["w"].tolist()
    for key in ["tags", "raw", "z", "counts"]:
        assert ours[key] == theirs[key] and type(ours[key]) is type(theirs[key])
    assert ours["shape"] == (2, 3) and isinstance(ours["shape"], tl.Size)
