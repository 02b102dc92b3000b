// irt-diff's reports: a unified-diff-like text (the only one in colour),
// JSON, and the --stat summary. Each is a DiffSink: the walk reports what
// it finds, the sink decides what to write. The body of the text and JSON
// reports is spooled while the traces are compared, because their header
// needs the whole comparison.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "analyses/diff_walk.h"
#include "io/tempfile.h"
#include "irt/json.h"

namespace irt::internal::diff {

namespace {

// Scalars as JSON numbers and booleans; everything else as its printed text.
void JsonValue(std::string& out, const Value& v, const FormatOptions& fo) {
  switch (v.kind()) {
    case VKind::kNone:
    case VKind::kNothing:
    case VKind::kBool:
    case VKind::kI64:
    case VKind::kF64:
    case VKind::kF32:
    case VKind::kString:
      AppendJsonValue(out, v);
      break;
    default:
      AppendJsonString(out, FormatValue(v, fo));
      break;
  }
}

// The report body is written here while the traces are compared and copied
// out after the header (which needs the whole comparison). Memory stays
// bounded: past kSpoolMemory bytes it goes to an unlinked temporary file.
class Spool {
 public:
  static constexpr size_t kSpoolMemory = 1 << 20;
  ~Spool() {
    if (fd_ >= 0) close(fd_);
  }
  Status Write(std::string_view s) {
    buf_.append(s);
    if (buf_.size() < kSpoolMemory) return Status::Ok();
    return Spill();
  }
  Status CopyTo(Output& out) {
    if (fd_ >= 0) {
      IRT_RETURN_IF_ERROR(Spill());
      if (lseek(fd_, 0, SEEK_SET) < 0) return IoError("diff: cannot rewind the spool file");
      std::vector<char> chunk(1 << 16);
      for (;;) {
        ssize_t r = read(fd_, chunk.data(), chunk.size());
        if (r < 0) {
          if (errno == EINTR) continue;
          return IoError(std::string("diff: cannot read the spool file: ") + strerror(errno));
        }
        if (r == 0) break;
        out.Write(chunk.data(), static_cast<size_t>(r));
        if (out.failed()) break;
      }
      return Status::Ok();
    }
    out.Write(buf_);
    return Status::Ok();
  }

 private:
  Status Spill() {
    if (fd_ < 0) {
      IRT_ASSIGN_OR_RETURN(fd_, internal::CreateSpoolFile("the differences"));
    }
    if (int e = internal::WriteAll(fd_, buf_.data(), buf_.size()); e != 0) {
      return IoError(std::string("diff: cannot write the spool file: ") + strerror(e));
    }
    buf_.clear();
    return Status::Ok();
  }
  std::string buf_;
  int fd_ = -1;
};

std::string DescribeTensorDiff(const ValueDiff& vd) {
  std::string s = "\\ ";
  AppendU(s, static_cast<uint64_t>(vd.differing));
  s += " of ";
  AppendU(s, static_cast<uint64_t>(vd.numel));
  s += " elements differ; largest |a - b| = ";
  s += FormatDouble(vd.max_abs);
  s += " at [";
  for (size_t i = 0; i < vd.where.size(); ++i) {
    if (i) s += ", ";
    AppendU(s, static_cast<uint64_t>(vd.where[i]) + 1);
  }
  s += "]";
  return s;
}

std::string ConditionText(const DiffDivergence& dv, const FormatOptions& fo) {
  std::string s = "condition " + dv.cond_path_a;
  if (dv.cond_path_b != dv.cond_path_a && !dv.cond_path_b.empty()) {
    s += " (b: " + dv.cond_path_b + ")";
  }
  auto show = [&](const Value& v) {
    return v.is_none() ? std::string("absent") : FormatValue(v, fo);
  };
  s += " is " + show(dv.cond_a) + " in a, " + show(dv.cond_b) + " in b";
  return s;
}

// ------------------------------------------------------------ text

class TextSink final : public DiffSink {
 public:
  TextSink(const DiffOptions& o, const Trace& a, const Trace& b, DiffWalk& walk)
      : o_(o), walk_(walk) {
    t_[0] = &a;
    t_[1] = &b;
    fo_.max_elements = o.max_elements;
  }

