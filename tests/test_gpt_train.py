"""tensorlib.gpt.train and tensorlib.gpt.perf: the trainer, checkpoints, resume, sampling (chapter
8)."""

import csv
import math
import os
import platform
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.gpt.data import load_corpus
from tensorlib.gpt.train import (
    CHECKPOINT_FILE,
    LOG_COLUMNS,
    MODEL_FILE,
    TrainConfig,
    Trainer,
    model_from_checkpoint,
    param_groups,
    read_checkpoint,
    sample,
)
from tensorlib.optim.lr_scheduler import warmup_cosine
from tensorlib.serialization import CheckpointError

TEXT = load_corpus()[:40_000]
TINY = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, batch_size=4, warmup_steps=3,
            eval_interval=10, eval_batches=2, checkpoint_interval=15, chunk_size=256)


def tiny(**changes):
    return TrainConfig(**{**TINY, "max_steps": 30, **changes})


def log_rows(path):
    with open(path / "log.csv", newline="") as f:
        return list(csv.DictReader(f))


def stop_at(trainer, step):
    def callback(current, loss):
        if current == step:
            trainer.stop_requested = True
    return callback


def same_parameters(a, b):
    return all(
        np.array_equal(p.numpy(), q.numpy())
        for p, q in zip(a.parameters(), b.parameters(), strict=True)
    )


def test_tiny_run_loss_falls_and_writes_files(tmp_path):
    trainer = Trainer(tiny(max_steps=60, lr=1e-2, min_lr=1e-3), TEXT, tmp_path)
    first = trainer.evaluate()
    assert abs(first - math.log(trainer.tokenizer.vocab_size)) < 0.1  # ln V before training
    trainer.fit(progress=False)
    rows = log_rows(tmp_path)
    assert [int(r["step"]) for r in rows] == list(range(1, 61)) and tuple(rows[0]) == LOG_COLUMNS
    vals = [float(r["val_loss"]) for r in rows if r["val_loss"]]
    assert len(vals) == 6 and vals[-1] < first - 0.8, (first, vals)
    assert (tmp_path / CHECKPOINT_FILE).is_file() and (tmp_path / MODEL_FILE).is_file()
    assert all(float(r["tokens_per_s"]) > 0 for r in rows)


def test_one_warmup_step_trains(tmp_path):
    # warmup_steps=1 is a valid TrainConfig: the schedule must accept it and the trainer must run
    trainer = Trainer(tiny(max_steps=3, warmup_steps=1), TEXT, tmp_path)
    trainer.fit(progress=False)
    assert trainer.step == 3
    rates = [float(r["lr"]) for r in log_rows(tmp_path)]
    assert len(rates) == 3 and all(
        math.isfinite(r) and 0 < r <= trainer.config.lr for r in rates
    ), rates


def test_trainer_leaves_the_allocator_alone(tmp_path, monkeypatch):
    # tune_malloc is an opt-in for the process: the command line turns it on, the library class does
    # not
    import tensorlib.gpt.cli as cli
    import tensorlib.gpt.perf as perf
    calls = []
    monkeypatch.setattr(perf, "tune_malloc", lambda *args: calls.append("perf") or True)
    monkeypatch.setattr(cli, "tune_malloc", lambda *args: calls.append("cli") or True)
    Trainer(tiny(max_steps=2, warmup_steps=0), TEXT, tmp_path / "lib").fit(progress=False)
    assert calls == []
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    flags = [
        "--block-size",
        "16",
        "--n-layer",
        "1",
        "--n-head",
        "2",
        "--n-embd",
        "16",
        "--batch-size",
        "4",
        "--max-steps",
        "2",
        "--warmup-steps",
        "0",
        "--eval-batches",
        "1",
        "--chunk-size",
        "256",
        "--no-progress",
    ]
    assert cli.main(["train", "--data", str(corpus), "--out", str(tmp_path / "cli"), *flags]) == 0
    assert calls == ["cli"]


def test_resume_equals_uninterrupted_bitwise(tmp_path):
    config = tiny(dropout=0.1)  # dropout: the generator's state must be restored too
    straight = Trainer(config, TEXT, tmp_path / "straight")
    straight.fit(progress=False)
    first = Trainer(config, TEXT, tmp_path / "cut")
    with pytest.raises(KeyboardInterrupt, match="interrupted at step 11"):
        first.fit(progress=False, callback=stop_at(first, 11))
    assert read_checkpoint(tmp_path / "cut")["step"] == 11
    resumed = Trainer.resume(tmp_path / "cut", TEXT)
    assert resumed.step == 11
    resumed.fit(progress=False)
    assert same_parameters(resumed.model, straight.model)
    a, b = log_rows(tmp_path / "straight"), log_rows(tmp_path / "cut")
    assert [(r["step"], r["train_loss"], r["val_loss"], r["lr"]) for r in a] == [
        (r["step"], r["train_loss"], r["val_loss"], r["lr"]) for r in b
    ]
    for key, value in straight.optimizer.state_dict()["state"].items():
        assert np.array_equal(
            value["exp_avg"].numpy(),
            resumed.optimizer.state_dict()["state"][key]["exp_avg"].numpy(),
        )


