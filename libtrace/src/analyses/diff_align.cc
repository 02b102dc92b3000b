// Reading the children of a frame's two calls and matching them. The two
// sequences advance in lockstep while their keys (kind, location,
// operation) agree; at the first disagreement the children ahead are
// buffered and aligned with Myers' greedy O(ND) algorithm until a run of
// kSyncLength agreeing children (or both ends) is found, and the edit script
// up to that run is replayed as matches, deletions and insertions.
#include <algorithm>
#include <string>
#include <vector>

#include "analyses/diff_walk.h"

namespace irt::internal::diff {

namespace {

constexpr int32_t kUnreached = -1;

}  // namespace

Result<Item> Differ::ReadFresh(Frame& f, int s) {
  Side& side = f.s[s];
  const Trace& t = *t_[s];
  if (side.next == kNoNode || side.next >= t.size()) {
    return DataError(t.name() + ": the call at node " + std::to_string(side.call) +
                     " is never closed");
  }
  Item it;
  it.id = side.next;
  RawNodes& rn = *raw_[s];
  if (rn.At(it.id)) {
    it.key = rn.KeyHere();
    bool closes_ok = true;
    if (IsCloser(it.key.kind)) closes_ok = rn.node().closes() == side.call;
    if (closes_ok) {
      it.pos = side.next_pos++;
      if (it.is_call()) {
        it.end = kNoNode;
        side.next = kNoNode;
      } else {
        it.end = it.id;
        side.next = it.id + 1;
        if (IsCloser(it.key.kind)) side.read_all = true;
      }
      return it;
    }
  }
  IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, side.next));
  it.pos = side.next_pos++;
  it.key = KeyOf(v);
  if (it.is_call()) {
    it.end = kNoNode;
    side.next = kNoNode;
  } else {
    it.end = it.id;
    side.next = it.id + 1;
    if (IsCloser(it.key.kind)) {
      if (v.closes() != side.call) {
        return DataError(t.name() + ": node " + std::to_string(it.id) + " closes node " +
                         std::to_string(v.closes()) + ", not the open call " +
                         std::to_string(side.call));
      }
      side.read_all = true;
    }
  }
  return it;
}

// Finds the closer of a call read last on its side by scanning its body.
Status Differ::Resolve(Frame& f, int s, Item& it) {
  if (!it.is_call() || it.end != kNoNode) return Status::Ok();
  const Trace& t = *t_[s];
  uint64_t depth = 1;
  for (NodeId i = it.id + 1; i < t.size(); ++i) {
    IRT_ASSIGN_OR_RETURN(NodeView v, Node(s, i));
    NodeKind k = v.kind();
    if (k == NodeKind::kCall) {
      ++depth;
    } else if (IsCloser(k) && --depth == 0) {
      it.end = i;
      f.s[s].next = i + 1;
      return Status::Ok();
    }
  }
  return DataError(t.name() + ": the call at node " + std::to_string(it.id) + " is never closed");
}

Result<bool> Differ::Front(Frame& f, int s, Item* it, bool* fresh) {
  if (f.x && !f.x->ahead[s].empty()) {
    *it = f.x->ahead[s].front();
    *fresh = false;
    return true;
  }
  if (f.s[s].read_all) return false;
  IRT_ASSIGN_OR_RETURN(*it, ReadFresh(f, s));
  *fresh = true;
  return true;
}

// Whether child i (counted from the first unconsumed one) exists, reading
// ahead as needed. Past max_lookahead it answers false and sets capped_.
Result<bool> Differ::Has(Frame& f, int s, size_t i) {
  std::deque<Item>& dq = f.x->ahead[s];
  while (dq.size() <= i) {
    if (!dq.empty() && dq.back().end == kNoNode) IRT_RETURN_IF_ERROR(Resolve(f, s, dq.back()));
    if (f.s[s].read_all) return false;
    if (dq.size() >= o_.max_lookahead) {
      capped_ = true;
      return false;
    }
    IRT_ASSIGN_OR_RETURN(Item it, ReadFresh(f, s));
    dq.push_back(it);
  }
  return true;
}

void Differ::Consume(Frame& f, int s, const Item& it) {
  Side& side = f.s[s];
  ++side.consumed;
  side.last_id = it.id;
  side.last_end = it.end;
  if (it.pos % kCheckpointEvery == 0 && it.pos > 0) {
    if (!f.checkpoints[s]) f.checkpoints[s] = std::make_unique<Positions>();
    f.checkpoints[s]->every.emplace_back(it.id, it.pos);
  }
  if (!it.is_call() && IsCloser(it.key.kind)) {
    side.closed = true;
    side.end = it.id;
  }
}

