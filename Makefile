# `make build` and `make test` do all set-up on a fresh machine: system cairo headers and the
# pinned font when missing, a virtual environment, and an editable install with dev extras.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
N      ?= 3000
WORKERS ?= 2

.PHONY: build test bench sheets system clean gallery browser

system:
	@if ! pkg-config --exists cairo 2>/dev/null || ! fc-list 2>/dev/null | grep -q 'DejaVuSans-Bold.ttf'; then \
	  echo "installing system packages: libcairo2-dev pkg-config fonts-dejavu-core"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libcairo2-dev pkg-config fonts-dejavu-core fontconfig >/dev/null; \
	fi

# The headless browser the `grip browse` tests drive (tests/test_browse.py).
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  echo "installing system packages: chromium chromium-driver"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

$(STAMP): pyproject.toml
	$(MAKE) system
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

build: $(STAMP)
	$(BIN)/grip build --domain gear_trains --n $(N) --out out --workers $(WORKERS)

test: $(STAMP) browser
	$(BIN)/python -m pytest -n 2 --dist loadfile tests

# About 2 minutes; more items for steadier figures: make bench BENCH="--n 600" (see benchmarks/*.py --help).
bench: $(STAMP)
	$(BIN)/python benchmarks/build_throughput.py $(BENCH)

sheets: $(STAMP)
	mkdir -p out/sheets
	for d in $$($(BIN)/grip list | cut -d' ' -f1); do $(BIN)/grip sheet $$d --n 12 --out out/sheets/$$d.png; done

gallery: $(STAMP)
	$(BIN)/grip gallery --out docs/gallery

clean:
	rm -rf $(VENV) out build *.egg-info
