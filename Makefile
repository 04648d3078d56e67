# SPDX-License-Identifier: GPL-3.0-or-later
# Two commands do everything on a fresh Debian/Ubuntu machine: `make run` and `make test`.
PRESET ?= dev
# Deferred (=), so target-specific PRESETs (bench, test-asan) pick their own build folder.
BUILD   = build/$(PRESET)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
ARGS   ?=

.PHONY: all deps configure build run test test-asan fuzz bench package format tidy translations clean

all: build

deps:
	@packaging/install-deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake --preset $(PRESET)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/app/paralens $(ARGS)

# Every suite except those that need a GPU (label gpu), through the test preset of the same
# name (CMakePresets.json holds the exclusions, the sanitizer options and noTestsAction).
test: build
	ctest --preset $(PRESET) -j $(JOBS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (the asan presets). Any
# report fails the test (halt_on_error); tests/lsan.supp lists Qt-internal leaks only.
test-asan: PRESET = asan
test-asan: build
	ctest --preset asan -j $(JOBS)

# libFuzzer targets (clang; the fuzz preset), each run for FUZZ_SECONDS with seed corpora from
# the project's own files (fuzz/seeds.sh). Corpora and crash files stay under build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= fuzz_scenario fuzz_preset fuzz_profile fuzz_nccl_log fuzz_estimate fuzz_runs \
                fuzz_iteration_csv fuzz_launch_megatron fuzz_launch_toml fuzz_launch_deepspeed \
                fuzz_hf_config
FUZZ_DIR     := build/fuzz
fuzz:
	@packaging/install-deps.sh packaging/debian-packages-fuzz.txt
	@test -f $(FUZZ_DIR)/CMakeCache.txt || cmake --preset fuzz
	cmake --build $(FUZZ_DIR) -j $(JOBS)
	@rm -rf $(FUZZ_DIR)/seeds && fuzz/seeds.sh $(FUZZ_DIR)/seeds
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/crashes/$$t; \
	    echo "== $$t: $(FUZZ_SECONDS) s"; \
	    $(FUZZ_DIR)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	        -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crashes/$$t/ \
	        $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seeds/$$t > $(FUZZ_DIR)/$$t.log 2>&1; rc=$$?; \
	    grep -E '^#[0-9]+[[:space:]]+DONE|^Done|stat::number_of_executed_units|^SUMMARY|ERROR' $(FUZZ_DIR)/$$t.log; \
	    if [ $$rc -ne 0 ]; then echo "$$t failed (rc $$rc): see $(FUZZ_DIR)/$$t.log and $(FUZZ_DIR)/crashes/$$t/"; exit $$rc; fi; \
	done

bench: PRESET = release
# Each bench executable prints one JSON object per line.
bench: build
	@for b in $(BUILD)/tests/bench/paralens-bench-*; do [ -f "$$b" ] && [ -x "$$b" ] || continue; "$$b" || exit 1; done

package: PRESET = release
package: build
	cd $(BUILD) && cpack

format:
	@git ls-files '*.h' '*.cpp' '*.cu' | xargs clang-format -i

# clang-tidy 14 with the checks in .clang-tidy, on core/ (kept clean there).
tidy: configure
	@packaging/install-deps.sh packaging/debian-packages-tidy.txt
	run-clang-tidy -p $(BUILD) -j $(JOBS) -quiet '$(CURDIR)/core/.*\.cpp'

# Every tr() string of widgets/ and app/ into $(BUILD)/translations/paralens.ts (Qt Linguist),
# the file a translator starts from; test_translations checks the same extraction.
LUPDATE ?= /usr/lib/qt6/bin/lupdate
translations: deps
	@mkdir -p $(BUILD)/translations
	$(LUPDATE) -I . -locations relative widgets app -ts $(BUILD)/translations/paralens.ts

clean:
	rm -rf build
