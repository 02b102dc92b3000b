// NumPy .npy files: a tensor read from (ReadNpy) and written to (WriteNpy)
// a file, so that tensors can enter and leave the tools without a trace.
#include "irt/npy.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

#include "irt/output.h"

namespace irt {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr uint64_t kMaxNpyHeader = 1 << 20;

struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  bool has_descr = false, has_fortran = false, has_shape = false;
};

// Parses the Python dict literal of a .npy header.
Status ParseNpyDict(std::string_view h, NpyHeader* out) {
  size_t i = 0;
  auto space = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r')) ++i;
  };
  auto quoted = [&](std::string* s) -> bool {
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) return false;
    char q = h[i++];
    size_t start = i;
    while (i < h.size() && h[i] != q) ++i;
    if (i >= h.size()) return false;
    *s = std::string(h.substr(start, i - start));
    ++i;
    return true;
  };
  space();
  if (i >= h.size() || h[i] != '{') return DataError("header is not a dictionary");
  ++i;
  while (true) {
    space();
    if (i < h.size() && h[i] == '}') {
      ++i;
      break;
    }
    std::string key;
    if (!quoted(&key)) return DataError("bad key in header dictionary");
    space();
    if (i >= h.size() || h[i] != ':') return DataError("expected ':' in header dictionary");
    ++i;
    space();
    if (key == "descr") {
      if (!quoted(&out->descr)) return DataError("'descr' must be a string");
      out->has_descr = true;
    } else if (key == "fortran_order") {
      if (h.substr(i, 4) == "True") {
        out->fortran = true;
        i += 4;
      } else if (h.substr(i, 5) == "False") {
        out->fortran = false;
        i += 5;
      } else {
        return DataError("'fortran_order' must be True or False");
      }
      out->has_fortran = true;
    } else if (key == "shape") {
      if (i >= h.size() || h[i] != '(') return DataError("'shape' must be a tuple");
      ++i;
      while (true) {
        space();
        if (i < h.size() && h[i] == ')') {
          ++i;
          break;
        }
        int64_t d = -1;
        auto r = std::from_chars(h.data() + i, h.data() + h.size(), d);
        if (r.ec != std::errc() || d < 0) return DataError("bad dimension in 'shape'");
        if (out->shape.size() >= 64) return DataError("'shape' has too many dimensions");
        i = static_cast<size_t>(r.ptr - h.data());
        if (i < h.size() && h[i] == 'L') ++i;  // Python 2 long
        out->shape.push_back(d);
        space();
        if (i < h.size() && h[i] == ',') {
          ++i;
        } else if (i < h.size() && h[i] == ')') {
          ++i;
          break;
        } else {
          return DataError("bad 'shape' tuple");
        }
      }
      out->has_shape = true;
    } else {
      return DataError("unexpected key '" + key + "' in header");
    }
    space();
    if (i < h.size() && h[i] == ',') {
      ++i;
      continue;
    }
    if (i < h.size() && h[i] == '}') {
      ++i;
      break;
    }
    return DataError("expected ',' or '}' in header dictionary");
  }
  if (!out->has_descr || !out->has_fortran || !out->has_shape) {
    return DataError("header lacks 'descr', 'fortran_order' or 'shape'");
  }
  return Status::Ok();
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

}  // namespace

