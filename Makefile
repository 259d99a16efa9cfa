# Build, test and run targets for rocketmq-flowspec.
# Everything runs from a project virtual environment in .venv, created and kept up
# to date by the stamp file .venv/.installed (reinstalled when pyproject.toml changes).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
# pytest's workers (pytest-xdist): the tests that use Spark share one, so its session starts once.
PYTEST_WORKERS ?= 2
PYTEST_RUN = $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup

# Top-level package markers: an editable install maps only the packages that existed
# when it ran, so a newly created package triggers a reinstall.
PKG_INITS := $(wildcard spec/__init__.py reference/__init__.py properties/__init__.py traces/__init__.py)

# Spark's Python workers must run the venv interpreter (pyarrow and this project live there).
export PYSPARK_PYTHON        := $(abspath $(BIN))/python
export PYSPARK_DRIVER_PYTHON := $(abspath $(BIN))/python
export SPARK_LOCAL_IP        := 127.0.0.1
export PYTHONHASHSEED        := 0

.DEFAULT_GOAL := help
# Targets run one after another (test = typecheck, then pytest, then symbolic).
.NOTPARALLEL:
.PHONY: help venv compiled check-java agent demo test typecheck pytest symbolic check-deep mutants mutants-deep bench bench-100m docs clean distclean

help:
	@echo "make venv        create/refresh .venv and install the project with its dev tools"
	@echo "make compiled    compile the spec with mypyc for the replay's workers (make venv does it)"
	@echo "make test        typecheck + pytest + symbolic + mutants (what CI runs)"
	@echo "make agent       build the Java agent that records a broker's trace (build/flowspec-agent.jar)"
	@echo "make typecheck   mypy --strict on the packages"
	@echo "make pytest      the test suite on two workers (PYTEST_ARGS='...' to pass options, PYTEST_WORKERS=0 for one process)"
	@echo "make symbolic    CrossHair contract checks (python -m properties.symbolic)"
	@echo "make check-deep  the test suite with HYPOTHESIS_PROFILE=deep"
	@echo "make mutants     mutation check of the properties, and of the checker's rules and wire conditions within CI's time"
	@echo "make mutants-deep  mutation check of the whole checker: rules, validation, verdicts, wire (hours; docs/checker-mutants.md)"
	@echo "make bench       Spark trace benchmarks on 1M and 10M events (docs/benchmarks.md)"
	@echo "make bench-100m  validation, rules and replay of a 100M-event dataset (about 10 minutes here)"
	@echo "make demo        explore the spec, then record and check source 004's retry storm"
	@echo "make docs        generate documentation"
	@echo "make clean       remove caches and build output (distclean also removes .venv)"

# ---------------------------------------------------------------- environment

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null || { \
	  echo "error: Python >= 3.11 is required, but '$(PYTHON)' is: $$($(PYTHON) -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo 'not a working Python')"; \
	  echo "       Install Python 3.11 or newer and run e.g.: make PYTHON=python3.11 venv"; \
	  exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml $(PKG_INITS) | $(BIN)/python
	$(BIN)/python -m pip install --no-input --disable-pip-version-check -e '.[dev]'
	@touch $@

venv: $(STAMP) compiled

# The spec compiled by mypyc, which Spark's workers replay with (traces/checking/compiled.py). It is
# rebuilt only when a file of spec/, traces/ or properties/ changed since the last build (checked by hash).
compiled: $(STAMP)
	$(BIN)/python -m traces.checking.compiled

check-java:
	@java="$${JAVA_HOME:+$$JAVA_HOME/bin/}java"; \
	if ! out=$$("$$java" -version 2>&1); then \
	  echo "error: Spark needs Java >= 17, and '$$java -version' did not run."; \
	  echo "       On Debian/Ubuntu install it with: apt-get update && apt-get install -y openjdk-17-jre-headless"; \
	  exit 1; \
	fi; \
	ver=$$(printf '%s\n' "$$out" | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1); \
	major=$${ver%%.*}; \
	if [ "$$major" = 1 ]; then major=$$(printf '%s' "$$ver" | cut -d. -f2); fi; \
	case "$$major" in ''|*[!0-9]*) major=0 ;; esac; \
	if [ "$$major" -lt 17 ]; then \
	  echo "error: Spark needs Java >= 17, but '$$java' is version '$$ver'."; \
	  echo "       On Debian/Ubuntu install it with: apt-get update && apt-get install -y openjdk-17-jre-headless"; \
	  echo "       (and point JAVA_HOME at it, or put it first on PATH)"; \
	  exit 1; \
	fi

