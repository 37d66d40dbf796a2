// Fuzzes the head scan of the sharding pre-scan (`formats::ScanTefHead`,
// pipeline/plan.h), which plans an input's output from its first bytes.
// Oracles: no crash; a head that saw the whole top-level object (`complete`,
// not `malformed`) names the rank the full decode finds when that decode is
// clean; a prefix (length from the first byte) that holds the whole object
// names the same rank as the whole input scanned as a head. (Heads that only
// reached `traceEvents` may differ with their length: the members after a
// skipped `traceEvents` count too, and the decode checks the plan.)
#include "formats/chrome/tef_decoder.h"
#include "formats/chrome/tef_head.h"
#include "formats/common/byte_buffer.h"
#include "formats/common/trace_data.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tracemill;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static formats::TefDecoder decoder;
  formats::TefHead whole = formats::ScanTefHead(bytes, /*head_is_whole=*/true, &decoder);
  const size_t cut = size ? (size_t{data[0]} * 131) % (size + 1) : 0;
  formats::TefHead prefix = formats::ScanTefHead(bytes.substr(0, cut), /*head_is_whole=*/false, &decoder);
  formats::TefHead all = formats::ScanTefHead(bytes, /*head_is_whole=*/false, &decoder);
  if (prefix.complete && !prefix.malformed) TM_FUZZ_CHECK(all.complete && prefix.rank == all.rank);
  if (whole.shape == formats::TefHead::Shape::kObject && whole.complete && !whole.malformed) {
    formats::ByteBuffer buf;
    fuzz::Padded("", bytes, &buf);
    formats::TraceBuilder builder;
    formats::DecodeReport rep = decoder.Decode(buf.view(), buf.capacity(), &builder);
    auto trace = builder.Finish();
    if (rep.status.ok()) TM_FUZZ_CHECK(whole.rank == trace->meta.rank);
  }
  return 0;
}
