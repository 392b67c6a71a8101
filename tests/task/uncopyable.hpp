// A task body member whose copy throws (and, with no move constructor, whose move copies and
// throws too): for the tests of spawns whose body cannot be copied.
#ifndef HETERO_TESTS_TASK_UNCOPYABLE_HPP
#define HETERO_TESTS_TASK_UNCOPYABLE_HPP

#include <stdexcept>

namespace hetero::testing {

struct uncopyable {
  int value;
  explicit uncopyable(int v) : value(v) {}
  uncopyable(const uncopyable& other) : value(other.value) { throw std::runtime_error("copying the body failed"); }
  uncopyable& operator=(const uncopyable&) = delete;
};

}  // namespace hetero::testing

#endif  // HETERO_TESTS_TASK_UNCOPYABLE_HPP