def test_resume_after_a_crash_drops_log_rows_past_the_checkpoint(tmp_path):
    config = tiny()  # checkpoints every 15 steps
    replay = Trainer(config, TEXT, tmp_path / "replay")
    with pytest.raises(KeyboardInterrupt):
        replay.fit(progress=False, callback=stop_at(replay, 15))
    # rows a killed run wrote after step 15
    with open(tmp_path / "replay" / "log.csv", "a", newline="") as f:
        csv.writer(f).writerows([[16, "9.9", "", "1e-3", "1"], [17, "9.9", "", "1e-3", "1"]])
    resumed = Trainer.resume(tmp_path / "replay", TEXT)
    resumed.fit(progress=False)
    rows = log_rows(tmp_path / "replay")
    assert [int(r["step"]) for r in rows] == list(range(1, 31))
    assert "9.9" not in [r["train_loss"] for r in rows]


def test_sigint_saves_then_raises(tmp_path):
    trainer = Trainer(tiny(), TEXT, tmp_path)
    previous = signal.getsignal(signal.SIGINT)

    def interrupt(step, loss):
        if step == 7:
            os.kill(os.getpid(), signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        trainer.fit(progress=False, callback=interrupt)
    assert signal.getsignal(signal.SIGINT) is previous
    assert read_checkpoint(tmp_path)["step"] == 7 and trainer.step == 7


def test_resume_refuses_other_corpus_and_damaged_files(tmp_path):
    Trainer(tiny(max_steps=5), TEXT, tmp_path).fit(progress=False)
    with pytest.raises(ValueError, match="vocabulary mismatch"):
        Trainer.resume(tmp_path, TEXT + "é")
    shuffled = TEXT[1:] + TEXT[0]  # same characters, other bytes
    with pytest.raises(ValueError, match="not the one the checkpoint was trained on"):
        Trainer.resume(tmp_path, shuffled)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        read_checkpoint(tmp_path / "nothing")
    data = (tmp_path / CHECKPOINT_FILE).read_bytes()
    (tmp_path / "bad.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError):
        read_checkpoint(tmp_path / "bad.safetensors")
    tl.save({"format": "something else"}, tmp_path / "other.safetensors")
    with pytest.raises(CheckpointError, match="not a tensorlib.gpt checkpoint"):
        read_checkpoint(tmp_path / "other.safetensors")


def test_model_from_checkpoint_and_sample(tmp_path):
    trainer = Trainer(tiny(max_steps=10), TEXT, tmp_path)
    trainer.fit(progress=False)
    model, tokenizer = model_from_checkpoint(read_checkpoint(tmp_path))
    assert (
        tokenizer == trainer.tokenizer
        and same_parameters(model, trainer.model)
        and not model.training
    )
    a = sample(model, tokenizer, "The ", 50, 1.0, 5, tl.Generator(3))
    b = sample(model, tokenizer, "The ", 50, 1.0, 5, tl.Generator(3))
    assert a == b and a.startswith("The ") and len(a) == 54
    greedy = sample(model, tokenizer, "x" * 40, 40, 0.0)  # prompt longer than the context: windows
    assert len(greedy) == 80
    with pytest.raises(ValueError, match="not in the vocabulary"):
        sample(model, tokenizer, "é")
    with pytest.raises(ValueError, match="at least one character"):
        sample(model, tokenizer, "")
    with pytest.raises(ValueError, match="temperature >= 0"):
        sample(model, tokenizer, "a", 5, -1.0)


def test_top_k_one_is_greedy(tmp_path):
    trainer = Trainer(tiny(max_steps=5), TEXT, tmp_path)
    greedy = sample(trainer.model, trainer.tokenizer, "The", 30, 0.0)
    top1 = sample(trainer.model, trainer.tokenizer, "The", 30, 1.5, 1, tl.Generator(0))
    assert greedy == top1


def test_schedule_and_groups():
    config = TrainConfig(max_steps=50, warmup_steps=10, lr=1e-2, min_lr=1e-3)
    model = tl.gpt.GPT(config.model_config(20), tl.Generator(0))
    groups = param_groups(model, 0.1)
    assert all(p.ndim >= 2 for p in groups[0]["params"]) and all(
        p.ndim < 2 for p in groups[1]["params"]
    )
    assert groups[1]["weight_decay"] == 0.0
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))
    optimizer = tl.optim.AdamW(groups, lr=config.lr)
    scheduler = warmup_cosine(
        optimizer, config.warmup_steps, config.max_steps, eta_min=config.min_lr
    )
    lrs = []
    for _ in range(config.max_steps):
        lrs.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    for s, lr in enumerate(lrs):
        want = (
            config.lr * (s + 1) / 10
            if s < 10
            else config.min_lr
            + 0.5 * (config.lr - config.min_lr) * (1 + math.cos(math.pi * (s - 10) / 40))
        )
        assert lr == pytest.approx(want, rel=1e-12, abs=1e-15), s


