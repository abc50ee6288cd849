# The front door of the course. `make help` lists every target.
#
#   make step05 && ./step05      build one lesson and run it from the repository root
#   make test                    build everything and run every test (GPU tests skip without a GPU)
#   make ARCH=80 step01          compile for another GPU architecture (default: the visible GPU,
#                                or 90 when none is visible)

BUILD ?= build
ARCH ?=
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Release $(if $(ARCH),-DCMAKE_CUDA_ARCHITECTURES=$(ARCH))
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
STEPS := $(patsubst steps/%,%,$(wildcard steps/[0-9][0-9]_*))
STEP_BINS := $(foreach s,$(STEPS),step$(firstword $(subst _, ,$(s))))
# A step's lab (steps/NN_name/lab/, the variants tried and not taught) builds ./stepNN-lab.
LAB_BINS := $(foreach s,$(STEPS),$(if $(wildcard steps/$(s)/lab/CMakeLists.txt),step$(firstword $(subst _, ,$(s)))-lab))
# Tools beside the lessons, built and copied like the steps.
TOOL_BINS := bankmap step08_patterns

.PHONY: help configure all test test-cpu test-gpu sanitize profile bench plots docs grade clean \
        $(TOOL_BINS) $(STEP_BINS) $(LAB_BINS)

help:
	@echo "The transpose course. Targets:"
	@echo "  make stepNN        build lesson NN and copy ./stepNN here (steps: $(STEP_BINS))"
	@echo "  make stepNN-lab    build step NN's lab and copy ./stepNN-lab here (labs: $(LAB_BINS))"
	@echo "  make all           build every step, tool and test"
	@echo "  make test          build everything and run all tests (ctest; GPU tests skip without a GPU)"
	@echo "  make test-cpu      run only the tests that need no GPU"
	@echo "  make test-gpu      run only the GPU tests"
	@echo "  make sanitize      run the GPU tests under compute-sanitizer (memcheck, racecheck, synccheck, initcheck)"
	@echo "  make profile STEP=NN  Nsight Compute counters of step NN (DRAM bytes, sectors, bank conflicts)"
	@echo "  make bankmap       build ./bankmap, the shared-memory bank model (no GPU needed)"
	@echo "  make step08_patterns  build ./step08_patterns, step 08's read and write patterns timed apart"
	@echo "  make bench [SIZES=...] [BENCH_ARGS=...]  every step, lab and answer over a size sweep, 3 runs, into plots/data/bench.csv"
	@echo "  make plots         redraw the figures and the README/lesson tables from plots/data"
	@echo "  make docs          build the Doxygen site into $(BUILD)/docs/html"
	@echo "  make grade SUBMISSION=dir [OUT=dir] [HIDDEN=dir]  grade a student's exercises"
	@echo "  make clean         remove the build folder and the copied binaries"
	@echo "Variables: ARCH=90 (GPU architecture), BUILD=build (build folder), JOBS=N"

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS)

configure:
	cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS)

# Re-run the configure step when ARCH is given, so `make ARCH=80 step01` takes effect.
$(STEP_BINS) $(LAB_BINS) $(TOOL_BINS): $(if $(ARCH),configure,$(BUILD)/CMakeCache.txt)
	cmake --build $(BUILD) --target $@ -j $(JOBS)
	cp $(BUILD)/bin/$@ ./$@

all: $(if $(ARCH),configure,$(BUILD)/CMakeCache.txt)
	cmake --build $(BUILD) -j $(JOBS)

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-cpu: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L cpu

test-gpu: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L gpu -LE large

sanitize: all
	bash scripts/sanitize.sh $(BUILD)

profile: $(if $(STEP),step$(STEP),)
	@test -n "$(STEP)" || { echo "usage: make profile STEP=NN" >&2; exit 2; }
	bash scripts/profile.sh $(STEP)

# The device is checked before anything is built: without one, one line and no build.
# BENCH_ARGS passes more options to plots/bench.py, e.g. BENCH_ARGS="--part 1/2".
bench:
	@python3 plots/bench.py --check-device
	@$(MAKE) --no-print-directory all
	python3 plots/bench.py --build $(BUILD) $(if $(SIZES),--sizes $(SIZES)) $(BENCH_ARGS)

plots:
	python3 plots/make_plots.py

docs:
	cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD) --target docs

grade:
	@test -n "$(SUBMISSION)" || { echo "usage: make grade SUBMISSION=dir [OUT=dir] [HIDDEN=dir]" >&2; exit 2; }
	python3 exercises/grader/grade.py --submission "$(SUBMISSION)" \
	  $(if $(OUT),--out "$(OUT)") $(if $(HIDDEN),--hidden "$(HIDDEN)") --build-arch "$(ARCH)"

clean:
	rm -rf $(BUILD) $(STEP_BINS) $(LAB_BINS) $(TOOL_BINS)
