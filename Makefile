# The course's commands. `make book` and `make test` set everything up themselves: on a machine
# with only Python they create .venv and install requirements.txt into it first.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SUBMISSIONS ?=
SOLUTIONS ?= show
# EXECUTION=cache: reuse the notebooks an earlier cached build ran (code/tools/book/solutions_switch.py)
EXECUTION ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CHAPTER ?=
REMOTE ?= origin

# Notebooks run by the build and the tests print a one-line summary instead of progress bars.
export SEQLAB_PROGRESS ?= 0
export PYDEVD_DISABLE_FILE_VALIDATION = 1

# the course's tools are the package code/tools, run as modules: $(TOOL) tools.reports.timings
TOOL := PYTHONPATH=code $(BIN)/python -m

RUFF := $(BIN)/ruff
RUFF_CONFIG := --config code/pyproject.toml
LINTED := code tests chapters
# notebooks are formatted narrower, to fit the book's page without scrolling
NB_WIDTH := --line-length 88
# On a busy machine PyTorch's threads should sleep, not spin, while they wait for each other: the
# same results, several times faster there (code/tools/reports/wait_policy.py measures it per command).
OMP_ENV = env $$($(TOOL) tools.reports.wait_policy)

PORT ?= 8888

.PHONY: help install test lint format lab book student check-notebooks check-a11y check-autograder publish grade grade-bench mutation timings robustness gpu-wheels gpu-check diagrams page clean

help:
	@echo "make book                 build the book into _build/html (SOLUTIONS=remove drops solutions; EXECUTION=cache)"
	@echo "make test                 lint, unit tests, exercise tests, every notebook (nbval)"
	@echo "make lab                  JupyterLab on the course venv, in chapters/ (PORT=; widgets: tqdm bars)"
	@echo "make student              student notebooks and autograder zips into dist/ (CHAPTER=)"
	@echo "make check-notebooks      run every student notebook in JupyterLab in Chromium (CHAPTER=; slow)"
	@echo "make check-a11y           axe-core's WCAG 2.1 A/AA rules on every page of _build/html, in Chromium"
	@echo "make check-autograder     grade with each zip from a fresh venv, outside the repo (CHAPTER=; slow)"
	@echo "make publish              push the built book (student notebooks included) to gh-pages (REMOTE=)"
	@echo "make grade SUBMISSIONS=D  grade every notebook under D: grades.csv, feedback/ (CHAPTER=, JOBS=)"
	@echo "make grade-bench          time make grade on a class of made-up submissions (JOBS=; CHAPTER=)"
	@echo "make mutation             mutants of each reference solution killed by the public / all tests (CHAPTER=)"
	@echo "make timings              run every chapter once and print seconds per notebook"
	@echo "make robustness           each claim's value over 3 seeds x CPU kernels against its bar (a report)"
	@echo "make gpu-wheels           the wheels gpu-check needs beyond a GPU machine's PyTorch, into .whl/ (needs PyPI)"
	@echo "make gpu-check            on a GPU machine: unit tests on CUDA, every chapter on CUDA and on the CPU (a table)"
	@echo "make diagrams             redraw the concept diagrams into chapters/images/"
	@echo "make page CHAPTER=name    build one chapter's page into _build/page/name/html"
	@echo "make lint | format | clean"

install: $(STAMP)

$(STAMP): requirements.txt code/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip check
	touch $(STAMP)