Result<Op> Differ::NextOp(Frame& f) {
  for (;;) {
    if (f.x) {
      Extra& x = *f.x;
      if (!x.ops.empty()) {
        Op op;
        op.type = x.ops.front();
        x.ops.pop_front();
        if (op.type != OpType::kOnlyB) {
          op.a = x.ahead[0].front();
          x.ahead[0].pop_front();
          Consume(f, 0, op.a);
        }
        if (op.type != OpType::kOnlyA) {
          op.b = x.ahead[1].front();
          x.ahead[1].pop_front();
          Consume(f, 1, op.b);
        }
        return op;
      }
      if (x.give_up) {
        for (int s = 0; s < 2; ++s) {
          Item it;
          bool fresh = false;
          IRT_ASSIGN_OR_RETURN(bool has, Front(f, s, &it, &fresh));
          if (!has) continue;
          if (!fresh) x.ahead[s].pop_front();
          IRT_RETURN_IF_ERROR(Resolve(f, s, it));
          Consume(f, s, it);
          Op op;
          op.type = s == 0 ? OpType::kOnlyA : OpType::kOnlyB;
          (s == 0 ? op.a : op.b) = it;
          return op;
        }
        Op done;
        return done;
      }
      if (x.ahead[0].empty() && x.ahead[1].empty()) f.x.reset();
    }
    Item a, b;
    bool fa = false, fb = false;
    IRT_ASSIGN_OR_RETURN(bool ha, Front(f, 0, &a, &fa));
    IRT_ASSIGN_OR_RETURN(bool hb, Front(f, 1, &b, &fb));
    if (!ha && !hb) {
      Op done;
      return done;
    }
    if (ha && hb && a.key == b.key) {
      if (!fa) f.x->ahead[0].pop_front();
      if (!fb) f.x->ahead[1].pop_front();
      Consume(f, 0, a);
      Consume(f, 1, b);
      Op op;
      op.type = OpType::kMatch;
      op.a = a;
      op.b = b;
      return op;
    }
    if (!f.x) f.x = std::make_unique<Extra>();
    if (fa) f.x->ahead[0].push_back(a);
    if (fb) f.x->ahead[1].push_back(b);
    if (!sum_.divergence && ha && hb) IRT_RETURN_IF_ERROR(RecordDivergence(f));
    IRT_RETURN_IF_ERROR(Align(f));
  }
}

// Myers' greedy forward search over the buffered children, stopping at the
// cheapest edit script that reaches kSyncLength agreeing children or both
// ends. The script up to there is queued; the agreeing run is left for the
// lockstep walk.
Status Differ::Align(Frame& f) {
  Extra& x = *f.x;
  capped_ = false;
  const int64_t max_d = o_.max_edits;
  std::vector<std::vector<int32_t>> V;
  std::vector<std::vector<uint8_t>> down;
  auto at = [&](int64_t d, int64_t k) -> int32_t& { return V[d][k + d]; };
  auto same = [&](int64_t i, int64_t j) { return x.ahead[0][i].key == x.ahead[1][j].key; };
  for (int64_t d = 0; d <= max_d; ++d) {
    V.emplace_back(2 * d + 1, kUnreached);
    down.emplace_back(2 * d + 1, 0);
    for (int64_t k = -d; k <= d; k += 2) {
      int64_t xx;
      bool dn = false;
      if (d == 0) {
        xx = 0;
      } else {
        int64_t xd = -1, xr = -1;
        if (k + 1 <= d - 1) {
          int32_t px = at(d - 1, k + 1);
          if (px != kUnreached) {
            IRT_ASSIGN_OR_RETURN(bool hb, Has(f, 1, static_cast<size_t>(px - (k + 1))));
            if (hb) xd = px;
          }
        }
        if (k - 1 >= -(d - 1)) {
          int32_t px = at(d - 1, k - 1);
          if (px != kUnreached) {
            IRT_ASSIGN_OR_RETURN(bool ha, Has(f, 0, static_cast<size_t>(px)));
            if (ha) xr = px + 1;
          }
        }
        if (xd < 0 && xr < 0) continue;
        dn = xd >= xr;
        xx = dn ? xd : xr;
      }
      int64_t yy = xx - k;
      int64_t x0 = xx;
      for (;;) {
        if (xx - x0 >= kSyncLength) break;
        IRT_ASSIGN_OR_RETURN(bool ha, Has(f, 0, static_cast<size_t>(xx)));
        if (!ha) break;
        IRT_ASSIGN_OR_RETURN(bool hb, Has(f, 1, static_cast<size_t>(yy)));
        if (!hb || !same(xx, yy)) break;
        ++xx;
        ++yy;
      }
      at(d, k) = static_cast<int32_t>(xx);
      down[d][k + d] = dn ? 1 : 0;
      bool synced = xx - x0 >= kSyncLength;
      bool ends = false;
      if (!synced) {
        IRT_ASSIGN_OR_RETURN(bool ha, Has(f, 0, static_cast<size_t>(xx)));
        IRT_ASSIGN_OR_RETURN(bool hb, Has(f, 1, static_cast<size_t>(yy)));
        ends = !ha && !hb;
      }
      if (!synced && !ends) continue;
      if (ends && capped_) {
        x.give_up = true;
        ++sum_.unaligned_regions;
        return Status::Ok();
      }
      // Backtrack from (d, k), leaving out the final run of agreement.
      std::vector<OpType> rev;
      int64_t cur_end = x0, kk = k;
      for (int64_t dd = d; dd > 0; --dd) {
        bool was_down = down[dd][kk + dd] != 0;
        int64_t pk = was_down ? kk + 1 : kk - 1;
        int64_t px = at(dd - 1, pk);
        int64_t mid = was_down ? px : px + 1;
        for (int64_t i = mid; i < cur_end; ++i) rev.push_back(OpType::kMatch);
        rev.push_back(was_down ? OpType::kOnlyB : OpType::kOnlyA);
        cur_end = px;
        kk = pk;
      }
      for (int64_t i = 0; i < cur_end; ++i) rev.push_back(OpType::kMatch);
      x.ops.insert(x.ops.end(), rev.rbegin(), rev.rend());
      return Status::Ok();
    }
  }
  x.give_up = true;
  ++sum_.unaligned_regions;
  return Status::Ok();
}

}  // namespace irt::internal::diff
