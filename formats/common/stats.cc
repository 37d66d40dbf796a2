#include "formats/common/stats.h"

namespace tracemill::formats {
namespace {
constexpr std::string_view kKeys[] = {
#define TM_KEY_(e, key, kind, desc) key,
    TM_DROP_REASONS(TM_KEY_)
#undef TM_KEY_
};
constexpr std::string_view kDescs[] = {
#define TM_DESC_(e, key, kind, desc) desc,
    TM_DROP_REASONS(TM_DESC_)
#undef TM_DESC_
};
constexpr DropKind kKinds[] = {
#define TM_KIND_(e, key, kind, desc) DropKind::kind,
    TM_DROP_REASONS(TM_KIND_)
#undef TM_KIND_
};
}  // namespace

DropKind DropReasonKind(DropReason r) { return kKinds[static_cast<int>(r)]; }

std::string_view DropReasonKey(DropReason r) { return kKeys[static_cast<int>(r)]; }
std::string_view DropReasonDescription(DropReason r) { return kDescs[static_cast<int>(r)]; }

std::optional<DropReason> DropReasonFromKey(std::string_view key) {
  for (int k = 0; k < kNumDropReasons; ++k)
    if (kKeys[k] == key) return static_cast<DropReason>(k);
  return std::nullopt;
}

std::string GroupedCount(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  s.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

std::string Counted(uint64_t n, std::string_view noun) {
  std::string s = GroupedCount(n);
  s.push_back(' ');
  s.append(noun);
  if (n != 1) s.push_back('s');
  return s;
}

uint64_t DropCounts::Of(DropKind kind) const {
  uint64_t t = 0;
  for (int k = 0; k < kNumDropReasons; ++k)
    if (kKinds[k] == kind) t += n[k];
  return t;
}

}  // namespace tracemill::formats