  Status TraceMeta(const std::string& key, const Value* a, const Value* b) override {
    auto show = [&](const Value* v) { return v ? FormatValue(*v, fo_) : std::string("absent"); };
    trace_meta_lines_ +=
        "# trace metadata " + key + ": " + show(a) + " in a, " + show(b) + " in b\n";
    return Status::Ok();
  }

  Status RootCall(const std::string& la, const std::string& lb, std::string_view) override {
    if (la == lb) {
      root_lines_ = " " + la + "\n";
    } else {
      root_lines_ = Color("31", "-" + la) + "\n" + Color("32", "+" + lb) + "\n";
    }
    return Status::Ok();
  }

  Status Equal(Frame& f, const Item& a) override {
    if (f.trail == 0 || hunk_serial_ != f.serial) {
      f.trail = 0;
      return Status::Ok();
    }
    --f.trail;
    std::string line = " ";
    IRT_RETURN_IF_ERROR(walk_.AppendLine(line, 0, f, a));
    line += '\n';
    f.printed = std::max(f.printed, a.pos + 1);
    return spool_.Write(line);
  }

  Status Change(Frame& f, const Item* a, const Item* b, const char*, const ValueDiff* vd) override {
    IRT_RETURN_IF_ERROR(StartHunk(f, a));
    std::string out;
    auto subtree = [&](const Item& it) {
      if (!it.is_call()) return std::string();
      std::string s = "  (subtree of ";
      AppendU(s, it.end - it.id + 1);
      s += " nodes)";
      return s;
    };
    bool only = b == nullptr || a == nullptr;
    if (a) {
      std::string line = "-";
      IRT_RETURN_IF_ERROR(walk_.AppendLine(line, 0, f, *a));
      if (only) line += subtree(*a);
      out += Color("31", line);
      out += '\n';
      f.printed = std::max(f.printed, a->pos + 1);
    }
    if (b) {
      std::string line = "+";
      IRT_RETURN_IF_ERROR(walk_.AppendLine(line, 1, f, *b));
      if (only) line += subtree(*b);
      out += Color("32", line);
      out += '\n';
    }
    if (vd && vd->tensor && vd->differing > 0) {
      out += DescribeTensorDiff(*vd);
      out += '\n';
    }
    f.trail = o_.context;
    return spool_.Write(out);
  }

  Status Finish(const DiffSummary& sum, Output& out) override {
    bool producers_differ = sum.producer_a != sum.producer_b;
    if (sum.same() && !producers_differ) return Status::Ok();
    std::string h;
    h += Color("1", "--- " + o_.name_a + " (" + sum.producer_a + ", " +
                        std::to_string(sum.nodes_a) + " nodes)");
    h += '\n';
    h += Color("1", "+++ " + o_.name_b + " (" + sum.producer_b + ", " +
                        std::to_string(sum.nodes_b) + " nodes)");
    h += '\n';
    if (producers_differ) {
      h += "# producers differ: " + sum.producer_a + " in a, " + sum.producer_b + " in b\n";
    }
    if (const DiffDivergence* d = sum.divergence ? &*sum.divergence : nullptr) {
      std::string s = "# first divergence at " + d->path_a;
      if (d->path_b != d->path_a) s += " (b: " + d->path_b + ")";
      if (d->has_condition) s += ": " + ConditionText(*d, fo_);
      h += s + "\n#   a: " + d->line_a + "\n#   b: " + d->line_b + "\n";
    }
    h += trace_meta_lines_;
    if (!sum.same()) h += root_lines_;
    out.Write(h);
    return spool_.CopyTo(out);
  }

 private:
  std::string Color(const char* code, const std::string& line) const {
    if (!o_.color) return line;
    return std::string("\x1b[") + code + "m" + line + "\x1b[0m";
  }

