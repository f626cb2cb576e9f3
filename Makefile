# tensorlib: every target installs what it needs first, so each works alone on a fresh clone.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tools/nbval_sanitize.cfg -p no:cacheprovider
# Threads: one per worker, so two xdist workers share two cores without oversubscription.
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1

.PHONY: install export exercises run book book-print test lab bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	# venv's bundled setuptools is too old for pyproject.toml (SPDX license needs >= 77); the wheel
	# test builds without isolation, with this setuptools.
	$(PY) -m pip install -q --upgrade pip 'setuptools>=77'
	$(PY) -m pip install -q -e '.[book,test,lab]'
	touch $(STAMP)

export: install
	$(PY) tools/export.py

exercises: install
	$(PY) tools/exercises.py

# make run NB=book/01_tensors.ipynb: execute a notebook in place, in order, with clean metadata
run: install
	$(PY) tools/run_notebook.py $(NB)

# The website in book/_build/html: MathJax copied in (book/_mathjax/), stored outputs, every
# warning an error (tools/build_book.py runs jupyter-book build -W -n --keep-going --all).
book: install
	$(PY) tools/build_book.py

# The printable book: every chapter, the solutions and the reference on one self-contained page,
# book/_build/singlehtml/intro.html, printed offline by headless Chromium (/usr/bin/chromium) to
# book/_build/tensorlib.pdf and checked by tools/check_pdf.py (needs poppler-utils).
book-print: install
	$(PY) tools/build_book.py --print

test: install
	$(PY) tools/export.py --check
	$(PY) tools/hygiene.py book solutions
	$(PY) tools/exercises.py --check
	$(PY) -m ruff check tensorlib tools tests benchmarks book solutions
	$(PY) -m mypy
	$(PY) -m pytest tests -n 2 --dist loadscope --durations=20 -m "not slow"
	$(PY) -m pytest $(NBVAL) book solutions --ignore=book/solutions --ignore=book/_build -n 2 --dist loadscope
	$(PY) tools/exercises.py --stubs-fail

# make lab LAB_ARGS=--allow-root as root (JupyterLab refuses root otherwise); LAB_ARGS="--no-browser --port 8899"
lab: install exercises
	$(VENV)/bin/jupyter lab exercises $(LAB_ARGS)

# The tests marked slow (the website's build and browser checks, the printed book, the wheel, the quick
# bench, the OpInfo sweep's runs): about 12 minutes on two cores; CI runs them after make test
.PHONY: test-slow
test-slow: install
	$(PY) -m pytest tests -n 2 --dist loadscope --durations=20 -m slow

# make bench BENCH_ARGS='--only gpt' (or --quick: same format, rough figures); output format in benchmarks/README.md
bench: install
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf book/_build book/_mathjax book/reference build dist .bench .pytest_cache .hypothesis .ruff_cache *.egg-info
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

# Chapter 7: 10,000 mutated checkpoint files per format (TLCKPT, safetensors, tl.save, torch.save where torch is
# installed): only CheckpointError, nothing changed, no hang, bounded memory; prints the counts
.PHONY: fuzz
fuzz: install
	TENSORLIB_FUZZ_N=10000 $(PY) -m pytest tests/test_serialization_fuzz.py -q -s -p no:cacheprovider

# Every op of PyTorch's OpInfo database that tensorlib has, on PyTorch's own float64 samples: values and
# gradients compared (tools/opinfo_sweep.py; about ten minutes on two cores; needs torch and expecttest)
.PHONY: sweep
sweep: install
	$(PY) -m pip install -q expecttest
	$(PY) tools/opinfo_sweep.py $(SWEEP_ARGS)

# Chapter 8: the documented run, the default configuration on the shipped corpus (5 min 24 s measured on
# the book's 2-core machine, chapter 8, section 14);
# checkpoints and log.csv in runs/gpt (make train again resumes it), then samples at two temperatures
.PHONY: train
train: install
	if [ -f runs/gpt/ckpt.safetensors ]; then $(PY) -m tensorlib.gpt train --out runs/gpt --resume; else $(PY) -m tensorlib.gpt train --out runs/gpt; fi
	$(PY) -m tensorlib.gpt sample --checkpoint runs/gpt --prompt "The " --temperature 0.5 --max-new-tokens 300
	$(PY) -m tensorlib.gpt sample --checkpoint runs/gpt --prompt "The " --temperature 1.0 --max-new-tokens 300
