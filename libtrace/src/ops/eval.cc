// PrimitiveTable: the standard operation set (irt/ops.h) with a caller's
// additions and replacements on top.
#include "irt/eval.h"

#include <algorithm>

#include "irt/ops.h"

namespace irt {

const PrimitiveTable& PrimitiveTable::Builtins() {
  static const PrimitiveTable* table = new PrimitiveTable();
  return *table;
}

void PrimitiveTable::Register(std::string name, PrimitiveFn fn) {
  entries_[std::move(name)] = PrimitiveEntry{std::move(fn), false};
}

void PrimitiveTable::RegisterRandom(std::string name) {
  entries_[std::move(name)] = PrimitiveEntry{nullptr, true};
}

const PrimitiveEntry* PrimitiveTable::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

bool PrimitiveTable::IsRandom(std::string_view name) const {
  if (const PrimitiveEntry* e = Find(name)) return e->random;
  const OpDef* op = FindOp(name);
  return op != nullptr && op->Has(kOpRandom);
}

bool PrimitiveTable::Knows(std::string_view name, size_t arity) const {
  return Find(name) != nullptr || FindOp(name, arity) != nullptr;
}

Result<Value> PrimitiveTable::Apply(std::string_view name, std::span<const Value> args) const {
  if (const PrimitiveEntry* e = Find(name)) {
    if (e->random) {
      return Unsupported("'" + std::string(name) +
                         "' is a random draw; its value is only recorded");
    }
    return e->fn(args);
  }
  const OpDef* op = FindOp(name, args.size());
  if (op == nullptr) {
    if (FindOp(name) != nullptr) return RuntimeError(NoMethodMessage(name, args));
    return Unsupported("'" + std::string(name) + "' is not in the standard operation set");
  }
  return ApplyOp(*op, args);
}

std::vector<std::string> PrimitiveTable::Names() const {
  std::vector<std::string> out;
  for (const OpDef& op : StandardOps()) {
    if (out.empty() || out.back() != op.name) out.emplace_back(op.name);
  }
  for (const auto& [k, v] : entries_) out.push_back(k);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<Value> ApplyPrimitive(std::string_view name, std::span<const Value> args) {
  return PrimitiveTable::Builtins().Apply(name, args);
}

}  // namespace irt