  // Opens a hunk for f unless it is the open one, with leading context: the
  // unprinted A children before `anchor_a` (exclusive), or before and
  // including A's last consumed child when there is no anchor.
  Status StartHunk(Frame& f, const Item* anchor_a) {
    const Side& sa = f.s[0];
    // Context covers A positions [.., upto).
    uint64_t upto = anchor_a != nullptr ? anchor_a->pos : sa.consumed;
    uint64_t gap = upto > f.printed ? upto - f.printed : 0;
    std::string out;
    if (hunk_serial_ != f.serial || gap > o_.context) {
      std::string fp = walk_.FramePath(f, 0), fq = walk_.FramePath(f, 1);
      std::string h = "@@ -" + (fp.empty() ? std::string("@") : fp) + " +" +
                      (fq.empty() ? std::string("@") : fq) + " @@";
      IRT_ASSIGN_OR_RETURN(NodeView mv, t_[0]->node(sa.call));
      if (!mv.op().empty()) {
        h += " ⟨";
        h += DisplayString(mv.op());
        h += "⟩";
      }
      out += Color("36", h);
      out += '\n';
      hunk_serial_ = f.serial;
    }
    std::vector<Item> ctx;
    uint64_t want = std::min<uint64_t>(o_.context, gap);
    if (want > 0) {
      if (anchor_a != nullptr) {
        IRT_ASSIGN_OR_RETURN(ctx, walk_.PrevChildren(0, f, *anchor_a, want, false));
      } else if (sa.last_id != kNoNode) {
        Item last;
        last.id = sa.last_id;
        last.end = sa.last_end;
        last.pos = sa.consumed - 1;
        IRT_ASSIGN_OR_RETURN(ctx, walk_.PrevChildren(0, f, last, want, true));
      }
    }
    for (size_t i = ctx.size(); i-- > 0;) {
      if (ctx[i].pos < f.printed) continue;
      std::string line = " ";
      IRT_RETURN_IF_ERROR(walk_.AppendLine(line, 0, f, ctx[i]));
      out += line;
      out += '\n';
    }
    f.printed = std::max(f.printed, upto);
    return spool_.Write(out);
  }

  const DiffOptions& o_;
  DiffWalk& walk_;
  const Trace* t_[2];
  FormatOptions fo_;
  Spool spool_;
  uint64_t hunk_serial_ = 0;  // frame whose hunk is open in the output
  std::string root_lines_;
  std::string trace_meta_lines_;
};

// ------------------------------------------------------------ JSON

class JsonSink final : public DiffSink {
 public:
  JsonSink(const DiffOptions& o, const Trace& a, const Trace& b, DiffWalk& walk)
      : o_(o), walk_(walk) {
    t_[0] = &a;
    t_[1] = &b;
    fo_.max_elements = o.max_elements;
  }

  Status TraceMeta(const std::string& key, const Value* a, const Value* b) override {
    std::string& j = trace_meta_json_;
    if (!j.empty()) j += ',';
    j += "{\"key\":";
    AppendJsonString(j, key);
    j += ",\"a\":";
    if (a)
      JsonValue(j, *a, fo_);
    else
      j += "null";
    j += ",\"b\":";
    if (b)
      JsonValue(j, *b, fo_);
    else
      j += "null";
    j += '}';
    return Status::Ok();
  }

  Status RootCall(const std::string& la, const std::string& lb, std::string_view change) override {
    if (change.empty()) return Status::Ok();
    std::string o = Separator();
    o += "{\"change\":";
    AppendJsonString(o, change);
    o += ",\"a\":{\"path\":\"\",\"node\":";
    AppendJsonString(o, la);
    o += "},\"b\":{\"path\":\"\",\"node\":";
    AppendJsonString(o, lb);
    o += "}}";
    return spool_.Write(o);
  }

  Status Equal(Frame&, const Item&) override { return Status::Ok(); }

  Status Change(Frame& f, const Item* a, const Item* b, const char* what,
                const ValueDiff* vd) override {
    std::string out = Separator();
    out += "{\"change\":";
    AppendJsonString(out, what);
    if (a) {
      out += ",\"a\":";
      IRT_RETURN_IF_ERROR(AppendNode(out, 0, f, *a));
    }
    if (b) {
      out += ",\"b\":";
      IRT_RETURN_IF_ERROR(AppendNode(out, 1, f, *b));
    }
    if (vd && vd->numeric) {
      out += ",\"max_abs_diff\":";
      AppendJsonDouble(out, vd->max_abs);
    }
    if (vd && vd->tensor) {
      out += ",\"elements_differing\":";
      AppendU(out, static_cast<uint64_t>(vd->differing));
      out += ",\"elements\":";
      AppendU(out, static_cast<uint64_t>(vd->numel));
      out += ",\"largest_at\":[";
      for (size_t i = 0; i < vd->where.size(); ++i) {
        if (i) out += ',';
        AppendU(out, static_cast<uint64_t>(vd->where[i]) + 1);
      }
      out += ']';
    }
    out += '}';
    return spool_.Write(out);
  }

