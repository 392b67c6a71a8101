// The tuning run (tools/comm): the choice of winners by margin, and a short run whose table
// every rank agrees on.
#include <hetero/comm.hpp>
#include <hetero_tools/comm/tune.hpp>

#include <catch2/catch_test_macros.hpp>

#include <map>
#include <string>
#include <vector>

#include "comm_test_support.hpp"

using namespace hetero;
using namespace hetero::testing;

TEST_CASE("a tuning run keeps MPI's call unless another algorithm wins by the margin", "[comm][tuning]") {
  using enum comm_algorithm;
  // Times over MPI's call at five sizes; the margin is 15 %.
  const std::vector<std::map<comm_algorithm, double>> times{
      {{mpi, 1.0}, {ring, 0.90}, {binomial, 1.2}},   // 10 % faster: not enough
      {{mpi, 1.0}, {ring, 0.80}, {binomial, 0.84}},  // both clear it: the fastest
      {{mpi, 1.0}, {ring, 0.95}, {binomial, 0.70}},  // a lone winner between ring's sizes, but ring
                                                     // itself does not clear the margin here
      {{mpi, 1.0}, {ring, 0.80}},
      {{mpi, 1.0}, {ring, 1.10}}};
  CHECK(detail::winners(times, 0.15) == std::vector<comm_algorithm>{mpi, ring, binomial, ring, mpi});
  // A lone winner whose neighbours' algorithm also clears the margin and is within it: smoothed.
  const std::vector<std::map<comm_algorithm, double>> close{
      {{mpi, 1.0}, {ring, 0.70}}, {{mpi, 1.0}, {ring, 0.80}, {binomial, 0.75}}, {{mpi, 1.0}, {ring, 0.70}}};
  CHECK(detail::winners(close, 0.15) == std::vector<comm_algorithm>{ring, ring, ring});
  // Keyed on one size: only a candidate that clears the margin on (geometric) average and is
  // never more than the margin slower.
  CHECK(detail::overall_winner(times, 0.15) == mpi);
  CHECK(detail::overall_winner(close, 0.15) == ring);
  CHECK(tune_options{}.margin == 0.15);
}

TEST_CASE("a short tuning run gives one table on every rank", "[comm][tuning]") {
  communicator& comm = default_comm();
  tune_options o;
  o.sizes = {8, 4096};
  o.seconds_per_timing = 1e-4;
  o.repetitions = 2;
  o.collectives = {collective::allreduce, collective::broadcast, collective::gatherv};
  std::vector<tune_sample> samples;
  const comm_tuning t = tune_collectives(comm, o, &samples);
  CHECK(t.ranks() == comm.size());
  CHECK(t.nodes() == comm.nodes());
  CHECK(t.rules(collective::allreduce).back().max_bytes == comm_tuning::unbounded);
  CHECK_FALSE(samples.empty());
  // Every rank derived the same table from the same (slowest-rank) times.
  const std::string text = t.to_text();
  long length = static_cast<long>(text.size());
  std::string root_text = text;
  MPI_Bcast(&length, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  root_text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(root_text.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
  CHECK(text == root_text);
  // Collectives not tuned keep their rules.
  CHECK(t.rules(collective::scatter) == comm.tuning().rules(collective::scatter));
}
