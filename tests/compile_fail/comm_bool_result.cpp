// Must not compile: a collective that returns its result cannot return bools in a
// std::vector<bool> (bits, not contiguous bools); the message says what to pass instead.
#include <hetero/comm.hpp>

std::size_t gather_flags(const hetero::communicator& comm, bool flag) {
  auto all = comm.gather(hetero::send_buf(flag));
  return all.size();
}
