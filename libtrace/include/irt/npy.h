// NumPy .npy files: how a tensor enters a tool from a file (irt-trace,
// irt-grad and irt-replay take @file.npy for a value) and leaves it
// (irt-grad --npy).
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
/// Writes a tensor (or a real scalar, as a 0-d array; a tuple of Float64s
/// or of Float32s, as a vector) in .npy format 1.0, atomically through
/// Output ("-" is stdout). kInvalidArgument for other kinds of value.
Status WriteNpy(const Value& v, const std::string& path);

/// A value given on a command line: "@FILE" reads the NumPy file FILE
/// (ReadNpy and its errors), anything else is a literal (ParseLiteral; kUsage
/// with its message when it is not one). irt-trace's arguments, irt-grad's
/// --seed and --tangent and irt-replay's --set take values this way.
Result<Value> ParseValueArgument(std::string_view text);

}  // namespace irt

#endif  // IRT_NPY_H_
