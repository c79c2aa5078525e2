# Two entry points that do all their own set-up on a fresh clone:
#   make demo   benchmark the bundled digits FP32 and INT8 models on this computer, then the
#               INT8 model on the emulated Cortex-M4 board (QEMU), bit-exactness checked
#   make test   run the test suite (installs system tools as root, then a venv)
#   make test-fast  the everyday lane (no QEMU, fuzzing, TensorFlow or slow tests)
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: demo test test-fast venv system clean

demo: system $(VENV)/.stamp
	$(BIN)/edgebench demo

test: system $(VENV)/.stamp-test
	EDGEBENCH_TEST_AGENT_PYTHON="$$(bash scripts/agent-py39.sh)" $(BIN)/python -m pytest -q $(PYTEST_ARGS)

# the everyday lane: no QEMU, fuzzing, TensorFlow or multi-second tests (under a minute)
test-fast: $(VENV)/.stamp-test
	EDGEBENCH_TEST_AGENT_PYTHON="$$(bash scripts/agent-py39.sh)" $(BIN)/python -m pytest -q \
	  -m "not slow and not qemu and not fuzz and not tensorflow and not hardware" --durations=5 $(PYTEST_ARGS)

system:
	bash scripts/setup-system.sh

venv: $(VENV)/.stamp

$(VENV)/.stamp: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

# farm: labgrid and its pyserial-labgrid fork (same `serial` module; the serial tests pass with both)
$(VENV)/.stamp-test: $(VENV)/.stamp
	$(BIN)/python -m pip install -q -e '.[test,quantize,farm]'
	touch $@

clean:
	rm -rf $(VENV) .venv-agent39 runs build dist
