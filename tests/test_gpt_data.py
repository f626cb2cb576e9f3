"""tensorlib.gpt.data: the corpus, CharTokenizer, train_val_split and BatchSampler (chapter 8)."""

import csv
import math
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.gpt.data import (
    DEFAULT_CORPUS,
    BatchSampler,
    CharTokenizer,
    load_corpus,
    text_digest,
    train_val_split,
)

# SHA-256 of tensorlib/gpt/corpus/pydoc_topics.txt (CPython 3.11.7's pydoc topics, see
# LICENSE-PSF.txt there)
CORPUS_SHA256 = "2a95af4ac93f5b719944030ce3769070ddf827d847cba42192afa8da989e5dc4"


def test_shipped_corpus_and_licence():
    text = load_corpus()
    assert len(text) > 400_000 and 90 <= len(set(text)) <= 110
    assert "assert_stmt" in text
    licence = DEFAULT_CORPUS.parent / "LICENSE-PSF.txt"
    assert "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2" in licence.read_text(encoding="utf-8")


def test_shipped_corpus_is_package_data():
    # the corpus lives inside the package (so a plain `pip install` brings it), byte for byte the
    # documented one
    package = Path(tl.__file__).resolve().parent
    assert DEFAULT_CORPUS.is_relative_to(package) and DEFAULT_CORPUS.is_file()
    assert text_digest(load_corpus()) == text_digest(load_corpus(DEFAULT_CORPUS)) == CORPUS_SHA256
    with (resources.files("tensorlib.gpt") / "long_run" / "log.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert [int(r["step"]) for r in rows] == list(range(250, 3001, 250))
    assert all(0 < float(r["val_loss"]) < math.log(len(set(load_corpus()))) for r in rows)


def test_load_corpus_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_corpus(tmp_path / "missing.txt")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        load_corpus(tmp_path / "latin1.txt")
    (tmp_path / "one.txt").write_text("aaaa")
    with pytest.raises(ValueError, match="two distinct characters"):
        load_corpus(tmp_path / "one.txt")


def test_tokenizer_round_trip():
    text = load_corpus()
    tok = CharTokenizer.from_text(text)
    ids = tok.encode(text)
    assert ids.dtype == np.int64 and ids.shape == (len(text),)
    assert tok.decode(ids) == text
    assert tok.decode(tl.tensor(ids[:50].reshape(5, 10))) == text[:50]
    assert tok.chars == "".join(sorted(set(text)))
    assert CharTokenizer.from_state_dict(tok.state_dict()) == tok
    assert tok.encode("").shape == (0,) and tok.decode([]) == ""


def test_tokenizer_errors():
    tok = CharTokenizer("abc")
    with pytest.raises(
        ValueError, match=r"character 'z' at position 2 is not in the vocabulary of 3"
    ):
        tok.encode("abz")
    with pytest.raises(ValueError, match=r"ids must be integers in \[0, 3\)"):
        tok.decode([0, 3])
    with pytest.raises(ValueError, match=r"ids must be integers"):
        tok.decode(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="repeats the characters \\['a'\\]"):
        CharTokenizer("aba")
    with pytest.raises(ValueError, match="single characters"):
        CharTokenizer(["ab", "c"])


def test_split_is_seeded_and_disjoint():
    ids = np.arange(100 * 64) % 97
    train, val = train_val_split(ids, val_fraction=0.1, chunk_size=64, seed=3)
    assert len(train) == 90 * 64 and len(val) == 10 * 64
    again = train_val_split(ids, val_fraction=0.1, chunk_size=64, seed=3)
    other = train_val_split(ids, val_fraction=0.1, chunk_size=64, seed=4)
    assert np.array_equal(again[1], val) and not np.array_equal(other[1], val)
    marks = np.arange(100 * 64)  # unique ids: every position lands exactly once
    tr, va = train_val_split(marks, 0.1, 64, 3)
    assert np.array_equal(np.sort(np.concatenate([tr, va])), marks)
    # chunks stay contiguous and in text order
    assert np.all(np.diff(tr.reshape(-1, 64), axis=1) == 1)
    with pytest.raises(ValueError, match="val_fraction must be in"):
        train_val_split(ids, val_fraction=1.0)
    with pytest.raises(ValueError, match="at least one chunk on each side"):
        train_val_split(ids[:100], val_fraction=0.1, chunk_size=64)


def test_sampler_windows_stay_in_chunks_and_shift():
    data = np.arange(10 * 32, dtype=np.int64)
    sampler = BatchSampler(data, batch_size=64, block_size=8, chunk_size=32, seed=0)
    for _ in range(20):
        x, y = sampler.next()
        x, y = x.numpy(), y.numpy()
        assert x.shape == y.shape == (64, 8) and x.dtype == np.int64
        assert np.array_equal(y[:, :-1], x[:, 1:]) and np.all(y[:, -1] == x[:, -1] + 1)
        assert np.all(x[:, 0] // 32 == y[:, -1] // 32)  # never crosses a chunk boundary
    assert sampler.batches == 20


def test_sampler_state_round_trip_through_save(tmp_path):
    data = np.arange(4096, dtype=np.int64) % 50
    sampler = BatchSampler(data, 4, 16, 512, seed=1)
    for _ in range(5):
        sampler.next()
    tl.save({"sampler": sampler.state_dict()}, tmp_path / "s.safetensors")
    expected = [sampler.next() for _ in range(4)]
    fresh = BatchSampler(data, 4, 16, 512, seed=2)
    fresh.load_state_dict(tl.load(tmp_path / "s.safetensors")["sampler"])
    assert fresh.batches == 5
    for want_x, want_y in expected:
        got_x, got_y = fresh.next()
        assert (
            np.array_equal(got_x.numpy(), want_x.numpy())
            and np.array_equal(got_y.numpy(), want_y.numpy())
        )
    with pytest.raises(ValueError, match="expected the keys"):
        fresh.load_state_dict({"batches": 1})


def test_sampler_errors():
    with pytest.raises(ValueError, match="1-D integer array"):
        BatchSampler(np.zeros(64), 2, 4)
    with pytest.raises(ValueError, match="block_size \\+ 1 = 33"):
        BatchSampler(np.zeros(64, dtype=np.int64), 2, 32, chunk_size=32)


def test_text_digest():
    assert text_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
