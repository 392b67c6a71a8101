// Compiled twice when HETERO_SANITIZE names address or thread (tests/CMakeLists.txt): once as a
// test program, once as the examples and benchmarks are. Each fails to compile when it is
// instrumented other than HETERO_SANITIZE_SCOPE says, so a build whose tests silently lost
// their sanitizers (or whose optimised programs gained them) stops here. UBSan defines no
// macro; with ASan or TSan beside it, the same flags carry it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HETERO_SANITIZED_HERE 1
#else
#define HETERO_SANITIZED_HERE 0
#endif

static_assert(
    HETERO_SANITIZED_HERE == HETERO_EXPECT_SANITIZED,
    "this unit's sanitizer instrumentation is not what HETERO_SANITIZE and HETERO_SANITIZE_SCOPE ask "
    "for (cmake/HeteroWarnings.cmake: test programs link hetero_test_flags, the others hetero_warnings)");

int main() { return 0; }