  Status Finish(const DiffSummary& sum, Output& out) override {
    std::string h;
    auto side = [&](const char* key, const std::string& name, const Trace& t) {
      h += key;
      h += "{\"name\":";
      AppendJsonString(h, name);
      h += ",\"producer\":{\"name\":";
      AppendJsonString(h, t.producer_name());
      h += ",\"version\":";
      AppendJsonString(h, t.producer_version());
      h += "},\"nodes\":";
      AppendU(h, t.size());
      h += '}';
    };
    side("{\"a\":", o_.name_a, *t_[0]);
    side(",\"b\":", o_.name_b, *t_[1]);
    h += ",\"same\":";
    h += sum.same() ? "true" : "false";
    h += ",\"divergence\":";
    if (const DiffDivergence* d = sum.divergence ? &*sum.divergence : nullptr) {
      h += "{\"a\":{\"path\":";
      AppendJsonString(h, d->path_a);
      h += ",\"node\":";
      AppendJsonString(h, d->line_a);
      h += "},\"b\":{\"path\":";
      AppendJsonString(h, d->path_b);
      h += ",\"node\":";
      AppendJsonString(h, d->line_b);
      h += '}';
      if (d->has_condition) {
        h += ",\"condition\":{\"a\":{\"path\":";
        AppendJsonString(h, d->cond_path_a);
        h += ",\"value\":";
        JsonValue(h, d->cond_a, fo_);
        h += "},\"b\":{\"path\":";
        AppendJsonString(h, d->cond_path_b);
        h += ",\"value\":";
        JsonValue(h, d->cond_b, fo_);
        h += "}}";
      }
      h += '}';
    } else {
      h += "null";
    }
    auto num = [&](const char* key, uint64_t v) {
      h += ",\"";
      h += key;
      h += "\":";
      AppendU(h, v);
    };
    h += ",\"summary\":{\"matched\":";
    AppendU(h, sum.matched);
    num("changed_values", sum.changed_values);
    num("changed_operands", sum.changed_operands);
    num("only_a_children", sum.only_a_children);
    num("only_a_nodes", sum.only_a_nodes);
    num("only_a_calls", sum.only_a_calls);
    num("only_b_children", sum.only_b_children);
    num("only_b_nodes", sum.only_b_nodes);
    num("only_b_calls", sum.only_b_calls);
    num("changed_meta", sum.changed_meta);
    num("changed_trace_meta", sum.changed_trace_meta);
    num("unaligned_regions", sum.unaligned_regions);
    h += ",\"max_abs_diff\":";
    AppendJsonDouble(h, sum.max_abs_diff);
    h += "},\"trace_meta\":[" + trace_meta_json_ + "],\"changes\":[";
    out.Write(h);
    IRT_RETURN_IF_ERROR(spool_.CopyTo(out));
    out.Write(first_ ? "]}\n" : "\n]}\n");
    return Status::Ok();
  }

 private:
  std::string Separator() {
    std::string s = first_ ? "\n" : ",\n";
    first_ = false;
    return s;
  }

