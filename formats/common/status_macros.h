#pragma once
// TM_RETURN_IF_ERROR / TM_ASSIGN_OR_RETURN: Debian 12's Abseil (20220623) has no
// status macros, so these ten lines stand in for them (Perfetto's manner).
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TM_RETURN_IF_ERROR(expr)                \
  do {                                          \
    ::absl::Status tm_status_ = (expr);         \
    if (!tm_status_.ok()) return tm_status_;    \
  } while (0)

#define TM_CONCAT_INNER_(a, b) a##b
#define TM_CONCAT_(a, b) TM_CONCAT_INNER_(a, b)
#define TM_ASSIGN_OR_RETURN(lhs, expr) \
  TM_ASSIGN_OR_RETURN_IMPL_(TM_CONCAT_(tm_statusor_, __LINE__), lhs, expr)
#define TM_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                              \
  if (!var.ok()) return std::move(var).status();  \
  lhs = std::move(*var)

// TM_DCHECK: our own invariants only, never input validation. Gone in release.
#ifdef NDEBUG
#define TM_DCHECK(cond) ((void)0)
#else
#include <cstdio>
#include <cstdlib>
#define TM_DCHECK(cond)                                                   \
  do {                                                                    \
    if (!(cond)) {                                                        \
      std::fprintf(stderr, "%s:%d: TM_DCHECK(%s) failed\n", __FILE__,     \
                   __LINE__, #cond);                                      \
      std::abort();                                                       \
    }                                                                     \
  } while (0)
#endif

// Debian 12 builds Abseil with ABSL_OPTION_USE_STD_STRING_VIEW=0, so
// absl::string_view is its own type: convert explicitly at the boundary.
#include <string>
#include <string_view>
#include "absl/strings/string_view.h"
namespace tracemill {
inline absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view StdView(absl::string_view s) { return std::string_view(s.data(), s.size()); }
}  // namespace tracemill
