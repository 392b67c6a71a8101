/// @file
/// The io module: distributed arrays to and from parallel HDF5 files (`hetero::h5file`), and
/// checkpoints that a crash cannot leave half written (`hetero::checkpoint`). Not included by
/// hetero/hetero.hpp: it needs parallel HDF5, which `hetero::io` brings
/// (`find_package(hetero COMPONENTS io)`).
#ifndef HETERO_IO_HPP
#define HETERO_IO_HPP

#include "hetero/io/checkpoint.hpp"
#include "hetero/io/h5file.hpp"
#include "hetero/io/io_handle.hpp"

#endif  // HETERO_IO_HPP
