#include "formats/common/stats.h"

namespace tracemill::formats {
namespace {
constexpr std::string_view kKeys[] = {
#define TM_KEY_(e, key, desc) key,
    TM_DROP_REASONS(TM_KEY_)
#undef TM_KEY_
};
constexpr std::string_view kDescs[] = {
#define TM_DESC_(e, key, desc) desc,
    TM_DROP_REASONS(TM_DESC_)
#undef TM_DESC_
};
}  // namespace

std::string_view DropReasonKey(DropReason r) { return kKeys[static_cast<int>(r)]; }
std::string_view DropReasonDescription(DropReason r) { return kDescs[static_cast<int>(r)]; }

}  // namespace tracemill::formats
