#include "formats/dcgm/dcgm_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "formats/common/status_macros.h"

namespace tracemill::formats {
namespace {

constexpr std::string_view kColumnNames[kNumDcgmColumns] = {
    "GPUTL", "GRACT", "SMACT", "SMOCC", "FBUSD", "FBTTL", "DRAMA",
    "NVLTX", "NVLRX", "PCITX", "PCIRX", "FP32A", "FP16A", "TENSO"};

constexpr bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Splits on runs of blanks into `out` (cleared); returns the count.
size_t Split(std::string_view s, std::vector<std::string_view>* out) {
  out->clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    size_t b = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > b) out->push_back(s.substr(b, i - b));
  }
  return out->size();
}

bool ParseDouble(std::string_view t, double* v) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
  return ec == std::errc() && ptr == t.data() + t.size() && std::isfinite(*v);
}

}  // namespace

std::string_view DcgmColumnName(DcgmColumn c) { return kColumnNames[static_cast<int>(c)]; }

bool ParseSecondsToNanos(std::string_view s, int64_t* ns) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  // value = digits x 10^exp10, digits kept exactly in 128 bits (38 max).
  __int128 digits = 0;
  int nd = 0;
  long exp10 = 0;
  bool any = false;
  auto take = [&](char c, bool fraction) {
    if (nd < 36) {
      digits = digits * 10 + (c - '0');
      if (digits != 0) ++nd;
      if (fraction) --exp10;
    } else if (!fraction) {
      ++exp10;  // digits past 36 significant ones only scale the value
    }
  };
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    take(s[i++], false);
    any = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      take(s[i++], true);
      any = true;
    }
  }
  if (!any) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    long e = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (e < 100000) e = e * 10 + (s[i] - '0');
      ++i;
    }
    exp10 += eneg ? -e : e;
  }
  if (i != s.size()) return false;
  long shift = exp10 + 9;  // seconds -> ns
  const __int128 kMax = static_cast<__int128>(INT64_MAX);
  if (digits == 0) {
    *ns = 0;
    return true;
  }
  if (shift >= 0) {
    if (shift > 19) return false;
    for (long k = 0; k < shift; ++k) {
      digits *= 10;
      if (digits > kMax) return false;
    }
  } else {
    if (shift < -40) {
      digits = 0;
    } else {
      // The last remainder is the most significant dropped digit: >= 5
      // rounds the magnitude up (half away from zero).
      __int128 rem_digit = 0;
      for (long k = 0; k < -shift; ++k) {
        rem_digit = digits % 10;
        digits /= 10;
      }
      if (rem_digit >= 5) digits += 1;
    }
    if (digits > kMax) return false;
  }
  *ns = static_cast<int64_t>(neg ? -digits : digits);
  return true;
}

bool LooksLikeDcgmDmon(std::string_view head) {
  if (head.substr(0, 19) == "Started host engine") return true;
  size_t at = 0;
  while (at < head.size()) {
    size_t end = head.find('\n', at);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(at, end - at);
    const size_t text = line.find_first_not_of(" \t");
    if (text != std::string_view::npos && line.substr(text, 8) == "# Entity" &&
        line.find("TIMESTAMP") != std::string_view::npos)
      return true;
    at = end + 1;
  }
  return false;
}

