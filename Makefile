# The front door of the course. `make help` lists every target and variable.

BUILD ?= build
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
STEPS := $(patsubst steps/%,%,$(wildcard steps/[0-9][0-9]_*))
STEP_BINS := $(foreach s,$(STEPS),step$(firstword $(subst _, ,$(s))))
# A step's lab (steps/NN_name/lab/, the variants tried and not taught) builds ./stepNN-lab.
LAB_BINS := $(strip $(foreach s,$(STEPS),$(if $(wildcard steps/$(s)/lab/CMakeLists.txt),step$(firstword $(subst _, ,$(s)))-lab)))
# Tools beside the lessons, built and copied like the steps.
TOOL_BINS := bankmap step08_patterns step07-latency step10-contention
# The exercises: `make ex01` builds exercises/01_*/ as the reader wrote it and runs its tests.
EXERCISES_NN := $(patsubst exercises/%,%,$(wildcard exercises/[0-9][0-9]_*))
EX_TARGETS := $(foreach e,$(EXERCISES_NN),ex$(firstword $(subst _, ,$(e))))

# The GPU architecture. Without ARCH, every command builds for the default: the GPU visible now
# ("native"), or 90 without one, the same choice as CMakeLists.txt. `make ARCH=80 step01` builds
# for 80 and the next plain `make` goes back to the default (export ARCH=80 to keep 80).
# The build folder is reconfigured whenever it was set up for another architecture.
ARCH ?= $(shell nvidia-smi -L >/dev/null 2>&1 && echo native || echo 90)
CACHED_ARCH := $(shell sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' $(BUILD)/CMakeCache.txt 2>/dev/null)
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$(ARCH)"
ifeq ($(CACHED_ARCH),$(ARCH))
  CONFIGURED := $(BUILD)/CMakeCache.txt
else
  CONFIGURED := configure
endif

# ctest, its output summed up by scripts/test_summary.py (its docstring says how); ctest's exit code.
define run_ctest
	@if command -v python3 >/dev/null; then \
	  python3 scripts/test_summary.py --run $(BUILD) -- --output-on-failure -j $(JOBS) $(1); \
	else cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(1); fi
endef

.PHONY: help configure all labs test test-labs test-cpu test-gpu sanitize profile bench plots \
        docs grade deps grader-selftest \
        clean $(TOOL_BINS) $(STEP_BINS) $(LAB_BINS) $(EX_TARGETS)

help:
	@echo "The transpose course. Targets:"
	@echo "  make stepNN        build lesson NN and copy ./stepNN here (steps: $(STEP_BINS))"
	@echo "  make stepNN-lab    build step NN's lab and copy ./stepNN-lab here (labs: $(LAB_BINS))"
	@echo "  make exNN          build exercise NN as you wrote it and run its tests ($(EX_TARGETS))"
	@echo "  make all           build every step, exercise, tool and test (not the labs)"
	@echo "  make test          build them and run their tests (ctest; GPU tests skip without a GPU)"
	@echo "  make test-cpu      the same, only the tests that need no GPU"
	@echo "  make test-gpu      the same, only the GPU tests"
	@echo "  make labs          build every lab: ./stepNN-lab, its tests, step07-latency, step08_patterns,"
	@echo "                     step10-contention"
	@echo "  make test-labs     build the labs and run their tests"
	@echo "  make sanitize      run the GPU tests under compute-sanitizer (memcheck, racecheck,"
	@echo "                     synccheck, initcheck), JOBS of them at a time"
	@echo "  make profile STEP=NN [SHAPES=RxC,...] [TYPES=t,...] [IDS=id,...]  Nsight Compute"
	@echo "                     counters of step NN (or NN-lab), what its step.toml's [[profile]]"
	@echo "                     says, into plots/data"
	@echo "  make bankmap       build ./bankmap, the shared-memory bank model (no GPU needed)"
	@echo "  make step08_patterns  build ./step08_patterns, step 08's read and write patterns timed apart"
	@echo "  make step07-latency   build ./step07-latency, the latency of one load (step 07's lab)"
	@echo "  make step10-contention  build ./step10-contention, link copies beside SM traffic (step 10's lab)"
	@echo "  make gpu-check [FULL=1] [PARTS=a,b] [STEP=NN] [LAB=1] [BUDGET=s]  the whole course"
	@echo "                     checked on this machine's GPUs at once: the plan, a line per part,"
	@echo "                     one summary and one archive of logs and CSVs (scripts/gpu_check.py)"
	@echo "  make bench [SIZES=...] [BENCH_ARGS=...]  run every step's sweep (its step.toml) into"
	@echo "                     plots/data/bench.csv (BENCH_ARGS: plots/bench.py's options)"
	@echo "  make plots         redraw the figures and the README/lesson tables from plots/data"
	@echo "  make docs          build the Doxygen site into $(BUILD)/docs/html"
	@echo "  make grade SUBMISSION=dir [EXERCISES=01_rectangular,...] [OUT=dir] [HIDDEN=dir]"
	@echo "                     grade a student's exercises (all of them, or those named)"
	@echo "  make grader-selftest  every case of the grader's self-test (make test runs a quick subset)"
	@echo "  make deps          install the optional tools: matplotlib, Doxygen, bubblewrap (the"
	@echo "                     grader's sandbox), Open MPI and NCCL (step 10) (Debian/Ubuntu, pip),"
	@echo "                     then configure the build folder again so they are used at once;"
	@echo "                     says where to get Nsight Compute and compute-sanitizer if missing"
	@echo "  make clean         remove the build folders (also the grader's) and the copied binaries"
	@echo "Variables: ARCH=90 (GPU architecture, for this command only; default: the visible GPU,"
	@echo "           else 90), BUILD=build (build folder), JOBS=N (parallel jobs, default: cores)"

# A first configure, or again for another architecture (CACHED_ARCH is empty the first time).
$(BUILD)/CMakeCache.txt configure:
	@$(if $(CACHED_ARCH),echo "make: building for ARCH=$(ARCH) ($(BUILD) was set up for $(CACHED_ARCH))")
	cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS)

