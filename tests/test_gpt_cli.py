"""The command line `python -m tensorlib.gpt` (tensorlib.gpt.cli, chapter 8)."""

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import tensorlib as tl
from tensorlib.gpt.cli import main
from tensorlib.gpt.data import load_corpus
from tensorlib.gpt.train import TrainConfig, read_checkpoint

ROOT = Path(__file__).resolve().parent.parent
TINY = [
    "--max-steps",
    "12",
    "--warmup-steps",
    "2",
    "--n-layer",
    "1",
    "--n-head",
    "2",
    "--n-embd",
    "16",
    "--block-size",
    "16",
    "--batch-size",
    "4",
    "--eval-interval",
    "6",
    "--eval-batches",
    "2",
    "--no-progress",
]


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
    return subprocess.run(
        [sys.executable, "-m", "tensorlib.gpt", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_help_documents_every_flag():
    result = run("train", "--help")
    assert result.returncode == 0
    for field in fields(TrainConfig):
        assert "--" + field.name.replace("_", "-") in result.stdout
    for flag in ("--data", "--out", "--resume", "--no-progress"):
        assert flag in result.stdout
    assert "(default 64)" in result.stdout  # defaults are stated
    sample_help = run("sample", "--help").stdout
    for flag in (
        "--checkpoint",
        "--prompt",
        "--temperature",
        "--top-k",
        "--max-new-tokens",
        "--seed",
    ):
        assert flag in sample_help
    assert run("--help").returncode == 0


def test_train_then_sample_in_a_subprocess(corpus, tmp_path):
    result = run("train", "--data", str(corpus), "--out", str(tmp_path / "r"), *TINY)
    assert result.returncode == 0, result.stderr
    assert "validation loss" in result.stdout
    assert (
        (tmp_path / "r" / "ckpt.pt").is_file()
        and (tmp_path / "r" / "log.csv").is_file()
    )
    result = run(
        "sample",
        "--checkpoint",
        str(tmp_path / "r"),
        "--prompt",
        "The",
        "--max-new-tokens",
        "30",
        "--temperature",
        "0.8",
        "--top-k",
        "5",
        "--seed",
        "1",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("The") and len(result.stdout.rstrip("\n")) == 33
    again = run(
        "sample",
        "--checkpoint",
        str(tmp_path / "r"),
        "--prompt",
        "The",
        "--max-new-tokens",
        "30",
        "--temperature",
        "0.8",
        "--top-k",
        "5",
        "--seed",
        "1",
    )
    assert again.stdout == result.stdout  # seeded


def test_resume_continues_and_checks_flags(corpus, trained, tmp_path, capsys):
    assert (
        main(["train", "--data", str(corpus), "--out", str(trained), "--resume", "--no-progress"])
        == 0
    )
    assert "validation loss" in capsys.readouterr().out
    assert (
        main(["train", "--data", str(corpus), "--out", str(trained), "--resume", "--n-embd", "32"])
        == 2
    )
    assert "--n-embd 32 differs from the checkpoint's 16" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["train", "--out", "{trained}"], "already holds a checkpoint: pass --resume"),
        (
            ["train", "--out", "{tmp}/x", "--n-head", "3"],
            "--n-embd (128) must be divisible by --n-head (3)",
        ),
        (
            ["train", "--out", "{tmp}/x", "--max-steps", "10", "--warmup-steps", "10"],
            "--warmup-steps must be in [0, --max-steps=10), got 10: pass a smaller --warmup-steps",
        ),
        (
            ["train", "--out", "{tmp}/x", "--lr", "0"],
            "--lr must be a number in (0.0, inf), got 0.0",
        ),
        (
            ["train", "--out", "{tmp}/x", "--block-size", "0"],
            "--block-size must be an int >= 1, got 0",
        ),
        (
            ["train", "--out", "{tmp}/x", "--block-size", "512", "--chunk-size", "256"],
            "--chunk-size (256) must be at least --block-size + 1 (513)",
        ),
        (
            ["train", "--out", "{tmp}/x", "--batch-size", "100000000"],
            "GiB of memory (--batch-size 100000000",
        ),
        (
            ["train", "--data", "{tmp}/missing.txt", "--out", "{tmp}/x"],
            "missing.txt' does not exist",
        ),
        (["train", "--data", "{tmp}", "--out", "{tmp}/x"], "is a directory, not a text file"),
        (["train", "--out", "{tmp}/damaged.safetensors"], "is a file, not a directory"),
        (
            ["sample", "--checkpoint", "{trained}", "--temperature", "nan"],
            "--temperature must be a finite number >= 0, got nan",
        ),
        (
            ["sample", "--checkpoint", "{trained}", "--temperature", "inf"],
            "--temperature must be a finite number >= 0, got inf",
        ),
        (["train", "--out", "{tmp}/empty", "--resume"], "no checkpoint at"),
        (["sample", "--checkpoint", "{tmp}/nothing"], "no checkpoint at"),
        (
            ["sample", "--checkpoint", "{trained}", "--prompt", "ünïcode"],
            "vocabulary mismatch: the prompt has characters",
        ),
        (["sample", "--checkpoint", "{trained}", "--top-k", "0"], "--top-k must be >= 1"),
        (
            ["sample", "--checkpoint", "{trained}", "--temperature", "-1"],
            "--temperature must be a finite number >= 0",
        ),
        (["sample", "--checkpoint", "{damaged}"], "damaged.safetensors"),
    ],
)
def test_clear_errors(args, message, trained, tmp_path, capsys):
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes((trained / "ckpt.pt").read_bytes()[:3000])
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