DcgmFile ParseDcgmDmon(std::string_view text) {
  DcgmFile f;
  int col_index[kNumDcgmColumns];  // token index of each needed column in a data row
  int ts_index = -1;
  size_t header_columns = 0;
  bool have_header = false;
  std::vector<std::string_view> tok;
  tok.reserve(32);
  // Rows are ~130 bytes of text: one allocation, at least 2 MiB (a pooled
  // block, large_alloc.h).
  f.samples.reserve(std::max(text.size() / 96 + 16, kHugePage / sizeof(DcgmSample) + 1));
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    // CrossStackProfiler's noise filter, verbatim: any line mentioning these.
    if (raw.find("nv-hostengine") != std::string_view::npos ||
        raw.find("dmon") != std::string_view::npos ||
        raw.find("Host Engine Listener Started") != std::string_view::npos) {
      ++f.noise_lines;
      continue;
    }
    std::string_view line = Trim(raw);
    if (line.substr(0, 8) == "# Entity") {
      ++f.headers;
      if (have_header) continue;  // repeated header: the first one rules
      Split(line.substr(2), &tok);  // "Entity TIMESTAMP GPUTL ..."
      header_columns = tok.size();
      for (int c = 0; c < kNumDcgmColumns; ++c) col_index[c] = -1;
      for (size_t k = 1; k < tok.size(); ++k) {
        if (tok[k] == "TIMESTAMP") ts_index = static_cast<int>(k);
        for (int c = 0; c < kNumDcgmColumns; ++c)
          if (tok[k] == kColumnNames[c] && col_index[c] < 0) col_index[c] = static_cast<int>(k);
      }
      std::string missing;
      if (ts_index < 0) missing = "TIMESTAMP";
      for (int c = 0; c < kNumDcgmColumns; ++c)
        if (col_index[c] < 0) absl::StrAppend(&missing, missing.empty() ? "" : ", ", AbslView(kColumnNames[c]));
      if (!missing.empty()) {
        f.status = absl::InvalidArgumentError(
            absl::StrCat("dcgm: the `# Entity` header has no ", missing,
                         " column (CrossStackProfiler needs TIMESTAMP and ",
                         "GPUTL GRACT SMACT SMOCC FBUSD FBTTL DRAMA NVLTX NVLRX PCITX PCIRX FP32A "
                         "FP16A TENSO)"));
        f.samples.clear();
        return f;
      }
      have_header = true;
      continue;
    }
    if (line.substr(0, 3) != "GPU") continue;  // `Id` units line, blank lines, other entities
    ++f.rows;
    // "GPU 0 v1 v2 ...": tokens after "GPU" line up with the header's columns
    // (the header's first column, Entity, is the GPU id).
    Split(line.substr(3), &tok);
    if (!have_header || tok.size() != header_columns) {
      ++f.dropped_malformed;
      continue;
    }
    DcgmSample s;
    int64_t gpu;
    auto [gp, gec] = std::from_chars(tok[0].data(), tok[0].data() + tok[0].size(), gpu);
    if (gec != std::errc() || gp != tok[0].data() + tok[0].size()) {
      ++f.dropped_malformed;
      continue;
    }
    s.gpu = gpu;
    bool ok = true;
    // Every column must be numeric: CrossStackProfiler drops a row with N/A in
    // any column (pandas dropna), used or not.
    for (size_t k = 1; k < tok.size() && ok; ++k) {
      double v;
      ok = ParseDouble(tok[k], &v);
      if (!ok) break;
      if (static_cast<int>(k) == ts_index) {
        const double ns = v * 1e9;
        if (!(std::fabs(ns) < 9.2e18) || !ParseSecondsToNanos(tok[k], &s.ts_ns)) {
          ok = false;
          break;
        }
        s.ts_float_ns = static_cast<int64_t>(ns);
      }
      for (int c = 0; c < kNumDcgmColumns; ++c)
        if (col_index[c] == static_cast<int>(k)) s.values[c] = v;
    }
    if (!ok) {
      ++f.dropped_na;
      continue;
    }
    f.samples.push_back(s);
  }
  if (!have_header && f.status.ok())
    f.status = absl::InvalidArgumentError(
        "dcgm: no `# Entity ...` header line: not a dcgmi dmon log");
  return f;
}

std::vector<std::string> DcgmDropWarnings(const DcgmFile& f, std::string_view prefix) {
  std::vector<std::string> w;
  auto rows = [](uint64_t n) { return absl::StrCat(n, n == 1 ? " GPU row" : " GPU rows"); };
  if (f.dropped_na)
    w.push_back(absl::StrCat(AbslView(prefix), rows(f.dropped_na),
                             " with N/A or a non-numeric value dropped (as CrossStackProfiler does)"));
  if (f.dropped_malformed)
    w.push_back(absl::StrCat(AbslView(prefix), rows(f.dropped_malformed),
                             " with another number of columns than the header's, or before it, dropped"));
  return w;
}

std::vector<GpuUtilization> SummarizeDcgm(const DcgmFile& f) {
  std::map<int64_t, GpuUtilization> by_gpu;
  for (const DcgmSample& s : f.samples) {
    GpuUtilization& g = by_gpu[s.gpu];
    g.gpu = s.gpu;
    ++g.samples;
    g.gputl_sum += s.value(DcgmColumn::kGputl);
    g.gputl_max = std::max(g.gputl_max, s.value(DcgmColumn::kGputl));
    g.smact_sum += s.value(DcgmColumn::kSmact);
    g.smocc_sum += s.value(DcgmColumn::kSmocc);
    g.drama_sum += s.value(DcgmColumn::kDrama);
    g.tenso_sum += s.value(DcgmColumn::kTenso);
  }
  std::vector<GpuUtilization> out;
  for (auto& [gpu, g] : by_gpu) out.push_back(g);
  return out;
}

}  // namespace tracemill::formats
