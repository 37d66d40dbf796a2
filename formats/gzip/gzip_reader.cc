#include "formats/gzip/gzip_reader.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace tracemill::formats {
namespace {

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// Inflates one member with zlib until it stops; appends what it got to `out`.
// Returns the reason it stopped (empty if the member ended cleanly).
std::string SalvageMember(std::string_view in, std::string* out, size_t* consumed) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return "zlib init failed";
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(std::min<size_t>(in.size(), UINT32_MAX));
  char buf[1 << 16];
  std::string reason;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out->append(buf, sizeof(buf) - zs.avail_out);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) {
      reason = "truncated (input ends inside a gzip member)";
    } else if (rc == Z_DATA_ERROR) {
      reason = zs.msg ? absl::StrCat("corrupt gzip member: ", zs.msg) : "corrupt gzip member";
    } else {
      reason = absl::StrCat("zlib error ", rc);
    }
    break;
  }
  *consumed = zs.total_in;
  inflateEnd(&zs);
  return reason;
}

enum class HeaderScan { kOk, kCut, kBad };

// Finds the end of the RFC 1952 member header at the start of `m` (magic,
// method 8, flags, mtime, xfl, os, then the optional extra field, name,
// comment and header CRC) into `*size`. The header CRC is skipped, not
// checked, as libdeflate (and so `Gunzip`) does: the readers must agree on
// which files are gzip.
HeaderScan ScanGzipHeader(std::string_view m, size_t* size) {
  constexpr unsigned kFhcrc = 2, kFextra = 4, kFname = 8, kFcomment = 16, kReserved = 0xE0;
  if (m.size() < 10) return IsGzip(m) || m.size() < 2 ? HeaderScan::kCut : HeaderScan::kBad;
  const unsigned flags = static_cast<unsigned char>(m[3]);
  if (!IsGzip(m) || static_cast<unsigned char>(m[2]) != 8 || (flags & kReserved)) return HeaderScan::kBad;
  size_t i = 10;
  if (flags & kFextra) {
    if (m.size() < i + 2) return HeaderScan::kCut;
    i += 2 + (static_cast<unsigned char>(m[i]) | static_cast<size_t>(static_cast<unsigned char>(m[i + 1])) << 8);
  }
  for (unsigned zero_terminated : {kFname, kFcomment}) {
    if (!(flags & zero_terminated)) continue;
    size_t nul = i < m.size() ? m.find('\0', i) : std::string_view::npos;
    if (nul == std::string_view::npos) return HeaderScan::kCut;
    i = nul + 1;
  }
  if (flags & kFhcrc) i += 2;
  if (i > m.size()) return HeaderScan::kCut;
  *size = i;
  return HeaderScan::kOk;
}

}  // namespace

bool IsGzip(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f &&
         static_cast<unsigned char>(b[1]) == 0x8b;
}

GunzipResult Gunzip(std::string_view in, ByteBuffer* outbuf, size_t padding,
                    uint64_t max_output_bytes) {
  GunzipResult r;
  std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(libdeflate_alloc_decompressor());
  // First guess: ISIZE of the last member (mod 2^32), at least 4x the input.
  // ISIZE is only a hint: in a truncated file the last 4 bytes are deflate
  // data, so it is trusted up to deflate's maximum ratio (1032:1), never the
  // 4 GiB a random trailer may claim (found by gzip_reader_fuzzer).
  uint64_t guess = in.size() * 4;
  if (in.size() >= 18) {
    uint32_t isize;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    if (isize > guess) guess = std::min<uint64_t>(isize, uint64_t{in.size()} * 1032);
  }
  guess = std::min<uint64_t>(guess + 64, max_output_bytes);
  ByteBuffer& out = *outbuf;
  out.Clear();
  out.Reserve(guess + padding);
  size_t produced = 0;
  size_t pos = 0;
  while (pos < in.size()) {
    std::string_view rest = in.substr(pos);
    if (!IsGzip(rest)) {
      // Trailing zeros (tape padding) are tolerated silently; other junk is an error.
      bool zeros = rest.find_first_not_of('\0') == std::string_view::npos;
      if (!zeros) {
        r.status = absl::DataLossError(absl::StrCat(
            "trailing bytes after gzip member ", r.members, " are not a gzip member"));
        r.error_offset = pos;
      }
      break;
    }
    size_t in_used = 0, out_got = 0;
    libdeflate_result rc = LIBDEFLATE_SUCCESS;
    while (true) {
      size_t avail = out.capacity() - padding - produced;
      rc = libdeflate_gzip_decompress_ex(d.get(), rest.data(), rest.size(), out.data() + produced,
                                         avail, &in_used, &out_got);
      if (rc != LIBDEFLATE_INSUFFICIENT_SPACE) break;
      uint64_t cap = out.capacity() - padding;
      if (cap >= max_output_bytes) {
        r.status = absl::ResourceExhaustedError(absl::StrCat(
            "inflated size exceeds the limit of ", max_output_bytes, " bytes"));
        r.error_offset = pos;
        out.Resize(produced);
        out.ZeroPadding(padding);
        return r;
      }
      uint64_t next = std::min<uint64_t>(cap * 2 + (1 << 16), max_output_bytes);
      out.Resize(produced);
      out.Reserve(next + padding);
    }
    if (rc == LIBDEFLATE_SUCCESS) {
      produced += out_got;
      pos += in_used;
      ++r.members;
      continue;
    }
    // Damaged member: salvage with zlib what precedes the damage.
    std::string salvaged;
    size_t consumed = 0;
    std::string reason = SalvageMember(rest, &salvaged, &consumed);
    if (reason.empty()) reason = "corrupt gzip member (CRC or length mismatch)";
    out.Resize(produced);
    out.Reserve(produced + salvaged.size() + padding);
    std::memcpy(out.data() + produced, salvaged.data(), salvaged.size());
    produced += salvaged.size();
    r.status = absl::DataLossError(reason);
    r.error_offset = pos + consumed;
    break;
  }
  out.Resize(produced);
  out.ZeroPadding(padding);
  return r;
}