Result<Value> ReadNpy(const std::string& path) {
  auto fail = [&](Code code, const std::string& m) { return Status(code, "'" + path + "': " + m); };
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return fail(Code::kIoError, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (fstat(fileno(f.get()), &st) != 0 || !S_ISREG(st.st_mode)) {
    return fail(Code::kIoError, "not a regular file");
  }
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  uint8_t pre[12];
  if (file_size < 10 || std::fread(pre, 1, 10, f.get()) != 10 ||
      std::memcmp(pre, kNpyMagic, 6) != 0) {
    return fail(Code::kDataError, "not a .npy file");
  }
  int major = pre[6], minor = pre[7];
  uint64_t header_len;
  uint64_t prefix;
  if (major == 1) {
    header_len = pre[8] | (static_cast<uint64_t>(pre[9]) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (file_size < 12 || std::fread(pre + 10, 1, 2, f.get()) != 2) {
      return fail(Code::kDataError, "truncated .npy header");
    }
    header_len = pre[8] | (static_cast<uint64_t>(pre[9]) << 8) |
                 (static_cast<uint64_t>(pre[10]) << 16) | (static_cast<uint64_t>(pre[11]) << 24);
    prefix = 12;
  } else {
    return fail(Code::kUnsupported, ".npy format version " + std::to_string(major) + "." +
                                        std::to_string(minor) + " is not supported (1.0 to 3.0)");
  }
  if (header_len > kMaxNpyHeader) return fail(Code::kDataError, ".npy header is too large");
  if (prefix + header_len > file_size) return fail(Code::kDataError, "truncated .npy header");
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f.get()) != header_len) {
    return fail(Code::kIoError, "read error");
  }
  NpyHeader h;
  if (Status s = ParseNpyDict(header, &h); !s.ok()) return fail(Code::kDataError, s.message());

  DType dtype;
  std::string_view d = h.descr;
  if (d.size() >= 2 && d[0] == '>' && d.substr(1) != "b1" && d.substr(1) != "u1") {
    return fail(Code::kUnsupported, "big-endian dtype '" + h.descr + "' is not supported");
  }
  if (d == "<f8") {
    dtype = DType::kF64;
  } else if (d == "<f4") {
    dtype = DType::kF32;
  } else if (d == "<i8") {
    dtype = DType::kI64;
  } else if (d == "<i4") {
    dtype = DType::kI32;
  } else if (d == "|b1" || d == "<b1" || d == ">b1") {
    dtype = DType::kBool;
  } else {
    return fail(Code::kUnsupported,
                "dtype '" + h.descr + "' is not supported (<f8, <f4, <i8, <i4, |b1)");
  }
  // Validate the shape against the format's limits and the file size before
  // allocating anything.
  if (h.shape.size() > kMaxTensorDims) {
    return fail(Code::kDataError, std::to_string(h.shape.size()) + " dimensions, more than " +
                                      std::to_string(kMaxTensorDims));
  }
  uint64_t avail = file_size - prefix - header_len;
  uint64_t esize = DTypeSize(dtype);
  uint64_t numel = 1;
  bool empty = std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end();
  if (empty) {
    numel = 0;
  } else {
    for (int64_t dim : h.shape) {
      if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dim), &numel) || numel > avail) {
        return fail(Code::kDataError, "truncated: the shape needs more elements than the file's " +
                                          std::to_string(avail) + " data bytes hold");
      }
    }
  }
  if (numel * esize > avail) {
    return fail(Code::kDataError, "truncated: the shape needs " + std::to_string(numel) +
                                      " elements, the file holds " + std::to_string(avail / esize));
  }
  if (numel * esize < avail) {
    return fail(Code::kDataError,
                std::to_string(avail - numel * esize) + " unexpected bytes after the data");
  }
  if (Result<int64_t> n = CheckedNumel(h.shape); !n.ok()) {
    return fail(Code::kDataError, n.error().message());
  }
  Tensor t;
  t.dtype = dtype;
  t.shape = h.shape;
  t.data.resize(numel * esize);
  if (numel > 0 && std::fread(t.data.data(), 1, t.data.size(), f.get()) != t.data.size()) {
    return fail(Code::kIoError, "read error");
  }
  if (dtype == DType::kBool) {
    for (uint8_t& b : t.data) b = b != 0 ? 1 : 0;
  }
  if (h.fortran && h.shape.size() >= 2 && numel > 1) {
    // Column-major to row-major: walk the C-order index and find each
    // element's Fortran offset.
    size_t rank = h.shape.size();
    std::vector<uint64_t> fstride(rank);
    uint64_t s = 1;
    for (size_t k = 0; k < rank; ++k) {
      fstride[k] = s;
      s *= static_cast<uint64_t>(h.shape[k]);
    }
    TensorBytes c(t.data.size());
    std::vector<int64_t> idx(rank, 0);
    for (uint64_t i = 0; i < numel; ++i) {
      uint64_t off = 0;
      for (size_t k = 0; k < rank; ++k) off += static_cast<uint64_t>(idx[k]) * fstride[k];
      std::memcpy(c.data() + i * esize, t.data.data() + off * esize, esize);
      for (size_t k = rank; k-- > 0;) {
        if (++idx[k] < h.shape[k]) break;
        idx[k] = 0;
      }
    }
    t.data = std::move(c);
  }
  return Value::MakeTensor(std::move(t));
}

