// The tuning run: times every algorithm of every collective on this machine and writes the
// table a communicator reads from HETERO_COMM_TUNING.
//   mpiexec -n 2 hetero_comm_tune [file] [--samples]     (default file: hetero-comm.tuning)
#include <hetero/comm.hpp>
#include <hetero/core/runtime.hpp>
#include <hetero_tools/comm/tune.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

int main(int argc, char** argv) {
  hetero::runtime rt(argc, argv);
  std::string path = "hetero-comm.tuning";
  bool print_samples = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--samples")
      print_samples = true;
    else
      path = a;
  }
  hetero::communicator comm;
  std::vector<hetero::tune_sample> samples;
  const hetero::comm_tuning table = hetero::tune_collectives(comm, {}, &samples);
  if (comm.rank() == 0) {
    if (print_samples)
      for (const auto& s : samples)
        std::printf("%-10s %9zu B  %-18s %10.3f us  %6.3f x MPI\n", std::string(hetero::to_string(s.kind)).c_str(),
                    s.bytes, std::string(hetero::to_string(s.algorithm)).c_str(), s.seconds * 1e6, s.ratio_to_mpi);
    table.save(path);
    std::printf("%s", table.to_text().c_str());
    std::printf("written to %s (%zu measurements on %d ranks)\n", path.c_str(), samples.size(), comm.size());
  }
  return 0;
}
