# Shortcuts for the common tasks; the README's two commands work without make.
# Every target uses the project's virtual environment (.venv, made by the README's commands).
PY := .venv/bin/python
VENV := .venv/bin

.PHONY: test lint bench

# the README's test command (unit, property, Pilot, snapshot and tmux end-to-end tests)
test:
	$(PY) -m pytest -n 2 -q

# ruff lint and format check over the tree; mypy over core, tui and the pytest plugin as one
# program (pyproject [tool.mypy])
lint:
	$(VENV)/ruff check
	$(VENV)/ruff format --check
	$(VENV)/mypy

# the benchmarks, each against a baseline measured in the same run
bench:
	$(PY) benchmarks/bench_load.py
	$(PY) benchmarks/bench_diff.py
	$(PY) benchmarks/bench_app.py
	$(PY) benchmarks/bench_gate.py
