"""tools/opinfo_sweep.py: PyTorch's OpInfo samples through tensorlib.

Each run is a subprocess: importing PyTorch's test helpers changes process-wide settings that
other test modules of the same worker should not inherit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "opinfo_sweep.py"

pytest.importorskip("torch")
pytest.importorskip("expecttest")

pytestmark = [pytest.mark.parity, pytest.mark.slow]


def _sweep(*args: str, patch: str = "") -> subprocess.CompletedProcess[str]:
    """Run the tool's ``main`` with ``args``, after ``patch`` (code run on tensorlib first)."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        sys.path.insert(0, {str(TOOL.parent)!r})
        import tensorlib
        {patch}
        import opinfo_sweep
        sys.exit(opinfo_sweep.main({list(args)!r}))
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=600, check=False)


def test_ops_fixed_from_the_sweep_agree_with_pytorch() -> None:
    # ops whose values or gradients the sweep once found wrong in tensorlib
    fixed = "^(masked_fill|index_fill|remainder|cat|new_zeros|var.unbiased|logsumexp|cumprod)$"
    result = _sweep("--only", fixed, "--samples", "12")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "with differences not in KNOWN" in result.stdout


def test_a_wrong_value_fails_the_sweep() -> None:
    patch = "tensorlib.sub = lambda a, b, **k: a + b  # a planted bug"
    result = _sweep("--only", "^sub$", "--samples", "4", patch=patch)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "DIFFERS  sub: output: values differ" in result.stdout


def test_a_detached_result_fails_the_sweep() -> None:
    patch = textwrap.dedent("""
        _exp = tensorlib.exp
        tensorlib.exp = lambda x, **k: _exp(x.detach(), **k)  # a planted silent detach
    """).replace("\n", "\n        ")
    result = _sweep("--only", "^exp$", "--samples", "4", patch=patch)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "does not require grad, PyTorch's does" in result.stdout


def test_a_missing_gradient_fails_the_sweep() -> None:
    patch = textwrap.dedent("""
        _mul = tensorlib.mul
        tensorlib.mul = lambda a, b, **k: _mul(a, b.detach() if hasattr(b, "detach") else b)
    """).replace("\n", "\n        ")
    result = _sweep("--only", "^mul$", "--samples", "6", patch=patch)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no gradient for input 1, PyTorch has one" in result.stdout


def test_known_differences_are_listed_but_pass() -> None:
    result = _sweep("--only", "^cholesky_inverse$", "--samples", "12")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "known  cholesky_inverse" in result.stdout


def test_without_pytorch_one_error_line() -> None:
    patch = "sys.modules['torch.testing._internal.common_methods_invocations'] = None"
    result = _sweep(patch=patch)
    assert result.returncode == 2
    assert result.stderr.startswith("error: opinfo_sweep needs PyTorch's test helpers")
    assert len(result.stderr.strip().splitlines()) == 1
