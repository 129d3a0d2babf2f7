# The C++ binding (bindings/cpp): the C ABI crate, the C++17 wrapper, the testee, and
# the CMake package. Included by the root Makefile. All builds are Debug and reuse the
# workspace's debug Rust build (target/debug/libweight_manifest_ffi.a).
#
#   cpp-test      build with -Wall -Wextra -Wpedantic -Werror, run ctest (GoogleTest, the
#                 C API test, the example), then the whole conformance corpus through the
#                 C++ testee
#   cpp-asan      the same C++ built with ASan + UBSan (the Rust library is not
#                 instrumented; LeakSanitizer still sees every allocation across the ABI)
#   cpp-consumer  install the package, then build and run a consumer outside the tree with
#                 find_package (the example and verify_landed, which checks landed bytes
#                 against a content manifest: intact, and torn, which must exit 1), and
#                 once more with add_subdirectory

CPP_DIR := target/cpp
CPP_BUILD := $(CPP_DIR)/build
CPP_ASAN := $(CPP_DIR)/asan
CPP_PREFIX := $(CURDIR)/$(CPP_DIR)/install
CPP_CMAKE := cmake -DCMAKE_BUILD_TYPE=Debug
CPP_SANITIZER_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CPP_RUNNER := target/debug/weight-manifest conformance run --dir tests/conformance --testee
CPP_LANDING := examples/content-landing

TEST_TARGETS += cpp-test cpp-asan cpp-consumer
.PHONY: cpp-deps cpp-test cpp-asan cpp-consumer

## The tools the C++ build needs (present on the project's machines; installed if not).
cpp-deps:
	@if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null \
		|| [ ! -f /usr/include/gtest/gtest.h ]; then \
		apt-get update -q && apt-get install -y -q cmake g++ libgtest-dev; fi

cpp-test: cpp-deps
	$(CARGO) build --locked -q -p weight-manifest-cli -p weight-manifest-ffi
	$(CPP_CMAKE) -S bindings/cpp -B $(CPP_BUILD) >/dev/null
	cmake --build $(CPP_BUILD) -j 2
	ctest --test-dir $(CPP_BUILD) --output-on-failure
	$(CPP_RUNNER) $(CPP_BUILD)/weight_manifest_testee

cpp-asan: cpp-deps
	$(CARGO) build --locked -q -p weight-manifest-cli -p weight-manifest-ffi
	$(CPP_CMAKE) -DWEIGHT_MANIFEST_SANITIZE=ON -S bindings/cpp -B $(CPP_ASAN) >/dev/null
	cmake --build $(CPP_ASAN) -j 2
	$(CPP_SANITIZER_ENV) ctest --test-dir $(CPP_ASAN) --output-on-failure
	$(CPP_SANITIZER_ENV) $(CPP_RUNNER) $(CPP_ASAN)/weight_manifest_testee

cpp-consumer: cpp-test
	rm -rf $(CPP_PREFIX) $(CPP_DIR)/consumer $(CPP_DIR)/consumer-subdir
	cmake --install $(CPP_BUILD) --prefix $(CPP_PREFIX)
	$(CPP_CMAKE) -S bindings/cpp/examples/consumer -B $(CPP_DIR)/consumer \
		-DCMAKE_PREFIX_PATH=$(CPP_PREFIX) >/dev/null
	cmake --build $(CPP_DIR)/consumer -j 2
	$(CPP_DIR)/consumer/consumer examples/moe-ep-pp
	$(CPP_DIR)/consumer/consumer_shared examples/moe-ep-pp
	$(CPP_DIR)/consumer/verify_landed $(CPP_LANDING)/content-manifest.json $(CPP_LANDING)/landing.txt \
		$(CPP_LANDING)/landed.bin
	$(CPP_DIR)/consumer/verify_landed $(CPP_LANDING)/content-manifest.json $(CPP_LANDING)/landing.txt \
		$(CPP_LANDING)/landed-torn.bin; test $$? -eq 1
	$(CPP_CMAKE) -S bindings/cpp/examples/consumer -B $(CPP_DIR)/consumer-subdir \
		-DWEIGHT_MANIFEST_SOURCE_DIR=$(CURDIR)/bindings/cpp >/dev/null
	cmake --build $(CPP_DIR)/consumer-subdir -j 2
	$(CPP_DIR)/consumer-subdir/consumer examples/moe-ep-pp