def test_short_runs_train_with_the_default_warmup(corpus, tmp_path, capsys):
    # the default warm-up (100 steps) scales down with --max-steps: max_steps // 30, at most 100
    tiny = TINY[4:]  # no --max-steps, no --warmup-steps
    assert "--warmup-steps" not in tiny and "--max-steps" not in tiny
    assert (
        main(
            [
                "train",
                "--data",
                str(corpus),
                "--out",
                str(tmp_path / "r"),
                *tiny,
                "--max-steps",
                "20",
            ]
        )
        == 0
    ), capsys.readouterr().err
    assert read_checkpoint(tmp_path / "r")["config"]["warmup_steps"] == 0
    assert (
        main(
            [
                "train",
                "--data",
                str(corpus),
                "--out",
                str(tmp_path / "r2"),
                *tiny,
                "--max-steps",
                "90",
            ]
        )
        == 0
    )
    assert read_checkpoint(tmp_path / "r2")["config"]["warmup_steps"] == 3
    # nothing differs
    assert (
        main(
            [
                "train",
                "--data",
                str(corpus),
                "--out",
                str(tmp_path / "r2"),
                "--resume",
                "--no-progress",
            ]
        )
        == 0
    )


def _damage(state, how):
    if how == "unknown config key":
        state["config"]["bogus"] = 1
    elif how == "missing config key":
        del state["config"]["n_layer"]
    elif how == "config not a dict":
        state["config"] = [1, 2]
    elif how == "invalid config value":
        state["config"]["n_head"] = 3
    elif how == "vocabulary not a string":
        state["vocab"] = 5
    elif how == "vocabulary a list":
        state["vocab"] = list(state["vocab"])
    elif how == "vocabulary with duplicates":
        state["vocab"] = state["vocab"][:-1] + state["vocab"][0]
    elif how == "width disagrees with the weights":
        state["config"]["n_embd"] = 32
    elif how == "layers disagree with the weights":
        state["config"]["n_layer"] = 2
    elif how == "a weight missing":
        del state["model"][sorted(state["model"])[0]]
    elif how == "a weight extra":
        state["model"]["extra.weight"] = tl.zeros(2)
    elif how == "no weights":
        del state["model"]
    elif how == "weights not a dict":
        state["model"] = 3
    elif how == "step not an int":
        state["step"] = "7"
    elif how == "missing corpus digest":
        del state["corpus_sha256"]
    elif how == "missing optimizer":
        del state["optimizer"]
    elif how == "optimizer state damaged":
        state["optimizer"]["param_groups"] = []
    elif how == "wrong format":
        state["format"] = "other/1"
    return state