$(STEP_BINS) $(LAB_BINS) $(TOOL_BINS): $(CONFIGURED)
	cmake --build $(BUILD) --target $@ -j $(JOBS)
	cp $(BUILD)/bin/$@ ./$@

# An exercise's own test binary only (seconds, not the whole course), run directly so that the
# reader sees every test by name; the GPU tests skip without a GPU. The last line counts them.
EX_DIR = exercises/$(filter $(patsubst ex%,%,$@)_%,$(EXERCISES_NN))/
$(EX_TARGETS): $(CONFIGURED)
	cmake --build $(BUILD) --target test_$@_exercise -j $(JOBS)
	@log=$(BUILD)/test_$@_exercise.log; $(BUILD)/bin/test_$@_exercise >$$log 2>&1; rc=$$?; \
	cat $$log; \
	passed=$$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests*\..*/\1/p' $$log); \
	skipped=$$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests*, .*/\1/p' $$log); \
	why=$$(sed -n 's/.*no CUDA device, GPU test not run: \([^;(]*[^;( ]\).*/\1/p' $$log | head -1); \
	if [ $$rc -eq 0 ]; then \
	  echo "make $@: $${passed:-0} tests passed, $${skipped:-0} skipped$${why:+ (no CUDA device: $$why)}:" \
	    "your answer in $(EX_DIR) passes every test that ran"; \
	else echo "make $@: some tests fail: your answer in $(EX_DIR) is not done yet (its README" \
	  "says what done is)" >&2; exit 1; fi

all: $(CONFIGURED)
	cmake --build $(BUILD) -j $(JOBS)

# The labs are built apart (cmake/course.cmake, transpose_lab_target, says why).
labs: $(CONFIGURED)
	cmake --build $(BUILD) --target labs -j $(JOBS)

test: all
	$(call run_ctest,-LE lab)

test-labs: labs
	$(call run_ctest,-L lab)

test-cpu: all
	$(call run_ctest,-L cpu -LE lab)

test-gpu: all
	$(call run_ctest,-L gpu -LE "large|lab")

# The tools are looked for first: without compute-sanitizer (or a GPU) there is nothing to build
# the labs for.
sanitize:
	@bash scripts/sanitize.sh --check-tools
	@$(MAKE) --no-print-directory all labs
	JOBS=$(JOBS) bash scripts/sanitize.sh $(BUILD)