  Status AppendNode(std::string& out, int s, const Frame& f, const Item& it) {
    out += "{\"path\":";
    AppendJsonString(out, walk_.NodePath(f, s, it.pos));
    out += ",\"id\":";
    AppendU(out, it.id);
    std::string line;
    IRT_RETURN_IF_ERROR(walk_.AppendLine(line, s, f, it));
    out += ",\"node\":";
    AppendJsonString(out, line);
    IRT_ASSIGN_OR_RETURN(NodeView v, t_[s]->node(it.id));
    out += ",\"kind\":";
    AppendJsonString(out, NodeKindName(v.kind()));
    if (!v.op().empty()) {
      out += ",\"op\":";
      AppendJsonString(out, v.op());
    }
    Value val;
    bool has = v.vkind() != VKind::kNone;
    if (it.is_call() && it.end != kNoNode) {
      IRT_ASSIGN_OR_RETURN(NodeView e, t_[s]->node(it.end));
      if (e.kind() == NodeKind::kReturn) {
        val = e.value();
        has = true;
      }
    } else if (has) {
      val = v.value();
    }
    if (has) {
      out += ",\"value\":";
      JsonValue(out, val, fo_);
      out += ",\"type\":";
      AppendJsonString(out, TypeName(val));
    }
    if (it.is_call()) {
      out += ",\"nodes\":";
      AppendU(out, it.end - it.id + 1);
    }
    out += '}';
    return Status::Ok();
  }

  const DiffOptions& o_;
  DiffWalk& walk_;
  const Trace* t_[2];
  FormatOptions fo_;
  Spool spool_;
  bool first_ = true;
  std::string trace_meta_json_;
};

// ------------------------------------------------------------ stat

class StatSink final : public DiffSink {
 public:
  explicit StatSink(const DiffOptions& o) : o_(o) { fo_.max_elements = o.max_elements; }

  Status TraceMeta(const std::string&, const Value*, const Value*) override { return Status::Ok(); }
  Status RootCall(const std::string&, const std::string&, std::string_view) override {
    return Status::Ok();
  }
  Status Equal(Frame&, const Item&) override { return Status::Ok(); }
  Status Change(Frame&, const Item*, const Item*, const char*, const ValueDiff*) override {
    return Status::Ok();
  }

  Status Finish(const DiffSummary& sum, Output& out) override {
    std::string h;
    auto line = [&](const std::string& k, const std::string& v) { h += k + v + "\n"; };
    line("a: ", o_.name_a + " (" + sum.producer_a + "), " + std::to_string(sum.nodes_a) + " nodes");
    line("b: ", o_.name_b + " (" + sum.producer_b + "), " + std::to_string(sum.nodes_b) + " nodes");
    if (const DiffDivergence* d = sum.divergence ? &*sum.divergence : nullptr) {
      std::string s = d->path_a;
      if (d->path_b != d->path_a) s += " (b: " + d->path_b + ")";
      if (d->has_condition) s += ", " + ConditionText(*d, fo_);
      line("first divergence:  ", s);
    } else {
      line("first divergence:  ", "none");
    }
    line("changed values:    ",
         std::to_string(sum.changed_values) +
             (sum.changed_values ? " (largest |a - b| = " + FormatDouble(sum.max_abs_diff) + ")"
                                 : std::string()));
    line("changed operands:  ", std::to_string(sum.changed_operands));
    line("only in a:         ", std::to_string(sum.only_a_children) + " children, " +
                                    std::to_string(sum.only_a_nodes) + " nodes, " +
                                    std::to_string(sum.only_a_calls) + " calls");
    line("only in b:         ", std::to_string(sum.only_b_children) + " children, " +
                                    std::to_string(sum.only_b_nodes) + " nodes, " +
                                    std::to_string(sum.only_b_calls) + " calls");
    line("changed metadata:  ", std::to_string(sum.changed_meta) + " nodes, " +
                                    std::to_string(sum.changed_trace_meta) + " trace entries");
    line("matched:           ", std::to_string(sum.matched) + " nodes");
    if (sum.unaligned_regions) {
      line("unaligned regions: ", std::to_string(sum.unaligned_regions));
    }
    line("", sum.same() ? "same" : "different");
    out.Write(h);
    return Status::Ok();
  }

 private:
  const DiffOptions& o_;
  FormatOptions fo_;
};

}  // namespace

std::unique_ptr<DiffSink> MakeDiffSink(const DiffOptions& o, const Trace& a, const Trace& b,
                                       DiffWalk& walk) {
  switch (o.format) {
    case DiffFormat::kJson:
      return std::make_unique<JsonSink>(o, a, b, walk);
    case DiffFormat::kStat:
      return std::make_unique<StatSink>(o);
    default:
      return std::make_unique<TextSink>(o, a, b, walk);
  }
}

}  // namespace irt::internal::diff