HeadResult GunzipHead(std::string_view in, bool in_is_whole, size_t max_out, std::string* out) {
  HeadResult r;
  out->clear();
  out->resize(max_out);
  size_t produced = 0, pos = 0;
  bool ended_cleanly = true;  // between members
  while (pos < in.size() && produced < max_out) {
    std::string_view rest = in.substr(pos);
    if (!IsGzip(rest)) {
      if (rest.find_first_not_of('\0') != std::string_view::npos) r.damaged = true;
      pos = in.size();
      break;
    }
    ended_cleanly = false;
    size_t header = 0;
    const HeaderScan h = ScanGzipHeader(rest, &header);
    if (h != HeaderScan::kOk) {
      if (h == HeaderScan::kBad || in_is_whole) r.damaged = true;
      break;
    }
    // Raw deflate after the header we skipped (zlib's gzip mode would check
    // the header CRC that libdeflate ignores).
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
      r.damaged = true;
      break;
    }
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(rest.data() + header));
    zs.avail_in = static_cast<uInt>(std::min<size_t>(rest.size() - header, UINT32_MAX));
    int rc = Z_OK;
    while (produced < max_out) {
      zs.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
      zs.avail_out = static_cast<uInt>(max_out - produced);
      rc = inflate(&zs, Z_NO_FLUSH);
      produced = max_out - zs.avail_out;
      if (rc != Z_OK) break;
      if (zs.avail_in == 0) break;  // prefix exhausted
    }
    pos += header + zs.total_in;
    inflateEnd(&zs);
    if (rc == Z_STREAM_END) {
      // The 8-byte trailer (CRC-32, ISIZE): `Gunzip` checks it; the head
      // needs the bytes only.
      if (in.size() - pos < 8) {
        if (in_is_whole) r.damaged = true;
        pos = in.size();
        break;
      }
      pos += 8;
      ended_cleanly = true;
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) r.damaged = true;
    // The whole file ended inside a member: truncated.
    if (in_is_whole && produced < max_out) r.damaged = true;
    break;
  }
  out->resize(produced);
  r.whole = in_is_whole && ended_cleanly && pos >= in.size() && !r.damaged;
  return r;
}

uint64_t InflatedSize(std::string_view in) {
  std::string buf(256 << 10, '\0');
  uint64_t total = 0;
  size_t pos = 0;
  while (pos < in.size() && IsGzip(in.substr(pos))) {
    z_stream zs{};
    if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) break;
    std::string_view rest = in.substr(pos);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(rest.data()));
    zs.avail_in = static_cast<uInt>(std::min<size_t>(rest.size(), UINT32_MAX));
    int rc = Z_OK;
    while (rc == Z_OK) {
      zs.next_out = reinterpret_cast<Bytef*>(buf.data());
      zs.avail_out = static_cast<uInt>(buf.size());
      rc = inflate(&zs, Z_NO_FLUSH);
      total += buf.size() - zs.avail_out;
      if (rc == Z_OK && zs.avail_in == 0) break;
    }
    pos += zs.total_in;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) break;
  }
  return total;
}

}  // namespace tracemill::formats
