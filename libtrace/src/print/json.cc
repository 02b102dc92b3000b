// The JSON notation of values and strings (irt/json.h), in one place so that
// every tool writes the same value the same way.
#include "irt/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "irt/trace.h"
#include "model/utf8.h"

namespace irt {

namespace {

// Tuples nest at most this deep in the format.
constexpr int kMaxTupleDepth = 64;

// std::to_chars without a format gives the shortest decimal that reads back
// as the same T; integral values then lack a "." ("3"), which is added so
// that a reader can tell a Float64 3.0 from an Int64 3.
template <typename T>
void AppendFloating(std::string& out, T x) {
  if (std::isnan(x)) {
    out += "\"NaN\"";
    return;
  }
  if (std::isinf(x)) {
    out += x > 0 ? "\"Inf\"" : "\"-Inf\"";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), x);
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void AppendInt(std::string& out, int64_t i) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), i);
  out.append(buf, r.ptr);
}

void AppendTensor(std::string& out, const Tensor& t, const JsonValueOptions& opts) {
  out += "{\"dtype\":";
  AppendJsonString(out, DTypeName(t.dtype));
  out += ",\"shape\":[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) out += ',';
    AppendInt(out, t.shape[i]);
  }
  out += ']';
  // Readers check tensors; a tensor built otherwise still gives valid JSON.
  Result<int64_t> numel = CheckedNumel(t.shape);
  size_t esize = DTypeSize(t.dtype);
  if (!numel.ok() || esize == 0 || t.data.size() / esize < static_cast<uint64_t>(*numel)) {
    out += ",\"invalid\":true}";
    return;
  }
  int64_t n = *numel;
  if (opts.max_elements > 0 && n > opts.max_elements) {
    out += ",\"abbreviated\":true}";
    return;
  }
  out += ",\"data\":[";
  const uint8_t* p = t.data.data();
  for (int64_t i = 0; i < n; ++i, p += esize) {
    if (i) out += ',';
    switch (t.dtype) {
      case DType::kF64: {
        double d;
        std::memcpy(&d, p, sizeof(d));
        AppendJsonDouble(out, d);
        break;
      }
      case DType::kF32: {
        float f;
        std::memcpy(&f, p, sizeof(f));
        AppendJsonFloat(out, f);
        break;
      }
      case DType::kI64: {
        int64_t v;
        std::memcpy(&v, p, sizeof(v));
        AppendInt(out, v);
        break;
      }
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, p, sizeof(v));
        AppendInt(out, v);
        break;
      }
      case DType::kBool:
        out += *p != 0 ? "true" : "false";
        break;
    }
  }
  out += "]}";
}

void AppendValue(std::string& out, const Value& v, const JsonValueOptions& opts, int depth) {
  switch (v.kind()) {
    case VKind::kNone:
    case VKind::kNothing:
      out += "null";
      break;
    case VKind::kBool:
      out += v.as_bool() ? "true" : "false";
      break;
    case VKind::kI64:
      AppendInt(out, v.as_i64());
      break;
    case VKind::kF64:
      AppendJsonDouble(out, v.as_f64());
      break;
    case VKind::kF32:
      AppendJsonFloat(out, v.as_f32());
      break;
    case VKind::kString:
      AppendJsonString(out, v.str());
      break;
    case VKind::kFunction:
      out += "{\"function\":";
      AppendJsonString(out, v.str());
      out += '}';
      break;
    case VKind::kTensor:
      AppendTensor(out, v.tensor(), opts);
      break;
    case VKind::kTuple: {
      out += "{\"tuple\":[";
      const auto& items = v.tuple();
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        if (depth < kMaxTupleDepth) {
          AppendValue(out, items[i], opts, depth + 1);
        } else {
          out += "null";
        }
      }
      out += "]}";
      break;
    }
  }
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  // Output must stay JSON whatever the trace holds: bytes that are not UTF-8
  // become U+FFFD, and strings past kMaxJsonStringBytes are cut.
  size_t full = s.size();
  if (full > kMaxJsonStringBytes) {
    size_t cut = kMaxJsonStringBytes;
    while (cut > 0 && (static_cast<uint8_t>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut);
  }
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x80) {
      size_t n = internal::Utf8Length(s, i);
      if (n == 0) {
        out += "\\ufffd";
      } else {
        out.append(s.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (ch < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  if (full > s.size()) out += "…(" + std::to_string(full) + " bytes)";
  out += '"';
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

void AppendJsonDouble(std::string& out, double d) { AppendFloating(out, d); }

void AppendJsonFloat(std::string& out, float f) { AppendFloating(out, f); }

void AppendJsonValue(std::string& out, const Value& v, const JsonValueOptions& opts) {
  AppendValue(out, v, opts, 0);
}

std::string JsonValue(const Value& v, const JsonValueOptions& opts) {
  std::string out;
  AppendJsonValue(out, v, opts);
  return out;
}

void AppendJsonValueFields(std::string& out, const Value& v, const JsonValueOptions& opts) {
  out += ",\"value\":";
  AppendJsonValue(out, v, opts);
  out += ",\"type\":";
  AppendJsonString(out, TypeName(v));
}

void AppendJsonMetaField(std::string& out, const std::vector<MetaEntry>& meta,
                         const JsonValueOptions& opts) {
  if (meta.empty()) return;
  out += ",\"meta\":{";
  for (size_t i = 0; i < meta.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, meta[i].key);
    out += ':';
    AppendJsonValue(out, meta[i].value, opts);
  }
  out += '}';
}

}  // namespace irt
