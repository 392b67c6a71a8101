// Weights saved to a file and loaded again; unreadable files and malformed lines are named.
#include <hetero/exec/weights_file.hpp>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "random.hpp"

using Catch::Matchers::ContainsSubstring;

namespace {

std::string temp_path(const char* stem) {
  return std::string("hetero-") + stem + "-" + std::to_string(::getpid()) + ".txt";
}

}  // namespace

TEST_CASE("weights saved to a file come back exactly, labels with spaces included", "[exec][weights]") {
  hetero::forget_split_labels();
  auto gen = hetero::testing::rng(61);
  std::uniform_real_distribution<double> weight(0, 1);
  const double a = weight(gen), b = weight(gen);
  hetero::reset_weight("nbody forces", a);
  hetero::reset_weight("dgemm", b);
  hetero::reset_weight("zero", 0.0);
  const auto path = temp_path("weights");
  hetero::save_weights(path);
  hetero::forget_split_labels();
  hetero::load_weights(path);
  std::remove(path.c_str());
  CHECK(hetero::cpu_weight("nbody forces") == a);
  CHECK(hetero::cpu_weight("dgemm") == b);
  CHECK(hetero::cpu_weight("zero") == 0.0);
  CHECK(hetero::split_labels().size() == 3);
}

TEST_CASE("unreadable files and malformed lines are refused, naming the file and line", "[exec][weights]") {
  hetero::forget_split_labels();
  CHECK_THROWS_AS(hetero::load_weights("/nonexistent/dir/w.txt"), hetero::runtime_error);
  CHECK_THROWS_WITH(hetero::load_weights("/nonexistent/dir/w.txt"), ContainsSubstring("/nonexistent/dir/w.txt"));
  CHECK_THROWS_AS(hetero::save_weights("/nonexistent/dir/w.txt"), hetero::runtime_error);

  const auto path = temp_path("bad");
  const auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("# comment\n0.5 fine\nnot-a-number label\n");
  CHECK_THROWS_WITH(hetero::load_weights(path), ContainsSubstring("line 3") && ContainsSubstring("not-a-number"));
  CHECK_THROWS_AS(hetero::load_weights(path), hetero::invalid_argument);
  CHECK(hetero::split_labels().empty());  // nothing was set
  write("1.5 too much\n");
  CHECK_THROWS_WITH(hetero::load_weights(path),
                    ContainsSubstring("weight 1.5") && ContainsSubstring("'too much'"));
  write("0.25\n");
  CHECK_THROWS_WITH(hetero::load_weights(path), ContainsSubstring("line 1"));
  std::remove(path.c_str());
}
