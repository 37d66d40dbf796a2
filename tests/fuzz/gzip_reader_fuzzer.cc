// Fuzzes the gzip container reader (`formats::Gunzip`: libdeflate member loop,
// zlib salvage of a damaged member) and the pre-scan's head inflater
// (`formats::GunzipHead`, zlib streaming). Oracles: no crash, padding kept,
// the inflated size bounded; when Gunzip finds the input clean, GunzipHead
// inflates exactly its first bytes and calls the input whole when it read
// all of it; and the input itself, gzipped as two members with a split
// chosen by its first byte, inflates back to exactly the input.
#include <libdeflate.h>

#include "formats/common/byte_buffer.h"
#include "formats/gzip/gzip_reader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  formats::ByteBuffer out;
  formats::GunzipResult g = formats::Gunzip(in, &out, 64, 16 << 20);
  TM_FUZZ_CHECK(out.size() <= (16 << 20) && out.capacity() >= out.size() + 64);
  TM_FUZZ_CHECK(g.status.ok() || absl::IsDataLoss(g.status) || absl::IsResourceExhausted(g.status));
  if (g.status.ok() && out.size() > 0) {
    const size_t max_head = size ? 1 + data[size - 1] * 64 : 1;
    std::string head;
    formats::HeadResult h = formats::GunzipHead(in, /*compressed_is_whole=*/true, max_head, &head);
    TM_FUZZ_CHECK(!h.damaged && head == out.view().substr(0, max_head));
    if (out.size() < max_head) TM_FUZZ_CHECK(h.whole);
  }
  // Round trip: two members (the first may be empty).
  size_t split = size ? data[0] % (size + 1) : 0;
  std::string z;
  static libdeflate_compressor* c = libdeflate_alloc_compressor(1);
  for (std::string_view part : {in.substr(0, split), in.substr(split)}) {
    std::string m(libdeflate_gzip_compress_bound(c, part.size()), '\0');
    z.append(m.data(), libdeflate_gzip_compress(c, part.data(), part.size(), m.data(), m.size()));
  }
  formats::GunzipResult rt = formats::Gunzip(z, &out, 0);
  TM_FUZZ_CHECK(rt.status.ok() && rt.members == 2 && out.view() == in);
  return 0;
}
