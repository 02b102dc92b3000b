// The one JSON writer of irtrace's values and strings. Every tool that
// writes JSON (irt-print, irt-grad, irt-stats, irt-check, irt-diff) writes
// values through it, so the same value is the same text everywhere.
//
// The notation, which the man pages and README document:
//   Int64, Int32      integers, exactly: 3, -7 (beyond 2^53 a parser that
//                     holds numbers as doubles may round them)
//   Float64, Float32  the shortest decimal that reads back as the same
//                     Float64 (or Float32), always with a "." or an exponent
//                     so that it reads as a float: 3.0, 0.1, -0.0, 1e+300
//   NaN, infinities   JSON has none: the strings "NaN", "Inf" and "-Inf"
//   Bool              true, false;  nothing: null
//   String            a JSON string (see AppendJsonString)
//   function          {"function": name}
//   tensor            {"dtype": "Float64", "shape": [2, 3], "data": [...]},
//                     data in row-major order, elements as the scalars above
//   tuple             {"tuple": [...]}
#ifndef IRT_JSON_H_
#define IRT_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "irt/value.h"

namespace irt {

/// JSON strings longer than this are cut, ending in "…(N bytes)".
inline constexpr size_t kMaxJsonStringBytes = size_t{1} << 20;

/// Appends `s` as a JSON string literal, quotes included: control characters
/// escaped, bytes that are not UTF-8 replaced by U+FFFD, cut past
/// kMaxJsonStringBytes, so the output is valid JSON whatever `s` holds.
void AppendJsonString(std::string& out, std::string_view s);
/// AppendJsonString into a new string.
std::string JsonQuote(std::string_view s);

/// Appends a Float64 in the notation above: 3.0, 0.1, 1e+300, "NaN".
void AppendJsonDouble(std::string& out, double d);
/// Appends a Float32 in the notation above, its digits those of the
/// shortest decimal that reads back as the same Float32 (0.1, not
/// 0.10000000149011612).
void AppendJsonFloat(std::string& out, float f);

struct JsonValueOptions {
  /// Tensors with more elements are written without "data", with
  /// "abbreviated": true (0: never).
  int64_t max_elements = 0;
};

/// Appends `v` in the notation above. Tuples nest at most 64 levels (the
/// format's limit); deeper items are written as null.
void AppendJsonValue(std::string& out, const Value& v, const JsonValueOptions& opts = {});
/// AppendJsonValue into a new string.
std::string JsonValue(const Value& v, const JsonValueOptions& opts = {});

struct MetaEntry;
/// A node's value as the fields of its JSON object, `,"value":V,"type":"T"`
/// (irt-print --json and irt-export --jsonl write nodes alike).
void AppendJsonValueFields(std::string& out, const Value& v, const JsonValueOptions& opts = {});
/// A node's metadata as the field `,"meta":{"key":V,...}`; nothing when it
/// has none.
void AppendJsonMetaField(std::string& out, const std::vector<MetaEntry>& meta,
                         const JsonValueOptions& opts = {});

}  // namespace irt

#endif  // IRT_JSON_H_