Status WriteNpy(const Value& v, const std::string& path) {
  Tensor scalar;
  const Tensor* t = &scalar;
  switch (v.kind()) {
    case VKind::kTensor:
      t = &v.tensor();
      break;
    case VKind::kF64: {
      double d = v.as_f64();
      scalar = Tensor::FromF64({}, std::span<const double>(&d, 1));
      break;
    }
    case VKind::kF32: {
      float x = v.as_f32();
      scalar = Tensor::FromF32({}, std::span<const float>(&x, 1));
      break;
    }
    case VKind::kI64: {
      scalar = Tensor::Zeros(DType::kI64, {});
      int64_t x = v.as_i64();
      std::memcpy(scalar.data.data(), &x, 8);
      break;
    }
    case VKind::kBool:
      scalar = Tensor::Zeros(DType::kBool, {});
      scalar.data[0] = v.as_bool() ? 1 : 0;
      break;
    case VKind::kTuple: {
      // A tuple of Float64s (or of Float32s), as a vector: a list's derivative.
      const std::vector<Value>& items = v.tuple();
      const VKind k = items.empty() ? VKind::kF64 : items[0].kind();
      bool same = k == VKind::kF64 || k == VKind::kF32;
      for (const Value& x : items) same = same && x.kind() == k;
      if (!same) {
        return InvalidArgument("'" + path + "': cannot write a " + TypeName(v) +
                               " as .npy (only a tuple of Float64s or of Float32s)");
      }
      const int64_t n = static_cast<int64_t>(items.size());
      scalar = Tensor::Zeros(k == VKind::kF64 ? DType::kF64 : DType::kF32, {n});
      for (int64_t i = 0; i < n; ++i) {
        if (k == VKind::kF64) {
          scalar.f64()[i] = items[static_cast<size_t>(i)].as_f64();
        } else {
          scalar.f32()[i] = items[static_cast<size_t>(i)].as_f32();
        }
      }
      break;
    }
    default:
      return InvalidArgument("'" + path + "': cannot write a " + TypeName(v) + " as .npy");
  }
  static constexpr const char* kDescr[] = {"<f8", "<f4", "<i8", "<i4", "|b1"};
  std::string dict = "{'descr': '";
  dict += kDescr[static_cast<int>(t->dtype)];
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t->shape.size(); ++i) {
    if (i > 0) dict += ", ";
    dict += std::to_string(t->shape[i]);
  }
  if (t->shape.size() == 1) dict += ',';
  dict += "), }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xFFFF) return InvalidArgument("'" + path + "': shape too long for .npy 1.0");
  IRT_ASSIGN_OR_RETURN(auto out, Output::Open(path));
  out->Write(kNpyMagic, 6);
  const char version[2] = {1, 0};
  out->Write(version, 2);
  const char len[2] = {static_cast<char>(dict.size() & 0xFF), static_cast<char>(dict.size() >> 8)};
  out->Write(len, 2);
  out->Write(dict);
  if (!t->data.empty()) out->Write(t->data.data(), t->data.size());
  return out->Commit();
}

Result<Value> ParseValueArgument(std::string_view text) {
  if (!text.empty() && text[0] == '@') return ReadNpy(std::string(text.substr(1)));
  Result<Value> v = ParseLiteral(text);
  if (!v.ok()) return UsageError(v.error().message());
  return v;
}

}  // namespace irt
