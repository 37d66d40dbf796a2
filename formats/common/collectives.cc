#include "formats/common/collectives.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "formats/common/json_text.h"

namespace tracemill::formats {
namespace {

constexpr std::string_view kKernelPrefixes[] = {"ncclKernel_", "ncclDevKernel_"};

// Horovod timeline activities that end when the collective does.
constexpr std::string_view kHorovodOps[] = {
    "ALLREDUCE",      "NCCL_ALLREDUCE", "MPI_ALLREDUCE", "GLOO_ALLREDUCE", "ALLGATHER", "NCCL_ALLGATHER",
    "MPI_ALLGATHER",  "BROADCAST",      "NCCL_BCAST",    "MPI_BCAST",      "ALLTOALL",  "NCCL_ALLTOALL",
    "REDUCESCATTER", "NCCL_REDUCESCATTER"};


// The process group of a collective: "<name>/<ranks>", "" for the world.
std::string GroupOf(std::string_view rest) {
  std::string_view name = ArgValue(rest, "Process Group Name");
  std::string_view ranks = ArgValue(rest, "Process Group Ranks");
  if (name.empty() && ranks.empty()) return {};
  std::string g(name);
  g.push_back('/');
  g.append(ranks);
  return g;
}

int64_t SeqOf(std::string_view rest) {
  std::string_view v = ArgValue(rest, "Seq");
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  int64_t seq = -1;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), seq);
  return ec == std::errc() && p == v.data() + v.size() && !v.empty() ? seq : -1;
}

// Kept: an op ending in the first 1/2^shift of its 2^26 ns window.
bool InSample(int64_t end_ns, int shift) {
  if (shift == 0) return true;
  const uint64_t window = uint64_t{1} << kCollectiveWindowBits;
  const uint64_t phase = static_cast<uint64_t>(end_ns) & (window - 1);  // two's complement: floor mod
  return phase < (window >> shift);
}

}  // namespace

std::string_view ArgValue(std::string_view rest, std::string_view key) {
  size_t at = rest.find("\"args\":{");
  if (at == std::string_view::npos) return {};
  size_t pos = at + 8;
  while (pos < rest.size() && rest[pos] == '"') {
    const size_t close = JsonStringEnd(rest, pos + 1);  // the key's closing quote
    if (close + 1 >= rest.size() || rest[close + 1] != ':') return {};
    const std::string_view k = rest.substr(pos + 1, close - pos - 1);
    const size_t value_end = SkipJsonValue(rest, close + 2);
    if (value_end == std::string_view::npos) return {};
    if (k == key) return rest.substr(close + 2, value_end - close - 2);
    pos = value_end;
    if (pos < rest.size() && rest[pos] == ',') ++pos;
  }
  return {};
}

CollectiveClass ClassifyCollectiveName(std::string_view name) {
  for (std::string_view p : kKernelPrefixes)
    if (name.substr(0, p.size()) == p && name.size() > p.size()) return CollectiveClass::kGpuKernel;
  if ((name.substr(0, 5) == "nccl:" || name.substr(0, 5) == "gloo:") && name.size() > 5)
    return CollectiveClass::kCpuRecord;
  for (std::string_view op : kHorovodOps)
    if (name == op) return CollectiveClass::kCpuRecord;
  if (name == "record_param_comms") return CollectiveClass::kCpuWrapper;
  return CollectiveClass::kNone;
}

std::string CollectiveKind(CollectiveClass cls, std::string_view name, std::string_view rest) {
  if (cls == CollectiveClass::kGpuKernel) {
    for (std::string_view p : kKernelPrefixes) {
      if (name.substr(0, p.size()) != p) continue;
      std::string_view k = name.substr(p.size());
      return std::string(k.substr(0, std::min(k.find('_'), k.find('('))));
    }
  }
  if (cls == CollectiveClass::kCpuWrapper) {
    std::string_view c = ArgValue(rest, "Collective name");
    return c.empty() ? std::string(name) : std::string(c);
  }
  return std::string(name);
}

void CollectiveCollector::Add(CollectiveClass cls, std::string_view kind, std::string_view rest, int64_t start_ns,
                              int64_t end_ns) {
  std::string key = GroupOf(rest);
  key.push_back('\x1f');
  key.append(kind);
  auto it = std::find(keys_.begin(), keys_.end(), key);
  const uint32_t k = static_cast<uint32_t>(it - keys_.begin());
  if (it == keys_.end()) keys_.push_back(std::move(key));
  pending_.push_back(Pending{CollectiveOp{start_ns, std::max(start_ns, end_ns), k, SeqOf(rest)}, cls});
}

CollectiveDigest CollectiveCollector::Finish(size_t max_ops) {
  CollectiveDigest d;
  // The best class present: GPU kernels, else CPU records, else wrappers.
  CollectiveClass use = CollectiveClass::kNone;
  for (const Pending& p : pending_) {
    if (p.cls == CollectiveClass::kGpuKernel) use = p.cls;
    else if (p.cls == CollectiveClass::kCpuRecord && use != CollectiveClass::kGpuKernel) use = p.cls;
    else if (use == CollectiveClass::kNone) use = p.cls;
  }
  d.gpu = use == CollectiveClass::kGpuKernel;
  std::vector<CollectiveOp> ops;
  for (const Pending& p : pending_)
    if (p.cls == use) ops.push_back(p.op);
  d.seen = ops.size();
  auto kept = [&](int shift) {
    return static_cast<size_t>(
        std::count_if(ops.begin(), ops.end(), [&](const CollectiveOp& o) { return InSample(o.end_ns, shift); }));
  };
  while (d.sample_shift < kMaxCollectiveSampleShift && kept(d.sample_shift) > max_ops) ++d.sample_shift;
  // Keys renumbered to those still used, in first-use order of the sorted ops.
  std::sort(ops.begin(), ops.end(), [](const CollectiveOp& a, const CollectiveOp& b) {
    return a.end_ns != b.end_ns ? a.end_ns < b.end_ns : a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.key < b.key;
  });
  std::map<uint32_t, uint32_t> renumber;
  for (const CollectiveOp& o : ops) {
    if (!InSample(o.end_ns, d.sample_shift)) continue;
    if (d.ops.size() == max_ops) break;  // denser than the finest sample: the first ones
    auto [it, fresh] = renumber.try_emplace(o.key, static_cast<uint32_t>(d.keys.size()));
    if (fresh) d.keys.push_back(keys_[o.key]);
    CollectiveOp k = o;
    k.key = it->second;
    d.ops.push_back(k);
  }
  pending_.clear();
  keys_.clear();
  return d;
}

}  // namespace tracemill::formats