# ---------------------------------------------------------------- the Java agent

# The agent that records a running broker's trace (docs/agent.md), with Byte Buddy (Debian's
# libbyte-buddy-java, which bundles its ASM) unpacked into the jar, so that the one file is all
# a broker host needs.
BYTE_BUDDY  ?= /usr/share/java/byte-buddy.jar
AGENT_JAR   := build/flowspec-agent.jar
AGENT_SRC   := $(wildcard traces/agent/src/flowspec/agent/*.java)

agent: $(AGENT_JAR)

$(AGENT_JAR): $(AGENT_SRC) traces/agent/MANIFEST.MF
	@command -v javac >/dev/null || { \
	  echo "error: the agent needs a JDK >= 17 ('javac' not found)."; \
	  echo "       On Debian/Ubuntu install it with: apt-get install -y openjdk-17-jdk-headless"; exit 1; }
	@test -f "$(BYTE_BUDDY)" || { \
	  echo "error: the agent needs Byte Buddy, and $(BYTE_BUDDY) does not exist."; \
	  echo "       On Debian/Ubuntu install it with: apt-get install -y libbyte-buddy-java"; \
	  echo "       (or point BYTE_BUDDY at a byte-buddy jar)"; exit 1; }
	rm -rf build/agent && mkdir -p build/agent/classes
	javac --release 17 -nowarn -d build/agent/classes -cp $(BYTE_BUDDY) $(AGENT_SRC)
	cd build/agent/classes && jar xf $(abspath $(BYTE_BUDDY)) net
	jar cfm $@ traces/agent/MANIFEST.MF -C build/agent/classes .

# ---------------------------------------------------------------- checks

test: typecheck pytest symbolic mutants

typecheck: $(STAMP)
	$(BIN)/mypy --strict spec reference properties traces

pytest: check-java $(STAMP) compiled agent
	$(PYTEST_RUN) $(PYTEST_ARGS)

symbolic: $(STAMP)
	$(BIN)/python -m properties.symbolic

check-deep: check-java $(STAMP) compiled
	HYPOTHESIS_PROFILE=deep $(PYTEST_RUN) $(PYTEST_ARGS)

# The checker's mutants (docs/checker-mutants.md): make mutants runs the part that fits CI's time,
# make mutants-deep every scope. Both stage their run in mutants/ (removed by make clean).
mutants: $(STAMP)
	$(BIN)/python -m properties.mutants
	$(BIN)/python -m properties.checker_mutants --ci --children 2
	$(BIN)/python -m properties.checker_mutants wire --children 2

mutants-deep: $(STAMP)
	$(BIN)/python -m properties.checker_mutants rules validation verdicts wire --children 2

# ---------------------------------------------------------------- programs

# The main job on the bundled example: check the spec by itself (the stuck beginTimeInLock of
# 5.3.3 must be found), then record source 004's retry storm from the reference broker, with and
# without the per-topic limiter, and validate both traces on Spark with an HTML report.
DEMO := out/demo
demo: check-java $(STAMP) compiled
	$(BIN)/flowspec explore --profile 5.3.3 --expect-violation begin_time_is_zero_when_lock_is_free
	@mkdir -p $(DEMO)
	$(BIN)/flowspec record --workload retry-storm --events 3000 --profile 5.3.3 --out $(DEMO)/retry-storm.jsonl
	$(BIN)/flowspec record --workload retry-storm-limited --events 3000 --profile 5.3.3 --out $(DEMO)/retry-storm-limited.jsonl
	$(BIN)/python -m traces.reporting.outcomes $(DEMO)/retry-storm.jsonl $(DEMO)/retry-storm-limited.jsonl
	$(BIN)/flowspec check $(DEMO)/retry-storm.jsonl $(DEMO)/retry-storm-limited.jsonl --report $(DEMO)/report.html
	@echo "report: $(DEMO)/report.html"

bench: check-java $(STAMP) compiled
	$(BIN)/python -m traces.checking.bench

bench-100m: check-java $(STAMP) compiled
	$(BIN)/python -m traces.checking.bench --sizes 100000000 --replay-size 100000000 --no-plain --long-events 0 --section bench-100m

docs: $(STAMP)
	$(BIN)/python -m properties.docgen

# ---------------------------------------------------------------- cleaning

clean:
	rm -rf build dist *.egg-info .hypothesis .mypy_cache .pytest_cache .crosshair spark-warehouse metastore_db derby.log out mutants
	find . -path ./$(VENV) -prune -o -path ./.git -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