@pytest.mark.parametrize("changes, message", [
    ({"n_head": 3}, "divisible by n_head"),
    ({"lr": 0.0}, "lr must be"),
    ({"warmup_steps": 30}, "warmup_steps must be in"),
    ({"min_lr": 1.0}, "must not exceed lr"),
    ({"batch_size": 0}, "batch_size must be an int >= 1"),
    ({"chunk_size": 8}, "chunk_size"),
    ({"dropout": 1.0}, "dropout"),
])
def test_config_errors(changes, message):
    with pytest.raises(ValueError, match=message):
        tiny(**changes)


_MALLOC_PROBE = """
import ctypes, sys
from tensorlib.gpt.perf import tune_malloc

class Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
        ).split()
    ]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Mallinfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
# above glibc's default mmap threshold (128 KiB, dynamic up to 32 MiB), below the tuned one
size = 8 * 2**20

def mmapped_bytes_of_one_malloc():
    before = libc.mallinfo2().hblkhd
    assert libc.malloc(size)  # kept: freeing an mmapped block would raise glibc's dynamic threshold
    return libc.mallinfo2().hblkhd - before

untuned = mmapped_bytes_of_one_malloc()
print(untuned, tune_malloc(), tune_malloc(), mmapped_bytes_of_one_malloc())
"""


def _glibc_with_mallinfo2() -> bool:
    name, version = platform.libc_ver()
    if not sys.platform.startswith("linux") or name != "glibc":
        return False
    major, minor = (int(part) for part in version.split(".")[:2])
    return (major, minor) >= (2, 33)  # mallinfo2 is glibc 2.33's


@pytest.mark.skipif(
    not _glibc_with_mallinfo2(),
    reason="tune_malloc tunes glibc's malloc; mallinfo2 needs glibc >= 2.33 on Linux",
)
def test_tune_malloc_raises_glibcs_mmap_threshold():
    # in a fresh process: an 8 MiB malloc gets its own mmap before tune_malloc and comes from the
    # heap after it
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
    }
    result = subprocess.run(
        [sys.executable, "-c", _MALLOC_PROBE], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    untuned, first, second, tuned = result.stdout.split()
    assert int(untuned) >= 8 * 2**20  # glibc's default: a block this large is mmapped
    # accepted, and a second call (as every fit makes) is accepted again
    assert (first, second) == ("True", "True")
    assert int(tuned) == 0  # tuned: served from the heap, no new mmap


def test_tune_malloc_is_a_no_op_off_linux(monkeypatch):
    import tensorlib.gpt.perf as perf
    monkeypatch.setattr(perf.sys, "platform", "darwin")
    assert perf.tune_malloc() is False


def test_memory_check_refuses_runs_that_cannot_fit(tmp_path):
    from tensorlib.gpt.train import check_memory, memory_estimate
    small = memory_estimate(tiny(), 90)
    assert memory_estimate(tiny(batch_size=8), 90) > small  # grows with every size
    assert (
        memory_estimate(tiny(block_size=32), 90) > small
        and memory_estimate(tiny(n_layer=2), 90) > small
    )
    huge = tiny(batch_size=100_000_000)
    assert memory_estimate(huge, 90) > 2**40  # terabytes
    with pytest.raises(
        ValueError, match=r"needs about [\d,.]+ GiB of memory \(batch_size 100000000.*GiB available"
    ):
        Trainer(huge, TEXT, tmp_path)
    assert not (tmp_path / CHECKPOINT_FILE).exists()
    check_memory(tiny(), 90, available=small)  # exactly enough is enough
    with pytest.raises(ValueError, match="more than the 0.0 GiB available"):
        check_memory(tiny(), 90, available=small - 1)


class FakeBar:
    """Records what the trainer shows, standing in for tqdm."""

    shown: list = []

    def __init__(self, **kwargs):
        self.n = kwargs["initial"]

    def update(self, n=1):
        self.n += n

    def set_postfix(self, refresh=True, **figures):
        FakeBar.shown.append((self.n, figures))

    def close(self):
        pass


def test_the_bar_shows_the_last_validation_loss(tmp_path, monkeypatch):
    fake = type(sys)("tqdm")
    fake.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    FakeBar.shown = []
    Trainer(tiny(max_steps=25), TEXT, tmp_path).fit(progress=True)
    vals = {step: figures["val"] for step, figures in FakeBar.shown}
    assert [vals[s] for s in range(1, 10)] == ["-"] * 9  # no validation yet
    # kept until the next one
    assert vals[10] != "-" and all(vals[s] == vals[10] for s in range(10, 20))
    assert vals[20] != vals[10] and float(vals[25]) > 0


def test_a_plain_progress_line_without_tqdm(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    Trainer(tiny(max_steps=40), TEXT, tmp_path).fit(progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("step ")]
    # every 5%
    assert [line.split(":")[0] for line in lines] == [f"step {s}/40" for s in range(2, 41, 2)]
    assert (
        "val=-" in lines[0]
        and "val=-" not in lines[4]
        and "loss=" in lines[-1]
        and "tok_s=" in lines[-1]
    )
    Trainer(tiny(max_steps=40), TEXT, tmp_path / "quiet").fit(progress=False)
    assert "step " not in capsys.readouterr().err
