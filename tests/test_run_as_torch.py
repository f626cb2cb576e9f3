"""python -m tensorlib.run_as_torch (chapter 8, section 16): torch names resolve to tensorlib for
the program run, and a missing torch name ends the run with one error line naming it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_script(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "tensorlib.run_as_torch", str(script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_torch_names_are_tensorlibs(tmp_path):
    done = run_script(tmp_path, """
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import tensorlib
        from torch.nn.modules.activation import MultiheadAttention
        from torch.nn.parallel import DistributedDataParallel
        from torch.cuda.amp import GradScaler
        import torch.backends.cudnn as cudnn
        checks = {
            "Tensor": torch.Tensor is tensorlib.Tensor,
            "Linear": nn.Linear is tensorlib.nn.Linear and torch.nn.Linear is nn.Linear,
            "relu": F.relu is tensorlib.nn.functional.relu,
            "MultiheadAttention": MultiheadAttention is tensorlib.nn.MultiheadAttention,
            "DDP": DistributedDataParallel is tensorlib.nn.parallel.DistributedDataParallel,
            "GradScaler": GradScaler is tensorlib.amp.GradScaler is torch.amp.GradScaler,
            "cuda": torch.cuda.is_available() is False and torch.cuda.device_count() == 0,
            "same module": sys.modules["torch.nn"] is torch.nn,
            "tensor": isinstance(torch.ones(2), tensorlib.Tensor),
        }
        cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        checks["flags reach tensorlib"] = (
            tensorlib.backends.cudnn.benchmark and tensorlib.backends.cuda.matmul.allow_tf32
        )
        checks["torch.nn not rebound"] = tensorlib.nn.__name__ == "tensorlib.nn"
        print(sorted(name for name, ok in checks.items() if not ok), __name__, sys.argv[1:])
    """, "--lr=3", "x y")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] __main__ ['--lr=3', 'x y']"


@pytest.mark.parametrize(
    "source, name, line",
    [
        ("import torch\nx = torch.ones(2)\ny = torch.fft.rfft(x)\n", "torch.fft", 3),
        ("import torch\nimport torch.fft\n", "torch.fft", 2),
        ("import torch.nn\nfrom torch.nn.functional import grouped_mm\n",
         "torch.nn.functional.grouped_mm", 2),
        (
            "from torch.nn.modules.rnn import apply_permutation\n",
            "torch.nn.modules.rnn.apply_permutation",
            1,
        ),
        ("import torch\nprint(torch.nn.functional.scaled_mm)\n",
         "torch.nn.functional.scaled_mm", 2),
        (
            "import torch\nx = torch.ones(2)\n\nx.storage_offset_not_there()\n",
            "torch.Tensor.storage_offset_not_there",
            4,
        ),
    ],
)
def test_a_missing_torch_name_is_one_error_line(tmp_path, source, name, line):
    done = run_script(tmp_path, source)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'program.py'}, line {line}: tensorlib has no {name}"
    ]


def test_the_programs_own_errors_and_exit_status_are_its_own(tmp_path):
    done = run_script(tmp_path, "import torch\nraise KeyError('mine')\n")
    assert done.returncode == 1 and "Traceback" in done.stderr and "KeyError: 'mine'" in done.stderr
    done = run_script(tmp_path, "import sys\nsys.exit(5)\n")
    assert done.returncode == 5
    # not a torch name: the program's bug
    done = run_script(tmp_path, "class A:\n    pass\nA().missing\n")
    assert done.returncode == 1 and "AttributeError" in done.stderr


def test_usage(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tensorlib.run_as_torch"], capture_output=True, text=True, env=env
    )
    assert (
        done.returncode == 2 and "usage: python -m tensorlib.run_as_torch script.py" in done.stderr
    )
    done = subprocess.run(
        [sys.executable, "-m", "tensorlib.run_as_torch", str(tmp_path / "none.py")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (
        done.returncode == 2
        and done.stderr.strip() == f"error: no script {str(tmp_path / 'none.py')!r}"
    )


def test_install_refuses_when_pytorch_is_imported():
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = (
        "import torch, tensorlib.run_as_torch as r\ntry:\n    r.install()\nexcept RuntimeError "
        "as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert "PyTorch is already imported in this process" in done.stdout


def test_a_missing_name_in_a_module_of_the_program_is_reported_where_it_is_used(tmp_path):
    """The program's own module that uses the name, not the script line that called into it."""
    (tmp_path / "helper.py").write_text(
        "import torch\n\n\ndef legacy():\n    return torch.sparse_coo_tensor(3)\n", encoding="utf-8"
    )
    done = run_script(tmp_path, "import helper\n\nhelper.legacy()\n")
    assert done.returncode == 2
    assert done.stderr == "error: helper.py, line 5: tensorlib has no torch.sparse_coo_tensor\n"


def test_torch_version_is_the_api_tensorlib_follows(tmp_path):
    done = run_script(
        tmp_path,
        "import torch\nprint(torch.__version__, torch.__version__ >= '2.0', "
        "torch.fx.wrap is not None, torch.autocast is torch.amp.autocast)\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2.13.0+tensorlib True True True"


def test_a_program_using_serialization_and_checkpoint_names_runs(tmp_path):
    """Chapter 7: torch.serialization's switches and torch.utils.checkpoint's other names."""
    done = run_script(tmp_path, """
        import warnings
        import torch
        from torch.serialization import SourceChangeWarning, skip_data, LoadEndianness
        from torch.utils.checkpoint import checkpoint, detach_variable, set_checkpoint_early_stop
        warnings.simplefilter("ignore", SourceChangeWarning)
        model = torch.nn.Linear(3, 2)
        torch.save(model.state_dict(), "m.pt", pickle_protocol=torch.serialization.DEFAULT_PROTOCOL)
        with skip_data():
            torch.save(model.state_dict(), "layout.pt")
        torch.serialization.set_default_load_endianness(LoadEndianness.LITTLE)
        state = torch.load("m.pt", map_location=torch.device("cpu"), weights_only=True, mmap=True)
        model.load_state_dict(state)
        x, = detach_variable((torch.ones(4, 3, requires_grad=True),))
        with set_checkpoint_early_stop(False):
            out = checkpoint(model, x, use_reentrant=False)
        out.sum().backward()
        print("ok", float(torch.load("layout.pt")["weight"].abs().sum()), x.grad.shape)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok 0.0 (4, 3)"


def test_a_program_using_out_runs(tmp_path):
    """PyTorch's tensors tutorial: ``torch.add(x, y, out=result)``, and other functions' out=."""
    done = run_script(tmp_path, """
        import torch
        x, y = torch.ones(5, 3), torch.full((5, 3), 2.0)
        result = torch.empty(5, 3)
        torch.add(x, y, out=result)
        c = torch.empty(0)
        torch.matmul(x.t(), y, out=c)
        values, indices = torch.empty(0), torch.empty(0, dtype=torch.long)
        torch.max(x + torch.arange(3.0), 1, out=(values, indices))
        buf = torch.empty(0)
        torch.cat([x, y], out=buf)
        steps = torch.arange(5, out=torch.empty(0, dtype=torch.long))
        print(result[0].tolist(), c.shape, indices.tolist(), buf.shape, steps.tolist())
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "[3.0, 3.0, 3.0] (3, 3) [2, 2, 2, 2, 2] (10, 3) [0, 1, 2, 3, 4]"
    )
