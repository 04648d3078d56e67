# SPDX-License-Identifier: GPL-3.0-or-later
# Two commands do everything on a fresh Debian/Ubuntu machine: `make run` and `make test`.
PRESET ?= dev
BUILD  := build/$(PRESET)
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
ARGS   ?=

.PHONY: all deps configure build run test bench package format clean

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

bench: PRESET = release
# Each bench executable prints one JSON object per line.
bench: build
	@for b in $(BUILD)/tests/bench/paralens-bench-*; do [ -x "$$b" ] && QT_QPA_PLATFORM=offscreen "$$b" || exit 1; done

package: PRESET = release
package: build
	cd $(BUILD) && cpack

format:
	@git ls-files '*.h' '*.cpp' '*.cu' | xargs clang-format -i

clean:
	rm -rf build