DAMAGES = [
    "unknown config key",
    "missing config key",
    "config not a dict",
    "invalid config value",
    "vocabulary not a string",
    "vocabulary a list",
    "vocabulary with duplicates",
    "width disagrees with the weights",
    "layers disagree with the weights",
    "a weight missing",
    "a weight extra",
    "no weights",
    "weights not a dict",
    "step not an int",
    "missing corpus digest",
    "missing optimizer",
    "optimizer state damaged",
    "wrong format",
]
ONLY_RESUME_NEEDS = {"missing corpus digest", "missing optimizer", "optimizer state damaged"}


def one_error_line(capsys):
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_checkpoints_give_one_error_line(how, corpus, trained, tmp_path, capsys):
    state = _damage(tl.load(trained / "ckpt.pt"), how)
    tl.save(state, tmp_path / "ckpt.pt")
    capsys.readouterr()
    status = main(["sample", "--checkpoint", str(tmp_path), "--max-new-tokens", "3"])
    # sampling reads only the configuration, the vocabulary and the weights
    if how in ONLY_RESUME_NEEDS:
        assert status == 0
        capsys.readouterr()
    else:
        assert status == 2
        one_error_line(capsys)
    assert (
        main(["train", "--data", str(corpus), "--out", str(tmp_path), "--resume", "--no-progress"])
        == 2
    )
    line = one_error_line(capsys)
    if "digest" in how:
        assert "corpus_sha256" in line


def test_bad_paths_give_one_error_line(corpus, trained, tmp_path, capsys):
    (tmp_path / "a_file.txt").write_text("x")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00\x81" * 100)
    (tmp_path / "dir_ckpt" / "ckpt.pt").mkdir(parents=True)
    (tmp_path / "empty.safetensors").write_bytes(b"")
    os.mkfifo(tmp_path / "fifo")
    cases = [
        ["train", "--data", str(tmp_path), "--out", str(tmp_path / "x")],
        ["train", "--data", str(tmp_path / "binary.txt"), "--out", str(tmp_path / "x")],
        ["train", "--data", str(tmp_path / "fifo"), "--out", str(tmp_path / "x")],
        # one distinct character
        ["train", "--data", str(tmp_path / "a_file.txt"), "--out", str(tmp_path / "x")],
        ["train", "--data", str(corpus), "--out", str(tmp_path / "a_file.txt")],
        ["train", "--data", str(corpus), "--out", str(tmp_path / "a_file.txt" / "sub"), *TINY],
        ["train", "--data", str(corpus), "--out", str(tmp_path / "nothing"), "--resume"],
        ["train", "--data", str(corpus), "--out", str(tmp_path / "dir_ckpt"), "--resume"],
        ["sample", "--checkpoint", str(tmp_path / "dir_ckpt")],
        ["sample", "--checkpoint", str(tmp_path / "empty.safetensors")],
        ["sample", "--checkpoint", str(tmp_path / "fifo")],
        ["sample", "--checkpoint", "/dev/null"],
        ["sample", "--checkpoint", str(corpus)],
    ]
    for args in cases:
        assert main(args) == 2, args
        one_error_line(capsys)


DRIVER = """
import signal
import sys
from tensorlib.gpt import cli, train

# Ctrl-C as at a terminal: a shell makes what it starts in the background (`make test &`)
# ignore SIGINT, and the child would inherit that
signal.signal(signal.SIGINT, signal.default_int_handler)

step, request_stop = train.Trainer.train_step, train.Trainer._request_stop


def train_step(self):
    loss = step(self)
    if self.step == 7:
        print("at step 7", flush=True)
        sys.stdin.readline()  # wait here for the parent's two Ctrl-C (it never writes)
    return loss


def first_ctrl_c(self):
    request_stop(self)
    print("first Ctrl-C seen", flush=True)


train.Trainer.train_step, train.Trainer._request_stop = train_step, first_ctrl_c
sys.exit(cli.main(sys.argv[1:]))
"""


