"""PyTorch programs written for the project run unchanged on tensorlib (python -m
tensorlib.run_as_torch, chapter 8, section 16) and print the losses PyTorch prints for them.

Each program in tests/torch_programs/ starts from weights given by a formula and reads its data in
a fixed order, so the two libraries' printed numbers agree up to float32 rounding. Each program
names the pieces of tensorlib it exercises (issue 22 added them).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "torch_programs"
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]\d+)?")
HAS_TORCH = importlib.util.find_spec("torch") is not None


PROGRAMS_AND_WHAT_THEY_USE = {
    "data_pipeline.py": "tensorlib.utils.data (chapter 4)",
    "custom_function.py": "autograd.Function with ctx (chapter 2)",
    "gru_lm.py": "nn.GRU (chapter 5)",
    "batchnorm_cnn.py": "nn.BatchNorm1d/2d (chapter 4)",
    "lbfgs_fit.py": "optim.LBFGS (chapter 6)",
    "ddp_amp_train.py": "the single-process stand-ins (chapter 8)",
    "mingpt_style.py": "DataLoader workers, torch.compile, SummaryWriter, pow, equal (ch. 2, 4, 8)",
}


def run(*command: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [sys.executable, *command],
        cwd=PROGRAMS,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_every_program_is_listed():
    assert sorted(p.name for p in PROGRAMS.glob("*.py")) == sorted(PROGRAMS_AND_WHAT_THEY_USE)


@pytest.mark.parametrize("program", sorted(PROGRAMS_AND_WHAT_THEY_USE))
def test_program_runs_unchanged_and_prints_what_pytorch_prints(program):
    ours = run("-m", "tensorlib.run_as_torch", program)
    assert ours.returncode == 0, (
        f"{program} (uses {PROGRAMS_AND_WHAT_THEY_USE[program]}): {ours.stderr}"
    )
    ours_lines = ours.stdout.splitlines()
    assert len(ours_lines) >= 5 and any(NUMBER.search(line) for line in ours_lines)
    if not HAS_TORCH:
        pytest.skip("PyTorch is not installed: ran on tensorlib only")
    theirs = run(program)
    assert theirs.returncode == 0, theirs.stderr
    theirs_lines = theirs.stdout.splitlines()
    assert len(ours_lines) == len(theirs_lines)
    for mine, reference in zip(ours_lines, theirs_lines, strict=True):
        # the same words and counts
        assert NUMBER.sub("#", mine) == NUMBER.sub("#", reference), (mine, reference)
        got, want = (
            [float(v) for v in NUMBER.findall(mine)],
            [float(v) for v in NUMBER.findall(reference)],
        )
        assert got == pytest.approx(want, rel=1e-3, abs=1e-5), (mine, reference)
