"""Random numbers: 1,000,000 draws from tensorlib's splitmix64 Generator vs numpy's and torch's.

The numpy column is ``np.random.default_rng`` (PCG64) drawing the same number of float32
values; the torch column is a ``torch.Generator`` (mt19937). tensorlib computes each block of
splitmix64 outputs as one vectorised uint64 array expression; its normals use two draws each
and float64 Box-Muller (see chapter 3), so they cost more than its uniforms. numpy has no
float16 generator: its column draws float32 and casts. The two overhead rows time tiny calls,
where the fixed cost of each numpy operation (about a dozen per splitmix64 block) and the
argument checking (sizes, dtype, device, torch's ``randint`` signature) dominate.
``multinomial`` is compared with numpy's ``Generator.choice`` (one call per row: it takes one
probability vector) and ``torch.multinomial``.
"""

from __future__ import annotations

import numpy as np
from _timing import row, torch

import tensorlib as tl

N = 1_000_000


def run() -> list[dict]:
    generator = tl.Generator(0)
    rng = np.random.default_rng(0)
    torch_generator = torch.Generator().manual_seed(0) if torch is not None else None

    weights = tl.rand(1000, generator=tl.Generator(1), dtype=tl.float64)
    probabilities = weights.numpy() / weights.numpy().sum()
    vocabulary = tl.rand(64, 50_000, generator=tl.Generator(2), dtype=tl.float64)
    vocabulary_probabilities = vocabulary.numpy() / vocabulary.numpy().sum(axis=1, keepdims=True)
    torch_weights = torch.from_numpy(weights.numpy()) if torch is not None else None
    torch_vocabulary = torch.from_numpy(vocabulary.numpy()) if torch is not None else None

    def torch_call(fn):
        return None if torch is None else fn

    return [
        row(
            "raw uint64 x 1e6",
            lambda: generator.next_u64(N),
            lambda: rng.integers(0, 2**64, size=N, dtype=np.uint64),
            torch_call(lambda: torch.randint(-(2**63), 2**63 - 1, (N,), generator=torch_generator)),
        ),
        row(
            "uniform float32 x 1e6 (rand)",
            lambda: tl.rand(N, generator=generator),
            lambda: rng.random(N, dtype=np.float32),
            torch_call(lambda: torch.rand(N, generator=torch_generator)),
        ),
        row(
            "normal float32 x 1e6 (randn)",
            lambda: tl.randn(N, generator=generator),
            lambda: rng.standard_normal(N, dtype=np.float32),
            torch_call(lambda: torch.randn(N, generator=torch_generator)),
        ),
        row(
            "randint [0, 10) x 1e6",
            lambda: tl.randint(0, 10, (N,), generator=generator),
            lambda: rng.integers(0, 10, size=N),
            torch_call(lambda: torch.randint(0, 10, (N,), generator=torch_generator)),
        ),
        row(
            "uniform float16 x 1e6 (rand)",
            lambda: tl.rand(N, dtype=tl.float16, generator=generator),
            lambda: rng.random(N, dtype=np.float32).astype(np.float16),
            torch_call(lambda: torch.rand(N, dtype=torch.float16, generator=torch_generator)),
        ),
        row(
            "rand(4, 4): per-call overhead",
            lambda: tl.rand(4, 4, generator=generator),
            lambda: rng.random((4, 4), dtype=np.float32),
            torch_call(lambda: torch.rand(4, 4, generator=torch_generator)),
        ),
        row(
            "randint(low=0, high=10, size=(16,)): overhead",
            lambda: tl.randint(low=0, high=10, size=(16,), generator=generator),
            lambda: rng.integers(0, 10, size=16),
            torch_call(
                lambda: torch.randint(low=0, high=10, size=(16,), generator=torch_generator)
            ),
        ),
        row(
            "multinomial 1e6 of 1000 categories, replacement",
            lambda: tl.multinomial(weights, N, replacement=True, generator=generator),
            lambda: rng.choice(1000, size=N, p=probabilities),
            torch_call(
                lambda: torch.multinomial(
                    torch_weights, N, replacement=True, generator=torch_generator
                )
            ),
        ),
        row(
            "multinomial 64 rows x 50000 categories, 1 each (next tokens)",
            lambda: tl.multinomial(vocabulary, 1, generator=generator),
            lambda: [rng.choice(50_000, p=r) for r in vocabulary_probabilities],
            torch_call(lambda: torch.multinomial(torch_vocabulary, 1, generator=torch_generator)),
        ),
        row(
            "randperm 1e6",
            lambda: tl.randperm(N, generator=generator),
            lambda: rng.permutation(N),
            torch_call(lambda: torch.randperm(N, generator=torch_generator)),
        ),
    ]
