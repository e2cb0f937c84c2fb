# Two commands a learner needs: `make lab` and `make test`.
# Both create .venv on first use; the stamps make the second run quick.
# Python 3.11 to 3.13 work (the one the notebooks were executed with first).
PY ?= $(shell command -v python3.11 || command -v python3.13 || command -v python3.12 \
	|| command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# `make lab` installs only what the lessons need ([lab]); `make test` adds the test tools.
LAB_STAMP := $(VENV)/.lab-stamp
STAMP := $(VENV)/.installed-stamp
REFERENCE_CAPTURES ?= ../shared/reference-captures
export REFERENCE_CAPTURES
# Jupyter refuses to run as root unless told; containers and CI often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test hub-proxy notebooks captures bench learner-copy cheat-sheet lint clean

$(LAB_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python lesson_lib/course/environment.py
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[lab]'
	# No news pop-up in the corner the projector shows (written to this venv only).
	$(BIN)/jupyter labextension disable "@jupyterlab/apputils-extension:announcements"
	touch $(LAB_STAMP)

$(STAMP): $(LAB_STAMP)
	$(BIN)/python -m pip install -q -e '.[lab,test]'
	touch $(STAMP)

# The learner works in my-work/ (git-ignored, never regenerated): seeded from
# notebooks/learner/ with any lesson it lacks, and where JupyterLab opens. The venv
# is on the lab's PATH, so `lesson-lib serve` works in its terminals.
lab: $(LAB_STAMP)
	$(BIN)/python -c "from lesson_lib.course import learner; print(learner.seed())"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/jupyter lab --notebook-dir=. \
		--LabApp.default_url=/lab/tree/my-work \
		$(ROOT_FLAG) $(LAB_ARGS)

# The proxy a real JupyterHub needs, for tests/test_hub_real.py: configurable-http-proxy
# from the npm registry into tests/hub/node_modules (exact versions in its package-lock.json).
# Without npm, or when the install fails, the test skips and says why.
HUB_PROXY := tests/hub/node_modules/.bin/configurable-http-proxy

$(HUB_PROXY): tests/hub/package.json tests/hub/package-lock.json
	npm ci --prefix tests/hub --no-audit --no-fund --loglevel=error
	touch $@

hub-proxy:
	@if ! command -v npm >/dev/null 2>&1; then echo "npm not found: tests/test_hub_real.py will skip"; \
	elif ! $(MAKE) --no-print-directory $(HUB_PROXY); then \
		echo "configurable-http-proxy could not be installed: tests/test_hub_real.py will skip"; fi

# The suite runs on every core (pytest-xdist), one test file at a time on a worker: a
# notebook's cells run in order in one kernel, and a module's shared server or built corpus
# is made once. TEST_JOBS=0 runs it in this process alone.
TEST_JOBS ?= auto

test: $(STAMP) hub-proxy
	$(BIN)/ruff check lesson_lib tests scripts bench
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/sanitize.cfg tests notebooks/[0-9][0-9]*-*.ipynb

notebooks: $(STAMP)
	$(BIN)/python scripts/build_notebooks.py
	$(BIN)/python scripts/build_cheat_sheet.py

# From the registry (lesson_lib/wires/): the cheat sheet of every wire (CHEATSHEET.md and its
# printed pages), the README's table of wires and list of serve's paths, and INSTRUCTORS.md's
# recipes for pointing each SDK at the server.
cheat-sheet: $(STAMP)
	$(BIN)/python scripts/build_cheat_sheet.py

# Only the solution-free copies in notebooks/learner/, from the built lessons.
learner-copy: $(STAMP)
	$(BIN)/python scripts/build_notebooks.py --learner-only

captures: $(STAMP)
	$(BIN)/python scripts/build_captures.py

# Lesson 3 quotes bench/results.json, so its notebook is rebuilt after a full run.
bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)
	$(BIN)/python scripts/build_notebooks.py notebooks/03-partial-json-tool-calls.ipynb

lint: $(STAMP)
	$(BIN)/ruff check lesson_lib tests scripts bench

clean:
	rm -rf $(VENV) .venv-3.* .pytest_cache .ruff_cache .hypothesis test-artifacts \
		tests/hub/node_modules
