# parplan: `make run` installs, builds and runs a real plan; `make test` installs,
# builds and runs the test suite. Debian 12 packages only.
PACKAGES := cmake g++ make pkg-config libcli11-dev libyaml-cpp-dev coinor-libcbc-dev \
            libglpk-dev libtbb-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev clang-format
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DPARPLAN_WERROR=ON

.PHONY: deps build run test bench clean format format-check

deps:
	@missing=$$(for p in $(PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	./$(BUILD_DIR)/parplan plan --job examples/gpt3-175b-a100.yaml

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD_DIR)/calibration_bench
	./$(BUILD_DIR)/plan_speed_bench

clean:
	rm -rf $(BUILD_DIR)

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

format-check: deps
	bash .ci/check-format
