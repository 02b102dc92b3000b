// NumPy .npy files: how a tensor enters a tool from a file (irt-trace and
// irt-grad take @file.npy for an argument) and leaves it (irt-grad --npy).
// File I/O, so it sits beside Output rather than in the value model.
#ifndef IRT_NPY_H_
#define IRT_NPY_H_

#include <string>

#include "irt/status.h"
#include "irt/value.h"

namespace irt {

/// Reads a NumPy .npy file (format 1.0-3.0; little-endian f8, f4, i8, i4, b1;
/// C or Fortran order) into a tensor. Errors: kIoError when the file cannot
/// be read, kDataError when it is malformed or truncated, kUnsupported for
/// other versions and dtypes.
Result<Value> ReadNpy(const std::string& path);
/// Writes a tensor (or a real scalar, as a 0-d array) in .npy format 1.0,
/// atomically through Output ("-" is stdout). kInvalidArgument for other
/// kinds of value.
Status WriteNpy(const Value& v, const std::string& path);

}  // namespace irt

#endif  // IRT_NPY_H_