lint: $(STAMP)
	$(RUFF) check $(RUFF_CONFIG) $(LINTED)
	$(RUFF) format --check $(RUFF_CONFIG) code tests
	$(RUFF) format --check $(RUFF_CONFIG) $(NB_WIDTH) chapters
	$(BIN)/actionlint .github/workflows/*.yml
	$(BIN)/zizmor --offline --no-progress .github

format: $(STAMP)
	$(RUFF) format $(RUFF_CONFIG) code tests
	$(RUFF) format $(RUFF_CONFIG) $(NB_WIDTH) chapters
	$(RUFF) check --fix $(RUFF_CONFIG) $(LINTED)

# The chapters whose claims sit closest to their bars (`make robustness`), run a second time under
# the CPU kernel below this machine's best: a student's laptop computes with another one.
THIN_CHAPTERS := chapters/transformer.ipynb chapters/seq2seq.ipynb chapters/luong.ipynb \
	chapters/language_models.ipynb
NBVAL := $(BIN)/python -m pytest --nbval-lax --nbval-cell-timeout=600 -p no:randomly

# The chapters nbval runs are stored, outputs and all, in the book's execution cache
# (code/tools/book/nbval_cache.py): `make book EXECUTION=cache` afterwards renders them without
# running any chapter again. The cache starts empty, so it never holds a run of older code.
NB_CACHE := _build/.jupyter_cache

# pytest-xdist: one test module per worker (their fixtures are built once), JOBS workers. After
# nbval, no exercise answered on its page, printed outputs included (the cache holds them now).
test: lint
	$(OMP_ENV) $(BIN)/python -m pytest tests -n $(JOBS) --dist loadfile
	rm -rf $(NB_CACHE)
	SEQLAB_NB_CACHE=$(NB_CACHE) PYTHONPATH=code SEQLAB_STRICT_CLAIMS=1 $(OMP_ENV) \
		$(NBVAL) -p tools.book.nbval_cache chapters
	$(TOOL) tools.checks.answer_on_page --cache $(NB_CACHE)
	ATEN_CPU_CAPABILITY=$$($(TOOL) tools.reports.robustness --second-kernel) \
		SEQLAB_STRICT_CLAIMS=1 $(OMP_ENV) $(NBVAL) $(THIN_CHAPTERS)

# JupyterLab on the course's venv (ipywidgets included, so training shows tqdm bars), localhost
# only. Progress bars are on here, unlike in the build and the tests.
lab: $(STAMP)
	SEQLAB_PROGRESS=1 $(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
		--ServerApp.root_dir=chapters $(if $(NO_BROWSER),--no-browser) \
		$(if $(filter 0,$(shell id -u)),--allow-root)

book: $(STAMP)
	SEQLAB_SOLUTIONS=$(SOLUTIONS) SEQLAB_EXECUTION=$(EXECUTION) SEQLAB_STRICT_CLAIMS=1 $(OMP_ENV) \
		$(BIN)/jupyter-book build . --all -W --keep-going
	$(TOOL) tools.checks.leak_check _build/html $(if $(filter remove,$(SOLUTIONS)),--no-solutions)

student: $(STAMP)
	$(TOOL) tools.handout.student --out dist $(if $(CHAPTER),--only $(CHAPTER))

# Each student notebook opened and run in JupyterLab, in a real browser (Playwright driving Debian's
# Chromium, installed here when missing), from a venv holding only what a student installs.
check-notebooks: $(STAMP)
	test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }
	$(TOOL) tools.checks.check_notebooks $(if $(CHAPTER),--only $(CHAPTER))
	if [ -d _build/html ]; then $(MAKE) check-a11y; fi

# Every page of the built book (make book first), 1280 and 720 px wide, light and dark, every
# toggle opened: 0 violations of axe-core's WCAG 2.1 A/AA rules (code/tools/checks/a11y_check.py).
check-a11y: $(STAMP)
	test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }
	$(TOOL) tools.checks.a11y_check _build/html

# Not part of `make test` (a fresh install per chapter takes minutes): the zips from `make student`
# grade a correct and an untouched notebook from a new venv holding only what each zip declares.
check-autograder: $(STAMP)
	$(TOOL) tools.handout.student --out dist $(if $(CHAPTER),--only $(CHAPTER))
	$(TOOL) tools.grading.check_autograder --dist dist --jobs $(JOBS) $(if $(CHAPTER),--only $(CHAPTER))

publish: $(STAMP)
	test -f _build/html/index.html || $(MAKE) book
	$(TOOL) tools.handout.publish --site _build/html --remote $(REMOTE)

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=dir"; exit 2; }
	test -d dist || $(MAKE) student
	$(TOOL) tools.grading.grade "$(SUBMISSIONS)" --dist dist --out grades.csv --jobs $(JOBS) \
		$(if $(CHAPTER),--chapter $(CHAPTER))

# how fast make grade grades: every chapter's correct submission and one per question with a wrong
# answer, graded with JOBS jobs (submissions a minute; not part of make test).
grade-bench: $(STAMP)
	test -d dist || $(MAKE) student
	$(TOOL) tools.grading.bench --jobs $(JOBS) $(if $(CHAPTER),--chapter $(CHAPTER))

# mutmut's mutants of every reference solution against its question's public tests and all its tests:
# the table of tools/grading/mutation.py (survivors listed; not part of make test).
mutation: $(STAMP)
	$(TOOL) tools.grading.mutation --survivors $(if $(CHAPTER),--chapter $(CHAPTER))

timings: $(STAMP)
	$(TOOL) tools.reports.timings

# Not part of `make test`: every chapter's claims over 3 seeds x this CPU's kernels (CHAPTERS=, SEEDS=).
robustness: $(STAMP)
	$(TOOL) tools.reports.robustness $(if $(CHAPTERS),--chapters $(CHAPTERS)) $(if $(SEEDS),--seeds $(SEEDS))

# A GPU machine has PyTorch's CUDA build, numpy, matplotlib, tqdm, pytest, pytest-xdist and
# hypothesis, and often no network: `make gpu-wheels` (here) puts what else the chapters import,
# at the versions requirements.txt pins, into $(GPU_WHEELS)/ as wheels for its Python; `make
# gpu-check` (there) installs them beside the package and runs code/tools/reports/gpu_check.py.
# Neither uses the venv. Proven on a CPU with GPU_DEVICE=cpu GPU_COMPARE= (docs/contributors.md).
GPU_WHEELS ?= .whl
GPU_PYTHON ?= python3
GPU_PYVERSION ?= 3.12
GPU_DEVICE ?= cuda
GPU_COMPARE ?= cpu
# more options of gpu_check.py, e.g. --jobs 2 --threads 1 on a small machine
GPU_CHECK_ARGS ?=
GPU_SITE := _build/gpu-site
GPU_PACKAGES := babel|num2words|sacrebleu|tokenizers|regex

gpu-wheels:
	rm -rf $(GPU_WHEELS) && mkdir -p $(GPU_WHEELS)
	$(PYTHON) -m pip download --quiet --no-deps --only-binary=:all: --implementation cp \
		--python-version $(GPU_PYVERSION) --platform manylinux_2_28_x86_64 \
		--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d $(GPU_WHEELS) \
		$$(grep -E '^($(GPU_PACKAGES))==' requirements.txt)

gpu-check:
	@ls $(GPU_WHEELS)/*.whl >/dev/null 2>&1 || { echo "no wheels in $(GPU_WHEELS)/: run make gpu-wheels where pip works"; exit 2; }
	rm -rf $(GPU_SITE)
	$(GPU_PYTHON) -m pip install --quiet --no-index --no-deps --no-compile --target $(GPU_SITE) $(GPU_WHEELS)/*.whl
	mkdir -p _build && PYTHONPATH=$(GPU_SITE):code/src:code $(GPU_PYTHON) -m tools.reports.gpu_check \
		--device $(GPU_DEVICE) --compare "$(GPU_COMPARE)" --out _build/gpu-check.md $(GPU_CHECK_ARGS) \
		$(if $(CHAPTER),--chapters $(CHAPTER))

diagrams: $(STAMP)
	$(TOOL) tools.diagrams.build

page: $(STAMP)
	@test -n "$(CHAPTER)" || { echo "usage: make page CHAPTER=lstm"; exit 2; }
	SEQLAB_SOLUTIONS=$(SOLUTIONS) $(TOOL) tools.book.page $(CHAPTER)

clean:
	rm -rf _build dist grades.csv feedback .grade-cache .pytest_cache
	find . -name __pycache__ -not -path "./$(VENV)/*" -prune -exec rm -rf {} +
