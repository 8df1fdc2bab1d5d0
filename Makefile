# The two commands of the README: `make plan` (offline plan of the dev stack) and `make test`.
# Both set up .venv from nothing (Python >= 3.11 and network access to PyPI are all they need).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STACK ?= dev
PIP := $(BIN)/python -m pip --quiet --disable-pip-version-check

.PHONY: plan test lint pulumi-yaml clean

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "hyperpod-dpd needs Python >= 3.11, found " + sys.version.split()[0] + " (set PYTHON=python3.11)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -r requirements.txt -r requirements-dev.txt
	$(PIP) install --no-deps -e .
	touch $@

plan: $(STAMP)
	$(BIN)/hyperpod-dpd plan --stack $(STACK)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/hyperpod-dpd pulumi-yaml --check

test: lint
	$(BIN)/pytest

# Regenerate Pulumi.yaml's config block and README's config table after changing the model.
pulumi-yaml: $(STAMP)
	$(BIN)/hyperpod-dpd pulumi-yaml

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache *.egg-info
