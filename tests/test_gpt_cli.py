"""The command line `python -m tensorlib.gpt` (tensorlib.gpt.cli, chapter 8)."""

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from tensorlib.gpt.cli import main
from tensorlib.gpt.data import load_corpus
from tensorlib.gpt.train import TrainConfig

ROOT = Path(__file__).resolve().parent.parent
TINY = ["--max-steps", "12", "--warmup-steps", "2", "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
        "--block-size", "16", "--batch-size", "4", "--eval-interval", "6", "--eval-batches", "2", "--no-progress"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "text.txt"
    path.write_text(load_corpus()[:30_000], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    assert main(["train", "--data", str(corpus), "--out", str(out), *TINY]) == 0
    return out


def run(*args):
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tensorlib.gpt", *args], capture_output=True, text=True, env=env, timeout=300)


def test_help_documents_every_flag():
    result = run("train", "--help")
    assert result.returncode == 0
    for field in fields(TrainConfig):
        assert "--" + field.name.replace("_", "-") in result.stdout
    for flag in ("--data", "--out", "--resume", "--no-progress"):
        assert flag in result.stdout
    assert "(default 64)" in result.stdout  # defaults are stated
    sample_help = run("sample", "--help").stdout
    for flag in ("--checkpoint", "--prompt", "--temperature", "--top-k", "--max-new-tokens", "--seed"):
        assert flag in sample_help
    assert run("--help").returncode == 0


def test_train_then_sample_in_a_subprocess(corpus, tmp_path):
    result = run("train", "--data", str(corpus), "--out", str(tmp_path / "r"), *TINY)
    assert result.returncode == 0, result.stderr
    assert "validation loss" in result.stdout
    assert (tmp_path / "r" / "ckpt.safetensors").is_file() and (tmp_path / "r" / "log.csv").is_file()
    result = run("sample", "--checkpoint", str(tmp_path / "r"), "--prompt", "The", "--max-new-tokens", "30",
                 "--temperature", "0.8", "--top-k", "5", "--seed", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("The") and len(result.stdout.rstrip("\n")) == 33
    again = run("sample", "--checkpoint", str(tmp_path / "r"), "--prompt", "The", "--max-new-tokens", "30",
                "--temperature", "0.8", "--top-k", "5", "--seed", "1")
    assert again.stdout == result.stdout  # seeded


def test_resume_continues_and_checks_flags(corpus, trained, tmp_path, capsys):
    assert main(["train", "--data", str(corpus), "--out", str(trained), "--resume", "--no-progress"]) == 0
    assert "validation loss" in capsys.readouterr().out
    assert main(["train", "--data", str(corpus), "--out", str(trained), "--resume", "--n-embd", "32"]) == 2
    assert "--n-embd 32 differs from the checkpoint's 16" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["train", "--out", "{trained}"], "already holds a checkpoint: pass --resume"),
    (["train", "--out", "{tmp}/x", "--n-head", "3"], "n_embd (128) must be divisible by n_head (3)"),
    (["train", "--out", "{tmp}/x", "--max-steps", "10"], "warmup_steps must be in [0, max_steps=10)"),
    (["train", "--data", "{tmp}/missing.txt", "--out", "{tmp}/x"], "missing.txt' does not exist"),
    (["train", "--out", "{tmp}/empty", "--resume"], "no checkpoint at"),
    (["sample", "--checkpoint", "{tmp}/nothing"], "no checkpoint at"),
    (["sample", "--checkpoint", "{trained}", "--prompt", "ünïcode"], "vocabulary mismatch: the prompt has characters"),
    (["sample", "--checkpoint", "{trained}", "--top-k", "0"], "--top-k must be >= 1"),
    (["sample", "--checkpoint", "{trained}", "--temperature", "-1"], "--temperature must be >= 0"),
    (["sample", "--checkpoint", "{damaged}"], "damaged.safetensors"),
])
def test_clear_errors(args, message, trained, tmp_path, capsys):
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes((trained / "ckpt.safetensors").read_bytes()[:3000])
    args = [a.format(trained=trained, tmp=tmp_path, damaged=damaged) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err, err


def test_vocabulary_mismatch_on_resume(trained, tmp_path, capsys):
    other = tmp_path / "other.txt"
    other.write_text("quite another text: äöü " * 100, encoding="utf-8")
    assert main(["train", "--data", str(other), "--out", str(trained), "--resume"]) == 2
    assert "vocabulary mismatch" in capsys.readouterr().err


def test_bad_flags_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--out", "x", "--lr", "fast"])
    assert exit_info.value.code == 2 and "invalid float value: 'fast'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--out", "x", "--no-such-flag"])
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fly"])
