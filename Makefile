PYTHON ?= python3

.PHONY: setup test test-fast test-shuffled test-cpus image image-check addon-check compose-check lint

# Everything a fresh machine needs: the package, its test tools, and the official qwen-tts 0.1.1
# and qwen-asr 0.0.6 (test-only references; --no-deps because of their gradio/torchaudio/transformers
# pins: pyproject.toml's test extra lists what they import).
# On aarch64 PyPI's torch is the CUDA build from 2.11 on (4 GB on a board without a GPU): 2.10.0 there.
ifeq ($(shell uname -m),aarch64)
TORCH ?= torch==2.10.0
TORCH_ANY ?= torch>=2.5,<2.11
else
TORCH ?= torch==2.13.0
TORCH_ANY ?= torch>=2.5
endif

setup:
	$(PYTHON) -m pip install -q $(TORCH) || $(PYTHON) -m pip install -q '$(TORCH_ANY)'
	$(PYTHON) -m pip install -q -e '.[test]'
	$(PYTHON) -m pip install -q --no-deps qwen-tts==0.1.1 qwen-asr==0.0.6

# Everything, in two worker processes (a test module stays on one worker: its server starts once).
# A worker that dies ends the run: pytest-xdist 3.8's loadscope can wait forever after replacing one
# (pytest-dev/pytest-xdist#1378). Output is captured at Python's level only (--capture=sys), so what
# a native library writes as a worker dies (the dynamic loader's "Inconsistency detected by ld.so",
# a runtime's abort message) reaches the log instead of a capture file that dies with the worker.
test:
	$(PYTHON) -m ruff check hearth tests
	$(PYTHON) -m mypy
	$(PYTHON) -m pytest -q -n 2 --dist loadscope --max-worker-restart 0 --capture=sys --durations=25

# The same in a random order (modules and the tests in them), to find a test that depends on another's
# leftovers; the seed is printed, and `--random-order-seed=N` repeats an order.
test-shuffled:
	$(PYTHON) -m pytest -q -n 2 --dist loadscope --max-worker-restart 0 --capture=sys --random-order-bucket=global

# For working: no test that starts a process or converts for a compiled backend, but one OpenVINO
# smoke test (see tests/conftest.py); about two minutes on two cores.
test-fast:
	$(PYTHON) -m ruff check hearth tests
	$(PYTHON) -m pytest -q -n 2 --max-worker-restart 0 -m "not slow"

# The determinism tests as every x86 level the runtimes dispatch on (AVX2 to AMX), through the CPUID
# mask (needs CPUID faulting); see scripts/test_cpus.sh and docs/determinism.md.
test-cpus:
	PYTHON=$(PYTHON) sh scripts/test_cpus.sh

# The container image as `docker build .` makes it, and the Home Assistant add-on as a Supervisor
# builds it, here with stand-ins for the public base images (Debian roots made with debootstrap)
# and for PyPI (a package index on loopback serving the wheel built from this checkout); then run
# and checked with the wyoming and OpenAI clients (scripts/image.sh; ARCH=arm64 under qemu-user).
# Needs root, debootstrap, buildah and podman. See docs/releasing.md.
ARCH ?= $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
image:
	ARCH=$(ARCH) sh scripts/image.sh build

image-check: image
	ARCH=$(ARCH) PYTHON=$(PYTHON) sh scripts/image.sh check

addon-check:
	ARCH=$(ARCH) PYTHON=$(PYTHON) sh scripts/image.sh addon

compose-check:
	PYTHON=$(PYTHON) sh scripts/image.sh compose

lint:
	$(PYTHON) -m ruff check hearth tests
