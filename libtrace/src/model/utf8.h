// Internal: UTF-8 validation shared by the text (model/format.cc) and
// JSON (json.cc) escapers.
#ifndef IRT_SRC_UTF8_H_
#define IRT_SRC_UTF8_H_

#include <cstddef>
#include <string_view>

namespace irt::internal {

/// Length of the valid UTF-8 sequence at s[i] (i < s.size()), or 0 if it is
/// not valid (overlong forms, surrogates and code points past U+10FFFF are not).
size_t Utf8Length(std::string_view s, size_t i);

}  // namespace irt::internal

#endif  // IRT_SRC_UTF8_H_