def _start_driver(tmp_path, driver, corpus, *extra, env=(), **popen):
    """``driver`` running ``train`` on ``corpus`` into ``tmp_path/r`` (TINY, a checkpoint every 5
    steps), its standard streams piped."""
    (tmp_path / "driver.py").write_text(driver)
    args = ["train", "--data", str(corpus), "--out", str(tmp_path / "r"), *TINY,
            "--checkpoint-interval", "5", *extra]
    return subprocess.Popen(
        [sys.executable, str(tmp_path / "driver.py"), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **dict(env)},
        **popen,
    )


def test_two_ctrl_c_report_the_checkpoint_really_saved(corpus, tmp_path):
    # checkpoints every 5 steps; two Ctrl-C at step 7: the second stops at once, before step 7 is
    # saved
    child = _start_driver(tmp_path, DRIVER, corpus)
    try:
        assert child.stdout.readline() == "at step 7\n"  # the handshake: the child is inside step 7
        child.send_signal(signal.SIGINT)
        assert child.stdout.readline() == "first Ctrl-C seen\n"
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert (
        "interrupted at step 7: the last checkpoint, of step 5, is in" in err
        and "Traceback" not in err
    ), err
    assert read_checkpoint(tmp_path / "r")["step"] == 5


WORKER_DRIVER = """
import signal
import sys
from tensorlib.gpt import cli, train

signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as at a terminal
step, request_stop = train.Trainer.train_step, train.Trainer._request_stop


def train_step(self):
    if self.step == 7:  # before step 8's micro-batches: the worker has run seven of them
        print("before step 8", flush=True)
        sys.stdin.readline()  # the parent's Ctrl-C reaches the whole group meanwhile
    return step(self)


def first_ctrl_c(self):
    request_stop(self)
    print("first Ctrl-C seen", flush=True)


train.Trainer.train_step, train.Trainer._request_stop = train_step, first_ctrl_c
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
def test_ctrl_c_at_a_terminal_leaves_the_micro_batch_worker_to_finish_the_step(corpus, tmp_path):
    # a terminal's Ctrl-C goes to every process of its group: the caller and its worker process
    child = _start_driver(
        tmp_path, WORKER_DRIVER, corpus, "--micro-batches", "2", env={"OMP_NUM_THREADS": "2"},
        start_new_session=True,  # a group of its own, as a terminal's foreground job
    )
    try:
        assert child.stdout.readline() == "before step 8\n"  # the handshake
        os.killpg(child.pid, signal.SIGINT)
        assert child.stdout.readline() == "first Ctrl-C seen\n"
        _, err = child.communicate("\n", timeout=120)  # step 8 runs, with the worker, and saves
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert "interrupted at step 8: the last checkpoint, of step 8, is in" in err, err
    assert "Traceback" not in err and "worker" not in err, err
    assert read_checkpoint(tmp_path / "r")["step"] == 8


def test_a_run_saved_as_ckpt_safetensors_still_samples_and_resumes(corpus, trained, tmp_path,
                                                                    capsys):
    # before tl.save wrote PyTorch's format, the run's checkpoint was out/ckpt.safetensors
    old = tmp_path / "old-run"
    shutil.copytree(trained, old)
    (old / "ckpt.pt").rename(old / "ckpt.safetensors")
    assert read_checkpoint(old)["step"] == tl.load(old / "ckpt.safetensors")["step"]
    assert main(["train", "--data", str(corpus), "--out", str(old), "--no-progress"]) == 2
    assert "already holds a checkpoint: pass --resume" in capsys.readouterr().err
    # a finished run: resuming it reads the old file and has nothing left to train
    assert main(["train", "--data", str(corpus), "--out", str(old), "--resume",
                 "--no-progress"]) == 0
    assert main(["sample", "--checkpoint", str(old), "--prompt", "The",
                 "--max-new-tokens", "5"]) == 0
