# Two entry points that do all their own set-up on a fresh clone:
#   make demo   benchmark the bundled digits FP32 and INT8 models on this computer, then the
#               INT8 model on the emulated Cortex-M4 board (QEMU), bit-exactness checked
#   make test   run the test suite (installs system tools as root, then a venv)
#   make test-fast  the everyday lane (no QEMU, fuzzing, TensorFlow or slow tests)
#   make lint   ruff and mypy (pyproject.toml [tool.ruff], [tool.mypy]); part of make test
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin

.PHONY: demo test test-fast test-serial-plain lint venv system clean docs

demo: system $(VENV)/.stamp
	$(BIN)/edgebench demo

test: system $(VENV)/.stamp-test lint test-serial-plain
	EDGEBENCH_TEST_AGENT_PYTHON="$$(bash scripts/agent-py39.sh)" $(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The test venv has the farm extra, whose pyserial-labgrid fork replaces pyserial's `serial` module;
# the serial tests also run on plain pyserial, in a venv without the extra (docs/farm.md)
PLAIN ?= .venv-pyserial
test-serial-plain: $(PLAIN)/.stamp
	$(PLAIN)/bin/python -m pytest -q tests/test_transport_serial.py tests/test_firmware_protocol.py

$(PLAIN)/.stamp: pyproject.toml
	test -x $(PLAIN)/bin/python || $(PYTHON) -m venv $(PLAIN)
	$(PLAIN)/bin/python -m pip install -q --upgrade pip
	$(PLAIN)/bin/python -m pip install -q -e '.[test]'
	$(PLAIN)/bin/python -c "import serial, importlib.metadata as m; v = m.version('pyserial'); \
	  assert serial.__version__ == v, f'serial {serial.__version__} is not plain pyserial {v}'"
	touch $@

# the everyday lane: no QEMU, fuzzing, TensorFlow, MLPerf Tiny models or multi-second tests, in
# FAST_WORKERS processes (pytest-xdist, a module's tests in one worker so its fixtures are made once);
# nothing from outside the repository; bytecode and pytest's rewritten test modules cached in
# __pycache__ even where PYTHONDONTWRITEBYTECODE is set (under a minute on 2 cores)
FAST_WORKERS ?= 2
test-fast: $(VENV)/.stamp-test
	PYTHONDONTWRITEBYTECODE= EDGEBENCH_TEST_AGENT_PYTHON="$$(bash scripts/agent-py39.sh)" $(BIN)/python -m pytest -q \
	  -n $(FAST_WORKERS) --dist loadscope \
	  -m "not slow and not qemu and not fuzz and not tensorflow and not hardware and not mlperf" --durations=5 $(PYTEST_ARGS)

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/mypy

# the generated reference pages (a test fails when one is stale)
docs: $(VENV)/.stamp
	$(BIN)/python scripts/cli_docs.py

system:
	bash scripts/setup-system.sh

venv: $(VENV)/.stamp

$(VENV)/.stamp: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $@

# farm: labgrid and its pyserial-labgrid fork (same `serial` module; the serial tests pass with both);
# onnx: onnx and onnxruntime for the ONNX lowering's tests; lab: psycopg and boto3 for the shared results store
$(VENV)/.stamp-test: $(VENV)/.stamp
	$(BIN)/python -m pip install -q -e '.[test,quantize,farm,onnx,lab]'
	touch $@

clean:
	rm -rf $(VENV) $(PLAIN) .venv-agent39 runs build dist
