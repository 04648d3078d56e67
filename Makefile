# SPDX-License-Identifier: GPL-3.0-or-later
# Two commands do everything on a fresh Debian/Ubuntu machine: `make run` and `make test`.
PRESET ?= dev
# Deferred (=), so target-specific PRESETs (bench, test-asan) pick their own build folder.
BUILD   = build/$(PRESET)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
ARGS   ?=

.PHONY: all deps configure build run test test-asan fuzz bench package format clean

all: build

deps:
	@packaging/install-deps.sh

configure: deps
	@test -f $(BUILD)/CMakeCache.txt || cmake --preset $(PRESET)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/app/paralens $(ARGS)

# Every suite except those that need a GPU (label gpu).
test: build
	cd $(BUILD) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -LE gpu -j $(JOBS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (the asan preset). Any
# report fails the test (halt_on_error); tests/lsan.supp lists Qt-internal leaks only.
SAN_ENV := ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
           UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
test-asan: PRESET = asan
test-asan: build
	cd $(BUILD) && $(SAN_ENV) QT_QPA_PLATFORM=offscreen ctest --output-on-failure -LE gpu -j $(JOBS)

# libFuzzer targets (clang; the fuzz preset), each run for FUZZ_SECONDS with seed corpora from
# the project's own files (fuzz/seeds.sh). Corpora and crash files stay under build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= fuzz_scenario fuzz_preset fuzz_profile fuzz_nccl_log fuzz_estimate fuzz_runs \
                fuzz_iteration_csv
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
	@for b in $(BUILD)/tests/bench/paralens-bench-*; do [ -f "$$b" ] && [ -x "$$b" ] || continue; QT_QPA_PLATFORM=offscreen "$$b" || exit 1; done

package: PRESET = release
package: build
	cd $(BUILD) && cpack

format:
	@git ls-files '*.h' '*.cpp' '*.cu' | xargs clang-format -i

clean:
	rm -rf build