# STEP=5, 05 or 07-lab: the binary is step05 (step07-lab). The options go on the command's one
# line: make echoes a recipe's continuation lines as written, empty where an option is not given.
PROFILE_NN := $(shell echo "$(STEP)" | sed -E 's/^([0-9])($$|-)/0\1\2/')
PROFILE_ARGS = $(strip $(PROFILE_NN) $(if $(SHAPES),--shapes $(SHAPES)) \
                 $(if $(TYPES),--types $(TYPES)) $(if $(IDS),--ids $(IDS)))
profile: $(if $(STEP),step$(PROFILE_NN),)
	@test -n "$(STEP)" || { echo "usage: make profile STEP=NN [SHAPES=RxC,...] [TYPES=t,...]" \
	  "[IDS=id,...]" >&2; exit 2; }
	python3 scripts/profile.py $(PROFILE_ARGS)

bench: all labs
	python3 plots/bench.py --build $(BUILD) $(if $(SIZES),--sizes $(SIZES)) $(BENCH_ARGS)

plots:
	python3 plots/make_plots.py

docs: $(CONFIGURED)
	cmake -S . -B $(BUILD) >/dev/null
	cmake --build $(BUILD) --target docs

# Every case of the grader's self-test (make test runs a quick subset; CI runs both).
grader-selftest:
	python3 exercises/grader/selftest.py --work $(BUILD)/grader-selftest-full

# The options on the command's one line, as for make profile.
GRADE_ARGS = $(strip $(if $(EXERCISES),--exercises "$(EXERCISES)") \
               $(if $(OUT),--out "$(OUT)") $(if $(HIDDEN),--hidden "$(HIDDEN)") \
               $(if $(filter-out file,$(origin ARCH)),--build-arch "$(ARCH)") \
               $(if $(NO_SANDBOX),--no-sandbox))
grade:
	@test -n "$(SUBMISSION)" || { echo "usage: make grade SUBMISSION=dir [EXERCISES=01_rectangular,...] [OUT=dir] [HIDDEN=dir] [NO_SANDBOX=1]" >&2; exit 2; }
	python3 exercises/grader/grade.py --submission "$(SUBMISSION)" $(GRADE_ARGS)

# A whole class: SUBMISSIONS holds one folder per student (exercises/INSTRUCTORS.md, "A class").
.PHONY: grade-class
GRADE_CLASS_ARGS = $(strip $(if $(HIDDEN),--hidden "$(HIDDEN)") \
                     $(if $(filter-out file,$(origin ARCH)),--build-arch "$(ARCH)") \
                     $(if $(NO_SANDBOX),--grade-arg=--no-sandbox))
grade-class:
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade-class SUBMISSIONS=dir [OUT=dir] [HIDDEN=dir] [ARCH=a] [NO_SANDBOX=1]" >&2; exit 2; }
	python3 exercises/grader/grade_class.py --submissions "$(SUBMISSIONS)" --out "$(or $(OUT),build-grade/class)" $(GRADE_CLASS_ARGS)

# What deps installs is used at once: a build folder already set up is configured again, its
# MPI results and Python forgotten, so that step 10 is rebuilt with Open MPI by the next make and
# the tests use the python3 now on PATH. DEPS_ARGS: scripts/deps.sh's (--no-gpu-tools).
deps:
	bash scripts/deps.sh $(DEPS_ARGS)
	@if [ -f $(BUILD)/CMakeCache.txt ]; then \
	  echo "make deps: configuring $(BUILD) again, with what was installed"; \
	  cmake -U 'MPI_*' -U '*Python3_*' -S . -B $(BUILD) >/dev/null; fi

clean:
	rm -rf $(BUILD) build-grade $(STEP_BINS) $(LAB_BINS) $(TOOL_BINS)

# The parts, the plan and the options: scripts/gpu_check.py's docstring.
.PHONY: gpu-check
gpu-check:
	@python3 scripts/gpu_check.py --build $(BUILD) --arch $(ARCH) $(if $(FULL),--full) \
	  $(if $(PARTS),--parts '$(PARTS)') $(if $(STEP),--step $(STEP)) $(if $(LAB),--labs) \
	  $(if $(BUDGET),--budget $(BUDGET)) $(if $(OUT),--out '$(OUT)')
