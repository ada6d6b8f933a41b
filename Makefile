PYTHON ?= python3

.PHONY: setup test lint

# Everything a fresh machine needs: the package, its test tools, and the official
# qwen-tts 0.1.1 (test-only reference; --no-deps because of its gradio/torchaudio pins).
setup:
	$(PYTHON) -m pip install -q torch==2.13.0 || $(PYTHON) -m pip install -q 'torch>=2.5'
	$(PYTHON) -m pip install -q -e '.[test]'
	$(PYTHON) -m pip install -q --no-deps qwen-tts==0.1.1

test:
	$(PYTHON) -m ruff check hearth tests
	$(PYTHON) -m mypy
	$(PYTHON) -m pytest -q

lint:
	$(PYTHON) -m ruff check hearth tests
